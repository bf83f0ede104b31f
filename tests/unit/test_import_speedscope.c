/*
 * Tests of speedscope's file format: heapscope's export (io/export.c) read
 * back by io/import_speedscope.c, the evented form speedscope also saves,
 * and malformed files as errors with a message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "io/io.h"
#include "testutil.h"

/* A file holding @text, rewound. */
static FILE *text_file(const char *text)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	fputs(text, f);
	rewind(f);
	return f;
}

/* The sum of the metrics of the samples on stack text @want. */
static double sum_on(const struct hs_stack_source *src, const char *want)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < src->nr_samples; i++)
		if (!strcmp(tu_sample_text(src, i, ";"), want))
			sum += src->metric[i];
	return sum;
}

static void export_reads_back(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("t.speedscope.json");
	struct hs_stack_source src, back;
	unsigned char head[256];
	uint32_t main_f, parse_f, s_main, s_parse, loc, line;
	FILE *f = tmpfile();
	size_t n;

	(void)state;
	hs_source_init(&src);
	src.metric_unit = hs_strdup("bytes");
	src.view_name = hs_strdup("leaks");
	assert_int_equal(hs_source_intern_frame(&src, "/bin/prog!main", 14, &main_f), 0);
	assert_int_equal(hs_source_intern_frame(&src, "/bin/prog!parse", 15, &parse_f), 0);
	assert_int_equal(hs_source_intern_stack(&src, main_f, HS_NO_STACK, &s_main), 0);
	assert_int_equal(hs_source_intern_loc(&src, "parse.c", 7, 42, &loc), 0);
	assert_int_equal(hs_source_intern_stack_loc(&src, parse_f, s_main, loc, &s_parse), 0);
	assert_int_equal(hs_source_add_sample(&src, 0, 64, 1, s_parse), 0);
	assert_int_equal(hs_source_add_sample(&src, 5, 36, 1, s_parse), 0);
	assert_int_equal(hs_source_add_sample(&src, 9, 8, 1, s_main), 0);
	tu_sample(&src, 10, 2, 1, "other \"quoted\"");
	assert_non_null(f);
	assert_int_equal(hs_export_speedscope(&src, f), 0);
	rewind(f);
	n = fread(head, 1, sizeof(head), f);
	assert_true(hs_speedscope_sniff(head, n));
	assert_int_equal(hs_format_sniff(head, n), HS_FORMAT_SPEEDSCOPE);
	rewind(f);
	hs_source_init(&back);
	tu_expect_ok(hs_import_speedscope_stream(f, 0, NULL, &back, &d), &d);
	fclose(f);
	/* per-stack sums; the directory of a module is not shown */
	assert_int_equal(back.nr_samples, 3);
	assert_true(sum_on(&back, "prog!main;prog!parse") == 100);
	assert_true(sum_on(&back, "prog!main") == 8);
	assert_true(sum_on(&back, "other \"quoted\"") == 2);
	assert_string_equal(back.metric_unit, "bytes");
	assert_int_equal(back.kind, HS_METRIC_PLAIN);
	assert_string_equal(hs_source_loc(&back, hs_source_stack_loc(&back, back.stack[0]),
					  &line), "parse.c");
	assert_int_equal(line, 42);
	hs_source_release(&back);
	hs_source_release(&src);
}

static void evented_profiles_charge_time_between_events(void **state)
{
	static const char text[] =
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"shared\":{\"frames\":[{\"name\":\"main\"},{\"name\":\"work\"}]},"
		"\"profiles\":[{\"type\":\"evented\",\"name\":\"p\",\"unit\":\"microseconds\","
		"\"startValue\":0,\"endValue\":10,\"events\":["
		"{\"type\":\"O\",\"frame\":0,\"at\":0},{\"type\":\"O\",\"frame\":1,\"at\":2},"
		"{\"type\":\"C\",\"frame\":1,\"at\":7},{\"type\":\"C\",\"frame\":0,\"at\":10}]}]}";
	struct hs_diag d = HS_DIAG_INIT("e.json");
	struct hs_stack_source out;
	FILE *f = text_file(text);

	(void)state;
	hs_source_init(&out);
	tu_expect_ok(hs_import_speedscope_stream(f, 0, NULL, &out, &d), &d);
	fclose(f);
	assert_int_equal(out.kind, HS_METRIC_TIME);
	assert_string_equal(out.metric_unit, "ms");
	assert_true(fabs(sum_on(&out, "main") - 0.005) < 1e-12);
	assert_true(fabs(sum_on(&out, "main;work") - 0.005) < 1e-12);
	hs_source_release(&out);
}

static void malformed_files_are_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "{\"shared\":", "" },
		{ "{\"profiles\":[]}", "no shared.frames" },
		{ "{\"shared\":{\"frames\":[]},\"profiles\":[{\"type\":\"sampled\","
		  "\"samples\":[[0]]}]}", "frame index 0" },
		{ "{\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[{\"type\":"
		  "\"sampled\",\"samples\":[[0]],\"weights\":[1,2]}]}", "differ in number" },
		{ "{\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[{\"type\":"
		  "\"evented\",\"events\":[{\"type\":\"C\",\"frame\":0,\"at\":1}]}]}",
		  "not open" },
		{ "{\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[{\"type\":"
		  "\"flat\"}]}", "neither sampled nor evented" },
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct hs_diag d = HS_DIAG_INIT("bad.json");
		struct hs_stack_source out;
		FILE *f = text_file(cases[k].text);
		char msg[512];

		hs_source_init(&out);
		assert_int_equal(hs_import_speedscope_stream(f, 0, NULL, &out, &d), -EINVAL);
		hs_diag_format(&d, msg, sizeof(msg));
		if (!strstr(msg, cases[k].msg))
			fail_msg("case %zu: '%s' does not say '%s'", k, msg, cases[k].msg);
		hs_source_release(&out);
		fclose(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(export_reads_back),
		cmocka_unit_test(evented_profiles_charge_time_between_events),
		cmocka_unit_test(malformed_files_are_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
