/*
 * test_u64map - the u64 -> u64 map: puts and replacements, key 0 kept
 * aside, growth, deletion by backward shift through colliding runs (also
 * around the end of the array), iteration, and a fault-injection sweep.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "common/u64map.h"

/* Every entry of the array sits in the run from its home: no gap. */
static void check_runs(const struct hs_u64map *m)
{
	size_t i, j, n = 0;

	assert_true(m->cap == 0 || (m->cap & (m->cap - 1)) == 0);
	assert_true(2 * m->nr <= m->cap);
	for (i = 0; i < m->cap; i++) {
		if (!m->slot[i].key)
			continue;
		n++;
		j = (size_t)hs_hash_u64(m->slot[i].key) & (m->cap - 1);
		for (; j != i; j = (j + 1) & (m->cap - 1))
			assert_int_not_equal(m->slot[j].key, 0);
	}
	assert_int_equal(n, m->nr);
}

static void empty_map_finds_nothing(void **state)
{
	struct hs_u64map m = HS_U64MAP_INIT;
	uint64_t v = 7;

	(void)state;
	assert_int_equal(hs_u64map_get(&m, 1, &v), 0);
	assert_int_equal(hs_u64map_get(&m, 0, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(hs_u64map_del(&m, 1, &v), 0);
	assert_int_equal(hs_u64map_del(&m, 0, NULL), 0);
	assert_int_equal(hs_u64map_count(&m), 0);
	assert_int_equal(hs_u64map_memory(&m), 0);
	hs_u64map_release(&m);
}

static void put_replaces_and_reports_the_old_value(void **state)
{
	struct hs_u64map m = HS_U64MAP_INIT;
	uint64_t v = 0;

	(void)state;
	assert_int_equal(hs_u64map_put(&m, 42, 1, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(hs_u64map_put(&m, 42, 2, &v), 1);
	assert_int_equal(v, 1);
	assert_int_equal(hs_u64map_put(&m, 42, 3, NULL), 1);
	assert_int_equal(hs_u64map_get(&m, 42, &v), 1);
	assert_int_equal(v, 3);
	assert_true(hs_u64map_has(&m, 42));
	assert_false(hs_u64map_has(&m, 43));
	assert_int_equal(hs_u64map_count(&m), 1);
	hs_u64map_release(&m);
	assert_int_equal(hs_u64map_count(&m), 0);
	assert_false(hs_u64map_has(&m, 42));
}

static void ref_adds_once_and_changes_in_place(void **state)
{
	struct hs_u64map m = HS_U64MAP_INIT;
	uint64_t *p, v;
	int added = -1;

	(void)state;
	p = hs_u64map_ref(&m, 9, 100, &added);
	assert_non_null(p);
	assert_int_equal(added, 1);
	assert_int_equal(*p, 100);
	*p += 5;
	p = hs_u64map_ref(&m, 9, 200, &added);
	assert_non_null(p);
	assert_int_equal(added, 0);
	assert_int_equal(*p, 105);
	p = hs_u64map_ref(&m, 0, 300, &added);
	assert_non_null(p);
	assert_int_equal(added, 1);
	*p = 301;
	p = hs_u64map_ref(&m, 0, 400, &added);
	assert_int_equal(added, 0);
	assert_int_equal(*p, 301);
	assert_int_equal(hs_u64map_get(&m, 9, &v), 1);
	assert_int_equal(v, 105);
	assert_int_equal(hs_u64map_count(&m), 2);
	/* a full array fails to grow: NULL, nothing added */
	hs_u64map_release(&m);
	hs_alloc_fail_after(0);
	assert_null(hs_u64map_ref(&m, 9, 1, &added));
	hs_alloc_fail_after(-1);
	assert_int_equal(hs_u64map_count(&m), 0);
	hs_u64map_release(&m);
}

static void key_zero_and_all_ones_are_ordinary_keys(void **state)
{
	struct hs_u64map m = HS_U64MAP_INIT;
	uint64_t v = 0, k;
	size_t pos = 0, seen = 0;

	(void)state;
	assert_int_equal(hs_u64map_put(&m, 0, UINT64_MAX, NULL), 0);
	assert_int_equal(hs_u64map_put(&m, UINT64_MAX, 0, NULL), 0);
	assert_int_equal(hs_u64map_count(&m), 2);
	assert_int_equal(m.nr, 1);	/* key 0 takes no slot */
	assert_int_equal(hs_u64map_get(&m, 0, &v), 1);
	assert_true(v == UINT64_MAX);
	assert_int_equal(hs_u64map_get(&m, UINT64_MAX, &v), 1);
	assert_int_equal(v, 0);
	assert_int_equal(hs_u64map_put(&m, 0, 5, &v), 1);
	assert_true(v == UINT64_MAX);
	while (hs_u64map_next(&m, &pos, &k, &v)) {
		assert_true((k == 0 && v == 5) || (k == UINT64_MAX && v == 0));
		seen++;
	}
	assert_int_equal(seen, 2);
	assert_int_equal(hs_u64map_del(&m, 0, &v), 1);
	assert_int_equal(v, 5);
	assert_int_equal(hs_u64map_del(&m, 0, &v), 0);
	assert_int_equal(hs_u64map_count(&m), 1);
	hs_u64map_release(&m);
}

static void growth_keeps_every_entry(void **state)
{
	struct hs_u64map m = HS_U64MAP_INIT;
	uint64_t i, v;
	size_t cap = 0, grew = 0;

	(void)state;
	for (i = 1; i <= 200000; i++) {
		assert_int_equal(hs_u64map_put(&m, i * 4096, i, NULL), 0);
		if (m.cap != cap) {
			grew++;
			cap = m.cap;
		}
	}
	assert_true(grew > 10);
	assert_int_equal(hs_u64map_count(&m), 200000);
	check_runs(&m);
	for (i = 1; i <= 200000; i++) {
		assert_int_equal(hs_u64map_get(&m, i * 4096, &v), 1);
		assert_int_equal(v, i);
		assert_int_equal(hs_u64map_has(&m, i * 4096 + 1), 0);
	}
	assert_int_equal(hs_u64map_memory(&m), m.cap * 16);
	hs_u64map_release(&m);
}

/* @n keys of home @home in a map of capacity @cap, from @from upwards. */
static size_t same_home(uint64_t *keys, size_t n, size_t cap, size_t home, uint64_t from)
{
	size_t k = 0;

	for (; k < n; from++)
		if (from && ((size_t)hs_hash_u64(from) & (cap - 1)) == home)
			keys[k++] = from;
	return k;
}

static void deletion_shifts_colliding_runs_back(void **state)
{
	struct hs_u64map m = HS_U64MAP_INIT;
	uint64_t a[5], b[3], v;
	size_t i, cap;

	(void)state;
	assert_int_equal(hs_u64map_reserve(&m, 8), 0);
	cap = m.cap;
	assert_int_equal(cap, 16);
	/* a run that wraps: five keys at home cap - 2, three at home 1 */
	same_home(a, 5, cap, cap - 2, 1);
	same_home(b, 3, cap, 1, 1);
	for (i = 0; i < 5; i++)
		assert_int_equal(hs_u64map_put(&m, a[i], i, NULL), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(hs_u64map_put(&m, b[i], 10 + i, NULL), 0);
	assert_int_equal(m.cap, cap);	/* 8 of 16: no growth */
	check_runs(&m);
	/* remove from the middle, the front and across the wrap */
	assert_int_equal(hs_u64map_del(&m, a[1], &v), 1);
	assert_int_equal(v, 1);
	check_runs(&m);
	assert_int_equal(hs_u64map_del(&m, a[0], &v), 1);
	check_runs(&m);
	assert_int_equal(hs_u64map_del(&m, b[0], &v), 1);
	assert_int_equal(v, 10);
	check_runs(&m);
	for (i = 2; i < 5; i++) {
		assert_int_equal(hs_u64map_get(&m, a[i], &v), 1);
		assert_int_equal(v, i);
	}
	for (i = 1; i < 3; i++) {
		assert_int_equal(hs_u64map_get(&m, b[i], &v), 1);
		assert_int_equal(v, 10 + i);
	}
	assert_false(hs_u64map_has(&m, a[0]));
	assert_false(hs_u64map_has(&m, a[1]));
	assert_false(hs_u64map_has(&m, b[0]));
	assert_int_equal(hs_u64map_count(&m), 5);
	hs_u64map_release(&m);
}

/* Random puts and deletes over a small key range against a plain array. */
static void random_operations_match_a_model(void **state)
{
	enum { RANGE = 3000, OPS = 300000 };
	struct hs_u64map m = HS_U64MAP_INIT;
	uint64_t *model = calloc(RANGE, sizeof(*model)), v, k;
	unsigned char *in = calloc(RANGE, 1);
	size_t i, n = 0, pos = 0, seen = 0;
	unsigned r = 12345;

	(void)state;
	assert_non_null(model);
	assert_non_null(in);
	for (i = 0; i < OPS; i++) {
		r = r * 1103515245u + 12345u;
		k = (r >> 8) % RANGE;
		if ((r >> 4) & 1) {
			assert_int_equal(hs_u64map_put(&m, k, i, NULL), in[k]);
			n += !in[k];
			in[k] = 1;
			model[k] = i;
		} else {
			assert_int_equal(hs_u64map_del(&m, k, &v), in[k]);
			if (in[k])
				assert_int_equal(v, model[k]);
			n -= in[k];
			in[k] = 0;
		}
	}
	assert_int_equal(hs_u64map_count(&m), n);
	check_runs(&m);
	for (k = 0; k < RANGE; k++) {
		assert_int_equal(hs_u64map_get(&m, k, &v), in[k]);
		if (in[k])
			assert_int_equal(v, model[k]);
	}
	while (hs_u64map_next(&m, &pos, &k, &v)) {
		assert_true(k < RANGE && in[k] == 1);
		assert_int_equal(v, model[k]);
		in[k] = 2;	/* each key once */
		seen++;
	}
	assert_int_equal(seen, n);
	assert_int_equal(hs_u64map_next(&m, &pos, &k, &v), 0);
	free(model);
	free(in);
	hs_u64map_release(&m);
}

static void clear_keeps_the_array(void **state)
{
	struct hs_u64map m = HS_U64MAP_INIT;
	size_t cap;
	uint64_t i;

	(void)state;
	for (i = 0; i < 100; i++)
		assert_int_equal(hs_u64map_put(&m, i, i, NULL), 0);
	cap = m.cap;
	hs_u64map_clear(&m);
	assert_int_equal(m.cap, cap);
	assert_int_equal(hs_u64map_count(&m), 0);
	for (i = 0; i < 100; i++)
		assert_false(hs_u64map_has(&m, i));
	assert_int_equal(hs_u64map_put(&m, 7, 8, NULL), 0);
	assert_int_equal(hs_u64map_count(&m), 1);
	hs_u64map_release(&m);
}

static void reserve_avoids_growth(void **state)
{
	struct hs_u64map m = HS_U64MAP_INIT;
	uint64_t i;
	size_t cap;

	(void)state;
	assert_int_equal(hs_u64map_reserve(&m, 1000), 0);
	cap = m.cap;
	assert_true(cap >= 2000);
	hs_alloc_fail_after(0);
	for (i = 1; i <= 1000; i++)
		assert_int_equal(hs_u64map_put(&m, i, i, NULL), 0);
	hs_alloc_fail_after(-1);
	assert_int_equal(m.cap, cap);
	assert_int_equal(hs_u64map_reserve(&m, 10), 0);	/* never shrinks */
	assert_int_equal(m.cap, cap);
	assert_int_equal(hs_u64map_reserve(&m, SIZE_MAX / 4), -ENOMEM);
	assert_int_equal(m.cap, cap);
	assert_int_equal(hs_u64map_count(&m), 1000);
	hs_u64map_release(&m);
}

/* Fail each allocation of a run of puts in turn: -ENOMEM, map as before. */
static void allocation_failures_leave_the_map_unchanged(void **state)
{
	struct hs_u64map m;
	uint64_t i, j, v;
	long n;
	int ret, failed;

	(void)state;
	/* 5001 entries take 11 arrays: 16, 32, ... 16384 slots */
	for (n = 0; n < 13; n++) {
		hs_u64map_init(&m);
		failed = 0;
		hs_alloc_fail_after(n);
		for (i = 0; i <= 5000; i++) {
			size_t count = hs_u64map_count(&m);

			ret = hs_u64map_put(&m, i * 3, i, NULL);
			if (ret) {
				assert_int_equal(ret, -ENOMEM);
				assert_int_equal(hs_u64map_count(&m), count);
				check_runs(&m);
				for (j = 0; j < i; j++) {
					assert_int_equal(hs_u64map_get(&m, j * 3, &v), 1);
					assert_int_equal(v, j);
				}
				assert_false(hs_u64map_has(&m, i * 3));
				failed = 1;
				break;
			}
		}
		hs_alloc_fail_after(-1);
		assert_int_equal(failed, n < 11);
		for (; i <= 5000; i++)
			assert_int_equal(hs_u64map_put(&m, i * 3, i, NULL), 0);
		assert_int_equal(hs_u64map_count(&m), 5001);
		hs_u64map_release(&m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_map_finds_nothing),
		cmocka_unit_test(put_replaces_and_reports_the_old_value),
		cmocka_unit_test(ref_adds_once_and_changes_in_place),
		cmocka_unit_test(key_zero_and_all_ones_are_ordinary_keys),
		cmocka_unit_test(growth_keeps_every_entry),
		cmocka_unit_test(deletion_shifts_colliding_runs_back),
		cmocka_unit_test(random_operations_match_a_model),
		cmocka_unit_test(clear_keeps_the_array),
		cmocka_unit_test(reserve_avoids_growth),
		cmocka_unit_test(allocation_failures_leave_the_map_unchanged),
	};
	return cmocka_run_group_tests_name("u64map", tests, NULL, NULL);
}
