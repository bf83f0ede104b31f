#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "common/hash.h"
#include "common/strtab.h"

static void equal_strings_share_an_id(void **state)
{
	struct hs_strtab t = HS_STRTAB_INIT(64);
	uint32_t a, b, c;

	(void)state;
	assert_int_equal(hs_strtab_intern(&t, "main", 4, &a), 0);
	assert_int_equal(hs_strtab_intern(&t, "malloc", 6, &b), 0);
	assert_int_equal(hs_strtab_intern(&t, "main", 4, &c), 0);
	assert_int_equal(a, c);
	assert_int_not_equal(a, b);
	assert_string_equal(hs_strtab_get(&t, b), "malloc");
	assert_int_equal(hs_strtab_len(&t, b), 6);
	assert_int_equal(hs_strtab_count(&t), 2);
	hs_strtab_release(&t);
}

static void cap_rejects_without_side_effects(void **state)
{
	struct hs_strtab t = HS_STRTAB_INIT(64);
	char big[80];
	uint32_t id = 7;

	(void)state;
	memset(big, 'x', sizeof(big));
	assert_int_equal(hs_strtab_intern(&t, big, sizeof(big), &id), -E2BIG);
	assert_int_equal(id, 7);
	assert_null(hs_strtab_get(&t, 0));
	hs_strtab_release(&t);
}

static void many_strings_keep_their_ids(void **state)
{
	struct hs_strtab t = HS_STRTAB_INIT(0);
	char name[32];
	uint32_t id, i;

	(void)state;
	for (i = 0; i < 100000; i++) {
		int n = snprintf(name, sizeof(name), "frame%u", i);

		assert_int_equal(hs_strtab_intern(&t, name, (size_t)n, &id), 0);
		assert_int_equal(id, i);
	}
	for (i = 0; i < 100000; i += 997) {
		int n = snprintf(name, sizeof(name), "frame%u", i);

		assert_int_equal(hs_strtab_find(&t, name, (size_t)n, &id), 0);
		assert_int_equal(id, i);
		assert_string_equal(hs_strtab_get(&t, i), name);
	}
	assert_int_equal(hs_strtab_find(&t, "nope", 4, &id), -ENOENT);
	assert_true(hs_strtab_memory(&t) > 100000 * 8);
	hs_strtab_release(&t);
}

static void out_of_memory_adds_nothing(void **state)
{
	struct hs_strtab t = HS_STRTAB_INIT(0);
	uint32_t id;
	long n;
	int ret;

	(void)state;
	/* fail each allocation in turn; every failure leaves a usable table */
	for (n = 0; n < 8; n++) {
		hs_strtab_init(&t, 0);
		hs_alloc_fail_after(n);
		ret = hs_strtab_intern(&t, "abc", 3, &id);
		hs_alloc_fail_after(-1);
		if (ret) {
			assert_int_equal(ret, -ENOMEM);
			assert_int_equal(hs_strtab_count(&t), 0);
		}
		assert_int_equal(hs_strtab_intern(&t, "abc", 3, &id), 0);
		assert_int_equal(hs_strtab_count(&t), 1);
		hs_strtab_release(&t);
	}
}

static void rename_keeps_the_id_and_the_index(void **state)
{
	struct hs_strtab t = HS_STRTAB_INIT(0);
	char name[32];
	uint32_t id, i;

	(void)state;
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		assert_int_equal(hs_strtab_intern(&t, name, strlen(name), &id), 0);
	}
	/* rename every third string; all others must still be found */
	for (i = 0; i < 5000; i += 3) {
		snprintf(name, sizeof(name), "renamed %u", i);
		assert_int_equal(hs_strtab_rename(&t, i, name, strlen(name)), 0);
	}
	for (i = 0; i < 5000; i++) {
		if (i % 3 == 0)
			snprintf(name, sizeof(name), "renamed %u", i);
		else
			snprintf(name, sizeof(name), "s%u", i);
		assert_int_equal(hs_strtab_find(&t, name, strlen(name), &id), 0);
		assert_int_equal(id, i);
		assert_string_equal(hs_strtab_get(&t, i), name);
	}
	assert_int_equal(hs_strtab_find(&t, "s0", 2, &id), -ENOENT);
	assert_int_equal(hs_strtab_count(&t), 5000);
	/* the same name again is a no-op; another string's name is refused */
	assert_int_equal(hs_strtab_rename(&t, 0, "renamed 0", 9), 0);
	assert_int_equal(hs_strtab_rename(&t, 1, "renamed 0", 9), -EEXIST);
	assert_string_equal(hs_strtab_get(&t, 1), "s1");
	assert_int_equal(hs_strtab_rename(&t, 5000, "x", 1), -EINVAL);
	/* a renamed string can be interned again under its old name */
	assert_int_equal(hs_strtab_intern(&t, "s0", 2, &id), 0);
	assert_int_equal(id, 5000);
	hs_strtab_release(&t);
}

/* The hashed intern and the prefetch hints give the ids of the plain one. */
static void hashed_intern_and_prefetch_match_intern(void **state)
{
	struct hs_strtab a, b;
	char *name = malloc(64); /* not an array: xxhash's inlining trips -Warray-bounds */
	uint32_t ia, ib;
	int i, stage;

	(void)state;
	hs_strtab_init(&a, 0);
	hs_strtab_init(&b, 0);
	/* hints on an empty table do nothing */
	hs_strtab_prefetch(&b, hs_hash_bytes("x", 1), 1);
	for (i = 0; i < 3000; i++) {
		int n = snprintf(name, 64, "mod%d!f%d", i % 7, (i * 37) % 1001);
		uint64_t h = hs_hash_bytes(name, (size_t)n);

		for (stage = 0; stage < 3; stage++)
			hs_strtab_prefetch(&b, h, stage);
		assert_int_equal(hs_strtab_intern(&a, name, (size_t)n, &ia), 0);
		assert_int_equal(hs_strtab_intern_hashed(&b, name, (size_t)n, h, &ib), 0);
		assert_int_equal(ia, ib);
	}
	assert_int_equal(hs_strtab_count(&a), 1001);
	assert_int_equal(hs_strtab_count(&b), 1001);
	assert_int_equal(hs_strtab_find(&b, name, strlen(name), &ib), 0);
	assert_string_equal(hs_strtab_get(&b, ib), name);
	hs_strtab_release(&a);
	hs_strtab_release(&b);
	free(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equal_strings_share_an_id),
		cmocka_unit_test(cap_rejects_without_side_effects),
		cmocka_unit_test(many_strings_keep_their_ids),
		cmocka_unit_test(out_of_memory_adds_nothing),
		cmocka_unit_test(rename_keeps_the_id_and_the_index),
		cmocka_unit_test(hashed_intern_and_prefetch_match_intern),
	};
	return cmocka_run_group_tests_name("strtab", tests, NULL, NULL);
}
