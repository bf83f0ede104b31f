#ifndef HS_DOTNET_GC_STATS_H
#define HS_DOTNET_GC_STATS_H
#include <stddef.h>
#include <stdint.h>
#include "dotnet/clr_events.h"
#include "dotnet/nettrace.h"
#include "common/log.h"

/*
 * gc_stats - PerfView's GCStats from a .nettrace's GC events: one record
 * per garbage collection (when its pause started, why, which generation
 * and kind, how long the runtime took to suspend the threads, how long
 * they stayed paused, what was allocated before it, the heap before and
 * after it), rolled up per generation and summed up for the trace.
 *
 * The events are fed in time order (hs_nettrace_read() hands them so) to
 * hs_gc_stats_event(); the computer keeps one record per GC and a few
 * timestamps of state, so memory grows with the number of GCs only.
 * hs_gc_stats_finish() then derives what needs the neighbours and the
 * rollups. The heap before a GC is what its GCPerHeapHistory events say;
 * without them it is estimated from the previous GC's sizes and the
 * allocations since, as PerfView does.
 *
 * How a pause is measured (docs/dotnet.md, "GCStats"):
 * - a blocking GC pauses from its GCSuspendEEBegin to the RestartEEEnd
 *   after it; the suspension is GCSuspendEEBegin to GCSuspendEEEnd;
 * - a background GC pauses for its initial suspension and for each
 *   suspension of its own (reason SuspendForGCPrep) while it runs; the
 *   foreground GCs that run meanwhile are GCs of their own;
 * - a GC whose pause end or heap statistics never came (a cut-off trace,
 *   dropped events) stays in the list, marked incomplete, and what is
 *   unknown is NaN.
 *
 * Ownership: struct hs_gc_stats owns its records; release it with
 * hs_gc_stats_release().
 */

/* GCStart's type. */
enum hs_gc_kind {
	HS_GC_NONCONCURRENT = 0,
	HS_GC_BACKGROUND = 1,
	HS_GC_FOREGROUND = 2,
};

/* The generations of GCHeapStats, in its order. */
enum hs_gc_gen {
	HS_GC_GEN0,
	HS_GC_GEN1,
	HS_GC_GEN2,
	HS_GC_LOH,
	HS_GC_POH,
	HS_GC__NR_GENS
};

struct hs_gc_record {
	uint32_t index;	       /* 1, 2, ... in the order the GCs started */
	uint32_t number;       /* the runtime's GC count (GCStart) */
	uint32_t generation;   /* the condemned generation: 0, 1 or 2 */
	uint32_t reason;       /* GCStart's reason (hs_gc_reason_name()) */
	uint32_t kind;	       /* enum hs_gc_kind */
	double start_ms;       /* GCStart, ms after the trace's start */
	double pause_start_ms; /* when the threads began to be suspended */
	double suspend_ms;     /* how long suspending them took (NaN: unknown) */
	double pause_ms;       /* how long they stayed paused (NaN: unknown) */
	double duration_ms;    /* GCStart to GCEnd (NaN: no GCEnd) */
	uint64_t alloc_gen0;   /* bytes allocated in the small object heap since the
				  previous GC (AllocationTick) */
	uint64_t alloc_large;  /* the same for the large and pinned object heaps */
	int has_heap_stats;
	struct hs_clr_gc_heap_stats heap; /* the heap after it (GCHeapStats) */
	int complete;			  /* its pause ended and its heap stats came */
	uint32_t nr_heap_histories;	  /* GCPerHeapHistory events (one per heap) */
	uint64_t
	    size_before[HS_GC__NR_GENS]; /* their sizes before, summed over the heaps */
	/* derived by hs_gc_stats_finish() */
	double before[HS_GC__NR_GENS]; /* bytes before, per generation (estimated without
					  heap histories) */
	double survival[HS_GC__NR_GENS]; /* % of before that survived; NaN where not
					    collected */
	double peak_bytes;     /* the heap before it (the larger of before and after) */
	double after_bytes;    /* the heap after it (NaN without heap stats) */
	double promoted_bytes; /* bytes that survived it (NaN without heap stats) */
};

/* One row of "GC Rollup By Generation". */
struct hs_gc_rollup {
	uint32_t count;	  /* GCs of this generation */
	uint32_t induced; /* ... started by GC.Collect() and the like */
	double max_pause_ms, total_pause_ms, mean_pause_ms;
	double max_peak_bytes, mean_peak_bytes, mean_after_bytes;
	double total_alloc_bytes; /* allocated before them */
	double total_promoted_bytes;
};

struct hs_gc_stats {
	struct hs_gc_record *gcs; /* owned, nr of them */
	size_t nr, alloc;
	/* the summary (hs_gc_stats_finish()) */
	double duration_ms;	  /* first to last event of the trace */
	double total_alloc_bytes; /* all AllocationTick amounts */
	double total_pause_ms, max_pause_ms;
	double max_peak_bytes; /* the largest heap before or after a GC */
	double pause_percent;  /* total pause of the duration */
	size_t nr_incomplete;
	int has_alloc_ticks; /* allocated amounts are known */
	/* rollups: [0] all, [1 + g] generation g */
	struct hs_gc_rollup rollup[4];

	/* the streaming state */
	int64_t qpc_origin;    /* the trace's sync time */
	unsigned pointer_size; /* the trace's (8 until a header says) */
	double qpc_per_ms;
	int have_header, have_event;
	double first_ms, last_ms;
	uint64_t tick_small, tick_large; /* since the last GCStart */
	double suspend_begin_ms;	 /* of the tracked suspension, or NaN */
	double suspend_end_ms;		 /* NaN until its SuspendEEEnd */
	uint64_t suspend_thread;	 /* the thread that suspends */
	int suspend_for_bgc; /* it is a background GC's own (SuspendForGCPrep) */
	size_t current_bgc;  /* index + 1 of the running background GC, 0: none */
	int restart_seen_since_start; /* the last GC's pause ended */
};

void hs_gc_stats_init(struct hs_gc_stats *s);
void hs_gc_stats_release(struct hs_gc_stats *s);
/* The trace's header: time origin and units. */
void hs_gc_stats_header(struct hs_gc_stats *s, const struct hs_nettrace_header *h);
/*
 * One event, in time order. Events other than the runtime's GC events
 * only move the trace's end. Returns 0 or -ENOMEM; a GC event whose
 * payload is too short is ignored.
 */
HS_MUST_CHECK int hs_gc_stats_event(struct hs_gc_stats *s,
				    const struct hs_nettrace_event *ev);
/* After the last event: the derived fields, rollups and summary. */
void hs_gc_stats_finish(struct hs_gc_stats *s);

/*
 * The whole report as {"summary": {...}, "rollup": [...], "gcs": [...]}
 * (docs/dotnet.md; MB of 1e6 bytes, unknown numbers null), the trace
 * named @name of process @pid. A new reference, or NULL (no memory).
 */
struct json_t;
HS_MUST_CHECK
struct json_t *hs_gc_stats_json(const struct hs_gc_stats *s, const char *name,
				uint32_t pid);

/* "Induced", "AllocSmall", ...; "Reason<N>" into @buf for others. */
const char *hs_gc_reason_name(uint32_t reason, char *buf, size_t n);
/* "NonConcurrentGC", "BackgroundGC", "ForegroundGC", or "Kind<N>" into @buf. */
const char *hs_gc_kind_name(uint32_t kind, char *buf, size_t n);
/* PerfView's one-letter kind suffix of the generation column: 'N', 'B', 'F' or '?'. */
char hs_gc_kind_letter(uint32_t kind);
/* Whether @reason is an induced one (GC.Collect() and its kin). */
int hs_gc_reason_induced(uint32_t reason);
#endif
