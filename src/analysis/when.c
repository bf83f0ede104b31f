/*
 * when - histogram buckets and the When characters (see when.h).
 */
#include "analysis/when.h"
#include <math.h>

void hs_when_range_init(struct hs_when_range *r, const struct hs_stack_source *in,
			double start_ms, double end_ms)
{
	int64_t first, last;

	hs_source_time_range(in, &first, &last);
	r->start = first < 0 ? first : 0;
	r->end = last;
	if (isfinite(start_ms))
		r->start = (int64_t)llround(start_ms * 1e6);
	if (isfinite(end_ms))
		r->end = (int64_t)llround(end_ms * 1e6);
	if (r->end < r->start)
		r->end = r->start;
	r->lo = (double)r->start - HS_WHEN_SLACK_NS;
	r->bucket = ((double)r->end + HS_WHEN_SLACK_NS - r->lo) / HS_WHEN_BUCKETS;
	r->per_ns = 1 / r->bucket;
	r->time_metric = in->kind == HS_METRIC_TIME;
}

static int bucket_of(const struct hs_when_range *r, double t)
{
	double b = floor((t - r->lo) * r->per_ns);

	if (b < 0)
		return 0;
	if (b > HS_WHEN_BUCKETS - 1)
		return HS_WHEN_BUCKETS - 1;
	return (int)b;
}

unsigned hs_when_spread(const struct hs_when_range *r, int64_t t, double orig_metric,
			double metric, uint8_t *bucket, double *val)
{
	double lo = (double)t, len = fabs(orig_metric) * 1e6, hi = lo + len;
	double top = r->lo + HS_WHEN_BUCKETS * r->bucket;
	unsigned n = 0;
	int b, b0, b1;

	if (!r->time_metric || len <= 0) {
		bucket[0] = (uint8_t)bucket_of(r, lo);
		val[0] = metric;
		return 1;
	}
	/* the part of [lo, hi] inside the histogram, bucket by bucket */
	if (hi <= r->lo || lo >= top)
		return 0;
	b0 = bucket_of(r, lo);
	b1 = bucket_of(r, hi);
	if (b0 == b1 && lo >= r->lo && hi <= top) {
		bucket[0] = (uint8_t)b0; /* all in one bucket */
		val[0] = orig_metric;
		return 1;
	}
	for (b = b0; b <= b1; b++) {
		double a = r->lo + b * r->bucket, z = a + r->bucket;
		double ov = (hi < z ? hi : z) - (lo > a ? lo : a);

		if (ov <= 0)
			continue;
		bucket[n] = (uint8_t)b;
		val[n++] = orig_metric * (ov / len);
	}
	return n;
}

int64_t hs_when_sample_end(const struct hs_when_range *r, int64_t t, double orig_metric)
{
	double end;

	if (!r->time_metric)
		return t;
	end = (double)t + fabs(orig_metric) * 1e6;
	if (end > (double)r->end)
		end = (double)r->end;
	return end > (double)t ? (int64_t)end : t;
}

double hs_when_scale(const struct hs_when_range *r, const double *root_hist)
{
	double peak = 0;
	int b;

	if (r->time_metric)
		return r->bucket / 1e6;
	for (b = 0; b < HS_WHEN_BUCKETS; b++)
		if (fabs(root_hist[b]) > peak)
			peak = fabs(root_hist[b]);
	return peak / 2;
}

/*
 * A value within a relative HS_WHEN_TOLERANCE of a step counts as reaching
 * it: a bucket exactly 100% busy is a sum of many pieces, and the order of
 * summation must not decide between '9' and 'A'.
 */
#define HS_WHEN_TOLERANCE 1e-9

char hs_when_char(double v, double scale)
{
	double r;
	long k;

	if (v == 0 || !(scale > 0))
		return '_';
	r = v / scale;
	r *= 1 + HS_WHEN_TOLERANCE; /* away from zero */
	if (r > 0) {
		if (r < 0.001)
			return '.';
		if (r < 0.01)
			return 'o';
		if (r >= 3.5)
			return '*';
		k = (long)(10 * r);
		return k < 10 ? (char)('0' + k) : (char)('A' + (k - 10));
	}
	if (-r >= 2.5)
		return '@';
	k = (long)(-10 * r);
	return (char)('a' + k);
}

void hs_when_format(const double *hist, double scale, char out[HS_WHEN_BUCKETS + 1])
{
	int b;

	for (b = 0; b < HS_WHEN_BUCKETS; b++)
		out[b] = hs_when_char(hist[b], scale);
	out[HS_WHEN_BUCKETS] = '\0';
}
