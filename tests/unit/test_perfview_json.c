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

/* The second example of the guide's "Viewing External Data" section. */
static void guide_simple_example(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("guide");
	struct hs_stack_source src;
	double metric, count;
	char path[512];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/perfview/guide-simple.perfView.json", HS_TEST_DATA);
	f = fopen(path, "r");
	assert_non_null(f);
	hs_source_init(&src);
	assert_int_equal(hs_import_perfview_json(f, &src, &d), 0);
	fclose(f);
	/* numeric strings; stacks leaf first (this example has no Func3 in sample 1) */
	assert_source(&src,
		      "t=10000000 m=10 c=1 Main;Func;Helper1;HelperNested\n"
		      "t=20000000 m=10 c=1 Main;Func;Func3\n"
		      "t=30000000 m=10 c=1 Main;Func;Func3;Helper1;HelperX\n"
		      "t=40000000 m=10 c=1 Main;Func\n");
	hs_source_totals(&src, &metric, &count);
	assert_true(metric == 40 && count == 4);
	hs_source_release(&src);
}

static void extensions_and_leniency(void **state)
{
	static const char doc[] =
		"{\"Other\": {\"StackSource\": 1, \"x\": [1, {\"y\": null}]},\n"
		" \"StackSource\": {\"MetricUnit\": \"bytes\", \"Ignored\": {\"Samples\": []},\n"
		"  \"Samples\": [\n"
		"   {\"Time\": 1.000001, \"Metric\": -4096, \"Count\": 2, \"Stack\": [\"malloc\", \"main\"]},\n"
		"   {\"Time\": \" 2.5 \", \"Metric\": \"1e3\", \"Frames\": [\"a \\\"q\\\" \\u00e9\", \"b\"],"
		"    \"Extra\": {\"Stack\": [\"not\", \"a stack\"]}},\n"
		"   {\"Stack\": []},\n"
		"   {\"Time\": -3, \"Stack\": [12, \"main\"], \"More\": [\"top\"]}\n"
		"  ]},\n"
		" \"StackSource\": {\"Samples\": [{\"Stack\": [\"second\"]}]},\n"
		" \"StackWindowGuiState\": {\"FilterGuiState\": {\"Start\": 0.5, \"End\": \"x\","
		"   \"GroupRegEx\": \"a->b\", \"FoldPercent\": \"2\", \"IncludeRegEx\": \"\","
		"   \"Other\": \"?\"}, \"Notes\": \" hi \", \"ScalingPolicy\": \"TimeMetric\"}\n"
		"}\n";
	struct hs_diag d = HS_DIAG_INIT("ext");
	struct hs_stack_source src;
	char *def;

	(void)state;
	assert_int_equal(import_string(hs_import_perfview_json, doc, &src, &d), 0);
	/* any array one level below a sample is stack, in order, leaf first */
	assert_source(&src,
		      "t=1000001 m=-4096 c=2 main;malloc\n"
		      "t=2500000 m=1000 c=1 b;a \"q\" \xc3\xa9\n"
		      "t=0 m=1 c=1 ROOT\n"
		      "t=-3000000 m=1 c=1 top;main;12\n");
	def = source_defaults_text(&src);
	assert_string_equal(def,
			    "start=0.5\nend=(null)\ngroup=a->b\nfold=(null)\nfold_pct=2\n"
			    "inc=(null)\nexc=(null)\nnotes=hi\nkind=time\nunit=bytes\n");
	free(def);
	hs_source_release(&src);
}

struct bad_case {
	const char *doc;
	uint64_t line;
	const char *msg;
};

static void malformed_input_names_the_line(void **state)
{
	static const struct bad_case cases[] = {
		{ "{\"StackSource\": {\"Samples\": [\n{\"Time\": 1},\n{\"Time\": 2 x}\n]}}\n",
		  3, "JSON lexical error" },
		{ "{\"StackSource\": {\"Samples\": [\n{\"Time\": 1},\n", 3, "premature EOF" },
		{ "{\"StackSource\": {}}\n}\n", 2, "JSON parse error" },
		{ "", 1, "premature EOF" },
		{ "[1, 2]\n", 1, "expected a JSON object at the top" },
		{ "\"StackSource\"\n", 1, "expected a JSON object at the top" },
		{ "{\"StackSource\": {\"Samples\": [\n\n{\"Time\": \"abc\"}]}}",
		  3, "sample Time 'abc' is not a number" },
		{ "{\"StackSource\": {\"Samples\": [\n{\"Metric\": null}]}}",
		  2, "sample Metric is not a number" },
		{ "{\"StackSource\": {\"Samples\": [\n{\"Count\": \"1.2.3\"}]}}",
		  2, "sample Count '1.2.3' is not a number" },
		{ "{\"StackSource\": {\"Samples\": [\n{\"Time\": 1e400}]}}",
		  2, "sample Time '1e400' is out of range" },
		{ "{\"StackSource\": {\"Samples\": [\n3]}}", 2, "a sample must be a JSON object" },
		{ "{\"StackSource\": {\"Samples\": [\n[]]}}", 2, "a sample must be a JSON object" },
		{ "{\"StackSource\": {\"Samples\": [\n{\"Stack\": [\"a\", {}]}]}}",
		  2, "a stack frame must be a string" },
		{ "{\"StackSource\": {\"Samples\": [\n{\"Stack\": [true]}]}}",
		  2, "a stack frame must be a string" },
		{ "{\"StackSource\": {\"Samples\": [\n{\"Stack\": [\"a\\u0000b\"]}]}}",
		  2, "NUL character" },
		{ "{\"StackSource\": {\n\"Samples\": 5}}", 2, "\"Samples\" must be an array" },
		{ "{\"Samples\": []}\n", 0, "no \"StackSource\" object" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hs_diag d = HS_DIAG_INIT("bad.json");
		struct hs_stack_source src;
		int err = import_string(hs_import_perfview_json, cases[i].doc, &src, &d);

		if (err != -EINVAL || d.line != cases[i].line ||
		    !strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: err %d line %llu msg '%s'", i, err,
				 (unsigned long long)d.line, d.msg);
		hs_source_release(&src);
	}
}

/* Line numbers stay right when a token straddles two read blocks. */
static void lines_are_counted_across_blocks(void **state)
{
	size_t n = 200000, i;
	char *doc = malloc(n * 40 + 200), *p = doc;
	struct hs_diag d = HS_DIAG_INIT("big");
	struct hs_stack_source src;

	(void)state;
	p += sprintf(p, "{\"StackSource\": {\"Samples\": [\n");
	for (i = 0; i < n; i++)
		p += sprintf(p, "{\"Time\": %zu, \"Stack\": [\"f%zu\"]},\n", i, i % 7);
	p += sprintf(p, "{\"Time\": \"late\"}]}}\n");
	assert_int_equal(import_string(hs_import_perfview_json, doc, &src, &d), -EINVAL);
	assert_int_equal(d.line, n + 2);
	assert_int_equal(src.nr_samples, n);
	hs_source_release(&src);
	free(doc);
}

static void huge_tokens_are_refused(void **state)
{
	size_t n = 9u << 20;
	char *doc = malloc(n + 100), *p = doc;
	struct hs_diag d = HS_DIAG_INIT("huge");
	struct hs_stack_source src;

	(void)state;
	p += sprintf(p, "{\"StackSource\": {\"Notes\": \"");
	memset(p, 'x', n);
	strcpy(p + n, "\"}}\n");
	assert_int_equal(import_string(hs_import_perfview_json, doc, &src, &d), -E2BIG);
	assert_non_null(strstr(d.msg, "a JSON value longer than"));
	hs_source_release(&src);

	/* a frame name over 64 KiB */
	p = doc + sprintf(doc, "{\"StackSource\": {\"Samples\": [{\"Stack\": [\"");
	memset(p, 'y', 70000);
	strcpy(p + 70000, "\"]}]}}\n");
	assert_int_equal(import_string(hs_import_perfview_json, doc, &src, &d), -E2BIG);
	hs_source_release(&src);

	/* nesting is capped too */
	p = doc + sprintf(doc, "{\"a\":");
	memset(p, '[', 100001);
	p[100001] = '\0';
	d = (struct hs_diag)HS_DIAG_INIT("deep");
	assert_int_equal(import_string(hs_import_perfview_json, doc, &src, &d), -E2BIG);
	assert_non_null(strstr(d.msg, "nested deeper than 100000"));
	hs_source_release(&src);
	free(doc);
}

/*
 * A UTF-8 byte order mark is skipped, as format detection skips it (it
 * was detected as JSON, then refused with "invalid char"); one inside
 * the document is still an error, on its line.
 */
static void byte_order_mark_is_skipped(void **state)
{
	static const char doc[] =
		"\xef\xbb\xbf{\"StackSource\": {\"Samples\": [\n"
		"{\"Time\": 1, \"Metric\": 5, \"Stack\": [\"b\", \"a\"]}]}}\n";
	static const char twice[] =
		"\xef\xbb\xbf\n\xef\xbb\xbf{\"StackSource\": {\"Samples\": []}}\n";
	struct hs_diag d = HS_DIAG_INIT("bom");
	struct hs_stack_source src;

	(void)state;
	hs_source_init(&src);
	assert_int_equal(import_string(hs_import_perfview_json, doc, &src, &d), 0);
	assert_source(&src, "t=1000000 m=5 c=1 a;b\n");
	hs_source_release(&src);
	hs_source_init(&src);
	assert_int_equal(import_string(hs_import_perfview_json, "\xef\xbb\xbf", &src, &d), -EINVAL);
	hs_source_release(&src);
	d = (struct hs_diag)HS_DIAG_INIT("bom");
	hs_source_init(&src);
	assert_int_equal(import_string(hs_import_perfview_json, twice, &src, &d), -EINVAL);
	assert_int_equal(d.line, 2);
	hs_source_release(&src);
}

/*
 * A pattern saved in the view state that does not compile is dropped,
 * and the defaults say which, from which file, and why; the others stay.
 */
static void bad_saved_pattern_is_dropped(void **state)
{
	static const char doc[] =
		"{\"StackSource\": {\"Samples\": [{\"Time\": 1, \"Stack\": [\"a\"]}]},\n"
		"\"StackWindowGuiState\": {\"FilterGuiState\": {\"GroupRegEx\": \"x->y\","
		" \"FoldRegEx\": \"{\", \"ExcludeRegEx\": \"b\", \"IncludeRegEx\": \"a{\"}}}\n";
	struct hs_diag d = HS_DIAG_INIT("saved.json");
	struct hs_stack_source src;

	(void)state;
	hs_source_init(&src);
	assert_int_equal(import_string(hs_import_perfview_json, doc, &src, &d), 0);
	assert_string_equal(src.defaults.group, "x->y");
	assert_string_equal(src.defaults.exc, "b");
	assert_null(src.defaults.fold);
	assert_null(src.defaults.inc);
	assert_string_equal(src.defaults.warning,
		"saved.json: the FoldRegEx saved in its view state is not used: "
		"FoldPats: bad pattern '{': missing closing parenthesis at offset 1\n"
		"saved.json: the IncludeRegEx saved in its view state is not used: "
		"IncPats: bad pattern 'a{': missing closing parenthesis at offset 2");
	hs_source_release(&src);
}

static void allocation_failures_are_clean(void **state)
{
	static const char doc[] =
		"{\"StackSource\": {\"MetricUnit\": \"ms\", \"Samples\": [\n"
		"{\"Time\": 1, \"Stack\": [\"c\", \"b\", \"a\"]},\n"
		"{\"Time\": 2, \"Metric\": 3, \"Stack\": [\"d\", \"b\", \"a\"]},\n"
		"{\"Time\": 3, \"Stack\": []}]},\n"
		"\"StackWindowGuiState\": {\"FilterGuiState\": {\"GroupRegEx\": \"x\"},"
		" \"Notes\": \"n\"}}\n";

	(void)state;
	assert_true(import_until_no_oom(hs_import_perfview_json, doc, 3) > 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guide_simple_example),
		cmocka_unit_test(extensions_and_leniency),
		cmocka_unit_test(malformed_input_names_the_line),
		cmocka_unit_test(lines_are_counted_across_blocks),
		cmocka_unit_test(huge_tokens_are_refused),
		cmocka_unit_test(byte_order_mark_is_skipped),
		cmocka_unit_test(bad_saved_pattern_is_dropped),
		cmocka_unit_test(allocation_failures_are_clean),
	};
	return cmocka_run_group_tests_name("perfview_json", tests, NULL, NULL);
}
