/*
 * Tests of the streaming analysis core: the views and the totals as
 * consumers of one pass over the events (hs_memview_pass_*,
 * hs_heap_totals_pass_*, memviews.h and totals.h), the peak pass that
 * gives the alloc, leaks and temporary views too, run's summary and
 * stats in one pass
 * streamed or loaded (hs_heap_stats_compute_path()), the peak view's
 * one-pass live set against a replay of the events up to the peak, and
 * the heap curve's one point per clock tick.
 *
 * The trace is pseudo-random: allocations and frees over a few dozen
 * addresses (so addresses are reused, blocks replaced without a free,
 * and some frees match nothing), some at address 0, several events per
 * clock tick, three stacks. The test keeps its own copy of the events to
 * compute what the views must say.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "analysis/memviews.h"
#include "analysis/stats.h"
#include "analysis/totals.h"
#include "common/alloc.h"
#include "format/trace_reader.h"
#include "trace_builder.h"

#define MS 1000000 /* ticks (ns) per ms */
#define NR_EVENTS 3000
#define NR_ADDRS 24

/* The events as the test wrote them (one thread: file order is time order). */
struct ev {
	int64_t time;
	int alloc;
	uint64_t addr, size;
};

static struct ev evs[NR_EVENTS];

static uint32_t rnd_state;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* The random trace into @b (and evs[]); mappings when @mappings. */
static void build_random(struct tb *b, unsigned seed, int mappings)
{
	uint64_t prev = 0;
	int64_t time = 0;
	uint8_t *p;
	size_t i;

	rnd_state = seed;
	tb_init(b);
	p = tb_p(b);
	p = put_process(p);
	p = put_app_main(p);
	for (i = 0; i < NR_EVENTS; i++) {
		unsigned slot = rnd() % NR_ADDRS;
		int64_t dt = rnd() % 8 == 0 ? MS + rnd() % 1000 : 0;
		struct ev *e = &evs[i];

		time += dt;
		e->time = time;
		e->addr = slot ? 0x10000 + (uint64_t)slot * 0x100 : 0;
		e->alloc = rnd() % 2;
		e->size = e->alloc ? 1 + rnd() % 500 : 0;
		if (e->alloc)
			p = put_alloc(b, p, HS_TAG_MALLOC, dt, (int64_t)(e->addr - prev),
				      e->size, 1 + rnd() % 3);
		else
			p = put_free(b, p, dt, (int64_t)(e->addr - prev));
		prev = e->addr;
		if (mappings && i % 500 == 0) {
			/* a mapping, then half of it unmapped (no heap event) */
			b->events += 2;
			p = hs_enc_mmap(p, 0, (int64_t)(0x900000 - prev), 0x4000, 3, 0x22, 2);
			p = hs_enc_munmap(p, 0, 0x2000, 0x2000);
			prev = 0x902000;
		}
	}
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
	p = put_end(tb_p(b), (uint64_t)time + MS, HS_END_EXIT, 0);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, 0);
}

static void write_trace(const struct tb *b, char *path)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->buf, b->len), (ssize_t)b->len);
	close(fd);
}

/* The live blocks by address slot while the events are replayed. */
struct replay {
	uint64_t size[NR_ADDRS];
	int live[NR_ADDRS];
	double in_use; /* address 0's blocks included, as the views count */
};

static unsigned slot_of(uint64_t addr)
{
	return addr ? (unsigned)((addr - 0x10000) / 0x100) : 0;
}

/* Apply evs[i]; 1 when the heap changed. */
static int replay_step(struct replay *r, size_t i)
{
	const struct ev *e = &evs[i];
	unsigned s = slot_of(e->addr);

	if (e->alloc) {
		if (e->addr && r->live[s])
			r->in_use -= (double)r->size[s];
		if (e->addr) {
			r->live[s] = 1;
			r->size[s] = e->size;
		}
		r->in_use += (double)e->size;
		return 1;
	}
	if (!e->addr || !r->live[s])
		return 0;
	r->live[s] = 0;
	r->in_use -= (double)r->size[s];
	return 1;
}

/*
 * What the peak view of [@lo_ms, @hi_ms] must say, the slow way: find the
 * moment (the heap as the range starts, then every higher heap in use),
 * then replay the events before it and add up what is live.
 */
static void reference_peak(double lo_ms, double hi_ms, double *bytes, double *blocks,
			   int64_t *peak_ns, double *peak_bytes)
{
	double lo = isnan(lo_ms) ? -INFINITY : lo_ms * 1e6 - 600,
	       hi = isnan(hi_ms) ? INFINITY : hi_ms * 1e6 + 600, peak = 0;
	struct replay r;
	size_t i, upto = 0;
	unsigned s;
	int have = 0;

	memset(&r, 0, sizeof(r));
	*peak_ns = -1;
	for (i = 0;; i++) {
		int end = i == NR_EVENTS || (double)evs[i].time > hi;

		if (!have && (end ? isfinite(lo) : (double)evs[i].time >= lo)) {
			have = 1;
			peak = r.in_use;
			upto = i;
			*peak_ns = isfinite(lo) ? (int64_t)(lo + 600) : evs[i].time;
		}
		if (end)
			break;
		if (replay_step(&r, i) && have && r.in_use > peak) {
			peak = r.in_use;
			upto = i + 1;
			*peak_ns = evs[i].time;
		}
	}
	*peak_bytes = have ? peak : 0;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < upto; i++)
		replay_step(&r, i);
	*bytes = *blocks = 0;
	for (s = 1; s < NR_ADDRS; s++)
		if (r.live[s]) {
			*bytes += (double)r.size[s];
			*blocks += 1;
		}
}

/* The peak view, loaded and streamed, equals the replay for several ranges. */
static void peak_in_one_pass(void **state)
{
	static const double ranges[][2] = {
	    {NAN, NAN}, {20, 60}, {NAN, 15}, {100, NAN}, {33.3, 33.4}, {1e9, NAN},
	    {-5, 1},
	};
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-pass-XXXXXX";
	struct hs_trace t;
	struct tb b;
	unsigned seed, k;

	(void)state;
	for (seed = 1; seed <= 4; seed++) {
		build_random(&b, seed, 0);
		strcpy(path, "/tmp/hs-heap-pass-XXXXXX");
		write_trace(&b, path);
		assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
		for (k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
			struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
			struct hs_memview_info li, si;
			struct hs_stack_source ls, ss;
			double want_bytes, want_blocks, pb, bytes, blocks;
			int64_t pns;

			o.kind = HS_MEM_PEAK;
			o.start_ms = ranges[k][0];
			o.end_ms = ranges[k][1];
			reference_peak(o.start_ms, o.end_ms, &want_bytes, &want_blocks, &pns,
				       &pb);
			assert_int_equal(hs_memview_build(&t, &o, &ls, &li, &diag), 0);
			assert_int_equal(hs_memview_build_path(path, &o, &ss, &si, &diag), 0);
			hs_source_totals(&ls, &bytes, &blocks);
			assert_true(bytes == want_bytes);
			assert_true(blocks == want_blocks);
			assert_true(li.peak_ns == pns);
			assert_true(li.peak_bytes == pb);
			hs_source_totals(&ss, &bytes, &blocks);
			assert_true(bytes == want_bytes);
			assert_true(blocks == want_blocks);
			assert_true(si.peak_ns == pns);
			assert_true(si.peak_bytes == pb);
			assert_int_equal(ss.nr_samples, ls.nr_samples);
			hs_source_release(&ls);
			hs_source_release(&ss);
		}
		hs_trace_release(&t);
		unlink(path);
		free(b.buf);
	}
}

/* Several views fed by one stream */
struct fan {
	struct hs_memview_pass *pass[4];
	size_t n;
};

static int fan_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct fan *f = ctx;
	size_t i;
	int err = 0;

	for (i = 0; i < f->n && !err; i++)
		err = hs_memview_pass_events(f->pass[i], ev, n);
	return err;
}

static int fan_live(void *ctx, uint64_t addr)
{
	struct fan *f = ctx;

	return hs_memview_pass_live(f->pass[1], addr); /* the net view's */
}

static void same_source(const struct hs_stack_source *a, const struct hs_stack_source *c)
{
	size_t i;

	assert_int_equal(a->nr_samples, c->nr_samples);
	assert_int_equal(a->nr_stacks, c->nr_stacks);
	for (i = 0; i < a->nr_samples; i++) {
		assert_true(a->time[i] == c->time[i]);
		assert_true(a->metric[i] == c->metric[i]);
		assert_true(a->count[i] == c->count[i]);
		assert_int_equal(a->stack[i], c->stack[i]);
	}
}

/* One stream feeds alloc, net, peak and mmap: each as built alone. */
static void views_share_one_pass(void **state)
{
	static const enum hs_memview_kind kinds[4] = {HS_MEM_ALLOC, HS_MEM_NET, HS_MEM_PEAK,
						      HS_MEM_MMAP};
	struct hs_memview_opts o[4];
	struct hs_stack_source got[4], want;
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-pass-XXXXXX";
	struct fan f = {.n = 4};
	struct hs_trace_sink sink = {.events = fan_events, .live = fan_live, .ctx = &f};
	struct hs_trace t, loaded;
	struct tb b;
	size_t i;

	(void)state;
	build_random(&b, 7, 1);
	write_trace(&b, path);
	for (i = 0; i < 4; i++) {
		o[i] = (struct hs_memview_opts)HS_MEMVIEW_OPTS_INIT;
		o[i].kind = kinds[i];
		assert_int_equal(hs_memview_pass_new(&t, &o[i], &got[i], NULL, &f.pass[i]), 0);
	}
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
	assert_int_equal(t.nr_events, 0); /* nothing kept per event */
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &loaded, &diag), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(hs_memview_pass_finish(f.pass[i], &diag), 0);
		assert_int_equal(hs_memview_build(&loaded, &o[i], &want, NULL, &diag), 0);
		assert_true(want.nr_samples > 0);
		same_source(&got[i], &want);
		hs_source_release(&want);
		hs_source_release(&got[i]);
		hs_memview_pass_free(f.pass[i]);
	}
	hs_trace_release(&t);
	hs_trace_release(&loaded);
	unlink(path);
	free(b.buf);
}

/*
 * The heap timeline of @points buckets over @duration_ns, the slow way:
 * each bucket's start and the highest heap in use within it, counting
 * the value it starts with.
 */
static void reference_timeline(int64_t duration_ns, size_t points,
			       const struct hs_timeline *tl)
{
	double width = (double)duration_ns / (double)points, carry = 0;
	struct replay r;
	size_t i = 0, k;

	memset(&r, 0, sizeof(r));
	assert_int_equal(tl->n, points);
	for (k = 0; k < points; k++) {
		double m = carry;

		for (; i < NR_EVENTS && (size_t)((double)evs[i].time / width) <= k; i++)
			if (replay_step(&r, i) && r.in_use > m)
				m = r.in_use;
		carry = r.in_use;
		assert_true(fabs(tl->ms[k] - (double)k * width / 1e6) < 1e-9);
		assert_true(tl->bytes[k] == m);
	}
}

/*
 * The peak pass that also gives alloc, leaks and temporary: each equals
 * the view built alone, streamed and from the loaded trace.
 */
static void heap_pass_gives_four_views(void **state)
{
	static const enum hs_memview_kind kinds[4] = {HS_MEM_PEAK, HS_MEM_ALLOC,
						      HS_MEM_LEAKS, HS_MEM_TEMPORARY};
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT, alone = HS_MEMVIEW_OPTS_INIT;
	struct hs_stack_source got[4], want;
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-pass-XXXXXX";
	struct hs_memview_pass *pass;
	struct hs_trace t, loaded;
	struct tb b;
	size_t i;
	int streamed;

	(void)state;
	build_random(&b, 5, 1);
	write_trace(&b, path);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &loaded, &diag), 0);
	o.kind = HS_MEM_PEAK;
	for (streamed = 0; streamed < 2; streamed++) {
		struct hs_trace_sink sink = {.events = hs_memview_pass_events,
					     .live = hs_memview_pass_live};

		assert_int_equal(hs_memview_pass_new_heap(streamed ? &t : &loaded, &o, &got[0],
							  &got[1], &got[2], &got[3],
							  &pass),
				 0);
		sink.ctx = pass;
		if (streamed)
			assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
		for (i = 0; !streamed && i < loaded.nr_events; i++) {
			struct hs_trace_event e;

			hs_trace_event_get(&loaded, i, &e);
			assert_int_equal(hs_memview_pass_events(pass, &e, 1), 0);
		}
		assert_int_equal(hs_memview_pass_finish(pass, &diag), 0);
		for (i = 0; i < 4; i++) {
			alone.kind = kinds[i];
			assert_int_equal(hs_memview_build(&loaded, &alone, &want, NULL, &diag),
					 0);
			assert_true(want.nr_samples > 0);
			same_source(&got[i], &want);
			assert_string_equal(got[i].view_name, want.view_name);
			assert_string_equal(got[i].defaults.fold, want.defaults.fold);
			if (kinds[i] == HS_MEM_LEAKS)
				assert_string_equal(got[i].defaults.exc, want.defaults.exc);
			hs_source_release(&want);
			hs_source_release(&got[i]);
		}
		hs_memview_pass_free(pass);
		if (streamed)
			hs_trace_release(&t);
	}
	hs_trace_release(&loaded);
	unlink(path);
	free(b.buf);
}

/*
 * A trace whose peak (a large block at node 1, one at node 2) comes
 * before the allocations of node 3 and of other size classes, and a
 * block that leaks: the peak view has fewer keys than the others.
 */
static void build_peak_then_new_node(struct tb *b)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process(p);
	p = put_app_main(p);
	p = put_alloc(b, p, HS_TAG_MALLOC, MS, 0x10000, 100000, 1);
	p = put_alloc(b, p, HS_TAG_MALLOC, 0, 0x100, 300, 2);
	p = put_free(b, p, MS, -0x100);
	p = put_alloc(b, p, HS_TAG_MALLOC, MS, 0x200, 20, 3);
	p = put_alloc(b, p, HS_TAG_CALLOC, MS, 0x100, 5000, 2);
	p = put_free(b, p, MS, -0x200);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
	p = put_end(tb_p(b), 10 * MS, HS_END_EXIT, 0);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, 0);
}

/* @a and @c have the same frames (by name) and stacks (frame, caller, location). */
static void same_stack_tables(const struct hs_stack_source *a,
			      const struct hs_stack_source *c)
{
	size_t i;

	assert_int_equal(hs_source_nr_frames(a), hs_source_nr_frames(c));
	for (i = 0; i < hs_source_nr_frames(a); i++)
		assert_string_equal(hs_source_frame_name(a, (uint32_t)i),
				    hs_source_frame_name(c, (uint32_t)i));
	assert_int_equal(a->nr_stacks, c->nr_stacks);
	assert_int_equal(a->nr_locs, c->nr_locs);
	for (i = 0; i < a->nr_stacks; i++) {
		assert_int_equal(a->stack_frame[i], c->stack_frame[i]);
		assert_int_equal(a->stack_caller[i], c->stack_caller[i]);
		assert_int_equal(hs_source_stack_loc(a, (uint32_t)i),
				 hs_source_stack_loc(c, (uint32_t)i));
	}
}

/*
 * The four outputs of the heap pass share stack builders (the peak's
 * stacks and the temporary view's are copies of the alloc view's): each
 * output's frames and stacks are those of the view built alone, with size
 * classes (more stacks per node) and without.
 */
static void heap_pass_stacks_as_built_alone(void **state)
{
	static const enum hs_memview_kind kinds[4] = {HS_MEM_PEAK, HS_MEM_ALLOC,
						      HS_MEM_LEAKS, HS_MEM_TEMPORARY};
	struct hs_stack_source got[4], want;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_memview_pass *pass;
	struct hs_trace loaded;
	struct tb b;
	size_t i;
	int classes;

	(void)state;
	build_peak_then_new_node(&b);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &loaded, &diag), 0);
	for (classes = 0; classes < 2; classes++) {
		struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
		struct hs_memview_opts alone = HS_MEMVIEW_OPTS_INIT;

		o.kind = HS_MEM_PEAK;
		o.size_classes = alone.size_classes = classes;
		assert_int_equal(hs_memview_pass_new_heap(&loaded, &o, &got[0], &got[1],
							  &got[2], &got[3], &pass),
				 0);
		for (i = 0; i < loaded.nr_events; i++) {
			struct hs_trace_event e;

			hs_trace_event_get(&loaded, i, &e);
			assert_int_equal(hs_memview_pass_events(pass, &e, 1), 0);
		}
		assert_int_equal(hs_memview_pass_finish(pass, &diag), 0);
		/* the peak has fewer stacks than alloc: a copy of a prefix */
		assert_true(got[0].nr_stacks < got[1].nr_stacks);
		for (i = 0; i < 4; i++) {
			alone.kind = kinds[i];
			assert_int_equal(hs_memview_build(&loaded, &alone, &want, NULL, &diag),
					 0);
			same_source(&got[i], &want);
			same_stack_tables(&got[i], &want);
			hs_source_release(&want);
			hs_source_release(&got[i]);
		}
		hs_memview_pass_free(pass);
	}
	hs_trace_release(&loaded);
	free(b.buf);
}

/*
 * The totals fed with the view's live blocks (what stats does) equal the
 * totals that keep their own.
 */
static void totals_from_the_views_live_blocks(void **state)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_stack_source src[4];
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_heap_totals want, got;
	struct hs_heap_totals_pass tp;
	struct hs_memview_pass *pass;
	struct hs_trace t;
	struct tb b;
	size_t i, gone_events = 0;
	unsigned k;

	(void)state;
	build_random(&b, 9, 1);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
	assert_int_equal(hs_heap_totals(&t, &want), 0);
	o.kind = HS_MEM_PEAK;
	assert_int_equal(
	    hs_memview_pass_new_heap(&t, &o, &src[0], &src[1], &src[2], &src[3], &pass), 0);
	hs_heap_totals_pass_init(&tp, &t, &got, NULL);
	for (i = 0; i < t.nr_events; i++) {
		struct hs_trace_event e;
		uint64_t size = 0;
		int gone;

		hs_trace_event_get(&t, i, &e);
		gone = hs_memview_pass_event(pass, &e, &size);
		assert_true(gone == 0 || gone == 1);
		gone_events += (size_t)gone;
		assert_int_equal(hs_heap_totals_pass_event_known(&tp, &e, gone, size), 0);
	}
	hs_heap_totals_pass_finish(&tp);
	assert_true(gone_events > 100);
	assert_true(want.unmatched_frees > 0 && want.leaked_blocks > 0);
	assert_int_equal(got.events, want.events);
	assert_int_equal(got.unmatched_frees, want.unmatched_frees);
	assert_int_equal(got.leaked_bytes, want.leaked_bytes);
	assert_int_equal(got.leaked_blocks, want.leaked_blocks);
	assert_int_equal(got.peak_heap, want.peak_heap);
	assert_true(got.peak_heap_est == want.peak_heap_est);
	assert_true(got.peak_ns == want.peak_ns);
	assert_true(got.frees_est == want.frees_est);
	assert_int_equal(got.mmaps, want.mmaps);
	for (k = 0; k < 65; k++)
		assert_true(got.hist[k].count == want.hist[k].count);
	hs_heap_totals_pass_release(&tp);
	hs_memview_pass_free(pass);
	for (k = 0; k < 4; k++)
		hs_source_release(&src[k]);
	hs_trace_release(&t);
	free(b.buf);
}

/* One heap pass and the totals beside it, fed one way or the other. */
struct fed {
	struct hs_stack_source src[4];
	struct hs_heap_totals tot;
	struct hs_heap_curve curve;
	struct hs_heap_totals_pass tp;
	struct hs_memview_pass *pass;
};

/*
 * @f fed every event of @t: one at a time, or (@batched) in slices of
 * random lengths through the batch calls (what stats and run's summary
 * use), then finished.
 */
static void feed_heap_pass(struct fed *f, const struct hs_trace *t, int batched)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace_event ev[700];
	uint64_t gone_size[700];
	uint8_t gone[700];
	size_t i = 0, k, n;

	memset(f, 0, sizeof(*f));
	o.kind = HS_MEM_PEAK;
	assert_int_equal(hs_memview_pass_new_heap(t, &o, &f->src[0], &f->src[1],
						  &f->src[2], &f->src[3], &f->pass),
			 0);
	hs_heap_totals_pass_init(&f->tp, t, &f->tot, &f->curve);
	while (i < t->nr_events) {
		n = batched ? 1 + rnd() % 700 : 1;
		if (n > t->nr_events - i)
			n = t->nr_events - i;
		for (k = 0; k < n; k++)
			hs_trace_event_get(t, i + k, &ev[k]);
		if (batched) {
			assert_int_equal(
			    hs_memview_pass_events_gone(f->pass, ev, n, gone, gone_size), 0);
			assert_int_equal(hs_heap_totals_pass_events_known(&f->tp, ev, n, gone,
									  gone_size),
					 0);
		} else {
			int g = hs_memview_pass_event(f->pass, &ev[0], &gone_size[0]);

			assert_true(g == 0 || g == 1);
			assert_int_equal(
			    hs_heap_totals_pass_event_known(&f->tp, &ev[0], g, gone_size[0]),
			    0);
		}
		i += n;
	}
	hs_heap_totals_pass_finish(&f->tp);
	assert_int_equal(hs_memview_pass_finish(f->pass, &diag), 0);
}

static void fed_release(struct fed *f)
{
	unsigned k;

	hs_memview_pass_free(f->pass);
	hs_heap_curve_release(&f->curve);
	for (k = 0; k < 4; k++)
		hs_source_release(&f->src[k]);
}

/*
 * The batch calls give what the one-event calls give: the four views,
 * the totals and the heap curve, on an unsampled trace (its own loop)
 * and a sampled one (event by event).
 */
static void heap_pass_batched_as_one_by_one(void **state)
{
	static const uint64_t sample_bytes[2] = {0, 256};
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct fed one, many;
	struct hs_trace t;
	struct tb b;
	unsigned s, k;
	size_t i;

	(void)state;
	for (s = 0; s < 2; s++) {
		build_random(&b, 31 + s, 1);
		assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
		t.info.sample_bytes = sample_bytes[s];
		feed_heap_pass(&one, &t, 0);
		feed_heap_pass(&many, &t, 1);
		for (k = 0; k < 4; k++) {
			same_source(&many.src[k], &one.src[k]);
			same_stack_tables(&many.src[k], &one.src[k]);
		}
		assert_true(one.src[1].nr_samples > 100 && one.src[3].nr_samples > 10);
		assert_memory_equal(&many.tot, &one.tot, sizeof(one.tot));
		assert_int_equal(many.curve.n, one.curve.n);
		for (i = 0; i < one.curve.n; i++) {
			assert_true(many.curve.time[i] == one.curve.time[i]);
			assert_true(many.curve.max[i] == one.curve.max[i]);
			assert_true(many.curve.last[i] == one.curve.last[i]);
		}
		fed_release(&one);
		fed_release(&many);
		hs_trace_release(&t);
		free(b.buf);
	}
}

/*
 * A live table large enough for huge pages (100k blocks: 4 MB of slots
 * after its last doubling), filled and emptied in a random order: every
 * free finds its block, and the peak is every block's bytes.
 */
static void live_table_of_many_blocks(void **state)
{
	enum { BLOCKS = 100000, SLICE = 512 };
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source src[4];
	struct hs_heap_totals tot;
	struct hs_heap_totals_pass tp;
	struct hs_memview_pass *pass;
	struct hs_trace_event ev[SLICE];
	uint64_t gone_size[SLICE], bytes = 0, *order;
	uint8_t gone[SLICE];
	double peak = 0;
	struct hs_trace t;
	struct tb b;
	size_t i, k, nr_gone = 0;

	(void)state;
	build_random(&b, 5, 0);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
	order = malloc(BLOCKS * sizeof(*order));
	assert_non_null(order);
	for (i = 0; i < BLOCKS; i++)
		order[i] = 0x100000 + 48 * (uint64_t)i;
	for (i = BLOCKS - 1; i > 0; i--) { /* the frees' order */
		size_t j = (size_t)(((uint64_t)rnd() << 24 | rnd()) % (i + 1));
		uint64_t x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	o.kind = HS_MEM_PEAK;
	assert_int_equal(
	    hs_memview_pass_new_heap(&t, &o, &src[0], &src[1], &src[2], &src[3], &pass), 0);
	hs_heap_totals_pass_init(&tp, &t, &tot, NULL);
	for (i = 0; i < 2 * BLOCKS; i += SLICE) {
		for (k = 0; k < SLICE && i + k < 2 * BLOCKS; k++) {
			size_t n = i + k;

			memset(&ev[k], 0, sizeof(ev[k]));
			ev[k].time = (int64_t)(n / 64);
			ev[k].node = HS_TRACE_NONE;
			ev[k].fn = HS_TAG_MALLOC;
			if (n < BLOCKS) {
				ev[k].op = HS_OP_ALLOC;
				ev[k].addr = 0x100000 + 48 * (uint64_t)n;
				ev[k].size = 1 + n % 300;
				bytes += ev[k].size;
			} else {
				ev[k].op = HS_OP_FREE;
				ev[k].fn = HS_TAG_FREE;
				ev[k].addr = order[n - BLOCKS];
			}
		}
		assert_int_equal(hs_memview_pass_events_gone(pass, ev, k, gone, gone_size), 0);
		assert_int_equal(hs_heap_totals_pass_events_known(&tp, ev, k, gone, gone_size),
				 0);
		while (k-- > 0)
			nr_gone += gone[k];
	}
	hs_heap_totals_pass_finish(&tp);
	assert_int_equal(hs_memview_pass_finish(pass, &diag), 0);
	assert_int_equal(nr_gone, BLOCKS);
	assert_int_equal(tot.peak_heap, bytes);
	assert_int_equal(tot.unmatched_frees, 0);
	assert_int_equal(tot.leaked_blocks, 0);
	for (i = 0; i < src[0].nr_samples; i++)
		peak += src[0].metric[i];
	assert_true(peak == (double)bytes);
	assert_int_equal(src[2].nr_samples, 0); /* no leaks */
	hs_memview_pass_free(pass);
	for (k = 0; k < 4; k++)
		hs_source_release(&src[k]);
	free(order);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * A live table that grows in place (its mapping doubled, the blocks
 * moved within it) while blocks come and go, then shrinks in place as it
 * empties: 300k blocks at addresses spread over the table (16-byte
 * aligned, in a scrambled order), every third one freed while the table
 * fills, all but a twentieth of the others at random once all are made
 * (the table halves three times). Every free finds its block, the peak
 * is the heap after the last allocation (its blocks, mostly gone, fit
 * in the shrunk table's mapping), and the leaks are exactly the blocks
 * left.
 */
#define SPREAD 300000
static uint64_t spread_addr(size_t i)
{
	return 0x10000000 + 16 * (((uint64_t)i * 0x9e3779b1u) & 0xffffff);
}

static void live_table_grows_in_place(void **state)
{
	enum { SLICE = 512 };
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source src[4];
	struct hs_memview_pass *pass;
	struct hs_trace_event *all, ev[SLICE];
	uint64_t gone_size[SLICE], in_use = 0, peak = 0, left = 0, nr_left = 0;
	uint8_t gone[SLICE], *freed;
	double leaked = 0, leaked_count = 0;
	size_t i, k, n = 0, nr_gone = 0, nr_frees = 0, *late;
	size_t nr_late = 0;
	struct hs_trace t;
	struct tb b;

	(void)state;
	build_random(&b, 7, 0);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
	all = calloc(2 * SPREAD, sizeof(*all));
	freed = calloc(SPREAD, 1);
	late = malloc(SPREAD * sizeof(*late));
	assert_true(all && freed && late);
	for (i = 0; i < SPREAD; i++) {
		all[n].op = HS_OP_ALLOC;
		all[n].fn = HS_TAG_MALLOC;
		all[n].addr = spread_addr(i);
		all[n++].size = 1 + i % 700;
		in_use += 1 + i % 700;
		if (in_use > peak)
			peak = in_use;
		if (i % 3 == 2) {
			all[n].op = HS_OP_FREE;
			all[n].fn = HS_TAG_FREE;
			all[n++].addr = spread_addr(i - 2);
			in_use -= 1 + (i - 2) % 700;
			freed[i - 2] = 1;
			nr_frees++;
		}
		if (i % 3 != 0)
			late[nr_late++] = i;
	}
	for (i = nr_late - 1; i > 0; i--) { /* the late frees' order */
		size_t j = (size_t)(((uint64_t)rnd() << 24 | rnd()) % (i + 1)), x = late[i];

		late[i] = late[j];
		late[j] = x;
	}
	for (i = 0; i < nr_late - nr_late / 20; i++) {
		all[n].op = HS_OP_FREE;
		all[n].fn = HS_TAG_FREE;
		all[n++].addr = spread_addr(late[i]);
		freed[late[i]] = 1;
		nr_frees++;
	}
	for (i = 0; i < n; i++) {
		all[i].time = (int64_t)(i / 64);
		all[i].node = HS_TRACE_NONE;
	}
	for (i = 0; i < SPREAD; i++)
		if (!freed[i]) {
			left += 1 + i % 700;
			nr_left++;
		}
	o.kind = HS_MEM_PEAK;
	assert_int_equal(
	    hs_memview_pass_new_heap(&t, &o, &src[0], &src[1], &src[2], &src[3], &pass), 0);
	for (i = 0; i < n; i += k) {
		k = n - i < SLICE ? n - i : SLICE;
		memcpy(ev, all + i, k * sizeof(*ev));
		assert_int_equal(hs_memview_pass_events_gone(pass, ev, k, gone, gone_size), 0);
		while (k-- > 0)
			nr_gone += gone[k];
		k = n - i < SLICE ? n - i : SLICE;
	}
	assert_int_equal(hs_memview_pass_finish(pass, &diag), 0);
	assert_int_equal(nr_gone, nr_frees);
	for (i = 0, leaked = 0; i < src[0].nr_samples; i++)
		leaked += src[0].metric[i];
	assert_true(leaked == (double)peak);
	leaked = 0;
	for (i = 0; i < src[2].nr_samples; i++) {
		leaked += src[2].metric[i];
		leaked_count += src[2].count[i];
		if (i)
			assert_true(src[2].time[i] >= src[2].time[i - 1]);
	}
	assert_true(leaked == (double)left);
	assert_true(leaked_count == (double)nr_left);
	hs_memview_pass_free(pass);
	for (k = 0; k < 4; k++)
		hs_source_release(&src[k]);
	free(all);
	free(freed);
	free(late);
	hs_trace_release(&t);
	free(b.buf);
}

/* Whether stack @x of @a and stack @y of @c name the same frames. */
/*
 * A live table whose halvings could not cut its mapping (hs_map_shrink()
 * kept it whole) grows again within that mapping: 300k blocks made and
 * all but a thousand freed (the table halves), then 300k more made at
 * other addresses (it doubles back) and freed. No step runs out of
 * memory, and every free finds its block.
 */
static void live_table_grows_after_uncut_shrink(void **state)
{
	enum { SLICE = 512, KEEP = 1000 };
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source src[4];
	struct hs_memview_pass *pass;
	struct hs_trace_event *all, ev[SLICE];
	uint64_t gone_size[SLICE];
	uint8_t gone[SLICE];
	size_t i, k, n = 0, nr_gone = 0, nr_frees = 0;
	struct hs_trace t;
	struct tb b;
	int err = 0;

	(void)state;
	build_random(&b, 7, 0);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
	all = calloc(4 * SPREAD, sizeof(*all));
	assert_non_null(all);
	for (i = 0; i < SPREAD; i++) { /* made, then all but KEEP freed */
		all[n].op = HS_OP_ALLOC;
		all[n].fn = HS_TAG_MALLOC;
		all[n].addr = spread_addr(i);
		all[n++].size = 1 + i % 700;
	}
	for (i = KEEP; i < SPREAD; i++, nr_frees++) {
		all[n].op = HS_OP_FREE;
		all[n].fn = HS_TAG_FREE;
		all[n++].addr = spread_addr(i);
	}
	for (i = 0; i < SPREAD; i++) { /* more, at other addresses, and freed */
		all[n].op = HS_OP_ALLOC;
		all[n].fn = HS_TAG_MALLOC;
		all[n].addr = spread_addr(i) + 8;
		all[n++].size = 1 + i % 500;
	}
	for (i = 0; i < SPREAD; i++, nr_frees++) {
		all[n].op = HS_OP_FREE;
		all[n].fn = HS_TAG_FREE;
		all[n++].addr = spread_addr(i) + 8;
	}
	for (i = 0; i < n; i++) {
		all[i].time = (int64_t)(i / 64);
		all[i].node = HS_TRACE_NONE;
	}
	o.kind = HS_MEM_PEAK;
	assert_int_equal(
	    hs_memview_pass_new_heap(&t, &o, &src[0], &src[1], &src[2], &src[3], &pass), 0);
	hs_map_shrink_fail(1);
	for (i = 0; !err && i < n; i += k) {
		k = n - i < SLICE ? n - i : SLICE;
		memcpy(ev, all + i, k * sizeof(*ev));
		err = hs_memview_pass_events_gone(pass, ev, k, gone, gone_size);
		while (!err && k-- > 0)
			nr_gone += gone[k];
		k = n - i < SLICE ? n - i : SLICE;
	}
	hs_map_shrink_fail(0);
	assert_int_equal(err, 0);
	assert_int_equal(hs_memview_pass_finish(pass, &diag), 0);
	assert_int_equal(nr_gone, nr_frees);
	hs_memview_pass_free(pass);
	for (k = 0; k < 4; k++)
		hs_source_release(&src[k]);
	free(all);
	hs_trace_release(&t);
	free(b.buf);
}

static void same_frames(const struct hs_stack_source *a, uint32_t x,
			const struct hs_stack_source *c, uint32_t y)
{
	uint32_t fa[128], fc[128];
	size_t n = hs_source_stack_frames(a, x, fa, 128), k;

	assert_int_equal(n, hs_source_stack_frames(c, y, fc, 128));
	for (k = 0; k < n; k++)
		assert_string_equal(hs_source_frame_name(a, fa[k]),
				    hs_source_frame_name(c, fc[k]));
}

/*
 * The peak pass without its peak output (run's summary): alloc, leaks
 * and temporary have the samples of the views built alone, each on a
 * stack of the same frames, and the leaks after the suppressions are
 * the same; only the stacks no sample has are left out (a second,
 * small trace shows one left out).
 */

/* Feed @pass every event of @t, in order. */
static void pass_every_event(struct hs_memview_pass *pass, const struct hs_trace *t)
{
	size_t i;

	for (i = 0; i < t->nr_events; i++) {
		struct hs_trace_event e;
		uint64_t size = 0;

		hs_trace_event_get(t, i, &e);
		assert_true(hs_memview_pass_event(pass, &e, &size) >= 0);
	}
}

static void heap_pass_without_peak(void **state)
{
	static const enum hs_memview_kind kinds[3] = {HS_MEM_ALLOC, HS_MEM_LEAKS,
						      HS_MEM_TEMPORARY};
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT, alone = HS_MEMVIEW_OPTS_INIT;
	struct hs_stack_source got[3], want;
	struct hs_leak_totals gl, wl;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_memview_pass *pass;
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	size_t i, k;

	(void)state;
	build_random(&b, 21, 1);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
	o.kind = HS_MEM_PEAK;
	assert_int_equal(
	    hs_memview_pass_new_heap(&t, &o, NULL, &got[0], &got[1], &got[2], &pass), 0);
	pass_every_event(pass, &t);
	assert_int_equal(hs_memview_pass_finish(pass, &diag), 0);
	for (k = 0; k < 3; k++) {
		alone.kind = kinds[k];
		assert_int_equal(hs_memview_build(&t, &alone, &want, NULL, &diag), 0);
		assert_true(want.nr_samples > 0);
		assert_int_equal(got[k].nr_samples, want.nr_samples);
		assert_true(got[k].nr_stacks <= want.nr_stacks);
		for (i = 0; i < want.nr_samples; i++) {
			assert_true(got[k].time[i] == want.time[i]);
			assert_true(got[k].metric[i] == want.metric[i]);
			assert_true(got[k].count[i] == want.count[i]);
			same_frames(&got[k], got[k].stack[i], &want, want.stack[i]);
		}
		assert_string_equal(got[k].view_name, want.view_name);
		assert_string_equal(got[k].defaults.fold, want.defaults.fold);
		if (kinds[k] == HS_MEM_LEAKS) {
			assert_string_equal(got[k].defaults.exc, want.defaults.exc);
			assert_int_equal(hs_heap_leaks(&got[k], 0, NULL, &gl, &diag), 0);
			assert_int_equal(hs_heap_leaks(&want, 0, NULL, &wl, &diag), 0);
			assert_true(gl.bytes == wl.bytes && gl.blocks == wl.blocks);
			assert_true(gl.suppressed_bytes == wl.suppressed_bytes);
			assert_true(gl.suppressed_blocks == wl.suppressed_blocks);
		}
		hs_source_release(&want);
		hs_source_release(&got[k]);
	}
	hs_memview_pass_free(pass);
	hs_trace_release(&t);
	free(b.buf);

	/* a stack whose blocks all went has no stack in the leaks */
	tb_init(&b);
	p = put_process(tb_p(&b));
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_span(p, 1, 0, 0);
	p = put_thread_start(p, 0, "main");
	p = put_node(p, 1, 0, 0x1010);
	p = put_node(p, 2, 1, 0x1020);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1, 0x10000, 10, 1);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1, 0x100, 20, 2);
	p = put_free(&b, p, 1, -0x100);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 1);
	tb_end(&b, put_end(tb_p(&b), 10, HS_END_EXIT, 0));
	tb_chunk(&b, HS_CHUNK_END, 0);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
	assert_int_equal(
	    hs_memview_pass_new_heap(&t, &o, NULL, NULL, &got[1], NULL, &pass), 0);
	pass_every_event(pass, &t);
	assert_int_equal(hs_memview_pass_finish(pass, &diag), 0);
	alone.kind = HS_MEM_LEAKS;
	assert_int_equal(hs_memview_build(&t, &alone, &want, NULL, &diag), 0);
	assert_int_equal(got[1].nr_samples, 1);
	assert_int_equal(want.nr_samples, 1);
	assert_true(got[1].metric[0] == 20 && want.metric[0] == 20);
	same_frames(&got[1], got[1].stack[0], &want, want.stack[0]);
	assert_true(got[1].nr_stacks < want.nr_stacks);
	hs_source_release(&want);
	hs_source_release(&got[1]);
	hs_memview_pass_free(pass);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * The temporary view only summed (hs_memview_pass_sum_temporary(), what
 * stats asks): the totals of the view built alone, bit for bit, on an
 * unsampled trace and a sampled one (weights that are not whole
 * numbers), beside the peak, alloc and leaks outputs it leaves as they
 * were.
 */
static void heap_pass_temporary_summed(void **state)
{
	static const uint64_t sample_bytes[2] = {0, 256};
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT, alone = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source got[3], full[4], want;
	struct hs_memview_pass *pass, *whole;
	double bytes, count, want_bytes, want_count;
	struct hs_trace t;
	struct tb b;
	unsigned s, k;

	(void)state;
	o.kind = HS_MEM_PEAK;
	alone.kind = HS_MEM_TEMPORARY;
	for (s = 0; s < 2; s++) {
		build_random(&b, 41 + s, 1);
		assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
		t.info.sample_bytes = sample_bytes[s];
		assert_int_equal(hs_memview_pass_new_heap(&t, &o, &got[0], &got[1],
							  &got[2], NULL, &pass),
				 0);
		hs_memview_pass_sum_temporary(pass);
		pass_every_event(pass, &t);
		assert_int_equal(hs_memview_pass_finish(pass, &diag), 0);
		hs_memview_pass_temporary_totals(pass, &bytes, &count);
		assert_int_equal(hs_memview_build(&t, &alone, &want, NULL, &diag), 0);
		assert_true(want.nr_samples > 10);
		hs_source_totals(&want, &want_bytes, &want_count);
		assert_true(count > 0);
		assert_true(bytes == want_bytes);
		assert_true(count == want_count);
		/* the other outputs: those of a pass that made all four */
		assert_int_equal(hs_memview_pass_new_heap(&t, &o, &full[0], &full[1],
							  &full[2], &full[3], &whole),
				 0);
		pass_every_event(whole, &t);
		assert_int_equal(hs_memview_pass_finish(whole, &diag), 0);
		for (k = 0; k < 3; k++) {
			same_source(&got[k], &full[k]);
			same_stack_tables(&got[k], &full[k]);
		}
		for (k = 0; k < 4; k++) {
			if (k < 3)
				hs_source_release(&got[k]);
			hs_source_release(&full[k]);
		}
		hs_source_release(&want);
		hs_memview_pass_free(whole);
		hs_memview_pass_free(pass);
		hs_trace_release(&t);
		free(b.buf);
	}
}

/* run's summary in one pass: the totals and the leaks of their own passes. */
static void summary_in_one_pass(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-pass-XXXXXX";
	struct hs_heap_totals want, got;
	struct hs_leak_totals want_leaks, got_leaks;
	struct hs_trace t, t2;
	struct tb b;

	(void)state;
	build_random(&b, 13, 1);
	write_trace(&b, path);
	assert_int_equal(hs_heap_totals_path(path, &t, &want, &diag), 0);
	hs_trace_release(&t);
	assert_int_equal(hs_heap_leaks_path(path, &want_leaks, &diag), 0);
	assert_int_equal(hs_heap_summary_path(path, &t2, &got, &got_leaks, &diag), 0);
	assert_int_equal(t2.nr_events, 0); /* streamed */
	assert_true(want.leaked_blocks > 0 && want.unmatched_frees > 0);
	assert_int_equal(memcmp(&got, &want, sizeof(got)), 0);
	assert_true(got_leaks.bytes == want_leaks.bytes);
	assert_true(got_leaks.blocks == want_leaks.blocks);
	assert_true(got_leaks.suppressed_bytes == want_leaks.suppressed_bytes);
	assert_true(got_leaks.suppressed_blocks == want_leaks.suppressed_blocks);
	assert_true(got_leaks.blocks > 0);
	hs_trace_release(&t2);
	unlink(path);
	free(b.buf);
}

static void count_call(void *arg)
{
	(*(unsigned *)arg)++;
}

/*
 * The summary pass in steps (run's, beside its symbolizer): streamed or
 * fed from the loaded trace, the totals and leaks of
 * hs_heap_summary_path(); the first-batch callback called once.
 */
static void summary_in_steps(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-pass-XXXXXX";
	struct hs_heap_totals want, got;
	struct hs_leak_totals want_leaks, got_leaks;
	struct hs_heap_summary_pass *pass;
	struct hs_trace_sink sink;
	struct hs_trace t;
	struct tb b;
	unsigned firsts = 0;

	(void)state;
	build_random(&b, 13, 1);
	write_trace(&b, path);
	assert_int_equal(hs_heap_summary_path(path, &t, &want, &want_leaks, &diag), 0);
	hs_trace_release(&t);
	assert_int_equal(
	    hs_heap_summary_begin(&t, &got, count_call, &firsts, &pass, &sink), 0);
	assert_int_equal(firsts, 0);
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
	assert_int_equal(firsts, 1);
	assert_int_equal(hs_heap_summary_finish(pass, &got_leaks, &diag), 0);
	hs_heap_summary_free(pass);
	assert_int_equal(memcmp(&got, &want, sizeof(got)), 0);
	assert_memory_equal(&got_leaks, &want_leaks, sizeof(got_leaks));
	hs_trace_release(&t);
	/* the fallback of a stream that gave up: the loaded events fed */
	memset(&got, 0, sizeof(got));
	assert_int_equal(hs_heap_summary_load(path, &t, &got, &pass, &diag), 0);
	assert_true(t.nr_events > 0);
	assert_int_equal(hs_heap_summary_finish(pass, &got_leaks, &diag), 0);
	hs_heap_summary_free(pass);
	assert_int_equal(memcmp(&got, &want, sizeof(got)), 0);
	assert_memory_equal(&got_leaks, &want_leaks, sizeof(got_leaks));
	hs_trace_release(&t);
	unlink(path);
	free(b.buf);
}

/*
 * Out of memory anywhere in a peak pass with a side output, and in the
 * totals fed from it: -ENOMEM, nothing leaked (the ASan build checks),
 * and the same leaks once memory suffices.
 */
static void heap_pass_out_of_memory(void **state)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source peak, leaks;
	struct hs_heap_totals tot;
	struct hs_heap_totals_pass tp;
	struct hs_heap_curve curve = {0};
	struct hs_memview_pass *pass;
	struct hs_trace t;
	struct tb b;
	double bytes = 0, blocks = 0, want_bytes, want_blocks;
	size_t i;
	long n;
	int err;

	(void)state;
	build_random(&b, 17, 1);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
	o.kind = HS_MEM_PEAK;
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_memview_pass_new_heap(&t, &o, &peak, NULL, &leaks, NULL, &pass);
		hs_heap_totals_pass_init(&tp, &t, &tot, &curve);
		for (i = 0; !err && i < t.nr_events; i++) {
			struct hs_trace_event e;
			uint64_t size = 0;
			int gone;

			hs_trace_event_get(&t, i, &e);
			gone = hs_memview_pass_event(pass, &e, &size);
			err = gone < 0 ? gone
				       : hs_heap_totals_pass_event_known(&tp, &e, gone, size);
		}
		if (!err)
			err = hs_memview_pass_finish(pass, &diag);
		hs_alloc_fail_after(-1);
		if (!err)
			hs_source_totals(&leaks, &bytes, &blocks);
		hs_heap_totals_pass_release(&tp);
		hs_heap_curve_release(&curve);
		hs_memview_pass_free(pass);
		hs_source_release(&peak);
		hs_source_release(&leaks);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	assert_true(n > 3);
	o.kind = HS_MEM_LEAKS;
	assert_int_equal(hs_memview_build(&t, &o, &leaks, NULL, &diag), 0);
	hs_source_totals(&leaks, &want_bytes, &want_blocks);
	assert_true(bytes == want_bytes && blocks == want_blocks && blocks > 0);
	hs_source_release(&leaks);
	hs_trace_release(&t);
	free(b.buf);
}

/* stats streamed from the file says what stats of the loaded trace says. */
static void stats_streamed_like_loaded(void **state)
{
	struct hs_stats_opts so = {.top = 5, .points = 17};
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-pass-XXXXXX";
	struct hs_heap_stats ls, ss;
	struct hs_trace t, st;
	json_t *lj, *sj;
	char *a, *c;
	struct tb b;

	(void)state;
	build_random(&b, 3, 1);
	write_trace(&b, path);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "t", &t, &diag), 0);
	assert_int_equal(hs_heap_stats_compute(&t, &so, &ls, &diag), 0);
	assert_int_equal(hs_heap_stats_compute_path(path, &so, &st, &ss, &diag), 0);
	assert_int_equal(st.nr_events, 0);
	assert_int_equal(ss.events, t.nr_events);
	reference_timeline(st.duration_ns, 17, &ss.heap);
	assert_true(ss.mmaps == 6 && ss.munmaps == 6);
	lj = hs_heap_stats_json(&ls);
	sj = hs_heap_stats_json(&ss);
	a = json_dumps(lj, JSON_SORT_KEYS);
	c = json_dumps(sj, JSON_SORT_KEYS);
	assert_non_null(a);
	assert_non_null(c);
	assert_string_equal(a, c);
	free(a);
	free(c);
	json_decref(lj);
	json_decref(sj);
	hs_heap_stats_release(&ls);
	hs_heap_stats_release(&ss);
	hs_trace_release(&t);
	hs_trace_release(&st);
	unlink(path);
	free(b.buf);
}

/*
 * The heap curve has one point per clock tick that changed the heap,
 * with the tick's highest and last heap in use: what the timeline needs,
 * however many events a tick holds.
 */
static void curve_one_point_per_tick(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_heap_totals tot;
	struct hs_heap_totals_pass tp;
	struct hs_heap_curve curve = {0};
	struct hs_trace_sink sink = {.events = hs_heap_totals_pass_events,
				     .live = hs_heap_totals_pass_live,
				     .ctx = &tp};
	char path[] = "/tmp/hs-heap-pass-XXXXXX";
	struct replay r;
	struct hs_trace t;
	double tick_max = 0, last = 0, peak = 0;
	struct tb b;
	size_t i, n = 0;

	(void)state;
	build_random(&b, 11, 0);
	write_trace(&b, path);
	hs_heap_totals_pass_init(&tp, &t, &tot, &curve);
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), 0);
	hs_heap_totals_pass_finish(&tp);
	memset(&r, 0, sizeof(r));
	for (i = 0; i < NR_EVENTS; i++) {
		if (replay_step(&r, i)) {
			if (!n || curve.time[n - 1] != evs[i].time) {
				assert_true(n < curve.n);
				assert_true(curve.time[n] == evs[i].time);
				tick_max = r.in_use;
				n++;
			} else if (r.in_use > tick_max) {
				tick_max = r.in_use;
			}
			last = r.in_use;
			if (r.in_use > peak)
				peak = r.in_use;
		}
		/* the tick's last event: its highest and its last heap in use */
		if (n && curve.time[n - 1] == evs[i].time &&
		    (i + 1 == NR_EVENTS || evs[i + 1].time != evs[i].time)) {
			assert_true(curve.max[n - 1] == tick_max);
			assert_true(curve.last[n - 1] == last);
		}
	}
	assert_int_equal(curve.n, n);
	assert_true(n > 10 && n < NR_EVENTS / 4); /* ticks, not events */
	assert_true(tot.peak_heap_est == peak);
	hs_heap_curve_release(&curve);
	hs_heap_totals_pass_release(&tp);
	hs_trace_release(&t);
	unlink(path);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(peak_in_one_pass),
	    cmocka_unit_test(views_share_one_pass),
	    cmocka_unit_test(heap_pass_gives_four_views),
	    cmocka_unit_test(heap_pass_stacks_as_built_alone),
	    cmocka_unit_test(totals_from_the_views_live_blocks),
	    cmocka_unit_test(live_table_grows_in_place),
	    cmocka_unit_test(live_table_grows_after_uncut_shrink),
	    cmocka_unit_test(heap_pass_batched_as_one_by_one),
	    cmocka_unit_test(live_table_of_many_blocks),
	    cmocka_unit_test(heap_pass_without_peak),
	    cmocka_unit_test(heap_pass_temporary_summed),
	    cmocka_unit_test(summary_in_one_pass),
	    cmocka_unit_test(summary_in_steps),
	    cmocka_unit_test(heap_pass_out_of_memory),
	    cmocka_unit_test(stats_streamed_like_loaded),
	    cmocka_unit_test(curve_one_point_per_tick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
