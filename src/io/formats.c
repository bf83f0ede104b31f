/*
 * formats - the formats as data: one struct hs_format_ops each (names and
 * --from aliases, suffixes, sniffing by content, importing, exporting,
 * sources, capabilities) in the table formats[], and the lookups over it
 * (hs_format_ops, hs_format_has, hs_format_name, hs_format_parse,
 * hs_format_from_path, hs_format_sniff, hs_format_writable,
 * hs_format_sources, hs_path_sources). The table is static and owned
 * here; the sources lists it hands out are static too and must not be
 * freed. Opening paths, standard input and zip entries is io.c's job.
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

/* Whether @s ends with @suffix, ignoring case (io.c names zip entries with it). */
int hs__io_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

/* ---- detection by content ---- */

static int sniff_heapscope(const unsigned char *head, size_t n)
{
	return n >= HS_TRACE_MAGIC_LEN &&
	       !memcmp(head, HS_TRACE_MAGIC, HS_TRACE_MAGIC_LEN);
}

static int is_zip_head(const unsigned char *head, size_t n)
{
	return n >= 4 && head[0] == 'P' && head[1] == 'K' &&
	       (head[2] == 3 || head[2] == 5) && (head[3] == 4 || head[3] == 6);
}

/*
 * A zip's first entry name ending (".xml", ".json"), or NULL when it
 * cannot be read from @head (too short, an empty zip, a long name).
 */
static int zip_first_entry(const unsigned char *head, size_t n, char *name, size_t size)
{
	size_t len;

	if (n < 30 || memcmp(head, "PK\3\4", 4))
		return -1; /* empty or no local header in reach */
	len = (size_t)head[26] | (size_t)head[27] << 8;
	if (30 + len > n || len >= size)
		return 0; /* a name that is not in reach: no known ending */
	memcpy(name, head + 30, len);
	name[len] = '\0';
	return 1;
}

/* A PerfView zip: its first entry is .xml (or, with no entry in reach, assumed). */
static int sniff_xml_zip(const unsigned char *head, size_t n)
{
	char name[256];
	int got;

	if (!is_zip_head(head, n))
		return 0;
	got = zip_first_entry(head, n, name, sizeof(name));
	return got < 0 || (got > 0 && hs__io_ends_with(
					  name, ".xml")); /* empty: the reader says so */
}

static int sniff_json_zip(const unsigned char *head, size_t n)
{
	char name[256];

	return is_zip_head(head, n) && zip_first_entry(head, n, name, sizeof(name)) > 0 &&
	       hs__io_ends_with(name, ".json");
}

static int sniff_nettrace_zip(const unsigned char *head, size_t n)
{
	char name[256];

	return is_zip_head(head, n) && zip_first_entry(head, n, name, sizeof(name)) > 0 &&
	       hs__io_ends_with(name, ".nettrace");
}

/* Any other zip is perfcollect's (the zip formats before it are tried first). */
static int sniff_trace_zip(const unsigned char *head, size_t n)
{
	return is_zip_head(head, n);
}

/* The first byte that is not a UTF-8 byte order mark or a blank, or NULL. */
static const char *first_text(const unsigned char *head, size_t n)
{
	const char *s = (const char *)head, *end = s + n;

	if (n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
		s++;
	return s < end ? s : NULL;
}

static int sniff_xml(const unsigned char *head, size_t n)
{
	const char *s = first_text(head, n);

	return s && *s == '<';
}

static int sniff_json(const unsigned char *head, size_t n)
{
	const char *s = first_text(head, n);

	return s && *s == '{';
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

/*
 * The line formats: the first line that is not blank or a '#' comment
 * decides (the reader says later what is wrong with the others), except
 * that a perf script sample header must be followed by a frame line or
 * another header. Returns HS_FORMAT_PERF_SCRIPT, HS_FORMAT_FOLDED or
 * HS_FORMAT_UNKNOWN.
 */
static enum hs_format sniff_lines(const unsigned char *head, size_t n)
{
	const char *s = first_text(head, n), *end = (const char *)head + n;
	int perf = 0;

	if (!s)
		return HS_FORMAT_UNKNOWN;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s), i = 0;

		if (!nl && perf)
			break; /* a partial line after a header */
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

/*
 * perf script text; or a binary perf.data recording (its magic
 * "PERFILE2"), which the perf script reader refuses with the
 * `perf script` command that converts it.
 */
static int sniff_perf_script(const unsigned char *head, size_t n)
{
	if (n >= 8 && !memcmp(head, "PERFILE2", 8))
		return 1;
	return sniff_lines(head, n) == HS_FORMAT_PERF_SCRIPT;
}

static int sniff_folded(const unsigned char *head, size_t n)
{
	return sniff_lines(head, n) == HS_FORMAT_FOLDED;
}

/* ---- the importers and exporters, as the table calls them ---- */

static int import_perf_stream(FILE *f, size_t source, const char *name,
			      struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_perf_script_view(f, (enum hs_perf_view)source, out, diag);
}

static int import_trace_zip(const char *path, size_t source, const char *name,
			    struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_trace_zip_view(path, (enum hs_perf_view)source, out, diag);
}

static int import_xml_stream(FILE *f, size_t source, const char *name,
			     struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_perfview_xml(f, out, diag);
}

static int import_json_stream(FILE *f, size_t source, const char *name,
			      struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_perfview_json(f, out, diag);
}

static int import_folded_stream(FILE *f, size_t source, const char *name,
				struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_folded(f, out, diag);
}

/* A PerfView zip's one entry: its own name (.json, .xml) says which it is. */
static int import_perfview_zip(const char *path, size_t source, const char *name,
			       struct hs_stack_source *out, struct hs_diag *diag)
{
	char *entry = NULL;
	FILE *zf;
	int err;

	zf = hs_zip_open_entry(path, NULL, &entry, diag);
	if (!zf)
		return -EINVAL;
	if (entry && hs__io_ends_with(entry, ".json"))
		err = hs_import_perfview_json(zf, out, diag);
	else
		err = hs_import_perfview_xml(zf, out, diag);
	fclose(zf);
	hs_free(entry);
	return err;
}

static int import_nettrace_stream(FILE *f, size_t source, const char *name,
				  struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_nettrace(f, source, name, out, diag);
}

static int import_nettrace_zip(const char *path, size_t source, const char *name,
			       struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_nettrace_zip(path, source, name, out, diag);
}

static int import_gcdump_file(const char *path, size_t source, const char *name,
			      struct hs_stack_source *out, struct hs_diag *diag)
{
	(void)name;
	return hs_import_gcdump(path, source, out, diag);
}

static int import_heapscope_file(const char *path, size_t source, const char *name,
				 struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs_import_heapscope_source(path, source, out, diag);
}

/* ---- sources ---- */

/*
 * Each format's sources, the default first. The index of the one asked
 * for reaches the format's importer. perf script's are in the order of
 * enum hs_perf_view.
 */
static const struct hs_source_info perf_sources[] = {
    {"cpu", "CPU samples, each weighted by the time to the next sample on "
	    "its CPU (default)"},
    {"thread-time", "every thread's time: CPU_TIME from CPU samples, "
		    "BLOCKED_TIME from sched_switch, READIED_BY from sched_waking "
		    "(or sched_wakeup)"},
};

static size_t perf_source_list(const struct hs_source_info **list)
{
	*list = perf_sources;
	return sizeof(perf_sources) / sizeof(perf_sources[0]);
}

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

static size_t heap_source_list(const struct hs_source_info **list)
{
	pthread_once(&heap_sources_once, heap_sources_init);
	*list = heap_sources;
	return HS_MEM__COUNT;
}

/*
 * The views a trace at @path offers: cpu and wall only when it was
 * recorded with them, and no memory view when it was recorded with
 * --no-heap (its sampling header says so).
 */
static size_t heap_path_sources(const char *path, struct hs_source_info *out)
{
	const struct hs_source_info *list;
	size_t i, n = heap_source_list(&list), k = 0;
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_trace_sampling s;

	if (!strcmp(path, "-") || hs_trace_peek_sampling(path, &s, &diag) <= 0)
		memset(&s, 0, sizeof(s));
	for (i = 0; i < n && k < HS_SOURCES_MAX; i++) {
		if (i == HS_MEM_CPU    ? !s.cpu_hz
		    : i == HS_MEM_WALL ? !s.wall_hz
				       : (s.flags & 1) != 0)
			continue;
		out[k++] = list[i];
	}
	return k;
}

/* ---- the table ---- */

static const char *const perf_suffixes[] = {".data.txt", ".perf.data.dump", ".perfscript",
					    NULL};
static const char *const perf_aliases[] = {"perf", NULL};
static const char *const trace_zip_suffixes[] = {".trace.zip", NULL};
static const char *const xml_suffixes[] = {".perfView.xml", NULL};
static const char *const xml_zip_suffixes[] = {".perfView.xml.zip", NULL};
static const char *const json_suffixes[] = {".perfView.json", NULL};
static const char *const json_zip_suffixes[] = {".perfView.json.zip", NULL};
static const char *const folded_suffixes[] = {".folded", ".folded.txt", ".collapsed",
					      NULL};
static const char *const heapscope_suffixes[] = {".heapscope", NULL};
static const char *const pprof_suffixes[] = {".pb.gz", NULL};
static const char *const speedscope_suffixes[] = {".speedscope.json", NULL};
static const char *const nettrace_suffixes[] = {".nettrace", NULL};
static const char *const nettrace_zip_suffixes[] = {".nettrace.zip", NULL};
static const char *const gcdump_suffixes[] = {".gcdump", NULL};

static size_t gcdump_source_list(const struct hs_source_info **list)
{
	*list = hs_gcdump_sources;
	return HS_GCDUMP__COUNT;
}

/* A .nettrace's sources: its events read once, to list what it holds. */
static size_t nettrace_source_list(const struct hs_source_info **list)
{
	*list = hs_nettrace_sources;
	return HS_NETTRACE__COUNT;
}

static size_t nettrace_path_sources(const char *path, struct hs_source_info *out)
{
	return hs_nettrace_path_sources(path, 0, out);
}

static size_t nettrace_zip_path_sources(const char *path, struct hs_source_info *out)
{
	return hs_nettrace_path_sources(path, 1, out);
}

/*
 * In the order content is tried: the magics first (heapscope's, a
 * .gcdump's FastSerialization header, pprof's gzip), speedscope's JSON
 * before any other JSON, the zips that name their entry before
 * perfcollect's zip, which takes any other, then XML, JSON and the line
 * formats. Suffixes are tried in the same order, the longest match
 * winning (.perfView.xml.zip over .perfView.xml and .speedscope.json
 * over .json are told by the ending itself).
 */
static const struct hs_format_ops formats[] = {
    {
	.id = HS_FORMAT_HEAPSCOPE,
	.name = "heapscope",
	.suffixes = heapscope_suffixes,
	.caps = HS_FORMAT_HAS_HEAP | HS_FORMAT_HAS_TIME,
	.sniff = sniff_heapscope,
	.import_file = import_heapscope_file,
	.sources = heap_source_list,
	.path_sources = heap_path_sources,
	.default_by_file = 1,
    },
    {
	.id = HS_FORMAT_GCDUMP,
	.name = "gcdump",
	.suffixes = gcdump_suffixes,
	.caps = HS_FORMAT_HAS_GRAPH,
	.sniff = hs_gcdump_sniff,
	.import_file = import_gcdump_file,
	.sources = gcdump_source_list,
    },
    {
	.id = HS_FORMAT_PPROF,
	.name = "pprof",
	.suffixes = pprof_suffixes,
	.sniff = hs_pprof_sniff,
	.import_stream = hs_import_pprof_stream,
	.export_stream = hs_export_pprof,
    },
    {
	.id = HS_FORMAT_SPEEDSCOPE,
	.name = "speedscope",
	.suffixes = speedscope_suffixes,
	.sniff = hs_speedscope_sniff,
	.import_stream = hs_import_speedscope_stream,
	.export_stream = hs_export_speedscope,
    },
    {
	.id = HS_FORMAT_PERFVIEW_XML_ZIP,
	.name = "xml-zip",
	.suffixes = xml_zip_suffixes,
	.zip_of = HS_FORMAT_PERFVIEW_XML,
	.caps = HS_FORMAT_HAS_TIME,
	.sniff = sniff_xml_zip,
	.import_file = import_perfview_zip,
	.export_stream = hs_export_perfview_xml,
    },
    {
	.id = HS_FORMAT_PERFVIEW_JSON_ZIP,
	.name = "json-zip",
	.suffixes = json_zip_suffixes,
	.zip_of = HS_FORMAT_PERFVIEW_JSON,
	.caps = HS_FORMAT_HAS_TIME,
	.sniff = sniff_json_zip,
	.import_file = import_perfview_zip,
	.export_stream = hs_export_perfview_json,
    },
    {
	.id = HS_FORMAT_NETTRACE_ZIP,
	.name = "nettrace-zip",
	.suffixes = nettrace_zip_suffixes,
	.zip_of = HS_FORMAT_NETTRACE,
	.caps = HS_FORMAT_HAS_TIME,
	.sniff = sniff_nettrace_zip,
	.import_file = import_nettrace_zip,
	.sources = nettrace_source_list,
	.path_sources = nettrace_zip_path_sources,
	.source_index = hs_nettrace_source_index,
    },
    {
	.id = HS_FORMAT_TRACE_ZIP,
	.name = "trace-zip",
	.suffixes = trace_zip_suffixes,
	.caps = HS_FORMAT_HAS_TIME,
	.sniff = sniff_trace_zip,
	.import_file = import_trace_zip,
	.sources = perf_source_list,
    },
    {
	.id = HS_FORMAT_NETTRACE,
	.name = "nettrace",
	.suffixes = nettrace_suffixes,
	.caps = HS_FORMAT_HAS_TIME,
	.sniff = hs_nettrace_sniff,
	.import_stream = import_nettrace_stream,
	.sources = nettrace_source_list,
	.path_sources = nettrace_path_sources,
	.source_index = hs_nettrace_source_index,
    },
    {
	.id = HS_FORMAT_PERFVIEW_XML,
	.name = "xml",
	.suffixes = xml_suffixes,
	.caps = HS_FORMAT_HAS_TIME,
	.sniff = sniff_xml,
	.import_stream = import_xml_stream,
	.export_stream = hs_export_perfview_xml,
    },
    {
	.id = HS_FORMAT_PERFVIEW_JSON,
	.name = "json",
	.suffixes = json_suffixes,
	.caps = HS_FORMAT_HAS_TIME,
	.sniff = sniff_json,
	.import_stream = import_json_stream,
	.export_stream = hs_export_perfview_json,
    },
    {
	.id = HS_FORMAT_PERF_SCRIPT,
	.name = "perf-script",
	.suffixes = perf_suffixes,
	.aliases = perf_aliases,
	.caps = HS_FORMAT_HAS_TIME,
	.sniff = sniff_perf_script,
	.import_stream = import_perf_stream,
	.sources = perf_source_list,
    },
    {
	.id = HS_FORMAT_FOLDED,
	.name = "folded",
	.suffixes = folded_suffixes,
	.sniff = sniff_folded,
	.import_stream = import_folded_stream,
	.export_stream = hs_export_folded,
    },
};

#define NR_FORMATS (sizeof(formats) / sizeof(formats[0]))

const struct hs_format_ops *hs_format_ops(enum hs_format fmt)
{
	size_t i;

	for (i = 0; i < NR_FORMATS; i++)
		if (formats[i].id == fmt)
			return &formats[i];
	return NULL;
}

int hs_format_has(enum hs_format fmt, unsigned caps)
{
	const struct hs_format_ops *ops = hs_format_ops(fmt);
	unsigned have;

	if (!ops)
		return 0;
	have = ops->caps | (ops->export_stream ? HS_FORMAT_WRITABLE : 0u);
	return (have & caps) == caps;
}

const char *hs_format_name(enum hs_format fmt)
{
	const struct hs_format_ops *ops = hs_format_ops(fmt);

	return ops ? ops->name : "unknown";
}

enum hs_format hs_format_parse(const char *name)
{
	const char *const *a;
	size_t i;

	for (i = 0; i < NR_FORMATS; i++) {
		if (!strcasecmp(name, formats[i].name))
			return formats[i].id;
		for (a = formats[i].aliases; a && *a; a++)
			if (!strcasecmp(name, *a))
				return formats[i].id;
	}
	return HS_FORMAT_UNKNOWN;
}

enum hs_format hs_format_from_path(const char *path)
{
	enum hs_format best = HS_FORMAT_UNKNOWN;
	const char *const *sfx;
	size_t i, best_len = 0;

	for (i = 0; i < NR_FORMATS; i++)
		for (sfx = formats[i].suffixes; sfx && *sfx; sfx++)
			if (strlen(*sfx) > best_len && hs__io_ends_with(path, *sfx)) {
				best = formats[i].id;
				best_len = strlen(*sfx);
			}
	return best;
}

enum hs_format hs_format_sniff(const unsigned char *head, size_t n)
{
	size_t i;

	for (i = 0; i < NR_FORMATS; i++)
		if (formats[i].sniff && formats[i].sniff(head, n))
			return formats[i].id;
	return HS_FORMAT_UNKNOWN;
}

int hs_format_writable(enum hs_format fmt)
{
	return hs_format_has(fmt, HS_FORMAT_WRITABLE);
}

size_t hs_format_sources(enum hs_format fmt, const struct hs_source_info **list)
{
	const struct hs_format_ops *ops = hs_format_ops(fmt);

	if (!ops || !ops->sources) {
		*list = NULL;
		return 0;
	}
	return ops->sources(list);
}

size_t hs_path_sources(const char *path, enum hs_format fmt, struct hs_source_info *out)
{
	const struct hs_format_ops *ops = hs_format_ops(fmt);
	const struct hs_source_info *list;
	size_t i, n;

	if (ops && ops->path_sources)
		return ops->path_sources(path, out);
	n = hs_format_sources(fmt, &list);
	for (i = 0; i < n && i < HS_SOURCES_MAX; i++)
		out[i] = list[i];
	return i;
}
