#ifndef HS_ANALYSIS_WHEN_H
#define HS_ANALYSIS_WHEN_H
#include <stdint.h>
#include "model/stack_source.h"

/*
 * when - the When column and the First/Last times (perfview-semantics.md §5).
 *
 * A histogram has HS_WHEN_BUCKETS buckets over [Start - 0.0006 ms,
 * End + 0.0006 ms]; the bucket width is the summary line's TimeBucket.
 * Start and End are the time window, or when a bound is open, 0 (or the
 * first sample time if that is negative) and the last sample time of the
 * input source, as PerfView's GUI fills its boxes.
 *
 * For HS_METRIC_TIME sources (TimeMetric scaling) a sample covers
 * [t, t + |metric| ms] and its metric is spread over the buckets that
 * interval overlaps; otherwise all of it goes to the bucket of t (clamped
 * to the histogram). Each bucket is printed as one character of
 * `_ . o 0-9 A-Y *` (negative values `a-y @`) relative to a scale.
 *
 * Everything here is a pure function of its arguments; no memory is
 * allocated.
 */

#define HS_WHEN_BUCKETS 32
#define HS_WHEN_SLACK_NS 600 /* PerfView's 0.0006 ms */

struct hs_when_range {
	int64_t start, end; /* ns: Start and End, without the slack */
	double lo;	    /* ns: Start - slack, where bucket 0 begins */
	double bucket;	    /* ns per bucket (> 0) */
	double per_ns;	    /* 1 / bucket: buckets per ns */
	int time_metric;    /* the source is HS_METRIC_TIME */
};

/*
 * Fill @r for the input source @in and the window @start_ms/@end_ms (NAN or
 * infinite for an open bound).
 */
void hs_when_range_init(struct hs_when_range *r, const struct hs_stack_source *in,
			double start_ms, double end_ms);

/*
 * Where a sample at @t ns with @orig_metric (its metric before the time
 * window prorated it) and @metric (after) goes: writes up to
 * HS_WHEN_BUCKETS (bucket, value) pairs to @bucket/@val and returns how
 * many. The values sum to @metric when the histogram covers the window.
 */
unsigned hs_when_spread(const struct hs_when_range *r, int64_t t, double orig_metric,
			double metric, uint8_t *bucket, double *val);

/*
 * The end time of a sample for the Last column: @t, or for TimeMetric
 * sources t + |@orig_metric| ms capped at End (but never before @t).
 */
int64_t hs_when_sample_end(const struct hs_when_range *r, int64_t t, double orig_metric);

/*
 * The value that prints as 100%: the bucket width in ms for TimeMetric
 * sources, else half the largest |bucket| of @root_hist (the histogram of
 * all samples), so that ROOT's peak prints as 'K'. 0 when all is empty.
 */
double hs_when_scale(const struct hs_when_range *r, const double *root_hist);

/*
 * The character for bucket value @v at @scale (0 scale prints '_'). A value
 * within a relative 1e-9 of a step counts as reaching it, so that float
 * rounding in the sums never changes a character.
 */
char hs_when_char(double v, double scale);

/* The HS_WHEN_BUCKETS characters of @hist, NUL-terminated, into @out. */
void hs_when_format(const double *hist, double scale, char out[HS_WHEN_BUCKETS + 1]);
#endif
