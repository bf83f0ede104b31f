/*
 * memviews_live - the live blocks' table out of line (see
 * memviews_live.h): growth and shrinking in place, the map of the
 * blocks that do not fit a slot, and the runs of allocation times.
 *
 * The table owns its slots' memory (a mapping once it is large), the
 * wide blocks and the runs; the views own the table.
 */
#include "analysis/memviews_live.h"
#include "common/alloc.h"
#include "common/log.h"
#include <errno.h>
#include <string.h>

/*
 * A mapped table of @half slots doubled in place (its mapping holds 2
 * @half slots, the upper half zero): each block moves to where a lookup
 * in the larger table looks for it, with no second table. Blocks are
 * taken out and put back in slot order from the first empty slot @s on,
 * so a block is only ever put back over slots whose blocks were put back
 * already (a block's home is at or before its slot, and the slots
 * between are its cluster's, met first; one whose home is in the upper
 * half probes there, among blocks already put back, and wraps only into
 * slots already done). The blocks before @s may belong to a cluster
 * that wrapped from the table's end: they wait in @wrap (the first @s
 * slots' copy) and are put back last.
 */
static void live_spread(struct live *m, size_t half, size_t s, const struct slot *wrap)
{
	size_t i;

	m->cap = 2 * half;
	for (i = s + 1; i < half; i++) {
		struct slot x = m->slot[i];

		if (!x.at)
			continue;
		m->slot[i].at = 0;
		m->slot[live_find(m, x.at & LIVE_AT_MASK)] = x;
	}
	for (i = 0; i < s; i++)
		m->slot[live_find(m, wrap[i].at & LIVE_AT_MASK)] = wrap[i];
}

/*
 * A mapped table twice as large, grown in place (live_spread()): the
 * old and the new table are never held together, and the pages that
 * were the old table's are not cleared again.
 */
#define WRAP_LOCAL 64
static int live_grow_mapped(struct live *m)
{
	size_t half = m->cap, s = 0, bytes = 2 * half * sizeof(struct slot);
	struct slot local[WRAP_LOCAL], *wrap = local;
	void *mem;

	while (m->slot[s].at)
		s++;
	if (s > WRAP_LOCAL && !(wrap = hs_malloc(s * sizeof(*wrap))))
		return -ENOMEM;
	/* (a table whose halvings could not cut its mapping has room in it
	 * already, the upper half zero: hs_map_shrink()) */
	if (bytes > m->mapped) {
		mem = hs_map_grow(m->mem, m->mapped, bytes);
		if (!mem) {
			if (wrap != local)
				hs_free(wrap);
			return -ENOMEM;
		}
		m->mem = mem;
		m->slot = mem;
		m->mapped = bytes;
	}
	memcpy(wrap, m->slot, s * sizeof(*wrap));
	memset(m->slot, 0, s * sizeof(*wrap));
	live_spread(m, half, s, wrap);
	if (wrap != local)
		hs_free(wrap);
	return 0;
}

/*
 * Twice the slots (256 at first). A table of HS_HUGE_PAGE bytes or more
 * is a mapping (hs_map_zeroed()) and grows in place from then on; a
 * smaller one comes from calloc and its blocks move to a new one.
 */
int hs__live_grow(struct live *m)
{
	size_t cap = m->cap ? 2 * m->cap : 256, j, bytes = cap * sizeof(struct slot);
	struct slot *old = m->slot, *slot;
	size_t old_cap = m->cap, mapped = 0;
	void *old_mem = m->mem;

	if (m->mapped)
		return live_grow_mapped(m);
	if (bytes >= HS_HUGE_PAGE) {
		slot = hs_map_zeroed(bytes);
		mapped = bytes;
	} else {
		slot = hs_calloc(cap, sizeof(*slot));
	}
	if (!slot)
		return -ENOMEM;
	m->slot = slot;
	m->mem = slot;
	m->mapped = mapped;
	m->cap = cap;
	for (j = 0; j < old_cap; j++)
		if (old[j].at)
			m->slot[live_find(m, old[j].at & LIVE_AT_MASK)] = old[j];
	hs_free(old_mem);
	return 0;
}

/*
 * live_sparse()'s halving: the blocks of the lower half stay (a block's
 * home there is the same), those of the upper half and of the cluster
 * that wrapped to the start (the first @s slots: their homes move) are
 * put back into it. Never below HS_HUGE_PAGE bytes (a smaller table is
 * not a mapping). When the copy of the wrapped blocks cannot be had, the
 * table stays as it is.
 */
void hs__live_shrink(struct live *m)
{
	size_t cap = m->cap, half = cap / 2, s = 0, i;
	struct slot local[WRAP_LOCAL], *wrap = local;

	while (m->slot[s].at)
		s++;
	if (s > WRAP_LOCAL && !(wrap = hs_malloc(s * sizeof(*wrap))))
		return;
	memcpy(wrap, m->slot, s * sizeof(*wrap));
	memset(m->slot, 0, s * sizeof(*wrap));
	m->cap = half;
	for (i = half; i < cap; i++)
		if (m->slot[i].at)
			m->slot[live_find(m, m->slot[i].at & LIVE_AT_MASK)] = m->slot[i];
	for (i = 0; i < s; i++)
		m->slot[live_find(m, wrap[i].at & LIVE_AT_MASK)] = wrap[i];
	if (wrap != local)
		hs_free(wrap);
	m->mapped = hs_map_shrink(m->mem, m->mapped, half * sizeof(struct slot));
}

/* --- the blocks that do not fit a slot ------------------------------------------- */

/* @a's block @b into the map, its room reserved. */
static void wide_add(struct live *m, uint64_t a, const struct block *b)
{
	size_t idx = m->nr_wide++;
	int r;

	m->wide[idx].addr = a;
	m->wide[idx].b = *b;
	r = hs_u64map_put(&m->wide_at, a, idx, NULL);
	HS_BUG_ON(r != 0); /* (a new key, room reserved) */
}

/*
 * Put @b at @a, a block that does not fit a slot or an address that
 * cannot be a slot's: it goes to the map (its address's slot, when it
 * can have one, says SIZE_WIDE) and replaces the block live at @a,
 * wherever that was. live_replace()'s return.
 */
int hs__live_wide_replace(struct live *m, uint64_t a, const struct block *b,
			  struct block *old)
{
	struct slot *s = NULL;
	uint64_t idx, at = a >> LIVE_AT_SHIFT;

	if (live_packs_addr(a)) {
		if (live_full(m) && hs__live_grow(m))
			return -ENOMEM;
		s = &m->slot[live_find(m, at)];
	}
	if ((!s || slot_wide(s)) && m->nr_wide && hs_u64map_get(&m->wide_at, a, &idx)) {
		/* (in the map already: replaced there) */
		if (old)
			*old = m->wide[idx].b;
		m->wide[idx].b = *b;
		return 1;
	}
	/* (room first: nothing changes when there is none) */
	if (HS_GROW(m->wide, m->nr_wide + 1, m->alloc_wide) ||
	    hs_u64map_reserve(&m->wide_at, m->nr_wide + 1))
		return -ENOMEM;
	wide_add(m, a, b);
	if (s && s->at) {
		/* a slot's block: the slot now says where its successor is */
		if (old)
			slot_block(s, old);
		s->at = at | SIZE_WIDE << LIVE_AT_BITS;
		s->id = 0;
		return 1;
	}
	if (s) {
		s->at = at | SIZE_WIDE << LIVE_AT_BITS;
		s->id = 0;
		m->used++;
	}
	m->n++;
	return 0;
}

/*
 * Remove @a from the map (its slot, if it has one, stays: the caller's):
 * 1 with its block in *@old, or 0.
 */
int hs__live_wide_del(struct live *m, uint64_t a, struct block *old)
{
	uint64_t idx;
	size_t last;
	int r;

	if (!hs_u64map_del(&m->wide_at, a, &idx))
		return 0;
	*old = m->wide[idx].b;
	last = --m->nr_wide;
	if (idx != last) {
		m->wide[idx] = m->wide[last];
		r = hs_u64map_put(&m->wide_at, m->wide[idx].addr, idx, NULL);
		HS_BUG_ON(r != 1); /* (a key that was there: no room needed) */
	}
	return 1;
}

/* --- the runs of allocation times ------------------------------------------------- */

/* The index of the run of event number @ord (at least the first run's). */
static size_t run_index(const struct runs *r, uint64_t ord)
{
	size_t lo = 0, n = r->n;

	/* (the last run whose first event is at most @ord, without branches
	 * the processor would have to guess) */
	while (n > 1) {
		size_t half = n / 2;

		lo = r->run[lo + half].first <= ord ? lo + half : lo;
		n -= half;
	}
	return lo;
}

int64_t hs__live_time_search(struct runs *r, uint64_t ord, uint64_t *first)
{
	size_t i = r->hint;

	/* (the run found last, or the one after it, else a search) */
	if (i + 1 < r->n && r->run[i].first <= ord) {
		if (ord >= r->run[i + 1].first) {
			i++;
			if (i + 1 < r->n && ord >= r->run[i + 1].first)
				i = run_index(r, ord);
		}
	} else {
		i = run_index(r, ord);
	}
	r->hint = i;

	if (first)
		*first = r->run[i].first;
	return r->run[i].time;
}

/*
 * The runs that no live block is in go (the last one stays: the next
 * allocation may be of its time): a trace whose allocations read the
 * clock each (--sample-bytes) starts a run at nearly every one, and the
 * runs would grow with the trace. Done when the runs have doubled since
 * the last time, so each costs a look at the table per run added. When
 * the mark bits cannot be had, the runs stay.
 */
#define RUNS_SLACK 4096
static void runs_prune(struct live *m)
{
	struct runs *r = &m->runs;
	uint64_t *keep = hs_calloc((r->n + 63) / 64, sizeof(*keep));
	struct block b;
	size_t i = 0, k = 0, at;

	if (keep) {
		while (live_next(m, &i, &b)) {
			at = run_index(r, b.ord);
			keep[at / 64] |= UINT64_C(1) << (at % 64);
		}
		keep[(r->n - 1) / 64] |= UINT64_C(1) << ((r->n - 1) % 64);
		for (i = 0; i < r->n; i++)
			if (keep[i / 64] >> (i % 64) & 1)
				r->run[k++] = r->run[i];
		r->n = k;
		r->hint = 0;
		hs_free(keep);
	}
	r->prune_at = 2 * r->n + RUNS_SLACK;
}

/* A new run from event number @ord on, at @time: 0 or -ENOMEM. */
int hs__live_new_run(struct live *m, uint64_t ord, int64_t time)
{
	struct runs *r = &m->runs;

	if (r->n >= r->prune_at && r->n)
		runs_prune(m);
	if (r->n == r->alloc) {
		size_t want = r->alloc ? 2 * r->alloc : 64;
		struct run *run = hs_realloc(r->run, want * sizeof(*run));

		if (!run)
			return -ENOMEM;
		r->run = run;
		r->alloc = want;
	}
	if (!r->prune_at)
		r->prune_at = RUNS_SLACK;
	HS_BUG_ON(r->n && ord < r->run[r->n - 1].first);
	r->run[r->n].first = ord;
	r->run[r->n].time = time;
	r->n++;
	return 0;
}

void live_release(struct live *m)
{
	if (m->mapped)
		hs_map_free(m->mem, m->mapped);
	else
		hs_free(m->mem);
	hs_free(m->wide);
	hs_u64map_release(&m->wide_at);
	hs_free(m->runs.run);
	memset(m, 0, sizeof(*m));
}
