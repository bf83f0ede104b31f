#ifndef HS_ANALYSIS_WRAPPERS_H
#define HS_ANALYSIS_WRAPPERS_H
#include "common/diag.h"
#include "common/log.h"
#include "model/stack_source.h"

/*
 * wrappers - allocation wrappers found in a source's call graph, so that
 * the heap views fold them as they fold the allocator (git's xmalloc and
 * do_xmalloc, gcc's xmalloc, redis's zmalloc): ByName then names the
 * functions that call them.
 *
 * Over every stack of @src (not only its samples' stacks), a frame is a
 * wrapper when
 * - it is no stack's leaf (it has no exclusive cost of its own),
 * - it calls exactly one function, which is an allocation function (a
 *   frame matched by @alloc_pats, the heap views' FoldPats) or a wrapper,
 * - and it is called from at least two functions, or from one wrapper.
 * So a user's function that allocates from one place for one caller stays
 * (it is the answer), and so does one that allocates through two
 * functions (a wrapper makes one call). Inlined copies are frames of
 * their own and are judged alike.
 *
 * Ownership: nothing of @src is kept; the text returned is owned.
 */

/* At most this many wrappers are named (the first in frame order). */
#define HS_WRAPPERS_MAX 64

/*
 * The wrappers of @src as FoldPats entries ("@!function$", one regular
 * expression per wrapper, ';'-separated) in *@fold (hs_free), or NULL when
 * there are none. Returns 0, -EINVAL for a bad @alloc_pats (message in
 * @diag) or -ENOMEM.
 */
HS_MUST_CHECK int hs_wrappers_find(const struct hs_stack_source *src,
				   const char *alloc_pats, char **fold,
				   struct hs_diag *diag);

/*
 * The same from the calls themselves, for a caller that walks the paths
 * of a call graph without interning them as stacks (the heap views'
 * heap_fold(), over every node of a trace): each call from frame @from
 * to frame @to of the frame table that hs_wrappers_graph_find() is then
 * given, as many times as it comes (the answer depends only on which
 * calls and leaves there are), and each frame that ends a path. A frame
 * of the table that no call names is in the graph all the same.
 *
 * Ownership: the graph owns its arrays (hs_wrappers_graph_release());
 * the frame table is borrowed.
 */
struct hs_wrappers_graph {
	uint8_t *flags;
	uint32_t *callee, *caller; /* the first seen, HS_NO_FRAME: none */
	size_t nr, alloc;	   /* frames up to the highest named, room */
};
#define HS_WRAPPERS_GRAPH_INIT                                                           \
	{                                                                                \
		0                                                                        \
	}

/* A call from @from to @to: 0 or -ENOMEM (the graph is unchanged then). */
HS_MUST_CHECK int hs_wrappers_graph_call(struct hs_wrappers_graph *g, uint32_t from,
					 uint32_t to);
/* Frame @frame ends a path (it is a leaf): 0 or -ENOMEM. */
HS_MUST_CHECK int hs_wrappers_graph_leaf(struct hs_wrappers_graph *g, uint32_t frame);
/*
 * The wrappers of graph @g, whose frames are those of @frames (every
 * frame @g names is one of them), as hs_wrappers_find() gives them.
 * Returns 0, -EINVAL or -ENOMEM as it does; @g is spent (release it).
 */
HS_MUST_CHECK int hs_wrappers_graph_find(struct hs_wrappers_graph *g,
					 const struct hs_strtab *frames,
					 const char *alloc_pats, char **fold,
					 struct hs_diag *diag);
void hs_wrappers_graph_release(struct hs_wrappers_graph *g);
#endif
