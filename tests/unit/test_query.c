/*
 * test_query - chains of Drill Into / Flatten steps, the final view, the
 * When range carried along, and which part failed.
 */
#include <errno.h>
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
		cmocka_unit_test(failures_say_where),
		cmocka_unit_test(names_resolve_as_source_takes_them),
		cmocka_unit_test(allocation_failures),
	};
	return cmocka_run_group_tests_name("query", tests, NULL, NULL);
}
