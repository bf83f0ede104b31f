/*
 * cache - LRU of derived sources, call trees and views (see cache.h).
 * A handful of entries: linear scans are cheaper than any index.
 */
#include "server/cache.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

void hs_cache_init(struct hs_cache *c)
{
	memset(c, 0, sizeof(*c));
	c->max[HS_CACHE_SOURCE] = 8;
	c->max[HS_CACHE_TREE] = 8;
	c->max[HS_CACHE_VIEW] = 32;
	c->max_bytes = (size_t)1 << 30;
}

/* About the memory an entry holds. */
static size_t entry_bytes(const struct hs_cache_entry *e)
{
	const struct hs_calltree *ct = &e->u.tree;
	const struct hs_view *v = &e->u.view.v;

	switch (e->kind) {
	case HS_CACHE_SOURCE:
		return hs_source_memory(&e->u.source.src);
	case HS_CACHE_TREE:
		/* the nodes' arrays, When histograms, the filter's output and maps */
		return ct->t.nr * (sizeof(struct hs_node_exc) +
				   sizeof(struct hs_node_inc) + 21) +
		       (ct->hist ? ct->t.nr * HS_WHEN_BUCKETS * sizeof(double) : 0) +
		       hs_source_memory(&ct->f.out) +
		       (ct->in ? ct->in->nr_stacks * 5 : 0);
	case HS_CACHE_VIEW:
		return v->nr_rows * (sizeof(*v->rows) + 2 * sizeof(uint32_t)) +
		       hs_source_memory(&v->names);
	default:
		return 0;
	}
}

void hs_cache_entry_free(struct hs_cache_entry *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case HS_CACHE_SOURCE:
		hs_source_release(&e->u.source.src);
		break;
	case HS_CACHE_TREE:
		hs_calltree_release(&e->u.tree);
		break;
	case HS_CACHE_VIEW:
		hs_view_release(&e->u.view.v);
		hs_free(e->u.view.child_off);
		hs_free(e->u.view.child);
		break;
	default:
		break;
	}
	hs_free(e->key);
	hs_free(e);
}

void hs_cache_release(struct hs_cache *c)
{
	size_t i;

	/* releasing an entry never reads the one it borrows from */
	for (i = 0; i < c->nr; i++)
		hs_cache_entry_free(c->e[i]);
	hs_free(c->e);
	memset(c, 0, sizeof(*c));
}

void hs_cache_begin(struct hs_cache *c)
{
	c->pin = ++c->clock;
}

static void touch(struct hs_cache *c, struct hs_cache_entry *e)
{
	for (; e; e = e->dep)
		e->used = c->clock;
}

struct hs_cache_entry *hs_cache_get(struct hs_cache *c, enum hs_cache_kind kind,
				    const char *key)
{
	size_t i;

	HS_BUG_ON(!key);
	for (i = 0; i < c->nr; i++)
		if (c->e[i]->kind == kind && !strcmp(c->e[i]->key, key)) {
			touch(c, c->e[i]);
			c->hits++;
			return c->e[i];
		}
	c->misses++;
	return NULL;
}

struct hs_cache_entry *hs_cache_entry_new(enum hs_cache_kind kind, const char *key,
					  struct hs_cache_entry *dep)
{
	struct hs_cache_entry *e;

	/* a view borrows from a tree, a tree from a source: never the reverse */
	HS_BUG_ON(!key || kind >= HS_CACHE__KINDS);
	HS_BUG_ON(dep && dep->kind >= kind);
	e = hs_calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->kind = kind;
	e->dep = dep;
	e->key = hs_strdup(key);
	if (!e->key) {
		hs_free(e);
		return NULL;
	}
	if (kind == HS_CACHE_SOURCE)
		hs_source_init(&e->u.source.src);
	return e;
}

/* Remove @victim and, first, every entry that borrows from it. */
static void drop(struct hs_cache *c, struct hs_cache_entry *victim)
{
	size_t i;

	for (i = 0; i < c->nr;) {
		if (c->e[i]->dep == victim) {
			drop(c, c->e[i]);
			i = 0; /* the array changed under us */
			continue;
		}
		i++;
	}
	for (i = 0; i < c->nr; i++)
		if (c->e[i] == victim)
			break;
	if (i == c->nr)
		return;
	memmove(&c->e[i], &c->e[i + 1], (c->nr - i - 1) * sizeof(*c->e));
	c->nr--;
	c->bytes -= victim->bytes;
	hs_cache_entry_free(victim);
}

int hs_cache_add(struct hs_cache *c, struct hs_cache_entry *e)
{
	struct hs_cache_entry *old;
	size_t i, n;

	if (HS_GROW(c->e, c->nr + 1, c->alloc)) {
		hs_cache_entry_free(e);
		return -ENOMEM;
	}
	c->e[c->nr++] = e;
	e->bytes = entry_bytes(e);
	c->bytes += e->bytes;
	touch(c, e);
	for (;;) {
		int over_bytes = c->bytes > c->max_bytes;

		/* the oldest unpinned entry of this kind, or of any kind for memory */
		old = NULL;
		n = 0;
		for (i = 0; i < c->nr; i++) {
			if (c->e[i]->kind != e->kind && !over_bytes)
				continue;
			n += c->e[i]->kind == e->kind;
			if (c->e[i]->used < c->pin && (!old || c->e[i]->used < old->used))
				old = c->e[i];
		}
		if ((n <= c->max[e->kind] && !over_bytes) || !old)
			return 0;
		drop(c, old);
	}
}

int hs_cache_index_view(struct hs_cache_entry *e)
{
	const struct hs_view *v = &e->u.view.v;
	uint32_t *off, *child, *fill;
	size_t i;

	off = hs_calloc(v->nr_rows + 2, sizeof(*off));
	child = hs_malloc((v->nr_rows + 1) * sizeof(*child));
	fill = hs_calloc(v->nr_rows + 1, sizeof(*fill));
	if (!off || !child || !fill) {
		hs_free(off);
		hs_free(child);
		hs_free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < v->nr_rows; i++)
		if (v->rows[i].parent != HS_NO_NODE && v->rows[i].parent < v->nr_rows)
			off[v->rows[i].parent + 1]++;
	for (i = 0; i < v->nr_rows; i++)
		off[i + 1] += off[i];
	for (i = 0; i < v->nr_rows; i++) {
		uint32_t p = v->rows[i].parent;

		if (p != HS_NO_NODE && p < v->nr_rows)
			child[off[p] + fill[p]++] = (uint32_t)i;
	}
	hs_free(fill);
	e->u.view.child_off = off;
	e->u.view.child = child;
	return 0;
}
