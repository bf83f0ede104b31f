#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "io/io.h"
#include "source_text.h"

static void fixture_reads_with_totals(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("mixed.folded");
	struct hs_stack_source src;
	double metric, count;
	char path[512];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/perfview/mixed.folded", HS_TEST_DATA);
	f = fopen(path, "r");
	assert_non_null(f);
	hs_source_init(&src);
	assert_int_equal(hs_import_folded(f, &src, &d), 0);
	fclose(f);
	/* one sample per line, time 0, metric = count = the number */
	assert_source(&src,
		      "t=0 m=42 c=42 main;parse;malloc\n"
		      "t=0 m=7 c=7 main;parse\n"
		      "t=0 m=120 c=120 main;build_index;malloc\n"
		      "t=0 m=3.5 c=3.5 main;build_index;realloc\n"
		      "t=0 m=8 c=8 main;parse;malloc\n");
	hs_source_totals(&src, &metric, &count);
	assert_true(metric == 180.5 && count == 180.5);
	assert_int_equal(src.nr_stacks, 6);	/* main, +parse, +malloc, +build_index, +malloc, +realloc */
	hs_source_release(&src);
}

static void line_details(void **state)
{
	static const char text[] =
		"\xef\xbb\xbfmain;f 1\r\n"
		"  main;f\t2  \r\n"
		"Process app (12);Thread (3) x;work 12 5\n"
		"\n"
		"   \t \n"
		"a;;b 1e3\n"
		";lead;trail; -2.5\n"
		"42\n"
		"   0.5\n";
	struct hs_diag d = HS_DIAG_INIT("details");
	struct hs_stack_source src;

	(void)state;
	assert_int_equal(import_string(hs_import_folded, text, &src, &d), 0);
	assert_source(&src,
		      "t=0 m=1 c=1 main;f\n"
		      "t=0 m=2 c=2 main;f\n"
		      "t=0 m=5 c=5 Process app (12);Thread (3) x;work 12\n"
		      "t=0 m=1000 c=1000 a;;b\n"
		      "t=0 m=-2.5 c=-2.5 ;lead;trail;\n"
		      "t=0 m=42 c=42 ROOT\n"
		      "t=0 m=0.5 c=0.5 ROOT\n");
	hs_source_release(&src);
}

static void errors_name_the_line(void **state)
{
	static const struct {
		const char *text;
		uint64_t line;
		const char *msg;
	} cases[] = {
		{ "a;b\n", 1, "expected a number at the end of the line, found 'a;b'" },
		{ "a 1\n\nmain;f 12abc\n", 3, "found '12abc'" },
		{ "a 1\nb nan\n", 2, "found 'nan'" },
		{ "a 1\nb 1,5\n", 2, "found '1,5'" },
		{ "a 1\nb\0c 2\n", 2, "NUL" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hs_diag d = HS_DIAG_INIT("bad.folded");
		struct hs_stack_source src;
		size_t len = strlen(cases[i].text);
		FILE *f;
		int err;

		if (i == 4)
			len = 10;	/* the NUL case */
		f = fmemopen((void *)cases[i].text, len, "r");
		hs_source_init(&src);
		err = hs_import_folded(f, &src, &d);
		fclose(f);
		if (err != -EINVAL || d.line != cases[i].line || !strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: err %d line %llu msg '%s'", i, err,
				 (unsigned long long)d.line, d.msg);
		hs_source_release(&src);
	}
}

static void overlong_lines_are_refused(void **state)
{
	size_t n = (5u << 20);
	char *text = malloc(n + 20);
	struct hs_diag d = HS_DIAG_INIT("long");
	struct hs_stack_source src;

	(void)state;
	strcpy(text, "ok 1\n");
	memset(text + 5, 'x', n);
	strcpy(text + 5 + n, " 1\n");
	assert_int_equal(import_string(hs_import_folded, text, &src, &d), -E2BIG);
	assert_int_equal(d.line, 2);
	assert_non_null(strstr(d.msg, "a line longer than"));
	hs_source_release(&src);
	free(text);
}

/* Folded output: one line per stack in order of first use, summed metric. */
static void export_sums_per_stack(void **state)
{
	static const char text[] = "a;b 1\n5\na;c 2\na;b 3.25\n1\n";
	struct hs_diag d = HS_DIAG_INIT("sum");
	struct hs_stack_source src, back;
	char *out, *again;

	(void)state;
	assert_int_equal(import_string(hs_import_folded, text, &src, &d), 0);
	out = export_string(hs_export_folded, &src);
	/* samples on ROOT itself: an empty stack, " N" */
	assert_string_equal(out, "a;b 4.25\n 6\na;c 2\n");
	/* and it reads back as the same per-stack sums */
	assert_int_equal(import_string(hs_import_folded, out, &back, &d), 0);
	again = export_string(hs_export_folded, &back);
	assert_string_equal(again, out);
	free(out);
	free(again);
	hs_source_release(&src);
	hs_source_release(&back);
}

static void allocation_failures_are_clean(void **state)
{
	static const char text[] = "a;b;c 1\na;b;d 2\n3\nx;y 4.5\n";

	(void)state;
	assert_true(import_until_no_oom(hs_import_folded, text, 4) > 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixture_reads_with_totals),
		cmocka_unit_test(line_details),
		cmocka_unit_test(errors_name_the_line),
		cmocka_unit_test(overlong_lines_are_refused),
		cmocka_unit_test(export_sums_per_stack),
		cmocka_unit_test(allocation_failures_are_clean),
	};
	return cmocka_run_group_tests_name("folded", tests, NULL, NULL);
}
