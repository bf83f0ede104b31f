/*
 * symtest - a small shared library with known functions, inline frames and
 * lines for the symbolizer's tests (tests/unit/test_symbols.c).
 *
 * hs_symtest_leaf() records its own return address, so after a call to
 * hs_symtest_outer() or hs_symtest_direct() the test knows an address that
 * lies inside inlined code and can check every frame the symbolizer
 * reports. The MARK comments name the lines the test expects.
 */
#include "symtest_inline.h"

void *hs_symtest_last_return;

__attribute__((noinline)) int hs_symtest_leaf(int x)
{
	hs_symtest_last_return = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int hs_symtest_outer(int x)
{
	int y = symtest_middle(x * 3); /* MARK:outer_call */

	return y + 11;
}

__attribute__((noinline)) static int symtest_hidden(int x)
{ /* MARK:hidden_entry */
	int r = hs_symtest_leaf(x - 2); /* MARK:hidden_call */

	return r * 5;
}

__attribute__((noinline)) int hs_symtest_direct(int x)
{
	return symtest_hidden(x) + 3;
}

/* Lets the test find the static function without a symbol lookup. */
void *hs_symtest_hidden_addr(void)
{
	return (void *)symtest_hidden;
}

/* Symbols at one address: the global one with the shorter name names it. */
int hs_symtest_leaf_alias(int x) __attribute__((alias("hs_symtest_leaf")));
int hs_leaf(int x) __attribute__((weak, alias("hs_symtest_leaf")));

/* An assembler label: no type, no size, covers up to the next symbol. */
__asm__(".text\n"
	".globl hs_symtest_asm_label\n"
	"hs_symtest_asm_label:\n"
	"\tnop\n\tnop\n\tnop\n\tret\n"
	".globl hs_symtest_asm_after\n"
	".type hs_symtest_asm_after, @function\n"
	"hs_symtest_asm_after:\n"
	"\tret\n"
	".size hs_symtest_asm_after, 1\n");

#ifdef HS_SYMTEST_OTHER
/* Another build of this file for the build-id mismatch tests. */
int hs_symtest_other_build = 1;
#endif
