/*
 * Tests of a heap trace's totals (analysis/totals.h): the streamed and the
 * loaded pass give the same numbers, and so do stats and the peak view;
 * the peak is taken in time order, not file order; no leaks after an
 * exec; a sampled trace's estimates; out of memory.
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
#include "analysis/memviews.h"
#include "analysis/stats.h"
#include "analysis/totals.h"
#include "common/alloc.h"
#include "format/trace_reader.h"
#include "trace_builder.h"

#define MS 1000000

/*
 * Two threads whose events reach the file one thread after the other:
 * thread 1 allocates 100 B at 1 ms and frees it at 3 ms; thread 2,
 * written after it, allocates 50 B at 2 ms and frees it at 4 ms. In file
 * order the heap never holds more than 100 B; in time order it holds
 * 150 B from 2 ms to 3 ms. Then 7 B at 5 ms (thread 2), never freed.
 * The trace ends at 6 ms for @end_reason (enum hs_end_reason).
 */
static void build_two_threads_ending(struct tb *b, unsigned end_reason)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process(p);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_span(p, 1, 0, 0);
	p = put_thread_start(p, 0, "one");
	p = put_node(p, 1, 0, 0x1010);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1 * MS, 0x1000, 100, 1);
	p = put_free(b, p, 2 * MS, 0);
	p = put_span(p, 2, 0, 0);
	p = put_thread_start(p, 0, "two");
	p = put_alloc(b, p, HS_TAG_MALLOC, 2 * MS, 0x2000, 50, 1);
	p = put_free(b, p, 2 * MS, 0);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1 * MS, 0x1000, 7, 1);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
	p = put_end(tb_p(b), 6 * MS, end_reason, 0);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, 0);
}

static void build_two_threads(struct tb *b)
{
	build_two_threads_ending(b, HS_END_EXIT);
}

/* Write @b to a temporary file named in @path (a mkstemp() template). */
static void write_trace(const struct tb *b, char *path)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->buf, b->len), (ssize_t)b->len);
	close(fd);
}

static void peak_in_time_order_everywhere(void **state)
{
	char path[] = "/tmp/hs-totals-XXXXXX";
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_memview_info info;
	struct hs_heap_totals loaded, streamed;
	struct hs_heap_stats s;
	struct hs_stack_source src;
	struct hs_trace t;
	struct tb b;

	(void)state;
	build_two_threads(&b);
	write_trace(&b, path);

	/* streamed (run's summary) */
	assert_int_equal(hs_heap_totals_path(path, &t, &streamed, &diag), 0);
	assert_int_equal(t.nr_events, 0);	/* the events were not kept */
	hs_trace_release(&t);
	assert_int_equal(streamed.peak_heap, 150);
	assert_int_equal(streamed.peak_ns, 2 * MS);
	assert_int_equal(streamed.events, 5);
	assert_int_equal(streamed.allocs, 3);
	assert_int_equal(streamed.frees, 2);
	assert_int_equal(streamed.leaked_bytes, 7);
	assert_int_equal(streamed.leaked_blocks, 1);

	/* loaded (dump --summary), stats and the peak view */
	assert_int_equal(hs_trace_load(path, &t, &diag), 0);
	assert_int_equal(hs_heap_totals(&t, &loaded), 0);
	assert_memory_equal(&loaded, &streamed, sizeof(loaded));
	assert_int_equal(hs_heap_stats_compute(&t, NULL, &s, &diag), 0);
	assert_true(s.peak_heap_bytes == 150 && s.peak_heap_ms == 2);
	hs_heap_stats_release(&s);
	o.kind = HS_MEM_PEAK;
	assert_int_equal(hs_memview_build(&t, &o, &src, &info, &diag), 0);
	assert_true(info.peak_bytes == 150 && info.peak_ns == 2 * MS);
	hs_source_release(&src);
	hs_trace_release(&t);
	unlink(path);
	free(b.buf);
}

/*
 * Address 0 is never live: 10 B allocated there stay in the live bytes
 * and blocks, and the free of address 0 is unmatched; then 20 B at 0x100.
 * The same streamed and loaded.
 */
static void address_zero_is_never_live(void **state)
{
	char path[] = "/tmp/hs-totals-XXXXXX";
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_heap_totals loaded, streamed;
	struct hs_trace t;
	struct tb b;
	uint8_t *p;

	(void)state;
	tb_init(&b);
	p = put_process(tb_p(&b));
	p = put_span(p, 1, 0, 0);
	p = put_node(p, 1, 0, 0x1010);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1 * MS, 0, 10, 1);
	p = put_free(&b, p, 1 * MS, 0);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1 * MS, 0x100, 20, 1);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 0);
	p = put_end(tb_p(&b), 4 * MS, HS_END_EXIT, 0);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_END, 0);
	write_trace(&b, path);
	assert_int_equal(hs_heap_totals_path(path, &t, &streamed, &diag), 0);
	hs_trace_release(&t);
	assert_int_equal(streamed.allocs, 2);
	assert_int_equal(streamed.frees, 1);
	assert_int_equal(streamed.unmatched_frees, 1);
	assert_int_equal(streamed.leaked_blocks, 2);
	assert_int_equal(streamed.leaked_bytes, 30);
	assert_int_equal(streamed.peak_heap, 30);
	assert_int_equal(hs_trace_load(path, &t, &diag), 0);
	assert_int_equal(hs_heap_totals(&t, &loaded), 0);
	assert_memory_equal(&loaded, &streamed, sizeof(loaded));
	hs_trace_release(&t);
	unlink(path);
	free(b.buf);
}

/*
 * A trace that ended by exec: the exec freed the heap, so the 7 B live at
 * the end are no leak (the leaks view, stats and run's summary have none
 * either), streamed and loaded; everything else is as after an exit.
 */
static void no_leaks_after_exec(void **state)
{
	char path[] = "/tmp/hs-totals-XXXXXX";
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_heap_totals loaded, streamed, exited;
	struct hs_leak_totals leaks;
	struct hs_heap_stats s;
	struct hs_trace t;
	struct tb b;

	(void)state;
	build_two_threads(&b);
	tb_load(&b, &t);
	assert_int_equal(hs_heap_totals(&t, &exited), 0);
	hs_trace_release(&t);
	free(b.buf);
	assert_int_equal(exited.leaked_blocks, 1);

	build_two_threads_ending(&b, HS_END_EXEC);
	write_trace(&b, path);
	assert_int_equal(hs_heap_totals_path(path, &t, &streamed, &diag), 0);
	assert_true(t.has_end && t.end_reason == HS_END_EXEC);
	hs_trace_release(&t);
	assert_int_equal(streamed.leaked_bytes, 0);
	assert_int_equal(streamed.leaked_blocks, 0);
	assert_int_equal(streamed.peak_heap, 150);
	exited.leaked_bytes = exited.leaked_blocks = 0;
	assert_memory_equal(&streamed, &exited, sizeof(exited));
	assert_int_equal(hs_trace_load(path, &t, &diag), 0);
	assert_int_equal(hs_heap_totals(&t, &loaded), 0);
	assert_memory_equal(&loaded, &streamed, sizeof(loaded));
	/* the same as the leaks of stats and of run's summary */
	assert_int_equal(hs_heap_stats_compute(&t, NULL, &s, &diag), 0);
	assert_true(s.leaked_bytes == 0 && s.leaked_blocks == 0);
	hs_heap_stats_release(&s);
	hs_trace_release(&t);
	assert_int_equal(hs_heap_summary_path(path, &t, &streamed, &leaks, &diag), 0);
	hs_trace_release(&t);
	assert_true(leaks.bytes == 0 && leaks.blocks == 0);
	assert_int_equal(streamed.leaked_blocks, 0);
	unlink(path);
	free(b.buf);
}

static void a_sampled_trace_gives_estimates(void **state)
{
	struct hs_heap_totals tot;
	struct hs_heap_stats s;
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	double est;

	(void)state;
	tb_init(&b);
	p = put_process_sampled(tb_p(&b), 1000);
	p = put_heap_program(&b, p);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 0);
	tb_load(&b, &t);
	assert_int_equal(hs_heap_totals(&t, &tot), 0);
	/* the records: the peak is 500016 B at 8 ms (put_heap_program()) */
	assert_int_equal(tot.peak_heap, 500016);
	assert_int_equal(tot.allocs, 6);
	/* the estimate: the blocks live then, each for its weight */
	est = 500000 * hs_trace_weight(&t, 500000) + 16 * hs_trace_weight(&t, 16);
	assert_true(fabs(tot.peak_heap_est - est) < 1e-6);
	assert_true(tot.peak_heap_est > (double)tot.peak_heap);
	assert_int_equal(tot.peak_ns, 8 * MS);
	/* stats gives the estimate */
	assert_int_equal(hs_heap_stats_compute(&t, NULL, &s, &diag), 0);
	assert_true(s.peak_heap_bytes == tot.peak_heap_est);
	assert_true(s.reallocs == tot.reallocs_est);
	hs_heap_stats_release(&s);
	hs_trace_release(&t);
	free(b.buf);
}

static void out_of_memory_at_every_allocation(void **state)
{
	struct hs_heap_totals tot, want;
	struct hs_trace t;
	struct tb b;
	long n;
	int err;

	(void)state;
	build_two_threads(&b);
	tb_load(&b, &t);
	assert_int_equal(hs_heap_totals(&t, &want), 0);
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_heap_totals(&t, &tot);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(tot.allocs, 0);	/* nothing half done */
	}
	assert_memory_equal(&tot, &want, sizeof(tot));
	hs_trace_release(&t);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(peak_in_time_order_everywhere),
		cmocka_unit_test(a_sampled_trace_gives_estimates),
		cmocka_unit_test(address_zero_is_never_live),
		cmocka_unit_test(no_leaks_after_exec),
		cmocka_unit_test(out_of_memory_at_every_allocation),
	};
	return cmocka_run_group_tests_name("totals", tests, NULL, NULL);
}
