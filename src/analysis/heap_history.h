#ifndef HS_ANALYSIS_HEAP_HISTORY_H
#define HS_ANALYSIS_HEAP_HISTORY_H
#include <stddef.h>
#include <stdint.h>
#include "analysis/stats.h"
#include "analysis/totals.h"
#include "common/diag.h"

/*
 * heap_history - a heap trace's heap in use and RSS over time, kept
 * instead of the trace by a front end that draws them again and again
 * (the GUI server's timeline, one per trace): the heap curve of a totals
 * pass (totals.h: one point per clock tick that changed the heap, its
 * highest and last value) and the RSS records, so its size is bounded by
 * the trace's length in ticks and RSS records, not by its events. It is
 * made in one streamed pass over the file (the live blocks are all that
 * pass holds besides it), and cut into any number of points later: the
 * same timelines hs_heap_timelines() gives for the loaded trace and
 * `stats` for the file.
 *
 * Ownership: struct hs_heap_history owns its arrays; release it with
 * hs_heap_history_release() (also fine on a zeroed one).
 */
struct hs_heap_history {
	struct hs_heap_curve heap; /* heap in use per clock tick (estimates
				    * for a sampled trace) */
	int64_t *rss_time;	   /* ns from the start */
	uint64_t *rss_bytes;
	size_t nr_rss;
	int64_t duration_ns; /* the trace's (the time of its last record) */
};

/*
 * The history of the heap trace at @path into @h (initialised here), in
 * one streamed pass (hs_trace_stream(); the trace is loaded instead, and
 * released, when its events are not in time order). @stop, when not
 * NULL, is asked before each batch of events whether to give up (a front
 * end that quits while it reads): then -ECANCELED. Returns 0 or a
 * negative errno with @diag filled; @h is then empty.
 */
int hs_heap_history_path(const char *path, struct hs_heap_history *h,
			 int (*stop)(void *ctx), void *stop_ctx, struct hs_diag *diag);
/*
 * @h's heap in use and RSS, each in at most @points points, as
 * hs_heap_timelines() cuts them (either output may be NULL). Returns 0 or
 * -ENOMEM (the timelines are then empty). @h is only read: several
 * threads may cut one history at once.
 */
int hs_heap_history_timelines(const struct hs_heap_history *h, size_t points,
			      struct hs_timeline *heap, struct hs_timeline *rss);
void hs_heap_history_release(struct hs_heap_history *h);
#endif
