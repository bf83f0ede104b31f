/*
 * Tests of the pprof exporter and reader (io/export_pprof.c,
 * io/import_pprof.c): what a profile holds, that it reads back the same,
 * and that a malformed profile is an error with a message, not a crash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "io/io.h"
#include "profile.pb-c.h"
#include "testutil.h"

/* A memory source: two modules, a source line, a sample on ROOT. */
static void memory_source(struct hs_stack_source *src)
{
	uint32_t main_f, parse_f, malloc_f, s_main, s_parse, s_malloc, loc;

	hs_source_init(src);
	assert_int_equal(hs_source_intern_frame(src, "/bin/prog!main", 14, &main_f), 0);
	assert_int_equal(hs_source_intern_frame(src, "/bin/prog!parse", 15, &parse_f), 0);
	assert_int_equal(hs_source_intern_frame(src, "libc.so.6!malloc", 16, &malloc_f), 0);
	assert_int_equal(hs_source_intern_stack(src, main_f, HS_NO_STACK, &s_main), 0);
	assert_int_equal(hs_source_intern_loc(src, "parse.c", 7, 42, &loc), 0);
	assert_int_equal(hs_source_intern_stack_loc(src, parse_f, s_main, loc, &s_parse), 0);
	assert_int_equal(hs_source_intern_stack(src, malloc_f, s_parse, &s_malloc), 0);
	assert_int_equal(hs_source_add_sample(src, 10, 64, 1, s_malloc), 0);
	assert_int_equal(hs_source_add_sample(src, 20, 32, 2, s_malloc), 0);
	assert_int_equal(hs_source_add_sample(src, 30, 8, 1, s_main), 0);
	assert_int_equal(hs_source_add_sample(src, 40, 4, 1, HS_NO_STACK), 0);
	src->metric_unit = hs_strdup("bytes");
	src->view_name = hs_strdup("alloc");
	assert_non_null(src->metric_unit);
	assert_non_null(src->view_name);
}

/* Export @src to a temporary file and read it back into @back. */
static void round_trip(const struct hs_stack_source *src, struct hs_stack_source *back)
{
	struct hs_diag d = HS_DIAG_INIT("t.pb.gz");
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(hs_export_pprof(src, f), 0);
	rewind(f);
	hs_source_init(back);
	tu_expect_ok(hs_import_pprof_stream(f, 0, NULL, back, &d), &d);
	fclose(f);
}

/* The sum of the metric and count of the samples on stack text @want. */
static void sum_on(const struct hs_stack_source *src, const char *want, double *metric,
		   double *count)
{
	size_t i;

	*metric = *count = 0;
	for (i = 0; i < src->nr_samples; i++)
		if (!strcmp(tu_sample_text(src, i, ";"), want)) {
			*metric += src->metric[i];
			*count += src->count[i];
		}
}

static void memory_reads_back(void **state)
{
	struct hs_stack_source src, back;
	double metric, count;
	uint32_t line, s;
	size_t i;
	int found = 0;

	(void)state;
	memory_source(&src);
	round_trip(&src, &back);
	/* one sample per distinct stack, the sums kept */
	assert_int_equal(back.nr_samples, 3);
	sum_on(&back, "/bin/prog!main;/bin/prog!parse;libc.so.6!malloc", &metric, &count);
	assert_true(metric == 96 && count == 3);
	sum_on(&back, "/bin/prog!main", &metric, &count);
	assert_true(metric == 8 && count == 1);
	sum_on(&back, "", &metric, &count);
	assert_true(metric == 4 && count == 1);
	assert_string_equal(back.metric_unit, "bytes");
	assert_string_equal(back.view_name, "alloc");
	assert_int_equal(back.kind, HS_METRIC_PLAIN);
	/* parse's line survives */
	for (s = 0; s < back.nr_stacks; s++) {
		const char *file = hs_source_loc(&back, hs_source_stack_loc(&back, s), &line);

		if (file) {
			assert_string_equal(file, "parse.c");
			assert_int_equal(line, 42);
			assert_string_equal(hs_source_frame_name(&back, back.stack_frame[s]),
					    "/bin/prog!parse");
			found = 1;
		}
	}
	assert_true(found);
	for (i = 0; i < back.nr_samples; i++)
		assert_int_equal(back.time[i], 0);
	hs_source_release(&back);
	hs_source_release(&src);
}

static void views_name_the_sample_types(void **state)
{
	static const struct {
		const char *view, *back;
	} cases[] = {
		{ "alloc", "alloc" }, { "temporary", "alloc" }, { "leaks", "leaks" },
		{ "peak", "leaks" }, { "net", "leaks" },
	};
	struct hs_stack_source src, back;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		memory_source(&src);
		hs_free(src.view_name);
		src.view_name = hs_strdup(cases[k].view);
		round_trip(&src, &back);
		assert_string_equal(back.view_name, cases[k].back);
		hs_source_release(&back);
		hs_source_release(&src);
	}
}

/* CPU ms go out as ns and come back as ms of a time source. */
static void cpu_is_nanoseconds(void **state)
{
	struct hs_stack_source src, back;
	double metric, count;

	(void)state;
	hs_source_init(&src);
	src.kind = HS_METRIC_TIME;
	src.metric_unit = hs_strdup("ms");
	tu_sample(&src, 0, 1.5, 1, "prog!main;prog!spin");
	tu_sample(&src, 1000000, 0.25, 1, "prog!main;prog!spin");
	round_trip(&src, &back);
	assert_int_equal(back.kind, HS_METRIC_TIME);
	assert_string_equal(back.metric_unit, "ms");
	assert_string_equal(back.view_name, "cpu");
	sum_on(&back, "prog!main;prog!spin", &metric, &count);
	assert_true(metric == 1.75 && count == 2);
	hs_source_release(&back);
	hs_source_release(&src);
}

/* @len bytes at @data gzip'd into a temporary file, rewound. */
static FILE *gzip_file(const void *data, size_t len)
{
	unsigned char out[4096];
	z_stream z;
	FILE *f = tmpfile();

	assert_non_null(f);
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = sizeof(out);
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(fwrite(out, 1, sizeof(out) - z.avail_out, f), sizeof(out) - z.avail_out);
	deflateEnd(&z);
	rewind(f);
	return f;
}

/* Import @f, expecting -EINVAL with @msg in the diagnostic. */
static void expect_bad(FILE *f, const char *msg)
{
	struct hs_diag d = HS_DIAG_INIT("bad.pb.gz");
	struct hs_stack_source out;
	char text[512];

	hs_source_init(&out);
	if (hs_import_pprof_stream(f, 0, NULL, &out, &d) != -EINVAL)
		fail_msg("no -EINVAL where '%s' was due", msg);
	hs_diag_format(&d, text, sizeof(text));
	if (!strstr(text, msg))
		fail_msg("'%s' does not say '%s'", text, msg);
	hs_source_release(&out);
	fclose(f);
}

static void malformed_profiles_are_errors(void **state)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__ValueType *vts[1] = { &vt };
	Perftools__Profiles__Sample *ss[1] = { &s };
	char *strings[3] = { (char *)"", (char *)"space", (char *)"bytes" };
	uint64_t loc_ids[1] = { 7 };
	int64_t values[2] = { 1, 2 };
	unsigned char packed[256], junk[64];
	struct hs_stack_source src;
	size_t len;
	FILE *f;

	(void)state;
	/* not gzip */
	f = tmpfile();
	fputs("not a profile", f);
	rewind(f);
	expect_bad(f, "not a gzip stream");
	/* gzip, but not a profile */
	memset(junk, 0xff, sizeof(junk));
	expect_bad(gzip_file(junk, sizeof(junk)), "does not decode");
	/* a truncated gzip stream */
	memory_source(&src);
	f = tmpfile();
	assert_int_equal(hs_export_pprof(&src, f), 0);
	assert_int_equal(fflush(f), 0);
	len = (size_t)ftell(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)(len - 9)), 0);
	rewind(f);
	expect_bad(f, "truncated");
	hs_source_release(&src);
	/* a string index past the table */
	vt.type = 1;
	vt.unit = 9;
	p.n_sample_type = 1;
	p.sample_type = vts;
	p.n_string_table = 3;
	p.string_table = strings;
	len = perftools__profiles__profile__pack(&p, packed);
	expect_bad(gzip_file(packed, len), "past the string table");
	/* a sample naming a location that is not there */
	vt.unit = 2;
	s.n_location_id = 1;
	s.location_id = loc_ids;
	s.n_value = 1;
	s.value = values;
	p.n_sample = 1;
	p.sample = ss;
	len = perftools__profiles__profile__pack(&p, packed);
	expect_bad(gzip_file(packed, len), "location 7");
	/* two values for one sample type */
	s.n_value = 2;
	len = perftools__profiles__profile__pack(&p, packed);
	expect_bad(gzip_file(packed, len), "2 values for 1 sample types");
}

/* Running out of memory anywhere is -ENOMEM, never a crash or a leak. */
static void out_of_memory_is_enomem(void **state)
{
	struct hs_stack_source src;
	long n;
	int ret = -1;

	(void)state;
	memory_source(&src);
	for (n = 0; ret; n++) {
		FILE *f = tmpfile();

		assert_non_null(f);
		hs_alloc_fail_after(n);
		ret = hs_export_pprof(&src, f);
		hs_alloc_fail_after(-1);
		assert_true(ret == 0 || ret == -ENOMEM);
		fclose(f);
	}
	assert_true(n > 5);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(memory_reads_back),
		cmocka_unit_test(views_name_the_sample_types),
		cmocka_unit_test(cpu_is_nanoseconds),
		cmocka_unit_test(malformed_profiles_are_errors),
		cmocka_unit_test(out_of_memory_is_enomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
