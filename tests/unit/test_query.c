/*
 * test_query - chains of Drill Into / Flatten steps, the final view, the
 * When range carried along, and which part failed.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "analysis/query.h"
#include "common/alloc.h"
#include "views_helpers.h"

/* No step: the view of the source itself. B: exc 4, inc 1 + 2 + 4. */
static void plain_view(void **state)
{
	struct hs_query q = { .params = HS_VIEW_PARAMS_INIT, .view = { .kind = HS_VIEW_BYNAME } };
	struct hs_stack_source src;
	struct hs_query_result r;

	(void)state;
	recursion_source(&src);
	assert_int_equal(hs_query_run(&src, &q, &r, NULL), 0);
	assert_ptr_equal(r.src, &src);
	assert_true(r.view.sum.metric == 15);
	assert_row(row_named(&r.view, "B", HS_ROW_PLAIN), 4, 1, 7, 3, 0);
	assert_true(r.when_start_ms == 0 && r.when_end_ms == 30);
	hs_query_result_release(&r);
	hs_source_release(&src);
}

/* Drill into the node A;B;C: samples 1 and 2, with their original stacks. */
static void drill_by_path(void **state)
{
	static const char *const path[] = { "A", "B", "C" };
	struct hs_query_step step = {
		.kind = HS_STEP_DRILL, .params = HS_VIEW_PARAMS_INIT,
		.path = path, .path_len = 3, .what = HS_DRILL_INC,
	};
	struct hs_query q = {
		.steps = &step, .nr_steps = 1, .params = HS_VIEW_PARAMS_INIT,
		.view = { .kind = HS_VIEW_CALLTREE },
	};
	struct hs_stack_source src;
	struct hs_query_result r;

	(void)state;
	recursion_source(&src);
	assert_int_equal(hs_query_run(&src, &q, &r, NULL), 0);
	assert_ptr_equal(r.src, &r.derived);
	assert_int_equal(r.derived.nr_samples, 2);
	assert_true(r.view.sum.metric == 3);
	/* ROOT, A, B, C, B, D */
	assert_int_equal(r.view.nr_rows, 6);
	assert_row(&r.view.rows[3], 2, 1, 3, 2, 0);
	assert_string_equal(r.view.rows[5].name, "D");
	hs_query_result_release(&r);
	hs_source_release(&src);
}

/*
 * Drill into what B itself costs (sample 3, 20 ms, inside a window of
 * 15-25 ms), then Flatten: one sample with the one-frame stack B. The
 * window's When range (15-25) is kept by both derived sources.
 */
static void drill_then_flatten(void **state)
{
	struct hs_query_step steps[2] = {
		{ .kind = HS_STEP_DRILL, .params = HS_VIEW_PARAMS_INIT, .name = "B",
		  .what = HS_DRILL_EXC },
		{ .kind = HS_STEP_FLATTEN, .params = HS_VIEW_PARAMS_INIT },
	};
	struct hs_query q = {
		.steps = steps, .nr_steps = 2, .params = HS_VIEW_PARAMS_INIT,
		.view = { .kind = HS_VIEW_BYNAME },
	};
	struct hs_stack_source src;
	struct hs_query_result r;

	(void)state;
	recursion_source(&src);
	steps[0].params.filter.start_ms = 15;
	steps[0].params.filter.end_ms = 25;
	assert_int_equal(hs_query_run(&src, &q, &r, NULL), 0);
	assert_int_equal(r.derived.nr_samples, 1);
	assert_int_equal(r.derived.stack_depth[r.derived.stack[0]], 1);
	assert_row(row_named(&r.view, "B", HS_ROW_PLAIN), 4, 1, 4, 1, 0);
	assert_true(r.when_start_ms == 15 && r.when_end_ms == 25);
	assert_true(r.view.sum.start_ms == 15 && r.view.sum.end_ms == 25);
	hs_query_result_release(&r);
	hs_source_release(&src);
}

/* A missing drill name or path fails at the step, a missing focus at the view. */
static void failures_say_where(void **state)
{
	static const char *const path[] = { "A", "X" };
	struct hs_query_step step = {
		.kind = HS_STEP_DRILL, .params = HS_VIEW_PARAMS_INIT, .name = "nope",
	};
	struct hs_query q = {
		.steps = &step, .nr_steps = 1, .params = HS_VIEW_PARAMS_INIT,
		.view = { .kind = HS_VIEW_BYNAME },
	};
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_stack_source src;
	struct hs_query_result r;

	(void)state;
	recursion_source(&src);
	assert_int_equal(hs_query_run(&src, &q, &r, &d), -ENOENT);
	assert_int_equal(r.err_at, 0);
	assert_string_equal(d.msg, "no frame named 'nope'");

	d = (struct hs_diag)HS_DIAG_INIT(NULL);
	step.path = path;
	step.path_len = 2;
	assert_int_equal(hs_query_run(&src, &q, &r, &d), -ENOENT);
	assert_string_equal(d.msg, "no call-tree node 'X' at depth 2");

	d = (struct hs_diag)HS_DIAG_INIT(NULL);
	q.nr_steps = 0;
	q.view.kind = HS_VIEW_CALLERS;
	q.view.focus = "Z";
	assert_int_equal(hs_query_run(&src, &q, &r, &d), -ENOENT);
	assert_int_equal(r.err_at, 0);
	assert_string_equal(d.msg, "no frame named 'Z'");

	d = (struct hs_diag)HS_DIAG_INIT(NULL);
	q.nr_steps = 1;
	step.path_len = 0;
	step.name = "B";
	step.params.filter.inc = "@(";
	assert_int_equal(hs_query_run(&src, &q, &r, &d), -EINVAL);
	assert_int_equal(r.err_at, 0);
	assert_true(d.set);
	hs_source_release(&src);
}

/*
 * Drill into a Callers or Callees node: B's callers A (samples 1 and 2)
 * and C;B (sample 0, whose deepest B is the inner one), B's callees C
 * (sample 1) and D (sample 0).
 */
static void drill_focus_tree_node(void **state)
{
	static const char *const callers_a[] = { "B", "A" }, *const callers_cb[] = { "B", "C", "B" },
				 *const callees_c[] = { "B", "C" }, *const callees_x[] = { "B", "X" };
	struct hs_query_step step = {
		.kind = HS_STEP_DRILL, .params = HS_VIEW_PARAMS_INIT, .what = HS_DRILL_INC,
		.tree = HS_VIEW_CALLERS, .path = callers_a, .path_len = 2,
	};
	struct hs_query q = {
		.steps = &step, .nr_steps = 1, .params = HS_VIEW_PARAMS_INIT,
		.view = { .kind = HS_VIEW_BYNAME },
	};
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_stack_source src;
	struct hs_query_result r;
	long n;
	int err;

	(void)state;
	recursion_source(&src);
	assert_int_equal(hs_query_run(&src, &q, &r, NULL), 0);
	assert_int_equal(r.derived.nr_samples, 2);
	assert_true(r.view.sum.metric == 6);
	hs_query_result_release(&r);

	step.path = callers_cb;
	step.path_len = 3;
	assert_int_equal(hs_query_run(&src, &q, &r, NULL), 0);
	assert_int_equal(r.derived.nr_samples, 1);
	assert_true(r.view.sum.metric == 1 && r.derived.time[0] == 0);
	hs_query_result_release(&r);

	step.tree = HS_VIEW_CALLEES;
	step.path = callees_c;
	step.path_len = 2;
	assert_int_equal(hs_query_run(&src, &q, &r, NULL), 0);
	assert_int_equal(r.derived.nr_samples, 1);
	assert_true(r.view.sum.metric == 2);
	hs_query_result_release(&r);

	/* the root is the focus's by-name row: every sample with B */
	step.path_len = 1;
	assert_int_equal(hs_query_run(&src, &q, &r, NULL), 0);
	assert_true(r.view.sum.metric == 7);
	hs_query_result_release(&r);

	step.path = callees_x;
	step.path_len = 2;
	assert_int_equal(hs_query_run(&src, &q, &r, &d), -ENOENT);
	assert_string_equal(d.msg, "no callees node 'X' at depth 1 of 'B'");

	d = (struct hs_diag)HS_DIAG_INIT(NULL);
	step.path = callees_c;
	step.what = HS_DRILL_EXC;
	assert_int_equal(hs_query_run(&src, &q, &r, &d), -EINVAL);
	assert_string_equal(d.msg, "a callees node is drilled into inclusively");

	/* every allocation failure on the way is -ENOMEM */
	step.what = HS_DRILL_INC;
	step.tree = HS_VIEW_CALLERS;
	step.path = callers_cb;
	step.path_len = 3;
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_query_run(&src, &q, &r, NULL);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	assert_true(n > 5 && r.view.sum.metric == 1);
	hs_query_result_release(&r);
	hs_source_release(&src);
}

/*
 * Every row of every Callers and Callees tree, with and without Fold%:
 * drilling into it keeps samples that add up to its Inc and Inc Ct, so
 * a node's timeline (its When readout) is the node's.
 */
static void drill_focus_tree_matches_view(void **state)
{
	static const char *const focus[] = { "ROOT", "A", "B", "C", "D" };
	static const enum hs_view_kind kinds[] = { HS_VIEW_CALLERS, HS_VIEW_CALLEES };
	const char *path[16];
	struct hs_stack_source src;
	size_t f, k, fold, i, n, checked = 0;

	(void)state;
	recursion_source(&src);
	for (fold = 0; fold < 2; fold++)
		for (k = 0; k < 2; k++)
			for (f = 0; f < 5; f++) {
				struct hs_query q = {
					.params = HS_VIEW_PARAMS_INIT,
					.view = { .kind = kinds[k], .focus = focus[f] },
				};
				struct hs_query_result r;

				q.params.fold_pct = fold ? 10 : NAN;
				assert_int_equal(hs_query_run(&src, &q, &r, NULL), 0);
				for (i = 0; i < r.view.nr_rows; i++) {
					struct hs_query_step step = {
						.kind = HS_STEP_DRILL, .params = q.params,
						.what = HS_DRILL_INC, .tree = kinds[k],
						.path = path,
					};
					struct hs_query q2 = {
						.steps = &step, .nr_steps = 1,
						.params = HS_VIEW_PARAMS_INIT,
						.view = { .kind = HS_VIEW_BYNAME },
					};
					struct hs_query_result r2;
					uint32_t at = (uint32_t)i;

					n = r.view.rows[i].depth + 1;
					assert_true(n <= 16);
					for (; at != HS_NO_NODE; at = r.view.rows[at].parent)
						path[r.view.rows[at].depth] = r.view.rows[at].name;
					step.path_len = n;
					assert_int_equal(hs_query_run(&src, &q2, &r2, NULL), 0);
					assert_true(r2.view.sum.metric == r.view.rows[i].inc);
					assert_true(r2.view.sum.count == r.view.rows[i].inc_count);
					hs_query_result_release(&r2);
					checked++;
				}
				hs_query_result_release(&r);
			}
	assert_true(checked > 30);
	hs_source_release(&src);
}

/* Every allocation failure is reported as -ENOMEM and leaks nothing. */
static void allocation_failures(void **state)
{
	struct hs_query_step step = {
		.kind = HS_STEP_DRILL, .params = HS_VIEW_PARAMS_INIT, .name = "B",
	};
	struct hs_query q = {
		.steps = &step, .nr_steps = 1, .params = HS_VIEW_PARAMS_INIT,
		.view = { .kind = HS_VIEW_CALLER_CALLEE, .focus = "B" },
	};
	struct hs_stack_source src;
	struct hs_query_result r;
	long n;
	int err;

	(void)state;
	recursion_source(&src);
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_query_run(&src, &q, &r, NULL);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	assert_true(n > 5);
	assert_row(row_named(&r.view, "B", HS_ROW_FOCUS), 4, 1, 7, 3, 0);
	hs_query_result_release(&r);
	hs_source_release(&src);
}

/* --focus and --drill names: as shown, without module, qualified, or a miss. */
static void names_resolve_as_source_takes_them(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_stack_source src;
	struct hs_calltree ct;
	uint32_t id;

	(void)state;
	hs_source_init(&src);
	tu_sample(&src, 0, 1, 1, "/bin/app!main;/bin/app!std::vector<long>* ns::fill<long>(int)");
	tu_sample(&src, 0, 1, 1, "/bin/app!main;/bin/app!ns::fill<int>(int)");
	tu_sample(&src, 0, 1, 1, "/bin/app!main;/bin/app!other");
	assert_int_equal(hs_calltree_build(&ct, &src, &p, &d), 0);
	assert_int_equal(hs_query_resolve_name(&ct, "ROOT", &id, &d), 0);
	assert_int_equal(id, HS_NO_FRAME);
	assert_int_equal(hs_query_resolve_name(&ct, "other", &id, &d), 0);
	assert_string_equal(hs_source_frame_name(&ct.f.out, id), "app!other");
	assert_int_equal(hs_query_resolve_name(&ct, "app!other", &id, &d), 0);
	assert_string_equal(hs_source_frame_name(&ct.f.out, id), "app!other");
	assert_int_equal(hs_query_resolve_name(&ct, "fill<long>", &id, &d), 0);
	assert_string_equal(hs_source_frame_name(&ct.f.out, id),
			    "app!std::vector<long>* ns::fill<long>(int)");
	assert_int_equal(hs_query_resolve_name(&ct, "ns::fill", &id, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "'ns::fill' names 2 frames (give one as shown): "));
	d = (struct hs_diag)HS_DIAG_INIT(NULL);
	assert_int_equal(hs_query_resolve_name(&ct, "othe", &id, &d), -ENOENT);
	assert_string_equal(d.msg, "no frame named 'othe'; did you mean 'app!other'?");
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_view),
		cmocka_unit_test(drill_by_path),
		cmocka_unit_test(drill_then_flatten),
		cmocka_unit_test(drill_focus_tree_node),
		cmocka_unit_test(drill_focus_tree_matches_view),
		cmocka_unit_test(failures_say_where),
		cmocka_unit_test(names_resolve_as_source_takes_them),
		cmocka_unit_test(allocation_failures),
	};
	return cmocka_run_group_tests_name("query", tests, NULL, NULL);
}
