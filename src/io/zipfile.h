#ifndef HS_IO_ZIPFILE_H
#define HS_IO_ZIPFILE_H
#include <stdio.h>
#include "common/diag.h"

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
FILE *hs_zip_open_entry(const char *path, const char *suffix,
			char **entry_name, struct hs_diag *diag);
/*
 * Open another entry (exact @name) of the same zip, or NULL when it has
 * none. Used for side files such as perf-<pid>.map in a .trace.zip.
 */
FILE *hs_zip_open_named(const char *path, const char *name);
/*
 * Create the zip @path with one entry @entry_name; data written to the
 * returned FILE is compressed into it when the FILE is fclose()d, and
 * fclose() returns EOF if writing the zip failed. NULL with @diag filled
 * on error.
 */
FILE *hs_zip_create_entry(const char *path, const char *entry_name,
			  struct hs_diag *diag);
#endif
