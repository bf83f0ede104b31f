/*
 * symtest_inline.h - always-inlined helpers for libsymtest (see symtest.c).
 * The MARK comments are read by tests/unit/test_symbols.c to learn the
 * expected line numbers; keep each on the line of the call it names.
 */
#ifndef HS_SYMTEST_INLINE_H
#define HS_SYMTEST_INLINE_H

int hs_symtest_leaf(int x);

static inline __attribute__((always_inline)) int symtest_deep(int x)
{
	return hs_symtest_leaf(x + 7) * 2; /* MARK:deep_call */
}

static inline __attribute__((always_inline)) int symtest_middle(int x)
{
	int r = symtest_deep(x ^ 5); /* MARK:middle_call */

	return r - 1;
}
#endif
