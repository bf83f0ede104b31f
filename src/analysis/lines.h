#ifndef HS_ANALYSIS_LINES_H
#define HS_ANALYSIS_LINES_H
#include <stddef.h>
#include <stdint.h>
#include "analysis/calltree.h"

/*
 * lines - the cost of a function per source line (PerfView's Goto Source
 * with per-line cost), from the source locations of a symbolized source
 * (model/stack_source.h: each stack's leaf frame has the line it was
 * running).
 *
 * For the frames whose display name is @name, over the samples that pass
 * a call tree's filter (prorated by its time window): a line's inclusive
 * cost counts every sample whose stack runs that line of the function
 * (once per sample, also under recursion), its exclusive cost the samples
 * whose leaf after the filter is the function (so with what FoldPats
 * folded into it; Fold% aside), on the line of its innermost occurrence.
 * A frame without a location counts on a line with no file (file NULL,
 * line 0).
 *
 * Ownership: the result owns its array; file names are borrowed from the
 * call tree's input source. Release with hs_lines_release().
 */

struct hs_line_cost {
	const char *file;	/* borrowed; NULL: no location */
	uint32_t line;
	double exc, exc_count, inc, inc_count;
};

struct hs_lines {
	struct hs_line_cost *line;	/* sorted by file, then line */
	size_t nr;
	double inc, inc_count; /* the function's total (inclusive, once per sample) */
	size_t frames;			/* frames of that name in the source */
	int has_locations;		/* the source has locations at all */
};

/*
 * The lines of @name (a display name, as in a view's rows) over @ct's
 * samples into @out (initialised here). Returns 0 or -ENOMEM (then @out
 * is released); a name no frame has gives no lines.
 */
int hs_lines_compute(const struct hs_calltree *ct, const char *name, struct hs_lines *out);
void hs_lines_release(struct hs_lines *l);
#endif
