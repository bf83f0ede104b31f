/*
 * io - the path-level import and export entry points: open a path or
 * standard input, sniff and spool it, pick a source, name zip entries,
 * and hand the stream or path to a format's operations. The formats
 * themselves (struct hs_format_ops, sniffers, suffix and name lookups)
 * are data in formats.c.
 */

#include "io/io.h"
#include "io/io_internal.h"
#include "io/zipfile.h"
#include "io/import_nettrace.h"
#include "dotnet/nettrace.h"
#include "heapgraph/gcdump.h"
#include "analysis/memviews.h"
#include "format/trace_format.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define SNIFF_BYTES 4096

/* ---- reading standard input ---- */

/* A stream that first replays the bytes read for sniffing, then the rest. */
struct replay {
	FILE *under;	     /* borrowed */
	unsigned char *head; /* owned */
	size_t len, pos;
};

static ssize_t replay_read(void *cookie, char *buf, size_t size)
{
	struct replay *r = cookie;
	size_t n;

	if (r->pos < r->len) {
		n = r->len - r->pos < size ? r->len - r->pos : size;
		memcpy(buf, r->head + r->pos, n);
		r->pos += n;
		return (ssize_t)n;
	}
	n = fread(buf, 1, size, r->under);
	if (!n && ferror(r->under)) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)n;
}

static int replay_close(void *cookie)
{
	struct replay *r = cookie;

	hs_free(r->head);
	hs_free(r);
	return 0;
}

/* Read up to SNIFF_BYTES of @f into an owned buffer. */
static int read_head(FILE *f, unsigned char **head, size_t *len)
{
	unsigned char *b = hs_malloc(SNIFF_BYTES);
	size_t n = 0, got;

	if (!b)
		return -ENOMEM;
	while (n < SNIFF_BYTES && (got = fread(b + n, 1, SNIFF_BYTES - n, f)) > 0)
		n += got;
	if (ferror(f)) {
		hs_free(b);
		return -EIO;
	}
	*head = b;
	*len = n;
	return 0;
}

/* Wrap @under so that reading starts again at @head; takes @head. */
static FILE *replay_open(FILE *under, unsigned char *head, size_t len)
{
	static const cookie_io_functions_t io = {
	    .read = replay_read,
	    .close = replay_close,
	};
	struct replay *r = hs_malloc(sizeof(*r));
	FILE *f;

	if (!r) {
		hs_free(head);
		return NULL;
	}
	r->under = under;
	r->head = head;
	r->len = len;
	r->pos = 0;
	f = fopencookie(r, "r", io);
	if (!f)
		replay_close(r);
	return f;
}

/* The index of source @name (NULL: 0, the default) among @fmt's. */
static int find_source(enum hs_format fmt, const char *name, size_t *index,
		       struct hs_diag *diag)
{
	const struct hs_source_info *list;
	size_t i, n = hs_format_sources(fmt, &list);
	struct hs_buf names = HS_BUF_INIT;

	*index = 0;
	if (!name)
		return 0;
	if (hs_format_ops(fmt)->source_index &&
	    !hs_format_ops(fmt)->source_index(name, index))
		return 0;
	for (i = 0; i < n; i++)
		if (!strcmp(list[i].name, name)) {
			*index = i;
			return 0;
		}
	if (!n) {
		hs_diag_set(diag, 0,
			    "%s input offers no choice of source "
			    "(asked for '%s')",
			    hs_format_name(fmt), name);
		return -ENOENT;
	}
	for (i = 0; i < n; i++)
		if ((i && hs_buf_adds(&names, ", ")) ||
		    hs_buf_adds(&names, list[i].name)) {
			hs_buf_release(&names);
			hs_diag_set(diag, 0, "out of memory");
			return -ENOMEM;
		}
	hs_diag_set(diag, 0, "%s input has no source '%s' (it has: %s)",
		    hs_format_name(fmt), name, names.s);
	hs_buf_release(&names);
	return -ENOENT;
}

FILE *hs_spool_input(FILE *f, struct hs_diag *diag)
{
	FILE *t = NULL;

	/* bounded, in TMPDIR (zipfile.h) */
	if (hs_zip_spool(f, &t, diag))
		return NULL;
	return t;
}

/* ---- reading a path ---- */

/* Open @path for reading ("-" is standard input, not a copy). */
static int open_input(const char *path, FILE **out, struct hs_diag *diag)
{
	struct stat st;
	FILE *f;
	int err;

	if (!strcmp(path, "-")) {
		*out = stdin;
		return 0;
	}
	f = fopen(path, "rb");
	if (f && !fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		fclose(f);
		f = NULL;
		errno = EISDIR;
	}
	if (!f) {
		err = -errno;
		hs_diag_set(diag, 0, "cannot open: %s", strerror(errno));
		return err;
	}
	*out = f;
	return 0;
}

/* Read the head of @f and tell its format; *@head is owned by the caller. */
static int sniff_input(FILE *f, enum hs_format *fmt, unsigned char **head, size_t *len,
		       struct hs_diag *diag)
{
	int err = read_head(f, head, len);

	if (err) {
		hs_diag_set(diag, 0, err == -EIO ? "read error" : "out of memory");
		return err;
	}
	*fmt = hs_format_sniff(*head, *len);
	if (*fmt == HS_FORMAT_UNKNOWN) {
		hs_free(*head);
		*head = NULL;
		hs_diag_set(diag, 0,
			    *len ? "cannot tell the input's format; "
				   "name it with --from"
				 : "the input is empty");
		return -EINVAL;
	}
	return 0;
}

int hs_path_format(const char *path, enum hs_format fmt, enum hs_format *out,
		   struct hs_diag *diag)
{
	unsigned char *head = NULL;
	size_t len;
	FILE *f;
	int err;

	if (fmt == HS_FORMAT_UNKNOWN && strcmp(path, "-"))
		fmt = hs_format_from_path(path);
	if (fmt != HS_FORMAT_UNKNOWN && !strcmp(path, "-")) {
		*out = fmt;
		return 0;
	}
	err = open_input(path, &f, diag);
	if (err)
		return err;
	*out = fmt;
	if (fmt == HS_FORMAT_UNKNOWN)
		err = sniff_input(f, out, &head, &len, diag);
	hs_free(head);
	if (f != stdin)
		fclose(f);
	return err;
}

/* Seek regular file @f back by the @len bytes just read: 1, else 0 (nothing done). */
static int rewind_regular(FILE *f, size_t len)
{
	struct stat st;

	return fileno(f) >= 0 && !fstat(fileno(f), &st) && S_ISREG(st.st_mode) &&
	       !fseeko(f, -(off_t)len, SEEK_CUR);
}

int hs_import_path_source(const char *path, enum hs_format fmt, const char *source,
			  struct hs_stack_source *out, struct hs_diag *diag)
{
	int is_stdin = !strcmp(path, "-");
	const struct hs_format_ops *ops;
	FILE *f, *in = NULL, *tmp = NULL;
	size_t index = 0;
	int err = 0;

	if (fmt == HS_FORMAT_UNKNOWN && !is_stdin)
		fmt = hs_format_from_path(path);
	if (fmt != HS_FORMAT_UNKNOWN) {
		err = find_source(fmt, source, &index, diag);
		if (err)
			return err;
	}
	err = open_input(path, &f, diag);
	if (err)
		return err;
	in = f;
	/* named or not, an empty input is an error (sniffing says so itself) */
	if (fmt != HS_FORMAT_UNKNOWN) {
		int c = getc(f);

		if (c == EOF) {
			err = ferror(f) ? -EIO : -EINVAL;
			hs_diag_set(diag, 0,
				    err == -EIO ? "read error" : "the input is empty");
			goto out;
		}
		ungetc(c, f);
	}
	if (fmt == HS_FORMAT_UNKNOWN) {
		unsigned char *head;
		size_t len;

		err = sniff_input(f, &fmt, &head, &len, diag);
		if (err)
			goto out;
		err = find_source(fmt, source, &index, diag);
		if (err) {
			hs_free(head);
			goto out;
		}
		if (rewind_regular(f, len)) {
			hs_free(head); /* read again as itself: importers may map it */
		} else {
			in = replay_open(f, head, len);
			if (!in) {
				hs_diag_set(diag, 0, "out of memory");
				err = -ENOMEM;
				goto out;
			}
		}
	}
	ops = hs_format_ops(fmt);
	if (!ops->import_file && !ops->import_stream) {
		hs_diag_set(diag, 0, "heapscope writes %s files but does not read them",
			    ops->name);
		err = -ENOTSUP;
		goto out;
	}
	if (ops->default_by_file && !source && !is_stdin) {
		/* the default is the first source the file offers (cpu for --no-heap) */
		struct hs_source_info avail[HS_SOURCES_MAX];

		if (ops->path_sources(path, avail) &&
		    find_source(fmt, avail[0].name, &index, diag)) {
			err = -ENOENT;
			goto out;
		}
	}
	if (ops->import_file) {
		struct stat st;
		char fdpath[64];

		if (!is_stdin && !fstat(fileno(f), &st) && S_ISREG(st.st_mode)) {
			err = ops->import_file(path, index, source, out, diag);
			goto out;
		}
		err = hs_zip_spool(in, &tmp, diag); /* zips need seeking */
		if (err)
			goto out;
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fileno(tmp));
		err = ops->import_file(fdpath, index, source, out, diag);
		goto out;
	}
	err = ops->import_stream(in, index, source, out, diag);
out:
	if (!err)
		hs_source_check(out); /* every importer hands over a valid model */
	if (tmp)
		fclose(tmp);
	if (in && in != f)
		fclose(in);
	if (f != stdin)
		fclose(f);
	return err;
}

int hs_import_path(const char *path, enum hs_format fmt, struct hs_stack_source *out,
		   struct hs_diag *diag)
{
	return hs_import_path_source(path, fmt, NULL, out, diag);
}

/* ---- writing a path or standard output ---- */

/*
 * The zip entry's name: the file name minus ".zip", made to end in
 * .perfView.xml / .perfView.json so that readers can tell what it holds.
 */
static char *entry_name(const char *path, const struct hs_format_ops *zip)
{
	const char *inner = hs_format_ops(zip->zip_of)->suffixes[0];
	const char *ext = strrchr(inner, '.');
	const char *base = strrchr(path, '/');
	struct hs_buf b = HS_BUF_INIT;
	size_t len;

	base = base ? base + 1 : path;
	if (!strcmp(path, "-") || !*base)
		base = "stacks";
	len = strlen(base);
	if (hs__io_ends_with(base, ".zip"))
		len -= 4;
	if (hs_buf_add(&b, base, len))
		return NULL;
	if (!hs__io_ends_with(b.s, ext) && hs_buf_adds(&b, inner)) {
		hs_buf_release(&b);
		return NULL;
	}
	return hs_buf_detach(&b);
}

/* Copy the file at @path to @out. */
static int copy_file(const char *path, FILE *out)
{
	char buf[65536];
	size_t n;
	FILE *in = fopen(path, "rb");
	int err = 0;

	if (!in)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n) {
			err = -EIO;
			break;
		}
	if (ferror(in))
		err = -EIO;
	fclose(in);
	return err;
}

int hs_export_path(const struct hs_stack_source *src, const char *path,
		   enum hs_format fmt, struct hs_diag *diag)
{
	int is_stdout = !strcmp(path, "-");
	const struct hs_format_ops *ops;
	const char *tmpdir = getenv("TMPDIR");
	char tmpzip[4096];
	const char *target = path;
	int zip, err, regular = 0, fd = -1;
	char *entry = NULL;
	struct stat st;
	FILE *f;

	if (fmt == HS_FORMAT_UNKNOWN && !is_stdout)
		fmt = hs_format_from_path(path);
	if (fmt == HS_FORMAT_UNKNOWN) {
		hs_diag_set(diag, 0,
			    "cannot tell the output format from the name; "
			    "name it with --to");
		return -EINVAL;
	}
	ops = hs_format_ops(fmt);
	if (!ops->export_stream) {
		hs_diag_set(diag, 0, "heapscope cannot write %s files",
			    hs_format_name(fmt));
		return -ENOTSUP;
	}
	zip = ops->zip_of != HS_FORMAT_UNKNOWN;
	if (zip) {
		entry = entry_name(path, ops);
		if (!entry) {
			hs_diag_set(diag, 0, "out of memory");
			return -ENOMEM;
		}
		if (is_stdout) {
			/* libzip writes files, not pipes: build it aside, then copy */
			snprintf(tmpzip, sizeof(tmpzip), "%s/heapscope-XXXXXX.zip",
				 tmpdir && *tmpdir ? tmpdir : "/tmp");
			fd = mkstemps(tmpzip, 4);
			if (fd < 0) {
				err = -errno;
				hs_diag_set(diag, 0, "cannot create a temporary file: %s",
					    strerror(errno));
				hs_free(entry);
				return err;
			}
			close(fd);
			target = tmpzip;
		}
		f = hs_zip_create_entry(target, entry, diag);
		hs_free(entry);
		if (!f) {
			err = -EIO;
			goto out;
		}
	} else if (is_stdout) {
		f = stdout;
	} else {
		f = fopen(path, "wb");
		if (!f) {
			err = -errno;
			hs_diag_set(diag, 0, "cannot create: %s", strerror(errno));
			return err;
		}
		regular = !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
	}
	errno = 0;
	err = ops->export_stream(src, f);
	if (err && zip)
		regular = 1; /* closing still builds the zip, with half the data */
	else if (zip)
		regular = 0; /* if building it fails, libzip leaves the old file */
	if (f == stdout) {
		if ((fflush(f) || ferror(f)) && !err)
			err = -EIO;
	} else if (fclose(f) && !err) {
		err = -EIO;
	}
	if (err) {
		if (err == -ENOMEM)
			hs_diag_set(diag, 0, "out of memory");
		else
			hs_diag_set(diag, 0, "cannot write%s%s", errno ? ": " : "",
				    errno ? strerror(errno) : "");
		if (regular && !is_stdout)
			unlink(path); /* no half-written output left behind */
		goto out;
	}
	if (zip && is_stdout) {
		err = copy_file(tmpzip, stdout);
		if (!err && (fflush(stdout) || ferror(stdout)))
			err = -EIO;
		if (err)
			hs_diag_set(diag, 0, "cannot write to standard output");
	}
out:
	if (zip && is_stdout)
		unlink(tmpzip);
	return err;
}
