/*
 * io - format names, detection and the path-level import/export entry
 * points that open files, standard streams and zip entries.
 */
#include "io/io.h"
#include "io/zipfile.h"
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

static const struct {
	const char *name;	/* for --from / --to */
	const char *suffix;	/* file name ending, matched without case */
} formats[HS_FORMAT__COUNT] = {
	[HS_FORMAT_UNKNOWN] = { "unknown", NULL },
	[HS_FORMAT_PERF_SCRIPT] = { "perf-script", ".data.txt" },
	[HS_FORMAT_TRACE_ZIP] = { "trace-zip", ".trace.zip" },
	[HS_FORMAT_PERFVIEW_XML] = { "xml", ".perfView.xml" },
	[HS_FORMAT_PERFVIEW_XML_ZIP] = { "xml-zip", ".perfView.xml.zip" },
	[HS_FORMAT_PERFVIEW_JSON] = { "json", ".perfView.json" },
	[HS_FORMAT_PERFVIEW_JSON_ZIP] = { "json-zip", ".perfView.json.zip" },
	[HS_FORMAT_FOLDED] = { "folded", ".folded" },
	[HS_FORMAT_HEAPSCOPE] = { "heapscope", ".heapscope" },
};

const char *hs_format_name(enum hs_format fmt)
{
	return fmt < HS_FORMAT__COUNT ? formats[fmt].name : "unknown";
}

enum hs_format hs_format_parse(const char *name)
{
	int i;

	for (i = 1; i < HS_FORMAT__COUNT; i++)
		if (!strcasecmp(name, formats[i].name))
			return (enum hs_format)i;
	if (!strcasecmp(name, "perf"))
		return HS_FORMAT_PERF_SCRIPT;
	return HS_FORMAT_UNKNOWN;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

enum hs_format hs_format_from_path(const char *path)
{
	int i;

	for (i = 1; i < HS_FORMAT__COUNT; i++)
		if (ends_with(path, formats[i].suffix))
			return (enum hs_format)i;
	if (ends_with(path, ".perf.data.dump") || ends_with(path, ".perfscript"))
		return HS_FORMAT_PERF_SCRIPT;
	if (ends_with(path, ".folded.txt") || ends_with(path, ".collapsed"))
		return HS_FORMAT_FOLDED;
	return HS_FORMAT_UNKNOWN;
}

/* ---- detection by content ---- */

#define SNIFF_BYTES 4096

/* A zip: the first entry's name tells a PerfView zip from a trace zip. */
static enum hs_format sniff_zip(const unsigned char *head, size_t n)
{
	size_t len;
	char name[256];

	if (n < 30 || memcmp(head, "PK\3\4", 4))
		return HS_FORMAT_PERFVIEW_XML_ZIP;	/* empty: let the reader say so */
	len = (size_t)head[26] | (size_t)head[27] << 8;
	if (30 + len > n || len >= sizeof(name))
		return HS_FORMAT_TRACE_ZIP;
	memcpy(name, head + 30, len);
	name[len] = '\0';
	if (ends_with(name, ".xml"))
		return HS_FORMAT_PERFVIEW_XML_ZIP;
	if (ends_with(name, ".json"))
		return HS_FORMAT_PERFVIEW_JSON_ZIP;
	return HS_FORMAT_TRACE_ZIP;
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* A perf script sample header has a "SECONDS:" token such as "123.456789:". */
static int perf_header(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t start, dots = 0;

		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		start = i;
		while (i < len && (is_digit(s[i]) || s[i] == '.')) {
			dots += s[i] == '.';
			i++;
		}
		if (i > start && dots == 1 && s[start] != '.' && i < len && s[i] == ':' &&
		    (i + 1 == len || s[i + 1] == ' ' || s[i + 1] == '\t'))
			return 1;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
	}
	return 0;
}

/* A folded line ends in whitespace and a number, or is only a number. */
static int folded_line(const char *s, size_t len)
{
	size_t end = len, start;
	int digits = 0;

	while (end && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r'))
		end--;
	start = end;
	while (start && s[start - 1] != ' ' && s[start - 1] != '\t')
		start--;
	if (start == end || s[0] == '\t')
		return 0;
	for (; start < end; start++) {
		if (is_digit(s[start]))
			digits++;
		else if (!strchr("+-.eE", s[start]))
			return 0;
	}
	return digits > 0;
}

enum hs_format hs_format_sniff(const unsigned char *head, size_t n)
{
	const char *s = (const char *)head, *end = s + n;
	int perf = 0;

	if (n >= HS_TRACE_MAGIC_LEN && !memcmp(head, HS_TRACE_MAGIC, HS_TRACE_MAGIC_LEN))
		return HS_FORMAT_HEAPSCOPE;
	if (n >= 4 && head[0] == 'P' && head[1] == 'K' &&
	    (head[2] == 3 || head[2] == 5) && (head[3] == 4 || head[3] == 6))
		return sniff_zip(head, n);
	if (n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
		s++;
	if (s == end)
		return HS_FORMAT_UNKNOWN;
	if (*s == '<')
		return HS_FORMAT_PERFVIEW_XML;
	if (*s == '{')
		return HS_FORMAT_PERFVIEW_JSON;
	/*
	 * Line formats: the first line that is not blank or a '#' comment
	 * decides (the reader says later what is wrong with the others),
	 * except that a perf script sample header must be followed by a frame
	 * line or another header.
	 */
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s), i = 0;

		if (!nl && perf)
			break;	/* a partial line after a header */
		if (memchr(s, '\0', len))
			return HS_FORMAT_UNKNOWN;
		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i < len && s[0] != '#') {
			if (perf)
				return s[0] == '\t' || s[0] == ' ' || perf_header(s, len)
					   ? HS_FORMAT_PERF_SCRIPT
					   : HS_FORMAT_UNKNOWN;
			if (!perf_header(s, len))
				return folded_line(s, len) ? HS_FORMAT_FOLDED
							   : HS_FORMAT_UNKNOWN;
			perf = 1;
		}
		if (!nl)
			break;
		s = nl + 1;
	}
	return perf ? HS_FORMAT_PERF_SCRIPT : HS_FORMAT_UNKNOWN;
}

/* ---- reading standard input ---- */

/* A stream that first replays the bytes read for sniffing, then the rest. */
struct replay {
	FILE *under;		/* borrowed */
	unsigned char *head;	/* owned */
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

static int is_zip(enum hs_format fmt)
{
	return fmt == HS_FORMAT_TRACE_ZIP || fmt == HS_FORMAT_PERFVIEW_XML_ZIP ||
	       fmt == HS_FORMAT_PERFVIEW_JSON_ZIP;
}

static int ends_with_case(const char *s, const char *suffix)
{
	return s && ends_with(s, suffix);
}

static int import_zip(const char *zpath, enum hs_format fmt, size_t source,
		      struct hs_stack_source *out, struct hs_diag *diag)
{
	char *entry = NULL;
	FILE *zf;
	int err;

	if (fmt == HS_FORMAT_TRACE_ZIP)
		return hs_import_trace_zip_view(zpath, (enum hs_perf_view)source, out,
						diag);
	zf = hs_zip_open_entry(zpath, NULL, &entry, diag);
	if (!zf)
		return -EINVAL;
	/* the entry's own name wins, as the file name does for PerfView */
	if (ends_with_case(entry, ".json"))
		fmt = HS_FORMAT_PERFVIEW_JSON_ZIP;
	else if (ends_with_case(entry, ".xml"))
		fmt = HS_FORMAT_PERFVIEW_XML_ZIP;
	if (fmt == HS_FORMAT_PERFVIEW_JSON_ZIP)
		err = hs_import_perfview_json(zf, out, diag);
	else
		err = hs_import_perfview_xml(zf, out, diag);
	fclose(zf);
	hs_free(entry);
	return err;
}

/*
 * Formats read from a file by name: zips and heapscope traces. @source
 * is an index into the format's hs_format_sources() list.
 */
static int import_file(const char *fpath, enum hs_format fmt, size_t source,
		       struct hs_stack_source *out, struct hs_diag *diag)
{
	if (fmt == HS_FORMAT_HEAPSCOPE)
		return hs_import_heapscope_source(fpath, source, out, diag);
	return import_zip(fpath, fmt, source, out, diag);
}

static int import_stream(FILE *f, enum hs_format fmt, size_t source,
			 struct hs_stack_source *out, struct hs_diag *diag)
{
	switch (fmt) {
	case HS_FORMAT_PERF_SCRIPT:
		return hs_import_perf_script_view(f, (enum hs_perf_view)source, out,
						  diag);
	case HS_FORMAT_PERFVIEW_XML:
		return hs_import_perfview_xml(f, out, diag);
	case HS_FORMAT_PERFVIEW_JSON:
		return hs_import_perfview_json(f, out, diag);
	case HS_FORMAT_FOLDED:
		return hs_import_folded(f, out, diag);
	default:
		hs_diag_set(diag, 0, "cannot read format '%s'", hs_format_name(fmt));
		return -EINVAL;
	}
}

/* ---- sources ---- */

/*
 * Each format's sources, the default first. The index of the one asked
 * for reaches the format's importer through import_file() or
 * import_stream(). perf script's are in the order of enum hs_perf_view.
 */
static const struct hs_source_info perf_sources[] = {
	{ "cpu", "CPU samples, each weighted by the time to the next sample on "
		 "its CPU (default)" },
	{ "thread-time", "every thread's time: CPU_TIME from CPU samples, "
			 "BLOCKED_TIME from sched_switch, READIED_BY from sched_waking "
			 "(or sched_wakeup)" },
};

/* A heapscope trace's: its memory views (analysis/memviews.h), by kind. */
static struct hs_source_info heap_sources[HS_MEM__COUNT];
static pthread_once_t heap_sources_once = PTHREAD_ONCE_INIT;

static void heap_sources_init(void)
{
	int i;

	for (i = 0; i < HS_MEM__COUNT; i++) {
		heap_sources[i].name = hs_memview_name((enum hs_memview_kind)i);
		heap_sources[i].summary = hs_memview_description((enum hs_memview_kind)i);
	}
}

size_t hs_format_sources(enum hs_format fmt, const struct hs_source_info **list)
{
	switch (fmt) {
	case HS_FORMAT_PERF_SCRIPT:
	case HS_FORMAT_TRACE_ZIP:
		*list = perf_sources;
		return sizeof(perf_sources) / sizeof(perf_sources[0]);
	case HS_FORMAT_HEAPSCOPE:
		pthread_once(&heap_sources_once, heap_sources_init);
		*list = heap_sources;
		return HS_MEM__COUNT;
	default:
		*list = NULL;
		return 0;
	}
}

size_t hs_path_sources(const char *path, enum hs_format fmt, struct hs_source_info *out)
{
	const struct hs_source_info *list;
	size_t i, n = hs_format_sources(fmt, &list), k = 0;
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_trace_sampling s;

	if (fmt != HS_FORMAT_HEAPSCOPE || !strcmp(path, "-") ||
	    hs_trace_peek_sampling(path, &s, &diag) <= 0)
		memset(&s, 0, sizeof(s));
	for (i = 0; i < n && k < HS_SOURCES_MAX; i++) {
		if (fmt == HS_FORMAT_HEAPSCOPE) {
			if (i == HS_MEM_CPU ? !s.cpu_hz :
			    i == HS_MEM_WALL ? !s.wall_hz : (s.flags & 1) != 0)
				continue;
		}
		out[k++] = list[i];
	}
	return k;
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
	for (i = 0; i < n; i++)
		if (!strcmp(list[i].name, name)) {
			*index = i;
			return 0;
		}
	if (!n) {
		hs_diag_set(diag, 0, "%s input offers no choice of source "
			    "(asked for '%s')", hs_format_name(fmt), name);
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
		hs_diag_set(diag, 0, *len ? "cannot tell the input's format; "
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

int hs_import_path_source(const char *path, enum hs_format fmt, const char *source,
			  struct hs_stack_source *out, struct hs_diag *diag)
{
	int is_stdin = !strcmp(path, "-");
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
			hs_diag_set(diag, 0, err == -EIO ? "read error" : "the input is empty");
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
		in = replay_open(f, head, len);
		if (!in) {
			hs_diag_set(diag, 0, "out of memory");
			err = -ENOMEM;
			goto out;
		}
	}
	if (fmt == HS_FORMAT_HEAPSCOPE && !source && !is_stdin) {
		/* the default is the first view the trace offers (cpu for --no-heap) */
		struct hs_source_info avail[HS_SOURCES_MAX];
		enum hs_memview_kind kind;

		if (hs_path_sources(path, fmt, avail) &&
		    !hs_memview_parse(avail[0].name, &kind))
			index = (size_t)kind;
	}
	if (is_zip(fmt) || fmt == HS_FORMAT_HEAPSCOPE) {
		struct stat st;
		char fdpath[64];

		if (!is_stdin && !fstat(fileno(f), &st) && S_ISREG(st.st_mode)) {
			err = import_file(path, fmt, index, out, diag);
			goto out;
		}
		err = hs_zip_spool(in, &tmp, diag);	/* zips need seeking */
		if (err)
			goto out;
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fileno(tmp));
		err = import_file(fdpath, fmt, index, out, diag);
		goto out;
	}
	err = import_stream(in, fmt, index, out, diag);
out:
	if (tmp)
		fclose(tmp);
	if (in && in != f)
		fclose(in);
	if (f != stdin)
		fclose(f);
	return err;
}

int hs_import_path(const char *path, enum hs_format fmt,
		   struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_path_source(path, fmt, NULL, out, diag);
}

/* ---- writing a path or standard output ---- */

static int can_write(enum hs_format fmt)
{
	return fmt == HS_FORMAT_PERFVIEW_XML || fmt == HS_FORMAT_PERFVIEW_XML_ZIP ||
	       fmt == HS_FORMAT_PERFVIEW_JSON || fmt == HS_FORMAT_PERFVIEW_JSON_ZIP ||
	       fmt == HS_FORMAT_FOLDED;
}

int hs_format_writable(enum hs_format fmt)
{
	return can_write(fmt);
}

/*
 * The zip entry's name: the file name minus ".zip", made to end in
 * .perfView.xml / .perfView.json so that readers can tell what it holds.
 */
static char *entry_name(const char *path, enum hs_format fmt)
{
	const char *ext = fmt == HS_FORMAT_PERFVIEW_JSON_ZIP ? ".json" : ".xml";
	const char *base = strrchr(path, '/');
	struct hs_buf b = HS_BUF_INIT;
	size_t len;

	base = base ? base + 1 : path;
	if (!strcmp(path, "-") || !*base)
		base = "stacks";
	len = strlen(base);
	if (ends_with(base, ".zip"))
		len -= 4;
	if (hs_buf_add(&b, base, len))
		return NULL;
	if (!ends_with(b.s, ext) &&
	    hs_buf_adds(&b, fmt == HS_FORMAT_PERFVIEW_JSON_ZIP ? ".perfView.json"
							       : ".perfView.xml")) {
		hs_buf_release(&b);
		return NULL;
	}
	return hs_buf_detach(&b);
}

static int export_stream(const struct hs_stack_source *src, enum hs_format fmt,
			 FILE *f)
{
	switch (fmt) {
	case HS_FORMAT_PERFVIEW_XML:
	case HS_FORMAT_PERFVIEW_XML_ZIP:
		return hs_export_perfview_xml(src, f);
	case HS_FORMAT_PERFVIEW_JSON:
	case HS_FORMAT_PERFVIEW_JSON_ZIP:
		return hs_export_perfview_json(src, f);
	default:
		return hs_export_folded(src, f);
	}
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
		hs_diag_set(diag, 0, "cannot tell the output format from the name; "
			    "name it with --to");
		return -EINVAL;
	}
	if (!can_write(fmt)) {
		hs_diag_set(diag, 0, "heapscope cannot write %s files",
			    hs_format_name(fmt));
		return -ENOTSUP;
	}
	zip = fmt == HS_FORMAT_PERFVIEW_XML_ZIP || fmt == HS_FORMAT_PERFVIEW_JSON_ZIP;
	if (zip) {
		entry = entry_name(path, fmt);
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
	err = export_stream(src, fmt, f);
	if (err && zip)
		regular = 1;	/* closing still builds the zip, with half the data */
	else if (zip)
		regular = 0;	/* if building it fails, libzip leaves the old file */
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
			unlink(path);	/* no half-written output left behind */
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
