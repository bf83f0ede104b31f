#ifndef HS_ANALYSIS_HEAP_HISTORY_H
#define HS_ANALYSIS_HEAP_HISTORY_H
#include <stddef.h>
#include <stdint.h>
#include "analysis/memviews.h"
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
 * The history of the heap trace at @path into @h, and its view @o into
 * @out (both initialised here), from one streamed pass with the two
 * consumers: what a front end reads as it opens a trace (its default
 * source, and the heap timeline it draws first) for one read of the file
 * instead of two. The same numbers as hs_heap_history_path() and
 * hs_memview_build_path(). Returns 0 or a negative errno with @diag
 * filled; @h is then empty (@out is the caller's to release either way).
 */
int hs_heap_history_path_view(const char *path, const struct hs_memview_opts *o,
			      struct hs_stack_source *out, struct hs_heap_history *h,
			      struct hs_diag *diag);
/*
 * View @o of the heap trace at @path into @out (initialised here; the
 * caller's to release, also on error), as hs_memview_build_path() gives
 * it, for a front end that reads it beside its requests: @pace, when not
 * NULL, is called before each batch of events and may wait meanwhile
 * (work of lower priority than the requests); nonzero gives up
 * (-ECANCELED). With @h, the history of the same file (NULL: none), the
 * peak view of the whole trace feeds the view the events only up to the
 * end of the clock tick in which the heap was first at its highest (the
 * later ones cannot change which blocks were live then; the file is
 * still read to its end for the stacks), and all of them again should its
 * peak not be the history's. Returns 0 or a negative errno with @diag
 * filled.
 */
int hs_heap_history_view(const char *path, const struct hs_heap_history *h,
			 const struct hs_memview_opts *o, struct hs_stack_source *out,
			 int (*pace)(void *ctx), void *pace_ctx, struct hs_diag *diag);
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
