/*
 * Tests of model/source_merge.c: appending sources keeps every sample's
 * stack, location, time, metric and count, under a top frame when asked;
 * units must agree; process frames are recognised, and renamed when asked.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "model/source_merge.h"
#include "testutil.h"

static void appends_under_top_frames(void **state)
{
	struct hs_stack_source a, b, all;
	uint32_t f, s, loc, line;

	(void)state;
	hs_source_init(&a);
	hs_source_init(&b);
	hs_source_init(&all);
	a.metric_unit = hs_strdup("bytes");
	a.view_name = hs_strdup("alloc");
	b.metric_unit = hs_strdup("bytes");
	tu_sample(&a, 5, 10, 1, "Process a (1);main;f");
	tu_sample(&a, 6, 1, 2, NULL);
	assert_int_equal(hs_source_intern_frame(&b, "g", 1, &f), 0);
	assert_int_equal(hs_source_intern_loc(&b, "g.c", 3, 9, &loc), 0);
	assert_int_equal(hs_source_intern_stack_loc(&b, f, tu_path(&b, "main"), loc, &s), 0);
	assert_int_equal(hs_source_add_sample(&b, 7, 20, 3, s), 0);
	assert_true(hs_source_has_process_frames(&a) == 0);	/* the ROOT sample */
	assert_int_equal(hs_source_append(&all, &a, NULL), 0);
	assert_int_equal(hs_source_append(&all, &b, "Trace b"), 0);
	assert_string_equal(all.metric_unit, "bytes");
	assert_string_equal(all.view_name, "alloc");
	assert_int_equal(all.nr_samples, 3);
	assert_string_equal(tu_sample_text(&all, 0, ";"), "Process a (1);main;f");
	assert_true(all.time[0] == 5 && all.metric[0] == 10 && all.count[0] == 1);
	assert_int_equal(all.stack[1], HS_NO_STACK);
	assert_string_equal(tu_sample_text(&all, 2, ";"), "Trace b;main;g");
	assert_true(all.time[2] == 7 && all.metric[2] == 20 && all.count[2] == 3);
	assert_string_equal(hs_source_loc(&all, hs_source_stack_loc(&all, all.stack[2]), &line),
			    "g.c");
	assert_int_equal(line, 9);
	hs_source_release(&all);
	hs_source_release(&b);
	hs_source_release(&a);
}

static void units_must_agree(void **state)
{
	struct hs_stack_source a, b, all;

	(void)state;
	hs_source_init(&a);
	hs_source_init(&b);
	hs_source_init(&all);
	a.metric_unit = hs_strdup("bytes");
	b.metric_unit = hs_strdup("ms");
	b.kind = HS_METRIC_TIME;
	tu_sample(&a, 0, 1, 1, "x");
	tu_sample(&b, 0, 1, 1, "y");
	assert_int_equal(hs_source_append(&all, &a, NULL), 0);
	assert_int_equal(hs_source_append(&all, &b, NULL), -EINVAL);
	assert_int_equal(all.nr_samples, 1);
	hs_source_release(&all);
	hs_source_release(&b);
	hs_source_release(&a);
}

static void process_frames_are_recognised(void **state)
{
	struct hs_stack_source a;

	(void)state;
	hs_source_init(&a);
	tu_sample(&a, 0, 1, 1, "Process p (1);Thread (1) p;main");
	tu_sample(&a, 0, 1, 1, "Process q (2);main");
	assert_true(hs_source_has_process_frames(&a));
	tu_sample(&a, 0, 1, 1, "main;Process r (3)");
	assert_false(hs_source_has_process_frames(&a));
	hs_source_release(&a);
}

/* hs_source_append_as(): an exec'd image's traces under one process frame. */
static void process_frames_renamed(void **state)
{
	struct hs_stack_source pre, post, all;

	(void)state;
	hs_source_init(&pre);
	hs_source_init(&post);
	hs_source_init(&all);
	tu_sample(&pre, 1, 10, 1, "Process sh (7);Thread (7) sh;dash!main");
	tu_sample(&pre, 2, 5, 1, "Process sh (7);Thread (7) sh;Process x");
	tu_sample(&post, 3, 20, 2, "Process cc (7);Thread (7) cc;cc!main");
	assert_int_equal(hs_source_append_as(&all, &pre, "Process cc (7)"), 0);
	assert_int_equal(hs_source_append(&all, &post, NULL), 0);
	assert_int_equal(all.nr_samples, 3);
	assert_string_equal(tu_sample_text(&all, 0, ";"), "Process cc (7);Thread (7) sh;dash!main");
	/* only the root frame is the process's */
	assert_string_equal(tu_sample_text(&all, 1, ";"), "Process cc (7);Thread (7) sh;Process x");
	assert_string_equal(tu_sample_text(&all, 2, ";"), "Process cc (7);Thread (7) cc;cc!main");
	/* one process node: the two images' root stacks are one */
	assert_int_equal(all.stack_caller[all.stack_caller[all.stack[0]]],
			 all.stack_caller[all.stack_caller[all.stack[2]]]);
	hs_source_release(&all);
	hs_source_release(&post);
	hs_source_release(&pre);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(appends_under_top_frames),
		cmocka_unit_test(units_must_agree),
		cmocka_unit_test(process_frames_are_recognised),
		cmocka_unit_test(process_frames_renamed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
