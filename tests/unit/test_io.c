#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "io/io.h"
#include "source_text.h"
#include "testutil.h"

static const char *in_dir(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", tu_dir, name);
	return buf;
}

/* ---- the table ---- */

/*
 * Every format is one consistent entry: its name and first suffix lead
 * back to it, it has exactly one importer, a zip names a format it holds,
 * and the capabilities the front ends ask for are where they belong.
 */
static void each_format_is_one_entry(void **state)
{
	int i;

	(void)state;
	assert_null(hs_format_ops(HS_FORMAT_UNKNOWN));
	assert_false(hs_format_has(HS_FORMAT_UNKNOWN, 0));
	for (i = 1; i < HS_FORMAT__COUNT; i++) {
		const struct hs_format_ops *ops = hs_format_ops((enum hs_format)i);
		char path[64];

		assert_non_null(ops);
		assert_int_equal(ops->id, i);
		assert_int_equal(hs_format_parse(ops->name), i);
		assert_string_equal(hs_format_name((enum hs_format)i), ops->name);
		snprintf(path, sizeof(path), "dir/file%s", ops->suffixes[0]);
		assert_int_equal(hs_format_from_path(path), i);
		assert_true(!ops->import_stream != !ops->import_file);
		assert_non_null(ops->sniff);
		if (ops->zip_of != HS_FORMAT_UNKNOWN) {
			assert_non_null(hs_format_ops(ops->zip_of));
			assert_non_null(ops->import_file);
		}
		assert_int_equal(hs_format_writable((enum hs_format)i), ops->export_stream != NULL);
	}
	assert_true(hs_format_has(HS_FORMAT_HEAPSCOPE, HS_FORMAT_HAS_HEAP));
	assert_false(hs_format_has(HS_FORMAT_PERF_SCRIPT, HS_FORMAT_HAS_HEAP));
	assert_false(hs_format_has(HS_FORMAT_HEAPSCOPE, HS_FORMAT_HAS_HEAP | HS_FORMAT_WRITABLE));
	assert_true(hs_format_has(HS_FORMAT_PERFVIEW_JSON_ZIP,
				  HS_FORMAT_WRITABLE | HS_FORMAT_HAS_TIME));
	assert_false(hs_format_has(HS_FORMAT_FOLDED, HS_FORMAT_HAS_TIME));
	assert_int_equal(hs_format_parse("PERF"), HS_FORMAT_PERF_SCRIPT);
	assert_int_equal(hs_format_from_path("x.folded.txt"), HS_FORMAT_FOLDED);
	assert_int_equal(hs_format_from_path("x.perf.data.dump"), HS_FORMAT_PERF_SCRIPT);
}

/* ---- detection ---- */

static enum hs_format sniff(const char *s)
{
	return hs_format_sniff((const unsigned char *)s, strlen(s));
}

static void content_decides_the_format(void **state)
{
	static const unsigned char zip_xml[] =
		"PK\3\4\24\0\0\0\10\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\16\0\0\0a.perfView.xml";
	static const unsigned char zip_json[] =
		"PK\3\4\24\0\0\0\10\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\6\0\0\0x.json";
	static const unsigned char zip_trace[] =
		"PK\3\4\24\0\0\0\10\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\12\0\0\0perf.map.1";

	(void)state;
	assert_int_equal(sniff("<?xml version=\"1.0\"?><StackWindow>"), HS_FORMAT_PERFVIEW_XML);
	assert_int_equal(sniff("\xef\xbb\xbf\n  <StackSource>"), HS_FORMAT_PERFVIEW_XML);
	assert_int_equal(sniff(" \n{\"StackSource\":"), HS_FORMAT_PERFVIEW_JSON);
	assert_int_equal(sniff("main;f;g 42\nmain;h 1.5\n"), HS_FORMAT_FOLDED);
	assert_int_equal(sniff("main 42"), HS_FORMAT_FOLDED);
	assert_int_equal(sniff("\n\nmain;f 3\nnot folded\n"), HS_FORMAT_FOLDED);
	assert_int_equal(sniff("# comment\n"
			       "prog  1234/1235 [001] 12345.678901:   10101010 cpu-clock:u: \n"
			       "\t    55d0b8a1c0de main+0x1e (/usr/bin/prog)\n"), HS_FORMAT_PERF_SCRIPT);
	assert_int_equal(sniff("perf 12 4.5: 1 cycles: ffff sym (mod)\n"
			       "perf 12 4.6: 1 cycles: ffff sym (mod)\n"), HS_FORMAT_PERF_SCRIPT);
	assert_int_equal(sniff("My Program 7 99.000001: cpu-clock:\n"), HS_FORMAT_PERF_SCRIPT);
	assert_int_equal(hs_format_sniff((const unsigned char *)"PERFILE2h\0\0\0\0\0\0\0", 16),
			 HS_FORMAT_PERF_SCRIPT);
	assert_int_equal(sniff("PERFILE"), HS_FORMAT_UNKNOWN);
	assert_int_equal(hs_format_sniff(zip_xml, sizeof(zip_xml) - 1), HS_FORMAT_PERFVIEW_XML_ZIP);
	assert_int_equal(hs_format_sniff(zip_json, sizeof(zip_json) - 1), HS_FORMAT_PERFVIEW_JSON_ZIP);
	assert_int_equal(hs_format_sniff(zip_trace, sizeof(zip_trace) - 1), HS_FORMAT_TRACE_ZIP);
	assert_int_equal(sniff(""), HS_FORMAT_UNKNOWN);
	assert_int_equal(sniff("   \n\t\n"), HS_FORMAT_UNKNOWN);
	assert_int_equal(sniff("hello world\n"), HS_FORMAT_UNKNOWN);
	assert_int_equal(sniff("main;f\n"), HS_FORMAT_UNKNOWN);
	assert_int_equal(sniff("a 1.2.x\n"), HS_FORMAT_UNKNOWN);
	assert_int_equal(hs_format_sniff((const unsigned char *)"a\0b 1\n", 6), HS_FORMAT_UNKNOWN);
}

static void names_and_extensions(void **state)
{
	(void)state;
	assert_int_equal(hs_format_from_path("x.perfView.xml"), HS_FORMAT_PERFVIEW_XML);
	assert_int_equal(hs_format_from_path("x.PERFVIEW.XML.ZIP"), HS_FORMAT_PERFVIEW_XML_ZIP);
	assert_int_equal(hs_format_from_path("a/b.perfView.json.zip"), HS_FORMAT_PERFVIEW_JSON_ZIP);
	assert_int_equal(hs_format_from_path("t.trace.zip"), HS_FORMAT_TRACE_ZIP);
	assert_int_equal(hs_format_from_path("p.data.txt"), HS_FORMAT_PERF_SCRIPT);
	assert_int_equal(hs_format_from_path("s.collapsed"), HS_FORMAT_FOLDED);
	assert_int_equal(hs_format_from_path("s.zip"), HS_FORMAT_UNKNOWN);
	assert_int_equal(hs_format_parse("json-zip"), HS_FORMAT_PERFVIEW_JSON_ZIP);
	assert_int_equal(hs_format_parse("bogus"), HS_FORMAT_UNKNOWN);
	assert_true(hs_format_writable(HS_FORMAT_FOLDED));
	assert_true(hs_format_writable(HS_FORMAT_PERFVIEW_XML_ZIP));
	assert_false(hs_format_writable(HS_FORMAT_PERF_SCRIPT));
	assert_false(hs_format_writable(HS_FORMAT_TRACE_ZIP));
}

/* ---- a random source ---- */

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double random_metric(void)
{
	switch (next() % 6) {
	case 0: return 1;
	case 1: return (double)(int64_t)(next() % 2000000001) - 1000000000;
	case 2: return (double)(next() % 1000000) / 1000;	/* ms */
	case 3: return (double)(next() >> 11) / 9007199254740992.0;	/* 53 bits */
	case 4: return -(double)(next() % 100) / 7;
	default: return 1e-300 * (double)(next() % 1000);
	}
}

/*
 * Frame names with what formats must escape (XML specials, quotes, UTF-8,
 * inner blanks and tabs) but nothing that folded stacks cannot carry:
 * no ';', no newline, no blank at either end, never empty.
 */
static void random_source(struct hs_stack_source *src, uint64_t seed, size_t nr_samples)
{
	static const char *const pieces[] = {
		"/usr/lib/libc.so.6!malloc", "ns::Vec<int>::push(a, b)", "a & b",
		"quote\"s 'single'", "\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5",
		"x\ty", "[unknown]", "BROKEN", "ROOT", "<tag>", "100", "Process app (7)",
	};
	uint32_t frames[64], path[12];
	size_t i, k, nr_frames = 40;

	rng = seed;
	hs_source_init(src);
	for (i = 0; i < nr_frames; i++) {
		char name[128];

		snprintf(name, sizeof(name), "%s#%zu", pieces[next() % 12], i);
		if (i < 12)
			snprintf(name, sizeof(name), "%s", pieces[i]);
		assert_int_equal(hs_source_intern_frame(src, name, strlen(name), &frames[i]), 0);
	}
	for (i = 0; i < nr_samples; i++) {
		size_t depth = next() % 12;
		uint32_t stack;
		int64_t t = (int64_t)(next() % 2000000000000000ull) - 1000000000000ll;
		double count = next() % 3 ? 1 : (double)(next() % 100) / 4;

		for (k = 0; k < depth; k++)
			path[k] = frames[next() % (k ? nr_frames : 4)];
		assert_int_equal(hs_source_intern_path(src, path, depth, &stack), 0);
		assert_int_equal(hs_source_add_sample(src, t, random_metric(), count, stack), 0);
	}
	src->kind = HS_METRIC_TIME;
	src->metric_unit = hs_strdup("ms");
	src->defaults.start = hs_strdup("0.5");
	src->defaults.end = hs_strdup("1e3");
	src->defaults.group = hs_strdup("{%}!->module $1;a & <b>");
	src->defaults.fold = hs_strdup("\"quoted\"");
	src->defaults.fold_pct = hs_strdup("1");
	src->defaults.inc = hs_strdup("\xc3\xa9");
	src->defaults.exc = hs_strdup("BROKEN");
	src->defaults.notes = hs_strdup("line 1\nline 2 < 3");
}

static const enum hs_format writable[] = {
	HS_FORMAT_PERFVIEW_XML, HS_FORMAT_PERFVIEW_XML_ZIP, HS_FORMAT_PERFVIEW_JSON,
	HS_FORMAT_PERFVIEW_JSON_ZIP, HS_FORMAT_FOLDED,
};
static const char *const extension[] = {
	".perfView.xml", ".perfView.xml.zip", ".perfView.json", ".perfView.json.zip",
	".folded",
};

static void write_read(const struct hs_stack_source *src, size_t fmt_index,
		       struct hs_stack_source *out, const char *tag)
{
	struct hs_diag d = HS_DIAG_INIT("rt");
	char path[256], name[64];

	snprintf(name, sizeof(name), "%s%s", tag, extension[fmt_index]);
	in_dir(path, sizeof(path), name);
	assert_int_equal(hs_export_path(src, path, HS_FORMAT_UNKNOWN, &d), 0);
	hs_source_init(out);
	if (hs_import_path(path, HS_FORMAT_UNKNOWN, out, &d))
		fail_msg("%s: %s", path, d.msg);
}

static void assert_same_text(char *a, char *b)
{
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/*
 * Every pair of writable formats: src -> A -> B -> read back. XML and JSON
 * keep everything; a trip through folded keeps each stack's summed metric
 * (what folded holds), with time 0 and count = metric.
 */
static void round_trips_over_all_format_pairs(void **state)
{
	struct hs_stack_source src, mid, out;
	size_t a, b, i;

	(void)state;
	random_source(&src, 0x9e3779b97f4a7c15ull, 3000);
	for (a = 0; a < 5; a++) {
		for (b = 0; b < 5; b++) {
			int lossy = writable[a] == HS_FORMAT_FOLDED ||
				    writable[b] == HS_FORMAT_FOLDED;

			write_read(&src, a, &mid, "a");
			write_read(&mid, b, &out, "b");
			assert_same_text(export_string(hs_export_folded, &src),
					 export_string(hs_export_folded, &out));
			if (!lossy) {
				assert_int_equal(out.nr_samples, src.nr_samples);
				assert_same_text(source_text(&src), source_text(&out));
				assert_same_text(source_defaults_text(&src),
						 source_defaults_text(&out));
			} else {
				for (i = 0; i < out.nr_samples; i++) {
					assert_true(out.time[i] == 0);
					assert_true(out.count[i] == out.metric[i]);
				}
			}
			hs_source_release(&mid);
			hs_source_release(&out);
		}
	}
	hs_source_release(&src);
}

/* Without a telling extension, content decides, zips included. */
static void import_by_content(void **state)
{
	struct hs_stack_source src, out;
	struct hs_diag d = HS_DIAG_INIT("content");
	char from[256], to[256];
	size_t a;

	(void)state;
	random_source(&src, 42, 200);
	for (a = 0; a < 4; a++) {
		in_dir(from, sizeof(from), "c");
		assert_int_equal(hs_export_path(&src, from, writable[a], &d), 0);
		in_dir(to, sizeof(to), "c.dat");
		assert_int_equal(rename(from, to), 0);
		hs_source_init(&out);
		assert_int_equal(hs_import_path(to, HS_FORMAT_UNKNOWN, &out, &d), 0);
		assert_same_text(source_text(&src), source_text(&out));
		hs_source_release(&out);
	}
	hs_source_release(&src);
}

static char *zip_entry_name(const char *path)
{
	zip_t *z = zip_open(path, ZIP_RDONLY, NULL);
	char *name;

	assert_non_null(z);
	assert_int_equal(zip_get_num_entries(z, 0), 1);
	name = strdup(zip_get_name(z, 0, 0));
	zip_discard(z);
	return name;
}

static void zip_entries_are_named_after_the_file(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("zip");
	char path[256], *name;

	(void)state;
	random_source(&src, 7, 10);
	in_dir(path, sizeof(path), "run1.perfView.xml.zip");
	assert_int_equal(hs_export_path(&src, path, HS_FORMAT_UNKNOWN, &d), 0);
	name = zip_entry_name(path);
	assert_string_equal(name, "run1.perfView.xml");
	free(name);
	in_dir(path, sizeof(path), "plain.zip");
	assert_int_equal(hs_export_path(&src, path, HS_FORMAT_PERFVIEW_JSON_ZIP, &d), 0);
	name = zip_entry_name(path);
	assert_string_equal(name, "plain.perfView.json");
	free(name);
	hs_source_release(&src);
}

static void bad_paths_and_zips(void **state)
{
	struct hs_stack_source src, out;
	struct hs_diag d = HS_DIAG_INIT("bad");
	char path[256];
	zip_t *z;
	zip_source_t *zs;

	(void)state;
	random_source(&src, 9, 10);
	/* a PerfView zip with two entries */
	in_dir(path, sizeof(path), "two.perfView.xml.zip");
	z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, NULL);
	assert_non_null(z);
	zs = zip_source_buffer(z, "<StackSource/>", 14, 0);
	assert_true(zip_file_add(z, "a.perfView.xml", zs, 0) >= 0);
	zs = zip_source_buffer(z, "<StackSource/>", 14, 0);
	assert_true(zip_file_add(z, "b.perfView.xml", zs, 0) >= 0);
	assert_int_equal(zip_close(z), 0);
	hs_source_init(&out);
	assert_int_equal(hs_import_path(path, HS_FORMAT_UNKNOWN, &out, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "exactly one entry"));
	hs_source_release(&out);

	/* a missing file */
	d = (struct hs_diag)HS_DIAG_INIT("missing");
	hs_source_init(&out);
	in_dir(path, sizeof(path), "missing.folded");
	assert_int_equal(hs_import_path(path, HS_FORMAT_UNKNOWN, &out, &d), -ENOENT);
	assert_string_equal(d.msg, "cannot open: No such file or directory");
	hs_source_release(&out);

	/* content nobody reads */
	in_dir(path, sizeof(path), "prose.txt");
	assert_int_equal(hs_export_path(&src, path, HS_FORMAT_UNKNOWN, &d), -EINVAL);
	d = (struct hs_diag)HS_DIAG_INIT("prose");
	{
		FILE *f = fopen(path, "w");

		fputs("just some words\n", f);
		fclose(f);
	}
	hs_source_init(&out);
	assert_int_equal(hs_import_path(path, HS_FORMAT_UNKNOWN, &out, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "--from"));
	hs_source_release(&out);

	/* formats heapscope only reads, and directories that do not exist */
	d = (struct hs_diag)HS_DIAG_INIT("out");
	assert_int_equal(hs_export_path(&src, "x.data.txt", HS_FORMAT_UNKNOWN, &d), -ENOTSUP);
	d = (struct hs_diag)HS_DIAG_INIT("out");
	in_dir(path, sizeof(path), "no/such/dir.folded");
	assert_int_equal(hs_export_path(&src, path, HS_FORMAT_UNKNOWN, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "cannot create"));
	hs_source_release(&src);
}

/* Failing part-way never leaves a file behind. */
static void export_failures_leave_no_file(void **state)
{
	static const enum hs_format fmts[] = { HS_FORMAT_FOLDED, HS_FORMAT_PERFVIEW_JSON_ZIP };
	struct hs_stack_source src;
	char path[256];
	size_t k;

	(void)state;
	random_source(&src, 11, 50);
	for (k = 0; k < 2; k++) {
		long n;
		int ret = -1;

		in_dir(path, sizeof(path), k ? "oom.perfView.json.zip" : "oom.folded");
		for (n = 0; ret; n++) {
			struct hs_diag d = HS_DIAG_INIT("oom");

			hs_alloc_fail_after(n);
			ret = hs_export_path(&src, path, fmts[k], &d);
			hs_alloc_fail_after(-1);
			if (ret) {
				assert_true(ret == -ENOMEM || ret == -EIO);
				assert_int_equal(access(path, F_OK), -1);
			}
		}
		assert_int_equal(access(path, F_OK), 0);
		assert_true(n > 1);
	}
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_format_is_one_entry),
		cmocka_unit_test(content_decides_the_format),
		cmocka_unit_test(names_and_extensions),
		cmocka_unit_test(round_trips_over_all_format_pairs),
		cmocka_unit_test(import_by_content),
		cmocka_unit_test(zip_entries_are_named_after_the_file),
		cmocka_unit_test(bad_paths_and_zips),
		cmocka_unit_test(export_failures_leave_no_file),
	};
	return cmocka_run_group_tests_name("io", tests, tu_dir_setup,
					   tu_dir_teardown);
}
