#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/group.h"
#include "common/alloc.h"
#include "testutil.h"

static void parsing(void **state)
{
	struct hs_groups g = HS_GROUPS_INIT;

	(void)state;
	assert_int_equal(hs_groups_parse(&g, "  [my groups]  a->b ; c=>d;e;; f -> g  ",
					 NULL), 0);
	assert_int_equal(g.nr, 4);
	assert_string_equal(hs_pattern_text(g.pat[0].pat), "a");
	assert_string_equal(g.pat[0].tmpl, "b");
	assert_false(g.pat[0].entry);
	assert_string_equal(hs_pattern_text(g.pat[1].pat), "c");
	assert_string_equal(g.pat[1].tmpl, "d");
	assert_true(g.pat[1].entry);
	assert_string_equal(hs_pattern_text(g.pat[2].pat), "e");
	assert_string_equal(g.pat[2].tmpl, "$&");
	assert_false(g.pat[2].entry);
	/* the text before the arrow is not trimmed */
	assert_string_equal(hs_pattern_text(g.pat[3].pat), "f ");
	assert_string_equal(g.pat[3].tmpl, "g");
	hs_groups_release(&g);

	/* "=>" is looked for before "->" */
	assert_int_equal(hs_groups_parse(&g, "a->b=>c", NULL), 0);
	assert_int_equal(g.nr, 1);
	assert_string_equal(hs_pattern_text(g.pat[0].pat), "a->b");
	assert_string_equal(g.pat[0].tmpl, "c");
	assert_true(g.pat[0].entry);
	hs_groups_release(&g);

	/* only a leading [..] is a comment; an unclosed one is a pattern */
	assert_int_equal(hs_groups_parse(&g, "[x", NULL), 0);
	assert_int_equal(g.nr, 1);
	assert_string_equal(hs_pattern_text(g.pat[0].pat), "[x");
	hs_groups_release(&g);
	assert_int_equal(hs_groups_parse(&g, "[only a comment]", NULL), 0);
	assert_int_equal(g.nr, 0);
	hs_groups_release(&g);
	assert_int_equal(hs_groups_parse(&g, NULL, NULL), 0);
	assert_int_equal(g.nr, 0);
	hs_groups_release(&g);
}

static void bad_group_pattern(void **state)
{
	struct hs_groups g = HS_GROUPS_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);

	(void)state;
	assert_int_equal(hs_groups_parse(&g, "ok->x;{bad->y", &d), -EINVAL);
	assert_int_equal(g.nr, 0);
	assert_non_null(strstr(d.msg, "GroupPats: bad pattern '{bad'"));
	hs_groups_release(&g);
}

static void trailing_space_of_pattern(void **state)
{
	(void)state;
	assert_group("foo -> bar", "foobar", HS_GROUP_NONE, "");
	assert_group("foo -> bar", "a foo x", HS_GROUP_PLAIN, "bar");
	assert_group("Thread -> AllThreads", "Thread (12) worker", HS_GROUP_PLAIN,
		     "AllThreads");
}

static void templates(void **state)
{
	const char *f = "/usr/lib/libc.so.6!malloc";

	(void)state;
	assert_group("{%}!{*}->$2 in $1", f, HS_GROUP_PLAIN, "malloc in libc.so.6");
	assert_group("lib%!->$&", f, HS_GROUP_PLAIN, "libc.so.6!");
	assert_group("{lib}c->[$1|$&]", f, HS_GROUP_PLAIN, "[lib|libc]");
	/* $0 is the whole match, a missing capture is empty */
	assert_group("{lib}c->$0/$5/$1", f, HS_GROUP_PLAIN, "libc//lib");
	/* no arrow: the whole match */
	assert_group("libc%!", f, HS_GROUP_PLAIN, "libc.so.6!");
	/* a template without '$' is used as it is */
	assert_group("malloc->ALLOC", f, HS_GROUP_PLAIN, "ALLOC");
	/* a '$' not followed by a digit or '&' stays */
	assert_group("malloc->$x$", f, HS_GROUP_PLAIN, "$x$");
	/* "$&" is replaced after the captures, also inside them */
	assert_group("{x}->$1&", "x", HS_GROUP_PLAIN, "x&");
	assert_group("{$}->$1&", "a$b", HS_GROUP_PLAIN, "$");
}

static void rename_chains(void **state)
{
	(void)state;
	/* "->" renames and matching goes on with the new name */
	assert_group("a->b;b->c", "xa", HS_GROUP_PLAIN, "c");
	assert_group("a->X;X->Y;Y->Z", "a", HS_GROUP_PLAIN, "Z");
	assert_group("a->b;zzz->q", "a", HS_GROUP_PLAIN, "b");
	/* the later pattern sees the renamed string, not the frame */
	assert_group("lib->L;libc->C", "libc!f", HS_GROUP_PLAIN, "L");
	assert_group("{*}->renamed $1;renamed->R2", "f", HS_GROUP_PLAIN, "R2");
	/* a rename followed by an entry group gives the entry group */
	assert_group("a->E;E=>F", "a", HS_GROUP_ENTRY, "F");
}

static void entry_stops(void **state)
{
	(void)state;
	assert_group("a=>E;E->Z", "a", HS_GROUP_ENTRY, "E");
	assert_group("a=>E;a->Z", "a", HS_GROUP_ENTRY, "E");
	assert_group("b=>E;a->Z", "a", HS_GROUP_PLAIN, "Z");
}

static void exclusion_group(void **state)
{
	const char *ex = "myDir/*!->;{%}!->module $1";

	(void)state;
	assert_group(ex, "/home/me/myDir/app!main", HS_GROUP_NONE, "");
	assert_group(ex, "/usr/lib/libc.so.6!malloc", HS_GROUP_PLAIN, "module libc.so.6");
	/* an empty name stops even after renames */
	assert_group("a->b;b->", "a", HS_GROUP_NONE, "");
	/* ... and later patterns are not looked at */
	assert_group("a->;a->Z", "a", HS_GROUP_NONE, "");
	/* an empty capture gives an empty name too */
	assert_group("^{%}y->$1;y->Z", "y", HS_GROUP_NONE, "");
	assert_group("^{%}y->$1;y->Z", "ay", HS_GROUP_PLAIN, "a");
}

static void module_entry_fast_path(void **state)
{
	const char *fast = "{%}!=>module $1";
	/* same meaning, through PCRE2: the file name before the first '!' */
	const char *slow = "@([^/\\\\!]*)!=> module $1";
	const char *names[] = {
		"/usr/lib/libc.so.6!malloc", "app!main", "/a/b-c.so!f",
		"x!y!z", "Thread (1) main",
	};
	size_t i;

	(void)state;
	assert_group(fast, "/usr/lib/libc.so.6!malloc", HS_GROUP_ENTRY,
		     "module libc.so.6");
	/* a Linux file name whole, '-' and '+' that '%' does not take included */
	assert_group(fast, "/a/my-lib.so!f", HS_GROUP_ENTRY, "module my-lib.so");
	assert_group(fast, "/lib64/ld-linux-x86-64.so.2!_dl_start", HS_GROUP_ENTRY,
		     "module ld-linux-x86-64.so.2");
	assert_group(fast, "/usr/lib/libstdc++.so.6!operator new(unsigned long)",
		     HS_GROUP_ENTRY, "module libstdc++.so.6");
	assert_group(fast, "/py/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so!scanstring",
		     HS_GROUP_ENTRY, "module _json.cpython-311-x86_64-linux-gnu.so");
	assert_group(fast, "Thread (1) main", HS_GROUP_NONE, "");
	assert_group(fast, "!x", HS_GROUP_NONE, "");
	/* an empty module run still makes a group ("module ") */
	assert_group(fast, "/a/!f", HS_GROUP_ENTRY, "module ");
	/* the whole file name, '?' too */
	assert_group(fast, "a?b!f", HS_GROUP_ENTRY, "module a?b");
	assert_group(slow, "a?b!f", HS_GROUP_ENTRY, "module a?b");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char a[256], b[256];

		assert_int_equal(tu_group(fast, names[i], a),
				 tu_group(slow, names[i], b));
		assert_string_equal(a, b);
	}
	/* an operator's '!' is not a module's (model/frame_name.h) */
	assert_group(fast, "Foo::operator!=(Foo const&)", HS_GROUP_NONE, "");
	assert_group(fast, "operator!", HS_GROUP_NONE, "");
	assert_group(fast, "/a/libx.so!Foo::operator!=(Foo const&)", HS_GROUP_ENTRY,
		     "module libx.so");
	/* it sees an earlier rename, and skips names without '!' */
	assert_group("x->y!z;{%}!=>module $1", "x", HS_GROUP_ENTRY, "module y");
	assert_group("x->Q;{%}!=>module $1", "x", HS_GROUP_PLAIN, "Q");
}

static void module_group_fast_path(void **state)
{
	const char *fast = "{%}!->module $1";
	/* same meaning, through PCRE2: the file name before the first '!' */
	const char *slow = "@([^/\\\\!]*)!-> module $1";
	const char *names[] = {
		"/usr/lib/libc.so.6!malloc", "app!main", "/a/b-c.so!f",
		"x!y!z", "Thread (1) main",
	};
	size_t i;

	(void)state;
	assert_group(fast, "/usr/lib/libc.so.6!malloc", HS_GROUP_PLAIN, "module libc.so.6");
	assert_group(fast, "Thread (1) main", HS_GROUP_NONE, "");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char a[256], b[256];

		assert_int_equal(tu_group(fast, names[i], a),
				 tu_group(slow, names[i], b));
		assert_string_equal(a, b);
	}
	/* a rename: later patterns see the group's name */
	assert_group("{%}!->module $1;module libc.so.6->LIBC", "/lib/libc.so.6!free",
		     HS_GROUP_PLAIN, "LIBC");
	assert_group("{%}!->module $1;module libc.so.6=>E", "/lib/libc.so.6!free",
		     HS_GROUP_ENTRY, "E");
	/* the two module presets agree on operators */
	assert_group(fast, "Foo::operator!=(Foo const&)", HS_GROUP_NONE, "");
	assert_group(fast, "/a/libx.so!Foo::operator!=(Foo const&)", HS_GROUP_PLAIN,
		     "module libx.so");
}

/*
 * A diff's "^Process% {%}->$1" (Ignore PID/TID) names a process frame by
 * its whole command: "demo-heap", not "demo" (where '%' stops at the '-',
 * which would merge "demo-heap" and "demo-cache"); elsewhere as PCRE2 does.
 */
static void process_name_fast_path(void **state)
{
	const char *fast = "^Process% {%}->$1";
	const char *slow = "^Process% {%}-> $1"; /* the same, through PCRE2 */
	const char *names[] = {
	    "Process app (1)", "Process32 app (1)", "process a.b?c (2)", "Process app",
	    "Process  (1)",    "Process (1)",	    "Processx (1)",	 "Thread (1) main",
	    "x Process a (1)", "/bin/app!main",	    "Process a (1) x",
	};
	size_t i;

	(void)state;
	assert_group(fast, "Process demo-heap (1)", HS_GROUP_PLAIN, "demo-heap");
	assert_group(slow, "Process demo-heap (1)", HS_GROUP_PLAIN, "demo");
	assert_group(fast, "Process my app (x) (12)", HS_GROUP_PLAIN, "my app (x)");
	assert_group(fast, "Process app (1)", HS_GROUP_PLAIN, "app");
	assert_group(fast, "Process  (1)", HS_GROUP_NONE, "");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char a[256], b[256];

		assert_int_equal(tu_group(fast, names[i], a), tu_group(slow, names[i], b));
		assert_string_equal(a, b);
	}
	/* it renames: the following patterns see the command */
	assert_group("^Process% {%}->$1;^Thread->Thread;demo-heap->D", "Process demo-heap (7)",
		     HS_GROUP_PLAIN, "D");
}

static void unresolved_frames(void **state)
{
	(void)state;
	assert_group("", "/usr/lib/libx.so!?", HS_GROUP_PLAIN, "libx.so!?");
	assert_group(NULL, "libx.so!?", HS_GROUP_PLAIN, "libx.so!?");
	/* an exclusion group does not stop it */
	assert_group("libx->", "/usr/lib/libx.so!?", HS_GROUP_PLAIN, "libx.so!?");
	/* a pattern that groups it wins */
	assert_group("{%}!=>module $1", "/usr/lib/libx.so!?", HS_GROUP_ENTRY,
		     "module libx.so");
	/* only a name that ends in "!?" */
	assert_group("", "/usr/lib/libx.so!?x", HS_GROUP_NONE, "");
	assert_group("", "?", HS_GROUP_NONE, "");
}

static void match_limit_is_an_error(void **state)
{
	struct hs_groups g = HS_GROUPS_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_buf out = HS_BUF_INIT;
	char s[65];

	(void)state;
	memset(s, 'a', sizeof(s));
	s[63] = '!';
	s[64] = 0;
	assert_int_equal(hs_groups_parse(&g, "@^(a|aa)+$->x", NULL), 0);
	assert_int_equal(hs_groups_match(&g, s, &out, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "GroupPats: pattern '@^(a|aa)+$' is too complex"));
	hs_buf_release(&out);
	hs_groups_release(&g);
}

static void out_of_memory(void **state)
{
	long n;
	int rc = -ENOMEM;

	(void)state;
	for (n = 0; rc == -ENOMEM; n++) {
		struct hs_groups g = HS_GROUPS_INIT;
		struct hs_buf out = HS_BUF_INIT;

		hs_alloc_fail_after(n);
		rc = hs_groups_parse(&g, "[x] a->b;b->c;{%}!=>module $1", NULL);
		if (!rc)
			rc = hs_groups_match(&g, "/l/a!f", &out, NULL);
		hs_alloc_fail_after(-1);
		assert_true(rc == HS_GROUP_PLAIN || rc == -ENOMEM);
		if (rc >= 0)
			assert_string_equal(out.s, "c");
		hs_buf_release(&out);
		hs_groups_release(&g);
	}
	assert_true(n > 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parsing),
		cmocka_unit_test(bad_group_pattern),
		cmocka_unit_test(trailing_space_of_pattern),
		cmocka_unit_test(templates),
		cmocka_unit_test(rename_chains),
		cmocka_unit_test(entry_stops),
		cmocka_unit_test(exclusion_group),
		cmocka_unit_test(module_entry_fast_path),
		cmocka_unit_test(module_group_fast_path),
		cmocka_unit_test(process_name_fast_path),
		cmocka_unit_test(unresolved_frames),
		cmocka_unit_test(match_limit_is_an_error),
		cmocka_unit_test(out_of_memory),
	};
	return cmocka_run_group_tests_name("group", tests, NULL, NULL);
}
