#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <malloc.h>
#include <cmocka.h>
#include "common/alloc.h"

static void grow_is_geometric_and_keeps_content(void **state)
{
	int *a = NULL;
	size_t alloc = 0, i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		assert_int_equal(HS_GROW(a, i + 1, alloc), 0);
		a[i] = (int)i;
	}
	assert_true(alloc >= 1000 && alloc < 2000);
	for (i = 0; i < 1000; i++)
		assert_int_equal(a[i], (int)i);
	hs_free(a);
}

static void grow_failure_keeps_old_array(void **state)
{
	int *a = NULL;
	size_t alloc = 0;

	(void)state;
	assert_int_equal(HS_GROW(a, 10, alloc), 0);
	a[9] = 42;
	hs_alloc_fail_after(0);
	assert_int_equal(HS_GROW(a, 100, alloc), -ENOMEM);
	hs_alloc_fail_after(-1);
	assert_int_equal(alloc, 16);
	assert_int_equal(a[9], 42);
	hs_free(a);
}

static void grow_rejects_overflow(void **state)
{
	char *a = NULL;
	size_t alloc = 0;

	(void)state;
	assert_null(hs_grow(a, 16, SIZE_MAX / 2, &alloc));
	assert_int_equal(alloc, 0);
}

/*
 * A mapping grows keeping its bytes, the new ones zero, and a failed
 * growth (injected) leaves it as it was.
 */
static void map_grows_keeping_content(void **state)
{
	size_t small = (size_t)4 << 20, big = (size_t)16 << 20, i;
	unsigned char *p = hs_map_zeroed(small), *q;

	(void)state;
	assert_non_null(p);
	for (i = 0; i < small; i += 4093)
		assert_int_equal(p[i], 0);
	for (i = 0; i < small; i += 4093)
		p[i] = (unsigned char)(i % 251 + 1);
	hs_alloc_fail_after(0);
	assert_null(hs_map_grow(p, small, big));
	assert_null(hs_map_zeroed(small));
	hs_alloc_fail_after(-1);
	assert_int_equal(p[4093], 4093 % 251 + 1);
	q = hs_map_grow(p, small, big);
	assert_non_null(q);
	for (i = 0; i < small; i += 4093)
		assert_int_equal(q[i], i % 251 + 1);
	for (i = small; i < big; i += 4093)
		assert_int_equal(q[i], 0);
	assert_null(hs_map_grow(q, big, small));
	/* a shrink that cannot cut keeps the mapping whole, its tail zero */
	hs_map_shrink_fail(1);
	assert_int_equal(hs_map_shrink(q, big, small), big);
	hs_map_shrink_fail(0);
	for (i = 0; i < small; i += 4093)
		assert_int_equal(q[i], i % 251 + 1);
	for (i = small; i < big; i += 4093)
		assert_int_equal(q[i], 0);
	assert_int_equal(hs_map_shrink(q, big, small), small);
	hs_map_free(q, small);
}

/*
 * hs_alloc_map_large(): a block of HS_MAP_LARGE bytes or more is a
 * mapping of its own even after a larger mapped block was freed (which
 * raises glibc's own threshold past it)
 */
static void large_blocks_stay_mapped(void **state)
{
	size_t before;
	char *big, *p;

	(void)state;
	if (hs_alloc_map_large())
		skip(); /* (another allocator: a sanitizer's) */
	big = hs_malloc(8 * HS_MAP_LARGE);
	assert_non_null(big);
	memset(big, 1, 8 * HS_MAP_LARGE);
	hs_free(big);
	before = mallinfo2().hblkhd;
	p = hs_malloc(2 * HS_MAP_LARGE);
	assert_non_null(p);
	assert_true(mallinfo2().hblkhd >= before + 2 * HS_MAP_LARGE);
	hs_free(p);
	assert_int_equal(mallinfo2().hblkhd, before);
}

static void strdup_copies(void **state)
{
	char *s = hs_strndup("heapscope", 4);

	(void)state;
	assert_string_equal(s, "heap");
	hs_free(s);
	s = hs_strdup("");
	assert_string_equal(s, "");
	hs_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grow_is_geometric_and_keeps_content),
		cmocka_unit_test(grow_failure_keeps_old_array),
		cmocka_unit_test(grow_rejects_overflow),
		cmocka_unit_test(map_grows_keeping_content),
		cmocka_unit_test(large_blocks_stay_mapped),
		cmocka_unit_test(strdup_copies),
	};
	return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
