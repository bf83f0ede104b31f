#ifndef HS_ANALYSIS_TOTALS_H
#define HS_ANALYSIS_TOTALS_H
#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "common/u64map.h"
#include "format/trace_reader.h"

/*
 * totals - a heap trace's totals in one pass over its events in time
 * order: counts, bytes, the heap's peak and when it was reached, what is
 * live at the end, frees of blocks never seen allocated, mappings, CPU
 * and wall samples, a size histogram, the highest RSS. The one place
 * they are computed: `run`'s summary and `stats` (the trace streamed,
 * in one pass with the views they need), `dump --summary` (streamed,
 * hs_heap_totals_path()) and the GUI's heap timeline (streamed,
 * heap_history.h) all read them from here, so their peak is one number.
 *
 * Counts and bytes are those of the records (of the samples, for a
 * trace made with --sample-bytes); the *_est fields and the histogram
 * are estimates for such a trace (hs_trace_weight()), the same numbers
 * as the records' for a full one. Equal-time events of several threads
 * are ordered as hs_trace_load() orders them.
 *
 * Ownership: the trace is borrowed; struct hs_heap_totals owns nothing.
 */

/* Blocks of sizes [min, max] (a power-of-two class; min = max = 0 for 0). */
struct hs_size_bucket {
	uint64_t min, max;
	double count, bytes;
};

struct hs_heap_totals {
	uint64_t events; /* every event (a realloc that freed is two) */
	uint64_t allocs, frees, reallocs, mmaps, munmaps;
	uint64_t bytes_allocated;
	uint64_t peak_heap;   /* the most bytes live at once */
	double peak_heap_est; /* the same, estimated */
	int64_t peak_ns;      /* when the estimated peak was first reached
			       * (the first event's time for an empty
			       * heap; -1: no event) */
	double reallocs_est;
	double frees_est; /* frees of live blocks, estimated */
	/* live at the end; none when the trace ended by exec (HS_END_EXEC),
	 * which freed the heap, as the leaks view says */
	uint64_t leaked_bytes, leaked_blocks;
	uint64_t unmatched_frees; /* frees of blocks not seen allocated */
	uint64_t cpu_samples, wall_samples;
	uint64_t cpu_ns; /* the CPU samples' durations */
	double cpu_ms, wall_cpu_ms, wall_blocked_ms, wall_ready_ms;
	uint64_t peak_rss;		/* the highest RSS record (0: none) */
	int64_t peak_rss_ns;		/* its time (-1: no RSS record) */
	struct hs_size_bucket hist[65]; /* allocations by bit length of the size */
};

/*
 * Heap in use over time, one point per clock tick that changed it: the
 * highest value within the tick and the value after its last event. Its
 * size is bounded by the trace's length in ticks (a millisecond each
 * when every allocation is recorded), not by its events.
 */
struct hs_heap_curve {
	int64_t *time; /* ns */
	double *max, *last;
	size_t n, alloc;
};

void hs_heap_curve_release(struct hs_heap_curve *c);

/*
 * The totals as one consumer of a pass over the events in time order,
 * for passes that feed several (stats): hs_heap_totals_pass_init(), then
 * hs_heap_totals_pass_events() for every event (a struct hs_trace_sink's
 * events; hs_heap_totals_pass_live() its live), then _finish() once the
 * trace is read (the RSS records of a stream come at its end), and
 * _release(). With @curve not NULL, the heap in use goes to it as well
 * (the pass borrows it; its owner releases it). @t is borrowed and may
 * be filled while the pass runs (a stream's).
 */
struct hs_heap_totals_pass {
	const struct hs_trace *t;
	struct hs_heap_totals *out;
	struct hs_heap_curve *curve;
	struct hs_u64map live; /* the live blocks: address -> size */
	uint64_t zero_blocks;  /* allocations at address 0, live to the end */
	uint64_t live_blocks;  /* the others live now */
	uint64_t live_bytes;
	double live_est;
};

void hs_heap_totals_pass_init(struct hs_heap_totals_pass *p, const struct hs_trace *t,
			      struct hs_heap_totals *out, struct hs_heap_curve *curve);
/* @ctx is the pass. 0 or -ENOMEM. */
int hs_heap_totals_pass_events(void *ctx, const struct hs_trace_event *ev, size_t n);
int hs_heap_totals_pass_live(void *ctx, uint64_t addr);
/*
 * Event @e to a pass whose caller keeps the live blocks (a view that has
 * them already: hs_memview_pass_event()), instead of _events(): @gone
 * says whether @e took a block of @gone_size bytes out of them (the free
 * of a live block, or an allocation over one). Address 0 is never live.
 * A pass is fed one way or the other, not both. 0 or -ENOMEM.
 */
int hs_heap_totals_pass_event_known(struct hs_heap_totals_pass *p,
				    const struct hs_trace_event *e, int gone,
				    uint64_t gone_size);
/*
 * hs_heap_totals_pass_event_known() of @n events at @ev, event i with
 * @gone[i] and @gone_size[i] (as hs_memview_pass_events_gone() gives
 * them). 0 or -ENOMEM.
 */
int hs_heap_totals_pass_events_known(struct hs_heap_totals_pass *p,
				     const struct hs_trace_event *ev, size_t n,
				     const uint8_t *gone, const uint64_t *gone_size);
void hs_heap_totals_pass_finish(struct hs_heap_totals_pass *p);
void hs_heap_totals_pass_release(struct hs_heap_totals_pass *p);

/* The totals of loaded trace @t into @out. Returns 0 or -ENOMEM. */
int hs_heap_totals(const struct hs_trace *t, struct hs_heap_totals *out);
/*
 * The totals of the trace at @path in one streamed pass
 * (hs_trace_stream(); loaded instead when its events cannot be streamed
 * in time order). @t gets the trace as read (initialised here; the
 * caller releases it with hs_trace_release()). Returns 0 or a negative
 * errno with @diag filled; @t is then released.
 */
int hs_heap_totals_path(const char *path, struct hs_trace *t, struct hs_heap_totals *out,
			struct hs_diag *diag);
#endif
