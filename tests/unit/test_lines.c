/*
 * test_lines - a function's cost per source line: inclusive once per
 * sample (also under recursion), exclusive where it is the leaf after the
 * filter (FoldPats too), frames without a location on a line of their
 * own, and the time window.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "analysis/lines.h"
#include "common/alloc.h"
#include "views_helpers.h"

/* A frame at a location: "name@file:line" or "name" (none). */
static uint32_t push(struct hs_stack_source *s, uint32_t caller, const char *spec)
{
	char name[64], file[64];
	uint32_t frame, loc = 0, stack, line = 0;
	const char *at = strchr(spec, '@');

	snprintf(name, sizeof(name), "%.*s", at ? (int)(at - spec) : (int)strlen(spec), spec);
	assert_int_equal(hs_source_intern_frame(s, name, strlen(name), &frame), 0);
	if (at) {
		assert_int_equal(sscanf(at + 1, "%63[^:]:%u", file, &line), 2);
		assert_int_equal(hs_source_intern_loc(s, file, strlen(file), line, &loc), 0);
	}
	assert_int_equal(hs_source_intern_stack_loc(s, frame, caller, loc, &stack), 0);
	return stack;
}

/* A sample at @t_ms of @metric on the stack of @n specs, root first. */
static void sample(struct hs_stack_source *s, double t_ms, double metric, int n, ...)
{
	uint32_t stack = HS_NO_STACK;
	va_list ap;

	va_start(ap, n);
	while (n--)
		stack = push(s, stack, va_arg(ap, const char *));
	va_end(ap);
	assert_int_equal(hs_source_add_sample(s, (int64_t)(t_ms * 1e6), metric, 1, stack), 0);
}

static void source(struct hs_stack_source *s)
{
	hs_source_init(s);
	sample(s, 0, 2, 2, "/bin/app!main@main.c:10", "/bin/app!f@f.c:5");
	sample(s, 10, 3, 3, "/bin/app!main@main.c:10", "/bin/app!f@f.c:6", "/bin/app!g@g.c:1");
	sample(s, 20, 4, 2, "/bin/app!main@main.c:11", "/bin/app!f@f.c:6");
	sample(s, 30, 5, 3, "/bin/app!main@main.c:12", "/bin/app!f@f.c:7", "/bin/app!f@f.c:8");
	sample(s, 40, 1, 2, "/bin/app!main", "/bin/app!f");
}

static void assert_line(const struct hs_line_cost *l, const char *file, uint32_t line,
			double exc, double inc)
{
	if (file)
		assert_string_equal(l->file, file);
	else
		assert_null(l->file);
	assert_int_equal(l->line, line);
	assert_true(l->exc == exc && l->inc == inc);
}

static void per_line(void **state)
{
	struct hs_stack_source s;
	struct hs_calltree ct;
	struct hs_lines l;

	(void)state;
	source(&s);
	build_tree(&ct, &s, NAN);
	assert_int_equal(hs_lines_compute(&ct, "app!f", &l), 0);
	assert_int_equal(l.frames, 1);
	assert_true(l.has_locations);
	assert_true(l.inc == 15 && l.inc_count == 5);
	assert_int_equal(l.nr, 5);
	assert_line(&l.line[0], "f.c", 5, 2, 2);
	assert_line(&l.line[1], "f.c", 6, 4, 7);
	assert_line(&l.line[2], "f.c", 7, 0, 5);
	assert_line(&l.line[3], "f.c", 8, 5, 5);
	assert_line(&l.line[4], NULL, 0, 1, 1);
	hs_lines_release(&l);
	assert_int_equal(hs_lines_compute(&ct, "app!main", &l), 0);
	assert_int_equal(l.nr, 4);
	assert_line(&l.line[0], "main.c", 10, 0, 5);
	assert_line(&l.line[2], "main.c", 12, 0, 5);
	hs_lines_release(&l);
	assert_int_equal(hs_lines_compute(&ct, "app!nope", &l), 0);
	assert_int_equal(l.nr, 0);
	assert_int_equal(l.frames, 0);
	hs_lines_release(&l);
	hs_calltree_release(&ct);
	hs_source_release(&s);
}

/* Only the samples the filter keeps: a window of 5-25 ms and IncPats g. */
static void filtered(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_stack_source s;
	struct hs_calltree ct;
	struct hs_lines l;

	(void)state;
	source(&s);
	p.filter.start_ms = 5;
	p.filter.end_ms = 25;
	assert_int_equal(hs_calltree_build(&ct, &s, &p, NULL), 0);
	assert_int_equal(hs_lines_compute(&ct, "app!f", &l), 0);
	assert_true(l.inc == 7);
	assert_int_equal(l.nr, 1);
	assert_line(&l.line[0], "f.c", 6, 4, 7);
	hs_lines_release(&l);
	hs_calltree_release(&ct);
	p.filter.start_ms = p.filter.end_ms = NAN;
	p.filter.inc = "g";
	assert_int_equal(hs_calltree_build(&ct, &s, &p, NULL), 0);
	assert_int_equal(hs_lines_compute(&ct, "app!f", &l), 0);
	assert_true(l.inc == 3 && l.nr == 1);
	assert_line(&l.line[0], "f.c", 6, 0, 3);
	hs_lines_release(&l);
	hs_calltree_release(&ct);
	/* FoldPats g: g's cost is f's own, on the line that called it */
	p.filter.inc = NULL;
	p.filter.fold = "app!g";
	assert_int_equal(hs_calltree_build(&ct, &s, &p, NULL), 0);
	assert_int_equal(hs_lines_compute(&ct, "app!f", &l), 0);
	assert_line(&l.line[1], "f.c", 6, 7, 7);
	hs_lines_release(&l);
	hs_calltree_release(&ct);
	hs_source_release(&s);
}

static void allocation_failures(void **state)
{
	struct hs_stack_source s;
	struct hs_calltree ct;
	struct hs_lines l;
	long n;
	int err;

	(void)state;
	source(&s);
	build_tree(&ct, &s, NAN);
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_lines_compute(&ct, "app!f", &l);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_null(l.line);
	}
	assert_int_equal(l.nr, 5);
	hs_lines_release(&l);
	hs_calltree_release(&ct);
	hs_source_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(per_line),
		cmocka_unit_test(filtered),
		cmocka_unit_test(allocation_failures),
	};
	return cmocka_run_group_tests_name("lines", tests, NULL, NULL);
}
