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
#include "io/zipfile.h"
#include "testutil.h"

static void path_in_dir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", tu_dir, name);
}

static void written_entry_reads_back(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("x");
	char path[128], line[64], *name = NULL;
	FILE *f;
	int i;

	(void)state;
	path_in_dir(path, sizeof(path), "a.perfView.xml.zip");
	f = hs_zip_create_entry(path, "a.perfView.xml", &d);
	assert_non_null(f);
	for (i = 0; i < 100000; i++)
		fprintf(f, "line %d\n", i);
	assert_int_equal(fclose(f), 0);

	f = hs_zip_open_entry(path, NULL, &name, &d);
	assert_non_null(f);
	assert_string_equal(name, "a.perfView.xml");
	for (i = 0; i < 100000; i++) {
		char want[32];

		assert_non_null(fgets(line, sizeof(line), f));
		snprintf(want, sizeof(want), "line %d\n", i);
		assert_string_equal(line, want);
	}
	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
	hs_free(name);

	f = hs_zip_open_named(path, "a.perfView.xml");
	assert_non_null(f);
	fclose(f);
	assert_null(hs_zip_open_named(path, "missing.map"));
}

static void entry_found_by_suffix_among_several(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("x");
	char path[128], *name = NULL, buf[16] = { 0 };
	zip_t *z;
	int err;
	FILE *f;

	(void)state;
	path_in_dir(path, sizeof(path), "t.trace.zip");
	z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	assert_non_null(z);
	assert_true(zip_file_add(z, "dir/perf-12.map",
				 zip_source_buffer(z, "10 20 jit\n", 10, 0), 0) >= 0);
	assert_true(zip_file_add(z, "dir/run.data.txt",
				 zip_source_buffer(z, "perf text\n", 10, 0), 0) >= 0);
	assert_int_equal(zip_close(z), 0);

	f = hs_zip_open_entry(path, ".data.txt", &name, &d);
	assert_non_null(f);
	assert_string_equal(name, "dir/run.data.txt");
	assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), 10);
	assert_string_equal(buf, "perf text\n");
	fclose(f);
	hs_free(name);

	f = hs_zip_open_named(path, "perf-12.map");
	assert_non_null(f);
	fclose(f);

	/* more than one entry where exactly one is expected */
	assert_null(hs_zip_open_entry(path, NULL, NULL, &d));
	assert_true(d.set);
	assert_non_null(strstr(d.msg, "exactly one entry"));
}

static void missing_suffix_and_non_zip_are_errors(void **state)
{
	struct hs_diag d1 = HS_DIAG_INIT("x"), d2 = HS_DIAG_INIT("y");
	char path[128];
	FILE *f;

	(void)state;
	path_in_dir(path, sizeof(path), "a.perfView.xml.zip");
	assert_null(hs_zip_open_entry(path, ".data.txt", NULL, &d1));
	assert_non_null(strstr(d1.msg, "no entry ending in '.data.txt'"));

	path_in_dir(path, sizeof(path), "not-a.zip");
	f = fopen(path, "w");
	fputs("hello, not a zip", f);
	fclose(f);
	assert_null(hs_zip_open_entry(path, NULL, NULL, &d2));
	assert_non_null(strstr(d2.msg, "cannot open as a zip"));
}

/* The spool's bound: HEAPSCOPE_SPOOL_MAX with a suffix, else 1 GiB. */
static void spool_bound_from_the_environment(void **state)
{
	(void)state;
	unsetenv("HEAPSCOPE_SPOOL_MAX");
	assert_true(hs_zip_spool_max() == HS_ZIP_SPOOL_MAX);
	setenv("HEAPSCOPE_SPOOL_MAX", "64K", 1);
	assert_true(hs_zip_spool_max() == 65536);
	setenv("HEAPSCOPE_SPOOL_MAX", "3g", 1);
	assert_true(hs_zip_spool_max() == 3ULL << 30);
	setenv("HEAPSCOPE_SPOOL_MAX", "1000", 1);
	assert_true(hs_zip_spool_max() == 1000);
	setenv("HEAPSCOPE_SPOOL_MAX", "-5", 1);
	assert_true(hs_zip_spool_max() == HS_ZIP_SPOOL_MAX);
	setenv("HEAPSCOPE_SPOOL_MAX", "12X", 1);
	assert_true(hs_zip_spool_max() == HS_ZIP_SPOOL_MAX);
	setenv("HEAPSCOPE_SPOOL_MAX", "0", 1);
	assert_true(hs_zip_spool_max() == HS_ZIP_SPOOL_MAX);
	unsetenv("HEAPSCOPE_SPOOL_MAX");
}

/* Other bounds (the .trace.zip maps') read their variable the same way. */
static void env_size_of_any_variable(void **state)
{
	(void)state;
	unsetenv("HS_TEST_SIZE");
	assert_true(hs_env_size("HS_TEST_SIZE", 77) == 77);
	setenv("HS_TEST_SIZE", "2M", 1);
	assert_true(hs_env_size("HS_TEST_SIZE", 77) == 2ULL << 20);
	assert_true(hs_zip_spool_max() == HS_ZIP_SPOOL_MAX);
	setenv("HS_TEST_SIZE", "M", 1);
	assert_true(hs_env_size("HS_TEST_SIZE", 77) == 77);
	setenv("HS_TEST_SIZE", "99999999999999999999G", 1);
	assert_true(hs_env_size("HS_TEST_SIZE", 77) == 77);
	unsetenv("HS_TEST_SIZE");
}

/*
 * A spool holds what fits and refuses more, in $TMPDIR, saying why; a
 * TMPDIR that does not exist is named.
 */
static void spool_is_bounded_and_in_tmpdir(void **state)
{
	static char data[200000];
	struct hs_diag d = HS_DIAG_INIT("<stdin>");
	FILE *in, *out = NULL;
	char back[16];

	(void)state;
	memset(data, 'z', sizeof(data));
	memcpy(data, "PK\3\4", 4);
	setenv("HEAPSCOPE_SPOOL_MAX", "300K", 1);
	in = fmemopen(data, sizeof(data), "r");
	assert_int_equal(hs_zip_spool(in, &out, &d), 0);
	fclose(in);
	assert_int_equal(fread(back, 1, 4, out), 4);
	assert_memory_equal(back, "PK\3\4", 4);
	assert_int_equal(fseek(out, 0, SEEK_END), 0);
	assert_int_equal(ftell(out), (long)sizeof(data));
	fclose(out);
	out = NULL;

	setenv("HEAPSCOPE_SPOOL_MAX", "100K", 1);
	in = fmemopen(data, sizeof(data), "r");
	assert_int_equal(hs_zip_spool(in, &out, &d), -EFBIG);
	fclose(in);
	assert_null(out);
	assert_non_null(strstr(d.msg, "larger than 102400 bytes (HEAPSCOPE_SPOOL_MAX)"));
	unsetenv("HEAPSCOPE_SPOOL_MAX");

	d = (struct hs_diag)HS_DIAG_INIT("<stdin>");
	setenv("TMPDIR", "/nonexistent-heapscope-dir", 1);
	in = fmemopen(data, 10, "r");
	assert_int_equal(hs_zip_spool(in, &out, &d), -EIO);
	fclose(in);
	assert_string_equal(d.msg, "cannot create a temporary file in "
			    "/nonexistent-heapscope-dir: No such file or directory");
	unsetenv("TMPDIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(written_entry_reads_back),
		cmocka_unit_test(entry_found_by_suffix_among_several),
		cmocka_unit_test(missing_suffix_and_non_zip_are_errors),
		cmocka_unit_test(spool_bound_from_the_environment),
		cmocka_unit_test(env_size_of_any_variable),
		cmocka_unit_test(spool_is_bounded_and_in_tmpdir),
	};
	return cmocka_run_group_tests_name("zipfile", tests, tu_dir_setup,
					   tu_dir_teardown);
}
