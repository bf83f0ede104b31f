/*
 * idindex - growth, insertion by id and removal for the id index (see
 * idindex.h; the probes are inline there). All of it works from the
 * fingerprints in the slots, never from the caller's keys.
 */
#include "common/idindex.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

#define MIN_CAP 16

void hs_idindex_init(struct hs_idindex *ix)
{
	memset(ix, 0, sizeof(*ix));
}

void hs_idindex_release(struct hs_idindex *ix)
{
	hs_free(ix->slot);
	hs_idindex_init(ix);
}

void hs_idindex_clear(struct hs_idindex *ix)
{
	if (ix->slot)
		memset(ix->slot, 0, ix->cap * sizeof(*ix->slot));
	ix->nr = 0;
}

/* The free slot for fingerprint @fp in @slot (@mask + 1 slots). */
static size_t free_slot(const struct hs_idindex_slot *slot, size_t mask, uint32_t fp)
{
	size_t i = fp & mask;

	while (slot[i].id1)
		i = (i + 1) & mask;
	return i;
}

/* Rebuild the slots with room for @n ids (more than now). */
int hs__idindex_grow(struct hs_idindex *ix, size_t n)
{
	struct hs_idindex_slot *slot;
	size_t cap = ix->cap ? ix->cap : MIN_CAP, i, moved = 0;

	HS_BUG_ON(n <= ix->cap / 2);
	/* ids are 32-bit: more than 2^32 of them cannot be told apart */
	if (n > (size_t)UINT32_MAX)
		return -ENOMEM;
	while (cap / 2 < n) {
		if (cap > SIZE_MAX / 2 / sizeof(*slot))
			return -ENOMEM;
		cap *= 2;
	}
	slot = hs_malloc(cap * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	/* a big index is probed at random: fewer TLB misses in huge pages */
	if (cap * sizeof(*slot) >= ((size_t)4 << 20))
		hs_hint_huge(slot, cap * sizeof(*slot));
	/* written zero before the rehash probes it (as hs__u64map_grow()) */
	memset(slot, 0, cap * sizeof(*slot));
	for (i = 0; i < ix->cap; i++)
		if (ix->slot[i].id1) {
			slot[free_slot(slot, cap - 1, ix->slot[i].fp)] = ix->slot[i];
			moved++;
		}
	HS_BUG_ON(moved != ix->nr);
	hs_free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
	return 0;
}

int hs_idindex_insert(struct hs_idindex *ix, uint64_t hash, uint32_t id)
{
	uint32_t fp = hs_idindex_fp(hash);
	size_t i;

	HS_BUG_ON(id == HS_IDINDEX_NONE);
	if (hs_idindex_reserve(ix, ix->nr + 1))
		return -ENOMEM;
	i = free_slot(ix->slot, ix->cap - 1, fp);
	ix->slot[i].id1 = id + 1;
	ix->slot[i].fp = fp;
	ix->nr++;
	return 0;
}

int hs_idindex_remove(struct hs_idindex *ix, uint64_t hash, uint32_t id)
{
	uint32_t fp = hs_idindex_fp(hash);
	size_t mask = ix->cap - 1, i, j;

	HS_BUG_ON(id == HS_IDINDEX_NONE);
	if (!ix->nr)
		return 0;
	for (i = fp & mask; ix->slot[i].id1 != id + 1 || ix->slot[i].fp != fp;
	     i = (i + 1) & mask)
		if (!ix->slot[i].id1)
			return 0;
	ix->nr--;
	/* close the gap: move back each later slot of the run whose home
	 * is not in (i, j] cyclically */
	for (j = (i + 1) & mask; ix->slot[j].id1; j = (j + 1) & mask) {
		size_t home = ix->slot[j].fp & mask;

		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			ix->slot[i] = ix->slot[j];
			i = j;
		}
	}
	ix->slot[i].id1 = 0;
	return 1;
}

size_t hs_idindex_memory(const struct hs_idindex *ix)
{
	return ix->cap * sizeof(*ix->slot);
}
