/*
 * test_import_nettrace - the stack sources of .nettrace files
 * (io/import_nettrace.c), on traces recorded from tests/targets/dotnet
 * (tests/data/dotnet/allocs*.nettrace*, whose program printed the truth
 * into allocs.truth): bytes per type within the AllocationTick sampling
 * error, LargeObject frames, method names, thread time, any-stack events,
 * the format dispatch of io.c and a cut-off file.
 */
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
#include "io/import_nettrace.h"
#include "io/io.h"
#include "testutil.h"

/* AllocationTick fires about every 100 KB: a type's sum is off by at most a
 * tick where its allocations start and one where they end. */
#define TICK_ERROR (2.0 * 102400 + 8192)

static const char *data(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/dotnet/%s", HS_TEST_DATA, name);
	return path;
}

/* The number after @key in allocs.truth. */
static double truth(const char *key)
{
	char line[256], k[128];
	double v;
	FILE *f = fopen(data("allocs.truth"), "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lf", k, &v) == 2 && !strcmp(k, key)) {
			fclose(f);
			return v;
		}
	fclose(f);
	fail_msg("no %s in allocs.truth", key);
	return 0;
}

static void import(const char *name, const char *source, struct hs_stack_source *src)
{
	struct hs_diag d = HS_DIAG_INIT(name);

	hs_source_init(src);
	tu_expect_ok(hs_import_path_source(data(name), HS_FORMAT_UNKNOWN, source, src, &d), &d);
}

/* Sum of metric and count of the samples whose stack holds frame @name. */
static double sum_frame(const struct hs_stack_source *src, const char *name, double *count)
{
	double metric = 0, n = 0;
	size_t i;

	for (i = 0; i < src->nr_samples; i++) {
		uint32_t s;

		for (s = src->stack[i]; s != HS_NO_STACK; s = src->stack_caller[s])
			if (!strcmp(hs_source_frame_name(src, src->stack_frame[s]), name)) {
				metric += src->metric[i];
				n += src->count[i];
				break;
			}
	}
	if (count)
		*count = n;
	return metric;
}

/* Whether some sample's stack contains @text. */
static int stack_contains(const struct hs_stack_source *src, const char *text)
{
	size_t i;

	for (i = 0; i < src->nr_samples; i++)
		if (strstr(tu_sample_text(src, i, ";"), text))
			return 1;
	return 0;
}

static void gc_alloc_bytes_by_type(void **state)
{
	struct hs_stack_source src;
	double count, foo, strings, large;

	(void)state;
	import("allocs.nettrace", NULL, &src);
	assert_string_equal(src.metric_unit, "bytes");
	foo = sum_frame(&src, "Type Allocs.Foo", NULL);
	strings = sum_frame(&src, "Type System.String", NULL);
	large = sum_frame(&src, "LargeObject", &count);
	assert_true(fabs(foo - truth("foo_bytes")) <= TICK_ERROR);
	assert_true(fabs(strings - truth("string_bytes")) <= TICK_ERROR);
	/* each byte[200_000] is over 100 KB: one large-object tick each */
	assert_true(count == truth("array_count"));
	assert_true(fabs(large - truth("array_bytes")) <= TICK_ERROR);
	/* LargeObject sits below the type, the type below the method */
	assert_true(stack_contains(&src, "allocs!Allocs.Program.AllocateLargeArrays(int32);"
					 "Type System.Byte[];LargeObject"));
	assert_true(stack_contains(&src, "allocs!Allocs.Program.AllocateFoos(int32);"
					 "Type Allocs.Foo"));
	/* process and thread first */
	assert_true(strncmp(tu_sample_text(&src, 0, ";"), "Process dotnet (", 16) == 0);
	assert_non_null(strstr(tu_sample_text(&src, 0, ";"), ");Thread ("));
	hs_source_release(&src);
}

/* With the rundown, ReadyToRun framework methods get names too. */
static void zipped_with_rundown_names_framework_methods(void **state)
{
	struct hs_stack_source src;
	double foo;

	(void)state;
	import("allocs-rundown.nettrace.zip", "gc-alloc", &src);
	foo = sum_frame(&src, "Type Allocs.Foo", NULL);
	assert_true(fabs(foo - truth("foo_bytes")) <= TICK_ERROR);
	assert_true(stack_contains(&src, "allocs!Allocs.Program.AllocateStrings(int32);"
					 "System.Private.CoreLib!System.String.Ctor(wchar,int32);"
					 "Type System.String"));
	hs_source_release(&src);
}

/* Without it, those addresses stay ?!0xADDR. */
static void unknown_addresses_are_named_by_address(void **state)
{
	struct hs_stack_source src;
	size_t i;
	int found = 0;

	(void)state;
	import("allocs.nettrace", NULL, &src);
	for (i = 0; i < hs_source_nr_frames(&src); i++)
		found |= !strncmp(hs_source_frame_name(&src, (uint32_t)i), "?!0x", 4);
	assert_true(found);
	hs_source_release(&src);
}

static void gc_alloc_sampled_is_scaled(void **state)
{
	struct hs_stack_source src;
	struct hs_source_info avail[HS_SOURCES_MAX];
	size_t n;
	double foo, count;

	(void)state;
	n = hs_path_sources(data("allocs-sampled.nettrace"), HS_FORMAT_NETTRACE, avail);
	assert_int_equal(n, 3);
	assert_string_equal(avail[1].name, "gc-alloc-sampled");
	import("allocs-sampled.nettrace", "gc-alloc-sampled", &src);
	foo = sum_frame(&src, "Type Allocs.Foo", &count);
	/* a random sample of about 23 objects: within half of the truth */
	assert_true(fabs(foo - truth("foo_bytes")) < 0.5 * truth("foo_bytes"));
	/* each sample of a 48-byte Foo stands for about 2133 objects */
	assert_true(count > 0.5 * truth("foo_count") && count < 1.5 * truth("foo_count"));
	assert_true(sum_frame(&src, "LargeObject", NULL) > 0);
	hs_source_release(&src);
}

static void thread_time_in_ms(void **state)
{
	struct hs_stack_source src;
	double cpu, external, total, count;

	(void)state;
	import("allocs.nettrace", "thread-time", &src);
	assert_int_equal(src.kind, HS_METRIC_TIME);
	assert_string_equal(src.metric_unit, "ms");
	cpu = sum_frame(&src, "CPU_TIME", NULL);
	external = sum_frame(&src, "UNMANAGED_CODE_TIME", NULL);
	hs_source_totals(&src, &total, &count);
	assert_true(cpu > 0 && external > 0);
	assert_true(fabs(cpu + external - total) < 1e-6);
	/* the three spinners spin 100 ms each, in managed code */
	assert_true(sum_frame(&src, "allocs!Allocs.Program.Spin(class System.Object)", NULL) >
		    100);
	assert_true(stack_contains(&src, "allocs!Allocs.Program.Spin(class System.Object);"
					 "CPU_TIME"));
	hs_source_release(&src);
}

static void events_of_one_kind(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("x");

	(void)state;
	import("allocs.nettrace", "events:Microsoft-Windows-DotNETRuntime/Exception/Start", &src);
	assert_int_equal(src.nr_samples, 1);
	/* thrown in Dereference, a managed method, from a runtime helper */
	assert_true(stack_contains(&src, "allocs!Allocs.Program.ThrowNullReference();"
					 "allocs!Allocs.Program.Dereference(class Allocs.Foo);"));
	assert_true(stack_contains(&src, ";Event Microsoft-Windows-DotNETRuntime/Exception/Start"));
	hs_source_release(&src);

	import("allocs.nettrace", "events", &src);
	assert_true(src.nr_samples > 1);
	assert_true(sum_frame(&src, "Event Microsoft-Windows-DotNETRuntime/Exception/Start",
			      NULL) == 1);
	hs_source_release(&src);

	hs_source_init(&src);
	assert_int_equal(hs_import_path_source(data("allocs.nettrace"), HS_FORMAT_UNKNOWN,
					       "events:No/Such", &src, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "No/Such"));
	hs_source_release(&src);
}

static void format_by_name_and_content(void **state)
{
	static const unsigned char head[] = "Nettrace\x14\0\0\0!FastSerialization.1";

	(void)state;
	assert_int_equal(hs_format_from_path("x.nettrace"), HS_FORMAT_NETTRACE);
	assert_int_equal(hs_format_from_path("x.nettrace.zip"), HS_FORMAT_NETTRACE_ZIP);
	assert_int_equal(hs_format_from_path("x.trace.zip"), HS_FORMAT_TRACE_ZIP);
	assert_int_equal(hs_format_sniff(head, sizeof(head) - 1), HS_FORMAT_NETTRACE);
	assert_int_equal(hs_format_parse("nettrace"), HS_FORMAT_NETTRACE);
}

/* A file cut in the middle imports what it holds. */
static void cut_off_file_keeps_what_was_read(void **state)
{
	char path[4096];
	struct hs_stack_source whole, cut;
	struct hs_diag d = HS_DIAG_INIT("cut");
	FILE *in = fopen(data("allocs.nettrace"), "rb"), *out;
	unsigned char buf[65536];
	size_t n;

	(void)state;
	assert_non_null(in);
	n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	snprintf(path, sizeof(path), "%s/cut.nettrace", tu_dir);
	out = fopen(path, "wb");
	assert_non_null(out);
	assert_int_equal(fwrite(buf, 1, n * 2 / 3, out), n * 2 / 3);
	fclose(out);
	import("allocs.nettrace", NULL, &whole);
	hs_source_init(&cut);
	tu_expect_ok(hs_import_path_source(path, HS_FORMAT_UNKNOWN, NULL, &cut, &d), &d);
	assert_true(cut.nr_samples > 0);
	assert_true(cut.nr_samples < whole.nr_samples);
	hs_source_release(&whole);
	hs_source_release(&cut);
}

/* Each allocation failing in turn: -ENOMEM, nothing leaked (ASan), until it fits. */
static void out_of_memory_at_every_step(void **state)
{
	const char *const sources[] = { "gc-alloc", "thread-time", "events" };
	size_t k;

	(void)state;
	for (k = 0; k < 3; k++) {
		long n;
		int err;

		for (n = 0;; n += n < 300 ? 1 : 23) {
			struct hs_diag d = HS_DIAG_INIT("oom");
			struct hs_stack_source src;

			hs_source_init(&src);
			hs_alloc_fail_after(n);
			err = hs_import_path_source(data("allocs.nettrace"), HS_FORMAT_UNKNOWN,
						    sources[k], &src, &d);
			hs_alloc_fail_after(-1);
			hs_source_release(&src);
			if (!err)
				break;
			if (err != -ENOMEM)
				fail_msg("%s, failing after %ld: %d %s", sources[k], n, err, d.msg);
		}
		assert_true(n > 10);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gc_alloc_bytes_by_type),
		cmocka_unit_test(zipped_with_rundown_names_framework_methods),
		cmocka_unit_test(unknown_addresses_are_named_by_address),
		cmocka_unit_test(gc_alloc_sampled_is_scaled),
		cmocka_unit_test(thread_time_in_ms),
		cmocka_unit_test(events_of_one_kind),
		cmocka_unit_test(format_by_name_and_content),
		cmocka_unit_test(cut_off_file_keeps_what_was_read),
		cmocka_unit_test(out_of_memory_at_every_step),
	};
	return cmocka_run_group_tests_name("import_nettrace", tests, tu_dir_setup,
					   tu_dir_teardown);
}
