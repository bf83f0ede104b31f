/*
 * test_idindex - the id index over caller-owned columns: find-or-add,
 * growth, colliding hashes (all ids on one fingerprint), removal through
 * runs that wrap, replacement, rebuilds with clear + insert, the
 * prefetch guess, and a fault-injection sweep.
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
#include "common/hash.h"
#include "common/idindex.h"

/* The caller's columns: id -> (a, b). */
struct cols {
	uint32_t a[300000], b[300000];
	size_t n;
	size_t eq_calls;
	int weak;		/* hash every key to one value */
};

struct key {
	uint32_t a, b;
};

static int key_eq(const void *ctx, uint32_t id, const void *key)
{
	struct cols *c = (struct cols *)ctx;
	const struct key *k = key;

	c->eq_calls++;
	return c->a[id] == k->a && c->b[id] == k->b;
}

static uint64_t key_hash(const struct cols *c, uint32_t a, uint32_t b)
{
	return c->weak ? 0x1234 : hs_hash_pair(a, b);
}

/* Find-or-add (a, b); the id in *@id. 0 or -ENOMEM. */
static int intern(struct hs_idindex *ix, struct cols *c, uint32_t a, uint32_t b, uint32_t *id)
{
	struct key k = { a, b };
	uint64_t h = key_hash(c, a, b);
	size_t pos;
	int err = hs_idindex_reserve(ix, ix->nr + 1);

	if (err)
		return err;
	pos = hs_idindex_slot(ix, h, key_eq, c, &k);
	*id = hs_idindex_at(ix, pos);
	if (*id == HS_IDINDEX_NONE) {
		*id = (uint32_t)c->n++;
		c->a[*id] = a;
		c->b[*id] = b;
		hs_idindex_set(ix, pos, h, *id);
	}
	return 0;
}

static uint32_t find(const struct hs_idindex *ix, struct cols *c, uint32_t a, uint32_t b)
{
	struct key k = { a, b };

	return hs_idindex_find(ix, key_hash(c, a, b), key_eq, c, &k);
}

/* Every slot sits in the run from its home, and holds a distinct id. */
static void check_runs(const struct hs_idindex *ix)
{
	size_t i, j, n = 0;

	assert_true(ix->cap == 0 || (ix->cap & (ix->cap - 1)) == 0);
	assert_true(2 * ix->nr <= ix->cap);
	for (i = 0; i < ix->cap; i++) {
		if (!ix->slot[i].id1)
			continue;
		n++;
		for (j = ix->slot[i].fp & (ix->cap - 1); j != i; j = (j + 1) & (ix->cap - 1))
			assert_int_not_equal(ix->slot[j].id1, 0);
	}
	assert_int_equal(n, ix->nr);
}

static struct cols *new_cols(int weak)
{
	struct cols *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->weak = weak;
	return c;
}

static void empty_index_finds_nothing(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;
	struct cols *c = new_cols(0);

	(void)state;
	assert_int_equal(find(&ix, c, 1, 2), HS_IDINDEX_NONE);
	assert_int_equal(hs_idindex_remove(&ix, 5, 0), 0);
	assert_int_equal(hs_idindex_memory(&ix), 0);
	assert_int_equal(c->eq_calls, 0);
	hs_idindex_release(&ix);
	free(c);
}

static void equal_keys_share_an_id(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;
	struct cols *c = new_cols(0);
	uint32_t x, y, z;

	(void)state;
	assert_int_equal(intern(&ix, c, 1, 2, &x), 0);
	assert_int_equal(intern(&ix, c, 2, 1, &y), 0);
	assert_int_equal(intern(&ix, c, 1, 2, &z), 0);
	assert_int_equal(x, 0);
	assert_int_equal(y, 1);
	assert_int_equal(z, 0);
	assert_int_equal(ix.nr, 2);
	assert_int_equal(find(&ix, c, 2, 1), 1);
	assert_int_equal(find(&ix, c, 2, 2), HS_IDINDEX_NONE);
	hs_idindex_release(&ix);
	assert_int_equal(find(&ix, c, 1, 2), HS_IDINDEX_NONE);
	free(c);
}

static void growth_keeps_every_id(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;
	struct cols *c = new_cols(0);
	uint32_t i, id;
	size_t cap = 0, grew = 0;

	(void)state;
	for (i = 0; i < 300000; i++) {
		assert_int_equal(intern(&ix, c, i / 7, i % 7, &id), 0);
		assert_int_equal(id, i);
		if (ix.cap != cap) {
			grew++;
			cap = ix.cap;
		}
	}
	assert_true(grew > 10);
	check_runs(&ix);
	c->eq_calls = 0;
	for (i = 0; i < 300000; i++)
		assert_int_equal(find(&ix, c, i / 7, i % 7), i);
	/* the fingerprints spare nearly every needless comparison */
	assert_true(c->eq_calls < 300000 + 300000 / 100);
	assert_int_equal(hs_idindex_memory(&ix), ix.cap * 8);
	hs_idindex_release(&ix);
	free(c);
}

static void one_fingerprint_for_all_still_works(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;
	struct cols *c = new_cols(1);
	uint32_t i, id;

	(void)state;
	for (i = 0; i < 500; i++) {
		assert_int_equal(intern(&ix, c, i, i + 1, &id), 0);
		assert_int_equal(id, i);
	}
	for (i = 0; i < 500; i++)
		assert_int_equal(find(&ix, c, i, i + 1), i);
	assert_int_equal(find(&ix, c, 1, 1), HS_IDINDEX_NONE);
	check_runs(&ix);
	/* remove every third from the one long run */
	for (i = 0; i < 500; i += 3)
		assert_int_equal(hs_idindex_remove(&ix, 0x1234, i), 1);
	assert_int_equal(hs_idindex_remove(&ix, 0x1234, 0), 0);
	check_runs(&ix);
	for (i = 0; i < 500; i++)
		assert_int_equal(find(&ix, c, i, i + 1), i % 3 ? i : HS_IDINDEX_NONE);
	hs_idindex_release(&ix);
	free(c);
}

/* The prefetch guess: the first id of the key's fingerprint, found from
 * the slots alone (no equality call), NONE without one or without slots. */
static void guess_is_the_first_id_of_the_fingerprint(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;
	struct cols *c = new_cols(0);
	uint32_t i, id;
	size_t home;

	(void)state;
	hs_idindex_prefetch(&ix, 0x1234);
	assert_int_equal(hs_idindex_guess(&ix, 0x1234), HS_IDINDEX_NONE);
	for (i = 0; i < 1000; i++)
		assert_int_equal(intern(&ix, c, i, 3 * i, &id), 0);
	c->eq_calls = 0;
	for (i = 0; i < 1000; i++) {
		hs_idindex_prefetch(&ix, hs_hash_pair(i, 3 * i));
		assert_int_equal(hs_idindex_guess(&ix, hs_hash_pair(i, 3 * i)), i);
	}
	assert_int_equal(hs_idindex_guess(&ix, hs_hash_pair(7, 7)), HS_IDINDEX_NONE);
	assert_int_equal(c->eq_calls, 0);
	hs_idindex_release(&ix);
	free(c);

	/* one fingerprint for all: the id in the run's first (home) slot,
	 * whatever the key; after its removal, the one that took its place */
	c = new_cols(1);
	for (i = 0; i < 50; i++)
		assert_int_equal(intern(&ix, c, i, i + 1, &id), 0);
	home = hs_idindex_fp(0x1234) & (ix.cap - 1);
	c->eq_calls = 0;
	id = hs_idindex_guess(&ix, 0x1234);
	assert_int_equal(id, ix.slot[home].id1 - 1);
	assert_int_equal(hs_idindex_remove(&ix, 0x1234, id), 1);
	i = hs_idindex_guess(&ix, 0x1234);
	assert_true(i != id && i < 50);
	assert_int_equal(i, ix.slot[home].id1 - 1);
	assert_int_equal(c->eq_calls, 0);
	hs_idindex_release(&ix);
	free(c);
}

static void removal_closes_gaps_across_the_wrap(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;
	struct cols *c = new_cols(0);
	size_t cap, i;
	uint32_t id;
	/* hashes whose fingerprint puts the first four at home cap - 1 and
	 * the next three at home 0 */
	uint64_t h[7];

	(void)state;
	assert_int_equal(hs_idindex_reserve(&ix, 8), 0);
	cap = ix.cap;
	assert_int_equal(cap, 16);
	for (i = 0; i < 7; i++) {
		h[i] = (uint64_t)(i < 4 ? cap - 1 : 0) | (uint64_t)(i + 1) << 8;
		assert_int_equal(hs_idindex_fp(h[i]) & (cap - 1), i < 4 ? cap - 1 : 0);
		assert_int_equal(hs_idindex_insert(&ix, h[i], (uint32_t)i), 0);
	}
	assert_int_equal(ix.cap, cap);
	check_runs(&ix);
	assert_int_equal(hs_idindex_remove(&ix, h[0], 0), 1);
	check_runs(&ix);
	assert_int_equal(hs_idindex_remove(&ix, h[4], 4), 1);
	check_runs(&ix);
	assert_int_equal(hs_idindex_remove(&ix, h[4], 4), 0);
	assert_int_equal(hs_idindex_remove(&ix, h[1], 5), 0);	/* not its hash */
	assert_int_equal(ix.nr, 5);
	for (i = 0; i < cap; i++) {
		id = hs_idindex_at(&ix, i);
		assert_true(id == HS_IDINDEX_NONE || (id != 0 && id != 4 && id < 7));
	}
	hs_idindex_release(&ix);
	free(c);
}

static void set_replaces_the_id_of_a_key(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;
	struct cols *c = new_cols(0);
	struct key k = { 3, 4 };
	uint32_t id;
	size_t pos;

	(void)state;
	assert_int_equal(intern(&ix, c, 3, 4, &id), 0);
	/* a later entry with the same key takes the slot over */
	c->a[1] = 3;
	c->b[1] = 4;
	c->n = 2;
	pos = hs_idindex_slot(&ix, key_hash(c, 3, 4), key_eq, c, &k);
	assert_int_equal(hs_idindex_at(&ix, pos), 0);
	hs_idindex_set(&ix, pos, key_hash(c, 3, 4), 1);
	assert_int_equal(ix.nr, 1);
	assert_int_equal(find(&ix, c, 3, 4), 1);
	hs_idindex_release(&ix);
	free(c);
}

static void clear_and_insert_rebuild(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;
	struct cols *c = new_cols(0);
	uint32_t i, id;
	size_t cap;

	(void)state;
	for (i = 0; i < 1000; i++)
		assert_int_equal(intern(&ix, c, i, 0, &id), 0);
	cap = ix.cap;
	hs_idindex_clear(&ix);
	assert_int_equal(ix.nr, 0);
	assert_int_equal(ix.cap, cap);
	assert_int_equal(find(&ix, c, 5, 0), HS_IDINDEX_NONE);
	/* put back only the even ids */
	for (i = 0; i < 1000; i += 2)
		assert_int_equal(hs_idindex_insert(&ix, key_hash(c, i, 0), i), 0);
	check_runs(&ix);
	for (i = 0; i < 1000; i++)
		assert_int_equal(find(&ix, c, i, 0), i % 2 ? HS_IDINDEX_NONE : i);
	hs_idindex_release(&ix);
	free(c);
}

static void reserve_limits(void **state)
{
	struct hs_idindex ix = HS_IDINDEX_INIT;

	(void)state;
	assert_int_equal(hs_idindex_reserve(&ix, 0), 0);
	assert_int_equal(ix.cap, 0);
	assert_int_equal(hs_idindex_reserve(&ix, 100), 0);
	assert_int_equal(ix.cap, 256);
	assert_int_equal(hs_idindex_reserve(&ix, 3), 0);	/* never shrinks */
	assert_int_equal(ix.cap, 256);
	assert_int_equal(hs_idindex_reserve(&ix, (size_t)UINT32_MAX + 1), -ENOMEM);
	assert_int_equal(ix.cap, 256);
	hs_idindex_release(&ix);
}

/* Fail each allocation of a run of adds in turn: -ENOMEM, index as before. */
static void allocation_failures_leave_the_index_unchanged(void **state)
{
	struct hs_idindex ix;
	struct cols *c = new_cols(0);
	uint32_t i, j, id;
	long n;
	int ret, failed;

	(void)state;
	/* 3000 ids take 10 arrays: 16, 32, ... 8192 slots */
	for (n = 0; n < 12; n++) {
		hs_idindex_init(&ix);
		c->n = 0;
		failed = 0;
		hs_alloc_fail_after(n);
		for (i = 0; i < 3000; i++) {
			size_t nr = ix.nr, cap = ix.cap;

			ret = intern(&ix, c, i, 1, &id);
			if (ret) {
				assert_int_equal(ret, -ENOMEM);
				assert_int_equal(ix.nr, nr);
				assert_int_equal(ix.cap, cap);
				check_runs(&ix);
				for (j = 0; j < i; j++)
					assert_int_equal(find(&ix, c, j, 1), j);
				assert_int_equal(find(&ix, c, i, 1), HS_IDINDEX_NONE);
				failed = 1;
				break;
			}
		}
		hs_alloc_fail_after(-1);
		assert_int_equal(failed, n < 10);
		for (; i < 3000; i++)
			assert_int_equal(intern(&ix, c, i, 1, &id), 0);
		assert_int_equal(ix.nr, 3000);
		hs_idindex_release(&ix);
	}
	/* insert fails the same way */
	hs_idindex_init(&ix);
	hs_alloc_fail_after(0);
	assert_int_equal(hs_idindex_insert(&ix, 1, 0), -ENOMEM);
	hs_alloc_fail_after(-1);
	assert_int_equal(ix.nr, 0);
	assert_int_equal(ix.cap, 0);
	hs_idindex_release(&ix);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_index_finds_nothing),
		cmocka_unit_test(equal_keys_share_an_id),
		cmocka_unit_test(growth_keeps_every_id),
		cmocka_unit_test(one_fingerprint_for_all_still_works),
		cmocka_unit_test(guess_is_the_first_id_of_the_fingerprint),
		cmocka_unit_test(removal_closes_gaps_across_the_wrap),
		cmocka_unit_test(set_replaces_the_id_of_a_key),
		cmocka_unit_test(clear_and_insert_rebuild),
		cmocka_unit_test(reserve_limits),
		cmocka_unit_test(allocation_failures_leave_the_index_unchanged),
	};
	return cmocka_run_group_tests_name("idindex", tests, NULL, NULL);
}
