/*
 * heap_history - a heap trace's heap curve and RSS records from one
 * streamed totals pass (see heap_history.h): the pass's curve is kept,
 * its counters and live blocks go with it; from the trace as read only
 * the RSS records and the duration are copied. With a peak view, the
 * view is the pass's first consumer and keeps the live blocks: each
 * event goes to it, then to the totals with what it did to them
 * (hs_memview_pass_event(), hs_heap_totals_pass_event_known()), and the
 * stream orders a tick's events by the view's live blocks, as
 * hs_memview_build_path() has it.
 */
#include "analysis/heap_history.h"
#include "analysis/memviews.h"
#include "common/alloc.h"
#include "format/trace_reader.h"
#include <errno.h>
#include <string.h>

/* The pass: the totals with the curve, and the peak view when wanted. */
struct history_pass {
	struct hs_heap_totals tot;
	struct hs_heap_totals_pass totals;
	struct hs_memview_opts opts;
	struct hs_memview_pass *peak; /* NULL: the totals keep the live blocks */
};

static int peak_then_totals(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct history_pass *hp = ctx;
	uint64_t gone_size = 0;
	size_t i;
	int err = 0, gone;

	for (i = 0; i < n && !err; i++) {
		if (i + 8 < n)
			hs_memview_pass_prefetch(hp->peak, ev[i + 8].addr);
		gone = hs_memview_pass_event(hp->peak, &ev[i], &gone_size);
		err = gone < 0 ? gone
			       : hs_heap_totals_pass_event_known(&hp->totals, &ev[i],
								 gone, gone_size);
	}
	return err;
}

static int peak_live(void *ctx, uint64_t addr)
{
	struct history_pass *hp = ctx;

	return hs_memview_pass_live(hp->peak, addr);
}

static int totals_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct history_pass *hp = ctx;

	return hs_heap_totals_pass_events(&hp->totals, ev, n);
}

static int totals_live(void *ctx, uint64_t addr)
{
	struct history_pass *hp = ctx;

	return hs_heap_totals_pass_live(&hp->totals, addr);
}

/*
 * A pass over trace @t (a stream's, filled as it reads, or a loaded one)
 * into @h's curve and, when not NULL, @peak. 0 or -ENOMEM.
 */
static int pass_init(struct history_pass *hp, const struct hs_trace *t,
		     struct hs_heap_history *h, struct hs_stack_source *peak)
{
	memset(hp, 0, sizeof(*hp));
	hs_heap_totals_pass_init(&hp->totals, t, &hp->tot, &h->heap);
	if (!peak)
		return 0;
	hp->opts = (struct hs_memview_opts)HS_MEMVIEW_OPTS_INIT;
	hp->opts.kind = HS_MEM_PEAK;
	return hs_memview_pass_new_heap(t, &hp->opts, peak, NULL, NULL, NULL, &hp->peak);
}

static void pass_release(struct history_pass *hp)
{
	hs_heap_totals_pass_release(&hp->totals);
	hs_memview_pass_free(hp->peak);
}

/* The peak view's samples get their stacks, once the trace is read. */
static int pass_finish(struct history_pass *hp, struct hs_diag *diag)
{
	return hp->peak ? hs_memview_pass_finish(hp->peak, diag) : 0;
}

void hs_heap_history_release(struct hs_heap_history *h)
{
	hs_heap_curve_release(&h->heap);
	hs_free(h->rss_time);
	hs_free(h->rss_bytes);
	memset(h, 0, sizeof(*h));
}

/* The pass over loaded trace @t's events (a file that could not stream). */
static int pass_loaded(struct history_pass *hp, const struct hs_trace *t,
		       struct hs_diag *diag)
{
	struct hs_trace_event batch[256];
	size_t i = 0, n;
	int err = 0;

	while (i < t->nr_events && !err) {
		for (n = 0; n < 256 && i < t->nr_events; n++, i++)
			hs_trace_event_get(t, i, &batch[n]);
		err = hp->peak ? peak_then_totals(hp, batch, n)
			       : totals_events(hp, batch, n);
	}
	return err ? err : pass_finish(hp, diag);
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
			 struct hs_stack_source *peak, struct hs_diag *diag)
{
	struct history_pass hp;
	struct hs_trace_sink sink = {.ctx = &hp};
	struct hs_trace t;
	int err;

	memset(h, 0, sizeof(*h));
	memset(&t, 0, sizeof(t)); /* filled by the stream as it reads */
	sink.events = peak ? peak_then_totals : totals_events;
	sink.live = peak ? peak_live : totals_live;
	err = pass_init(&hp, &t, h, peak);
	if (!err)
		err = hs_trace_stream(path, &t, &sink, diag);
	if (!err) {
		err = pass_finish(&hp, diag);
		if (err)
			hs_trace_release(&t);
	}
	pass_release(&hp);
	if (err == -EAGAIN) {
		/* not in time order: the pass starts again over the loaded events */
		hs_heap_curve_release(&h->heap);
		if (peak)
			hs_source_release(peak);
		err = hs_trace_load(path, &t, diag);
		if (!err) {
			err = pass_init(&hp, &t, h, peak);
			if (!err)
				err = pass_loaded(&hp, &t, diag);
			pass_release(&hp);
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
		if (peak)
			hs_source_release(peak);
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
