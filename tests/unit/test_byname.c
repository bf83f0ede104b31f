/*
 * test_byname - the ByName view and the Flame Graph, by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "views_helpers.h"

/*
 * Recursion A->B->C->B->D (1), A->B->C (2), A->B (4), A->E (8): B's
 * exclusive is 4 (only the outer B is a leaf), its inclusive 7 (the inner B
 * is under the outer one, so sample 1 counts once). Sorted by |Exc|; equal
 * rows by |Inc| then name.
 */
static void recursion_byname(void **state)
{
	static const char *const order[] = { "E", "B", "C", "D", "A", "ROOT" };
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	size_t i;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	assert_int_equal(v.nr_rows, 6);
	for (i = 0; i < 6; i++)
		assert_string_equal(v.rows[i].name, order[i]);
	assert_row(&v.rows[0], 8, 1, 8, 1, 0);
	assert_row(&v.rows[1], 4, 1, 7, 3, 0);
	assert_row(&v.rows[2], 2, 1, 3, 2, 0);
	assert_row(&v.rows[3], 1, 1, 1, 1, 0);
	assert_row(&v.rows[4], 0, 0, 15, 4, 0);
	assert_row(&v.rows[5], 0, 0, 15, 4, 0);
	/* B's First/Last: its samples at 0, 10, 20 ms */
	assert_true(v.rows[1].first == 0 && v.rows[1].last == 20000000);
	assert_true(v.basis == 15);
	hs_view_release(&v);

	/* --limit keeps the top rows */
	{
		struct hs_view_opts o = { .kind = HS_VIEW_BYNAME, .limit = 2 };

		assert_int_equal(hs_view_build(&v, &ct, &o), 0);
		assert_int_equal(v.nr_rows, 2);
		assert_int_equal(v.nr_total, 6);
		assert_string_equal(v.rows[1].name, "B");
		hs_view_release(&v);
	}
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* A name twice on one stack counts once in its inclusive cost. */
static void inclusive_once_per_sample(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 4, 1, "A;B;A;B");
	add(&src, 1, 2, 1, "B;A");
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	assert_row(row_named(&v, "A", HS_ROW_PLAIN), 2, 1, 6, 2, 0);
	assert_row(row_named(&v, "B", HS_ROW_PLAIN), 4, 1, 6, 2, 0);
	assert_row(row_named(&v, "ROOT", HS_ROW_PLAIN), 0, 0, 6, 2, 0);
	/*
	 * When: each name's samples once. Buckets of 1.0012 / 32 ms from
	 * -0.0006: t = 0 in bucket 0, t = 1 in bucket 31. The scale is half
	 * ROOT's peak (4 / 2): 4 prints as K (200%), 2 as A (100%).
	 */
	assert_string_equal(row_named(&v, "A", HS_ROW_PLAIN)->when,
			    "K______________________________A");
	assert_string_equal(row_named(&v, "B", HS_ROW_PLAIN)->when,
			    "K______________________________A");
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Adjacent identical frames (recursion through one frame) merge. */
static void adjacent_duplicates_collapse(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 2, 1, "main;f;f;f;g");
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 4);
	assert_string_equal(v.rows[2].name, "f");
	assert_string_equal(v.rows[3].name, "g");
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/*
 * Flame Graph: folded stacks, root first, each node's exclusive cost;
 * rectangles of width |Inc| / |total|, children centred under the parent.
 */
static void flame_graph(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	char *text;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_FLAME, NULL);
	text = capture(&v, hs_view_write_folded);
	assert_string_equal(text, "A;E 8\nA;B 4\nA;B;C 2\nA;B;C;B;D 1\n");
	free(text);
	/* ROOT, A, E, B, C, B, D */
	assert_int_equal(v.nr_rows, 7);
	assert_true(v.rows[0].x == 0 && v.rows[0].width == 1);
	assert_true(v.rows[1].x == 0 && v.rows[1].width == 1);
	assert_true(v.rows[2].x == 0 && fabs(v.rows[2].width - 8.0 / 15) < 1e-12);
	assert_true(fabs(v.rows[3].x - 8.0 / 15) < 1e-12);
	assert_true(fabs(v.rows[3].width - 7.0 / 15) < 1e-12);
	assert_true(fabs(v.rows[4].x - 10.0 / 15) < 1e-12);	/* C: centred under B */
	assert_true(fabs(v.rows[5].x - 11.0 / 15) < 1e-12);	/* inner B under C */
	assert_true(fabs(v.rows[6].x - 11.0 / 15) < 1e-12);
	assert_true(fabs(v.rows[6].width - 1.0 / 15) < 1e-12);
	hs_view_release(&v);

	/* --depth 2: what is below shows in the deepest row kept */
	{
		struct hs_view_opts o = { .kind = HS_VIEW_FLAME, .max_depth = 2 };

		assert_int_equal(hs_view_build(&v, &ct, &o), 0);
		text = capture(&v, hs_view_write_folded);
		assert_string_equal(text, "A;E 8\nA;B 7\n");
		free(text);
		hs_view_release(&v);
	}
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Negative Inc (a diff) still takes |Inc| of width. */
static void flame_graph_negative(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 6, 1, "m;grow");
	add(&src, 0, -2, -1, "m;shrink");
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_FLAME, NULL);
	/* total 4: m is 4/4 wide; its children 6/4 + 2/4 overflow, centred */
	assert_int_equal(v.nr_rows, 4);
	assert_true(fabs(v.rows[2].x - (-0.5)) < 1e-12 && fabs(v.rows[2].width - 1.5) < 1e-12);
	assert_true(fabs(v.rows[3].x - 1.0) < 1e-12 && fabs(v.rows[3].width - 0.5) < 1e-12);
	assert_true(v.rows[3].inc == -2);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/*
 * Names lose a trailing " {annotation}" for display; braces that are part
 * of a name (C++ lambdas, Rust closures) stay.
 */
static void display_names(void **state)
{
	static const char *const whole[] = {
		"plain", "{anon}", "List{T}.Add",
		"app!main::{lambda(int)#1}::operator()(int) const",
		"app!main::{lambda(int)#2}", "app!r::worker::{closure#0}",
		"app!r::worker::{{closure}}", "app!f::{closure#0}::{closure#1}",
		"a }", "a {b", "a {b}}", " {x}",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		assert_int_equal(hs_view_display_len(whole[i]), strlen(whole[i]));
	assert_int_equal(hs_view_display_len("app!Foo::bar {Tier1}"), 12);
	assert_int_equal(hs_view_display_len("Foo  {a {b} c}"), 3);
	assert_int_equal(hs_view_display_len("x::{lambda()#1} {note}"), 15);
	assert_int_equal(hs_view_display_len("A {x} {y}"), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recursion_byname),
		cmocka_unit_test(inclusive_once_per_sample),
		cmocka_unit_test(adjacent_duplicates_collapse),
		cmocka_unit_test(flame_graph),
		cmocka_unit_test(flame_graph_negative),
		cmocka_unit_test(display_names),
	};
	return cmocka_run_group_tests_name("byname", tests, NULL, NULL);
}
