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
#endif
