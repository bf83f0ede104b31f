/*
 * u64map - growth, iteration and the out-of-line parts of the u64 map
 * (see u64map.h; lookups, puts and deletes are inline there).
 */
#include "common/u64map.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

#define MIN_CAP 16

void hs_u64map_init(struct hs_u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void hs_u64map_release(struct hs_u64map *m)
{
	hs_free(m->slot);
	hs_u64map_init(m);
}

void hs_u64map_clear(struct hs_u64map *m)
{
	if (m->slot)
		memset(m->slot, 0, m->cap * sizeof(*m->slot));
	m->nr = 0;
	m->has_zero = 0;
}

/* Rebuild the array with room for @n entries in slot[] (n >= m->nr). */
int hs__u64map_grow(struct hs_u64map *m, size_t n)
{
	struct hs_u64map g = *m;
	size_t cap = m->cap ? m->cap : MIN_CAP, i, moved = 0;

	HS_BUG_ON(n < m->nr);
	while (cap / 2 < n) {
		if (cap > SIZE_MAX / 2 / sizeof(*g.slot))
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == m->cap)
		return 0;
	/*
	 * Written zero before the rehash probes it: a block of a megabyte or
	 * more is a fresh mapping, and a page first read maps the shared zero
	 * page, whose write then costs a copy and a TLB flush on every CPU
	 * the process's threads run on (calloc() leaves it unwritten).
	 */
	g.slot = hs_malloc(cap * sizeof(*g.slot));
	if (!g.slot)
		return -ENOMEM;
	memset(g.slot, 0, cap * sizeof(*g.slot));
	g.cap = cap;
	for (i = 0; i < m->cap; i++)
		if (m->slot[i].key) {
			*hs__u64map_probe(&g, m->slot[i].key) = m->slot[i];
			moved++;
		}
	HS_BUG_ON(moved != m->nr);
	hs_free(m->slot);
	*m = g;
	return 0;
}

int hs_u64map_reserve(struct hs_u64map *m, size_t n)
{
	/* key 0 needs no slot, but a caller cannot know whether it will come */
	return n > m->cap / 2 ? hs__u64map_grow(m, n) : 0;
}

size_t hs_u64map_memory(const struct hs_u64map *m)
{
	return m->cap * sizeof(*m->slot);
}

int hs_u64map_next(const struct hs_u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	size_t i = *pos;

	/* position 0 is key 0; position i + 1 is slot[i] */
	if (i == 0) {
		*pos = 1;
		if (m->has_zero) {
			*key = 0;
			*val = m->zero_val;
			return 1;
		}
		i = 1;
	}
	for (; i - 1 < m->cap; i++)
		if (m->slot[i - 1].key) {
			*key = m->slot[i - 1].key;
			*val = m->slot[i - 1].val;
			*pos = i + 1;
			return 1;
		}
	*pos = i;
	return 0;
}
