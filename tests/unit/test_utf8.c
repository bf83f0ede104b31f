#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "common/utf8.h"

static void sequences_are_measured(void **state)
{
	static const struct {
		const char *s;
		size_t len, n;
		unsigned long cp;
	} cases[] = {
		{ "a", 1, 1, 'a' },
		{ "\xc3\xa9", 2, 2, 0xe9 },		/* e acute */
		{ "\xe2\x82\xac", 3, 3, 0x20ac },	/* euro sign */
		{ "\xf0\x9f\x98\x80", 4, 4, 0x1f600 },
		{ "\xc3", 1, 0, 0 },			/* cut short */
		{ "\xc0\xaf", 2, 0, 0 },		/* overlong '/' */
		{ "\xe0\x80\xaf", 3, 0, 0 },		/* overlong '/' */
		{ "\xed\xa0\x80", 3, 0, 0 },		/* surrogate D800 */
		{ "\xf4\x90\x80\x80", 4, 0, 0 },	/* above U+10FFFF */
		{ "\xff", 1, 0, 0 },
		{ "\x80", 1, 0, 0 },			/* lone continuation */
		{ "\xe2\x28\xa1", 3, 0, 0 },		/* bad second byte */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned long cp = 0;
		size_t n = hs_utf8_seq_len((const unsigned char *)cases[i].s,
					   cases[i].len, &cp);

		assert_int_equal(n, cases[i].n);
		if (n)
			assert_int_equal(cp, cases[i].cp);
	}
}

static void validity(void **state)
{
	(void)state;
	assert_true(hs_utf8_valid("", 0));
	assert_true(hs_utf8_valid("libc.so.6!malloc", 16));
	assert_true(hs_utf8_valid("caf\xc3\xa9", 5));
	assert_false(hs_utf8_valid("caf\xc3", 4));
	assert_false(hs_utf8_valid("b\xff" "d", 3));
	/* the length counts, not the NUL */
	assert_true(hs_utf8_valid("a\0b", 3));
}

static void repair_replaces_each_bad_byte(void **state)
{
	size_t n = 99;
	char *s;

	(void)state;
	s = hs_utf8_repair("b\xff" "d", 3, &n);
	assert_string_equal(s, "b\xef\xbf\xbd" "d");
	assert_int_equal(n, 5);
	hs_free(s);
	/* two bad bytes, two replacements; valid sequences stay */
	s = hs_utf8_repair("\xc3\xa9\xc0\xaf!", 5, &n);
	assert_string_equal(s, "\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd!");
	assert_int_equal(n, 9);
	hs_free(s);
	/* a sequence cut at the end */
	s = hs_utf8_repair("x\xe2\x82", 3, &n);
	assert_string_equal(s, "x\xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(n, 7);
	hs_free(s);
	s = hs_utf8_repair("", 0, &n);
	assert_string_equal(s, "");
	assert_int_equal(n, 0);
	hs_free(s);
}

static void repair_out_of_memory(void **state)
{
	size_t n = 7;
	int k;

	(void)state;
	for (k = 0; k < 3; k++) {
		char *s;

		hs_alloc_fail_after(k);
		s = hs_utf8_repair("\xff\xff\xff\xff\xff\xff\xff\xff", 8, &n);
		hs_alloc_fail_after(-1);
		if (s) {
			assert_int_equal(n, 24);
			hs_free(s);
		}
	}
	hs_alloc_fail_after(0);
	assert_null(hs_utf8_repair("\xff", 1, &n));
	hs_alloc_fail_after(-1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sequences_are_measured),
		cmocka_unit_test(validity),
		cmocka_unit_test(repair_replaces_each_bad_byte),
		cmocka_unit_test(repair_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
