#ifndef HS_ANALYSIS_CALLTREE_H
#define HS_ANALYSIS_CALLTREE_H
#include "common/log.h"
#include <stddef.h>
#include <stdint.h>
#include "analysis/filter.h"
#include "analysis/when.h"
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * calltree - PerfView's call tree over a filtered stack source, Fold% and
 * the by-name sums (perfview-semantics.md §3, §5, §6).
 *
 * struct hs_tree is any tree of named nodes with costs: the call tree, and
 * the Callers and Callees trees of a focus name (views.h). Node 0 is the
 * root; every other node's parent has a smaller id, so a loop over
 * increasing ids meets callers before callees. Node names come from a
 * stack source's frame table (@names).
 *
 * struct hs_calltree runs the filter over an input source and builds the
 * call tree from its output: the filter's output stacks are path-unique
 * nodes already (an interned (frame, caller) pair with display names), so
 * node k >= 1 is output stack k - 1 and node 0 is ROOT. When the filter
 * or the time window drop the samples of a quarter of the stacks or more,
 * only the stacks some kept sample goes through get a node, in the same
 * order (@node_of). One pass over the
 * samples charges each one to its node; inclusive sums follow by walking
 * the nodes in decreasing id. Fold% then folds small subtrees into their
 * parents. Memory is about 100 bytes per node; When histograms
 * are not kept per node but computed for the rows a view shows
 * (hs_calltree_when()).
 *
 * When no pattern changes the stacks (no GroupPats, automatic group,
 * ExcPats, FoldPats, IncPats or collapse applies, and the shown names
 * are distinct), the filter keeps no output stacks and no map
 * (hs_filtered.identity): node k >= 1 is then input stack k - 1 itself,
 * read through the hs_filtered_*() accessors, which every reader of
 * @f's stacks uses. That saves the filter's output stacks, their index
 * and the map (about 40 bytes a stack) and the time to build them.
 *
 * Ownership: a calltree owns its filter result (or, built with
 * hs_calltree_build_on(), borrows it) and its arrays, and borrows the
 * input source, which must outlive it and not change. Names returned are
 * borrowed from the tree. Release with hs_calltree_release().
 */

#define HS_NO_NODE UINT32_MAX

/* What lands on a node itself (its exclusive cost). */
struct hs_node_exc {
	double metric, count;
	double fold, fold_count; /* the part that arrived by FoldPats or Fold% */
	int64_t first, last;	 /* ns; INT64_MAX and INT64_MIN when empty */
};

/* A node's subtree (its inclusive cost). */
struct hs_node_inc {
	double metric, count;
	int64_t first, last; /* ns; INT64_MAX and INT64_MIN when empty */
};

enum hs_node_flags {
	HS_NODE_PRESENT = 1 << 0, /* some sample is in its subtree */
	HS_NODE_ALIVE = 1 << 1,	  /* present and not removed by Fold% */
	HS_NODE_TOP = 1 << 2,	  /* no ancestor has the same name */
};

struct hs_tree {
	const struct hs_stack_source *names; /* borrowed: frame names */
	size_t nr;			     /* nodes; 0 is the root */
	uint32_t *frame;  /* node -> frame in @names; HS_NO_FRAME = ROOT */
	uint32_t *parent; /* node -> parent (smaller id); HS_NO_NODE at 0 */
	struct hs_node_exc *exc;
	struct hs_node_inc *inc;
	uint8_t *flags;	     /* enum hs_node_flags */
	uint32_t *child_off; /* nr + 1 offsets into @child */
	uint32_t *child;     /* alive children, sorted |Inc| desc, First asc */
};

/* Allocate @nr empty nodes (costs zero, times empty). 0 or -ENOMEM. */
HS_MUST_CHECK int hs_tree_alloc(struct hs_tree *t, size_t nr,
				const struct hs_stack_source *names);
void hs_tree_release(struct hs_tree *t);
/*
 * Set every node's inclusive cost from the exclusive costs, mark present
 * nodes PRESENT | ALIVE and link and sort their children. Returns 0 or
 * -ENOMEM.
 */
HS_MUST_CHECK int hs_tree_finish(struct hs_tree *t);
/* Name of node @n (borrowed); "ROOT" for a root without a frame. */
const char *hs_tree_name(const struct hs_tree *t, uint32_t n);
static inline size_t hs_tree_nr_children(const struct hs_tree *t, uint32_t n)
{
	return t->child_off[n + 1] - t->child_off[n];
}
static inline const uint32_t *hs_tree_children(const struct hs_tree *t, uint32_t n)
{
	return t->child + t->child_off[n];
}
/* Empty exclusive / inclusive costs. */
void hs_node_exc_clear(struct hs_node_exc *e);
void hs_node_inc_clear(struct hs_node_inc *c);
/* Add @add (scaled by @w) into @e; times are merged. */
void hs_node_exc_add(struct hs_node_exc *e, const struct hs_node_exc *add, double w);

/*
 * Per-node When histograms are kept when they take at most 64 MB or at
 * most 8 bytes per sample of the input (as much as one sample column).
 */
#define HS_NODE_HIST_BUDGET(nr_samples)                                                  \
	((size_t)64 << 20 > 8 * (size_t)(nr_samples) ? (size_t)64 << 20                  \
						     : 8 * (size_t)(nr_samples))

/* Parameters of a recompute: the filter and Fold%. */
struct hs_view_params {
	struct hs_filter_params filter;
	double fold_pct; /* Fold%; NAN or <= 0 for none */
	/*
	 * The When range where the window is open: NAN = from the source's
	 * samples (when.h). A source made by Drill Into or Flatten keeps
	 * the range of the view it came from (hs_calltree_when_bounds()).
	 */
	double when_start_ms, when_end_ms;
	int node_hist; /* per-node When histograms: 0 = within the
			* budget, 1 = always, -1 = never */
	int all_nodes; /* 1: a node for every output stack, even those
			* without a sample (hs_calltree.node_of NULL) */
};
#define HS_VIEW_PARAMS_INIT                                                              \
	{                                                                                \
		.filter = HS_FILTER_PARAMS_INIT, .fold_pct = NAN, .when_start_ms = NAN,  \
		.when_end_ms = NAN                                                       \
	}

struct hs_calltree {
	struct hs_tree t;		  /* node k >= 1: see @node_of */
	struct hs_filtered f;		  /* the filter's result (owned) */
	const struct hs_stack_source *in; /* borrowed input */
	struct hs_when_range range;
	double *hist; /* NULL, or HS_WHEN_BUCKETS * t.nr: each node's own
		       * samples (before Fold%), bucket-major:
		       * hist[b * t.nr + node] */
	double root_hist[HS_WHEN_BUCKETS]; /* all samples: the nodes' sums
					    * with @hist, else added in
					    * sample order */
	uint32_t *rep; /* node -> the alive node its samples are charged to */
	/*
	 * NULL: node k >= 1 is output stack k - 1. Otherwise output stack
	 * -> its node, HS_NO_NODE for a stack no sample that passes the
	 * filter and the window goes through: such stacks get no node when
	 * they are many (an IncPats, ExcPats or a time window dropped
	 * their samples), numbered in the stacks' order without them.
	 * Read through hs_calltree_stack_node().
	 */
	uint32_t *node_of;
	double fold_pct;       /* as applied; NAN when none */
	double fold_threshold; /* |Inc| below which nodes folded; 0 when none */
	size_t nr_samples;     /* samples that passed the filter */
	size_t nr_folded;      /* nodes Fold% removed (counting subtrees once) */
};

/* The node of output stack @s (HS_NO_STACK: ROOT), or HS_NO_NODE (none). */
static inline uint32_t hs_calltree_stack_node(const struct hs_calltree *ct, uint32_t s)
{
	if (s == HS_NO_STACK)
		return 0;
	return ct->node_of ? ct->node_of[s] : s + 1;
}

/*
 * Filter @in with @p and build its call tree with Fold%. Returns 0;
 * -EINVAL for a bad pattern (the message, naming the pattern, in @diag);
 * -ENOMEM. On error @ct is left released.
 */
HS_MUST_CHECK int hs_calltree_build(struct hs_calltree *ct,
				    const struct hs_stack_source *in,
				    const struct hs_view_params *p, struct hs_diag *diag);
void hs_calltree_release(struct hs_calltree *ct);

/*
 * The filter result that the call trees of @in with @p's patterns share,
 * whatever their time window and Fold%: hs_filter_apply() with
 * borrow_stacks and no window. Returns as hs_filter_apply(); release
 * @f with hs_filtered_release() after every tree built on it.
 */
HS_MUST_CHECK int hs_calltree_filter(const struct hs_stack_source *in,
				     const struct hs_view_params *p,
				     struct hs_filtered *f, struct hs_diag *diag);
/*
 * As hs_calltree_build() of @shared->in, on @shared: a result of
 * hs_calltree_filter() with @p's patterns (its window and Fold% are
 * @p's own). @ct borrows @shared, which must outlive it and not change;
 * the tree is the one hs_calltree_build() makes, node for node. 0 or
 * -ENOMEM (@ct left released).
 */
HS_MUST_CHECK int hs_calltree_build_on(struct hs_calltree *ct,
				       const struct hs_filtered *shared,
				       const struct hs_view_params *p);
/*
 * As hs_calltree_build_on(), calling @room(@arg, BYTES) once the number
 * of nodes is known and before the tree's arrays are allocated, with
 * about what they will take (hs_calltree_memory() of the result): the
 * server's cache makes room for it.
 */
HS_MUST_CHECK int hs_calltree_build_on_room(struct hs_calltree *ct,
					    const struct hs_filtered *shared,
					    const struct hs_view_params *p,
					    void (*room)(void *arg, size_t bytes),
					    void *arg);
/* About the memory @ct's own arrays take (not its filter result's). */
size_t hs_calltree_memory(const struct hs_calltree *ct);

/*
 * The Start and End (ms) of @ct's When range, to pass on as
 * when_start_ms/when_end_ms to a view of a source derived from it.
 */
void hs_calltree_when_bounds(const struct hs_calltree *ct, double *start_ms,
			     double *end_ms);

/* Percent basis: |ROOT inclusive| (0 when nothing passed the filter). */
double hs_calltree_basis(const struct hs_calltree *ct);

/*
 * Output frame id of the name @name in @ct, HS_NO_FRAME for "ROOT";
 * -ENOENT when no frame has that name.
 */
HS_MUST_CHECK int hs_calltree_find_name(const struct hs_calltree *ct, const char *name,
					uint32_t *frame);

/*
 * By-name sums over the alive nodes (§6): exclusive summed over nodes,
 * inclusive counted once per sample (a node adds its inclusive only when
 * no ancestor has the same name). @rows gets one entry per output frame
 * plus one for ROOT at index nr_frames; entries with no node have
 * inc.first == INT64_MAX. Returns 0 or -ENOMEM; @*rows_exc and @*rows_inc
 * are owned by the caller (hs_free()).
 */
HS_MUST_CHECK int hs_calltree_byname(const struct hs_calltree *ct,
				     struct hs_node_exc **rows_exc,
				     struct hs_node_inc **rows_inc);

/*
 * When histograms for a view. The view chooses "slots" (histograms to
 * fill; one per row, or more when rows are sums of slots) and says where
 * the samples of each call-tree node go: with @slot_of, all of a node's
 * samples to slot_of[n] (or nowhere: HS_NO_NODE); otherwise the samples
 * charged to node n (ct->rep[] == n) go, @w times their metric, to each
 * (slot, w) in ent[off[n] .. off[n+1]). When @slot_parent is set, slots
 * form a forest listed parents first and each slot's histogram is then
 * added to its parent's, so a node needs only name its nearest slot.
 *
 * Only buckets @b0 .. @b0 + @nb - 1 are filled, so that a view of many
 * slots can fill its histograms a block of buckets at a time: @hist
 * (@nb * nr_slots doubles) is bucket-major, hist[(b - b0) * nr_slots +
 * slot]; samples usually come in time order, so one bucket's row of
 * slots is what stays in the cache. Each bucket's values are the same
 * whatever the block. @root_hist, when not NULL, gets the histogram of
 * all samples in every bucket (ct->root_hist). Costs one pass over the
 * nodes' histograms when the tree kept them (ct->hist), else one over
 * the samples (a block of fewer than all buckets skips the samples
 * outside it before looking them up). Returns 0.
 */
struct hs_when_ent {
	uint32_t slot;
	double w;
};
struct hs_when_link {
	uint32_t row, up; /* up: the slot above, HS_NO_NODE at a root */
};
struct hs_when_map {
	size_t nr_slots;
	uint32_t *slot_of; /* NULL, or node (any, rep or not) -> slot */
	uint32_t *off;	   /* ct->t.nr + 1 offsets into @ent */
	struct hs_when_ent *ent;
	const uint32_t *slot_parent; /* NULL or slot -> parent slot, HS_NO_NODE */
	/*
	 * NULL, or slot -> its row and the slot above it (with @slot_of;
	 * @slot_parent unused): then @hist has @nr_rows per bucket instead
	 * of a histogram per slot, and a sample of slot s goes straight to
	 * the row of s and of each slot above it (no row twice on one
	 * chain: ByName's slots). One pass however many slots, where slot
	 * histograms would take one per block of buckets.
	 */
	const struct hs_when_link *chain;
	size_t nr_rows;
};
int hs_calltree_when(const struct hs_calltree *ct, const struct hs_when_map *m,
		     unsigned b0, unsigned nb, double *hist, double *root_hist);
#endif
