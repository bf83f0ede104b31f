#ifndef HS_ANALYSIS_FILTER_H
#define HS_ANALYSIS_FILTER_H
#include "common/log.h"
#include <math.h>
#include <stdint.h>
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * filter - the stack viewer's filter pipeline, perfview-semantics.md §0
 * steps 1-5: time window, GroupPats, ExcPats, FoldPats, IncPats and the
 * always-on collapse of a frame into an identical caller. (Fold% works on
 * the call tree and belongs to the views.)
 *
 * The pipeline works per *stack*, not per sample: every input stack is
 * mapped once to a processed output stack (or dropped), so a recompute over
 * 10M samples costs one table lookup per sample. Output frames are named
 * with what the viewer shows: the short (display) name of an ungrouped
 * frame, a group's name, or "GROUP <<entry>>" for an entry group.
 *
 * Per frame (computed once per frame id, from its full name): GroupPats
 * (group.h, including the automatic group of "module!?" frames), then
 * ExcPats, FoldPats and IncPats, all matched against the grouped name: the
 * full name of an ungrouped frame, the group name of a plain group,
 * "GROUP <<short name>>" of an entry-group frame. Exclusion beats folding.
 *
 * Per stack, root to leaf:
 * - a stack below an excluded frame is excluded (its samples dropped);
 * - an entry-group frame whose processed caller is in the same group
 *   becomes that caller, so the frame entering a group shows as
 *   "GROUP <<entry>>" and the frames it calls inside the group vanish into
 *   it; leaving the group and entering it again makes a new node;
 * - a frame matching FoldPats vanishes into its caller (its cost becomes
 *   the caller's exclusive cost) and is transparent: its callee's caller
 *   is the folded frame's caller, also for entry groups. A root-most frame
 *   (no caller) is never folded; as in PerfView it then shows its
 *   ungrouped short name and matches no IncPats;
 * - a frame identical to its processed caller (same frame, same plain
 *   group, or inside the caller's entry group) merges into it;
 * - IncPats: each ';' entry must be matched by some frame that is still
 *   on the processed stack (entries are ANDed; '|' inside an entry gives
 *   OR). A sample with no stack is dropped when IncPats is not empty.
 *
 * Ownership: hs_filtered borrows the input source, which must outlive it
 * and not change; it owns everything else, unless it was made by
 * hs_filtered_borrow() (@borrowed): then it borrows its stacks, map and
 * frames from another result too. Release with hs_filtered_release().
 * @out may hold stacks that no input stack maps to (a prefix built
 * before IncPats dropped its callees).
 *
 * The time window is the only parameter that the stacks, the map and
 * the frames do not depend on: it is applied per sample, by
 * hs_filtered_sample(). So call trees that differ only in their window
 * (or in Fold%, which the call tree applies) can share one result
 * (hs_filtered_borrow(); the server caches it as an entry of its own).
 */

#define HS_DROPPED (UINT32_MAX - 1) /* map value: the sample is filtered out */

/* What an output frame stands for. */
enum hs_origin_kind {
	HS_ORIGIN_FRAME, /* an input frame, by its short name */
	HS_ORIGIN_GROUP, /* a plain group (GroupPats "->") */
	HS_ORIGIN_ENTRY, /* an entry group: "GROUP <<entry frame>>" */
};

struct hs_origin {
	uint8_t kind;	   /* enum hs_origin_kind */
	uint32_t module;   /* short module in @modules; HS_NO_MODULE when
			    * none, or when a group's frames have several */
	uint32_t entry_at; /* HS_ORIGIN_ENTRY: offset of the entry frame's
			    * name in the output name */
};
#define HS_NO_MODULE UINT32_MAX

struct hs_filter_params {
	const char *group;	 /* GroupPats text; NULL or "" for none */
	const char *fold;	 /* FoldPats */
	const char *inc;	 /* IncPats: every ';' entry must match a frame */
	const char *exc;	 /* ExcPats: any match drops the sample */
	double start_ms, end_ms; /* time window; NAN (or infinite) = open */
	/*
	 * Allow the identity result (hs_filtered.identity) when no pattern
	 * changes the stacks. Callers that read @map, @folded or @out's
	 * stacks directly leave it 0; those that use the hs_filtered_*()
	 * accessors below may set it.
	 */
	int borrow_stacks;
};
#define HS_FILTER_PARAMS_INIT                                                            \
	{                                                                                \
		.start_ms = NAN, .end_ms = NAN                                           \
	}

struct hs_filtered {
	const struct hs_stack_source *in; /* borrowed */
	struct hs_stack_source out;	  /* processed frames and stacks; no samples */
	/*
	 * Set (only with borrow_stacks) when the output stacks are the input
	 * stacks with their frames renamed: no pattern, automatic group or
	 * collapse changed any, and no two frames share a shown name. Then
	 * output stack s is input stack s, @map and @folded are NULL, @out
	 * holds the output frames but no stacks, and @frame_out renames the
	 * input frames (input frame -> output frame, HS_NO_FRAME if unused).
	 */
	int identity;
	uint32_t *frame_out;
	uint32_t *map;		  /* input stack -> output stack or HS_DROPPED */
	uint8_t *folded;	  /* input stack -> 1 if its leaf's cost reached
				   * the output leaf through a FoldPats fold
				   * (PerfView's "number of folded frames" > 0:
				   * set for A->F->A with F folded, too) */
	struct hs_origin *origin; /* output frame -> what it stands for */
	size_t alloc_origin;
	struct hs_strtab modules; /* short module names of @origin */
	size_t nr_groups;	  /* distinct group names seen */
	uint32_t root_map;	  /* where a sample with no stack goes */
	int borrowed;		  /* made by hs_filtered_borrow(): owns nothing */
	int has_window;		  /* a Start or End bound is set */
	int64_t start_ns, end_ns; /* window incl. PerfView's 0.0006 ms slack */
};

/*
 * Run the pipeline over @in with @p. Returns 0; -EINVAL for a bad pattern
 * or one that hit its match limits on some frame name (the message, naming
 * the pattern and the list it is in, is in @diag); -ENOMEM; -E2BIG when
 * the output outgrows the model's caps. On error @out is left released.
 */
HS_MUST_CHECK int hs_filter_apply(const struct hs_stack_source *in,
				  const struct hs_filter_params *p,
				  struct hs_filtered *out, struct hs_diag *diag);
void hs_filtered_release(struct hs_filtered *f);

/*
 * @f as @from (a result of hs_filter_apply() with the same patterns as
 * @p) but with @p's time window: the same stacks, map and frames,
 * borrowed from @from, which must outlive @f and not change. The answer
 * of every accessor is what hs_filter_apply(in, p) would give. Releasing
 * @f frees none of @from's memory.
 */
void hs_filtered_borrow(struct hs_filtered *f, const struct hs_filtered *from,
			const struct hs_filter_params *p);

/*
 * What output frame @frame of @f stands for: whether it is a frame or a
 * group; its short module (model/frame_name.h; a plain group's when all
 * its frames share one, an entry group's the entry frame's), borrowed, or
 * NULL; for an entry group, where the entry frame's name starts in
 * the output frame's name (*@entry_at, else 0). Returns the kind.
 */
enum hs_origin_kind hs_filtered_origin(const struct hs_filtered *f, uint32_t frame,
				       const char **module, size_t *entry_at);

/* Output stacks of @f, and the leaf frame and caller of output stack @s. */
static inline size_t hs_filtered_nr_stacks(const struct hs_filtered *f)
{
	return f->identity ? f->in->nr_stacks : f->out.nr_stacks;
}
static inline uint32_t hs_filtered_stack_frame(const struct hs_filtered *f, uint32_t s)
{
	return f->identity ? f->frame_out[f->in->stack_frame[s]] : f->out.stack_frame[s];
}
static inline uint32_t hs_filtered_stack_caller(const struct hs_filtered *f, uint32_t s)
{
	return f->identity ? f->in->stack_caller[s] : f->out.stack_caller[s];
}
/* Where input stack @s goes: an output stack or HS_DROPPED. */
static inline uint32_t hs_filtered_map(const struct hs_filtered *f, uint32_t s)
{
	return f->identity ? s : f->map[s];
}
/* Whether input stack @s's leaf cost arrived through a FoldPats fold. */
static inline int hs_filtered_folded(const struct hs_filtered *f, uint32_t s)
{
	return f->identity ? 0 : f->folded[s];
}

/*
 * Sample @i of the input as the views see it: its output stack, and its
 * metric and count after the time window (prorated for HS_METRIC_TIME
 * sources, §0 step 1). Returns 0 when the sample is filtered out.
 */
int hs_filtered_sample(const struct hs_filtered *f, size_t i, uint32_t *stack,
		       double *metric, double *count);
#endif
