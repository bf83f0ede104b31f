/*
 * test_memviews_live - the memory views' table of live blocks: blocks
 * that fit a 16-byte slot and those that do not (unaligned addresses,
 * addresses of 2^47 or more, sizes of a MiB or more, event numbers past
 * 2^40, keys past 2^24), a block replaced by one of the other kind,
 * times found from event numbers and the runs that go once no block is
 * in them, growth and shrinking in place against a model, and running
 * out of memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/memviews_live.h"
#include "common/alloc.h"

/*
 * Every block of the slots sits in the cluster from its home: no gap;
 * a wide block has a slot that says so when its address can have one.
 */
static void check_slots(const struct live *m)
{
	size_t i, j, used = 0, marked = 0, placed = 0;

	assert_true(m->cap == 0 || (m->cap & (m->cap - 1)) == 0);
	for (i = 0; i < m->cap; i++) {
		if (!m->slot[i].at)
			continue;
		used++;
		marked += slot_wide(&m->slot[i]);
		j = live_hash(m->slot[i].at & LIVE_AT_MASK) & (m->cap - 1);
		for (; j != i; j = (j + 1) & (m->cap - 1))
			assert_int_not_equal(m->slot[j].at, 0);
	}
	for (i = 0; i < m->nr_wide; i++) {
		uint64_t a = m->wide[i].addr;

		if (!live_packs_addr(a))
			continue;
		placed++;
		assert_true(slot_wide(&m->slot[live_find(m, a >> LIVE_AT_SHIFT)]));
	}
	assert_int_equal(used, m->used);
	assert_int_equal(marked, placed);
	assert_int_equal(m->used - marked + m->nr_wide, m->n);
}

static void assert_block(const struct block *b, uint64_t ord, uint64_t size, uint32_t key)
{
	assert_int_equal(b->ord, ord);
	assert_int_equal(b->size, size);
	assert_int_equal(b->key, key);
}

/* What each put below stores, and where it should go. */
static const struct {
	uint64_t addr, size;
	uint32_t key;
	int fits;
} kinds[] = {
    {0x1000, 24, 7, 1},
    {0x1008, 24, 7, 1}, /* 8-byte aligned is enough */
    {0x2004, 24, 7, 0}, /* unaligned */
    {0x2001, 1, 7, 0},	/* unaligned */
    {(UINT64_C(1) << 47) - 8, 24, 7, 1},
    {UINT64_C(1) << 47, 24, 7, 0},  /* too high */
    {0xffff800000001000, 24, 7, 0}, /* too high */
    {0x3000, (1u << 20) - 2, 7, 1},
    {0x3008, (1u << 20) - 1, 7, 0},    /* SIZE_WIDE itself */
    {0x4000, 1u << 20, 7, 0},	       /* too large */
    {0x5000, UINT64_C(5) << 30, 7, 0}, /* past 32 bits */
    {0x6000, UINT64_MAX, 7, 0},
    {0x7000, 24, (1u << 24) - 1, 1},
    {0x8000, 24, 1u << 24, 0}, /* key too large */
    {0x9000, 24, UINT32_MAX, 0},
    {0xa000, 0, 0, 1},
};
#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static void blocks_that_do_not_fit_go_aside(void **state)
{
	struct live m = {0};
	struct block b;
	size_t i, wide = 0, seen = 0;

	(void)state;
	for (i = 0; i < NR_KINDS; i++) {
		b = (struct block){
		    .ord = i + 1, .size = kinds[i].size, .key = kinds[i].key};
		assert_int_equal(live_packs_addr(kinds[i].addr) && live_packs(&b),
				 kinds[i].fits);
		assert_int_equal(
		    live_replace(&m, kinds[i].addr, &b, 100 + (int64_t)i, NULL), 0);
		wide += !kinds[i].fits;
	}
	/* event numbers past 2^40 do not fit, whatever else does */
	b = (struct block){.ord = UINT64_C(1) << 40, .size = 8, .key = 1};
	assert_false(live_packs(&b));
	assert_int_equal(live_put(&m, 0xb000, &b, 500), 0);
	b.ord = (UINT64_C(1) << 40) + 1;
	assert_int_equal(live_put(&m, 0xc000, &b, 500), 0);
	wide += 2;
	/* address 0 is never live */
	assert_int_equal(live_put(&m, 0, &b, 500), 0);
	assert_false(live_has(&m, 0));
	check_slots(&m);
	assert_int_equal(m.nr_wide, wide);
	assert_int_equal(m.n, NR_KINDS + 2);

	/* each one is there, then comes back as it went in, with its time */
	i = 0;
	while (live_next(&m, &i, &b))
		seen++;
	assert_int_equal(seen, m.n);
	for (i = 0; i < NR_KINDS; i++) {
		assert_true(live_has(&m, kinds[i].addr));
		assert_int_equal(live_del(&m, kinds[i].addr, &b), 1);
		assert_block(&b, i + 1, kinds[i].size, kinds[i].key);
		assert_int_equal(live_time(&m, b.ord), 100 + (int64_t)i);
		assert_false(live_has(&m, kinds[i].addr));
		assert_int_equal(live_del(&m, kinds[i].addr, &b), 0);
		check_slots(&m);
	}
	assert_int_equal(live_del(&m, 0xb000, &b), 1);
	assert_block(&b, UINT64_C(1) << 40, 8, 1);
	assert_int_equal(live_time(&m, b.ord), 500);
	assert_int_equal(live_del(&m, 0xc000, &b), 1);
	assert_block(&b, (UINT64_C(1) << 40) + 1, 8, 1);
	assert_int_equal(m.n, 0);
	assert_int_equal(m.nr_wide, 0);
	live_release(&m);
}

static void a_block_replaced_by_one_of_the_other_kind(void **state)
{
	struct live m = {0};
	struct block small = {.ord = 1, .size = 40, .key = 3}, big, old;
	uint64_t a = 0x7f0000001230;

	(void)state;
	assert_int_equal(live_replace(&m, a, &small, 10, &old), 0);
	assert_int_equal(m.used, 1);
	/* a slot's block replaced by one that does not fit */
	big = (struct block){.ord = 2, .size = UINT64_C(3) << 32, .key = 4};
	assert_int_equal(live_replace(&m, a, &big, 11, &old), 1);
	assert_block(&old, 1, 40, 3);
	assert_int_equal(m.used, 1); /* (its slot says SIZE_WIDE) */
	assert_int_equal(m.nr_wide, 1);
	assert_int_equal(m.n, 1);
	check_slots(&m);
	/* a wide block replaced by another wide one, in place */
	big.ord = 3;
	big.size = 2u << 20;
	assert_int_equal(live_replace(&m, a, &big, 12, &old), 1);
	assert_block(&old, 2, UINT64_C(3) << 32, 4);
	assert_int_equal(m.nr_wide, 1);
	/* and back into a slot */
	small.ord = 4;
	assert_int_equal(live_replace(&m, a, &small, 12, &old), 1);
	assert_block(&old, 3, 2u << 20, 4);
	assert_int_equal(m.used, 1);
	assert_int_equal(m.nr_wide, 0);
	assert_int_equal(m.n, 1);
	check_slots(&m);
	assert_int_equal(live_del(&m, a, &old), 1);
	assert_block(&old, 4, 40, 3);
	assert_int_equal(live_time(&m, old.ord), 12);
	assert_int_equal(m.n, 0);
	live_release(&m);
}

static void times_come_from_runs_of_event_numbers(void **state)
{
	static const int64_t time[] = {5, 5, 5, 9, 9, 12, 5, 5, 30};
	struct live m = {0};
	uint64_t first[9];
	struct block b;
	size_t i;

	(void)state;
	for (i = 0; i < 9; i++) {
		b = (struct block){.ord = 10 * (i + 1), .size = 16, .key = 1};
		assert_int_equal(live_put(&m, 0x1000 + 16 * i, &b, time[i]), 0);
	}
	/* five runs: 5, 9, 12, 5 again, 30 */
	assert_int_equal(m.runs.n, 5);
	for (i = 0; i < 9; i++)
		assert_int_equal(live_run(&m, 10 * (i + 1), &first[i]), time[i]);
	assert_int_equal(first[0], 10);
	assert_int_equal(first[1], 10);
	assert_int_equal(first[2], 10);
	assert_int_equal(first[3], 40);
	assert_int_equal(first[4], 40);
	assert_int_equal(first[5], 60);
	assert_int_equal(first[6], 70);
	assert_int_equal(first[7], 70);
	assert_int_equal(first[8], 90);
	/* an event number between puts is of the run before it */
	assert_int_equal(live_time(&m, 55), 9);
	assert_int_equal(live_time(&m, 1000), 30);
	live_release(&m);
}

/*
 * Every put at a time of its own (what --sample-bytes gives), most blocks
 * freed soon: the runs stay about as many as the blocks live, and the
 * blocks still live keep their times.
 */
static void runs_that_no_block_is_in_go(void **state)
{
	struct live m = {0};
	struct block b;
	size_t i, kept = 0;

	(void)state;
	for (i = 1; i <= 300000; i++) {
		uint64_t a = 0x10000 + 16 * (uint64_t)i;

		b = (struct block){.ord = i, .size = i % 500, .key = (uint32_t)(i % 77)};
		assert_int_equal(live_put(&m, a, &b, 1000 + 3 * (int64_t)i), 0);
		/* the one before it goes, unless it is a 97th */
		if (i > 1 && (i - 1) % 97) {
			assert_int_equal(live_del(&m, a - 16, &b), 1);
			assert_int_equal(live_time(&m, b.ord),
					 1000 + 3 * (int64_t)(i - 1));
		}
		assert_true(m.runs.n <= 2 * (m.n + 1) + 4096 + 1);
	}
	assert_true(m.runs.n < 300000 / 10);
	for (i = 1; i <= 300000; i++) {
		if ((i % 97) && i != 300000)
			continue;
		assert_int_equal(live_del(&m, 0x10000 + 16 * (uint64_t)i, &b), 1);
		assert_int_equal(b.ord, i);
		assert_int_equal(live_time(&m, b.ord), 1000 + 3 * (int64_t)i);
		kept++;
	}
	assert_int_equal(m.n, 0);
	assert_true(kept > 3000);
	live_release(&m);
}

/* A tiny xorshift, for repeatable runs. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define MODEL_ADDRS 400000
struct model {
	int live[MODEL_ADDRS];
	struct block b[MODEL_ADDRS];
	int64_t time[MODEL_ADDRS];
};

/* Address number @i: mostly aligned and low, some not (every kind). */
static uint64_t model_addr(size_t i)
{
	if (i % 101 == 0)
		return 0x100000 + 16 * (uint64_t)i + 4;
	if (i % 103 == 0)
		return (UINT64_C(1) << 47) + 16 * (uint64_t)i;
	return 0x7f0000000000 + 16 * (uint64_t)i;
}

/*
 * Random puts and frees against a model, through growth past the mapped
 * size, then down to a few blocks (the table halves in place), with a
 * few sizes that do not fit.
 */
static void random_operations_match_a_model(void **state)
{
	struct model *md = calloc(1, sizeof(*md));
	struct live m = {0};
	struct block b, old;
	uint64_t seed = 0x9e3779b97f4a7c15ull, ord = 0;
	size_t i, k, n = 0, phase, step, biggest = 0;

	(void)state;
	assert_non_null(md);
	for (phase = 0; phase < 2; phase++) {
		for (step = 0; step < 1200000; step++) {
			uint64_t a, r;
			int put;
			int64_t t = (int64_t)(ord / 50);

			k = (size_t)(next_random(&seed) % MODEL_ADDRS);
			a = model_addr(k);
			r = next_random(&seed);
			/* growing: puts 3 in 4; emptying: frees 7 in 8 */
			put = phase == 0 ? r % 4 != 0 : r % 8 == 0;

			if (put) {
				b = (struct block){.ord = ++ord,
						   .size = r % 1000 == 0 ? (r >> 20)
									 : r % 4000,
						   .key = (uint32_t)(r >> 40)};
				assert_int_equal(live_replace(&m, a, &b, t, &old),
						 md->live[k]);
				if (md->live[k]) {
					assert_block(&old, md->b[k].ord, md->b[k].size,
						     md->b[k].key);
				} else {
					n++;
				}
				md->live[k] = 1;
				md->b[k] = b;
				md->time[k] = t;
			} else if (md->live[k]) {
				assert_int_equal(live_del(&m, a, &old), 1);
				assert_block(&old, md->b[k].ord, md->b[k].size,
					     md->b[k].key);
				assert_int_equal(live_time(&m, old.ord), md->time[k]);
				md->live[k] = 0;
				n--;
			} else {
				assert_int_equal(live_del(&m, a, &old), 0);
			}
			assert_int_equal(m.n, n);
			if (m.cap > biggest)
				biggest = m.cap;
		}
		check_slots(&m);
		for (k = 0; k < MODEL_ADDRS; k++)
			assert_int_equal(live_has(&m, model_addr(k)), md->live[k]);
	}
	/* it grew past a mapping's size and halved again as it emptied */
	assert_true(biggest * sizeof(struct slot) > HS_HUGE_PAGE);
	assert_true(m.cap < biggest);
	assert_true(m.nr_wide > 0);
	/* iteration sees every block once */
	i = 0;
	step = 0;
	while (live_next(&m, &i, &b))
		step++;
	assert_int_equal(step, n);
	for (k = 0; k < MODEL_ADDRS; k++) {
		if (!md->live[k])
			continue;
		assert_int_equal(live_del(&m, model_addr(k), &old), 1);
		assert_block(&old, md->b[k].ord, md->b[k].size, md->b[k].key);
		assert_int_equal(live_time(&m, old.ord), md->time[k]);
	}
	assert_int_equal(m.n, 0);
	live_release(&m);
	free(md);
}

/* Out of memory: -ENOMEM and the table as it was (the blocks, not the new one). */
static void out_of_memory_leaves_the_blocks(void **state)
{
	struct live m = {0};
	struct block b = {.ord = 1, .size = 8, .key = 1}, old;
	size_t i;

	(void)state;
	/* the first put's slots */
	hs_alloc_fail_after(0);
	assert_int_equal(live_put(&m, 0x1000, &b, 1), -ENOMEM);
	hs_alloc_fail_after(-1);
	assert_false(live_has(&m, 0x1000));
	for (i = 0; i < 100; i++) {
		b.ord = i + 1;
		assert_int_equal(live_put(&m, 0x1000 + 16 * i, &b, 1), 0);
	}
	/* a wide block's room; a block put in place needs none */
	hs_alloc_fail_after(0);
	b.ord = 200;
	assert_int_equal(live_put(&m, 0x1000 + 4, &b, 1), -ENOMEM);
	assert_int_equal(live_put(&m, 0x1000, &b, 1), 0);
	hs_alloc_fail_after(-1);
	assert_false(live_has(&m, 0x1000 + 4));
	assert_int_equal(live_del(&m, 0x1000, &old), 1);
	assert_block(&old, 200, 8, 1);
	assert_int_equal(m.n, 99);
	check_slots(&m);
	/* growth */
	hs_alloc_fail_after(0);
	for (i = 100; i < 1000; i++) {
		b.ord = 300 + i;
		if (live_put(&m, 0x1000 + 16 * i, &b, 1) < 0)
			break;
	}
	hs_alloc_fail_after(-1);
	assert_true(i < 1000);
	assert_false(live_has(&m, 0x1000 + 16 * i));
	assert_int_equal(m.n, 99 + (i - 100));
	check_slots(&m);
	live_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(blocks_that_do_not_fit_go_aside),
	    cmocka_unit_test(a_block_replaced_by_one_of_the_other_kind),
	    cmocka_unit_test(times_come_from_runs_of_event_numbers),
	    cmocka_unit_test(runs_that_no_block_is_in_go),
	    cmocka_unit_test(random_operations_match_a_model),
	    cmocka_unit_test(out_of_memory_leaves_the_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
