/*
 * Tests of analysis/stats_chain.c's combining of the images' stats: the
 * counts summed, the histogram's classes joined, the highest peak with its
 * own top list and time, leaks as the images had them, the timelines
 * placed at each image's start then cut to the points asked for. The
 * whole chain read from files is t5222's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/stats_chain.h"
#include "common/alloc.h"

/* A timeline of @n points from @ms and @bytes. */
static void timeline(struct hs_timeline *tl, const double *ms, const double *bytes,
		     size_t n)
{
	tl->ms = hs_malloc(n * sizeof(*tl->ms));
	tl->bytes = hs_malloc(n * sizeof(*tl->bytes));
	assert_non_null(tl->ms);
	assert_non_null(tl->bytes);
	memcpy(tl->ms, ms, n * sizeof(*ms));
	memcpy(tl->bytes, bytes, n * sizeof(*bytes));
	tl->n = n;
}

/* A top list of one site @name. */
static void one_site(struct hs_top_list *l, const char *name, double bytes)
{
	l->site = hs_calloc(1, sizeof(*l->site));
	assert_non_null(l->site);
	l->site[0].name = hs_strdup(name);
	assert_non_null(l->site[0].name);
	l->site[0].bytes = bytes;
	l->site[0].count = 1;
	l->nr = 1;
}

/*
 * The shell: 2 ms, 3 allocations of 300 bytes, heap 100 then 200 at 1 ms,
 * no leaks (its exec freed them). The program, 10 ms later: 5 ms, 4
 * allocations of 1000 bytes, heap 150 then 10, RSS 3000, 50 bytes leaked.
 */
static void make_images(struct hs_heap_stats *sh, struct hs_heap_stats *prog)
{
	memset(sh, 0, sizeof(*sh));
	sh->duration_ms = 2;
	sh->allocations = 3;
	sh->bytes_allocated = 300;
	sh->frees = 1;
	sh->peak_heap_bytes = 200;
	sh->peak_heap_ms = 1;
	sh->peak_rss_bytes = 1000;
	sh->peak_rss_ms = 0.5;
	sh->threads = 1;
	sh->events = 4;
	sh->symbolized = 1;
	sh->hist[3] =
	    (struct hs_size_bucket){.min = 5, .max = 7, .count = 2, .bytes = 12};
	one_site(&sh->at_peak, "sh!peak", 200);
	timeline(&sh->heap, (double[]){0, 1}, (double[]){100, 200}, 2);
	timeline(&sh->rss, (double[]){0.5}, (double[]){1000}, 1);

	memset(prog, 0, sizeof(*prog));
	prog->duration_ms = 5;
	prog->allocations = 4;
	prog->bytes_allocated = 1000;
	prog->frees = 2;
	prog->peak_heap_bytes = 150;
	prog->peak_heap_ms = 2;
	prog->peak_rss_bytes = 3000;
	prog->peak_rss_ms = 1;
	prog->leaked_bytes = 50;
	prog->leaked_blocks = 1;
	prog->threads = 1;
	prog->events = 6;
	prog->symbolized = 0;
	prog->lost = 2;
	prog->hist[3] =
	    (struct hs_size_bucket){.min = 4, .max = 6, .count = 1, .bytes = 4};
	prog->hist[10] =
	    (struct hs_size_bucket){.min = 900, .max = 900, .count = 1, .bytes = 900};
	one_site(&prog->at_peak, "prog!peak", 150);
	timeline(&prog->heap, (double[]){0, 4}, (double[]){150, 10}, 2);
	timeline(&prog->rss, (double[]){1}, (double[]){3000}, 1);
}

static void counts_summed_peak_highest(void **state)
{
	struct hs_heap_stats acc, sh, prog;

	(void)state;
	make_images(&sh, &prog);
	hs_heap_stats_chain_init(&acc);
	assert_true(acc.peak_heap_ms < 0);
	assert_int_equal(hs_heap_stats_chain_add(&acc, &sh, 0), 0);
	assert_int_equal(hs_heap_stats_chain_add(&acc, &prog, 10), 0);
	assert_int_equal(hs_heap_stats_chain_finish(&acc, 0), 0);
	assert_true(acc.duration_ms == 15);
	assert_true(acc.allocations == 7);
	assert_true(acc.bytes_allocated == 1300);
	assert_true(acc.frees == 3);
	assert_true(fabs(acc.allocations_per_second - 7 / 0.015) < 1e-6);
	/* the shell's peak is the higher: its time and its blocks */
	assert_true(acc.peak_heap_bytes == 200);
	assert_true(acc.peak_heap_ms == 1);
	assert_int_equal(acc.at_peak.nr, 1);
	assert_string_equal(acc.at_peak.site[0].name, "sh!peak");
	/* the program's RSS, at its time in the chain */
	assert_true(acc.peak_rss_bytes == 3000);
	assert_true(acc.peak_rss_ms == 11);
	assert_true(acc.leaked_bytes == 50);
	assert_true(acc.leaked_blocks == 1);
	assert_int_equal(acc.threads, 2);
	assert_int_equal(acc.events, 10);
	assert_int_equal(acc.lost, 2);
	assert_false(acc.symbolized);
	assert_true(acc.hist[3].count == 3 && acc.hist[3].bytes == 16);
	assert_true(acc.hist[3].min == 4 && acc.hist[3].max == 7);
	assert_true(acc.hist[10].count == 1 && acc.hist[10].min == 900);
	/* the timelines at each image's start: fewer than 200 points stay */
	assert_int_equal(acc.heap.n, 4);
	assert_true(acc.heap.ms[2] == 10 && acc.heap.bytes[2] == 150);
	assert_true(acc.heap.ms[3] == 14 && acc.heap.bytes[3] == 10);
	assert_int_equal(acc.rss.n, 2);
	assert_true(acc.rss.ms[1] == 11);
	hs_heap_stats_release(&sh);
	hs_heap_stats_release(&prog);
	hs_heap_stats_release(&acc);
}

static void later_peak_and_points(void **state)
{
	struct hs_heap_stats acc, sh, prog;

	(void)state;
	make_images(&sh, &prog);
	prog.peak_heap_bytes = 900;
	hs_heap_stats_chain_init(&acc);
	assert_int_equal(hs_heap_stats_chain_add(&acc, &sh, 0), 0);
	assert_int_equal(hs_heap_stats_chain_add(&acc, &prog, 10), 0);
	/* 3 points over 15 ms: stretches of 5 ms, each its highest value */
	assert_int_equal(hs_heap_stats_chain_finish(&acc, 3), 0);
	assert_true(acc.peak_heap_bytes == 900);
	assert_true(acc.peak_heap_ms == 12);
	assert_string_equal(acc.at_peak.site[0].name, "prog!peak");
	assert_int_equal(acc.heap.n, 2);
	assert_true(acc.heap.ms[0] == 0 && acc.heap.bytes[0] == 200);
	assert_true(acc.heap.ms[1] == 10 && acc.heap.bytes[1] == 150);
	assert_int_equal(acc.rss.n, 2); /* 2 points: no cut */
	hs_heap_stats_release(&sh);
	hs_heap_stats_release(&prog);
	hs_heap_stats_release(&acc);
}

/*
 * Timelines that go back in time (an image's last points after the next
 * one's start) are cut into at most the points asked for, each stretch
 * once with its highest value, in time order.
 */
static void points_of_a_timeline_back_in_time(void **state)
{
	static const double ms[] = {0, 6, 12, 1, 7, 13, 2, 8, 14};
	static const double bytes[] = {10, 20, 30, 40, 5, 60, 1, 70, 2};
	struct hs_heap_stats acc;

	(void)state;
	hs_heap_stats_chain_init(&acc);
	acc.duration_ms = 15;
	timeline(&acc.heap, ms, bytes, 9);
	assert_int_equal(hs_heap_stats_chain_finish(&acc, 3), 0);
	assert_int_equal(acc.heap.n, 3);
	assert_true(acc.heap.ms[0] == 0 && acc.heap.bytes[0] == 40);
	assert_true(acc.heap.ms[1] == 5 && acc.heap.bytes[1] == 70);
	assert_true(acc.heap.ms[2] == 10 && acc.heap.bytes[2] == 60);
	hs_heap_stats_release(&acc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counts_summed_peak_highest),
	    cmocka_unit_test(later_peak_and_points),
	    cmocka_unit_test(points_of_a_timeline_back_in_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
