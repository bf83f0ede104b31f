/*
 * test_escape - control characters made visible (common/escape.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/buf.h"
#include "common/escape.h"

static char *escaped(const char *s, size_t len)
{
	struct hs_buf b = HS_BUF_INIT;

	assert_int_equal(hs_escape_add(&b, s, len), 0);
	return hs_buf_detach(&b);
}

static void expect(const char *in, size_t len, const char *want)
{
	char *got = escaped(in, len), copy[64];

	assert_string_equal(got, want);
	assert_int_equal(hs_escape_needed(in, len), strcmp(got, in) != 0 || strlen(in) != len);
	assert_int_equal(hs_escape_copy(copy, sizeof(copy), in, len), strlen(want));
	assert_string_equal(copy, want);
	free(got);
}

static void controls_are_escaped(void **state)
{
	(void)state;
	expect("main", 4, "main");
	expect("\x1b[2J\x1b[31mevil", 13, "\\x1b[2J\\x1b[31mevil");
	expect("a\tb\nc\rd\x7f", 8, "a\\x09b\\x0ac\\x0dd\\x7f");
	expect("nul\0x", 5, "nul\\x00x");
	/* U+009B (CSI) as UTF-8, and a lone byte 0x9b */
	expect("\xc2\x9b" "1m", 4, "\\u009b1m");
	expect("\x9b" "1m", 3, "\\x9b1m");
}

static void text_passes_as_it_is(void **state)
{
	(void)state;
	/* UTF-8 beyond C1, a backslash, a byte of Latin-1 (0xe9) */
	expect("caf\xc3\xa9 \xe2\x82\xac", 9, "caf\xc3\xa9 \xe2\x82\xac");
	expect("C:\\x1b", 6, "C:\\x1b");
	expect("b\xffz \xe9", 5, "b\xffz \xe9");
	expect("\xc2\xa0", 2, "\xc2\xa0");	/* U+00A0 is not a control */
}

/* Escaping an escaped string changes nothing. */
static void idempotent(void **state)
{
	char *once = escaped("\x1b]0;title\x07", 10);
	char *twice = escaped(once, strlen(once));

	(void)state;
	assert_string_equal(once, "\\x1b]0;title\\x07");
	assert_string_equal(once, twice);
	free(once);
	free(twice);
}

/* hs_escape_copy() cuts at an escape's boundary, NUL-terminated. */
static void copy_is_bounded(void **state)
{
	char out[8];

	(void)state;
	memset(out, 'z', sizeof(out));
	assert_int_equal(hs_escape_copy(out, sizeof(out), "ab\x1b\x1b", 4), 6);
	assert_string_equal(out, "ab\\x1b");
	assert_int_equal(hs_escape_copy(out, 1, "abc", 3), 0);
	assert_string_equal(out, "");
}

static void writes_to_a_file(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(hs_escape_write(f, "x\x1b", 2), 0);
	fputc('|', f);
	fclose(f);
	assert_string_equal(buf, "x\\x1b|");
	free(buf);
}

static void vprintf_helper(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void vprintf_helper(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hs_escape_vprintf(f, fmt, ap);
	va_end(ap);
}

static void vprintf_escapes_arguments(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	vprintf_helper(f, "cannot open '%s': %d", "a\x1b[2Jb", 2);
	fclose(f);
	assert_string_equal(buf, "cannot open 'a\\x1b[2Jb': 2");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(controls_are_escaped),
		cmocka_unit_test(text_passes_as_it_is),
		cmocka_unit_test(idempotent),
		cmocka_unit_test(copy_is_bounded),
		cmocka_unit_test(writes_to_a_file),
		cmocka_unit_test(vprintf_escapes_arguments),
	};
	return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}
