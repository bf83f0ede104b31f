/*
 * Tests of a trace's stats: totals, frees matched and not, the peak, leaks
 * and what the default suppressions take, temporary allocations, the size
 * histogram, the top lists, the timelines and the JSON keys, the events
 * the collector lost; every number computed by hand from the trace below.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "analysis/stats.h"
#include "common/alloc.h"
#include "format/trace_reader.h"
#include "trace_builder.h"

#define MS 1000000

/*
 * RSS 1000 at 0 ms, 3000 at 5 ms, 2000 at 9 ms, then put_heap_program()
 * (trace_builder.h). Thread 10; f = app 0x10,
 * g = app 0x40, both called from libc 0x20.
 *   1 ms malloc 100 @0x1000 (f)      4 ms free 0x1000
 *   2 ms malloc 40 @0x2000 (g)       3 ms free 0x2000 (temporary)
 *   4 ms malloc 300000 @0x3000 (g)   5 ms realloc -> 0x4000, 500000 (f)
 *   6 ms free 0x9999 (unmatched)
 *   7 ms malloc 8 @0x5000 (f)        8 ms calloc 16 @0x5000 (g): the free
 *        of the 8 bytes was missed
 * Heap in use: 100 140 100 300100 300000 0 500000 500008 500000 500016.
 */
static void build_trace(struct tb *b)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process(p);
	p = put_sized2(p, HS_TAG_RSS, 0, 1000);
	p = put_sized2(p, HS_TAG_RSS, 5 * MS, 3000);
	p = put_sized2(p, HS_TAG_RSS, 9 * MS, 2000);
	p = put_heap_program(b, p);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

static void site_is(const struct hs_top_list *l, size_t i, const char *name, double bytes,
		    double count)
{
	assert_true(i < l->nr);
	assert_string_equal(l->site[i].name, name);
	assert_true(l->site[i].bytes == bytes);
	assert_true(l->site[i].count == count);
}

static void totals_peak_leaks(void **state)
{
	struct hs_stats_opts o = { .points = 9 };
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_heap_stats s;
	struct hs_trace t;
	struct tb b;

	(void)state;
	build_trace(&b);
	tb_load(&b, &t);
	assert_int_equal(hs_heap_stats_compute(&t, &o, &s, &diag), 0);
	assert_true(s.duration_ms == 9);
	assert_true(s.allocations == 6);
	assert_true(s.bytes_allocated == 800164);
	assert_true(fabs(s.allocations_per_second - 6 / 0.009) < 1e-9);
	assert_true(s.reallocs == 1);
	assert_true(s.frees == 3);	/* 0x2000, 0x1000, the realloc's 0x3000 */
	assert_true(s.unmatched_frees == 1);
	assert_true(s.peak_heap_bytes == 500016);
	assert_true(s.peak_heap_ms == 8);
	assert_true(s.peak_rss_bytes == 3000);
	assert_true(s.peak_rss_ms == 5);
	assert_true(s.leaked_bytes == 500016);
	assert_true(s.leaked_blocks == 2);
	assert_true(s.suppressed_bytes == 0 && s.suppressed_blocks == 0);
	assert_true(s.temporary_allocations == 2);
	assert_true(s.temporary_bytes == 300040);
	assert_int_equal(s.threads, 1);
	assert_false(s.sampled);
	assert_false(s.symbolized);
	/* sizes by bit length */
	assert_true(s.hist[4].count == 1 && s.hist[4].bytes == 8);
	assert_true(s.hist[4].min == 8 && s.hist[4].max == 15);
	assert_true(s.hist[5].count == 1 && s.hist[5].bytes == 16);
	assert_true(s.hist[6].count == 1 && s.hist[6].bytes == 40);
	assert_true(s.hist[7].count == 1 && s.hist[7].bytes == 100);
	assert_true(s.hist[19].count == 2 && s.hist[19].bytes == 800000);
	assert_true(s.hist[19].min == 262144 && s.hist[19].max == 524287);
	assert_true(s.hist[0].count == 0 && s.hist[20].count == 0);
	/* the call sites: the allocator folded into f and g */
	assert_int_equal(s.by_bytes.nr, 2);
	site_is(&s.by_bytes, 0, "app!0x10", 500108, 3);
	site_is(&s.by_bytes, 1, "app!0x40", 300056, 3);
	site_is(&s.by_count, 0, "app!0x10", 500108, 3);	/* a tie: by bytes */
	site_is(&s.by_leaked, 0, "app!0x10", 500000, 1);
	site_is(&s.by_leaked, 1, "app!0x40", 16, 1);
	site_is(&s.at_peak, 0, "app!0x10", 500000, 1);
	site_is(&s.at_peak, 1, "app!0x40", 16, 1);
	hs_heap_stats_release(&s);
	hs_trace_release(&t);
	free(b.buf);
}

static void timelines(void **state)
{
	static const double heap[9] = { 0, 100, 140, 140, 300100, 500000, 500000, 500008,
					500016 };
	static const double rss[9] = { 1000, 1000, 1000, 1000, 1000, 3000, 3000, 3000, 3000 };
	struct hs_timeline h, r;
	struct hs_trace t;
	struct tb b;
	json_t *j;
	char *text;
	size_t i;

	(void)state;
	build_trace(&b);
	tb_load(&b, &t);
	assert_int_equal(hs_heap_timelines(&t, 9, &h, &r), 0);
	/* 1 ms buckets: each bucket's highest value, the value before it included */
	assert_int_equal(h.n, 9);
	assert_int_equal(r.n, 9);
	for (i = 0; i < 9; i++) {
		assert_true(fabs(h.ms[i] - (double)i) < 1e-9);
		assert_true(h.bytes[i] == heap[i]);
		assert_true(r.bytes[i] == rss[i]);
	}
	j = hs_timeline_json(&r);
	text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(text, "[[0.0,1000],[1.0,1000],[2.0,1000],[3.0,1000],[4.0,1000],"
				  "[5.0,3000],[6.0,3000],[7.0,3000],[8.0,3000]]");
	free(text);
	json_decref(j);
	hs_timeline_release(&h);
	hs_timeline_release(&r);
	/* fewer points than buckets of data: highest values kept */
	assert_int_equal(hs_heap_timelines(&t, 2, &h, NULL), 0);
	assert_int_equal(h.n, 2);
	assert_true(h.bytes[0] == 300100 && h.bytes[1] == 500016);
	hs_timeline_release(&h);
	hs_trace_release(&t);
	free(b.buf);
}

static void json_keys(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	static const char *const keys[] = {
		"total_allocations", "total_frees", "bytes_allocated", "peak_heap_bytes",
		"peak_heap_ms", "peak_rss_bytes", "leaked_bytes", "leaked_blocks",
		"temporary_allocations", "allocations_per_second", "duration_ms",
		"size_histogram", "top_by_bytes", "top_by_count", "top_by_leaked",
		"top_at_peak", "heap_timeline", "rss_timeline", "complete", "lost",
	};
	struct hs_heap_stats s;
	struct hs_trace t;
	struct tb b;
	json_t *j, *e;
	size_t i;

	(void)state;
	build_trace(&b);
	tb_load(&b, &t);
	assert_int_equal(hs_heap_stats_compute(&t, NULL, &s, &diag), 0);
	j = hs_heap_stats_json(&s);
	assert_non_null(j);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_non_null(json_object_get(j, keys[i]));
	assert_int_equal(json_integer_value(json_object_get(j, "total_allocations")), 6);
	assert_int_equal(json_integer_value(json_object_get(j, "peak_heap_bytes")), 500016);
	assert_true(json_real_value(json_object_get(j, "peak_heap_ms")) == 8);
	assert_int_equal(json_integer_value(json_object_get(j, "leaked_blocks")), 2);
	/* no footer: nothing is known lost */
	assert_true(json_is_integer(json_object_get(j, "lost")));
	assert_int_equal(json_integer_value(json_object_get(j, "lost")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "size_histogram")), 5);
	e = json_array_get(json_object_get(j, "top_by_bytes"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "name")), "app!0x10");
	assert_int_equal(json_integer_value(json_object_get(e, "bytes")), 500108);
	/* default: at most 200 points */
	assert_true(json_array_size(json_object_get(j, "heap_timeline")) <= 200);
	json_decref(j);
	hs_heap_stats_release(&s);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * The footer's lost count (events the collector could not record) is
 * the stats' lost, in the JSON too, loaded and streamed; the numbers
 * are those of the events the trace holds.
 */
static void lost_events(void **state)
{
	char path[] = "/tmp/hs-stats-XXXXXX";
	uint64_t counts[HS_FC__COUNT] = { 0 };
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_heap_stats s;
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	json_t *j;
	int fd, streamed;

	(void)state;
	build_trace(&b);
	counts[HS_FC_LOST] = 5;
	p = put_end(tb_p(&b), 9 * MS, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, NULL, 0);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_END, 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.buf, b.len), (ssize_t)b.len);
	close(fd);
	for (streamed = 0; streamed < 2; streamed++) {
		if (streamed) {
			assert_int_equal(
			    hs_heap_stats_compute_path(path, NULL, &t, &s, &diag), 0);
		} else {
			tb_load(&b, &t);
			assert_int_equal(hs_heap_stats_compute(&t, NULL, &s, &diag), 0);
		}
		assert_true(t.has_footer);
		assert_int_equal(s.lost, 5);
		assert_false(s.cut_off);
		assert_true(s.allocations == 6);
		j = hs_heap_stats_json(&s);
		assert_non_null(j);
		assert_int_equal(json_integer_value(json_object_get(j, "lost")), 5);
		assert_true(json_is_true(json_object_get(j, "complete")));
		json_decref(j);
		hs_heap_stats_release(&s);
		hs_trace_release(&t);
	}
	unlink(path);
	free(b.buf);
}

static void empty_trace(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_heap_stats s;
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	json_t *j;

	(void)state;
	/* a trace with no events at all */
	tb_init(&b);
	p = tb_p(&b);
	p = put_process(p);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 0);
	tb_load(&b, &t);
	assert_int_equal(hs_heap_stats_compute(&t, NULL, &s, &diag), 0);
	assert_true(s.allocations == 0 && s.peak_heap_bytes == 0);
	assert_true(s.peak_heap_ms < 0 && s.peak_rss_ms < 0);
	assert_int_equal(s.by_bytes.nr, 0);
	assert_int_equal(s.heap.n, 200);	/* flat at 0 */
	assert_int_equal(s.rss.n, 0);
	/* JSON: the empty heap's peak is 0 bytes at no time; no RSS is known */
	j = hs_heap_stats_json(&s);
	assert_non_null(j);
	assert_true(json_is_integer(json_object_get(j, "peak_heap_bytes")));
	assert_int_equal(json_integer_value(json_object_get(j, "peak_heap_bytes")), 0);
	assert_true(json_is_null(json_object_get(j, "peak_heap_ms")));
	assert_true(json_is_null(json_object_get(j, "peak_rss_bytes")));
	assert_true(json_is_null(json_object_get(j, "peak_rss_ms")));
	json_decref(j);
	hs_heap_stats_release(&s);
	hs_trace_release(&t);
	free(b.buf);
}

static void out_of_memory(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_heap_stats s;
	struct hs_trace t;
	struct tb b;
	json_t *j;
	long n;
	int err;

	(void)state;
	build_trace(&b);
	tb_load(&b, &t);
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_heap_stats_compute(&t, NULL, &s, &diag);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	j = hs_heap_stats_json(&s);
	assert_non_null(j);
	json_decref(j);
	hs_heap_stats_release(&s);
	hs_trace_release(&t);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(totals_peak_leaks),
		cmocka_unit_test(timelines),
		cmocka_unit_test(json_keys),
		cmocka_unit_test(lost_events),
		cmocka_unit_test(empty_trace),
		cmocka_unit_test(out_of_memory),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
