#ifndef HS_FORMAT_TRACE_TIES_H
#define HS_FORMAT_TRACE_TIES_H
#include <stddef.h>
#include <stdint.h>
#include "format/trace_reader.h"
#include "common/log.h"

/*
 * trace_ties - the order of the events of one clock tick. The collector
 * stamps events with a clock of limited resolution, so events of several
 * threads often share a time and their file order is not their real
 * order. Where that matters (one address freed and allocated by several
 * threads in one tick), hs_order_ties() puts the address's events in the
 * order that alternates allocation and free, keeping each thread's own
 * order. hs_trace_load() and hs_trace_stream() both use it.
 *
 * Memory: struct hs_tie_work is the caller's, zero-initialised, kept from
 * tick to tick and grown as needed (hs_malloc); hs_tie_work_release()
 * frees it. Not thread-safe.
 */
struct tie;
struct seen;
/*
 * hs_order_ties()'s memory, kept from tick to tick and grown as needed
 * (hs_malloc; hs_tie_work_release() frees it).
 */
struct hs_tie_work {
	struct tie *ties; /* a tick's events of shared addresses */
	size_t alloc_ties;
	struct seen *seen; /* a tick's addresses */
	size_t alloc_seen;
	uint32_t seen_gen; /* the entries of this tick: seen[].gen */
	/* one address's events (order_run()), room for @cap of them */
	struct hs_trace_event *run; /* in file order */
	struct tie *by_thread;	    /* (thread, index in run), sorted */
	size_t *group;		    /* a thread's events: by_thread[group[g] ..
				     * group[g + 1]) */
	size_t *list;		    /* groups by kind; the fallback: each
				     * group's next event in by_thread */
	size_t *heap;		    /* the fallback's two heaps of groups */
	size_t *order;		    /* the result: order[k] goes k-th */
	size_t cap;
};

void hs_tie_work_release(struct hs_tie_work *w);

/*
 * Order the @n events of one tick, @grp (in file order), where several
 * threads' events of one address share it; @live(@ctx, addr) says
 * whether the block at an address was live before the tick. Returns 1
 * when events moved, 0 when not, or -ENOMEM.
 */
HS_MUST_CHECK
int hs_order_ties(struct hs_tie_work *w, struct hs_trace_event *grp, size_t n,
		  int (*live)(void *ctx, uint64_t addr), void *ctx);
#endif
