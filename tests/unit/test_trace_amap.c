/*
 * Tests of the address map of format/ (format/trace_amap.h): put, replace,
 * delete with backward shifts across a wrap, growth, out of memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "format/trace_amap.h"

static void put_replace_delete(void **state)
{
	struct hs_amap m = { 0 };
	uint64_t old;

	(void)state;
	assert_false(hs_amap_has(&m, 0x10));
	assert_true(hs_amap_del(&m, 0x10) == UINT64_MAX);	/* empty, no table */
	assert_int_equal(hs_amap_put(&m, 0x10, 5, &old), 0);
	assert_true(old == UINT64_MAX);
	assert_int_equal(hs_amap_put(&m, 0x10, 7, &old), 0);
	assert_true(old == 5);
	assert_int_equal(m.n, 1);
	assert_true(hs_amap_has(&m, 0x10));
	assert_true(hs_amap_del(&m, 0x10) == 7);
	assert_false(hs_amap_has(&m, 0x10));
	assert_true(hs_amap_del(&m, 0x10) == UINT64_MAX);
	assert_int_equal(m.n, 0);
	hs_amap_release(&m);
	assert_null(m.key);
}

/* Many keys: every one is found until deleted, whatever was deleted before it. */
static void many_keys_survive_deletions(void **state)
{
	struct hs_amap m = { 0 };
	uint64_t old, k;
	const uint64_t n = 20000;

	(void)state;
	for (k = 1; k <= n; k++)
		assert_int_equal(hs_amap_put(&m, k * 16, k, &old), 0);
	assert_int_equal(m.n, n);
	/* delete every third; the others stay reachable past the holes */
	for (k = 3; k <= n; k += 3)
		assert_true(hs_amap_del(&m, k * 16) == k);
	for (k = 1; k <= n; k++) {
		assert_int_equal(hs_amap_has(&m, k * 16), k % 3 != 0);
		if (k % 3)
			assert_true(hs_amap_del(&m, k * 16) == k);
	}
	assert_int_equal(m.n, 0);
	hs_amap_release(&m);
}

static void out_of_memory_leaves_the_map(void **state)
{
	struct hs_amap m = { 0 };
	uint64_t old, k;
	long fail;
	int err;

	(void)state;
	for (fail = 0; fail < 4; fail++) {
		for (k = 1; k <= 512; k++)
			assert_int_equal(hs_amap_put(&m, k, k, &old), 0);
		/* the 513th key makes the table grow (1024 slots, at most half full) */
		hs_alloc_fail_after(fail);
		err = hs_amap_put(&m, 513, 513, &old);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(m.n, 512);
		assert_false(hs_amap_has(&m, 513));
		for (k = 1; k <= 512; k++)
			assert_true(hs_amap_has(&m, k));
		hs_amap_release(&m);
	}
	assert_true(fail > 0);
	assert_true(hs_amap_has(&m, 513) && hs_amap_has(&m, 1));
	hs_amap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(put_replace_delete),
		cmocka_unit_test(many_keys_survive_deletions),
		cmocka_unit_test(out_of_memory_leaves_the_map),
	};
	return cmocka_run_group_tests_name("trace_amap", tests, NULL, NULL);
}
