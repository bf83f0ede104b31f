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
#include "common/alloc.h"
#include "io/io.h"
#include "io/numtext.h"
#include "source_text.h"

/* ---- numbers ---- */

static void ms_text_parses_to_exact_ns(void **state)
{
	static const struct {
		const char *text;
		int err;
		int64_t ns;
	} cases[] = {
		{ "12.345678", 0, 12345678 },
		{ " 10 ", 0, 10000000 },
		{ "+2", 0, 2000000 },
		{ "1.", 0, 1000000 },
		{ ".5", 0, 500000 },
		{ "1e3", 0, 1000000000 },
		{ "1.5E-3", 0, 1500 },
		{ "0.0000005", 0, 1 },		/* half a ns rounds away from zero */
		{ "-0.0000005", 0, -1 },
		{ "0.00000049", 0, 0 },
		{ "0.000000000000000000000000001", 0, 0 },
		{ "-2", 0, -2000000 },
		{ "9223372036854.775807", 0, INT64_MAX },
		{ "-9223372036854.775808", 0, INT64_MIN },
		{ "9223372036854.775808", -ERANGE, 0 },
		{ "12345678901234567890123", -ERANGE, 0 },
		{ "1e400", -ERANGE, 0 },
		{ "1234567890123.4567891234", 0, 1234567890123456789 },
		{ "", -EINVAL, 0 },
		{ ".", -EINVAL, 0 },
		{ "1e", -EINVAL, 0 },
		{ "1,5", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "nan", -EINVAL, 0 },
		{ "inf", -EINVAL, 0 },
		{ "1 2", -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ns = 0;
		int err = hs_numtext_parse_ms(cases[i].text, strlen(cases[i].text), &ns);

		if (err != cases[i].err || (!err && ns != cases[i].ns))
			fail_msg("'%s': err %d ns %lld", cases[i].text, err, (long long)ns);
	}
}

static void ns_print_as_short_ms(void **state)
{
	static const struct {
		int64_t ns;
		const char *text;
	} cases[] = {
		{ 0, "0" },
		{ 12345678, "12.345678" },
		{ 12000000, "12" },
		{ 12300000, "12.3" },
		{ 1, "0.000001" },
		{ -1, "-0.000001" },
		{ -2000000, "-2" },
		{ INT64_MAX, "9223372036854.775807" },
		{ INT64_MIN, "-9223372036854.775808" },
	};
	char buf[HS_NUMTEXT_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t back;

		assert_int_equal(hs_numtext_ms(buf, cases[i].ns), strlen(cases[i].text));
		assert_string_equal(buf, cases[i].text);
		assert_int_equal(hs_numtext_parse_ms(buf, strlen(buf), &back), 0);
		assert_true(back == cases[i].ns);
	}
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void doubles_survive_text(void **state)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 1, "1" }, { -512, "-512" }, { 0.1, "0.1" }, { 2.5, "2.5" },
		{ 1.0 / 3, "0.3333333333333333" }, { 1e-7, "1e-07" },
		{ 1e300, "1e+300" }, { 9007199254740992.0, "9007199254740992" },
		{ -0.0, "0" }, { 123456789012.0, "123456789012" },
	};
	char buf[HS_NUMTEXT_MAX];
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hs_numtext_double(buf, cases[i].v);
		assert_string_equal(buf, cases[i].text);
	}
	/* random bit patterns: every finite double reads back exactly */
	for (k = 0; k < 20000; k++) {
		uint64_t bits = next();
		double v, back;

		memcpy(&v, &bits, sizeof(v));
		if (!isfinite(v))
			continue;
		hs_numtext_double(buf, v);
		assert_int_equal(hs_numtext_parse_double(buf, strlen(buf), &back), 0);
		assert_memory_equal(&v, &back, sizeof(v));
	}
}

static void metrics_are_bounded(void **state)
{
	double v = 7;

	(void)state;
	assert_int_equal(hs_numtext_parse_metric("3.4e38", 6, &v), 0);
	assert_true(v == 3.4e38);
	assert_int_equal(hs_numtext_parse_metric(" -3.4e38 ", 9, &v), 0);
	assert_true(v == -3.4e38);
	v = 7;
	assert_int_equal(hs_numtext_parse_metric("3.5e38", 6, &v), -ERANGE);
	assert_int_equal(hs_numtext_parse_metric("-1e308", 6, &v), -ERANGE);
	assert_int_equal(hs_numtext_parse_metric("1e999", 5, &v), -ERANGE);
	assert_int_equal(hs_numtext_parse_metric("abc", 3, &v), -EINVAL);
	assert_true(v == 7);	/* untouched on failure */
}

/* ---- whole documents ---- */

static void build_small(struct hs_stack_source *src)
{
	uint32_t f[3], s;

	hs_source_init(src);
	assert_int_equal(hs_source_intern_frame(src, "main", 4, &f[0]), 0);
	assert_int_equal(hs_source_intern_frame(src, "work & <play>", 13, &f[1]), 0);
	assert_int_equal(hs_source_intern_frame(src, "malloc", 6, &f[2]), 0);
	assert_int_equal(hs_source_intern_path(src, f, 3, &s), 0);
	assert_int_equal(hs_source_add_sample(src, 0, 1, 1, s), 0);
	assert_int_equal(hs_source_add_sample(src, 1500, 2.5, 3, 0), 0);
	assert_int_equal(hs_source_add_sample(src, -2000000, 1, 1, HS_NO_STACK), 0);
	assert_int_equal(hs_source_add_sample(src, 12345678901, 0.1, 1, 1), 0);
	src->kind = HS_METRIC_TIME;
	src->metric_unit = hs_strdup("ms");
	src->defaults.start = hs_strdup("1");
	src->defaults.group = hs_strdup("a->b");
	src->defaults.notes = hs_strdup("x < y");
}

static void xml_is_the_advanced_form(void **state)
{
	struct hs_stack_source src;
	char *out;

	(void)state;
	build_small(&src);
	out = export_string(hs_export_perfview_xml, &src);
	assert_string_equal(out,
		"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
		"<StackWindow>\n"
		" <StackSource MetricUnit=\"ms\">\n"
		"  <Frames Count=\"7\">\n"
		"   <Frame ID=\"0\">ROOT</Frame>\n"
		"   <Frame ID=\"1\">BROKEN</Frame>\n"
		"   <Frame ID=\"2\">?!?</Frame>\n"
		"   <Frame ID=\"3\">OVERHEAD</Frame>\n"
		"   <Frame ID=\"4\">main</Frame>\n"
		"   <Frame ID=\"5\">work &amp; &lt;play&gt;</Frame>\n"
		"   <Frame ID=\"6\">malloc</Frame>\n"
		"  </Frames>\n"
		"  <Stacks Count=\"3\">\n"
		"   <Stack ID=\"0\" CallerID=\"-1\" FrameID=\"4\"/>\n"
		"   <Stack ID=\"1\" CallerID=\"0\" FrameID=\"5\"/>\n"
		"   <Stack ID=\"2\" CallerID=\"1\" FrameID=\"6\"/>\n"
		"  </Stacks>\n"
		"  <Samples Count=\"4\">\n"
		"   <Sample ID=\"0\" Time=\"0\" StackID=\"2\"/>\n"
		"   <Sample ID=\"1\" Time=\"0.0015\" StackID=\"0\" Metric=\"2.5\" Count=\"3\"/>\n"
		"   <Sample ID=\"2\" Time=\"-2\" StackID=\"-1\"/>\n"
		"   <Sample ID=\"3\" Time=\"12345.678901\" StackID=\"1\" Metric=\"0.1\"/>\n"
		"  </Samples>\n"
		" </StackSource>\n"
		" <StackWindowGuiState>\n"
		"  <FilterGuiState>\n"
		"   <Start><Value>1</Value></Start>\n"
		"   <GroupRegEx><Value>a-&gt;b</Value></GroupRegEx>\n"
		"  </FilterGuiState>\n"
		"  <Notes>x &lt; y</Notes>\n"
		"  <ScalingPolicy>TimeMetric</ScalingPolicy>\n"
		" </StackWindowGuiState>\n"
		"</StackWindow>\n");
	free(out);
	hs_source_release(&src);
}

static void json_is_the_simple_form(void **state)
{
	struct hs_stack_source src;
	char *out;

	(void)state;
	build_small(&src);
	out = export_string(hs_export_perfview_json, &src);
	assert_string_equal(out,
		"{\"StackSource\":{\"MetricUnit\":\"ms\",\"Samples\":[\n"
		"{\"Time\":0,\"Stack\":[\"malloc\",\"work & <play>\",\"main\"]},\n"
		"{\"Time\":0.0015,\"Metric\":2.5,\"Count\":3,\"Stack\":[\"main\"]},\n"
		"{\"Time\":-2,\"Stack\":[]},\n"
		"{\"Time\":12345.678901,\"Metric\":0.1,\"Stack\":[\"work & <play>\",\"main\"]}\n"
		"]},\n"
		"\"StackWindowGuiState\":{\"FilterGuiState\":{\"Start\":\"1\","
		"\"GroupRegEx\":\"a->b\"},\"Notes\":\"x < y\",\"ScalingPolicy\":\"TimeMetric\"}}\n");
	free(out);
	/* no defaults: no GUI state */
	hs_source_defaults_release(&src.defaults);
	src.kind = HS_METRIC_PLAIN;
	hs_free(src.metric_unit);
	src.metric_unit = NULL;
	src.nr_samples = 1;
	out = export_string(hs_export_perfview_json, &src);
	assert_string_equal(out,
		"{\"StackSource\":{\"Samples\":[\n"
		"{\"Time\":0,\"Stack\":[\"malloc\",\"work & <play>\",\"main\"]}\n"
		"]}}\n");
	free(out);
	hs_source_release(&src);
}

static void folded_is_one_line_per_stack(void **state)
{
	struct hs_stack_source src;
	char *out;

	(void)state;
	build_small(&src);
	out = export_string(hs_export_folded, &src);
	assert_string_equal(out,
		"main;work & <play>;malloc 1\n"
		"main 2.5\n"
		" 1\n"
		"main;work & <play> 0.1\n");
	free(out);
	hs_source_release(&src);
}

static void awkward_names_are_escaped(void **state)
{
	static const char name[] = "t\tn\nr\r c\x01 bad\xff ok\xc3\xa9 nc\xef\xbf\xbf q\" s;x";
	struct hs_diag d = HS_DIAG_INIT("esc");
	struct hs_stack_source src, back;
	uint32_t f, s;
	char *out;

	(void)state;
	hs_source_init(&src);
	assert_int_equal(hs_source_intern_frame(&src, name, strlen(name), &f), 0);
	assert_int_equal(hs_source_intern_stack(&src, f, HS_NO_STACK, &s), 0);
	assert_int_equal(hs_source_add_sample(&src, 0, 1, 1, s), 0);

	out = export_string(hs_export_perfview_xml, &src);
	assert_non_null(strstr(out, ">t&#9;n&#10;r&#13; c\xef\xbf\xbd bad\xef\xbf\xbd "
				    "ok\xc3\xa9 nc\xef\xbf\xbd q&quot; s;x</Frame>"));
	/* \t \n \r survive; what XML cannot hold became U+FFFD */
	assert_int_equal(import_string(hs_import_perfview_xml, out, &back, &d), 0);
	assert_string_equal(hs_source_frame_name(&back, back.stack_frame[back.stack[0]]),
			    "t\tn\nr\r c\xef\xbf\xbd bad\xef\xbf\xbd ok\xc3\xa9 "
			    "nc\xef\xbf\xbd q\" s;x");
	hs_source_release(&back);
	free(out);

	out = export_string(hs_export_perfview_json, &src);
	assert_non_null(strstr(out, "[\"t\\tn\\nr\\r c\\u0001 bad\\ufffd ok\xc3\xa9 "
				    "nc\xef\xbf\xbf q\\\" s;x\"]"));
	assert_int_equal(import_string(hs_import_perfview_json, out, &back, &d), 0);
	assert_string_equal(hs_source_frame_name(&back, back.stack_frame[back.stack[0]]),
			    "t\tn\nr\r c\x01 bad\xef\xbf\xbd ok\xc3\xa9 nc\xef\xbf\xbf q\" s;x");
	hs_source_release(&back);
	free(out);

	/* folded: ';' would split the frame and newlines end the line */
	out = export_string(hs_export_folded, &src);
	assert_string_equal(out, "t\tn r  c\x01 bad\xff ok\xc3\xa9 nc\xef\xbf\xbf q\" s:x 1\n");
	free(out);
	hs_source_release(&src);
}

static void write_errors_are_reported(void **state)
{
	struct hs_stack_source src;
	FILE *f;

	(void)state;
	build_small(&src);
	f = fopen("/dev/full", "w");
	if (!f)
		skip();
	assert_int_equal(hs_export_perfview_xml(&src, f), -EIO);
	clearerr(f);
	assert_int_equal(hs_export_perfview_json(&src, f), -EIO);
	clearerr(f);
	assert_int_equal(hs_export_folded(&src, f), -EIO);
	fclose(f);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ms_text_parses_to_exact_ns),
		cmocka_unit_test(ns_print_as_short_ms),
		cmocka_unit_test(doubles_survive_text),
		cmocka_unit_test(metrics_are_bounded),
		cmocka_unit_test(xml_is_the_advanced_form),
		cmocka_unit_test(json_is_the_simple_form),
		cmocka_unit_test(folded_is_one_line_per_stack),
		cmocka_unit_test(awkward_names_are_escaped),
		cmocka_unit_test(write_errors_are_reported),
	};
	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
