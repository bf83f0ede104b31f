/*
 * modmap - run-time address ranges -> owner, for module membership and
 * perf-map (JIT) entries.
 *
 * Ranges are kept in one array, sorted by start on the first query after
 * an addition. max_end[i] is the largest end among ranges 0..i, so a query
 * walks back from the last range starting at or below the address only
 * while some earlier range could still reach it: one step for the usual
 * disjoint ranges. Among the ranges that contain the address the one added
 * last (largest seq) wins.
 */
#include "symbols/symbols_internal.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void hs_sym_modmap_init(struct hs_sym_modmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hs_sym_modmap_release(struct hs_sym_modmap *m)
{
	hs_free(m->range);
	hs_sym_modmap_init(m);
}

int hs__ranges_add(struct hs_sym_modmap *m, const void *item, uint64_t start,
		   uint64_t end)
{
	struct hs_sym_range *r;

	if (end <= start)
		return -EINVAL;
	if (HS_GROW(m->range, m->nr + 1, m->alloc))
		return -ENOMEM;
	r = &m->range[m->nr];
	r->start = start;
	r->end = end;
	r->max_end = end;
	r->seq = m->nr; /* above every earlier seq, sorted or not */
	r->item = item;
	m->nr++;
	m->sorted = 0;
	return 0;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct hs_sym_range *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void sort_ranges(struct hs_sym_modmap *m)
{
	uint64_t max_end = 0;
	size_t i;

	qsort(m->range, m->nr, sizeof(*m->range), cmp_range);
	for (i = 0; i < m->nr; i++) {
		if (m->range[i].end > max_end)
			max_end = m->range[i].end;
		m->range[i].max_end = max_end;
	}
	m->sorted = 1;
}

const void *hs__ranges_find(struct hs_sym_modmap *m, uint64_t addr)
{
	const struct hs_sym_range *best = NULL;
	size_t lo = 0, hi = m->nr;

	if (!m->nr)
		return NULL;
	if (!m->sorted)
		sort_ranges(m);
	while (lo < hi) { /* lo = first range starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (m->range[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0 && m->range[lo - 1].max_end > addr) {
		const struct hs_sym_range *r = &m->range[--lo];

		if (r->end > addr && (!best || r->seq > best->seq))
			best = r;
	}
	return best ? best->item : NULL;
}

int hs_sym_modmap_add(struct hs_sym_modmap *m, const struct hs_sym_module *mod,
		      uint64_t start, uint64_t end)
{
	return hs__ranges_add(m, mod, start, end);
}

const struct hs_sym_module *hs_sym_modmap_find(struct hs_sym_modmap *m, uint64_t addr)
{
	return hs__ranges_find(m, addr);
}
