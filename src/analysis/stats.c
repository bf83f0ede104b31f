/*
 * stats - a heap trace's numbers, computed from its memory views (see
 * stats.h) in one pass over the events, loaded or streamed: the totals
 * (totals.h, with the heap in use per clock tick for the timeline) and
 * the peak view, which gives the alloc, leaks and temporary views too
 * (hs_memview_pass_new_heap()), are the consumers of the events, and
 * the totals read the live blocks from the view; then
 * top call sites from ByName with the views' default patterns.
 */
#include "analysis/stats.h"
#include "analysis/totals.h"
#include "analysis/calltree.h"
#include "analysis/memviews.h"
#include "analysis/presets.h"
#include "analysis/views.h"
#include "common/alloc.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void hs_timeline_release(struct hs_timeline *tl)
{
	hs_free(tl->ms);
	hs_free(tl->bytes);
	memset(tl, 0, sizeof(*tl));
}

void hs_heap_top_release(struct hs_top_list *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		hs_free(l->site[i].name);
	hs_free(l->site);
	memset(l, 0, sizeof(*l));
}

void hs_heap_stats_release(struct hs_heap_stats *s)
{
	hs_heap_top_release(&s->by_bytes);
	hs_heap_top_release(&s->by_count);
	hs_heap_top_release(&s->by_leaked);
	hs_heap_top_release(&s->at_peak);
	hs_timeline_release(&s->heap);
	hs_timeline_release(&s->rss);
	memset(s, 0, sizeof(*s));
}

/* --- timelines --------------------------------------------------------- */

/*
 * A timeline being filled: the trace's time cut in @points buckets, each
 * keeping its highest value and its last one (what the next bucket
 * starts from).
 */
struct buckets {
	double width; /* ns */
	size_t points;
	double *max, *last;
	uint8_t *have;
};

static int buckets_init(struct buckets *b, int64_t end_ns, size_t points)
{
	if (!points)
		points = 200;
	if (end_ns <= 0)
		end_ns = 1;
	b->points = points;
	b->width = (double)end_ns / (double)points;
	b->max = hs_malloc(points * sizeof(double));
	b->last = hs_malloc(points * sizeof(double));
	b->have = hs_calloc(points, 1);
	return b->max && b->last && b->have ? 0 : -ENOMEM;
}

static void buckets_release(struct buckets *b)
{
	hs_free(b->max);
	hs_free(b->last);
	hs_free(b->have);
}

static void buckets_add(void *ctx, int64_t time, double v)
{
	struct buckets *b = ctx;
	double k = (double)time / b->width;
	size_t i = k <= 0 ? 0 : k >= (double)b->points ? b->points - 1 : (size_t)k;

	if (!b->have[i] || v > b->max[i])
		b->max[i] = v;
	b->last[i] = v;
	b->have[i] = 1;
}

/*
 * The points: each bucket's start and its highest value, counting the
 * value it starts with (@carry before the first sample; NAN: none, then
 * buckets before the first sample are left out).
 */
static int buckets_finish(struct buckets *b, double carry, struct hs_timeline *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->ms = hs_malloc(b->points * sizeof(double));
	out->bytes = hs_malloc(b->points * sizeof(double));
	if (!out->ms || !out->bytes) {
		hs_timeline_release(out);
		return -ENOMEM;
	}
	for (i = 0; i < b->points; i++) {
		double m = carry;

		if (b->have[i]) {
			if (isnan(m) || b->max[i] > m)
				m = b->max[i];
			carry = b->last[i];
		}
		if (isnan(m))
			continue;
		out->ms[out->n] = (double)i * b->width / 1e6;
		out->bytes[out->n] = m;
		out->n++;
	}
	return 0;
}

int hs_heap_curve_timelines(const struct hs_heap_curve *curve, const int64_t *rss_time,
			    const uint64_t *rss_bytes, size_t nr_rss, int64_t duration_ns,
			    size_t points, struct hs_timeline *heap,
			    struct hs_timeline *rss)
{
	struct buckets b = {0};
	size_t i;
	int err = 0;

	if (heap) {
		err = buckets_init(&b, duration_ns, points);
		/* a tick's highest value, then its last one: as event by event */
		for (i = 0; !err && i < curve->n; i++) {
			buckets_add(&b, curve->time[i], curve->max[i]);
			buckets_add(&b, curve->time[i], curve->last[i]);
		}
		if (!err)
			err = buckets_finish(&b, 0, heap);
		buckets_release(&b);
		memset(&b, 0, sizeof(b));
	}
	if (!err && rss) {
		err = buckets_init(&b, duration_ns, points);
		for (i = 0; !err && i < nr_rss; i++)
			buckets_add(&b, rss_time[i], (double)rss_bytes[i]);
		if (!err)
			err = buckets_finish(&b, NAN, rss);
		buckets_release(&b);
	}
	if (err) {
		if (heap)
			hs_timeline_release(heap);
		if (rss)
			hs_timeline_release(rss);
	}
	return err;
}

int hs_heap_timelines(const struct hs_trace *t, size_t points, struct hs_timeline *heap,
		      struct hs_timeline *rss)
{
	struct hs_heap_totals tot;
	struct hs_heap_totals_pass tp;
	struct hs_heap_curve curve = {0};
	struct hs_trace_sink sink = {.events = hs_heap_totals_pass_events, .ctx = &tp};
	int err = 0;

	hs_heap_totals_pass_init(&tp, t, &tot, heap ? &curve : NULL);
	if (heap)
		err = hs_trace_feed(t, &sink);
	hs_heap_totals_pass_release(&tp);
	if (!err)
		err =
		    hs_heap_curve_timelines(&curve, t->rss_time, t->rss_bytes, t->nr_rss,
					    t->duration_ns, points, heap, rss);
	hs_heap_curve_release(&curve);
	return err;
}

/* --- top call sites ------------------------------------------------------ */

struct cost_sort {
	const struct hs_node_exc *exc;
	int by_count;
};

static int cmp_cost(const void *pa, const void *pb, void *arg)
{
	const struct cost_sort *c = arg;
	const struct hs_node_exc *a = &c->exc[*(const uint32_t *)pa];
	const struct hs_node_exc *b = &c->exc[*(const uint32_t *)pb];
	double x = c->by_count ? a->count : a->metric,
	       y = c->by_count ? b->count : b->metric;

	if (x != y)
		return x > y ? -1 : 1;
	x = c->by_count ? a->metric : a->count;
	y = c->by_count ? b->metric : b->count;
	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

/*
 * The top @n names of @src's ByName by exclusive bytes (and, when
 * @by_count, a second list by exclusive count), with the source's default
 * FoldPats and ExcPats. Sets *@total_metric and *@total_count to ROOT's
 * inclusive cost after the filter.
 */
static int top(const struct hs_stack_source *src, size_t n, struct hs_top_list *by_bytes,
	       struct hs_top_list *by_count, double *total_metric, double *total_count,
	       struct hs_diag *diag)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_node_exc *re = NULL;
	struct hs_node_inc *ri = NULL;
	struct hs_calltree ct;
	struct hs_top_list *lists[2] = {by_bytes, by_count};
	uint32_t *order = NULL;
	size_t nr_frames, nr = 0, k, l;
	int err;

	p.filter.fold = src->defaults.fold;
	p.filter.exc = src->defaults.exc;
	p.node_hist = -1;
	err = hs_calltree_build(&ct, src, &p, diag);
	if (err)
		return err;
	err = hs_calltree_byname(&ct, &re, &ri);
	if (err)
		goto out;
	nr_frames = hs_source_nr_frames(&ct.f.out);
	*total_metric = ri[nr_frames].metric;
	*total_count = ri[nr_frames].count;
	order = hs_malloc((nr_frames + 1) * sizeof(*order));
	if (!order) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < nr_frames; k++)
		if (re[k].metric > 0)
			order[nr++] = (uint32_t)k;
	for (l = 0; l < 2 && !err; l++) {
		struct cost_sort c = {.exc = re, .by_count = (int)l};
		struct hs_top_list *list = lists[l];

		if (!list)
			continue;
		qsort_r(order, nr, sizeof(*order), cmp_cost, &c);
		list->site = hs_calloc(n < nr ? n : nr ? nr : 1, sizeof(*list->site));
		if (!list->site) {
			err = -ENOMEM;
			break;
		}
		for (k = 0; k < nr && k < n; k++) {
			struct hs_top_site *ts = &list->site[list->nr];

			ts->name = hs_strdup(hs_source_frame_name(&ct.f.out, order[k]));
			if (!ts->name) {
				err = -ENOMEM;
				break;
			}
			ts->bytes = re[order[k]].metric;
			ts->count = re[order[k]].count;
			list->nr++;
		}
	}
out:
	hs_free(order);
	hs_free(re);
	hs_free(ri);
	hs_calltree_release(&ct);
	return err;
}

int hs_heap_top(const struct hs_stack_source *src, size_t n, struct hs_top_list *by_bytes,
		struct hs_top_list *by_count, struct hs_diag *diag)
{
	double m, c;
	int err;

	memset(by_bytes, 0, sizeof(*by_bytes));
	if (by_count)
		memset(by_count, 0, sizeof(*by_count));
	err = top(src, n, by_bytes, by_count, &m, &c, diag);
	if (err) {
		hs_heap_top_release(by_bytes);
		if (by_count)
			hs_heap_top_release(by_count);
	}
	return err;
}

/* --- leaks ----------------------------------------------------------------- */

int hs_heap_leaks(const struct hs_stack_source *src, size_t n,
		  struct hs_top_list *by_leaked, struct hs_leak_totals *out,
		  struct hs_diag *diag)
{
	double all_bytes, all_blocks;
	int err;

	memset(out, 0, sizeof(*out));
	if (by_leaked)
		memset(by_leaked, 0, sizeof(*by_leaked));
	err = top(src, n, by_leaked, NULL, &out->bytes, &out->blocks, diag);
	if (err) {
		if (by_leaked)
			hs_heap_top_release(by_leaked);
		memset(out, 0, sizeof(*out));
		return err;
	}
	hs_source_totals(src, &all_bytes, &all_blocks);
	out->suppressed_bytes = all_bytes - out->bytes;
	out->suppressed_blocks = all_blocks - out->blocks;
	return 0;
}

int hs_heap_leaks_path(const char *path, struct hs_leak_totals *out, struct hs_diag *diag)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_stack_source src;
	int err;

	memset(out, 0, sizeof(*out));
	o.kind = HS_MEM_LEAKS;
	err = hs_memview_build_path(path, &o, &src, NULL, diag);
	if (!err)
		err = hs_heap_leaks(&src, 0, NULL, out, diag);
	hs_source_release(&src);
	return err;
}

/* --- the stats ------------------------------------------------------------- */

/*
 * The stats' one pass over the events: the totals (with the heap curve
 * for the timeline) and the peak view, which also gives the alloc, leaks
 * and temporary views from the same keys and live blocks.
 */
enum { SV_ALLOC, SV_LEAKS, SV_PEAK, SV__COUNT };

struct stats_pass {
	struct hs_heap_totals tot;
	struct hs_heap_totals_pass totals;
	struct hs_heap_curve curve;
	struct hs_memview_opts opts;
	struct hs_memview_pass *heap;
	struct hs_stack_source src[SV__COUNT];
};

/*
 * Each of the @n events @ev to the view pass @heap, then to the totals
 * pass @totals with what it did to the live blocks: one lookup of the
 * live blocks per event (the pass of `stats` and of run's summary).
 * Returns 0 or the first pass's negative errno.
 */
#define PASS_SLICE 512
static int hs_heap_view_then_totals(struct hs_memview_pass *heap,
				    struct hs_heap_totals_pass *totals,
				    const struct hs_trace_event *ev, size_t n)
{
	uint64_t gone_size[PASS_SLICE];
	uint8_t gone[PASS_SLICE];
	size_t i, k;
	int err = 0;

	/* in slices: the view's loop over a slice, then the totals' over
	 * the same events while they are in the cache */
	for (i = 0; i < n && !err; i += k) {
		k = n - i < PASS_SLICE ? n - i : PASS_SLICE;
		err = hs_memview_pass_events_gone(heap, ev + i, k, gone, gone_size);
		if (!err)
			err = hs_heap_totals_pass_events_known(totals, ev + i, k, gone,
							       gone_size);
	}
	return err;
}

static int stats_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct stats_pass *sp = ctx;

	return hs_heap_view_then_totals(sp->heap, &sp->totals, ev, n);
}

static int stats_live(void *ctx, uint64_t addr)
{
	struct stats_pass *sp = ctx;

	return hs_memview_pass_live(sp->heap, addr);
}

/* (the temporary view only summed: stats prints its totals alone) */
static int stats_pass_init(struct stats_pass *sp, const struct hs_trace *t)
{
	int err;

	memset(sp, 0, sizeof(*sp));
	hs_heap_totals_pass_init(&sp->totals, t, &sp->tot, &sp->curve);
	sp->opts = (struct hs_memview_opts)HS_MEMVIEW_OPTS_INIT;
	sp->opts.kind = HS_MEM_PEAK;
	err =
	    hs_memview_pass_new_heap(t, &sp->opts, &sp->src[SV_PEAK], &sp->src[SV_ALLOC],
				     &sp->src[SV_LEAKS], NULL, &sp->heap);
	if (!err)
		hs_memview_pass_sum_temporary(sp->heap);
	return err;
}

static void stats_pass_release(struct stats_pass *sp)
{
	int k;

	hs_heap_totals_pass_release(&sp->totals);
	hs_heap_curve_release(&sp->curve);
	hs_memview_pass_free(sp->heap);
	for (k = 0; k < SV__COUNT; k++)
		hs_source_release(&sp->src[k]);
}

/* The numbers that come from the trace's totals (totals.h). */
static void event_totals(const struct hs_heap_totals *tot, struct hs_heap_stats *s)
{
	memcpy(s->hist, tot->hist, sizeof(s->hist));
	s->events = tot->events;
	s->reallocs = tot->reallocs_est;
	s->frees = tot->frees_est;
	s->unmatched_frees = (double)tot->unmatched_frees;
	s->mmaps = (double)tot->mmaps;
	s->munmaps = (double)tot->munmaps;
	s->cpu_samples = (double)tot->cpu_samples;
	s->cpu_ms = tot->cpu_ms;
	s->wall_samples = (double)tot->wall_samples;
	s->wall_cpu_ms = tot->wall_cpu_ms;
	s->wall_blocked_ms = tot->wall_blocked_ms;
	s->wall_ready_ms = tot->wall_ready_ms;
	s->peak_heap_bytes = tot->peak_heap_est;
	s->peak_heap_ms = tot->peak_ns >= 0 ? (double)tot->peak_ns / 1e6 : -1;
	if (tot->peak_rss_ns >= 0) {
		s->peak_rss_bytes = (double)tot->peak_rss;
		s->peak_rss_ms = (double)tot->peak_rss_ns / 1e6;
	}
}

/*
 * top() on a thread of its own: stats' three lists of top call sites
 * (the alloc view's, the leaks', the peak's) are each a call tree of
 * their own view, with its FoldPats matched against every frame, and
 * once the events are read the second core has nothing else to do. The
 * views no longer change (any number of readers may share a source).
 * No thread: top() runs in top_wait(), as before.
 */
struct top_job {
	pthread_t th;
	int started;
	const struct hs_stack_source *src; /* NULL: no job */
	size_t n;
	struct hs_top_list *by_bytes, *by_count;
	double metric, count;
	struct hs_diag diag;
	int err;
};

static void *top_run(void *arg)
{
	struct top_job *j = arg;

	j->err =
	    top(j->src, j->n, j->by_bytes, j->by_count, &j->metric, &j->count, &j->diag);
	return NULL;
}

static void top_start(struct top_job *j, const struct hs_stack_source *src, size_t n,
		      struct hs_top_list *by_bytes, struct hs_top_list *by_count,
		      const struct hs_diag *diag)
{
	*j = (struct top_job){
	    .src = src, .n = n, .by_bytes = by_bytes, .by_count = by_count};
	j->diag = *diag; /* (its file name) */
	j->diag.set = 0;
	j->started = !pthread_create(&j->th, NULL, top_run, j);
}

/* The lists of top_start(): 0, or its error with its message in @diag. */
static int top_wait(struct top_job *j, struct hs_diag *diag)
{
	if (j->started)
		pthread_join(j->th, NULL);
	else
		top_run(j);
	if (j->err && j->diag.set)
		*diag = j->diag;
	else if (j->err)
		diag->set = 0; /* (stats_oom() says what it was) */
	return j->err;
}

/* The stats of trace @t once @sp has had its every event. */
static int stats_finish(struct stats_pass *sp, const struct hs_trace *t,
			const struct hs_stats_opts *o, struct hs_heap_stats *s,
			struct hs_diag *diag)
{
	struct hs_leak_totals leaks;
	struct top_job alloc_top = {0};
	size_t n = o && o->top ? o->top : 10, i;
	double m, c;
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->duration_ms = (double)t->duration_ns / 1e6;
	s->peak_rss_ms = -1;
	s->sampled = t->info.sample_bytes != 0;
	s->sample_bytes = t->info.sample_bytes;
	s->symbolized = t->syms.present;
	s->cut_off = t->cut_off;
	s->lost = t->has_footer ? t->footer[HS_FC_LOST] : 0;
	for (i = 0; i < t->nr_threads; i++)
		s->threads += t->threads[i].tid != 0; /* 0: the process's own records */
	hs_heap_totals_pass_finish(&sp->totals);
	event_totals(&sp->tot, s);
	err = hs_memview_pass_finish(sp->heap, diag);

	/* alloc: the top call sites by bytes and by count (beside the rest),
	 * and its totals */
	if (!err)
		top_start(&alloc_top, &sp->src[SV_ALLOC], n, &s->by_bytes, &s->by_count,
			  diag);
	if (!err) {
		hs_source_totals(&sp->src[SV_ALLOC], &s->bytes_allocated,
				 &s->allocations);
		if (s->duration_ms > 0)
			s->allocations_per_second =
			    s->allocations / (s->duration_ms / 1000);
	}
	/* the timelines */
	if (!err && hs_heap_curve_timelines(&sp->curve, t->rss_time, t->rss_bytes,
					    t->nr_rss, t->duration_ns, o ? o->points : 0,
					    &s->heap, &s->rss)) {
		hs_diag_set(diag, 0, "out of memory");
		err = -ENOMEM;
	}
	/* leaks, after the default suppressions */
	if (!err)
		err = hs_heap_leaks(&sp->src[SV_LEAKS], n, &s->by_leaked, &leaks, diag);
	if (!err) {
		s->leaked_bytes = leaks.bytes;
		s->leaked_blocks = leaks.blocks;
		s->suppressed_bytes = leaks.suppressed_bytes;
		s->suppressed_blocks = leaks.suppressed_blocks;
	}
	/* the blocks live at the peak */
	if (!err)
		err = top(&sp->src[SV_PEAK], n, &s->at_peak, NULL, &m, &c, diag);
	/* temporary allocations */
	if (!err)
		hs_memview_pass_temporary_totals(sp->heap, &s->temporary_bytes,
						 &s->temporary_allocations);
	/* the alloc view's top call sites (its error first, as when they
	 * came first) */
	if (alloc_top.src && top_wait(&alloc_top, diag))
		err = alloc_top.err;
	/* the views, for a caller that reads several traces as one */
	if (!err && o && o->keep_alloc) {
		hs_source_release(o->keep_alloc);
		*o->keep_alloc = sp->src[SV_ALLOC];
		hs_source_init(&sp->src[SV_ALLOC]);
	}
	if (!err && o && o->keep_leaks) {
		hs_source_release(o->keep_leaks);
		*o->keep_leaks = sp->src[SV_LEAKS];
		hs_source_init(&sp->src[SV_LEAKS]);
	}
	if (err)
		hs_heap_stats_release(s);
	return err;
}

static int stats_oom(int err, struct hs_diag *diag)
{
	if (err == -ENOMEM && !diag->set)
		hs_diag_set(diag, 0, "out of memory");
	return err;
}

int hs_heap_stats_compute(const struct hs_trace *t, const struct hs_stats_opts *o,
			  struct hs_heap_stats *s, struct hs_diag *diag)
{
	struct stats_pass sp;
	struct hs_trace_sink sink = {.events = stats_events, .ctx = &sp};
	int err;

	memset(s, 0, sizeof(*s));
	err = stats_pass_init(&sp, t);
	if (!err)
		err = hs_trace_feed(t, &sink);
	if (!err)
		err = stats_finish(&sp, t, o, s, diag);
	stats_pass_release(&sp);
	return stats_oom(err, diag);
}

int hs_heap_stats_compute_path(const char *path, const struct hs_stats_opts *o,
			       struct hs_trace *t, struct hs_heap_stats *s,
			       struct hs_diag *diag)
{
	struct stats_pass sp;
	struct hs_trace_sink sink = {
	    .events = stats_events, .live = stats_live, .ctx = &sp};
	int err;

	memset(s, 0, sizeof(*s));
	err = stats_pass_init(&sp, t);
	if (!err)
		err = hs_trace_stream(path, t, &sink, diag);
	if (!err) {
		err = stats_finish(&sp, t, o, s, diag);
		if (err)
			hs_trace_release(t);
	}
	stats_pass_release(&sp);
	if (err != -EAGAIN)
		return stats_oom(err, diag);
	/* not in time order: the trace is loaded */
	err = hs_trace_load(path, t, diag);
	if (err)
		return err;
	err = hs_heap_stats_compute(t, o, s, diag);
	if (err)
		hs_trace_release(t);
	return err;
}

/* --- run's summary ---------------------------------------------------------- */

/*
 * The totals and the leaks in one pass: the totals read the live blocks
 * from a peak pass of the whole trace (without the peak view's own
 * output: the totals have the peak) that gives the leaks view.
 */
struct hs_heap_summary_pass {
	struct hs_heap_totals_pass totals;
	struct hs_memview_opts opts;
	struct hs_memview_pass *heap;
	struct hs_stack_source leaks;
	void (*first_batch)(void *arg); /* cleared once called */
	void *first_arg;
};

static int summary_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct hs_heap_summary_pass *sp = ctx;

	if (sp->first_batch) {
		void (*first)(void *arg) = sp->first_batch;

		sp->first_batch = NULL;
		first(sp->first_arg);
	}
	return hs_heap_view_then_totals(sp->heap, &sp->totals, ev, n);
}

static int summary_live(void *ctx, uint64_t addr)
{
	struct hs_heap_summary_pass *sp = ctx;

	return hs_memview_pass_live(sp->heap, addr);
}

int hs_heap_summary_begin(const struct hs_trace *t, struct hs_heap_totals *tot,
			  void (*first_batch)(void *arg), void *arg,
			  struct hs_heap_summary_pass **pass, struct hs_trace_sink *sink)
{
	struct hs_heap_summary_pass *sp = hs_calloc(1, sizeof(*sp));
	int err;

	*pass = NULL;
	if (!sp)
		return -ENOMEM;
	sp->first_batch = first_batch;
	sp->first_arg = arg;
	hs_heap_totals_pass_init(&sp->totals, t, tot, NULL);
	sp->opts = (struct hs_memview_opts)HS_MEMVIEW_OPTS_INIT;
	sp->opts.kind = HS_MEM_PEAK;
	err = hs_memview_pass_new_heap(t, &sp->opts, NULL, NULL, &sp->leaks, NULL,
				       &sp->heap);
	if (err) {
		hs_heap_summary_free(sp);
		return err;
	}
	*sink = (struct hs_trace_sink){
	    .events = summary_events, .live = summary_live, .ctx = sp};
	*pass = sp;
	return 0;
}

void hs_heap_summary_free(struct hs_heap_summary_pass *sp)
{
	if (!sp)
		return;
	hs_heap_totals_pass_release(&sp->totals);
	hs_memview_pass_free(sp->heap);
	hs_source_release(&sp->leaks);
	hs_free(sp);
}

int hs_heap_summary_load(const char *path, struct hs_trace *t, struct hs_heap_totals *tot,
			 struct hs_heap_summary_pass **pass, struct hs_diag *diag)
{
	struct hs_trace_sink sink;
	int err;

	*pass = NULL;
	err = hs_trace_load(path, t, diag);
	if (err)
		return err;
	err = hs_heap_summary_begin(t, tot, NULL, NULL, pass, &sink);
	if (!err)
		err = hs_trace_feed(t, &sink);
	if (err) {
		hs_heap_summary_free(*pass);
		*pass = NULL;
		hs_trace_release(t);
	}
	return err;
}

int hs_heap_summary_finish(struct hs_heap_summary_pass *sp, struct hs_leak_totals *leaks,
			   struct hs_diag *diag)
{
	int err;

	memset(leaks, 0, sizeof(*leaks));
	hs_heap_totals_pass_finish(&sp->totals);
	err = hs_memview_pass_finish(sp->heap, diag);
	return err ? err : hs_heap_leaks(&sp->leaks, 0, NULL, leaks, diag);
}

int hs_heap_summary_path(const char *path, struct hs_trace *t, struct hs_heap_totals *tot,
			 struct hs_leak_totals *leaks, struct hs_diag *diag)
{
	struct hs_heap_summary_pass *sp;
	struct hs_trace_sink sink;
	int err;

	memset(leaks, 0, sizeof(*leaks));
	err = hs_heap_summary_begin(t, tot, NULL, NULL, &sp, &sink);
	if (!err)
		err = hs_trace_stream(path, t, &sink, diag);
	if (err == -EAGAIN) {
		/* not in time order: the same pass over the loaded events */
		hs_heap_summary_free(sp);
		err = hs_heap_summary_load(path, t, tot, &sp, diag);
	}
	if (!err) {
		err = hs_heap_summary_finish(sp, leaks, diag);
		if (err)
			hs_trace_release(t);
	}
	hs_heap_summary_free(sp);
	return stats_oom(err, diag);
}

/* --- JSON ------------------------------------------------------------------ */

/* A count or byte number: an integer when it is one, else a real. */
static json_t *num(double x)
{
	if (x == 0)
		return json_integer(0);
	if (fabs(x) < 9e15 && x == floor(x))
		return json_integer((json_int_t)x);
	return json_real(x);
}

static int set(json_t *o, const char *key, json_t *v)
{
	return v ? json_object_set_new(o, key, v) : -1;
}

json_t *hs_timeline_json(const struct hs_timeline *tl)
{
	json_t *a = json_array();
	size_t i;

	if (!a)
		return NULL;
	for (i = 0; i < tl->n; i++) {
		json_t *p = json_pack("[f, o]", tl->ms[i], num(tl->bytes[i]));

		if (!p || json_array_append_new(a, p)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *top_json(const struct hs_top_list *l)
{
	json_t *a = json_array();
	size_t i;

	if (!a)
		return NULL;
	for (i = 0; i < l->nr; i++) {
		json_t *p = json_pack(
		    "{s:o, s:o, s:o}", "name", hs_view_json_text(l->site[i].name),
		    "bytes", num(l->site[i].bytes), "count", num(l->site[i].count));

		if (!p || json_array_append_new(a, p)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *hist_json(const struct hs_heap_stats *s)
{
	json_t *a = json_array();
	unsigned k;

	if (!a)
		return NULL;
	for (k = 0; k < 65; k++) {
		json_t *p;

		if (s->hist[k].count == 0)
			continue;
		p = json_pack("{s:o, s:o, s:o, s:o}", "min", num((double)s->hist[k].min),
			      "max", num((double)s->hist[k].max), "count",
			      num(s->hist[k].count), "bytes", num(s->hist[k].bytes));
		if (!p || json_array_append_new(a, p)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *ms_or_null(double ms)
{
	return ms < 0 ? json_null() : json_real(ms);
}

json_t *hs_heap_stats_json(const struct hs_heap_stats *s)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= set(o, "complete", json_boolean(!s->cut_off));
	err |= set(o, "lost", json_integer((json_int_t)s->lost));
	err |= set(o, "symbolized", json_boolean(s->symbolized));
	err |= set(o, "sampled", json_boolean(s->sampled));
	err |= set(o, "sample_bytes", json_integer((json_int_t)s->sample_bytes));
	err |= set(o, "threads", json_integer((json_int_t)s->threads));
	err |= set(o, "duration_ms", json_real(s->duration_ms));
	err |= set(o, "total_allocations", num(s->allocations));
	err |= set(o, "total_frees", num(s->frees));
	err |= set(o, "total_reallocs", num(s->reallocs));
	err |= set(o, "bytes_allocated", num(s->bytes_allocated));
	err |= set(o, "allocations_per_second", json_real(s->allocations_per_second));
	if (s->cpu_samples || s->wall_samples) {
		err |= set(o, "cpu_samples", num(s->cpu_samples));
		err |= set(o, "cpu_ms", json_real(s->cpu_ms));
		err |= set(o, "wall_samples", num(s->wall_samples));
		err |= set(o, "wall_cpu_ms", json_real(s->wall_cpu_ms));
		err |= set(o, "wall_blocked_ms", json_real(s->wall_blocked_ms));
		err |= set(o, "wall_ready_ms", json_real(s->wall_ready_ms));
	}
	err |= set(o, "peak_heap_bytes", num(s->peak_heap_bytes));
	err |= set(o, "peak_heap_ms", ms_or_null(s->peak_heap_ms));
	/* no RSS sample: unknown (null), where an empty heap's peak is 0 */
	err |= set(o, "peak_rss_bytes",
		   s->peak_rss_ms < 0 ? json_null() : num(s->peak_rss_bytes));
	err |= set(o, "peak_rss_ms", ms_or_null(s->peak_rss_ms));
	err |= set(o, "leaked_bytes", num(s->leaked_bytes));
	err |= set(o, "leaked_blocks", num(s->leaked_blocks));
	err |= set(o, "suppressed_leaked_bytes", num(s->suppressed_bytes));
	err |= set(o, "suppressed_leaked_blocks", num(s->suppressed_blocks));
	err |= set(o, "temporary_allocations", num(s->temporary_allocations));
	err |= set(o, "temporary_bytes", num(s->temporary_bytes));
	err |= set(o, "unmatched_frees", num(s->unmatched_frees));
	err |= set(o, "mmaps", num(s->mmaps));
	err |= set(o, "munmaps", num(s->munmaps));
	err |= set(o, "size_histogram", hist_json(s));
	err |= set(o, "top_by_bytes", top_json(&s->by_bytes));
	err |= set(o, "top_by_count", top_json(&s->by_count));
	err |= set(o, "top_by_leaked", top_json(&s->by_leaked));
	err |= set(o, "top_at_peak", top_json(&s->at_peak));
	err |= set(o, "heap_timeline", hs_timeline_json(&s->heap));
	err |= set(o, "rss_timeline", hs_timeline_json(&s->rss));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}
