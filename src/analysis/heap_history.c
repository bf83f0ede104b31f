/*
 * heap_history - a heap trace's heap curve and RSS records from one
 * streamed totals pass (see heap_history.h): the pass's curve is kept,
 * its counters and live blocks go with it; from the trace as read only
 * the RSS records and the duration are copied. The same pass can feed a
 * memory view too (joint_run()), and a view read later can stop feeding
 * its pass at the peak the history found.
 */
#include "analysis/heap_history.h"
#include "common/alloc.h"
#include "common/log.h"
#include "format/trace_reader.h"
#include <errno.h>
#include <math.h>
#include <string.h>

void hs_heap_history_release(struct hs_heap_history *h)
{
	hs_heap_curve_release(&h->heap);
	hs_free(h->rss_time);
	hs_free(h->rss_bytes);
	memset(h, 0, sizeof(*h));
}

/* The pass: the totals with the curve, and when to give up. */
struct history_pass {
	struct hs_heap_totals tot;
	struct hs_heap_totals_pass tp;
	int (*stop)(void *ctx);
	void *stop_ctx;
};

static int pass_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct history_pass *hp = ctx;

	if (hp->stop && hp->stop(hp->stop_ctx))
		return -ECANCELED;
	return hs_heap_totals_pass_events(&hp->tp, ev, n);
}

static int pass_live(void *ctx, uint64_t addr)
{
	struct history_pass *hp = ctx;

	return hs_heap_totals_pass_live(&hp->tp, addr);
}

/* @t's RSS records and duration into @h. 0 or -ENOMEM. */
static int keep_rss(struct hs_heap_history *h, const struct hs_trace *t)
{
	h->duration_ns = t->duration_ns;
	if (!t->nr_rss)
		return 0;
	h->rss_time = hs_malloc(t->nr_rss * sizeof(*h->rss_time));
	h->rss_bytes = hs_malloc(t->nr_rss * sizeof(*h->rss_bytes));
	if (!h->rss_time || !h->rss_bytes)
		return -ENOMEM;
	memcpy(h->rss_time, t->rss_time, t->nr_rss * sizeof(*h->rss_time));
	memcpy(h->rss_bytes, t->rss_bytes, t->nr_rss * sizeof(*h->rss_bytes));
	h->nr_rss = t->nr_rss;
	return 0;
}

int hs_heap_history_path(const char *path, struct hs_heap_history *h,
			 int (*stop)(void *ctx), void *stop_ctx, struct hs_diag *diag)
{
	struct history_pass hp = {.stop = stop, .stop_ctx = stop_ctx};
	struct hs_trace_sink sink = {
	    .events = pass_events, .live = pass_live, .ctx = &hp};
	struct hs_trace t;
	int err;

	memset(h, 0, sizeof(*h));
	memset(&t, 0, sizeof(t)); /* filled by the stream as it reads */
	hs_heap_totals_pass_init(&hp.tp, &t, &hp.tot, &h->heap);
	err = hs_trace_stream(path, &t, &sink, diag);
	hs_heap_totals_pass_release(&hp.tp);
	if (err == -EAGAIN) {
		/* not in time order: the curve starts again from the loaded events */
		hs_heap_curve_release(&h->heap);
		err = hs_trace_load(path, &t, diag);
		if (!err) {
			hs_heap_totals_pass_init(&hp.tp, &t, &hp.tot, &h->heap);
			err = hs_trace_feed(&t, &sink);
			hs_heap_totals_pass_release(&hp.tp);
			if (err)
				hs_trace_release(&t);
		}
	}
	if (!err) {
		err = keep_rss(h, &t);
		hs_trace_release(&t);
	}
	if (err) {
		hs_heap_history_release(h);
		/* the reader leaves the errors of open(2) to its caller */
		if (!diag->set)
			hs_diag_set(diag, 0, "%s", strerror(-err));
	}
	return err;
}

/*
 * One pass over the events with up to two consumers: a view (memviews.h)
 * and the totals with the heap curve (@tp, NULL: the view alone).
 */
struct joint_pass {
	struct hs_memview_pass *view;
	struct hs_heap_totals_pass *tp;
	int view_live; /* the view keeps every live block: it orders the ties */
	int64_t until; /* the view gets the events up to this time */
	int (*pace)(void *ctx);
	void *pace_ctx;
};

static int joint_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct joint_pass *jp = ctx;
	size_t fed = n;
	int err = 0;

	if (jp->pace && jp->pace(jp->pace_ctx))
		return -ECANCELED;
	/* the events come in time order: the view's are a prefix */
	while (fed && ev[fed - 1].time > jp->until)
		fed--;
	if (fed)
		err = hs_memview_pass_events(jp->view, ev, fed);
	if (!err && jp->tp)
		err = hs_heap_totals_pass_events(jp->tp, ev, n);
	return err;
}

static int joint_live(void *ctx, uint64_t addr)
{
	struct joint_pass *jp = ctx;

	return jp->view_live ? hs_memview_pass_live(jp->view, addr)
			     : hs_heap_totals_pass_live(jp->tp, addr);
}

/* Whether view @kind keeps the live blocks (hs_memview_build_path()'s rule). */
static int view_keeps_live(enum hs_memview_kind kind)
{
	return kind != HS_MEM_ALLOC && kind != HS_MEM_MMAP && kind != HS_MEM_CPU &&
	       kind != HS_MEM_WALL;
}

/*
 * View @o of the trace at @path into @out, and with @h its history too,
 * in one pass: streamed, or over the loaded trace when the stream gives
 * up (-EAGAIN). The view gets the events up to time @until. 0 or a
 * negative errno with @diag filled (@h is then empty).
 */
static int joint_run(const char *path, const struct hs_memview_opts *o,
		     struct hs_stack_source *out, struct hs_memview_info *info,
		     struct hs_heap_history *h, int64_t until, int (*pace)(void *ctx),
		     void *pace_ctx, struct hs_diag *diag)
{
	struct joint_pass jp = {.view_live = view_keeps_live(o->kind),
				.until = until,
				.pace = pace,
				.pace_ctx = pace_ctx};
	struct hs_trace_sink sink = {.events = joint_events, .ctx = &jp};
	struct hs_heap_totals tot;
	struct hs_heap_totals_pass tp;
	struct hs_trace t;
	int loaded = 0, err;

	if (h)
		memset(h, 0, sizeof(*h));
	memset(&t, 0, sizeof(t)); /* filled by the stream as it reads */
	if (jp.view_live || h)
		sink.live = joint_live;
	for (;;) {
		if (h) {
			hs_heap_totals_pass_init(&tp, &t, &tot, &h->heap);
			jp.tp = &tp;
		}
		err = hs_memview_pass_new(&t, o, out, info, &jp.view);
		if (!err)
			err = loaded ? hs_trace_feed(&t, &sink)
				     : hs_trace_stream(path, &t, &sink, diag);
		if (!err)
			err = hs_memview_pass_finish(jp.view, diag);
		hs_memview_pass_free(jp.view);
		if (h)
			hs_heap_totals_pass_release(&tp);
		if (err != -EAGAIN || loaded)
			break;
		/* not in time order: both start again from the loaded events */
		hs_source_release(out);
		if (h)
			hs_heap_curve_release(&h->heap);
		err = hs_trace_load(path, &t, diag);
		if (err)
			break;
		loaded = 1;
	}
	if (!err && h)
		err = keep_rss(h, &t);
	/* the stream releases @t on error, the load leaves it to us */
	if (!err || loaded)
		hs_trace_release(&t);
	if (err) {
		if (h)
			hs_heap_history_release(h);
		if (!diag->set)
			hs_diag_set(diag, 0, "%s", strerror(-err));
	}
	return err;
}

int hs_heap_history_path_view(const char *path, const struct hs_memview_opts *o,
			      struct hs_stack_source *out, struct hs_heap_history *h,
			      struct hs_diag *diag)
{
	return joint_run(path, o, out, NULL, h, INT64_MAX, NULL, NULL, diag);
}

/*
 * The time of the clock tick in which @c was first at its highest, and
 * that height in *@top; INT64_MAX when the heap was never above empty.
 */
static int64_t first_peak_tick(const struct hs_heap_curve *c, double *top)
{
	size_t i, at = 0;

	*top = 0;
	for (i = 0; i < c->n; i++)
		if (c->max[i] > *top) {
			*top = c->max[i];
			at = i;
		}
	return *top > 0 ? c->time[at] : INT64_MAX;
}

int hs_heap_history_view(const char *path, const struct hs_heap_history *h,
			 const struct hs_memview_opts *o, struct hs_stack_source *out,
			 int (*pace)(void *ctx), void *pace_ctx, struct hs_diag *diag)
{
	struct hs_memview_info info;
	int64_t until = INT64_MAX;
	double top = 0;
	int err;

	if (h && o->kind == HS_MEM_PEAK && isnan(o->start_ms) && isnan(o->end_ms))
		until = first_peak_tick(&h->heap, &top);
	err = joint_run(path, o, out, &info, NULL, until, pace, pace_ctx, diag);
	if (!err && until != INT64_MAX && info.peak_bytes != top) {
		/* the view did not reach the history's peak: all of the events */
		hs_log(HS_LOG_DEBUG, "%s: peak %.17g, history's %.17g: read again", path,
		       info.peak_bytes, top);
		hs_source_release(out);
		err =
		    joint_run(path, o, out, NULL, NULL, INT64_MAX, pace, pace_ctx, diag);
	}
	return err;
}

int hs_heap_history_timelines(const struct hs_heap_history *h, size_t points,
			      struct hs_timeline *heap, struct hs_timeline *rss)
{
	/* empty, not undefined, when the cut fails before it reaches them */
	if (heap)
		memset(heap, 0, sizeof(*heap));
	if (rss)
		memset(rss, 0, sizeof(*rss));
	return hs_heap_curve_timelines(&h->heap, h->rss_time, h->rss_bytes, h->nr_rss,
				       h->duration_ns, points, heap, rss);
}
