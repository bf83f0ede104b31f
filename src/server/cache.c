/*
 * cache - LRU of derived sources, call trees, views and answer texts,
 * shared by the server's worker threads (see cache.h for the locking).
 * A handful of entries: linear scans are cheaper than any index.
 */
#include "server/cache.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

static const char *const kind_names[HS_CACHE__KINDS] = {
    [HS_CACHE_SOURCE] = "source", [HS_CACHE_FILTER] = "filter", [HS_CACHE_TREE] = "tree",
    [HS_CACHE_VIEW] = "view",	  [HS_CACHE_PARTS] = "parts",	[HS_CACHE_TEXT] = "text",
};

void hs_cache_init(struct hs_cache *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->built, NULL);
	c->max[HS_CACHE_SOURCE] = 8;
	c->max[HS_CACHE_FILTER] = 8;
	c->max[HS_CACHE_TREE] = 8;
	c->max[HS_CACHE_VIEW] = 32;
	c->max[HS_CACHE_PARTS] = 32;
	c->max[HS_CACHE_TEXT] = 32;
	c->max_bytes = (size_t)11 << 27;
	c->working = (size_t)128 << 20;
	c->min_bytes = (size_t)256 << 20;
}

/* What the entries may keep: the budget less what it leaves room for. */
static size_t entries_budget(const struct hs_cache *c)
{
	size_t other = c->outside + c->working;

	if (c->max_bytes < other || c->max_bytes - other < c->min_bytes)
		return c->min_bytes < c->max_bytes ? c->min_bytes : c->max_bytes;
	return c->max_bytes - other;
}

/* About the memory a filter result owns: its output, maps and names. */
static size_t filter_bytes(const struct hs_filtered *f)
{
	if (f->borrowed || !f->in)
		return 0;
	return hs_source_memory(&f->out) + (f->identity ? 0 : f->in->nr_stacks * 5) +
	       (f->frame_out ? hs_source_nr_frames(f->in) * sizeof(*f->frame_out) : 0);
}

/* About the memory an entry holds. */
static size_t entry_bytes(const struct hs_cache_entry *e)
{
	const struct hs_calltree *ct = &e->u.tree;
	const struct hs_view *v = &e->u.view.v;

	switch (e->kind) {
	case HS_CACHE_SOURCE:
		return hs_source_memory(&e->u.source.src);
	case HS_CACHE_FILTER:
		return filter_bytes(&e->u.filter);
	case HS_CACHE_TREE:
		/* the nodes' arrays, When histograms, the filter's output and maps */
		return hs_calltree_memory(ct) + filter_bytes(&ct->f);
	case HS_CACHE_VIEW:
		return v->nr_rows * (sizeof(*v->rows) + 2 * sizeof(uint32_t)) +
		       hs_source_memory(&v->names);
	case HS_CACHE_PARTS:
		return hs_view_parts_memory(&e->u.parts);
	case HS_CACHE_TEXT:
		return e->u.text.len;
	default:
		return 0;
	}
}

/* Per stack of a filter result: its output stack and maps. */
#define FILTER_STACK_BYTES (20 + 5)

size_t hs_cache_filter_estimate(const struct hs_stack_source *in)
{
	/* at most an output stack per input stack */
	return (in->nr_stacks + 1) * FILTER_STACK_BYTES;
}

size_t hs_cache_view_estimate(const struct hs_calltree *ct, enum hs_view_kind kind)
{
	size_t rows = hs_source_nr_frames(&ct->f.out) + 1, n;

	if (kind == HS_VIEW_CALLTREE || kind == HS_VIEW_FLAME)
		for (rows = 0, n = 0; n < ct->t.nr; n++)
			rows += !!(ct->t.flags[n] & HS_NODE_ALIVE);
	return rows * (sizeof(struct hs_view_row) + 2 * sizeof(uint32_t));
}

size_t hs_cache_parts_estimate(const struct hs_calltree *ct, enum hs_view_kind kind)
{
	/* ByName keeps its rows; CallTree three numbers a node */
	if (kind == HS_VIEW_CALLTREE)
		return ct->t.nr * 3 * sizeof(uint32_t);
	return (hs_source_nr_frames(&ct->f.out) + 1) * sizeof(struct hs_view_row);
}

void hs_cache_entry_free(struct hs_cache_entry *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case HS_CACHE_SOURCE:
		hs_source_release(&e->u.source.src);
		break;
	case HS_CACHE_FILTER:
		hs_filtered_release(&e->u.filter);
		break;
	case HS_CACHE_TREE:
		hs_calltree_release(&e->u.tree);
		break;
	case HS_CACHE_VIEW:
		hs_view_release(&e->u.view.v);
		hs_free(e->u.view.child_off);
		hs_free(e->u.view.child);
		break;
	case HS_CACHE_PARTS:
		hs_view_parts_release(&e->u.parts);
		break;
	case HS_CACHE_TEXT:
		hs_free(e->u.text.s);
		break;
	default:
		break;
	}
	hs_free(e->msg);
	hs_free(e->key);
	hs_free(e);
}

void hs_cache_release(struct hs_cache *c)
{
	size_t i;

	/* releasing an entry never reads the one it borrows from */
	for (i = 0; i < c->nr; i++) {
		HS_BUG_ON(c->e[i]->refs);
		hs_cache_entry_free(c->e[i]);
	}
	hs_free(c->e);
	pthread_cond_destroy(&c->built);
	pthread_mutex_destroy(&c->lock);
	memset(c, 0, sizeof(*c));
}

/* Mark @e and what it borrows from used. Under the lock. */
static void touch(struct hs_cache *c, struct hs_cache_entry *e)
{
	for (; e; e = e->dep)
		e->used = c->clock;
}

/* Reference @e (and its chain) in @h. Under the lock. 0 or -ENOMEM. */
static int hold(struct hs_cache_hold *h, struct hs_cache_entry *e)
{
	if (HS_GROW(h->e, h->nr + 1, h->alloc))
		return -ENOMEM;
	h->e[h->nr++] = e;
	for (; e; e = e->dep)
		e->refs++;
	return 0;
}

/* Drop one reference of @e's chain; free what is unlisted and unused. */
static void unref(struct hs_cache_entry *e)
{
	struct hs_cache_entry *dep;

	for (; e; e = dep) {
		dep = e->dep;
		HS_BUG_ON(!e->refs);
		if (!--e->refs && !e->listed)
			hs_cache_entry_free(e);
	}
}

/* Remove @victim and, first, every entry that borrows from it. Under the lock. */
static void drop(struct hs_cache *c, struct hs_cache_entry *victim)
{
	size_t i;

	/* nobody holds it, so nobody holds what borrows from it */
	HS_BUG_ON(victim->refs || victim->state != HS_CACHE_READY);
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
	pr_debug("cache: drop %s of %zu KiB (%zu KiB kept)", kind_names[victim->kind],
		 victim->bytes >> 10, c->bytes >> 10);
	hs_cache_entry_free(victim);
}

/*
 * Drop the oldest unreferenced entries while @kind or the bytes (with
 * @room more) are over.
 */
static void evict(struct hs_cache *c, enum hs_cache_kind kind, size_t room)
{
	struct hs_cache_entry *old;
	size_t i, n;

	size_t max = entries_budget(c);

	for (;;) {
		int over_bytes = c->bytes > max || room > max - c->bytes;

		/* the oldest free entry of this kind, or of any kind for memory */
		old = NULL;
		n = 0;
		for (i = 0; i < c->nr; i++) {
			struct hs_cache_entry *x = c->e[i];

			if (x->kind != kind && !over_bytes)
				continue;
			n += x->kind == kind;
			if (!x->refs && x->state == HS_CACHE_READY &&
			    (!old || x->used < old->used))
				old = x;
		}
		if ((n <= c->max[kind] && !over_bytes) || !old)
			return;
		drop(c, old);
	}
}

void hs_cache_hold_release(struct hs_cache *c, struct hs_cache_hold *h)
{
	size_t i;

	pthread_mutex_lock(&c->lock);
	/*
	 * What it held past a count limit goes with the next entry of its
	 * kind; past the memory budget (requests at once hold more) now.
	 */
	for (i = 0; i < h->nr; i++)
		unref(h->e[i]);
	if (c->bytes > entries_budget(c) && h->nr)
		evict(c, h->e[0]->kind, 0);
	pthread_mutex_unlock(&c->lock);
	hs_free(h->e);
	memset(h, 0, sizeof(*h));
}

/* The listed entry of @kind with @key, or NULL. Under the lock. */
static struct hs_cache_entry *find(struct hs_cache *c, enum hs_cache_kind kind,
				   const char *key)
{
	size_t i;

	HS_BUG_ON(!key);
	for (i = 0; i < c->nr; i++)
		if (c->e[i]->kind == kind && !strcmp(c->e[i]->key, key))
			return c->e[i];
	return NULL;
}

struct hs_cache_entry *hs_cache_get(struct hs_cache *c, struct hs_cache_hold *h,
				    enum hs_cache_kind kind, const char *key)
{
	struct hs_cache_entry *e;

	pthread_mutex_lock(&c->lock);
	c->clock++;
	e = find(c, kind, key);
	if (e && (e->state != HS_CACHE_READY || hold(h, e)))
		e = NULL;
	if (e) {
		touch(c, e);
		c->hits++;
	} else {
		c->misses++;
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

struct hs_cache_entry *hs_cache_entry_new(enum hs_cache_kind kind, const char *key,
					  struct hs_cache_entry *dep)
{
	struct hs_cache_entry *e;

	/*
	 * a view borrows from a tree, a tree from a filter result or a
	 * source, a filter result from a source: never the reverse
	 */
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

/* List @e in state @state, referenced in @h. Under the lock. 0 or -ENOMEM. */
static int list(struct hs_cache *c, struct hs_cache_hold *h, struct hs_cache_entry *e,
		enum hs_cache_state state)
{
	/* what it borrows from is held, so it cannot go while @e is built */
	HS_BUG_ON(e->dep && !e->dep->refs);
	if (HS_GROW(c->e, c->nr + 1, c->alloc) || hold(h, e))
		return -ENOMEM;
	e->state = state;
	e->listed = 1;
	c->e[c->nr++] = e;
	c->clock++;
	touch(c, e);
	return 0;
}

/* Make @e ready: count its bytes and drop what is over the limits. Under the lock. */
static void ready(struct hs_cache *c, struct hs_cache_entry *e)
{
	e->state = HS_CACHE_READY;
	e->bytes = entry_bytes(e);
	c->bytes += e->bytes;
	pr_debug("cache: add %s of %zu KiB (%zu KiB kept)", kind_names[e->kind],
		 e->bytes >> 10, c->bytes >> 10);
	evict(c, e->kind, 0);
}

void hs_cache_count_outside(struct hs_cache *c, size_t bytes)
{
	pthread_mutex_lock(&c->lock);
	c->outside += bytes;
	pr_debug("cache: %zu KiB held beside it, %zu KiB for its entries",
		 c->outside >> 10, entries_budget(c) >> 10);
	evict(c, HS_CACHE_SOURCE, 0);
	pthread_mutex_unlock(&c->lock);
}

void hs_cache_make_room(struct hs_cache *c, enum hs_cache_kind kind, size_t bytes)
{
	pthread_mutex_lock(&c->lock);
	evict(c, kind, bytes);
	pthread_mutex_unlock(&c->lock);
}

int hs_cache_add(struct hs_cache *c, struct hs_cache_hold *h, struct hs_cache_entry *e)
{
	int err;

	pthread_mutex_lock(&c->lock);
	HS_BUG_ON(find(c, e->kind, e->key));
	err = list(c, h, e, HS_CACHE_READY);
	if (!err)
		ready(c, e);
	pthread_mutex_unlock(&c->lock);
	if (err)
		hs_cache_entry_free(e);
	return err;
}

int hs_cache_claim(struct hs_cache *c, struct hs_cache_hold *h, enum hs_cache_kind kind,
		   const char *key, struct hs_cache_entry *dep,
		   struct hs_cache_entry **out, struct hs_diag *d)
{
	struct hs_cache_entry *e, *fresh = NULL;
	int err;

	*out = NULL;
	pthread_mutex_lock(&c->lock);
	c->clock++;
	e = find(c, kind, key);
	if (e) {
		err = hold(h, e);
		if (err)
			goto out;
		/* our reference keeps it allocated should its build fail */
		while (e->state == HS_CACHE_BUILDING)
			pthread_cond_wait(&c->built, &c->lock);
		if (e->state == HS_CACHE_FAILED) {
			err = e->err;
			if (e->msg)
				hs_diag_set(d, 0, "%s", e->msg);
			goto out;
		}
		touch(c, e);
		c->hits++;
		*out = e;
		err = 0;
		goto out;
	}
	c->misses++;
	pthread_mutex_unlock(&c->lock);
	/* allocate without the lock; another request may claim the key meanwhile */
	fresh = hs_cache_entry_new(kind, key, dep);
	if (!fresh)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	if (find(c, kind, key)) {
		pthread_mutex_unlock(&c->lock);
		hs_cache_entry_free(fresh);
		return hs_cache_claim(c, h, kind, key, dep, out, d);
	}
	err = list(c, h, fresh, HS_CACHE_BUILDING);
	if (err) {
		hs_cache_entry_free(fresh);
		goto out;
	}
	*out = fresh;
	err = 1;
out:
	pthread_mutex_unlock(&c->lock);
	return err;
}

void hs_cache_publish(struct hs_cache *c, struct hs_cache_entry *e, int err,
		      const struct hs_diag *d)
{
	size_t i;

	pthread_mutex_lock(&c->lock);
	HS_BUG_ON(e->state != HS_CACHE_BUILDING || !e->refs || !e->listed);
	if (!err) {
		ready(c, e);
	} else {
		/* unlisted: freed with its last reference */
		e->state = HS_CACHE_FAILED;
		e->err = err;
		e->msg = d && d->set ? hs_strdup(d->msg) : NULL;
		for (i = 0; i < c->nr && c->e[i] != e; i++)
			;
		HS_BUG_ON(i == c->nr);
		memmove(&c->e[i], &c->e[i + 1], (c->nr - i - 1) * sizeof(*c->e));
		c->nr--;
		e->listed = 0;
	}
	pthread_cond_broadcast(&c->built);
	pthread_mutex_unlock(&c->lock);
}

void hs_cache_counts(struct hs_cache *c, size_t *entries, size_t *hits, size_t *misses)
{
	pthread_mutex_lock(&c->lock);
	*entries = c->nr;
	*hits = c->hits;
	*misses = c->misses;
	pthread_mutex_unlock(&c->lock);
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
