/*
 * Tests of a heap trace's history (analysis/heap_history.h): the heap in
 * use and RSS kept from one streamed pass, cut into timelines, give the
 * numbers of the loaded trace (hs_heap_timelines()) and of `stats`
 * (hs_heap_stats_compute_path()) for any number of points; also when
 * two threads' events of one clock tick must be put in order (a block
 * freed by one thread right after another allocated it), when the file
 * cannot be streamed (the trace is loaded instead), and when it cannot
 * be read at all. The same pass with a view (hs_heap_history_path_view())
 * gives that history and the view built alone; a view read at a pace
 * (hs_heap_history_view()) is the view built alone, and the peak view
 * that stops at the history's peak is the whole pass's, also when the
 * history is not that file's.
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
#include "analysis/heap_history.h"
#include "analysis/stats.h"
#include "common/alloc.h"
#include "format/trace_reader.h"
#include "trace_builder.h"

#define MS 1000000

/* A process record whose clock is @clock (enum hs_clock_kind). */
static uint8_t *put_process_clock(uint8_t *p, unsigned clock)
{
	static const char *const argv[] = {"./prog"};
	struct hs_process_info info = {
	    .pid = 31,	     .ppid = 1,		.page_size = 4096,
	    .max_depth = 64, .clock = clock,	.exe = "/usr/bin/prog",
	    .comm = "prog",  .cwd = "/tmp",	.argc = 1,
	    .argv = argv,
	};

	return hs_tw_process(p, &info);
}

/*
 * RSS 1000 at 0 ms, 3000 at 5 ms, 2000 at 9 ms; thread 11 frees 0x4000 at
 * 5 ms, written first, then put_heap_program() (trace_builder.h) on
 * thread 10, whose realloc makes 0x4000 (500000 bytes) at 5 ms too: in
 * time order the realloc comes first, so the heap falls back to nothing
 * at 5 ms instead of keeping 500000 bytes to the end. With @tsc the clock
 * is in ticks of half a nanosecond (CLOCK records), which a stream cannot
 * put in time order: the trace is loaded instead.
 */
static void build_trace(struct tb *b, int tsc)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process_clock(p, tsc ? HS_CLOCK_TSC : HS_CLOCK_NS);
	if (tsc) {
		p = put_sized2(p, HS_TAG_CLOCK, 0, 0);
		p = put_sized2(p, HS_TAG_CLOCK, 20 * MS, 10 * MS);
	}
	p = put_sized2(p, HS_TAG_RSS, 0, 1000);
	p = put_sized2(p, HS_TAG_RSS, 5 * MS, 3000);
	p = put_sized2(p, HS_TAG_RSS, 9 * MS, 2000);
	p = put_span(p, 11, 5 * MS, 0x4000);
	p = put_free(b, p, 0, 0);
	p = put_heap_program(b, p);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

static void write_trace(const struct tb *b, char *path)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->buf, b->len), (ssize_t)b->len);
	close(fd);
}

static void same_timeline(const struct hs_timeline *a, const struct hs_timeline *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		assert_true(a->ms[i] == b->ms[i]);
		assert_true(a->bytes[i] == b->bytes[i]);
	}
}

/* The history of the trace that build_trace(@tsc) writes, against the loaded trace's. */
static void like_loaded(int tsc)
{
	static const size_t points[] = {1, 2, 9, 50, 600};
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-history-XXXXXX";
	struct hs_heap_history h;
	struct hs_timeline hh, hr, lh, lr;
	struct hs_trace t;
	struct tb b;
	size_t k;

	build_trace(&b, tsc);
	write_trace(&b, path);
	assert_int_equal(hs_heap_history_path(path, &h, NULL, NULL, &diag), 0);
	assert_int_equal(hs_trace_load(path, &t, &diag), 0);
	assert_true(h.duration_ns == t.duration_ns);
	assert_int_equal(h.nr_rss, 3);
	/* one point per tick that changed the heap, not one per event */
	assert_true(h.heap.n > 0 && h.heap.n < t.nr_events);
	for (k = 0; k < sizeof(points) / sizeof(points[0]); k++) {
		assert_int_equal(hs_heap_history_timelines(&h, points[k], &hh, &hr), 0);
		assert_int_equal(hs_heap_timelines(&t, points[k], &lh, &lr), 0);
		same_timeline(&hh, &lh);
		same_timeline(&hr, &lr);
		hs_timeline_release(&hh);
		hs_timeline_release(&hr);
		hs_timeline_release(&lh);
		hs_timeline_release(&lr);
	}
	/* in time order: thread 11's free comes after the realloc it frees */
	assert_int_equal(hs_heap_history_timelines(&h, 9, &hh, NULL), 0);
	assert_int_equal(hh.n, 9);
	assert_true(hh.bytes[5] >= 500000); /* the same bucket with either clock */
	assert_true(hh.bytes[8] < 1000);
	hs_timeline_release(&hh);
	hs_heap_history_release(&h);
	hs_trace_release(&t);
	unlink(path);
	free(b.buf);
}

static void streamed_like_loaded(void **state)
{
	(void)state;
	like_loaded(0);
}

static int ignore_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	(void)ctx;
	(void)ev;
	(void)n;
	return 0;
}

static void loaded_when_not_streamable(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace_sink sink = {.events = ignore_events};
	char path[] = "/tmp/hs-heap-history-XXXXXX";
	struct hs_trace t;
	struct tb b;

	(void)state;
	/* the premise: this file does not stream */
	build_trace(&b, 1);
	write_trace(&b, path);
	assert_int_equal(hs_trace_stream(path, &t, &sink, &diag), -EAGAIN);
	unlink(path);
	free(b.buf);
	like_loaded(1);
}

/* The timelines are the ones `stats` gives for the same file. */
static void like_stats(void **state)
{
	struct hs_stats_opts o = {.points = 7};
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-history-XXXXXX";
	struct hs_heap_history h;
	struct hs_heap_stats s;
	struct hs_timeline hh, hr;
	struct hs_trace t;
	struct tb b;
	size_t i;

	(void)state;
	build_trace(&b, 0);
	write_trace(&b, path);
	assert_int_equal(hs_heap_history_path(path, &h, NULL, NULL, &diag), 0);
	assert_int_equal(hs_heap_stats_compute_path(path, &o, &t, &s, &diag), 0);
	assert_int_equal(hs_heap_history_timelines(&h, 7, &hh, &hr), 0);
	same_timeline(&hh, &s.heap);
	same_timeline(&hr, &s.rss);
	/* the highest point is the stats' peak */
	for (i = 1; i < hh.n; i++)
		assert_true(hh.bytes[i] <= s.peak_heap_bytes);
	hs_timeline_release(&hh);
	hs_timeline_release(&hr);
	hs_heap_stats_release(&s);
	hs_trace_release(&t);
	hs_heap_history_release(&h);
	unlink(path);
	free(b.buf);
}

static void unreadable(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-history-XXXXXX";
	struct hs_heap_history h;
	struct tb b;

	(void)state;
	assert_true(hs_heap_history_path("/nonexistent/x.heapscope", &h, NULL, NULL, &diag) < 0);
	assert_true(diag.set);
	assert_int_equal(h.heap.n, 0);
	assert_null(h.rss_time);
	/* a file that is not a trace */
	b.buf = NULL;
	tb_init(&b);
	memset(b.buf, 'x', 8);
	write_trace(&b, path);
	diag = (struct hs_diag)HS_DIAG_INIT("t");
	assert_true(hs_heap_history_path(path, &h, NULL, NULL, &diag) < 0);
	assert_true(diag.set);
	assert_int_equal(h.nr_rss, 0);
	hs_heap_history_release(&h); /* fine on an empty one */
	unlink(path);
	free(b.buf);
}

static int stop_now(void *ctx)
{
	int *asked = ctx;

	return ++*asked > 0;
}

/* A pass asked to stop gives up with -ECANCELED, its history empty. */
static void stopped(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-history-XXXXXX";
	struct hs_heap_history h;
	struct tb b;
	int asked = 0, tsc;

	(void)state;
	for (tsc = 0; tsc < 2; tsc++) {
		build_trace(&b, tsc);
		write_trace(&b, path);
		diag = (struct hs_diag)HS_DIAG_INIT("t");
		assert_int_equal(hs_heap_history_path(path, &h, stop_now, &asked, &diag),
				 -ECANCELED);
		assert_true(diag.set);
		assert_int_equal(h.heap.n, 0);
		assert_int_equal(h.nr_rss, 0);
		assert_true(asked > 0);
		unlink(path);
		strcpy(path, "/tmp/hs-heap-history-XXXXXX");
		free(b.buf);
	}
}

/* Out of memory while cutting: -ENOMEM, empty timelines, nothing leaked. */
static void cut_out_of_memory(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-history-XXXXXX";
	struct hs_heap_history h;
	struct hs_timeline hh, hr;
	struct tb b;
	long n;
	int err;

	(void)state;
	build_trace(&b, 0);
	write_trace(&b, path);
	assert_int_equal(hs_heap_history_path(path, &h, NULL, NULL, &diag), 0);
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_heap_history_timelines(&h, 9, &hh, &hr);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(hh.n, 0);
		assert_int_equal(hr.n, 0);
	}
	assert_true(n > 2);
	assert_int_equal(hh.n, 9);
	hs_timeline_release(&hh);
	hs_timeline_release(&hr);
	hs_heap_history_release(&h);
	unlink(path);
	free(b.buf);
}

/*
 * A pseudo-random trace from @seed: allocations (some sampled with
 * @sample_bytes) and frees over 20 addresses (address 0 among them, so
 * blocks are replaced and frees miss), several events per clock tick,
 * three stacks; with @tsc a clock in ticks, which the stream cannot put
 * in time order (the trace is loaded instead).
 */
static void build_random(struct tb *b, unsigned seed, uint64_t sample_bytes, int tsc)
{
	uint32_t r = seed;
	uint64_t prev = 0, addr;
	int64_t dt;
	uint8_t *p;
	int i;

	tb_init(b);
	p = tb_p(b);
	p = sample_bytes ? put_process_sampled(p, sample_bytes)
			 : put_process_clock(p, tsc ? HS_CLOCK_TSC : HS_CLOCK_NS);
	if (tsc) {
		p = put_sized2(p, HS_TAG_CLOCK, 0, 0);
		p = put_sized2(p, HS_TAG_CLOCK, 20 * MS, 10 * MS);
	}
	p = put_app_main(p);
	p = put_sized2(p, HS_TAG_RSS, 0, 4096);
	for (i = 0; i < 2000; i++) {
		r = r * 1103515245u + 12345u;
		dt = (r >> 8) % 5 == 0 ? MS / 4 : 0;
		addr = (r >> 12) % 20 ? 0x20000 + ((r >> 12) % 20) * 0x40 : 0;
		/* allocations win at first, frees later: the peak is inside */
		if ((r >> 20) % 100 < (i < 1200 ? 70u : 30u))
			p = put_alloc(b, p, HS_TAG_MALLOC, dt, (int64_t)(addr - prev),
				      1 + (r >> 4) % 3000, 1 + (r >> 16) % 3);
		else
			p = put_free(b, p, dt, (int64_t)(addr - prev));
		prev = addr;
	}
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

static void same_source(const struct hs_stack_source *a, const struct hs_stack_source *c)
{
	size_t i;

	assert_int_equal(a->nr_samples, c->nr_samples);
	assert_int_equal(a->nr_stacks, c->nr_stacks);
	assert_int_equal(a->frames.nr, c->frames.nr);
	for (i = 0; i < a->nr_samples; i++) {
		assert_true(a->time[i] == c->time[i]);
		assert_true(a->metric[i] == c->metric[i]);
		assert_true(a->count[i] == c->count[i]);
		assert_int_equal(a->stack[i], c->stack[i]);
	}
}

static void same_history(const struct hs_heap_history *a, const struct hs_heap_history *c)
{
	size_t i;

	assert_int_equal(a->heap.n, c->heap.n);
	for (i = 0; i < a->heap.n; i++) {
		assert_true(a->heap.time[i] == c->heap.time[i]);
		assert_true(a->heap.max[i] == c->heap.max[i]);
		assert_true(a->heap.last[i] == c->heap.last[i]);
	}
	assert_int_equal(a->nr_rss, c->nr_rss);
	for (i = 0; i < a->nr_rss; i++)
		assert_true(a->rss_time[i] == c->rss_time[i] &&
			    a->rss_bytes[i] == c->rss_bytes[i]);
	assert_true(a->duration_ns == c->duration_ns);
}

static const enum hs_memview_kind view_kinds[] = {HS_MEM_ALLOC, HS_MEM_NET, HS_MEM_LEAKS,
						  HS_MEM_PEAK, HS_MEM_TEMPORARY};
#define NR_VIEW_KINDS (sizeof(view_kinds) / sizeof(view_kinds[0]))

/* The traces the tests below read: @k-th of 5, written to @path. */
static void write_case(int k, char *path)
{
	struct tb b;

	switch (k) {
	case 0:
		build_trace(&b, 0);
		break;
	case 1:
		build_trace(&b, 1); /* loaded, not streamed */
		break;
	case 2:
		build_random(&b, 5, 0, 0);
		break;
	case 3:
		build_random(&b, 11, 0, 1);
		break;
	default:
		build_random(&b, 23, 700, 0); /* sampled: weighted blocks */
		break;
	}
	write_trace(&b, path);
	free(b.buf);
}
#define NR_CASES 5

/* One pass gives the history and the view, as each read alone. */
static void history_with_a_view(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_heap_history h, alone;
	struct hs_stack_source got, want;
	size_t k;
	int c;

	(void)state;
	for (c = 0; c < NR_CASES; c++) {
		char path[] = "/tmp/hs-heap-history-XXXXXX";

		write_case(c, path);
		assert_int_equal(hs_heap_history_path(path, &alone, NULL, NULL, &diag), 0);
		assert_true(alone.heap.n > 0);
		for (k = 0; k < NR_VIEW_KINDS; k++) {
			o.kind = view_kinds[k];
			assert_int_equal(hs_heap_history_path_view(path, &o, &got, &h, &diag),
					 0);
			assert_int_equal(hs_memview_build_path(path, &o, &want, NULL, &diag),
					 0);
			same_history(&h, &alone);
			same_source(&got, &want);
			hs_heap_history_release(&h);
			hs_source_release(&got);
			hs_source_release(&want);
		}
		hs_heap_history_release(&alone);
		unlink(path);
	}
}

static int count_pace(void *ctx)
{
	int *asked = ctx;

	++*asked;
	return 0;
}

/*
 * A view read at a pace, with the file's history or none, is the view
 * built alone; the peak view stops at the history's peak, and reads all
 * the events when a history says another peak (not the file's).
 */
static void view_at_a_pace(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_memview_info info;
	struct hs_heap_history h;
	struct hs_stack_source got, want;
	size_t k, i;
	int c, asked;

	(void)state;
	for (c = 0; c < NR_CASES; c++) {
		char path[] = "/tmp/hs-heap-history-XXXXXX";

		write_case(c, path);
		assert_int_equal(hs_heap_history_path(path, &h, NULL, NULL, &diag), 0);
		for (k = 0; k < NR_VIEW_KINDS; k++) {
			o.kind = view_kinds[k];
			assert_int_equal(hs_memview_build_path(path, &o, &want, &info, &diag),
					 0);
			asked = 0;
			assert_int_equal(hs_heap_history_view(path, &h, &o, &got, count_pace,
							      &asked, &diag),
					 0);
			assert_true(asked > 0);
			same_source(&got, &want);
			hs_source_release(&got);
			assert_int_equal(
			    hs_heap_history_view(path, NULL, &o, &got, NULL, NULL, &diag), 0);
			same_source(&got, &want);
			hs_source_release(&got);
			hs_source_release(&want);
		}
		/* the peak is inside the trace: events after it are left out */
		o.kind = HS_MEM_PEAK;
		assert_int_equal(hs_memview_build_path(path, &o, &want, &info, &diag), 0);
		assert_true(info.peak_bytes > 0);
		/* a history whose heap was highest at its first tick, or ever higher */
		for (i = 0; i < 2; i++) {
			double keep = h.heap.max[i ? h.heap.n - 1 : 0];

			h.heap.max[i ? h.heap.n - 1 : 0] = info.peak_bytes * (i ? 2 : 1) + 1;
			assert_int_equal(
			    hs_heap_history_view(path, &h, &o, &got, NULL, NULL, &diag), 0);
			same_source(&got, &want);
			hs_source_release(&got);
			h.heap.max[i ? h.heap.n - 1 : 0] = keep;
		}
		hs_source_release(&want);
		hs_heap_history_release(&h);
		unlink(path);
	}
}

/* The trace the random cases write has its peak before its end. */
static void random_peak_inside(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	char path[] = "/tmp/hs-heap-history-XXXXXX";
	struct hs_heap_history h;
	double top = 0;
	size_t i, at = 0;

	(void)state;
	write_case(2, path);
	assert_int_equal(hs_heap_history_path(path, &h, NULL, NULL, &diag), 0);
	for (i = 0; i < h.heap.n; i++)
		if (h.heap.max[i] > top) {
			top = h.heap.max[i];
			at = i;
		}
	assert_true(at > 0 && at + 10 < h.heap.n);
	hs_heap_history_release(&h);
	unlink(path);
}

/* A pace that says stop gives up with -ECANCELED. */
static void view_pace_stops(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_stack_source got;
	int asked = 0, c;

	(void)state;
	o.kind = HS_MEM_PEAK;
	for (c = 0; c < 2; c++) {
		char path[] = "/tmp/hs-heap-history-XXXXXX";

		write_case(c, path);
		diag = (struct hs_diag)HS_DIAG_INIT("t");
		assert_int_equal(
		    hs_heap_history_view(path, NULL, &o, &got, stop_now, &asked, &diag),
		    -ECANCELED);
		assert_true(diag.set);
		hs_source_release(&got);
		unlink(path);
	}
	assert_true(asked >= 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(streamed_like_loaded),
	    cmocka_unit_test(loaded_when_not_streamable),
	    cmocka_unit_test(like_stats),
	    cmocka_unit_test(unreadable),
	    cmocka_unit_test(stopped),
	    cmocka_unit_test(cut_out_of_memory),
	    cmocka_unit_test(history_with_a_view),
	    cmocka_unit_test(view_at_a_pace),
	    cmocka_unit_test(random_peak_inside),
	    cmocka_unit_test(view_pace_stops),
	};

	return cmocka_run_group_tests_name("heap_history", tests, NULL, NULL);
}
