#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/overweight.h"
#include "common/alloc.h"
#include "testutil.h"

static void add(struct hs_stack_source *src, const char *path, double metric)
{
	tu_sample(src, 0, metric, 1, path);
}

static const struct hs_overweight_row *row(const struct hs_overweight *ow, const char *name)
{
	size_t i;

	for (i = 0; i < ow->nr; i++)
		if (!strcmp(ow->rows[i].name, name))
			return &ow->rows[i];
	return NULL;
}

static void growth_out_of_proportion_is_overweight(void **state)
{
	struct hs_stack_source base, test;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_overweight ow;
	const struct hs_overweight_row *r;

	(void)state;
	hs_source_init(&base);
	hs_source_init(&test);
	add(&base, "main;a", 10);
	add(&base, "main;b", 10);
	add(&base, "main;gone", 1);
	add(&test, "main;a", 10);
	add(&test, "main;b", 30);
	add(&test, "main;new", 1);
	assert_int_equal(hs_overweight_compute(&base, &p, &test, &p, &ow, NULL), 0);
	assert_true(ow.base_total == 21 && ow.test_total == 41);

	/* growth = 41/21; b: delta 20, expected 10 * 20/21 */
	r = row(&ow, "b");
	assert_non_null(r);
	assert_true(r->base == 10 && r->test == 30 && r->delta == 20);
	assert_true(fabs(r->overweight_pct - 100 * 20 / (10 * 20.0 / 21)) < 1e-9);
	assert_true(fabs(r->responsibility_pct - 100.0) < 1e-9);
	/* |OW| > 110, |Resp| > 5 and > 20, 30/41 < 0.95 and < 0.75 */
	assert_int_equal(r->interest, 5);

	/* ROOT and main grew exactly as the whole: 100% both ways */
	r = row(&ow, "ROOT");
	assert_non_null(r);
	assert_true(fabs(r->overweight_pct - 100) < 1e-9);
	assert_true(fabs(r->responsibility_pct - 100) < 1e-9);
	assert_int_equal(r->interest, 2);
	assert_non_null(row(&ow, "main"));

	/* unchanged a is under 2% responsibility; gone/new are one-sided */
	assert_null(row(&ow, "a"));
	assert_null(row(&ow, "gone"));
	assert_null(row(&ow, "new"));
	assert_int_equal(ow.nr, 3);
	assert_string_equal(ow.rows[0].name, "b");	/* most interesting first */
	hs_overweight_release(&ow);
	hs_source_release(&base);
	hs_source_release(&test);
}

static void equal_totals_give_no_rows(void **state)
{
	struct hs_stack_source base, test;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_overweight ow;

	(void)state;
	hs_source_init(&base);
	hs_source_init(&test);
	add(&base, "main;a", 10);
	add(&test, "main;b", 10);
	assert_int_equal(hs_overweight_compute(&base, &p, &test, &p, &ow, NULL), 0);
	assert_int_equal(ow.nr, 0);
	hs_overweight_release(&ow);
	hs_source_release(&base);
	hs_source_release(&test);
}

static void patterns_apply_to_each_side(void **state)
{
	struct hs_stack_source base, test;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_overweight ow;
	const struct hs_overweight_row *r;

	(void)state;
	hs_source_init(&base);
	hs_source_init(&test);
	add(&base, "/bin/p!main;/lib/libc.so.6!malloc", 10);
	add(&base, "/bin/p!main;/lib/libc.so.6!free", 10);
	add(&test, "/bin/p!main;/lib/libc.so.6!malloc", 40);
	add(&test, "/bin/p!main;/lib/libc.so.6!free", 20);
	p.filter.group = "{%}!->module $1";
	p.fold_pct = 50;	/* ignored by the report */
	assert_int_equal(hs_overweight_compute(&base, &p, &test, &p, &ow, NULL), 0);
	r = row(&ow, "module libc.so.6");
	assert_non_null(r);
	assert_true(r->base == 20 && r->test == 60);
	assert_null(row(&ow, "libc.so.6!malloc"));
	hs_overweight_release(&ow);

	p.filter.group = "{";	/* a bad pattern is an error, not a crash */
	assert_int_equal(hs_overweight_compute(&base, &p, &test, &p, &ow, NULL), -EINVAL);
	assert_int_equal(ow.nr, 0);
	hs_source_release(&base);
	hs_source_release(&test);
}

static void outputs_are_written(void **state)
{
	struct hs_stack_source base, test;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_overweight ow;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	hs_source_init(&base);
	hs_source_init(&test);
	add(&base, "main;<b>", 10);
	add(&base, "main;a", 10);
	add(&test, "main;<b>", 30);
	add(&test, "main;a", 10);
	assert_int_equal(hs_overweight_compute(&base, &p, &test, &p, &ow, NULL), 0);

	f = open_memstream(&text, &len);
	assert_int_equal(hs_overweight_write_html(&ow, "old & base", "new", f), 0);
	fclose(f);
	assert_non_null(strstr(text, "&lt;b&gt;"));
	assert_non_null(strstr(text, "old &amp; base"));
	assert_non_null(strstr(text, "<th>Interest Level</th>"));
	assert_null(strstr(text, "<script"));
	free(text);

	f = open_memstream(&text, &len);
	assert_int_equal(hs_overweight_write_json(&ow, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "\"responsibility_pct\""));
	assert_non_null(strstr(text, "\"name\": \"<b>\""));
	free(text);

	f = open_memstream(&text, &len);
	assert_int_equal(hs_overweight_write_text(&ow, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "Base: 20.000  Test: 40.000  Delta: 20.000  Delta %: 100.0"));
	free(text);
	hs_overweight_release(&ow);
	hs_source_release(&base);
	hs_source_release(&test);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(growth_out_of_proportion_is_overweight),
		cmocka_unit_test(equal_totals_give_no_rows),
		cmocka_unit_test(patterns_apply_to_each_side),
		cmocka_unit_test(outputs_are_written),
	};
	return cmocka_run_group_tests_name("overweight", tests, NULL, NULL);
}
