#ifndef HS_ANALYSIS_VIEW_PART_H
#define HS_ANALYSIS_VIEW_PART_H
#include "common/log.h"
#include <stddef.h>
#include <stdint.h>
#include "analysis/calltree.h"
#include "analysis/pattern.h"
#include "analysis/views.h"

/*
 * view_part - the rows of a ByName or CallTree view made only for the
 * rows an answer shows (the server's /api/tree and /api/rows), instead
 * of the whole view at once. A call tree of millions of nodes has a
 * CallTree row per node (about 150 bytes each) whose When column takes a
 * pass over the samples per block of buckets; ByName's When column has a
 * slot per topmost node of a name. Those were most of the time and of the
 * memory of an Update that shows 200 of them.
 *
 * struct hs_view_parts is what stays between answers:
 *   - ByName: every row (a row per name: few), the When column left empty;
 *   - CallTree: no rows, but their numbering: the row of each alive node
 *     in the full view (depth first from ROOT, children in the tree's
 *     order, as hs_view_build() emits them) and back, and each row's
 *     depth: 12 bytes a row.
 * Its @v has the full view's kind, summary, basis and number of rows
 * (nr_total; nr_rows is 0 for CallTree).
 *
 * hs_view_part() makes a view whose rows are rows @ids of the full view
 * (hs_view_build() without limit or depth), each as it is there: name,
 * costs, First, Last, Fold, depth, number of children, origin, module,
 * and When computed for these rows alone (one pass over the samples, or
 * over the nodes' histograms); a tree row's @parent is the full view's
 * row id of its parent. Its When sums are the full view's added in
 * another order, which hs_when_char()'s tolerance prints the same.
 *
 * Ownership: parts borrow @ct (which must outlive them and not change);
 * a part's row names are borrowed from @ct too, so a part must not
 * outlive its parts. Release each with its release function.
 */
struct hs_view_parts {
	const struct hs_calltree *ct; /* borrowed */
	struct hs_view v;	      /* see above */
	size_t nr_rows;		      /* rows of the full view */
	uint32_t *node_of_row;	      /* CallTree: row -> node */
	uint32_t *row_of_node;	      /* CallTree: node -> row; HS_NO_NODE: none */
	uint32_t *depth;	      /* CallTree: row -> depth */
};

/*
 * Parts of view @kind (HS_VIEW_BYNAME or HS_VIEW_CALLTREE) of @ct into
 * @p. Returns 0, -EINVAL for another kind, or -ENOMEM (@p left
 * released).
 */
HS_MUST_CHECK int hs_view_parts_build(struct hs_view_parts *p,
				      const struct hs_calltree *ct,
				      enum hs_view_kind kind);
void hs_view_parts_release(struct hs_view_parts *p);
/* About the memory @p holds. */
size_t hs_view_parts_memory(const struct hs_view_parts *p);

/* Row @r's parent row (HS_NO_NODE for a root or a ByName row); @r < nr_rows. */
uint32_t hs_view_parts_parent(const struct hs_view_parts *p, uint32_t r);
/* Row @r's number of children (0 for ByName). */
size_t hs_view_parts_nr_children(const struct hs_view_parts *p, uint32_t r);
/*
 * Row @r's children, in the view's order, into @out (room for
 * hs_view_parts_nr_children() ids). Returns how many.
 */
size_t hs_view_parts_children(const struct hs_view_parts *p, uint32_t r, uint32_t *out);

/*
 * The rows @ids (@n row ids below nr_rows, in any order, repeats
 * allowed) into @part, in that order; @no_when leaves When empty.
 * @part->nr_total is the full view's number of rows. Returns 0, -EINVAL
 * for an id out of range, or -ENOMEM (@part left released). Release
 * with hs_view_release().
 */
HS_MUST_CHECK int hs_view_part(const struct hs_view_parts *p, const uint32_t *ids,
			       size_t n, int no_when, struct hs_view *part);

/*
 * Find (view_order.h's hs_view_find()) in the view's own order, the row
 * ids: the next row after row @from (HS_FIND_START: from the first, or
 * the last when @backward) whose displayed name @re matches, wrapping
 * around. Returns 1 with its id in *@at, 0 when none matches, -EINVAL
 * when the pattern hit its match limits (message in @diag) or -ENOMEM.
 */
HS_MUST_CHECK int hs_view_parts_find(const struct hs_view_parts *p, struct hs_pattern *re,
				     size_t from, int backward, size_t *at,
				     struct hs_diag *diag);
#endif
