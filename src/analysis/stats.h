#ifndef HS_ANALYSIS_STATS_H
#define HS_ANALYSIS_STATS_H
#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "analysis/totals.h"
#include "format/trace_reader.h"
#include "model/stack_source.h"

/*
 * stats - the numbers of a heap trace at a glance (`heapscope stats`, and
 * the HTTP API): totals, the peak, leaks, temporary allocations, a size
 * histogram, the top call sites by bytes, by count, by leaked bytes and
 * at the peak, and the heap-in-use and RSS timelines.
 *
 * Every number follows the memory views (memviews.h): "allocations" is
 * the alloc view's count, "leaked" the leaks view's total after its
 * default ExcPats (what those drop is reported as "suppressed"),
 * "temporary" the temporary view's. The peak, mappings, samples, RSS
 * and the size histogram are the trace's totals (totals.h), as `run`'s
 * summary and `dump --summary` give them; the peak view's blocks are
 * those live at that peak. A call site
 * is a name of ByName's Exc column with the default FoldPats (the
 * allocator charged to its callers): the function that called the
 * allocator. Sampled traces give estimates (scaled counts and bytes).
 *
 * Ownership: the trace is borrowed; struct hs_heap_stats owns its lists
 * and timelines (hs_heap_stats_release()).
 */

/* A call site of a top list: its display name (owned) and its cost. */
struct hs_top_site {
	char *name;
	double bytes, count;
};

struct hs_top_list {
	struct hs_top_site *site;
	size_t nr;
};

/* A timeline: @n points (time in ms from the start, value in bytes). */
struct hs_timeline {
	double *ms, *bytes;
	size_t n;
};

struct hs_heap_stats {
	double duration_ms;
	double allocations, frees, reallocs;
	double bytes_allocated;
	double allocations_per_second;
	double peak_heap_bytes, peak_heap_ms; /* peak_heap_ms < 0: no heap */
	double peak_rss_bytes, peak_rss_ms;   /* peak_rss_ms < 0: no RSS sample */
	double leaked_bytes, leaked_blocks;
	double suppressed_bytes, suppressed_blocks;
	double temporary_allocations, temporary_bytes;
	double unmatched_frees;
	double mmaps, munmaps;
	/* CPU and wall-clock samples (run --cpu, --wall) and the ms they cover */
	double cpu_samples, cpu_ms, wall_samples;
	double wall_cpu_ms, wall_blocked_ms, wall_ready_ms;
	size_t threads;
	uint64_t events; /* the events read (a realloc that freed is two) */
	uint64_t lost;	 /* events the collector could not record (footer) */
	int sampled, symbolized, cut_off;
	uint64_t sample_bytes;
	struct hs_size_bucket hist[65]; /* by bit length of the size */
	struct hs_top_list by_bytes, by_count, by_leaked, at_peak;
	struct hs_timeline heap, rss;
};

struct hs_stats_opts {
	size_t top;    /* entries per top list (0: 10) */
	size_t points; /* timeline points at most (0: 200) */
	/*
	 * When not NULL (hs_source_init()'d by the caller, who releases them):
	 * given the alloc and leaks views the stats came from, for the stats of
	 * several traces read as one (stats_chain.h).
	 */
	struct hs_stack_source *keep_alloc, *keep_leaks;
};

/*
 * Compute the stats of @t into @s (initialised here). Returns 0, -ENOMEM
 * or -E2BIG with @diag filled; @s is then released.
 */
int hs_heap_stats_compute(const struct hs_trace *t, const struct hs_stats_opts *o,
			  struct hs_heap_stats *s, struct hs_diag *diag);
/*
 * The same from the trace at @path in one streamed pass (memory bounded
 * by the live blocks, the stacks and the clock ticks; the trace is
 * loaded instead when its events are not in time order). @t gets the
 * trace as read, without its events (initialised here; the caller
 * releases it with hs_trace_release()). Returns 0 or a negative errno
 * with @diag filled; @t and @s are then released.
 */
int hs_heap_stats_compute_path(const char *path, const struct hs_stats_opts *o,
			       struct hs_trace *t, struct hs_heap_stats *s,
			       struct hs_diag *diag);
void hs_heap_stats_release(struct hs_heap_stats *s);

/*
 * What leaked, as stats counts it: the leaks view's blocks after its
 * default FoldPats and ExcPats (the known exit-time allocations of libc
 * and libstdc++, which the leaks view puts under HS_EXIT_TIME_FRAME), and
 * what those ExcPats left out. Estimates for a sampled trace.
 */
struct hs_leak_totals {
	double bytes, blocks;
	double suppressed_bytes, suppressed_blocks;
};

/*
 * The leak totals of @src, a leaks view (hs_memview_build() with
 * HS_MEM_LEAKS; borrowed), into @out; with @by_leaked, also its top @n
 * call sites by bytes (initialised here, owned by the caller: released
 * with the stats, or hs_heap_top_release()). Returns 0, -ENOMEM or -E2BIG
 * with @diag filled.
 */
int hs_heap_leaks(const struct hs_stack_source *src, size_t n,
		  struct hs_top_list *by_leaked, struct hs_leak_totals *out,
		  struct hs_diag *diag);
/*
 * The same for the whole trace at @path, streamed when it can be
 * (hs_memview_build_path()), without a top list: `heapscope run`'s
 * summary. Returns what hs_memview_build_path() and hs_heap_leaks() return.
 */
int hs_heap_leaks_path(const char *path, struct hs_leak_totals *out,
		       struct hs_diag *diag);
void hs_heap_top_release(struct hs_top_list *l);

/*
 * The top @n call sites of @src (a memory view; borrowed) by bytes into
 * @by_bytes and, when not NULL, by count into @by_count, as the stats'
 * lists are made (initialised here, the caller's: hs_heap_top_release()).
 * Returns 0, -ENOMEM or -E2BIG with @diag filled.
 */
int hs_heap_top(const struct hs_stack_source *src, size_t n, struct hs_top_list *by_bytes,
		struct hs_top_list *by_count, struct hs_diag *diag);
/*
 * `heapscope run`'s summary in one streamed pass over the trace at
 * @path: its totals (as hs_heap_totals_path() gives them) into @tot and
 * its leaks (as hs_heap_leaks_path()) into @leaks, the totals reading
 * the live blocks from the view. @t gets the trace as read (initialised
 * here; the caller releases it with hs_trace_release()). Returns 0 or a
 * negative errno with @diag filled; @t is then released.
 */
int hs_heap_summary_path(const char *path, struct hs_trace *t, struct hs_heap_totals *tot,
			 struct hs_leak_totals *leaks, struct hs_diag *diag);

/*
 * hs_heap_summary_path()'s pass in steps, for a caller that streams or
 * feeds the trace itself (run's pass beside the symbolizer):
 * hs_heap_summary_begin() makes the pass over @t (the trace being read;
 * borrowed) with its totals into @tot and fills @sink with it; the
 * caller streams @t through @sink (hs_trace_stream(), hs_trace_feed());
 * hs_heap_summary_finish() then gives the leaks into @leaks. When not
 * NULL, @first_batch(@arg) is called once, before the pass takes its
 * first events. When a stream returned -EAGAIN (not in time order), the
 * caller frees the pass and hs_heap_summary_load() loads the trace at
 * @path into @t and feeds a new pass with it (@t is released if that
 * fails). hs_heap_summary_free() frees a pass (NULL is a no-op). Each
 * returns 0 or a negative errno (-ENOMEM, the reader's) with @diag
 * filled; a failed begin or load leaves *@pass NULL.
 */
struct hs_heap_summary_pass;
int hs_heap_summary_begin(const struct hs_trace *t, struct hs_heap_totals *tot,
			  void (*first_batch)(void *arg), void *arg,
			  struct hs_heap_summary_pass **pass, struct hs_trace_sink *sink);
int hs_heap_summary_load(const char *path, struct hs_trace *t, struct hs_heap_totals *tot,
			 struct hs_heap_summary_pass **pass, struct hs_diag *diag);
int hs_heap_summary_finish(struct hs_heap_summary_pass *pass,
			   struct hs_leak_totals *leaks, struct hs_diag *diag);
void hs_heap_summary_free(struct hs_heap_summary_pass *pass);

/*
 * The heap in use (live bytes; estimates for a sampled trace) and the RSS
 * over time, each in at most @points points: the trace's time is cut in
 * @points equal buckets and each point is a bucket's start and the
 * highest value within it, so that no peak is lost. Either output may be
 * NULL. Returns 0 or -ENOMEM (the timelines are then empty).
 */
int hs_heap_timelines(const struct hs_trace *t, size_t points, struct hs_timeline *heap,
		      struct hs_timeline *rss);
/*
 * The same from what a pass kept instead of the trace: the heap curve of
 * its totals' pass (totals.h; its owner's) and its @nr_rss RSS records
 * (at @rss_time ns, of @rss_bytes bytes), over @duration_ns. For a
 * front end that streams the trace once and cuts the curve into any
 * number of points later (analysis/heap_history.h).
 */
int hs_heap_curve_timelines(const struct hs_heap_curve *curve, const int64_t *rss_time,
			    const uint64_t *rss_bytes, size_t nr_rss, int64_t duration_ns,
			    size_t points, struct hs_timeline *heap,
			    struct hs_timeline *rss);
void hs_timeline_release(struct hs_timeline *tl);

/*
 * JSON (docs/json-api.md): the whole stats object, or a timeline as an
 * array of [ms, bytes] pairs. New references; NULL when out of memory.
 */
struct json_t;
struct json_t *hs_heap_stats_json(const struct hs_heap_stats *s);
struct json_t *hs_timeline_json(const struct hs_timeline *tl);
#endif
