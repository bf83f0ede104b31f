#ifndef HS_ANALYSIS_DRILL_H
#define HS_ANALYSIS_DRILL_H
#include <stdint.h>
#include "analysis/calltree.h"
#include "model/stack_source.h"

/*
 * drill - new stack sources made from some of a view's samples
 * (perfview-semantics.md §11).
 *
 * Drill Into: exactly the samples under a node (inclusive) or charged to
 * it (exclusive), after the filter and Fold%, with their ORIGINAL stacks,
 * times, metrics and counts; the new source is then viewed with the same
 * GroupPats, FoldPats, Fold% and time range, and IncPats/ExcPats cleared.
 * Flatten: every sample that passed the filter, with a one-frame stack:
 * its leaf as the filter showed it (grouped, folded); viewed with the
 * patterns cleared.
 *
 * Ownership: @out is initialised here and owned by the caller
 * (hs_source_release()); the calltree is only read. The new source has
 * the input's metric kind and unit but no saved defaults.
 */

enum hs_drill_what {
	HS_DRILL_INC, /* samples in the subtree */
	HS_DRILL_EXC, /* samples charged to the node itself */
};

/* Drill into call-tree node @node of @ct. 0, -EINVAL (no such node) or -ENOMEM. */
int hs_drill_node(const struct hs_calltree *ct, uint32_t node, enum hs_drill_what what,
		  struct hs_stack_source *out);
/*
 * Drill into the by-name row of output frame @frame (HS_NO_FRAME = ROOT):
 * inclusive = samples whose stack has a node of that name, exclusive =
 * samples charged to such a node. 0 or -ENOMEM.
 */
int hs_drill_name(const struct hs_calltree *ct, uint32_t frame, enum hs_drill_what what,
		  struct hs_stack_source *out);
/*
 * Drill into the samples charged to the nodes of @ct with @pick set
 * (ct->t.nr entries; a Callers or Callees node's, hs_view_focus_pick()).
 * 0 or -ENOMEM.
 */
int hs_drill_pick(const struct hs_calltree *ct, const uint8_t *pick,
		  struct hs_stack_source *out);
/* Flatten the samples that passed @ct's filter. 0 or -ENOMEM. */
int hs_flatten(const struct hs_calltree *ct, struct hs_stack_source *out);
#endif
