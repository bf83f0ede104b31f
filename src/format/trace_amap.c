/*
 * trace_amap - an address -> u64 map (see trace_amap.h). Open addressing,
 * linear probing, backward-shift deletion.
 */
#include "format/trace_amap.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>

static size_t amap_find(const struct hs_amap *m, uint64_t a)
{
	size_t mask = m->cap - 1, i = hs_hash_u64(a) & mask;

	while (m->key[i] && m->key[i] != a)
		i = (i + 1) & mask;
	return i;
}

int hs_amap_put(struct hs_amap *m, uint64_t a, uint64_t v, uint64_t *old)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct hs_amap g = { .cap = m->cap ? 2 * m->cap : 1024 };
		size_t j;

		g.key = hs_calloc(g.cap, sizeof(uint64_t));
		g.val = hs_calloc(g.cap, sizeof(uint64_t));
		if (!g.key || !g.val) {
			hs_free(g.key);
			hs_free(g.val);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++)
			if (m->key[j]) {
				i = amap_find(&g, m->key[j]);
				g.key[i] = m->key[j];
				g.val[i] = m->val[j];
			}
		g.n = m->n;
		hs_free(m->key);
		hs_free(m->val);
		*m = g;
	}
	i = amap_find(m, a);
	*old = m->key[i] ? m->val[i] : UINT64_MAX;
	if (!m->key[i])
		m->n++;
	m->key[i] = a;
	m->val[i] = v;
	return 0;
}

/* Remove @a; returns its value or UINT64_MAX. Backward-shift deletion. */
uint64_t hs_amap_del(struct hs_amap *m, uint64_t a)
{
	size_t mask, i, j;
	uint64_t v;

	if (!m->cap)
		return UINT64_MAX;
	mask = m->cap - 1;
	i = amap_find(m, a);
	if (!m->key[i])
		return UINT64_MAX;
	v = m->val[i];
	m->n--;
	j = i;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!m->key[j])
			break;
		home = hs_hash_u64(m->key[j]) & mask;
		/* move j back to i if its home is not in (i, j] cyclically */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->key[i] = m->key[j];
			m->val[i] = m->val[j];
			i = j;
		}
	}
	m->key[i] = 0;
	return v;
}

int hs_amap_has(const struct hs_amap *m, uint64_t a)
{
	return m->cap && m->key[amap_find(m, a)] == a;
}

void hs_amap_release(struct hs_amap *m)
{
	hs_free(m->key);
	hs_free(m->val);
	m->key = m->val = NULL;
	m->n = m->cap = 0;
}
