#ifndef HS_IO_IO_H
#define HS_IO_IO_H
#include "common/log.h"
#include <stdio.h>
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * io - importers and exporters of stack sources, and the choice of format
 * by file name or, failing that, by content.
 *
 * Importers stream their input (no importer holds a whole file in one
 * buffer) and append to a caller-initialised hs_stack_source. On malformed
 * or truncated input they return -EINVAL (or -EIO, -ENOMEM, -E2BIG) and
 * fill @diag with the line or offset and what is wrong; what was appended
 * to @out before the error is unspecified, so callers release it.
 * FILE pointers are borrowed: no importer or exporter closes them.
 *
 * formats.c implements the hs_format_* lookups, hs_format_sources() and
 * hs_path_sources() (the formats as data); io.c the path-level entry
 * points (hs_path_format(), hs_import_path*(), hs_export_path(),
 * hs_spool_input()).
 */

enum hs_format {
	HS_FORMAT_UNKNOWN = 0,
	HS_FORMAT_PERF_SCRIPT,	     /* perf script text: *.data.txt, *.perf.data.txt */
	HS_FORMAT_TRACE_ZIP,	     /* perfcollect: *.trace.zip holding *.data.txt */
	HS_FORMAT_PERFVIEW_XML,	     /* *.perfView.xml */
	HS_FORMAT_PERFVIEW_XML_ZIP,  /* *.perfView.xml.zip */
	HS_FORMAT_PERFVIEW_JSON,     /* *.perfView.json */
	HS_FORMAT_PERFVIEW_JSON_ZIP, /* *.perfView.json.zip */
	HS_FORMAT_FOLDED,	     /* folded stacks: "main;f;g 42" */
	HS_FORMAT_HEAPSCOPE,	     /* heapscope's own traces: *.heapscope */
	HS_FORMAT_NETTRACE,	     /* .NET EventPipe: *.nettrace (import_nettrace.h) */
	HS_FORMAT_NETTRACE_ZIP,	     /* *.nettrace.zip */
	HS_FORMAT_GCDUMP,     /* .NET heap snapshot: *.gcdump (heapgraph/gcdump.h) */
	HS_FORMAT_PPROF,      /* pprof's gzip'd profile.proto: *.pb.gz */
	HS_FORMAT_SPEEDSCOPE, /* speedscope's JSON: *.speedscope.json */
	HS_FORMAT__COUNT
};

/*
 * A format as data: adding a format is one entry in io.c's table (and its
 * enum hs_format value). Front ends ask hs_format_has() for what a format
 * can do instead of testing ids.
 */
enum hs_format_caps {
	HS_FORMAT_WRITABLE = 1 << 0,  /* heapscope writes it (it has export_stream) */
	HS_FORMAT_HAS_HEAP = 1 << 1,  /* a heap trace: memory views, stats, heap API */
	HS_FORMAT_HAS_TIME = 1 << 2,  /* its samples carry times (folded's do not) */
	HS_FORMAT_HAS_GRAPH = 1 << 3, /* a heap snapshot graph (heapgraph/graph.h) */
};

struct hs_source_info;
struct hs_format_ops {
	enum hs_format id;
	const char *name;	     /* for --from/--to and messages */
	const char *const *suffixes; /* NULL-terminated, matched without case;
				      * the first names a zip's entry */
	const char *const *aliases;  /* other --from names, or NULL */
	unsigned caps;		     /* enum hs_format_caps, but WRITABLE */
	/* whether the first @n bytes are this format; tried in table order */
	int (*sniff)(const unsigned char *head, size_t n);
	/*
	 * The importer, as source @source (an index into sources()) asked
	 * for by @name (NULL: the default; "events:PROVIDER/EVENT" carries a
	 * detail past its family's name): a stream, or a seekable file (a
	 * pipe is copied to a temporary file first); one of the two.
	 */
	int (*import_stream)(FILE *f, size_t source, const char *name,
			     struct hs_stack_source *out, struct hs_diag *diag);
	int (*import_file)(const char *path, size_t source, const char *name,
			   struct hs_stack_source *out, struct hs_diag *diag);
	/* The exporter (NULL: read only); for a zip, of its one entry. */
	int (*export_stream)(const struct hs_stack_source *src, FILE *f);
	enum hs_format zip_of; /* a zip of one entry of this format, or UNKNOWN */
	/* The sources it offers, the default first (NULL: one source). */
	size_t (*sources)(const struct hs_source_info **list);
	/* Those a file at @path offers, when they depend on the file (NULL: all). */
	size_t (*path_sources)(const char *path, struct hs_source_info *out);
	/*
	 * Whether the default source is the first that path_sources() finds
	 * (a heap trace recorded with --no-heap defaults to cpu) rather than
	 * the list's first; a format whose listing reads the whole file
	 * leaves it 0, so that importing reads the file once.
	 */
	int default_by_file;
	/*
	 * The index of source @name when its names are more than the list
	 * (NULL: the list's names only): 0 and *@index, or -ENOENT.
	 */
	int (*source_index)(const char *name, size_t *index);
};
/* The operations of @fmt (static, borrowed), or NULL for HS_FORMAT_UNKNOWN. */
const struct hs_format_ops *hs_format_ops(enum hs_format fmt);
/* Whether @fmt has every capability of @caps (enum hs_format_caps). */
int hs_format_has(enum hs_format fmt, unsigned caps);

/* Short name for --from/--to and messages ("perf-script", "xml", ...). */
const char *hs_format_name(enum hs_format fmt);
/* Parse a --from/--to name; HS_FORMAT_UNKNOWN if none matches. */
enum hs_format hs_format_parse(const char *name);
/* Format implied by a file name's extension, or HS_FORMAT_UNKNOWN. */
enum hs_format hs_format_from_path(const char *path);
/*
 * Guess from the first @n bytes of content, or HS_FORMAT_UNKNOWN: the
 * heapscope magic, a zip told by its first entry's name (.xml, .json,
 * anything else a trace zip), '<' XML, '{' JSON, then perf script's sample
 * header (or perf.data's magic: its reader says to run `perf script`) and
 * folded "a;b;c 42" lines (each format's sniff, in table order).
 */
enum hs_format hs_format_sniff(const unsigned char *head, size_t n);
/* Whether heapscope can write @fmt (PerfView XML/JSON, zipped or not, folded). */
int hs_format_writable(enum hs_format fmt);

/*
 * Sources: one file may hold several stack sources, as PerfView's file
 * tree offers several views of one trace (a perf script file's CPU and
 * Thread Time views). Each format names the sources it offers; the first
 * is the default. A format with one way of reading offers none.
 */
struct hs_source_info {
	const char *name;    /* for --source: "cpu", "thread-time", ... */
	const char *summary; /* one line for listings */
};
/* The sources of @fmt in *@list (static, borrowed); returns how many (0: no choice). */
size_t hs_format_sources(enum hs_format fmt, const struct hs_source_info **list);
/*
 * The sources the file at @path (of format @fmt, known) offers, into @out
 * (room for HS_SOURCES_MAX; names borrowed from static tables), the
 * default first: hs_format_sources(), except that a heapscope trace offers
 * cpu and wall only when it was recorded with them, and no memory view
 * when it was recorded with --no-heap. Returns how many (0: no choice).
 */
#define HS_SOURCES_MAX 16
size_t hs_path_sources(const char *path, enum hs_format fmt, struct hs_source_info *out);
/*
 * The format of @path as hs_import_path() would read it: @fmt if known,
 * else by extension, else by content. The file must open (it is closed
 * again); for "-" with no known format standard input is read, so it
 * cannot be imported afterwards. Returns 0 with *@out set, or a negative
 * errno with @diag filled.
 */
HS_MUST_CHECK int hs_path_format(const char *path, enum hs_format fmt,
				 enum hs_format *out, struct hs_diag *diag);

/*
 * Copy what is left of @f (standard input, a pipe) into an anonymous
 * temporary file, for readers that need a file they can open by name
 * ("/proc/self/fd/N"). Returns the copy (owned: fclose() it) or NULL with
 * @diag filled.
 */
FILE *hs_spool_input(FILE *f, struct hs_diag *diag);

/*
 * Import @path ("-" = standard input) in format @fmt; HS_FORMAT_UNKNOWN
 * means: by extension, failing that by content. @out must be initialised.
 * Standard input and pipes are never seeked: the bytes read to guess the
 * format are replayed; a zip arriving on a pipe is copied to an anonymous
 * temporary file first. A .perfView.xml.zip / .json.zip must hold exactly
 * one entry; a .trace.zip goes to hs_import_trace_zip().
 */
HS_MUST_CHECK int hs_import_path(const char *path, enum hs_format fmt,
				 struct hs_stack_source *out, struct hs_diag *diag);
/*
 * The same, reading the source named @source (NULL: the format's
 * default). A name the file's format does not offer is -ENOENT with @diag
 * saying which names it offers.
 */
HS_MUST_CHECK int hs_import_path_source(const char *path, enum hs_format fmt,
					const char *source, struct hs_stack_source *out,
					struct hs_diag *diag);
/*
 * Export @src to @path ("-" = standard output) in @fmt, HS_FORMAT_UNKNOWN
 * meaning by extension (standard output needs a format). Zip formats write
 * one entry named after the file minus ".zip". An existing file is
 * overwritten (the CLI asks first); a file left half-written by an error
 * is removed. Returns 0, -EINVAL (no format), -ENOTSUP (a format heapscope
 * only reads), -EIO or -ENOMEM, with @diag filled.
 */
HS_MUST_CHECK int hs_export_path(const struct hs_stack_source *src, const char *path,
				 enum hs_format fmt, struct hs_diag *diag);

/*
 * The two sources of perf script text (docs/perf.md):
 *   HS_PERF_CPU          CPU samples, each weighted by the time to the next
 *                        CPU sample on the same CPU (PerfView's CPU view)
 *   HS_PERF_THREAD_TIME  every thread's time: CPU samples with a CPU_TIME
 *                        leaf, and the periods it spent switched out
 *                        (sched_switch) as samples of their duration on the
 *                        switch-out stack with a BLOCKED_TIME leaf, READIED_BY
 *                        frames naming the waker (sched_waking, or
 *                        sched_wakeup in older recordings) above it
 */
enum hs_perf_view {
	HS_PERF_CPU,
	HS_PERF_THREAD_TIME,
};

/* The streaming importers, one per format. */
HS_MUST_CHECK int hs_import_perf_script(FILE *f, struct hs_stack_source *out,
					struct hs_diag *diag);
/* The same as @view. */
HS_MUST_CHECK int hs_import_perf_script_view(FILE *f, enum hs_perf_view view,
					     struct hs_stack_source *out,
					     struct hs_diag *diag);
/*
 * perfcollect's .trace.zip: the first entry ending in ".data.txt" read as
 * perf script (as @view), with the zip's perf-<pid>.map /
 * perfinfo-<pid>.map side files used for frames perf left unknown.
 */
HS_MUST_CHECK int hs_import_trace_zip(const char *path, struct hs_stack_source *out,
				      struct hs_diag *diag);
HS_MUST_CHECK int hs_import_trace_zip_view(const char *path, enum hs_perf_view view,
					   struct hs_stack_source *out,
					   struct hs_diag *diag);
HS_MUST_CHECK int hs_import_perfview_xml(FILE *f, struct hs_stack_source *out,
					 struct hs_diag *diag);
HS_MUST_CHECK int hs_import_perfview_json(FILE *f, struct hs_stack_source *out,
					  struct hs_diag *diag);
HS_MUST_CHECK int hs_import_folded(FILE *f, struct hs_stack_source *out,
				   struct hs_diag *diag);
/*
 * A .heapscope trace (docs/trace-format.md) as its default memory view,
 * "alloc" (analysis/memviews.h): one sample per heap allocation, metric =
 * bytes, count = 1 (with --sample-bytes N both are scaled by
 * 1 / (1 - exp(-size/N))), stacks rooted in "Process COMM (PID)" then
 * "Thread (TID) NAME", the frames from the outermost in ("module!function"
 * when the trace is symbolized, else "MODULE!0xOFFSET"), then the
 * allocation function. A cut-off trace imports what it holds.
 */
HS_MUST_CHECK int hs_import_heapscope(const char *path, struct hs_stack_source *out,
				      struct hs_diag *diag);
/*
 * The same as memory view @view (an enum hs_memview_kind, the index of a
 * name in hs_format_sources(HS_FORMAT_HEAPSCOPE)) with its default options.
 */
HS_MUST_CHECK int hs_import_heapscope_source(const char *path, size_t view,
					     struct hs_stack_source *out,
					     struct hs_diag *diag);
struct hs_trace;
/* The same from a trace already loaded (format/trace_reader.h); @out is
 * released and initialised first. */
HS_MUST_CHECK int hs_trace_to_source(const struct hs_trace *t,
				     struct hs_stack_source *out, struct hs_diag *diag);

/*
 * The exporters (formats in docs/formats.md). Return 0, -ENOMEM, or -EIO
 * when writing failed. @src and @f are borrowed.
 *   folded: one line per distinct stack, root first, with the summed
 *           metric; samples on ROOT itself as a line " N" (empty stack).
 *   xml:    PerfView's advanced form; times in ms with up to 6 decimals
 *           (exact ns), Metric/Count only when not 1, the defaults as a
 *           StackWindowGuiState.
 *   json:   PerfView's simple JSON form plus Count, MetricUnit and the
 *           defaults.
 *   pprof:  gzip'd profile.proto (export_pprof.c): one sample per stack,
 *           the count and the metric as two sample types named by the
 *           source's view_name.
 */
HS_MUST_CHECK int hs_export_folded(const struct hs_stack_source *src, FILE *f);
HS_MUST_CHECK int hs_export_perfview_xml(const struct hs_stack_source *src, FILE *f);
HS_MUST_CHECK int hs_export_perfview_json(const struct hs_stack_source *src, FILE *f);
HS_MUST_CHECK int hs_export_pprof(const struct hs_stack_source *src, FILE *f);
/*
 * speedscope's file format, its "sampled" profile (export.c): one sample
 * per distinct stack weighted by its summed metric, frames shared.
 */
HS_MUST_CHECK int hs_export_speedscope(const struct hs_stack_source *src, FILE *f);

/*
 * pprof's reader (import_pprof.c): whether @head starts a gzip stream, and
 * the importer (the default sample type as the metric).
 */
int hs_pprof_sniff(const unsigned char *head, size_t n);
HS_MUST_CHECK int hs_import_pprof_stream(FILE *f, size_t source, const char *name,
					 struct hs_stack_source *out,
					 struct hs_diag *diag);
/*
 * speedscope's reader (import_speedscope.c): whether @head is JSON naming
 * speedscope's schema, and the importer (sampled and evented profiles).
 */
int hs_speedscope_sniff(const unsigned char *head, size_t n);
HS_MUST_CHECK int hs_import_speedscope_stream(FILE *f, size_t source, const char *name,
					      struct hs_stack_source *out,
					      struct hs_diag *diag);
#endif
