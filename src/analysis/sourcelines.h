#ifndef HS_ANALYSIS_SOURCELINES_H
#define HS_ANALYSIS_SOURCELINES_H
#include <stddef.h>
#include <stdint.h>
#include "analysis/filter.h"
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * sourcelines - PerfView's Goto Source: a function's source lines with
 * the inclusive and exclusive cost of each, the source files' text and
 * their JSON. The one implementation behind `heapscope source` and the
 * GUI's Source tab (/api/source), which therefore give the same numbers.
 *
 * The source must carry locations (model/stack_source.h: sources made
 * from symbolized traces do). A frame "is" the function when its full
 * name, its display name or the part after '!' equals the name asked
 * for, a trailing " (inline)" or " [clone ...]" ignored: the function's
 * own frames, its inlined copies and GCC's clones. When no frame is, a
 * frame is the function when the name's qualified name (a C++ name without return type,
 * parameters, qualifiers and its own template arguments: "ns::fill" for
 * "std::vector<long>* ns::fill<long>(int)") is the frame's, or its last
 * components ("fill"), in the module given before a '!' if any; those
 * frames must all be one function (clones "[clone .cold]" and inlined
 * copies count as it). For each sample that passes the filter (time window,
 * IncPats, ExcPats, FoldPats, GroupPats):
 *   - each distinct line at which one of the function's frames sits on
 *     the sample's stack gets the sample's cost as inclusive cost (once
 *     per sample and line, as ByName counts a name once per sample);
 *   - when the filtered stack's leaf is the function (its callees folded
 *     away, as the default FoldPats of heap views fold the allocator),
 *     the line of its innermost frame gets the cost as exclusive cost.
 * A frame without a location counts in the totals and under line 0.
 *
 * Ownership: the source is borrowed; a result owns its strings and arrays
 * (hs_source_lines_release()).
 */

struct hs_line_cost {
	uint32_t line; /* 1-based; 0: frames without a location */
	double inc, inc_count, exc, exc_count;
};

struct hs_source_file {
	char *path;		    /* owned; as the debug information names it */
	struct hs_line_cost *lines; /* sorted by line */
	size_t nr;
	double inc; /* the most inclusive cost of a line */
};

struct hs_source_lines {
	char **names; /* owned: the display names that matched */
	size_t nr_names;
	struct hs_source_file *files; /* by decreasing cost; line 0 in a file
				       * with a NULL path */
	size_t nr_files;
	double inc, inc_count, exc, exc_count; /* the function's totals */
	double total;			       /* all samples that passed the filter */
};

/*
 * Compute the lines of @function over the samples the filter result @f
 * keeps (@f->in is the source; @f is borrowed, e.g. a call tree's). Returns
 * 0; -ENOENT when no frame is the function; -EINVAL when @function is
 * ambiguous (its qualified name is that of several functions: @diag names
 * them); -ENODATA when the source has no locations; -ENOMEM; each with
 * @diag filled. On error @out is left released.
 */
int hs_source_lines_filtered(const struct hs_filtered *f, const char *function,
			     struct hs_source_lines *out, struct hs_diag *diag);

/*
 * The name forms `source`, --focus and --drill accept for a frame named
 * @full. hs_function_is(): @want is the frame's full name, its display
 * name (no directory) or its function (no module), a trailing
 * " (inline)" or " [clone ...]" ignored on either side.
 * hs_function_named(): @want is the frame's function by its qualified
 * name: its last components ("fill", "ns::fill" for
 * "std::vector<long>* ns::fill<long>(int)"), with template arguments
 * only when @want gives them, a "MODULE!" in @want matching the frame's.
 */
int hs_function_is(const char *full, const char *want);
int hs_function_named(const char *full, const char *want);

/*
 * Compute the lines of @function in @src with the filter @p. Returns 0;
 * -ENOENT when no frame is the function; -ENODATA when the source has no
 * locations; -EINVAL for a bad pattern or an ambiguous @function; -ENOMEM;
 * each with @diag filled. On error @out is left released.
 */
int hs_source_lines_build(const struct hs_stack_source *src,
			  const struct hs_filter_params *p, const char *function,
			  struct hs_source_lines *out, struct hs_diag *diag);
void hs_source_lines_release(struct hs_source_lines *sl);

/* The text of a source file, split in lines (owned, without '\n'). */
struct hs_source_text {
	char *path; /* owned: the file that was read */
	char *data;
	char **line; /* line[i] is line i + 1 */
	size_t nr;
};

/* The most bytes `heapscope source` reads of a source file. */
#define HS_SOURCE_TEXT_MAX ((size_t)64 << 20)

/*
 * Read source file @path: as it is, else under each of @dirs (in order)
 * by its path's trailing parts, longest first (DIR/a/b/c.c, DIR/b/c.c,
 * DIR/c.c for /x/a/b/c.c). Only regular files are read (a FIFO or a
 * device is not even waited for); files over @max_bytes are refused.
 * Returns 0, -ENOENT when none was found, -EFBIG, -ENOMEM or -errno.
 */
int hs_source_text_load(const char *path, const char *const *dirs, size_t nr_dirs,
			size_t max_bytes, struct hs_source_text *out);
void hs_source_text_release(struct hs_source_text *t);

/* hs_source_lines_json(): each file read gets "text", all its lines */
#define HS_SOURCE_JSON_WHOLE_TEXT 1

/*
 * JSON (docs/json-api.md): the function's totals and its files' costed
 * lines, with each line's text when @texts (may be NULL) gives it
 * (@texts[i] for files[i], NULL when it was not read); @flags is 0 or
 * HS_SOURCE_JSON_WHOLE_TEXT. Text that is not UTF-8 gets U+FFFD for its
 * bad bytes. A new reference, or NULL when out of memory.
 */
struct json_t;
struct json_t *hs_source_lines_json(const struct hs_source_lines *sl,
				    const struct hs_source_text *const *texts,
				    unsigned flags);
#endif
