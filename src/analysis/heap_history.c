/*
 * heap_history - a heap trace's heap curve and RSS records from one
 * streamed totals pass (see heap_history.h): the pass's curve is kept,
 * its counters and live blocks go with it; from the trace as read only
 * the RSS records and the duration are copied.
 */
#include "analysis/heap_history.h"
#include "common/alloc.h"
#include "format/trace_reader.h"
#include <errno.h>
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
