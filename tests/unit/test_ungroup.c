/*
 * test_ungroup - Ungroup of a template's group or an entry group
 * (analysis/ungroup.h): the GroupPats it makes take out exactly the row's
 * frames, by the most readable candidate that is exact on the source.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/ungroup.h"
#include "testutil.h"

#define CLASSES "[group classes] {%!*}.%(->class $1;{%!*}::->class $1"
#define MODULES "[group modules] {%}!->module $1"

/* @fn (hs_ungroup() or hs_ungroup_module()) of @what: its GroupPats (a
 * static buffer), or NULL on error (*@err). */
static const char *
answer(int (*fn)(const struct hs_stack_source *, const char *, const char *,
		 struct hs_buf *, struct hs_diag *),
       const struct hs_stack_source *src, const char *group, const char *what, int *err)
{
	static char text[4096];
	struct hs_buf out = HS_BUF_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);

	*err = fn(src, group, what, &out, &d);
	if (*err) {
		hs_buf_release(&out);
		return NULL;
	}
	assert_true(out.len < sizeof(text));
	memcpy(text, out.s, out.len + 1);
	hs_buf_release(&out);
	return text;
}

static const char *ungroup(const struct hs_stack_source *src, const char *group,
			   const char *name, int *err)
{
	return answer(hs_ungroup, src, group, name, err);
}

static const char *ungroup_module(const struct hs_stack_source *src, const char *group,
				  const char *module, int *err)
{
	return answer(hs_ungroup_module, src, group, module, err);
}

static void classes(void **state)
{
	struct hs_stack_source src;
	int err;

	(void)state;
	hs_source_init(&src);
	tu_sample(&src, 0, 5, 5, "app!main;/usr/lib/libfoo.so!Foo::bar;/usr/lib/libfoo.so!Baz::qux");
	tu_sample(&src, 0, 3, 3, "app!main;/usr/lib/libfoo.so!Foo::zap");
	tu_sample(&src, 0, 2, 2, "app!main;other.so!Foo::x");
	/* the class's module also has another class: "libfoo.so!->" would take it too */
	assert_string_equal(ungroup(&src, CLASSES, "class libfoo.so!Foo", &err),
			    "[group classes] libfoo.so!Foo::->;{%!*}.%(->class $1;{%!*}::->class $1");
	/* a nested class (its own group) stops the shared start: each name, whole */
	tu_sample(&src, 0, 4, 4, "app!main;/usr/lib/libfoo.so!Foo::Inner::deep");
	assert_string_equal(ungroup(&src, CLASSES, "class libfoo.so!Foo", &err),
			    "[group classes] @(?:^|/)(?:libfoo\\.so!Foo::bar|libfoo\\.so!Foo::zap)$->;"
			    "{%!*}.%(->class $1;{%!*}::->class $1");
	assert_string_equal(ungroup(&src, CLASSES, "class libfoo.so!Foo::Inner", &err),
			    "[group classes] libfoo.so!Foo::Inner::deep->;"
			    "{%!*}.%(->class $1;{%!*}::->class $1");
	/* no frame is in such a row */
	assert_null(ungroup(&src, CLASSES, "class nothing", &err));
	assert_int_equal(err, -ENOENT);
	assert_null(ungroup(&src, CLASSES, "app!main", &err));
	assert_int_equal(err, -ENOENT);
	hs_source_release(&src);
}

static void modules(void **state)
{
	struct hs_stack_source src;
	int err;

	(void)state;
	hs_source_init(&src);
	tu_sample(&src, 0, 1, 1, "app!main;/usr/lib/libc.so.6!malloc");
	tu_sample(&src, 0, 1, 1, "app!main;/usr/lib/libc.so.6!free");
	assert_string_equal(ungroup(&src, MODULES, "module libc.so.6", &err),
			    "[group modules] libc.so.6!->;{%}!->module $1");
	/* without a description, before the entries */
	assert_string_equal(ungroup(&src, "{%}!->module $1", "module app", &err),
			    "app!->;{%}!->module $1");
	/* another module whose name ends in the same text: anchored where names start */
	tu_sample(&src, 0, 1, 1, "app!main;/opt/xlibc.so.6!malloc");
	assert_string_equal(ungroup(&src, MODULES, "module libc.so.6", &err),
			    "[group modules] @(?:^|/)libc\\.so\\.6!->;{%}!->module $1");
	/* a bad GroupPats is an error, not an answer */
	assert_null(ungroup(&src, "{%->x", "x", &err));
	assert_int_equal(err, -EINVAL);
	hs_source_release(&src);
}

static void entries(void **state)
{
	struct hs_stack_source src;
	int err;

	(void)state;
	hs_source_init(&src);
	tu_sample(&src, 0, 3, 3, "app!main;mscorlib!Foo;mscorlib!inner");
	tu_sample(&src, 0, 1, 1, "app!main;System.Xml!Load");
	/* the entry frame's own name, as PerfView's Ungroup puts it */
	assert_string_equal(ungroup(&src, "mscorlib!=>LIB;System%!=>LIB;", "LIB <<mscorlib!Foo>>", &err),
			    "mscorlib!Foo->;mscorlib!=>LIB;System%!=>LIB;");
	/* another entry whose name starts the same: that name, whole */
	tu_sample(&src, 0, 2, 2, "app!main;mscorlib!FooBar");
	assert_string_equal(ungroup(&src, "mscorlib!=>LIB;System%!=>LIB;", "LIB <<mscorlib!Foo>>", &err),
			    "@(?:^|/)(?:mscorlib!Foo)$->;mscorlib!=>LIB;System%!=>LIB;");
	/* names with a pattern's characters and arrows match only themselves */
	tu_sample(&src, 0, 1, 1, "app!main;m!a->b;m!c%d");
	assert_string_equal(ungroup(&src, "m!=>M", "M <<m!a->b>>", &err),
			    "@m!a\\-\\>b->;m!=>M");
	hs_source_release(&src);
}

/* Ungroup Module: every grouped frame of the module, whatever its group. */
static void module(void **state)
{
	struct hs_stack_source src;
	int err;

	(void)state;
	hs_source_init(&src);
	tu_sample(&src, 0, 5, 5, "app!main;/usr/lib/libfoo.so!Foo::bar;/usr/lib/libfoo.so!Baz::qux");
	tu_sample(&src, 0, 1, 1, "app!main;/usr/lib/libc.so.6!malloc");
	/* the classes of one module, all of them */
	assert_string_equal(ungroup_module(&src, CLASSES, "libfoo.so", &err),
			    "[group classes] libfoo.so!->;{%!*}.%(->class $1;{%!*}::->class $1");
	/* a module no frame of which is grouped: "mod!->" all the same */
	assert_string_equal(ungroup_module(&src, "libc.so.6!=>libc", "app", &err),
			    "app!->;libc.so.6!=>libc");
	/* another module whose name ends in it stays grouped */
	tu_sample(&src, 0, 1, 1, "app!main;/opt/xlibc.so.6!malloc");
	assert_string_equal(ungroup_module(&src, MODULES, "libc.so.6", &err),
			    "[group modules] @(?:^|/)libc\\.so\\.6!->;{%}!->module $1");
	hs_source_release(&src);
}

/* A frame GroupPats cannot leave ungrouped (an address: its own group) has no answer. */
static void no_exact(void **state)
{
	struct hs_stack_source src;
	int err;

	(void)state;
	hs_source_init(&src);
	tu_sample(&src, 0, 1, 1, "app!main;lib.so!?");
	assert_null(ungroup(&src, "", "lib.so!?", &err));
	assert_int_equal(err, -EINVAL);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(classes),
	    cmocka_unit_test(modules),
	    cmocka_unit_test(entries),
	    cmocka_unit_test(module),
	    cmocka_unit_test(no_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
