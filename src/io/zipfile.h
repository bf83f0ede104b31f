#ifndef HS_IO_ZIPFILE_H
#define HS_IO_ZIPFILE_H
#include <stdio.h>
#include "common/diag.h"
#include "common/log.h"

/*
 * zipfile - read and write one entry of a .zip as a stdio stream (libzip
 * underneath, wrapped with fopencookie), so every importer and exporter
 * works unchanged on zipped files.
 */

/*
 * Open for reading the first entry of the zip at @path whose name ends
 * with @suffix (NULL = the only entry; more than one is an error).
 * Returns a FILE the caller must fclose(), or NULL with @diag filled.
 * The entry's name is stored in *@entry_name (owned by the caller; may be
 * NULL if not wanted); on failure the caller owns nothing.
 */
HS_MUST_CHECK
FILE *hs_zip_open_entry(const char *path, const char *suffix, char **entry_name,
			struct hs_diag *diag);
/*
 * Open another entry (exact @name) of the same zip, or NULL when it has
 * none. Used for side files such as perf-<pid>.map in a .trace.zip.
 */
HS_MUST_CHECK FILE *hs_zip_open_named(const char *path, const char *name);
/*
 * Create the zip @path with one entry @entry_name; data written to the
 * returned FILE is compressed into it when the FILE is fclose()d, and
 * fclose() returns EOF if writing the zip failed, errno saying why (as
 * libzip's error says: ENOSPC for a full disk). NULL with @diag filled
 * on error, and for a @path that is there and not a regular file.
 */
HS_MUST_CHECK
FILE *hs_zip_create_entry(const char *path, const char *entry_name, struct hs_diag *diag);

/*
 * An anonymous temporary file (unlinked at once) in $TMPDIR, else /tmp,
 * opened "w+"; NULL with @diag naming the directory on failure.
 */
HS_MUST_CHECK FILE *hs_zip_tmpfile(struct hs_diag *diag);

/*
 * The most hs_zip_spool() copies: HEAPSCOPE_SPOOL_MAX (bytes, with an
 * optional K, M or G suffix) if set and valid, else HS_ZIP_SPOOL_MAX.
 */
#define HS_ZIP_SPOOL_MAX (1ULL << 30)
unsigned long long hs_zip_spool_max(void);
/*
 * The size in the environment variable @name (bytes, with an optional K,
 * M or G suffix) if set and valid, else @dflt.
 */
unsigned long long hs_env_size(const char *name, unsigned long long dflt);

/*
 * Copy @in (a pipe: zips, and readers that open a file by name, need
 * seeking) into a new temporary file, in *@out for the caller to
 * fclose(); io.c's hs_spool_input() and its import of a zip on a pipe
 * spool through it. The copy stops at hs_zip_spool_max()
 * bytes and at half the space free in the temporary directory when it
 * starts, and is then refused with a message that says which bound and
 * what to do instead (name the file). Returns 0, -EFBIG, -ENOSPC or
 * -EIO (with @diag filled).
 */
HS_MUST_CHECK int hs_zip_spool(FILE *in, FILE **out, struct hs_diag *diag);
#endif
