/*
 * test_drill - Drill Into (inclusive, exclusive; by name and by node) and
 * Flatten.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "analysis/drill.h"
#include "common/alloc.h"
#include "views_helpers.h"

/* Sample @i's stack as "a;b;c" (full names, root first). */
static void expect_sample(const struct hs_stack_source *s, size_t i, double metric,
			  const char *stack)
{
	assert_true(i < s->nr_samples);
	assert_true(s->metric[i] == metric);
	assert_string_equal(tu_sample_text(s, i, ";"), stack);
}

/* The call-tree node at path "A;B;C" (display names). */
static uint32_t node_at(const struct hs_calltree *ct, const char *path)
{
	uint32_t n = 0;
	char buf[256], *p, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = strtok_r(buf, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
		const uint32_t *c = hs_tree_children(&ct->t, n);
		size_t i, nr = hs_tree_nr_children(&ct->t, n);

		for (i = 0; i < nr; i++)
			if (!strcmp(hs_tree_name(&ct->t, c[i]), p))
				break;
		assert_true(i < nr);
		n = c[i];
	}
	return n;
}

/*
 * Drill into B: inclusive = samples 1-3 (7), with their original stacks
 * (the full paths, not the display names); exclusive = sample 3 (B is its
 * leaf). After Fold% 10, D folded into the inner B, so sample 1 is B's too.
 */
static void drill_by_name(void **state)
{
	struct hs_stack_source src, out;
	struct hs_calltree ct;
	uint32_t b;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 1, 1, "A;/lib/libb.so!B;C;/lib/libb.so!B;D");
	add(&src, 10, 2, 1, "A;/lib/libb.so!B;C");
	add(&src, 20, 4, 1, "A;/lib/libb.so!B");
	add(&src, 30, 8, 1, "A;E");
	build_tree(&ct, &src, NAN);
	assert_int_equal(hs_calltree_find_name(&ct, "libb.so!B", &b), 0);
	assert_int_equal(hs_drill_name(&ct, b, HS_DRILL_INC, &out), 0);
	assert_int_equal(out.nr_samples, 3);
	expect_sample(&out, 0, 1, "A;/lib/libb.so!B;C;/lib/libb.so!B;D");
	expect_sample(&out, 1, 2, "A;/lib/libb.so!B;C");
	expect_sample(&out, 2, 4, "A;/lib/libb.so!B");
	assert_true(out.time[1] == 10000000 && out.count[1] == 1);
	hs_source_release(&out);
	assert_int_equal(hs_drill_name(&ct, b, HS_DRILL_EXC, &out), 0);
	assert_int_equal(out.nr_samples, 1);
	expect_sample(&out, 0, 4, "A;/lib/libb.so!B");
	hs_source_release(&out);
	/* ROOT: everything, or only what has no stack */
	assert_int_equal(hs_drill_name(&ct, HS_NO_FRAME, HS_DRILL_INC, &out), 0);
	assert_int_equal(out.nr_samples, 4);
	hs_source_release(&out);
	assert_int_equal(hs_drill_name(&ct, HS_NO_FRAME, HS_DRILL_EXC, &out), 0);
	assert_int_equal(out.nr_samples, 0);
	hs_source_release(&out);
	hs_calltree_release(&ct);

	build_tree(&ct, &src, 10);
	assert_int_equal(hs_drill_name(&ct, b, HS_DRILL_EXC, &out), 0);
	assert_int_equal(out.nr_samples, 2);
	expect_sample(&out, 0, 1, "A;/lib/libb.so!B;C;/lib/libb.so!B;D");
	hs_source_release(&out);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* By node: the subtree of A;B;C is samples 1 and 2; C itself only sample 2. */
static void drill_by_node(void **state)
{
	struct hs_stack_source src, out;
	struct hs_calltree ct;
	uint32_t c;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	c = node_at(&ct, "A;B;C");
	assert_int_equal(hs_drill_node(&ct, c, HS_DRILL_INC, &out), 0);
	assert_int_equal(out.nr_samples, 2);
	expect_sample(&out, 0, 1, "A;B;C;B;D");
	expect_sample(&out, 1, 2, "A;B;C");
	hs_source_release(&out);
	assert_int_equal(hs_drill_node(&ct, c, HS_DRILL_EXC, &out), 0);
	assert_int_equal(out.nr_samples, 1);
	expect_sample(&out, 0, 2, "A;B;C");
	hs_source_release(&out);
	assert_int_equal(hs_drill_node(&ct, (uint32_t)ct.t.nr, HS_DRILL_INC, &out), -EINVAL);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/*
 * A TimeMetric source drilled inside a time window keeps the original
 * metrics: viewed again with the same window they prorate the same way.
 */
static void drill_keeps_original_metrics(void **state)
{
	struct hs_stack_source src, out;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_calltree ct, ct2;
	uint32_t f;

	(void)state;
	hs_source_init(&src);
	src.kind = HS_METRIC_TIME;
	add(&src, 0, 10, 1, "main;f");
	add(&src, 50, 10, 1, "main;g");
	p.filter.start_ms = 5;
	assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
	assert_int_equal(hs_calltree_find_name(&ct, "main", &f), 0);
	assert_int_equal(hs_drill_name(&ct, f, HS_DRILL_INC, &out), 0);
	assert_int_equal(out.nr_samples, 2);
	assert_true(out.metric[0] == 10 && out.kind == HS_METRIC_TIME);
	assert_int_equal(hs_calltree_build(&ct2, &out, &p, NULL), 0);
	assert_true(ct2.t.inc[0].metric == ct.t.inc[0].metric);
	hs_calltree_release(&ct2);

	/* with an open window the derived view keeps the first one's When range */
	hs_calltree_release(&ct);
	hs_source_release(&out);
	p.filter.start_ms = NAN;
	assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
	assert_int_equal(hs_calltree_find_name(&ct, "f", &f), 0);
	assert_int_equal(hs_drill_name(&ct, f, HS_DRILL_INC, &out), 0);
	hs_calltree_when_bounds(&ct, &p.when_start_ms, &p.when_end_ms);
	assert_true(p.when_start_ms == 0 && p.when_end_ms == 50);
	assert_int_equal(hs_calltree_build(&ct2, &out, &p, NULL), 0);
	assert_true(ct2.range.start == 0 && ct2.range.end == 50000000);
	assert_true(ct2.range.bucket == ct.range.bucket);
	hs_calltree_release(&ct2);
	hs_calltree_release(&ct);
	hs_source_release(&out);
	hs_source_release(&src);
}

/* Flatten: one-frame stacks of each sample's leaf as the filter shows it. */
static void flatten(void **state)
{
	struct hs_stack_source src, out;
	struct hs_calltree ct, flat;
	struct hs_view v;

	(void)state;
	recursion_source(&src);
	add(&src, 40, 16, 1, "");
	add(&src, 50, 32, 1, "A;/usr/lib/libc.so.6!malloc");
	build_tree(&ct, &src, NAN);
	assert_int_equal(hs_flatten(&ct, &out), 0);
	assert_int_equal(out.nr_samples, 6);
	expect_sample(&out, 0, 1, "D");
	expect_sample(&out, 1, 2, "C");
	expect_sample(&out, 2, 4, "B");
	expect_sample(&out, 3, 8, "E");
	expect_sample(&out, 4, 16, "");
	expect_sample(&out, 5, 32, "libc.so.6!malloc");
	build_tree(&flat, &out, NAN);
	build_view(&v, &flat, HS_VIEW_CALLTREE, NULL);
	/* ROOT (exc 16) and five one-level children */
	assert_int_equal(v.nr_rows, 6);
	assert_row(&v.rows[0], 16, 1, 63, 6, 0);
	assert_string_equal(v.rows[1].name, "libc.so.6!malloc");
	assert_row(&v.rows[5], 1, 1, 1, 1, 0);
	hs_view_release(&v);
	hs_calltree_release(&flat);
	assert_false(out.untimed);
	hs_source_release(&out);
	hs_calltree_release(&ct);
	/* a source without times makes one without times (no When column) */
	src.untimed = 1;
	build_tree(&ct, &src, NAN);
	assert_int_equal(hs_flatten(&ct, &out), 0);
	assert_true(out.untimed);
	hs_source_release(&out);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

static void out_of_memory(void **state)
{
	struct hs_stack_source src, out;
	struct hs_calltree ct;
	long n;
	int ok = 0;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	for (n = 0; !ok && n < 200; n++) {
		int e1, e2;

		hs_alloc_fail_after(n);
		e1 = hs_drill_name(&ct, HS_NO_FRAME, HS_DRILL_INC, &out);
		hs_alloc_fail_after(-1);
		if (!e1)
			hs_source_release(&out);
		hs_alloc_fail_after(n);
		e2 = hs_flatten(&ct, &out);
		hs_alloc_fail_after(-1);
		if (!e2)
			hs_source_release(&out);
		assert_true(e1 == 0 || e1 == -ENOMEM);
		assert_true(e2 == 0 || e2 == -ENOMEM);
		ok = !e1 && !e2;
	}
	assert_true(ok);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drill_by_name),
		cmocka_unit_test(drill_by_node),
		cmocka_unit_test(drill_keeps_original_metrics),
		cmocka_unit_test(flatten),
		cmocka_unit_test(out_of_memory),
	};
	return cmocka_run_group_tests_name("drill", tests, NULL, NULL);
}
