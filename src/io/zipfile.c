/*
 * zipfile - one zip entry as a stdio stream (libzip + fopencookie).
 *
 * Reading decompresses on the fly through zip_fread(). Writing spools the
 * entry's bytes to an anonymous temporary file and builds the zip when the
 * stream is closed, so neither direction holds a whole entry in memory.
 */
#include "io/zipfile.h"
#include "common/alloc.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zip.h>

struct zip_reader {
	zip_t *zip;
	zip_file_t *file;
};

static ssize_t reader_read(void *cookie, char *buf, size_t size)
{
	struct zip_reader *r = cookie;
	zip_int64_t n = zip_fread(r->file, buf, size);

	if (n < 0) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)n;
}

static int reader_close(void *cookie)
{
	struct zip_reader *r = cookie;

	zip_fclose(r->file);
	zip_discard(r->zip);
	hs_free(r);
	return 0;
}

static zip_t *open_archive(const char *path, struct hs_diag *diag)
{
	int zerr = 0;
	zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);

	if (!z && diag) {
		zip_error_t e;

		zip_error_init_with_code(&e, zerr);
		hs_diag_set(diag, 0, "cannot open as a zip: %s", zip_error_strerror(&e));
		zip_error_fini(&e);
	}
	return z;
}

static FILE *open_index(zip_t *z, zip_uint64_t index, struct hs_diag *diag)
{
	static const cookie_io_functions_t io = {
	    .read = reader_read,
	    .close = reader_close,
	};
	struct zip_reader *r = hs_malloc(sizeof(*r));
	FILE *f;

	if (!r) {
		zip_discard(z);
		hs_diag_set(diag, 0, "out of memory");
		return NULL;
	}
	r->zip = z;
	r->file = zip_fopen_index(z, index, 0);
	if (!r->file) {
		hs_diag_set(diag, 0, "cannot read zip entry '%s': %s",
			    zip_get_name(z, index, 0), zip_strerror(z));
		zip_discard(z);
		hs_free(r);
		return NULL;
	}
	f = fopencookie(r, "r", io);
	if (!f) {
		reader_close(r);
		hs_diag_set(diag, 0, "out of memory");
	}
	return f;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

FILE *hs_zip_open_entry(const char *path, const char *suffix, char **entry_name,
			struct hs_diag *diag)
{
	zip_t *z = open_archive(path, diag);
	zip_int64_t n, i, found = -1;
	FILE *f;

	if (!z)
		return NULL;
	n = zip_get_num_entries(z, 0);
	if (!suffix && n != 1) {
		hs_diag_set(diag, 0, "expected exactly one entry in the zip, found %lld",
			    (long long)n);
		zip_discard(z);
		return NULL;
	}
	for (i = 0; i < n && found < 0; i++) {
		const char *name = zip_get_name(z, (zip_uint64_t)i, 0);

		if (name && (!suffix || ends_with(name, suffix)))
			found = i;
	}
	if (found < 0) {
		hs_diag_set(diag, 0, "no entry ending in '%s' in the zip", suffix);
		zip_discard(z);
		return NULL;
	}
	if (entry_name) {
		*entry_name = hs_strdup(zip_get_name(z, (zip_uint64_t)found, 0));
		if (!*entry_name) {
			zip_discard(z);
			hs_diag_set(diag, 0, "out of memory");
			return NULL;
		}
	}
	f = open_index(z, (zip_uint64_t)found, diag);
	if (!f && entry_name) { /* nothing is handed over on failure */
		hs_free(*entry_name);
		*entry_name = NULL;
	}
	return f;
}

FILE *hs_zip_open_named(const char *path, const char *name)
{
	zip_t *z = open_archive(path, NULL);
	zip_int64_t i;

	if (!z)
		return NULL;
	i = zip_name_locate(z, name, ZIP_FL_NODIR);
	if (i < 0) {
		zip_discard(z);
		return NULL;
	}
	return open_index(z, (zip_uint64_t)i, NULL);
}

struct zip_writer {
	char *path;  /* owned */
	char *entry; /* owned */
	FILE *spool; /* temporary file holding the entry's bytes */
};

static ssize_t writer_write(void *cookie, const char *buf, size_t size)
{
	struct zip_writer *w = cookie;

	if (fwrite(buf, 1, size, w->spool) != size) {
		errno = EIO;
		return 0;
	}
	return (ssize_t)size;
}

static void writer_free(struct zip_writer *w)
{
	if (w->spool)
		fclose(w->spool);
	hs_free(w->path);
	hs_free(w->entry);
	hs_free(w);
}

/* Build the zip from the spooled bytes; 0 or -1 with errno set. */
/*
 * The errno behind libzip's error @ze, so that fclose() says "No space
 * left on device" rather than "Input/output error"; EIO when it is not a
 * system error.
 */
static int zip_errno(zip_error_t *ze)
{
	int sys = zip_error_code_system(ze);

	return zip_error_system_type(ze) == ZIP_ET_SYS && sys > 0 ? sys : EIO;
}

static int writer_close(void *cookie)
{
	struct zip_writer *w = cookie;
	zip_source_t *src = NULL;
	zip_int64_t index;
	zip_t *z;
	zip_error_t ze;
	int zerr = 0, ret = -1, saved = EIO;

	if (fflush(w->spool) || ferror(w->spool)) {
		saved = errno ? errno : EIO;
		goto out;
	}
	rewind(w->spool);
	z = zip_open(w->path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
	if (!z) {
		zip_error_init_with_code(&ze, zerr);
		saved = zip_errno(&ze);
		zip_error_fini(&ze);
		goto out;
	}
	src = zip_source_filep(z, w->spool, 0, -1);
	if (!src) {
		zip_discard(z);
		goto out;
	}
	w->spool = NULL; /* the source owns it now */
	index = zip_file_add(z, w->entry, src, ZIP_FL_ENC_UTF_8);
	if (index < 0) {
		zip_source_free(src);
		zip_discard(z);
		goto out;
	}
	/* level 9 (libzip's default) is four times slower for 2% less size */
	if (zip_set_file_compression(z, (zip_uint64_t)index, ZIP_CM_DEFLATE, 5) < 0) {
		zip_discard(z);
		goto out;
	}
	if (zip_close(z) < 0) {
		saved = zip_errno(zip_get_error(z));
		zip_discard(z);
		goto out;
	}
	ret = 0;
out:
	writer_free(w);
	if (ret)
		errno = saved;
	return ret;
}

FILE *hs_zip_create_entry(const char *path, const char *entry_name, struct hs_diag *diag)
{
	static const cookie_io_functions_t io = {
	    .write = writer_write,
	    .close = writer_close,
	};
	struct zip_writer *w;
	struct stat st;
	FILE *f;

	/* libzip writes a new file and renames it over @path: no devices */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		hs_diag_set(diag, 0,
			    "a zip can only be written to a regular file, "
			    "not to a device, pipe or directory");
		return NULL;
	}
	w = hs_calloc(1, sizeof(*w));
	if (!w)
		goto oom;
	w->path = hs_strdup(path);
	w->entry = hs_strdup(entry_name);
	if (!w->path || !w->entry)
		goto oom;
	w->spool = hs_zip_tmpfile(diag);
	if (!w->spool) {
		writer_free(w);
		return NULL;
	}
	f = fopencookie(w, "w", io);
	if (f)
		return f;
oom:
	if (w)
		writer_free(w);
	hs_diag_set(diag, 0, "out of memory");
	return NULL;
}

/* ---- temporary files ---- */

static const char *tmp_dir(void)
{
	const char *d = getenv("TMPDIR");

	return d && *d ? d : "/tmp";
}

FILE *hs_zip_tmpfile(struct hs_diag *diag)
{
	char path[PATH_MAX];
	const char *dir = tmp_dir();
	FILE *f;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/heapscope-XXXXXX", dir) >=
	    sizeof(path)) {
		hs_diag_set(diag, 0, "cannot create a temporary file in %s: %s", dir,
			    strerror(ENAMETOOLONG));
		return NULL;
	}
	fd = mkstemp(path);
	if (fd < 0) {
		hs_diag_set(diag, 0, "cannot create a temporary file in %s: %s", dir,
			    strerror(errno));
		return NULL;
	}
	unlink(path);
	f = fdopen(fd, "w+");
	if (!f) {
		hs_diag_set(diag, 0, "out of memory");
		close(fd);
	}
	return f;
}

unsigned long long hs_zip_spool_max(void)
{
	return hs_env_size("HEAPSCOPE_SPOOL_MAX", HS_ZIP_SPOOL_MAX);
}

unsigned long long hs_env_size(const char *name, unsigned long long dflt)
{
	const char *s = getenv(name);
	unsigned long long v, unit = 1;
	char *end;

	if (!s || !*s || *s == '-')
		return dflt;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		unit = 1ULL << 10;
	else if (*end == 'M' || *end == 'm')
		unit = 1ULL << 20;
	else if (*end == 'G' || *end == 'g')
		unit = 1ULL << 30;
	if (unit > 1)
		end++;
	if (errno || end == s || *end || !v || v > ULLONG_MAX / unit)
		return dflt;
	return v * unit;
}

/* Half the bytes free in the temporary directory, or ULLONG_MAX if unknown. */
static unsigned long long half_free(FILE *t)
{
	struct statvfs st;

	if (fstatvfs(fileno(t), &st))
		return ULLONG_MAX;
	return (unsigned long long)st.f_bavail * st.f_frsize / 2;
}

int hs_zip_spool(FILE *in, FILE **out, struct hs_diag *diag)
{
	unsigned long long max = hs_zip_spool_max(), room, copied = 0;
	char buf[65536];
	size_t n;
	FILE *t = hs_zip_tmpfile(diag);

	if (!t)
		return -EIO;
	room = half_free(t);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (copied + n > max || copied + n > room) {
			if (copied + n > max)
				hs_diag_set(
				    diag, 0,
				    "standard input is copied to a "
				    "temporary file to be read, and this input is "
				    "larger than %llu bytes (HEAPSCOPE_SPOOL_MAX); give "
				    "the file's name instead",
				    max);
			else
				hs_diag_set(
				    diag, 0,
				    "standard input is copied to a "
				    "temporary file to be read, and this input would "
				    "fill more than half the space free in %s (TMPDIR); "
				    "give the file's name instead",
				    tmp_dir());
			fclose(t);
			return copied + n > max ? -EFBIG : -ENOSPC;
		}
		if (fwrite(buf, 1, n, t) != n)
			break;
		copied += n;
	}
	if (ferror(in) || ferror(t) || fflush(t)) {
		hs_diag_set(diag, 0,
			    "cannot copy standard input to a temporary file in %s: %s",
			    tmp_dir(), strerror(errno));
		fclose(t);
		return -EIO;
	}
	rewind(t);
	*out = t;
	return 0;
}
