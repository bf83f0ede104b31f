/*
 * strtab - string interning with an arena and an open-addressing index
 * (linear probing, kept at most half full, hashes from XXH3).
 */
#include "common/strtab.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>
#include <string.h>

#define BLOCK_MIN (64 * 1024)

void hs_strtab_init(struct hs_strtab *t, size_t max_bytes)
{
	memset(t, 0, sizeof(*t));
	t->max_bytes = max_bytes;
}

void hs_strtab_release(struct hs_strtab *t)
{
	size_t i;

	for (i = 0; i < t->nr_block; i++)
		hs_free(t->block[i]);
	hs_free(t->block);
	hs_free(t->ent);
	hs_free(t->slot);
	hs_strtab_init(t, t->max_bytes);
}

#define SLOT_ID(v) ((uint32_t)(v) - 1)
#define SLOT_TAG(h) ((h) & ~(uint64_t)UINT32_MAX)

/*
 * The slot of @s: its entry, or the empty slot where it belongs. *@val is
 * what to store there for id 0 (add the id). A slot holds the high half
 * of the string's hash above id + 1, so a probe touches the string only
 * when those 32 bits agree.
 */
static size_t find_slot(const struct hs_strtab *t, const char *s, size_t len,
			uint64_t *val)
{
	size_t mask = t->nr_slot - 1;
	uint64_t h = hs_hash_bytes(s, len);
	size_t i = (size_t)h & mask;

	while (t->slot[i]) {
		uint32_t id = SLOT_ID(t->slot[i]);

		if (SLOT_TAG(t->slot[i]) == SLOT_TAG(h) && t->ent[id].len == len &&
		    !memcmp(t->ent[id].str, s, len))
			break;
		i = (i + 1) & mask;
	}
	*val = SLOT_TAG(h) | 1;
	return i;
}

static int grow_index(struct hs_strtab *t)
{
	size_t n = t->nr_slot ? 2 * t->nr_slot : 64;
	uint64_t *slot = hs_calloc(n, sizeof(*slot)), v;
	size_t id, i;

	if (!slot)
		return -ENOMEM;
	hs_free(t->slot);
	t->slot = slot;
	t->nr_slot = n;
	for (id = 0; id < t->nr; id++) {
		i = find_slot(t, t->ent[id].str, t->ent[id].len, &v);
		t->slot[i] = v + id;
	}
	return 0;
}

static char *arena_alloc(struct hs_strtab *t, size_t n)
{
	char *b;

	if (t->nr_block && t->block_used + n <= t->block_size) {
		b = t->block[t->nr_block - 1] + t->block_used;
		t->block_used += n;
		return b;
	}
	if (HS_GROW(t->block, t->nr_block + 1, t->alloc_block))
		return NULL;
	t->block_size = n > BLOCK_MIN ? n : BLOCK_MIN;
	b = hs_malloc(t->block_size);
	if (!b)
		return NULL;
	t->block[t->nr_block++] = b;
	t->arena_bytes += t->block_size;
	t->block_used = n;
	return b;
}

int hs_strtab_find(const struct hs_strtab *t, const char *s, size_t len,
		   uint32_t *id)
{
	uint64_t v;
	size_t i;

	if (!t->nr_slot)
		return -ENOENT;
	i = find_slot(t, s, len, &v);
	if (!t->slot[i])
		return -ENOENT;
	*id = SLOT_ID(t->slot[i]);
	return 0;
}

int hs_strtab_intern(struct hs_strtab *t, const char *s, size_t len,
		     uint32_t *id)
{
	uint64_t v;
	size_t i;
	char *copy;

	if (2 * (t->nr + 1) > t->nr_slot && grow_index(t))
		return -ENOMEM;
	i = find_slot(t, s, len, &v);
	if (t->slot[i]) {
		*id = SLOT_ID(t->slot[i]);
		return 0;
	}
	if (len > UINT32_MAX || t->nr >= UINT32_MAX - 1 ||
	    (t->max_bytes && len + 1 > t->max_bytes - t->bytes))
		return -E2BIG;
	if (HS_GROW(t->ent, t->nr + 1, t->alloc))
		return -ENOMEM;
	copy = arena_alloc(t, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';

	t->ent[t->nr].str = copy;
	t->ent[t->nr].len = len;
	t->nr++;
	t->slot[i] = v + t->nr - 1;
	t->bytes += len + 1;
	*id = (uint32_t)t->nr - 1;
	return 0;
}

/* Empty slot @i of the index, closing the gap so probes still work. */
static void remove_slot(struct hs_strtab *t, size_t i)
{
	size_t mask = t->nr_slot - 1;
	size_t j = i, home;

	for (;;) {
		t->slot[i] = 0;
		for (;;) {
			uint32_t id;

			j = (j + 1) & mask;
			if (!t->slot[j])
				return;
			id = SLOT_ID(t->slot[j]);
			home = (size_t)hs_hash_bytes(t->ent[id].str, t->ent[id].len);
			home &= mask;
			/* move j back into the gap unless its home lies in (i, j] */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		t->slot[i] = t->slot[j];
		i = j;
	}
}

int hs_strtab_rename(struct hs_strtab *t, uint32_t id, const char *s, size_t len)
{
	uint64_t v;
	size_t i;
	char *copy;

	if (id >= t->nr)
		return -EINVAL;
	i = find_slot(t, s, len, &v);
	if (t->slot[i])
		return SLOT_ID(t->slot[i]) == id ? 0 : -EEXIST;
	if (len > UINT32_MAX ||
	    (t->max_bytes && len + 1 > t->max_bytes - t->bytes))
		return -E2BIG;
	copy = arena_alloc(t, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	remove_slot(t, find_slot(t, t->ent[id].str, t->ent[id].len, &v));
	t->ent[id].str = copy;
	t->ent[id].len = len;
	i = find_slot(t, s, len, &v);
	t->slot[i] = v + id;
	t->bytes += len + 1;
	return 0;
}

const char *hs_strtab_get(const struct hs_strtab *t, uint32_t id)
{
	return id < t->nr ? t->ent[id].str : NULL;
}

size_t hs_strtab_memory(const struct hs_strtab *t)
{
	return t->arena_bytes + t->alloc * sizeof(*t->ent) +
	       t->nr_slot * sizeof(*t->slot);
}
