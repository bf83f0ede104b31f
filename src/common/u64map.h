#ifndef HS_COMMON_U64MAP_H
#define HS_COMMON_U64MAP_H
#include "common/hash.h"
#include "common/log.h"
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/*
 * u64map - a hash map from 64-bit keys to 64-bit values: live blocks by
 * address, memoised ids by packed keys.
 *
 * Open addressing with linear probing in one array of (key, value) pairs,
 * kept at most half full and doubled when it would be fuller; deletion
 * shifts the following entries back, so there are no tombstones and a
 * long run of puts and deletes does not slow lookups down. Key 0 marks a
 * free slot, so the entry of key 0, when there is one, is kept aside in
 * the struct: every 64-bit key can be stored.
 *
 * Ownership: the map owns its array (allocated through common/alloc.h,
 * so tests can make it fail). Keys and values are plain numbers.
 * Errors: the functions that allocate return -ENOMEM and leave the map as
 * it was. Not thread-safe: callers serialise access.
 *
 * Hot lookups are inline; growth is out of line.
 */
struct hs_u64map {
	struct hs_u64map_slot {
		uint64_t key; /* 0 = free */
		uint64_t val;
	} * slot;
	size_t nr;    /* entries in slot[] (key 0 not counted) */
	size_t cap;   /* 0 or a power of two, at least 2 * nr */
	int has_zero; /* key 0 is in the map, with zero_val */
	uint64_t zero_val;
};
#define HS_U64MAP_INIT                                                                   \
	{                                                                                \
		0                                                                        \
	}

void hs_u64map_init(struct hs_u64map *m);
/* Free the array; @m is empty and usable afterwards. */
void hs_u64map_release(struct hs_u64map *m);
/* Remove every entry, keeping the array. */
void hs_u64map_clear(struct hs_u64map *m);
/* Make room for @n entries in all: 0 or -ENOMEM (map unchanged). */
HS_MUST_CHECK int hs_u64map_reserve(struct hs_u64map *m, size_t n);
/* Bytes of the array. */
size_t hs_u64map_memory(const struct hs_u64map *m);

static inline size_t hs_u64map_count(const struct hs_u64map *m)
{
	return m->nr + (m->has_zero != 0);
}

HS_MUST_CHECK int hs__u64map_grow(struct hs_u64map *m, size_t n);

/* The slot of @key (not 0): its entry, or the free slot where it goes. */
static inline struct hs_u64map_slot *hs__u64map_probe(const struct hs_u64map *m,
						      uint64_t key)
{
	size_t mask = m->cap - 1, i = (size_t)hs_hash_u64(key) & mask;

	while (m->slot[i].key && m->slot[i].key != key)
		i = (i + 1) & mask;
	return &m->slot[i];
}

/* 1 with the value of @key in *@val (when @val is not NULL), or 0. */
static inline int hs_u64map_get(const struct hs_u64map *m, uint64_t key, uint64_t *val)
{
	const struct hs_u64map_slot *s;

	if (!key) {
		if (m->has_zero && val)
			*val = m->zero_val;
		return m->has_zero;
	}
	if (!m->nr)
		return 0;
	s = hs__u64map_probe(m, key);
	if (!s->key)
		return 0;
	if (val)
		*val = s->val;
	return 1;
}

static inline int hs_u64map_has(const struct hs_u64map *m, uint64_t key)
{
	return hs_u64map_get(m, key, NULL);
}

/*
 * Map @key to @val. Returns 0 when @key was new, 1 when it replaced a
 * value (the old one in *@old when @old is not NULL), or -ENOMEM (map
 * unchanged).
 */
static inline HS_MUST_CHECK int hs_u64map_put(struct hs_u64map *m, uint64_t key,
					      uint64_t val, uint64_t *old)
{
	struct hs_u64map_slot *s;

	if (!key) {
		int had = m->has_zero;

		if (had && old)
			*old = m->zero_val;
		m->has_zero = 1;
		m->zero_val = val;
		return had;
	}
	if (2 * (m->nr + 1) > m->cap && hs__u64map_grow(m, m->nr + 1))
		return -ENOMEM;
	s = hs__u64map_probe(m, key);
	if (s->key) {
		if (old)
			*old = s->val;
		s->val = val;
		return 1;
	}
	s->key = key;
	s->val = val;
	m->nr++;
	return 0;
}

/*
 * The value of @key, to read or change in place; when @key was not in
 * the map, it is added with value @val and *@added is set to 1 (else 0).
 * NULL on -ENOMEM (map unchanged). The pointer is good until the next
 * change to the map. One probe where get + put would take two.
 */
static inline HS_MUST_CHECK uint64_t *hs_u64map_ref(struct hs_u64map *m, uint64_t key,
						    uint64_t val, int *added)
{
	struct hs_u64map_slot *s;

	if (!key) {
		*added = !m->has_zero;
		if (*added)
			m->zero_val = val;
		m->has_zero = 1;
		return &m->zero_val;
	}
	if (2 * (m->nr + 1) > m->cap && hs__u64map_grow(m, m->nr + 1))
		return NULL;
	s = hs__u64map_probe(m, key);
	*added = !s->key;
	if (*added) {
		s->key = key;
		s->val = val;
		m->nr++;
	}
	return &s->val;
}

/*
 * Remove @key: 1 with its value in *@old (when @old is not NULL), or 0
 * when it was not in the map. Never allocates.
 */
static inline int hs_u64map_del(struct hs_u64map *m, uint64_t key, uint64_t *old)
{
	struct hs_u64map_slot *s;
	size_t mask, i, j;

	if (!key) {
		int had = m->has_zero;

		if (had && old)
			*old = m->zero_val;
		m->has_zero = 0;
		return had;
	}
	if (!m->nr)
		return 0;
	s = hs__u64map_probe(m, key);
	if (!s->key)
		return 0;
	if (old)
		*old = s->val;
	m->nr--;
	mask = m->cap - 1;
	i = (size_t)(s - m->slot);
	/* close the gap: move back each later entry of the run whose home
	 * is not in (i, j] cyclically */
	for (j = (i + 1) & mask; m->slot[j].key; j = (j + 1) & mask) {
		size_t home = (size_t)hs_hash_u64(m->slot[j].key) & mask;

		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].key = 0;
	return 1;
}

/*
 * Iterate: start with *@pos = 0; each call gives the next entry and
 * returns 1, or returns 0 at the end. The order is unspecified. The map
 * must not change during the walk.
 */
int hs_u64map_next(const struct hs_u64map *m, size_t *pos, uint64_t *key, uint64_t *val);
#endif
