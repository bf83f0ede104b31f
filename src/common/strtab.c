/*
 * strtab - string interning with an arena and an id index (common/idindex)
 * over the entries, hashes from XXH3.
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
	hs_idindex_release(&t->index);
	hs_strtab_init(t, t->max_bytes);
}

/* A string to look up: @len bytes at @s. */
struct probe {
	const char *s;
	size_t len;
};

static int entry_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct hs_strtab *t = ctx;
	const struct probe *p = key;

	return t->ent[id].len == p->len && !memcmp(t->ent[id].str, p->s, p->len);
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

int hs_strtab_find(const struct hs_strtab *t, const char *s, size_t len, uint32_t *id)
{
	struct probe p = {s, len};
	uint32_t found =
	    hs_idindex_find(&t->index, hs_hash_bytes(s, len), entry_eq, t, &p);

	if (found == HS_IDINDEX_NONE)
		return -ENOENT;
	*id = found;
	return 0;
}

void hs_strtab_prefetch(const struct hs_strtab *t, uint64_t hash, int stage)
{
	uint32_t id;

	if (stage == 0) {
		hs_idindex_prefetch(&t->index, hash);
		return;
	}
	id = hs_idindex_guess(&t->index, hash);
	if (id == HS_IDINDEX_NONE || id >= t->nr)
		return;
	if (stage == 1)
		__builtin_prefetch(&t->ent[id]);
	else
		__builtin_prefetch(t->ent[id].str);
}

int hs_strtab_intern(struct hs_strtab *t, const char *s, size_t len, uint32_t *id)
{
	return hs_strtab_intern_hashed(t, s, len, hs_hash_bytes(s, len), id);
}

int hs_strtab_intern_hashed(struct hs_strtab *t, const char *s, size_t len, uint64_t h,
			    uint32_t *id)
{
	struct probe p = {s, len};
	uint32_t found;
	size_t i;
	char *copy;

	if (hs_idindex_reserve(&t->index, t->nr + 1))
		return -ENOMEM;
	i = hs_idindex_slot(&t->index, h, entry_eq, t, &p);
	found = hs_idindex_at(&t->index, i);
	if (found != HS_IDINDEX_NONE) {
		*id = found;
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
	hs_idindex_set(&t->index, i, h, (uint32_t)t->nr);
	t->nr++;
	t->bytes += len + 1;
	*id = (uint32_t)t->nr - 1;
	return 0;
}

int hs_strtab_rename(struct hs_strtab *t, uint32_t id, const char *s, size_t len)
{
	struct probe p = {s, len};
	uint64_t h = hs_hash_bytes(s, len);
	uint32_t found;
	char *copy;
	int removed, err;

	if (id >= t->nr)
		return -EINVAL;
	found = hs_idindex_find(&t->index, h, entry_eq, t, &p);
	if (found != HS_IDINDEX_NONE)
		return found == id ? 0 : -EEXIST;
	if (len > UINT32_MAX || (t->max_bytes && len + 1 > t->max_bytes - t->bytes))
		return -E2BIG;
	copy = arena_alloc(t, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	/* every id is in the index, so its old content is found, and the
	 * index has room for it again: the insert cannot fail */
	removed = hs_idindex_remove(&t->index,
				    hs_hash_bytes(t->ent[id].str, t->ent[id].len), id);
	HS_BUG_ON(!removed);
	t->ent[id].str = copy;
	t->ent[id].len = len;
	err = hs_idindex_insert(&t->index, h, id);
	HS_BUG_ON(err);
	t->bytes += len + 1;
	return 0;
}

const char *hs_strtab_get(const struct hs_strtab *t, uint32_t id)
{
	return id < t->nr ? t->ent[id].str : NULL;
}

size_t hs_strtab_memory(const struct hs_strtab *t)
{
	return t->arena_bytes + t->alloc * sizeof(*t->ent) + hs_idindex_memory(&t->index);
}
