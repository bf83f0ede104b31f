#ifndef HS_ANALYSIS_MEMVIEWS_H
#define HS_ANALYSIS_MEMVIEWS_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "common/log.h"
#include "format/trace_reader.h"
#include "model/stack_source.h"

/*
 * memviews - the stack sources a heap trace offers (design.md, "Memory
 * views"), the native analog of PerfView's GC heap and OS heap views:
 *
 *   alloc      every allocation: +bytes at its time (frees ignored)
 *   net        +bytes at each allocation, -bytes at its free, charged to
 *              the allocation's stack; a realloc is a free and an
 *              allocation; frees of blocks never seen allocated are
 *              ignored. A time range shows the net growth within it.
 *   leaks      blocks allocated inside the range and still live at its
 *              end ("allocated inside, freed outside"), at their
 *              allocation time
 *   peak       the blocks live at the moment heap in use was highest
 *              (within the range; the heap as the range starts is a
 *              candidate, the only one when no event falls in it), at
 *              their allocation times
 *   temporary  allocations freed before their thread made another one
 *   mmap       anonymous mappings: +bytes at mmap, -bytes at munmap of
 *              (any part of) them, charged to the mapping's stack
 *   cpu        the CPU samples of `heapscope run --cpu`: each is the CPU
 *              time (ms) its thread used since its previous sample, over
 *              [time - duration, time]; TimeMetric, so a range prorates
 *              them and When shows % of one CPU
 *   wall       the wall-clock samples of `--wall`: each thread's time,
 *              with a leaf pseudo-frame CPU_TIME, BLOCKED_TIME or
 *              READIED_TIME (waiting for cpu) (a Thread Time view without
 *              kernel events); TimeMetric, in ms
 *
 * The sample views (cpu, wall) have stacks "Process", "Thread", the
 * frames from the outermost in (the leaf is the instruction the thread
 * was at), then for wall the CPU_TIME, BLOCKED_TIME or READIED_TIME frame; no size
 * classes or LargeAlloc, no default folds. The heap views below do not
 * apply to them.
 *
 * Metric: bytes; count: blocks. With a sampled trace (--sample-bytes N)
 * each recorded block stands for 1 / (1 - exp(-size/N)) blocks of its
 * size, which makes every sum an unbiased estimate. The events of one
 * stack at one time (a clock tick) make one sample: their bytes and
 * counts added up (a net view's allocation and free in the same tick add
 * up to 0).
 *
 * Stacks, root first: "Process COMM (PID)", "Thread (TID) NAME",
 * in the leaks view "KnownExitTimeAlloc" for a known exit-time
 * allocation (below), "LargeAlloc" for blocks of at least the large
 * threshold, (optionally) the size class "Alloc < 2^k" written as a
 * number ("Alloc < 128"), the trace's frames from the outermost in, and
 * the allocation function as the leaf ("LIBC!malloc", "LIBC!calloc", ...
 * "LIBC!mmap", with LIBC the trace's C library path, or the bare name
 * without one). A symbolized
 * trace gives "module!function" frames (its inlined functions as frames
 * of their own, named "module!function (inline)") each with its
 * file:line as the stack's location (model/stack_source.h); otherwise
 * frames are "module!0xOFFSET". "module!?" is an address in a module
 * without a symbol for it, "?!?" one in no module, "BROKEN" a stack cut
 * short.
 *
 * Defaults: every view's source carries FoldPats HS_PRESET_HEAP_FOLD
 * (presets.h: the allocator's entry points charged to their callers) and
 * the leaks view also ExcPats HS_PRESET_LEAK_SUPPRESS, as saved defaults
 * a front end uses unless told otherwise. The leaks view puts the known
 * exit-time allocations of libc, its dynamic linker and libstdc++ (those
 * whose allocating frames match HS_PRESET_EXIT_TIME_ALLOCS; memviews.c
 * says which frames) under a pseudo-frame HS_EXIT_TIME_FRAME
 * ("KnownExitTimeAlloc") after the thread's, which those ExcPats leave
 * out.
 *
 * The range: for leaks and peak the source itself depends on the range
 * (a block freed after End is live at End), so it is built from it; the
 * other views ignore it (their samples are filtered by time as usual).
 * Times are ms from the start of the trace, as the filter's.
 *
 * Ownership: the trace is borrowed; @out is initialised here and owned by
 * the caller (hs_source_release()), also on error.
 */

enum hs_memview_kind {
	HS_MEM_ALLOC,
	HS_MEM_NET,
	HS_MEM_LEAKS,
	HS_MEM_PEAK,
	HS_MEM_TEMPORARY,
	HS_MEM_MMAP,
	HS_MEM_CPU,
	HS_MEM_WALL,
	HS_MEM__COUNT
};

#define HS_LARGE_ALLOC_DEFAULT ((uint64_t)128 << 10)

struct hs_memview_opts {
	enum hs_memview_kind kind;
	double start_ms, end_ms;  /* the range; NAN: open */
	uint64_t large_threshold; /* "LargeAlloc" from this size; 0: never */
	int size_classes;	  /* add "Alloc < 2^k" frames */
	/* no allocation wrappers in the default FoldPats (analysis/wrappers.h) */
	int keep_wrappers;
	/*
	 * keep " (inline)" on an inlined copy of a function that also has
	 * out-of-line frames (by default they are one frame, as heaptrack's)
	 */
	int split_inline;
};
#define HS_MEMVIEW_OPTS_INIT                                                             \
	{                                                                                \
		.kind = HS_MEM_ALLOC, .start_ms = NAN, .end_ms = NAN,                    \
		.large_threshold = HS_LARGE_ALLOC_DEFAULT                                \
	}

/* What a build found out besides the samples. */
struct hs_memview_info {
	int uses_range;	   /* the range chose the blocks (leaks, peak) */
	int64_t peak_ns;   /* peak: when heap in use was highest (-1: empty) */
	double peak_bytes; /* peak: the heap in use then */
	int symbolized;	   /* the trace has a symbol section */
	/* net: frees of live blocks (weighted), frees of blocks never seen
	 * allocated, and blocks replaced by another at their address */
	double frees;
	size_t unmatched_frees, missed_frees;
	int cut_off;			       /* the trace was cut off (t->cut_off) */
	size_t events;			       /* events it holds */
	uint64_t lost;			       /* events the collector lost */
	struct hs_trace_sym_damage sym_damage; /* t->sym_damage */
};

/* "alloc", "net", ...; NULL for an unknown kind. */
const char *hs_memview_name(enum hs_memview_kind kind);
/* A one-line description of the view, for lists. */
const char *hs_memview_description(enum hs_memview_kind kind);
/* 0 and *@kind, or -EINVAL for an unknown name. */
HS_MUST_CHECK int hs_memview_parse(const char *name, enum hs_memview_kind *kind);
/* Whether @t has anything for view @kind (mmap: the trace has mappings). */
int hs_memview_offered(const struct hs_trace *t, enum hs_memview_kind kind);

/*
 * Build the source of view @o->kind of @t into @out (initialised here).
 * @info may be NULL. Returns 0, -ENOMEM or -E2BIG (too many frames or
 * stacks), with @diag filled.
 */
HS_MUST_CHECK int hs_memview_build(const struct hs_trace *t,
				   const struct hs_memview_opts *o,
				   struct hs_stack_source *out,
				   struct hs_memview_info *info, struct hs_diag *diag);

/*
 * The same from the trace at @path, streaming its events when they are
 * in time order in the file (every view: memory bounded by the live
 * blocks and the stacks instead of reading the events in; else it loads
 * the trace).
 * Returns what hs_trace_load() and hs_memview_build() return.
 */
HS_MUST_CHECK int hs_memview_build_path(const char *path, const struct hs_memview_opts *o,
					struct hs_stack_source *out,
					struct hs_memview_info *info,
					struct hs_diag *diag);

/*
 * A view as one consumer of a pass over the events in time order (the
 * engine every view runs on; stats feeds several views and the totals
 * from one pass): hs_memview_pass_new(), hs_memview_pass_events() for
 * every event (hs_memview_pass_live() answers a struct hs_trace_sink's
 * live), then hs_memview_pass_finish() once the trace is read (its
 * nodes and symbols known), and hs_memview_pass_free(). It holds the
 * live blocks, the stack keys and one sample per stack key and clock
 * tick, never an array per event. @t and @o are borrowed for the pass's
 * life (@t may be a stream's, filled while the pass runs); @out is
 * initialised here and owned by the caller, as for hs_memview_build().
 */
struct hs_memview_pass;
HS_MUST_CHECK int hs_memview_pass_new(const struct hs_trace *t,
				      const struct hs_memview_opts *o,
				      struct hs_stack_source *out,
				      struct hs_memview_info *info,
				      struct hs_memview_pass **pass);
/*
 * A peak view without a range (@o) that also gives the alloc, leaks and
 * temporary views of the whole trace into @alloc, @leaks and @temporary
 * (initialised here, the caller's; NULL: not wanted), from the same
 * stack keys and live blocks: what stats reads, at the cost of about one
 * view. @peak NULL: the peak view itself is not wanted (run's summary,
 * which has the totals' peak), so the pass keeps no blocks of the peak's
 * moment, and the other views get only the stacks their samples have
 * (the same samples and sums; fewer stacks and frames).
 */
HS_MUST_CHECK int
hs_memview_pass_new_heap(const struct hs_trace *t, const struct hs_memview_opts *o,
			 struct hs_stack_source *peak, struct hs_stack_source *alloc,
			 struct hs_stack_source *leaks, struct hs_stack_source *temporary,
			 struct hs_memview_pass **pass);
/*
 * A pass of hs_memview_pass_new_heap() given no @temporary also sums the
 * temporary view (call before its first event): what stats prints of
 * it, without the view's stacks (a quarter of the stacks stats' pass
 * makes). After hs_memview_pass_finish(), hs_memview_pass_temporary_totals()
 * gives the bytes and allocations that hs_source_totals() of that view
 * gives, bit for bit (the same samples, summed in the same order).
 */
void hs_memview_pass_sum_temporary(struct hs_memview_pass *pass);
void hs_memview_pass_temporary_totals(const struct hs_memview_pass *pass, double *bytes,
				      double *count);
/*
 * One event to a pass of hs_memview_pass_new_heap(), saying what it did
 * to the live blocks, for a consumer that needs them too (the totals,
 * hs_heap_totals_pass_event_known()): 1 with the size of the block it
 * took out of them (the free of a live block, or an allocation over one)
 * in *@gone_size, 0 when none, or a negative errno.
 */
HS_MUST_CHECK int hs_memview_pass_event(struct hs_memview_pass *pass,
					const struct hs_trace_event *e,
					uint64_t *gone_size);
/*
 * hs_memview_pass_event() of @n events at @ev: event i's answer in
 * @gone[i] (1 or 0) and, when 1, @gone_size[i] (the arrays are the
 * caller's, @n long). What reading spends its time on: an unsampled
 * trace's events go through one loop. 0 or a negative errno.
 */
HS_MUST_CHECK int hs_memview_pass_events_gone(struct hs_memview_pass *pass,
					      const struct hs_trace_event *ev, size_t n,
					      uint8_t *gone, uint64_t *gone_size);
/*
 * A hint that an event at @addr comes soon (a few events ahead of
 * hs_memview_pass_event()): the pass starts reading its live block.
 */
void hs_memview_pass_prefetch(const struct hs_memview_pass *pass, uint64_t addr);
/* @ctx is the pass. 0, -ENOMEM or -E2BIG. */
HS_MUST_CHECK int hs_memview_pass_events(void *ctx, const struct hs_trace_event *ev,
					 size_t n);
int hs_memview_pass_live(void *ctx, uint64_t addr);
/* Samples get their stacks. 0, -ENOMEM or -E2BIG with @diag filled. */
HS_MUST_CHECK int hs_memview_pass_finish(struct hs_memview_pass *pass,
					 struct hs_diag *diag);
/* Frees @pass (NULL is fine); @out stays the caller's. */
void hs_memview_pass_free(struct hs_memview_pass *pass);

/*
 * The sources @t offers as JSON for front ends (docs/json-api.md): an
 * array of {"name", "description", "default"}. A new reference, or NULL
 * when out of memory.
 */
struct json_t;
struct json_t *hs_memview_list_json(const struct hs_trace *t);
#endif
