/*
 * Tests of a heap trace's history (analysis/heap_history.h): the heap in
 * use and RSS kept from one streamed pass, cut into timelines, give the
 * numbers of the loaded trace (hs_heap_timelines()) and of `stats`
 * (hs_heap_stats_compute_path()) for any number of points; also when
 * two threads' events of one clock tick must be put in order (a block
 * freed by one thread right after another allocated it), when the file
 * cannot be streamed (the trace is loaded instead), and when it cannot
 * be read at all.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(streamed_like_loaded),
	    cmocka_unit_test(loaded_when_not_streamable),
	    cmocka_unit_test(like_stats),
	    cmocka_unit_test(unreadable),
	    cmocka_unit_test(stopped),
	    cmocka_unit_test(cut_out_of_memory),
	};

	return cmocka_run_group_tests_name("heap_history", tests, NULL, NULL);
}
