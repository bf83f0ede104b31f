#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/diff.h"
#include "common/alloc.h"
#include "testutil.h"

/* Add a sample whose stack is given root first as "a;b;c". */
static void add(struct hs_stack_source *src, const char *path, int64_t t_ms,
		double metric)
{
	tu_sample(src, t_ms * 1000000, metric, 1, path);
}

/* Sum of metric over samples whose stack's leaf frame is named @leaf. */
static double leaf_total(const struct hs_stack_source *src, const char *leaf)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < src->nr_samples; i++) {
		uint32_t s = src->stack[i];

		if (s != HS_NO_STACK &&
		    !strcmp(hs_source_frame_name(src, src->stack_frame[s]), leaf))
			sum += src->metric[i];
	}
	return sum;
}

static void baseline_is_negated_on_raw_stacks(void **state)
{
	struct hs_stack_source base, test, out;
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	double m, c;

	(void)state;
	hs_source_init(&base);
	hs_source_init(&test);
	hs_source_init(&out);
	add(&base, "/bin/prog!main;/lib/libc.so.6!malloc", 1, 10);
	add(&base, "/bin/prog!main;/bin/prog!old", 2, 4);
	add(&test, "/bin/prog!main;/lib/libc.so.6!malloc", 1, 15);
	add(&test, "/bin/prog!main;/bin/prog!new", 3, 5);
	assert_int_equal(hs_diff_build(&base, &p, &test, &p, &out, NULL), 0);

	assert_int_equal(out.nr_samples, 4);
	hs_source_totals(&out, &m, &c);
	assert_true(m == 15 + 5 - 10 - 4);
	assert_true(c == 0);
	/* raw full names are kept, not display names */
	assert_true(leaf_total(&out, "/lib/libc.so.6!malloc") == 5);
	assert_true(leaf_total(&out, "/bin/prog!old") == -4);
	assert_true(leaf_total(&out, "/bin/prog!new") == 5);
	/* one interned stack serves both sides */
	assert_int_equal(out.nr_stacks, 4);
	assert_int_equal(out.stack[0], out.stack[2]);
	hs_source_release(&base);
	hs_source_release(&test);
	hs_source_release(&out);
}

static void each_side_has_its_own_time_window(void **state)
{
	struct hs_stack_source base, test, out;
	struct hs_filter_params pb = HS_FILTER_PARAMS_INIT, pt = HS_FILTER_PARAMS_INIT;
	double m, c;

	(void)state;
	hs_source_init(&base);
	hs_source_init(&test);
	hs_source_init(&out);
	add(&base, "a;b", 10, 1);
	add(&base, "a;b", 20, 2);
	add(&test, "a;b", 10, 4);
	add(&test, "a;b", 20, 8);
	pb.end_ms = 15;		/* base keeps t=10 only */
	pt.start_ms = 15;	/* test keeps t=20 only */
	assert_int_equal(hs_diff_build(&base, &pb, &test, &pt, &out, NULL), 0);
	assert_int_equal(out.nr_samples, 2);
	hs_source_totals(&out, &m, &c);
	assert_true(m == 8 - 1);
	assert_true(c == 0);
	hs_source_release(&base);
	hs_source_release(&test);
	hs_source_release(&out);
}

static void deep_stacks_keep_the_leaf_most_frames(void **state)
{
	struct hs_stack_source base, test, out;
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	static char path[16384];
	size_t len = 0;
	int i;

	(void)state;
	hs_source_init(&base);
	hs_source_init(&test);
	hs_source_init(&out);
	for (i = 0; i < HS_DIFF_MAX_DEPTH + 5; i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%sf%d",
					i ? ";" : "", i);
	add(&test, path, 0, 1);
	assert_int_equal(hs_diff_build(&base, &p, &test, &p, &out, NULL), 0);
	assert_int_equal(hs_source_depth(&out, out.stack[0]), HS_DIFF_MAX_DEPTH);
	assert_string_equal(hs_source_frame_name(&out, out.stack_frame[out.stack[0]]), "f1004");
	hs_source_release(&base);
	hs_source_release(&test);
	hs_source_release(&out);
}

static void a_source_minus_itself_is_zero_everywhere(void **state)
{
	struct hs_stack_source src, out;
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	double *per_stack;
	unsigned seed = 12345;
	size_t i;
	int k;

	(void)state;
	hs_source_init(&src);
	hs_source_init(&out);
	for (k = 0; k < 2000; k++) {
		char path[256];
		int depth = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 6, d;
		size_t len = 0;

		for (d = 0; d < depth; d++)
			len += (size_t)snprintf(path + len, sizeof(path) - len, "%sf%u",
						d ? ";" : "",
						((seed = seed * 1103515245 + 12345) >> 16) % 7);
		add(&src, path, k, (double)(((seed = seed * 1103515245 + 12345) >> 16) % 1000) - 300);
	}
	assert_int_equal(hs_diff_build(&src, &p, &src, &p, &out, NULL), 0);
	per_stack = hs_calloc(out.nr_stacks, sizeof(double));
	for (i = 0; i < out.nr_samples; i++)
		per_stack[out.stack[i]] += out.metric[i];
	for (i = 0; i < out.nr_stacks; i++)
		assert_true(per_stack[i] == 0);
	hs_free(per_stack);
	hs_source_release(&src);
	hs_source_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(baseline_is_negated_on_raw_stacks),
		cmocka_unit_test(each_side_has_its_own_time_window),
		cmocka_unit_test(deep_stacks_keep_the_leaf_most_frames),
		cmocka_unit_test(a_source_minus_itself_is_zero_everywhere),
	};
	return cmocka_run_group_tests_name("diff", tests, NULL, NULL);
}
