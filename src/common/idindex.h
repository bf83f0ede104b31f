#ifndef HS_COMMON_IDINDEX_H
#define HS_COMMON_IDINDEX_H
#include "common/log.h"
#include <stddef.h>
#include <stdint.h>

/*
 * idindex - a hash index of 32-bit ids whose keys live in the caller's
 * columns: interned stacks (frame, caller), strings, (module, address)
 * pairs. The index stores only the ids and 32 bits of each key's hash;
 * the caller keeps the keys and says how to hash a key and whether id N
 * holds it.
 *
 * Open addressing with linear probing, at most half full, doubled when
 * it would be fuller. A slot is (id + 1, fingerprint): a probe calls the
 * caller's equality only on a slot whose fingerprint matches, and growth
 * and removal work from the fingerprints alone, without the caller.
 *
 * The usual find-or-add, one probe:
 *
 *	if (hs_idindex_reserve(&ix, ix.nr + 1))
 *		return -ENOMEM;
 *	pos = hs_idindex_slot(&ix, hash, key_eq, cols, &key);
 *	id = hs_idindex_at(&ix, pos);
 *	if (id == HS_IDINDEX_NONE) {
 *		id = <append the key to the columns>;
 *		hs_idindex_set(&ix, pos, hash, id);
 *	}
 *
 * Pass a static function as @eq to the inline calls and the compiler
 * inlines it too.
 *
 * Ownership: the index owns its slot array (through common/alloc.h);
 * it borrows nothing between calls. Errors: -ENOMEM, index unchanged.
 * Not thread-safe.
 */
#define HS_IDINDEX_NONE UINT32_MAX

struct hs_idindex {
	struct hs_idindex_slot {
		uint32_t id1; /* id + 1; 0 = free */
		uint32_t fp;  /* the key's fingerprint; fp & mask is its home */
	} * slot;
	size_t nr;  /* ids in the index */
	size_t cap; /* 0 or a power of two, at least 2 * nr */
};
#define HS_IDINDEX_INIT                                                                  \
	{                                                                                \
		0                                                                        \
	}

/* Does id @id hold @key? @ctx is the caller's (its columns). */
typedef int (*hs_idindex_eq_fn)(const void *ctx, uint32_t id, const void *key);

void hs_idindex_init(struct hs_idindex *ix);
/* Free the slots; @ix is empty and usable afterwards. */
void hs_idindex_release(struct hs_idindex *ix);
/* Remove every id, keeping the slots. */
void hs_idindex_clear(struct hs_idindex *ix);
/* Add @id (not HS_IDINDEX_NONE), whose key hashes to @hash and which
 * the caller knows is not in the index yet: 0 or -ENOMEM. */
HS_MUST_CHECK int hs_idindex_insert(struct hs_idindex *ix, uint64_t hash, uint32_t id);
/* Remove @id, whose key hashes to @hash: 1, or 0 when it is not there. */
int hs_idindex_remove(struct hs_idindex *ix, uint64_t hash, uint32_t id);
/* Bytes of the slot array. */
size_t hs_idindex_memory(const struct hs_idindex *ix);

HS_MUST_CHECK int hs__idindex_grow(struct hs_idindex *ix, size_t n);

/* Make room for @n ids in all: 0, or -ENOMEM (index unchanged). */
static inline HS_MUST_CHECK int hs_idindex_reserve(struct hs_idindex *ix, size_t n)
{
	return n <= ix->cap / 2 ? 0 : hs__idindex_grow(ix, n);
}

static inline uint32_t hs_idindex_fp(uint64_t hash)
{
	return (uint32_t)(hash ^ (hash >> 32));
}

/*
 * The slot of @key: the one of the id that holds it, or the free slot
 * where it goes. The index must have room (cap > 0: reserve first).
 */
static inline size_t hs_idindex_slot(const struct hs_idindex *ix, uint64_t hash,
				     hs_idindex_eq_fn eq, const void *ctx,
				     const void *key)
{
	uint32_t fp = hs_idindex_fp(hash);
	size_t mask = ix->cap - 1, i = fp & mask;

	HS_BUG_ON(!ix->cap);
	while (ix->slot[i].id1 &&
	       (ix->slot[i].fp != fp || !eq(ctx, ix->slot[i].id1 - 1, key)))
		i = (i + 1) & mask;
	return i;
}

/* The id at slot @pos, or HS_IDINDEX_NONE when it is free. */
static inline uint32_t hs_idindex_at(const struct hs_idindex *ix, size_t pos)
{
	return ix->slot[pos].id1 - 1; /* 0 - 1 is HS_IDINDEX_NONE */
}

/*
 * Put @id at slot @pos, as found by hs_idindex_slot() for a key hashing
 * to @hash with no change to the index in between. A free slot takes a
 * new id (room was reserved); a taken one has its id replaced.
 */
static inline void hs_idindex_set(struct hs_idindex *ix, size_t pos, uint64_t hash,
				  uint32_t id)
{
	HS_BUG_ON(id == HS_IDINDEX_NONE || pos >= ix->cap);
	if (!ix->slot[pos].id1) {
		HS_BUG_ON(2 * (ix->nr + 1) > ix->cap);
		ix->nr++;
	}
	ix->slot[pos].id1 = id + 1;
	ix->slot[pos].fp = hs_idindex_fp(hash);
}

/*
 * Prefetching ahead of a lookup, for callers that look up many keys in a
 * row (an importer's stacks and names): the slot array and the caller's
 * columns are too big for the caches, and a miss waited for one key at a
 * time costs more than the lookup. Both calls only read the index.
 *
 * hs_idindex_prefetch(): fetch @hash's home slot (nothing on an index
 * without slots).
 */
static inline void hs_idindex_prefetch(const struct hs_idindex *ix, uint64_t hash)
{
	if (ix->cap)
		__builtin_prefetch(&ix->slot[hs_idindex_fp(hash) & (ix->cap - 1)]);
}

/*
 * The id of the first slot from @hash's home whose fingerprint matches,
 * or HS_IDINDEX_NONE (none, or no slots): most likely the id that holds
 * the key, found without the caller's equality. Only a guess, to fetch
 * that id's row of the columns ahead: it may hold another key with the
 * same fingerprint, and the caller checks the id is one of its rows.
 */
static inline uint32_t hs_idindex_guess(const struct hs_idindex *ix, uint64_t hash)
{
	uint32_t fp = hs_idindex_fp(hash);
	size_t mask = ix->cap - 1, i;

	if (!ix->cap)
		return HS_IDINDEX_NONE;
	for (i = fp & mask; ix->slot[i].id1; i = (i + 1) & mask)
		if (ix->slot[i].fp == fp)
			return ix->slot[i].id1 - 1;
	return HS_IDINDEX_NONE;
}

/* The id that holds @key, or HS_IDINDEX_NONE. */
static inline uint32_t hs_idindex_find(const struct hs_idindex *ix, uint64_t hash,
				       hs_idindex_eq_fn eq, const void *ctx,
				       const void *key)
{
	if (!ix->nr)
		return HS_IDINDEX_NONE;
	return hs_idindex_at(ix, hs_idindex_slot(ix, hash, eq, ctx, key));
}
#endif
