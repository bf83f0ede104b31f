/* Unit tests of model/frame_name: the one "module!function" splitter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "model/frame_name.h"
#include "model/stack_source.h"

/* Split @name and check its module (NULL: none) and function. */
static void check(const char *name, const char *module, const char *function,
		  int inlined)
{
	struct hs_frame_name f;

	hs_frame_name_split(name, strlen(name), &f);
	if (!module) {
		assert_null(f.module);
		assert_int_equal(f.module_len, 0);
	} else {
		assert_non_null(f.module);
		assert_int_equal(f.module_len, strlen(module));
		assert_memory_equal(f.module, module, f.module_len);
	}
	assert_int_equal(f.function_len, strlen(function));
	assert_memory_equal(f.function, function, f.function_len);
	assert_int_equal(f.inlined, inlined);
}

static void module_and_function(void **state)
{
	(void)state;
	check("libc.so.6!malloc", "libc.so.6", "malloc", 0);
	check("/usr/lib/libc.so.6!malloc", "/usr/lib/libc.so.6", "malloc", 0);
	check("[kernel.kallsyms]!do_syscall_64", "[kernel.kallsyms]", "do_syscall_64", 0);
	check("libc.so.6!?", "libc.so.6", "?", 0);
	check("python3.11!_PyEval_EvalFrameDefault (inline)", "python3.11",
	      "_PyEval_EvalFrameDefault", 1);
}

static void names_without_a_module(void **state)
{
	(void)state;
	check("main", NULL, "main", 0);
	check("", NULL, "", 0);
	check("!main", NULL, "!main", 0);	/* an empty module is none */
	check("Process hotloop (11214)", NULL, "Process hotloop (11214)", 0);
	check("f (inline)", NULL, "f", 1);
	check(" (inline)", NULL, " (inline)", 0);	/* only a suffix */
}

static void cpp_operators(void **state)
{
	(void)state;
	check("Foo::operator!=(Foo const&) const", NULL, "Foo::operator!=(Foo const&) const", 0);
	check("operator!", NULL, "operator!", 0);
	check("operator !", NULL, "operator !", 0);
	check("operator!==", NULL, "operator!==", 0);
	check("ns::operator!<int>(int)", NULL, "ns::operator!<int>(int)", 0);
	/* the module's '!' comes first, the operator's stays in the function */
	check("libfoo.so!Foo::operator!=(Foo const&)", "libfoo.so",
	      "Foo::operator!=(Foo const&)", 0);
	check("libfoo.so!operator!", "libfoo.so", "operator!", 0);
	/* "operator" must be a whole word */
	check("myoperator!f", "myoperator", "f", 0);
	check("libfoo.so!Foo::operator!= (inline)", "libfoo.so", "Foo::operator!=", 1);
}

static void bangs_in_brackets(void **state)
{
	(void)state;
	check("std::enable_if<!std::is_same<A, B>::value, void>::type f()", NULL,
	      "std::enable_if<!std::is_same<A, B>::value, void>::type f()", 0);
	check("Foo<(!true)>::bar", NULL, "Foo<(!true)>::bar", 0);
	check("lib.so!Foo<(!true)>::bar", "lib.so", "Foo<(!true)>::bar", 0);
	check("/tmp/a (deleted)!f", "/tmp/a (deleted)", "f", 0);
	/* "operator>" closes nothing: the depth never goes below zero */
	check("A::operator>()!", "A::operator>()", "", 0);
}

static void bang_and_short_module(void **state)
{
	const char *n = "/usr/lib/x86_64-linux-gnu/libc.so.6!malloc";
	size_t len;
	const char *m = hs_frame_name_short_module(n, strlen(n), &len);

	(void)state;
	assert_ptr_equal(hs_frame_name_bang(n, strlen(n)), strchr(n, '!'));
	assert_int_equal(len, strlen("libc.so.6"));
	assert_memory_equal(m, "libc.so.6", len);
	assert_null(hs_frame_name_short_module("operator!=", 10, &len));
	assert_int_equal(len, 0);
	/* the length bounds the name: no separator past it */
	assert_null(hs_frame_name_bang("libc.so.6!malloc", 9));
	/* the display name of the model goes through the splitter */
	assert_string_equal(hs_frame_display(n), "libc.so.6!malloc");
	assert_string_equal(hs_frame_display("a/b::operator!=(x/y)"), "a/b::operator!=(x/y)");
	assert_string_equal(hs_frame_display("C:\\bin\\x.dll!f"), "x.dll!f");
	assert_int_equal(hs_frame_name_strip_inline("f (inline)", 10), 1);
	assert_int_equal(hs_frame_name_strip_inline("f", 1), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(module_and_function),
		cmocka_unit_test(names_without_a_module),
		cmocka_unit_test(cpp_operators),
		cmocka_unit_test(bangs_in_brackets),
		cmocka_unit_test(bang_and_short_module),
	};
	return cmocka_run_group_tests_name("frame_name", tests, NULL, NULL);
}
