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

static int import_file(const char *name, struct hs_stack_source *src,
		       struct hs_diag *d)
{
	char path[512];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/perfview/%s", HS_TEST_DATA, name);
	f = fopen(path, "r");
	assert_non_null(f);
	hs_source_init(src);
	err = hs_import_perfview_xml(f, src, d);
	fclose(f);
	return err;
}

static void assert_defaults(const struct hs_stack_source *src, const char *want)
{
	char *got = source_defaults_text(src);

	assert_string_equal(got, want);
	free(got);
}

/* The first example of the guide's "Viewing External Data" section. */
static void guide_simple_example(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("guide");
	struct hs_stack_source src;
	double metric, count;
	int64_t first, last;

	(void)state;
	assert_int_equal(import_file("guide-simple.perfView.xml", &src, &d), 0);
	/* first line = leaf; the blank line in sample 2 is an empty-name frame */
	assert_source(&src,
		      "t=10000000 m=10 c=1 Main;Func;Func3;Helper1;HelperNested\n"
		      "t=20000000 m=10 c=1 Main;Func;;Func3\n"
		      "t=30000000 m=10 c=1 Main;Func;Func3;Helper1;HelperX\n"
		      "t=40000000 m=10 c=1 Main;Func\n");
	hs_source_totals(&src, &metric, &count);
	assert_true(metric == 40 && count == 4);
	hs_source_time_range(&src, &first, &last);
	assert_true(first == 10000000 && last == 40000000);
	/* 7 distinct names: 6 functions and the empty one */
	assert_int_equal(hs_source_nr_frames(&src), 7);
	hs_source_release(&src);
}

/* What PerfView's File > Save writes, with its GUI state. */
static void advanced_saved_view(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("advanced");
	struct hs_stack_source src;
	double metric, count;

	(void)state;
	assert_int_equal(import_file("advanced.perfView.xml", &src, &d), 0);
	assert_source(&src,
		      "t=500000 m=1024 c=1 Process64 app (1234);Thread (1240);"
		      "/usr/bin/app!main;/usr/lib/app.dll![Tier1]App.Run();"
		      "/usr/lib/libc.so.6!malloc\n"
		      "t=1250000 m=1 c=1 Process64 app (1234);Thread (1240);"
		      "/usr/bin/app!main;/usr/lib/app.dll![Tier1]App.Run()\n"
		      "t=2000000 m=2.5 c=1 Process64 app (1234);Thread (1240);BROKEN;"
		      "/usr/lib/libc.so.6!malloc\n"
		      "t=3125000 m=1 c=1 ROOT\n"
		      "t=4000000 m=-512 c=1 Process64 app (1234);Thread (1240);"
		      "/usr/bin/app!main;/usr/lib/app.dll![Tier1]App.Run();"
		      "/usr/lib/libc.so.6!malloc\n");
	hs_source_totals(&src, &metric, &count);
	assert_true(metric == 516.5 && count == 5);
	/* five named frames and BROKEN; the unused ?!? and OVERHEAD add nothing */
	assert_int_equal(hs_source_nr_frames(&src), 6);
	/* End is not a number: dropped; an empty box is no default */
	assert_defaults(&src,
			"start=0.5\n"
			"end=(null)\n"
			"group=[group module entries]  {%}!=>module $1\n"
			"fold=libc.so.6!_int_malloc\n"
			"fold_pct=1\n"
			"inc=(null)\n"
			"exc=BROKEN\n"
			"notes=Allocations of the demo app.\n"
			"kind=time\n"
			"unit=(null)\n");
	hs_source_release(&src);
}

/* Samples before stacks, stacks before their callers, frames last. */
static void forward_references_resolve(void **state)
{
	static const char doc[] =
		"<StackWindow><StackSource MetricUnit=\"bytes\">\n"
		"<Samples>\n"
		"<Sample ID=\"0\" Time=\"1\" StackID=\"30\" Metric=\"8\" Count=\"2\"/>\n"
		"<Sample ID=\"1\" Time=\"2.000001\" StackID=\"-1\"/>\n"
		"<Sample ID=\"2\" StackID=\"31\"/>\n"
		"<Sample ID=\"3\" Time=\"3\" StackID=\"20\"/>\n"
		"</Samples>\n"
		"<Stacks>\n"
		"<Stack ID=\"31\" CallerID=\"20\" FrameID=\"2\"/>\n"
		"<Stack ID=\"30\" CallerID=\"20\" FrameID=\"12\"/>\n"
		"<Stack ID=\"20\" CallerID=\"10\" FrameID=\"11\"/>\n"
		"<Stack ID=\"10\" CallerID=\"-1\" FrameID=\"0\"/>\n"
		"</Stacks>\n"
		"<Frames><Frame ID=\"12\">leaf</Frame><Frame ID=\"11\">main</Frame></Frames>\n"
		"</StackSource></StackWindow>\n";
	struct hs_diag d = HS_DIAG_INIT("fwd");
	struct hs_stack_source src;

	(void)state;
	assert_int_equal(import_string(hs_import_perfview_xml, doc, &src, &d), 0);
	/* frame 0 (ROOT) adds nothing; frame 2 is "?!?" when not named */
	assert_source(&src,
		      "t=1000000 m=8 c=2 main;leaf\n"
		      "t=2000001 m=1 c=1 ROOT\n"
		      "t=0 m=1 c=1 main;?!?\n"
		      "t=3000000 m=1 c=1 main\n");
	assert_string_equal(src.metric_unit, "bytes");
	hs_source_release(&src);
}

/* Ids far apart (hashed) or close (direct) give the same source. */
static char *sparse_doc(int64_t stack_mul, int64_t frame_mul)
{
	char *doc = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&doc, &len);

	fputs("<StackSource>\n<Samples>\n", f);
	for (i = 0; i < 3000; i++)
		fprintf(f, "<Sample Time=\"%zu\" StackID=\"%lld\"/>\n", i,
			(long long)(stack_mul * (int64_t)(i * 7 % 3000)));
	fputs("</Samples>\n<Stacks>\n", f);
	for (i = 3000; i-- > 0;)
		fprintf(f, "<Stack ID=\"%lld\" CallerID=\"%lld\" FrameID=\"%lld\"/>\n",
			(long long)(stack_mul * (int64_t)i),
			i < 5 ? -1LL : (long long)(stack_mul * (int64_t)(i / 5)),
			(long long)(4 + frame_mul * (int64_t)(i % 400)));
	fputs("</Stacks>\n<Frames>\n", f);
	for (i = 0; i < 400; i++)
		fprintf(f, "<Frame ID=\"%lld\">f%zu</Frame>\n",
			(long long)(4 + frame_mul * (int64_t)i), i);
	fputs("</Frames>\n</StackSource>\n", f);
	fclose(f);
	return doc;
}

static void sparse_ids_resolve_like_dense_ones(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("sparse");
	struct hs_stack_source a, b;
	char *dense = sparse_doc(1, 1), *sparse = sparse_doc(1000003, 7919);
	char *mid = sparse_doc(3, 11), *ta, *tb;
	struct hs_stack_source c;

	(void)state;
	assert_int_equal(import_string(hs_import_perfview_xml, dense, &a, &d), 0);
	assert_int_equal(import_string(hs_import_perfview_xml, sparse, &b, &d), 0);
	/* ids beyond the direct array at first, moved into it as it grows */
	assert_int_equal(import_string(hs_import_perfview_xml, mid, &c, &d), 0);
	tb = source_text(&c);
	ta = source_text(&a);
	assert_string_equal(ta, tb);
	free(ta);
	free(tb);
	free(mid);
	hs_source_release(&c);
	assert_int_equal(a.nr_samples, 3000);
	ta = source_text(&a);
	tb = source_text(&b);
	assert_string_equal(ta, tb);
	/* sample 1 is stack 7: f7 under stack 1 (f1), a root */
	assert_non_null(strstr(ta, "\nt=1000000 m=1 c=1 f1;f7\n"));
	free(ta);
	free(tb);
	free(dense);
	free(sparse);
	hs_source_release(&a);
	hs_source_release(&b);
}

static void simple_form_details(void **state)
{
	/* a wrapper, CRLF lines, entities, leading/trailing/inner blanks */
	static const char doc[] =
		"<?xml version=\"1.0\"?>\r\n"
		"<Outer><Other><Sample Time=\"99\">ignored</Sample></Other>\r\n"
		"<StackSource><Samples>\r\n"
		"<Sample Metric=\"0.25\" Count=\"3\">\r\n\r\n  a&lt;b&gt; \r\n\r\n\r\n  main  \r\n\r\n</Sample>\r\n"
		"<Sample Time=\"-1.5\"></Sample>\r\n"
		"<Sample Time=\"1e3\" StackID=\"5\">  x &amp; y  </Sample>\r\n"
		"<Sample Time=\" 7 \"><![CDATA[leaf<]]>\n<!-- c -->root</Sample>\r\n"
		"</Samples></StackSource>\r\n"
		"<StackSource><Samples><Sample>second source</Sample></Samples></StackSource>\r\n"
		"</Outer>\r\n";
	struct hs_diag d = HS_DIAG_INIT("simple");
	struct hs_stack_source src;

	(void)state;
	assert_int_equal(import_string(hs_import_perfview_xml, doc, &src, &d), 0);
	assert_source(&src,
		      "t=0 m=0.25 c=3 main;;;a<b>\n"
		      "t=-1500000 m=1 c=1 ROOT\n"
		      "t=1000000000 m=1 c=1 x & y\n"
		      "t=7000000 m=1 c=1 root;leaf<\n");
	hs_source_release(&src);
}

static void legacy_gui_state(void **state)
{
	static const char doc[] =
		"<StackWindow>\n"
		"<FilterXml><Start> 12 </Start><End>x</End><GroupRegEx>a->b</GroupRegEx>"
		"<FoldPercent>abc</FoldPercent><IncludeRegEx>main</IncludeRegEx></FilterXml>\n"
		"<Notes>\n  legacy notes\n</Notes>\n"
		"<StackSource><Samples><Sample>f</Sample></Samples></StackSource>\n"
		"</StackWindow>\n";
	struct hs_diag d = HS_DIAG_INIT("legacy");
	struct hs_stack_source src;

	(void)state;
	assert_int_equal(import_string(hs_import_perfview_xml, doc, &src, &d), 0);
	assert_defaults(&src,
			"start=12\nend=(null)\ngroup=a->b\nfold=(null)\nfold_pct=(null)\n"
			"inc=main\nexc=(null)\nnotes=legacy notes\nkind=plain\nunit=(null)\n");
	hs_source_release(&src);
}

struct bad_case {
	const char *doc;
	uint64_t line;
	const char *msg;	/* a part of the message */
};

static void malformed_input_names_the_line(void **state)
{
	static const struct bad_case cases[] = {
		{ "<StackSource>\n<Samples>\n<Sample Time=\"1\">a</Samples>\n</StackSource>\n",
		  3, "mismatched tag" },
		{ "<StackSource>\n<Samples>\n<Sample Time=\"1\">a\n",
		  4, "ends before its elements are closed" },
		{ "", 1, "ends before any element" },
		{ "hello\n", 1, "XML error: syntax error" },
		{ "<StackSource><Samples>\n<Sample Time=\"x1\"/>\n</Samples></StackSource>",
		  2, "Sample Time 'x1' is not a number" },
		{ "<StackSource><Samples>\n\n<Sample Metric=\"1,5\"/>\n</Samples></StackSource>",
		  3, "Sample Metric '1,5' is not a number" },
		{ "<StackSource><Samples>\n<Sample Count=\"many\"/>\n</Samples></StackSource>",
		  2, "Sample Count 'many' is not a number" },
		{ "<StackSource><Samples>\n<Sample StackID=\"abc\"/>\n</Samples></StackSource>",
		  2, "StackID 'abc' is not a stack id" },
		{ "<StackSource>\n<Frames><Frame ID=\"4\">a</Frame></Frames>\n"
		  "<Stacks><Stack ID=\"0\" CallerID=\"-1\" FrameID=\"4\"/></Stacks>\n"
		  "<Samples>\n<Sample StackID=\"0\"/>\n<Sample StackID=\"7\"/>\n"
		  "</Samples></StackSource>\n",
		  6, "Sample names StackID=7, which is not defined" },
		{ "<StackSource><Stacks>\n\n<Stack ID=\"0\" CallerID=\"-1\" FrameID=\"9\"/>\n"
		  "</Stacks></StackSource>", 3, "Stack ID=0 names FrameID=9, which is not defined" },
		{ "<StackSource><Frames><Frame ID=\"4\">a</Frame></Frames><Stacks>\n"
		  "<Stack ID=\"0\" CallerID=\"5\" FrameID=\"4\"/>\n</Stacks></StackSource>",
		  2, "Stack ID=0 names CallerID=5, which is not defined" },
		{ "<StackSource><Frames><Frame ID=\"4\">a</Frame></Frames><Stacks>\n"
		  "<Stack ID=\"1\" CallerID=\"2\" FrameID=\"4\"/>\n"
		  "<Stack ID=\"2\" CallerID=\"1\" FrameID=\"4\"/>\n</Stacks></StackSource>",
		  2, "the CallerID chain loops" },
		{ "<StackSource><Frames>\n<Frame ID=\"4\">a</Frame>\n<Frame ID=\"4\">b</Frame>\n"
		  "</Frames></StackSource>", 3, "Frame ID=4 is defined twice" },
		{ "<StackSource><Frames>\n<Frame>a</Frame>\n</Frames></StackSource>",
		  2, "<Frame> needs an ID" },
		{ "<StackSource><Stacks>\n<Stack ID=\"1\" FrameID=\"0\"/>\n"
		  "<Stack ID=\"1\" FrameID=\"0\"/>\n</Stacks></StackSource>",
		  3, "Stack ID=1 is defined twice" },
		{ "<StackSource><Stacks>\n<Stack ID=\"1\"/>\n</Stacks></StackSource>",
		  2, "needs a FrameID" },
		{ "<Root>\n<Sample>a</Sample>\n</Root>\n", 0, "no <StackSource> element" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hs_diag d = HS_DIAG_INIT("bad.xml");
		struct hs_stack_source src;
		int err = import_string(hs_import_perfview_xml, cases[i].doc, &src, &d);

		if (err != -EINVAL || d.line != cases[i].line ||
		    !strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: err %d line %llu msg '%s'", i, err,
				 (unsigned long long)d.line, d.msg);
		hs_source_release(&src);
	}
}

static void overlong_frame_name_is_refused(void **state)
{
	size_t n = (64u << 10) + 10, i;
	char *doc = malloc(n + 100), *p = doc;
	struct hs_diag d = HS_DIAG_INIT("long");
	struct hs_stack_source src;

	(void)state;
	p += sprintf(p, "<StackSource><Samples>\n<Sample>\n");
	for (i = 0; i < n; i++)
		*p++ = 'x';
	strcpy(p, "\n</Sample></Samples></StackSource>\n");
	assert_int_equal(import_string(hs_import_perfview_xml, doc, &src, &d), -E2BIG);
	assert_non_null(strstr(d.msg, "a frame name longer than 65536 bytes"));
	hs_source_release(&src);

	/* nesting is capped too */
	for (p = doc, i = 0; i < 10001; i++)
		p += sprintf(p, "<a>");
	d = (struct hs_diag)HS_DIAG_INIT("deep");
	assert_int_equal(import_string(hs_import_perfview_xml, doc, &src, &d), -E2BIG);
	assert_non_null(strstr(d.msg, "nested deeper than 10000"));
	hs_source_release(&src);
	free(doc);
}

/* Every allocation failing in turn: -ENOMEM, no leak, no crash. */
static void allocation_failures_are_clean(void **state)
{
	char path[512], *doc;
	size_t len;
	long n;
	int ret = -1;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/perfview/advanced.perfView.xml", HS_TEST_DATA);
	f = fopen(path, "r");
	assert_non_null(f);
	doc = calloc(1, 1 << 16);
	len = fread(doc, 1, (1 << 16) - 1, f);
	fclose(f);
	assert_true(len > 0);
	for (n = 0; ret != 0; n++) {
		struct hs_diag d = HS_DIAG_INIT("oom");
		struct hs_stack_source src;

		hs_source_init(&src);
		f = fmemopen(doc, len, "r");
		hs_alloc_fail_after(n);
		ret = hs_import_perfview_xml(f, &src, &d);
		hs_alloc_fail_after(-1);
		fclose(f);
		if (ret)
			assert_int_equal(ret, -ENOMEM);
		else
			assert_int_equal(src.nr_samples, 5);
		hs_source_release(&src);
	}
	assert_true(n > 10);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guide_simple_example),
		cmocka_unit_test(advanced_saved_view),
		cmocka_unit_test(forward_references_resolve),
		cmocka_unit_test(sparse_ids_resolve_like_dense_ones),
		cmocka_unit_test(simple_form_details),
		cmocka_unit_test(legacy_gui_state),
		cmocka_unit_test(malformed_input_names_the_line),
		cmocka_unit_test(overlong_frame_name_is_refused),
		cmocka_unit_test(allocation_failures_are_clean),
	};
	return cmocka_run_group_tests_name("perfview_xml", tests, NULL, NULL);
}
