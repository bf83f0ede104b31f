#ifndef HS_MODEL_STACK_SOURCE_H
#define HS_MODEL_STACK_SOURCE_H
#include <stddef.h>
#include <stdint.h>
#include "common/idindex.h"
#include "common/log.h"
#include "common/strtab.h"

/*
 * stack_source - PerfView's stack source: the one data model that every
 * importer and trace view produces and every view consumes.
 *
 * A sample is (time, metric, count, call stack). Frames are interned names
 * (full name "/path/to/module!function"; hs_frame_display() strips the
 * directory). A call stack is an interned (frame, caller stack) pair, so a
 * stack id names a whole path from the root to a leaf; HS_NO_STACK is the
 * empty stack (a sample charged to ROOT itself). Samples are columnar.
 *
 * Interning is amortised O(1): frames through a strtab, stacks through an
 * open-addressing index keyed by XXH3 of (frame, caller).
 *
 * Ownership: the source owns every array and string in it; pointers handed
 * out (names, arrays) are borrowed until hs_source_release() or the next
 * call that adds to the same table. Not thread-safe for writers; any number
 * of readers may share a source that is no longer changing.
 */

#define HS_NO_STACK UINT32_MAX /* the empty stack: ROOT */
#define HS_NO_FRAME UINT32_MAX

/*
 * The leaf pseudo-frames of a thread-time source (perfview-semantics.md
 * §9), one spelling for every source that makes them: `perf script`'s
 * thread time and the wall samples of heapscope's traces.
 */
#define HS_FRAME_CPU_TIME "CPU_TIME"
#define HS_FRAME_BLOCKED_TIME "BLOCKED_TIME"
#define HS_FRAME_READIED_TIME "READIED_TIME (waiting for cpu)"

/* How the viewer scales a source (perfview-semantics.md §0 and §5). */
enum hs_metric_kind {
	HS_METRIC_PLAIN, /* ScaleToData: bytes, counts, ... */
	HS_METRIC_TIME,	 /* TimeMetric: metric is a duration in ms */
};

/*
 * The default text-box values a file may carry (the saved GUI state of a
 * .perfView.xml); each is an owned string or NULL when absent.
 */
struct hs_source_defaults {
	char *start, *end; /* ms, as text */
	char *group, *fold, *fold_pct, *inc, *exc;
	char *notes;
	char *warning; /* saved texts that were dropped, and why: a message */
};

/*
 * A saved default number (@s borrowed, one of the texts above): its
 * value, or NAN when @s is NULL or not a finite number.
 */
double hs_source_default_number(const char *s);

struct hs_stack_source {
	struct hs_strtab frames; /* frame id -> full name */

	uint32_t *stack_frame;	/* stack id -> its leaf frame */
	uint32_t *stack_caller; /* stack id -> caller stack, HS_NO_STACK at the top */
	uint32_t *stack_depth;	/* stack id -> number of frames (>= 1) */
	size_t nr_stacks, alloc_stacks;
	struct hs_idindex stack_index; /* of the stack ids, by (frame, caller, loc) */

	int64_t *time;	 /* sample -> ns from the start of the trace */
	double *metric;	 /* sample -> its weight (bytes, ms, 1, ...) */
	double *count;	 /* sample -> how many events it stands for */
	uint32_t *stack; /* sample -> stack id or HS_NO_STACK */
	size_t nr_samples, alloc_samples;

	enum hs_metric_kind kind;
	/*
	 * The samples carry no time (a heap snapshot's; their times are 0):
	 * views leave the When column empty and keep no histograms for it.
	 */
	int untimed;
	char *metric_unit; /* owned; "ms", "bytes", "samples" or NULL */
	/*
	 * Owned; the view it was made as ("alloc", "leaks", "cpu", ... of a
	 * heapscope trace) or NULL: what the metric measures, for exporters
	 * that name it (pprof's sample types).
	 */
	char *view_name;
	struct hs_source_defaults defaults;

	/*
	 * Optional source locations (sources made from symbolized traces).
	 * A location is a (file, line) pair, numbered from 1; 0 means none.
	 * stack_loc gives the location of a stack's leaf frame: the line in
	 * that frame's function that made the call below it (or, for the
	 * innermost frame, the line being run). Stacks that differ only in
	 * their location are distinct stacks with the same frames; views,
	 * which work on frames, merge them. stack_loc is NULL when no stack
	 * has a location; importers and derived sources (Drill Into,
	 * Flatten, diff) keep none.
	 */
	struct hs_strtab files; /* file id -> path */
	uint32_t *loc_file;	/* location - 1 -> file id */
	uint32_t *loc_line;	/* location - 1 -> line (1-based) */
	size_t nr_locs, alloc_locs;
	struct hs_idindex loc_index; /* of location - 1, by (file, line) */
	uint32_t *stack_loc;	     /* stack id -> location, or NULL */
};

void hs_source_init(struct hs_stack_source *src);
/* Free everything; @src may be re-initialised afterwards. NULL-safe. */
void hs_source_release(struct hs_stack_source *src);

/*
 * Intern the frame named by @len bytes at @name (no NUL inside). Returns
 * 0 and the id in *@frame, -ENOMEM, or -E2BIG over the name cap.
 */
HS_MUST_CHECK int hs_source_intern_frame(struct hs_stack_source *src, const char *name,
					 size_t len, uint32_t *frame);
/*
 * Rename @frame to the @len bytes at @name; its stacks and samples keep
 * it. For importers that learn a pseudo-frame's final name only at the
 * end (a process's name). Returns 0, -EEXIST if another frame already
 * has that name (nothing changes), -EINVAL, -ENOMEM or -E2BIG.
 */
HS_MUST_CHECK int hs_source_rename_frame(struct hs_stack_source *src, uint32_t frame,
					 const char *name, size_t len);
/*
 * Intern the stack whose leaf is @frame called from @caller (a stack id or
 * HS_NO_STACK). Returns 0 and the id in *@stack, -ENOMEM or -E2BIG.
 */
HS_MUST_CHECK int hs_source_intern_stack(struct hs_stack_source *src, uint32_t frame,
					 uint32_t caller, uint32_t *stack);
/*
 * Append the stack (@frame, @caller) without looking it up or indexing
 * it, for a builder that knows it is new (the filter's output, see
 * analysis/filter.c). The stack index then holds only the stacks
 * interned with hs_source_intern_stack(): a source built this way must
 * not be interned into by anyone else. Returns 0 and the id in *@stack,
 * -EINVAL, -ENOMEM or -E2BIG.
 */
HS_MUST_CHECK int hs_source_append_stack(struct hs_stack_source *src, uint32_t frame,
					 uint32_t caller, uint32_t *stack);
/*
 * Hints for a batch of coming hs_source_intern_stack() calls (an
 * importer's next samples), so that their memory accesses overlap
 * instead of waiting one after the other; neither changes the source,
 * and every intern is still right without them. prefetch_stack() fetches
 * the index slot where (@frame, @caller) is looked up. guess_stack(),
 * once that slot is in the cache, returns the stack the index most
 * likely holds for it (matched by hash fingerprint only: it may be
 * wrong) and fetches that stack's columns, or HS_NO_STACK when the
 * stack looks new; a batch feeds each guess to the next level's calls
 * as the caller.
 */
void hs_source_prefetch_stack(const struct hs_stack_source *src, uint32_t frame,
			      uint32_t caller);
uint32_t hs_source_guess_stack(const struct hs_stack_source *src, uint32_t frame,
			       uint32_t caller);
/*
 * Intern the location (@len bytes of file name at @file, @line); returns
 * 0 and its number (>= 1) in *@loc, -ENOMEM or -E2BIG.
 */
HS_MUST_CHECK int hs_source_intern_loc(struct hs_stack_source *src, const char *file,
				       size_t len, uint32_t line, uint32_t *loc);
/*
 * hs_source_intern_stack() for a leaf frame at location @loc (0: none,
 * which is hs_source_intern_stack() itself). -EINVAL for an unknown @loc.
 */
HS_MUST_CHECK int hs_source_intern_stack_loc(struct hs_stack_source *src, uint32_t frame,
					     uint32_t caller, uint32_t loc,
					     uint32_t *stack);
/* Location of @stack's leaf frame, 0 when none. */
static inline uint32_t hs_source_stack_loc(const struct hs_stack_source *src,
					   uint32_t stack)
{
	return src->stack_loc && stack != HS_NO_STACK ? src->stack_loc[stack] : 0;
}
/* File name (borrowed) and line of location @loc; NULL for 0 or unknown. */
const char *hs_source_loc(const struct hs_stack_source *src, uint32_t loc,
			  uint32_t *line);

/*
 * Intern a whole stack given as @n frame ids, root first. An empty array
 * gives HS_NO_STACK. Same returns as hs_source_intern_stack().
 */
HS_MUST_CHECK int hs_source_intern_path(struct hs_stack_source *src,
					const uint32_t *frames, size_t n,
					uint32_t *stack);
/* Append a sample. Returns 0 or -ENOMEM. */
HS_MUST_CHECK int hs_source_add_sample(struct hs_stack_source *src, int64_t time_ns,
				       double metric, double count, uint32_t stack);
/* Make room for @n more samples at once (an optimisation only). */
HS_MUST_CHECK int hs_source_reserve_samples(struct hs_stack_source *src, size_t n);

static inline const char *hs_source_frame_name(const struct hs_stack_source *src,
					       uint32_t frame)
{
	return hs_strtab_get(&src->frames, frame);
}
static inline size_t hs_source_nr_frames(const struct hs_stack_source *src)
{
	return hs_strtab_count(&src->frames);
}
static inline uint32_t hs_source_depth(const struct hs_stack_source *src, uint32_t stack)
{
	return stack == HS_NO_STACK ? 0 : src->stack_depth[stack];
}
/*
 * Write the frames of @stack, root first, into @out (room for @max).
 * Returns the stack's depth. When it exceeds @max, @out holds the @max
 * frames nearest the leaf, still root first. @stack is one of @src's or
 * HS_NO_STACK; anything else is a bug (HS_BUG_ON).
 */
size_t hs_source_stack_frames(const struct hs_stack_source *src, uint32_t stack,
			      uint32_t *out, size_t max);

/*
 * Display name of a full frame name: the directory before the module is
 * stripped ("/usr/lib/libc.so.6!malloc" -> "libc.so.6!malloc"), looking for
 * the last '/' or '\\' before the module's '!' (frame_name.h). Names
 * without a module are shown whole. Returns a pointer into @full
 * (borrowed).
 */
const char *hs_frame_display(const char *full);

/* Sum of all metrics and counts. */
void hs_source_totals(const struct hs_stack_source *src, double *metric, double *count);
/* Smallest and largest sample time in ns (both 0 with no samples). */
void hs_source_time_range(const struct hs_stack_source *src, int64_t *first,
			  int64_t *last);
/* Bytes of memory the source holds. */
size_t hs_source_memory(const struct hs_stack_source *src);
/*
 * HS_BUG_ON the invariants above: each stack's frame is a frame id, its
 * caller a smaller stack id (or HS_NO_STACK) and its depth one more than
 * its caller's; each sample's stack is a stack id or HS_NO_STACK. For
 * module boundaries (what an importer hands over): one pass over the
 * stacks and the samples.
 */
void hs_source_check(const struct hs_stack_source *src);
/* Free the default text-box values. */
void hs_source_defaults_release(struct hs_source_defaults *d);

/*
 * The samples summed per stack, for the exporters that write one sample
 * per distinct stack. Slot 0 is the empty stack (HS_NO_STACK), slot k
 * stack k - 1; @order lists the @nr slots that have samples, in the order
 * their first sample appears. The arrays are owned by the struct.
 */
struct hs_stack_sums {
	double *metric; /* per slot, nr_stacks + 1 */
	double *count;	/* per slot, nr_stacks + 1 */
	uint32_t *order;
	size_t nr;
};
/* Fill @out from @src's samples. Returns 0 or -ENOMEM (nothing kept). */
HS_MUST_CHECK int hs_source_sum_by_stack(const struct hs_stack_source *src,
					 struct hs_stack_sums *out);
void hs_stack_sums_release(struct hs_stack_sums *s);
/* The stack of slot @k of struct hs_stack_sums. */
static inline uint32_t hs_stack_sums_stack(uint32_t k)
{
	return k ? k - 1 : HS_NO_STACK;
}
#endif
