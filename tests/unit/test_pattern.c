#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/pattern.h"
#include "common/alloc.h"

/* The PCRE2 text of a simplified pattern. */
static void check_translation(const char *pat, const char *want)
{
	struct hs_buf out = HS_BUF_INIT;
	size_t *src_of = NULL;

	assert_int_equal(hs_pattern_translate(pat, strlen(pat), &out, &src_of), 0);
	assert_string_equal(out.s, want);
	hs_free(src_of);
	hs_buf_release(&out);
}

static void translation_of_each_special(void **state)
{
	(void)state;
	check_translation("malloc", "malloc");
	check_translation("a*b", "a.*b");
	check_translation("a%b", "a[.\\w\\d?]*b");
	check_translation("^main", "^main");
	check_translation("x^y", "x^y");
	check_translation("a|b", "a|b");
	check_translation("{%}!", "([.\\w\\d?]*)\\!");
	check_translation("", "");
}

static void translation_escapes_everything_else(void **state)
{
	(void)state;
	/* . $ ? + ( ) [ ] \ space ! - / : < > are all literal */
	check_translation("a.b$c?d+e(f)[g]\\h i",
			  "a\\.b\\$c\\?d\\+e\\(f\\)\\[g\\]\\\\h\\ i");
	check_translation("a!b-c/d:e<f>", "a\\!b\\-c\\/d\\:e\\<f\\>");
	/* non-ASCII bytes are copied as they are */
	check_translation("caf\xc3\xa9", "caf\xc3\xa9");
}

static void translation_of_raw_regex(void **state)
{
	(void)state;
	check_translation("@a.*b[0-9]+$", "a.*b[0-9]+$");
	check_translation("@", "");
}

static void translation_maps_offsets(void **state)
{
	struct hs_buf out = HS_BUF_INIT;
	size_t *src_of = NULL;

	(void)state;
	assert_int_equal(hs_pattern_translate("a*.", 3, &out, &src_of), 0);
	assert_string_equal(out.s, "a.*\\.");
	assert_int_equal(src_of[0], 0);
	assert_int_equal(src_of[1], 1);
	assert_int_equal(src_of[2], 1);
	assert_int_equal(src_of[3], 2);
	assert_int_equal(src_of[4], 2);
	hs_free(src_of);
	hs_buf_release(&out);
}

/* 1 if simplified pattern @pat matches @s, 0 if not. */
static int matches(const char *pat, const char *s)
{
	struct hs_pattern *p;
	int rc;

	assert_int_equal(hs_pattern_compile(pat, strlen(pat), &p, NULL), 0);
	rc = hs_pattern_match(p, s, strlen(s), NULL);
	hs_pattern_free(p);
	assert_true(rc == 0 || rc == 1);
	return rc;
}

static void matching_rules(void **state)
{
	(void)state;
	/* unanchored substring, no end anchor */
	assert_true(matches("alloc", "libc.so.6!malloc"));
	assert_true(matches("libc", "libc.so.6!malloc"));
	assert_false(matches("^alloc", "libc.so.6!malloc"));
	assert_true(matches("^libc", "libc.so.6!malloc"));
	/* caseless, also for raw regexes */
	assert_true(matches("MALLOC", "libc.so.6!malloc"));
	assert_true(matches("@^LIBC\\.so", "libc.so.6!x"));
	/* * is anything */
	assert_true(matches("^lib*!*loc", "libc.so.6!malloc"));
	assert_true(matches("a*b", "ab"));
	/* % is letters, digits, '_', '.', '?' and nothing else */
	assert_true(matches("^lib%!", "libc.so.6!f"));
	assert_true(matches("^foo%!", "foo?x_1.2!b"));
	assert_false(matches("^a%!", "a-b!c"));
	assert_false(matches("^a%!", "a b!c"));
	assert_false(matches("^%!", "/usr/lib/libc.so.6!f"));
	assert_true(matches("^x%y", "xy"));
	/* letters of other scripts are letters */
	assert_true(matches("^caf%!", "caf\xc3\xa9!f"));
	/* literal specials */
	assert_false(matches("a.c", "abc"));
	assert_true(matches("a.c", "xa.cy"));
	assert_true(matches("a$", "xa$y"));
	assert_false(matches("a$", "xa"));
	assert_true(matches("f(int)", "m!f(int)"));
	assert_false(matches("ab?", "a"));
	assert_true(matches("[]", "x[]"));
	assert_true(matches("a\\b", "a\\b"));
	/* alternation over the whole pattern unless inside {} */
	assert_true(matches("foo|bar", "xbar"));
	assert_true(matches("^foo|bar", "xbar"));
	assert_false(matches("^{foo|bar}!", "xbar!"));
	assert_true(matches("^{foo|bar}!", "bar!"));
	/* names that are not valid UTF-8 can still be matched */
	assert_true(matches("^lib*!f", "lib\xff.so!f"));
	assert_true(matches("!f", "lib\xff.so!f"));
}

static void captures(void **state)
{
	struct hs_pattern *p;
	struct hs_match m;
	const char *s = "/usr/lib/libc.so.6!malloc";

	(void)state;
	assert_int_equal(hs_pattern_compile("{%}!{*}", 7, &p, NULL), 0);
	assert_int_equal(hs_pattern_match(p, s, strlen(s), &m), 1);
	assert_int_equal(m.nr, 3);
	assert_int_equal(m.start[0], 9);	/* "libc.so.6!malloc" */
	assert_int_equal(m.end[0], strlen(s));
	assert_int_equal(m.start[1], 9);
	assert_int_equal(m.end[1], 18);
	assert_int_equal(m.start[2], 19);
	assert_int_equal(m.end[2], strlen(s));
	assert_int_equal(hs_pattern_match(p, "nobang", 6, &m), 0);
	hs_pattern_free(p);
}

static void bad_patterns(void **state)
{
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_pattern *p = (struct hs_pattern *)&d;
	char big[HS_PATTERN_MAX_LEN + 2];

	(void)state;
	assert_int_equal(hs_pattern_compile("{abc", 4, &p, &d), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(d.msg, "'{abc'"));
	assert_non_null(strstr(d.msg, "missing closing parenthesis"));
	assert_non_null(strstr(d.msg, "at offset 4"));

	memset(&d, 0, sizeof(d));
	assert_int_equal(hs_pattern_compile("ab}c", 4, &p, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "'ab}c'"));
	assert_non_null(strstr(d.msg, "at offset 2"));

	memset(&d, 0, sizeof(d));
	assert_int_equal(hs_pattern_compile("@a[", 3, &p, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "'@a['"));
	assert_non_null(strstr(d.msg, "missing terminating ]"));

	memset(&d, 0, sizeof(d));
	memset(big, 'x', sizeof(big));
	assert_int_equal(hs_pattern_compile(big, sizeof(big), &p, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "longer than 1024 bytes"));
	/* exactly the limit is fine */
	assert_int_equal(hs_pattern_compile(big, HS_PATTERN_MAX_LEN, &p, NULL), 0);
	hs_pattern_free(p);
}

static void match_limit(void **state)
{
	struct hs_pattern *p;
	char s[64];

	(void)state;
	memset(s, 'a', sizeof(s));
	s[sizeof(s) - 1] = '!';
	assert_int_equal(hs_pattern_compile("@^(a|aa)+$", 10, &p, NULL), 0);
	assert_int_equal(hs_pattern_match(p, s, sizeof(s), NULL), -ERANGE);
	/* the same in byte mode, for a name that is not UTF-8 */
	s[sizeof(s) - 2] = '\xff';
	assert_int_equal(hs_pattern_match(p, s, sizeof(s), NULL), -ERANGE);
	hs_pattern_free(p);
	/* a simplified pattern with many stars is bounded too */
	assert_int_equal(hs_pattern_compile("*a*a*a*a*a*a*a*a*b", 18, &p, NULL), 0);
	s[0] = 'b';	/* a 'b', but none after the a's */
	s[sizeof(s) - 2] = 'a';
	assert_int_equal(hs_pattern_match(p, s, sizeof(s), NULL), -ERANGE);
	hs_pattern_free(p);
}

static void lists(void **state)
{
	struct hs_patlist l = HS_PATLIST_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	uint64_t bits[1] = { 0 };
	size_t which = 99;

	(void)state;
	assert_int_equal(hs_patlist_parse(&l, "  a ; ;b c ;  ;", "IncPats", &d), 0);
	assert_int_equal(l.nr, 2);
	assert_string_equal(hs_pattern_text(l.pat[0]), "a");
	assert_string_equal(hs_pattern_text(l.pat[1]), "b c");
	assert_int_equal(hs_patlist_match_any(&l, "xb cx", 5, &which), 1);
	assert_int_equal(which, 1);
	assert_int_equal(hs_patlist_match_any(&l, "zzz", 3, &which), 0);
	assert_int_equal(hs_patlist_match_set(&l, "ab c", 4, bits, &which), 0);
	assert_int_equal(bits[0], 3);
	bits[0] = 0;
	assert_int_equal(hs_patlist_match_set(&l, "b c", 3, bits, &which), 0);
	assert_int_equal(bits[0], 2);
	hs_patlist_release(&l);

	assert_int_equal(hs_patlist_parse(&l, NULL, "IncPats", &d), 0);
	assert_int_equal(l.nr, 0);
	assert_int_equal(hs_patlist_parse(&l, " ; ", "IncPats", &d), 0);
	assert_int_equal(l.nr, 0);

	/* ';' can never be part of a pattern, not even a raw one */
	assert_int_equal(hs_patlist_parse(&l, "@a;b", "IncPats", &d), 0);
	assert_int_equal(l.nr, 2);
	assert_string_equal(hs_pattern_text(l.pat[0]), "@a");
	hs_patlist_release(&l);
}

/*
 * A list looks at a name's bytes once: an ASCII name, valid UTF-8 with
 * letters of other scripts anywhere in it, and bytes that are not UTF-8
 * anywhere in it get the answers that each pattern alone gives.
 */
static void lists_of_any_text(void **state)
{
	struct hs_patlist l = HS_PATLIST_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	char name[32];
	size_t i, which;
	uint64_t bits[1];

	(void)state;
	assert_int_equal(hs_patlist_parse(&l, "zz;@^x.*!f$;caf%!", "IncPats", &d), 0);
	/* not UTF-8 at byte i (in an 8-byte word or the rest): the bytes */
	for (i = 1; i < 20; i++) {
		memset(name, 'x', 20);
		memcpy(name + 20, "!f", 3);
		name[i] = '\xff';
		assert_int_equal(hs_patlist_match_any(&l, name, 22, &which), 1);
		assert_int_equal(which, 1);
		bits[0] = 0;
		assert_int_equal(hs_patlist_match_set(&l, name, 22, bits, &which), 0);
		assert_int_equal(bits[0], 2);
		assert_int_equal(hs_pattern_match(l.pat[1], name, 22, NULL), 1);
	}
	/* UTF-8 with a letter of another script at byte i: UTF mode */
	for (i = 0; i < 16; i++) {
		memset(name, 'y', i);
		memcpy(name + i, "caf\xc3\xa9!f", 8);
		assert_int_equal(hs_patlist_match_any(&l, name, i + 7, &which), 1);
		assert_int_equal(which, 2);
		bits[0] = 0;
		assert_int_equal(hs_patlist_match_set(&l, name, i + 7, bits, &which), 0);
		assert_int_equal(bits[0], 4);
		assert_int_equal(hs_pattern_match(l.pat[2], name, i + 7, NULL), 1);
	}
	/* all ASCII, of every length around a word */
	for (i = 1; i < 20; i++) {
		memset(name, 'x', i);
		memcpy(name + i, "!f", 3);
		assert_int_equal(hs_patlist_match_any(&l, name, i + 2, &which), 1);
		assert_int_equal(which, 1);
		assert_int_equal(hs_patlist_match_any(&l, name, i + 1, &which), 0);
	}
	hs_patlist_release(&l);
}

static void list_errors(void **state)
{
	struct hs_patlist l = HS_PATLIST_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	char many[3 * (HS_PATTERN_MAX_LIST + 1) + 1];
	int i;

	(void)state;
	assert_int_equal(hs_patlist_parse(&l, "ok;{bad", "FoldPats", &d), -EINVAL);
	assert_int_equal(l.nr, 0);
	assert_null(l.pat);
	assert_non_null(strstr(d.msg, "FoldPats: bad pattern '{bad'"));

	for (i = 0; i <= HS_PATTERN_MAX_LIST; i++)
		memcpy(many + 3 * i, "ab;", 3);
	many[sizeof(many) - 1] = 0;
	memset(&d, 0, sizeof(d));
	assert_int_equal(hs_patlist_parse(&l, many, "ExcPats", &d), -EINVAL);
	assert_non_null(strstr(d.msg, "more than 256 patterns"));
	assert_int_equal(l.nr, 0);
}

static void out_of_memory(void **state)
{
	long n;
	int rc = -ENOMEM;

	(void)state;
	for (n = 0; rc == -ENOMEM; n++) {
		struct hs_patlist l = HS_PATLIST_INIT;

		hs_alloc_fail_after(n);
		rc = hs_patlist_parse(&l, "a*b;{%}!;^c|d", "IncPats", NULL);
		hs_alloc_fail_after(-1);
		assert_true(rc == 0 || rc == -ENOMEM);
		if (!rc) {
			assert_int_equal(l.nr, 3);
			size_t which;

			assert_int_equal(hs_patlist_match_any(&l, "xd", 2, &which), 1);
			assert_int_equal(which, 2);
		} else {
			assert_int_equal(l.nr, 0);
		}
		hs_patlist_release(&l);
	}
	assert_true(n > 3);
}

/* "+PATS" extends a default list; anything else replaces it. */
static void extend_default(void **state)
{
	char *joined = (char *)1;
	const char *r;

	(void)state;
	r = hs_patterns_extend("x;y", "malloc;free", &joined);
	assert_string_equal(r, "x;y");
	assert_null(joined);
	r = hs_patterns_extend(" +xmalloc;xcalloc", "malloc;free", &joined);
	assert_string_equal(r, "malloc;free;xmalloc;xcalloc");
	assert_ptr_equal(r, joined);
	hs_free(joined);
	r = hs_patterns_extend("+xmalloc", NULL, &joined);
	assert_string_equal(r, "xmalloc");
	assert_null(joined);
	r = hs_patterns_extend("+xmalloc", " ; ", &joined);
	assert_string_equal(r, "xmalloc");
	r = hs_patterns_extend("+", "malloc", &joined);
	assert_string_equal(r, "malloc;");
	hs_free(joined);
	assert_null(hs_patterns_extend(NULL, "malloc", &joined));
	assert_null(joined);
	hs_alloc_fail_after(0);
	r = hs_patterns_extend("+x", "malloc", &joined);
	hs_alloc_fail_after(-1);
	assert_null(r);
	assert_null(joined);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(translation_of_each_special),
		cmocka_unit_test(translation_escapes_everything_else),
		cmocka_unit_test(translation_of_raw_regex),
		cmocka_unit_test(translation_maps_offsets),
		cmocka_unit_test(matching_rules),
		cmocka_unit_test(captures),
		cmocka_unit_test(bad_patterns),
		cmocka_unit_test(match_limit),
		cmocka_unit_test(lists),
		cmocka_unit_test(lists_of_any_text),
		cmocka_unit_test(list_errors),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(extend_default),
	};
	return cmocka_run_group_tests_name("pattern", tests, NULL, NULL);
}
