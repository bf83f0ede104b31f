/*
 * totals - a heap trace's totals as a sink of its events (see totals.h):
 * the live blocks in an address map, everything else in counters.
 */
#include "analysis/totals.h"
#include "common/alloc.h"
#include "common/u64map.h"
#include <errno.h>
#include <string.h>

/*
 * The pass's state (struct hs_heap_totals_pass, totals.h): the totals so
 * far and the live blocks (address -> size). Address 0 is never live: an
 * allocation there stays in the live bytes and blocks to the end
 * (zero_blocks), and a free there is unmatched.
 */

void hs_heap_curve_release(struct hs_heap_curve *c)
{
	hs_free(c->time);
	hs_free(c->max);
	hs_free(c->last);
	memset(c, 0, sizeof(*c));
}

/* A point of the curve at a new tick @time: curve_add()'s slow path. */
static int curve_append(struct hs_heap_curve *c, int64_t time, double v)
{
	size_t n = c->n;

	if (n == c->alloc) {
		size_t a = n ? 2 * n : 1024;
		int64_t *t = hs_realloc(c->time, a * sizeof(*t));
		double *m, *l;

		if (t)
			c->time = t;
		m = t ? hs_realloc(c->max, a * sizeof(*m)) : NULL;
		if (m)
			c->max = m;
		l = m ? hs_realloc(c->last, a * sizeof(*l)) : NULL;
		if (!l)
			return -ENOMEM;
		c->last = l;
		c->alloc = a;
	}
	c->time[n] = time;
	c->max[n] = v;
	c->last[n] = v;
	c->n++;
	return 0;
}

/*
 * Heap in use @v after an event at @time: the tick's point keeps its
 * highest and its last value. Inline, as nearly every event's tick is the
 * last one's. 0 or -ENOMEM.
 */
static inline int curve_add(struct hs_heap_curve *c, int64_t time, double v)
{
	size_t n = c->n;

	if (n && c->time[n - 1] == time) {
		if (v > c->max[n - 1])
			c->max[n - 1] = v;
		c->last[n - 1] = v;
		return 0;
	}
	return curve_append(c, time, v);
}

static double weight(const struct hs_trace *t, uint64_t size)
{
	return t->info.sample_bytes ? hs_trace_weight(t, size) : 1.0;
}

static unsigned bit_length(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

void hs_heap_totals_pass_init(struct hs_heap_totals_pass *ts, const struct hs_trace *t,
			      struct hs_heap_totals *out, struct hs_heap_curve *curve)
{
	unsigned k;

	memset(ts, 0, sizeof(*ts));
	ts->t = t;
	ts->out = out;
	ts->curve = curve;
	memset(out, 0, sizeof(*out));
	out->peak_ns = -1;
	out->peak_rss_ns = -1;
	for (k = 0; k < 65; k++) {
		out->hist[k].min = k ? (uint64_t)1 << (k - 1) : 0;
		out->hist[k].max = k == 0    ? 0
				   : k == 64 ? UINT64_MAX
					     : ((uint64_t)1 << k) - 1;
	}
}

/*
 * Event @e, where @gone says whether it took a block out of the live ones
 * (an allocation over a live block, or the free of one), of size @old.
 */
static int totals_apply(struct hs_heap_totals_pass *ts, const struct hs_trace_event *e,
			int gone, uint64_t old)
{
	struct hs_heap_totals *o = ts->out;
	double w;

	o->events++;
	if (o->peak_ns < 0)
		o->peak_ns = e->time; /* the heap as it starts: empty */
	switch (e->op) {
	case HS_OP_ALLOC:
		w = weight(ts->t, e->size);
		o->allocs++;
		o->bytes_allocated += e->size;
		if (hs_tag_is_realloc(e->fn)) {
			o->reallocs++;
			o->reallocs_est += w;
		}
		o->hist[bit_length(e->size)].count += w;
		o->hist[bit_length(e->size)].bytes += w * (double)e->size;
		if (!e->addr)
			ts->zero_blocks++;
		else if (!gone)
			ts->live_blocks++;
		if (gone) {
			/* a block at a live address: its free was not seen */
			ts->live_bytes -= old;
			ts->live_est -= (double)old * weight(ts->t, old);
		}
		ts->live_bytes += e->size;
		ts->live_est += (double)e->size * w;
		if (ts->live_bytes > o->peak_heap)
			o->peak_heap = ts->live_bytes;
		if (ts->live_est > o->peak_heap_est) {
			o->peak_heap_est = ts->live_est;
			o->peak_ns = e->time;
		}
		if (ts->curve)
			return curve_add(ts->curve, e->time, ts->live_est);
		break;
	case HS_OP_FREE:
		o->frees++;
		if (!gone) {
			o->unmatched_frees++;
			break;
		}
		ts->live_blocks--;
		ts->live_bytes -= old;
		ts->live_est -= (double)old * weight(ts->t, old);
		o->frees_est += weight(ts->t, old);
		if (ts->curve)
			return curve_add(ts->curve, e->time, ts->live_est);
		break;
	case HS_OP_MMAP:
		o->mmaps++;
		break;
	case HS_OP_MUNMAP:
		o->munmaps++;
		break;
	case HS_OP_SAMPLE:
		if (e->addr == HS_SAMPLE_CPU) {
			o->cpu_samples++;
			o->cpu_ns += e->size;
			o->cpu_ms += (double)e->size / 1e6;
			break;
		}
		o->wall_samples++;
		if (e->addr == HS_SAMPLE_WALL_CPU)
			o->wall_cpu_ms += (double)e->size / 1e6;
		else if (e->addr == HS_SAMPLE_WALL_READY)
			o->wall_ready_ms += (double)e->size / 1e6;
		else
			o->wall_blocked_ms += (double)e->size / 1e6;
		break;
	}
	return 0;
}

/* Event @e, with the live blocks in the pass's own map. */
static int totals_event(struct hs_heap_totals_pass *ts, const struct hs_trace_event *e)
{
	uint64_t old = 0;
	int gone = 0;

	if (e->op == HS_OP_ALLOC && e->addr) {
		gone = hs_u64map_put(&ts->live, e->addr, e->size, &old);
		if (gone < 0)
			return gone;
	} else if (e->op == HS_OP_FREE && e->addr) {
		gone = hs_u64map_del(&ts->live, e->addr, &old);
	}
	return totals_apply(ts, e, gone, old);
}

int hs_heap_totals_pass_event_known(struct hs_heap_totals_pass *ts,
				    const struct hs_trace_event *e, int gone,
				    uint64_t gone_size)
{
	return totals_apply(ts, e, gone, gone_size);
}

/*
 * totals_unsampled()'s counters and the curve's last point, held in
 * locals across a batch: the project builds with -fno-strict-aliasing,
 * so through the pointers the compiler would load and store every
 * counter at every event (any store may change them).
 */
struct acc {
	uint64_t events, allocs, frees, reallocs, bytes_allocated, peak_heap;
	uint64_t unmatched_frees, zero_blocks, live_blocks, live_bytes;
	double reallocs_est, frees_est, peak_heap_est, live_est;
	int64_t peak_ns;
	size_t cn;	    /* the curve's points (0: none, or no curve) */
	int64_t ctime;	    /* the last point's tick */
	double cmax, clast; /* its highest and last values */
};

static inline void acc_load(struct acc *a, const struct hs_heap_totals_pass *ts)
{
	const struct hs_heap_totals *o = ts->out;
	const struct hs_heap_curve *c = ts->curve;

	a->events = o->events;
	a->allocs = o->allocs;
	a->frees = o->frees;
	a->reallocs = o->reallocs;
	a->bytes_allocated = o->bytes_allocated;
	a->peak_heap = o->peak_heap;
	a->unmatched_frees = o->unmatched_frees;
	a->reallocs_est = o->reallocs_est;
	a->frees_est = o->frees_est;
	a->peak_heap_est = o->peak_heap_est;
	a->peak_ns = o->peak_ns;
	a->zero_blocks = ts->zero_blocks;
	a->live_blocks = ts->live_blocks;
	a->live_bytes = ts->live_bytes;
	a->live_est = ts->live_est;
	a->cn = c ? c->n : 0;
	a->ctime = a->cn ? c->time[a->cn - 1] : 0;
	a->cmax = a->cn ? c->max[a->cn - 1] : 0;
	a->clast = a->cn ? c->last[a->cn - 1] : 0;
}

static inline void acc_store(const struct acc *a, struct hs_heap_totals_pass *ts)
{
	struct hs_heap_totals *o = ts->out;
	struct hs_heap_curve *c = ts->curve;

	o->events = a->events;
	o->allocs = a->allocs;
	o->frees = a->frees;
	o->reallocs = a->reallocs;
	o->bytes_allocated = a->bytes_allocated;
	o->peak_heap = a->peak_heap;
	o->unmatched_frees = a->unmatched_frees;
	o->reallocs_est = a->reallocs_est;
	o->frees_est = a->frees_est;
	o->peak_heap_est = a->peak_heap_est;
	o->peak_ns = a->peak_ns;
	ts->zero_blocks = a->zero_blocks;
	ts->live_blocks = a->live_blocks;
	ts->live_bytes = a->live_bytes;
	ts->live_est = a->live_est;
	if (a->cn) {
		c->max[a->cn - 1] = a->cmax;
		c->last[a->cn - 1] = a->clast;
	}
}

/*
 * totals_apply() of an unsampled trace's allocations and frees (the
 * weights all 1) in one loop, the counters and the curve's last point in
 * locals (struct acc); the other events go through totals_apply(). The
 * same operations in the same order, so the same sums.
 */
static int totals_unsampled(struct hs_heap_totals_pass *ts,
			    const struct hs_trace_event *ev, size_t n,
			    const uint8_t *gone, const uint64_t *gone_size)
{
	struct hs_heap_totals *o = ts->out;
	struct hs_heap_curve *curve = ts->curve;
	struct acc a;
	size_t i;
	int err = 0;

	acc_load(&a, ts);
	for (i = 0; i < n && !err; i++) {
		const struct hs_trace_event *e = &ev[i];
		unsigned k;

		if (e->op == HS_OP_ALLOC) {
			a.events++;
			if (a.peak_ns < 0)
				a.peak_ns = e->time;
			a.allocs++;
			a.bytes_allocated += e->size;
			if (hs_tag_is_realloc(e->fn)) {
				a.reallocs++;
				a.reallocs_est += 1.0;
			}
			k = bit_length(e->size);
			o->hist[k].count += 1.0;
			o->hist[k].bytes += (double)e->size;
			if (!e->addr)
				a.zero_blocks++;
			else if (!gone[i])
				a.live_blocks++;
			if (gone[i]) {
				a.live_bytes -= gone_size[i];
				a.live_est -= (double)gone_size[i];
			}
			a.live_bytes += e->size;
			a.live_est += (double)e->size;
			if (a.live_bytes > a.peak_heap)
				a.peak_heap = a.live_bytes;
			if (a.live_est > a.peak_heap_est) {
				a.peak_heap_est = a.live_est;
				a.peak_ns = e->time;
			}
		} else if (e->op == HS_OP_FREE) {
			a.events++;
			if (a.peak_ns < 0)
				a.peak_ns = e->time;
			a.frees++;
			if (!gone[i]) {
				a.unmatched_frees++;
				continue;
			}
			a.live_blocks--;
			a.live_bytes -= gone_size[i];
			a.live_est -= (double)gone_size[i];
			a.frees_est += 1.0;
		} else {
			acc_store(&a, ts);
			err = totals_apply(ts, e, gone[i], gone[i] ? gone_size[i] : 0);
			acc_load(&a, ts);
			continue;
		}
		if (!curve)
			continue;
		/* curve_add() with the last point in locals */
		if (a.cn && a.ctime == e->time) {
			if (a.live_est > a.cmax)
				a.cmax = a.live_est;
			a.clast = a.live_est;
			continue;
		}
		acc_store(&a, ts);
		err = curve_append(curve, e->time, a.live_est);
		acc_load(&a, ts);
	}
	acc_store(&a, ts);
	return err;
}

int hs_heap_totals_pass_events_known(struct hs_heap_totals_pass *ts,
				     const struct hs_trace_event *ev, size_t n,
				     const uint8_t *gone, const uint64_t *gone_size)
{
	size_t i;
	int err = 0;

	if (!ts->t->info.sample_bytes)
		return totals_unsampled(ts, ev, n, gone, gone_size);
	for (i = 0; i < n && !err; i++)
		err = totals_apply(ts, &ev[i], gone[i], gone[i] ? gone_size[i] : 0);
	return err;
}

int hs_heap_totals_pass_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = totals_event(ctx, &ev[i]);
	return err;
}

int hs_heap_totals_pass_live(void *ctx, uint64_t addr)
{
	struct hs_heap_totals_pass *ts = ctx;

	return addr && hs_u64map_has(&ts->live, addr);
}

/* What is left live, and the RSS records (a stream has them at its end). */
void hs_heap_totals_pass_finish(struct hs_heap_totals_pass *ts)
{
	const struct hs_trace *t = ts->t;
	struct hs_heap_totals *o = ts->out;
	size_t i;

	/* an exec frees the heap of the image it replaces: no leaks (as the
	 * leaks view has none) */
	if (!(t->has_end && t->end_reason == HS_END_EXEC)) {
		o->leaked_bytes = ts->live_bytes;
		o->leaked_blocks = ts->live_blocks + ts->zero_blocks;
	}
	for (i = 0; i < t->nr_rss; i++)
		if (t->rss_bytes[i] > o->peak_rss || o->peak_rss_ns < 0) {
			o->peak_rss = t->rss_bytes[i];
			o->peak_rss_ns = t->rss_time[i];
		}
	hs_u64map_release(&ts->live);
}

void hs_heap_totals_pass_release(struct hs_heap_totals_pass *ts)
{
	hs_u64map_release(&ts->live);
}

int hs_heap_totals(const struct hs_trace *t, struct hs_heap_totals *out)
{
	struct hs_heap_totals_pass ts;
	struct hs_trace_event e;
	size_t i;
	int err = 0;

	hs_heap_totals_pass_init(&ts, t, out, NULL);
	for (i = 0; i < t->nr_events && !err; i++) {
		hs_trace_event_get(t, i, &e);
		err = totals_event(&ts, &e);
	}
	hs_heap_totals_pass_finish(&ts);
	if (err)
		hs_heap_totals_pass_init(&ts, t, out, NULL);
	return err;
}

int hs_heap_totals_path(const char *path, struct hs_trace *t, struct hs_heap_totals *out,
			struct hs_diag *diag)
{
	struct hs_heap_totals_pass ts;
	struct hs_trace_sink sink = {.events = hs_heap_totals_pass_events,
				     .live = hs_heap_totals_pass_live,
				     .ctx = &ts};
	int err;

	hs_heap_totals_pass_init(&ts, t, out, NULL);
	err = hs_trace_stream(path, t, &sink, diag);
	if (err == -EAGAIN) {
		/* not in time order: the events the sink had go, the trace is loaded */
		hs_u64map_release(&ts.live);
		hs_heap_totals_pass_init(&ts, t, out, NULL);
		err = hs_trace_load(path, t, diag);
		if (!err) {
			err = hs_heap_totals(t, out);
			if (err)
				hs_trace_release(t);
		}
		return err;
	}
	if (!err)
		hs_heap_totals_pass_finish(&ts);
	else
		hs_u64map_release(&ts.live);
	return err;
}
