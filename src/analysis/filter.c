/*
 * filter - per-stack filter pipeline (see filter.h).
 *
 * Input stacks are processed in id order; a caller's id is always smaller
 * than its callee's, so each stack extends the already-processed result of
 * its caller.
 */
#include "analysis/filter.h"
#include "common/alloc.h"
#include <errno.h>
#include <math.h>
#include <string.h>

#define WINDOW_SLACK_NS 600	/* PerfView's 0.0006 ms */

void hs_filtered_release(struct hs_filtered *f)
{
	hs_source_release(&f->out);
	hs_free(f->map);
	hs_free(f->folded);
	memset(f, 0, sizeof(*f));
}

/* Output frame id for each input frame: its display name interned. */
static int map_frames(const struct hs_stack_source *in, struct hs_filtered *f,
		      uint32_t **frame_map)
{
	size_t n = hs_source_nr_frames(in), i;
	uint32_t *m = hs_malloc(n * sizeof(*m));
	int err;

	if (!m)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *d = hs_frame_display(hs_source_frame_name(in, (uint32_t)i));

		err = hs_source_intern_frame(&f->out, d, strlen(d), &m[i]);
		if (err) {
			hs_free(m);
			return err;
		}
	}
	*frame_map = m;
	return 0;
}

int hs_filter_apply(const struct hs_stack_source *in,
		    const struct hs_filter_params *p, struct hs_filtered *f,
		    struct hs_diag *diag)
{
	uint32_t *frame_map = NULL;
	size_t s;
	int err;

	(void)diag;
	memset(f, 0, sizeof(*f));
	f->in = in;
	hs_source_init(&f->out);
	f->out.kind = in->kind;
	f->root_map = HS_NO_STACK;
	f->map = hs_malloc((in->nr_stacks + 1) * sizeof(*f->map));
	f->folded = hs_calloc(in->nr_stacks + 1, 1);
	err = -ENOMEM;
	if (!f->map || !f->folded)
		goto fail;
	err = map_frames(in, f, &frame_map);
	if (err)
		goto fail;
	for (s = 0; s < in->nr_stacks; s++) {
		uint32_t caller = in->stack_caller[s];
		uint32_t up = caller == HS_NO_STACK ? HS_NO_STACK : f->map[caller];
		uint32_t frame = frame_map[in->stack_frame[s]];

		if (up != HS_NO_STACK && f->out.stack_frame[up] == frame) {
			f->map[s] = up;	/* collapse into an identical caller */
			continue;
		}
		err = hs_source_intern_stack(&f->out, frame, up, &f->map[s]);
		if (err)
			goto fail;
	}
	if (!isnan(p->start_ms) || !isnan(p->end_ms)) {
		f->has_window = 1;
		f->start_ns = isnan(p->start_ms) ? INT64_MIN :
			(int64_t)llround(p->start_ms * 1e6) - WINDOW_SLACK_NS;
		f->end_ns = isnan(p->end_ms) ? INT64_MAX :
			(int64_t)llround(p->end_ms * 1e6) + WINDOW_SLACK_NS;
	}
	hs_free(frame_map);
	return 0;
fail:
	hs_free(frame_map);
	hs_filtered_release(f);
	return err;
}

int hs_filtered_sample(const struct hs_filtered *f, size_t i, uint32_t *stack,
		       double *metric, double *count)
{
	const struct hs_stack_source *in = f->in;
	uint32_t s = in->stack[i];
	double m = in->metric[i];

	*stack = s == HS_NO_STACK ? f->root_map : f->map[s];
	if (*stack == HS_DROPPED)
		return 0;
	if (f->has_window) {
		int64_t t = in->time[i];

		if (t > f->end_ns)
			return 0;
		if (in->kind == HS_METRIC_TIME) {
			/* the sample covers [t, t + |metric| ms] */
			double len = fabs(m) * 1e6;
			double lo = (double)t, hi = lo + len;
			double a = lo > (double)f->start_ns ? lo : (double)f->start_ns;
			double b = hi < (double)f->end_ns ? hi : (double)f->end_ns;

			if (hi < (double)f->start_ns)
				return 0;
			if (len > 0)
				m *= (b > a ? b - a : 0) / len;
		} else if (t < f->start_ns) {
			return 0;
		}
	}
	*metric = m;
	*count = in->count[i];
	return 1;
}
