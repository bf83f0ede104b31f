#ifndef HS_ANALYSIS_MEMVIEWS_LIVE_H
#define HS_ANALYSIS_MEMVIEWS_LIVE_H
/*
 * memviews_live - the memory views' table of live blocks: address -> the
 * block's allocation (its event number, size and stack key), and each
 * block's time found from its event number. Used by the views' passes
 * (memviews.c) and its unit test; not for use elsewhere.
 *
 * A slot is 16 bytes, four to a cache line: an address that is a
 * multiple of 8 below 2^47 (shifted by 3, 44 bits) with a size below
 * 2^20 - 1 (20 bits), and an event number below 2^40 with a key below
 * 2^24. A block that does not fit (a size of a MiB or more, a long
 * trace's event numbers, a key past 2^24) is kept whole in a map by
 * address beside the slots (`wide`), its slot's size SIZE_WIDE; a block
 * whose address cannot be a slot's (unaligned, 2^47 or more) is kept
 * there with no slot, and only those addresses are looked up in the map
 * without a slot's word. So the map, nearly always empty, costs the
 * usual blocks nothing. Times are not in
 * the slots: allocations are recorded at a clock of a millisecond, so
 * many events share one, and the table keeps the event number where each
 * run of allocations at one time begins (`runs`), of which a block's
 * time is found by a binary search. Runs no live block is in any more
 * go once they outnumber the live blocks (runs_prune()), so the runs are
 * bounded by the live blocks, however long the trace.
 *
 * Open addressing with linear probing, deletion by shifting back; a
 * large table is a mapping that doubles and halves in place
 * (memviews_live.c). Hot operations are inline; growth, the wide map
 * and the runs' upkeep are out of line.
 *
 * Errors: the functions that allocate return -ENOMEM (the table as it
 * was, but for the runs, which may have one more). Not thread-safe.
 */
#include "common/alloc.h"
#include "common/u64map.h"
#include <stddef.h>
#include <stdint.h>

/* A live block's allocation (its time: live_time()). */
struct block {
	uint64_t ord;  /* its event's place in the stream, from 1 */
	uint64_t size; /* bytes */
	uint32_t key;  /* its stack key */
};

#define LIVE_AT_SHIFT 3	  /* addresses in slots are multiples of 8 ... */
#define LIVE_AT_BITS 44	  /* ... below 2^47 */
#define LIVE_SIZE_BITS 20 /* the rest of the first word */
#define LIVE_ORD_BITS 40
#define LIVE_KEY_BITS 24 /* the rest of the second word */
#define LIVE_AT_MASK ((UINT64_C(1) << LIVE_AT_BITS) - 1)
#define SIZE_WIDE ((UINT64_C(1) << LIVE_SIZE_BITS) - 1) /* the block is in wide */
#define LIVE_ORD_MASK ((UINT64_C(1) << LIVE_ORD_BITS) - 1)

struct slot {
	uint64_t at; /* address >> 3 | size << 44; 0: empty */
	uint64_t id; /* ord | key << 40 (SIZE_WIDE: 0) */
};

/* A block that does not fit a slot, with its address. */
struct wide_block {
	uint64_t addr;
	struct block b;
};

/* Runs of allocations at one time, by increasing first event number. */
struct runs {
	struct run {
		uint64_t first; /* the event number of its first allocation */
		int64_t time;
	} * run;
	size_t n, alloc;
	size_t prune_at; /* the runs no block is in go when there are this many */
	size_t hint; /* the run found last (python3's exit frees in allocation order) */
};

struct live {
	struct slot *slot;
	void *mem;     /* what holds the slots */
	size_t mapped; /* its bytes when hs_map_zeroed() gave it, else 0 (hs_calloc()) */
	size_t cap;    /* slots: 0 or a power of two */
	size_t used;   /* slots in use (SIZE_WIDE ones too) */
	size_t n;      /* blocks live: the slots' and the wide ones */
	struct wide_block *wide;
	size_t nr_wide, alloc_wide;
	struct hs_u64map wide_at; /* address -> index in wide */
	struct runs runs;
};

/* A cheap mix of an address (aligned: the low bits say little). */
static inline size_t live_hash(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdull;
	return (size_t)(a ^ (a >> 33));
}

/* Can @a be a slot's address? (0 is never live: an empty slot's.) */
static inline int live_packs_addr(uint64_t a)
{
	return a && !(a & ((1u << LIVE_AT_SHIFT) - 1)) &&
	       !(a >> (LIVE_AT_BITS + LIVE_AT_SHIFT));
}

/* Does block @b (at an address that can be a slot's) fit a slot? */
static inline int live_packs(const struct block *b)
{
	return b->size < SIZE_WIDE && !(b->ord >> LIVE_ORD_BITS) &&
	       !(b->key >> LIVE_KEY_BITS);
}

static inline int slot_wide(const struct slot *s)
{
	return s->at >> LIVE_AT_BITS == SIZE_WIDE;
}

/* The slot of packed address @at: its block's, or the empty one where it goes. */
static inline size_t live_find(const struct live *m, uint64_t at)
{
	size_t mask = m->cap - 1, i = live_hash(at) & mask;

	while (m->slot[i].at && (m->slot[i].at & LIVE_AT_MASK) != at)
		i = (i + 1) & mask;
	return i;
}

static inline void slot_block(const struct slot *s, struct block *b)
{
	b->ord = s->id & LIVE_ORD_MASK;
	b->key = (uint32_t)(s->id >> LIVE_ORD_BITS);
	b->size = s->at >> LIVE_AT_BITS;
}

static inline void slot_set(struct slot *s, uint64_t at, const struct block *b)
{
	s->at = at | b->size << LIVE_AT_BITS;
	s->id = b->ord | (uint64_t)b->key << LIVE_ORD_BITS;
}

/*
 * Ask for @a's home slot ahead of its lookup, and the cache line after
 * its own: the slots are read at random, and a pass looks up every
 * event's address in turn. A lookup or a free goes on past the home
 * line often enough to want the next one too (not for a table of less
 * than LIVE_FAR slots, in the core's own cache). For a free the heap
 * pass asks for two lines more (live_prefetch_lines()): its shifting
 * back reads to the end of the block's cluster, and those loads were
 * half of the pass's stalls on python3. A macro: GCC takes a function
 * that only prefetches for one without effects and drops the calls to
 * it (ipa-pure-const).
 */
#define LIVE_AHEAD 8
#define LIVE_FAR (((size_t)2 << 20) / sizeof(struct slot)) /* 2 MB */
#define LIVE_LINE (64 / sizeof(struct slot))		   /* slots a line */
#define live_prefetch(m, a) live_prefetch_lines(m, a, 0)
#define live_prefetch_lines(m, a, more)                                                  \
	do {                                                                             \
		const struct live *m_ = (m);                                             \
		if (m_->cap) {                                                           \
			size_t k_ = m_->cap - 1;                                         \
			size_t h_ = live_hash((a) >> LIVE_AT_SHIFT) & k_;                \
			__builtin_prefetch(&m_->slot[h_]);                               \
			if (m_->cap >= LIVE_FAR) {                                       \
				__builtin_prefetch(&m_->slot[(h_ + LIVE_LINE) & k_]);    \
				if (more) {                                              \
					__builtin_prefetch(                              \
					    &m_->slot[(h_ + 2 * LIVE_LINE) & k_]);       \
					__builtin_prefetch(                              \
					    &m_->slot[(h_ + 3 * LIVE_LINE) & k_]);       \
				}                                                        \
			}                                                                \
		}                                                                        \
	} while (0)

/* Out of line (memviews_live.c). */
HS_MUST_CHECK int hs__live_grow(struct live *m);
void hs__live_shrink(struct live *m);
HS_MUST_CHECK int hs__live_new_run(struct live *m, uint64_t ord, int64_t time);
int hs__live_wide_replace(struct live *m, uint64_t a, const struct block *b,
			  struct block *old);
int hs__live_wide_del(struct live *m, uint64_t a, struct block *old);
int64_t hs__live_time_search(struct runs *r, uint64_t ord, uint64_t *first);

/*
 * Is the table too full for one more block? At most half full while it
 * is small (LIVE_SMALL slots, 4 MB: probes stay short where the table
 * is in the caches anyway), three quarters once it is larger, where its
 * memory is what counts and a lookup's cost is its first cache miss.
 */
#define LIVE_SMALL ((size_t)1 << 18)
static inline int live_full(const struct live *m)
{
	return m->cap <= LIVE_SMALL ? 2 * (m->used + 1) > m->cap
				    : 4 * (m->used + 1) > 3 * m->cap;
}

/*
 * A mapped table halved in place once it is a quarter full (an eighth
 * when the half is LIVE_SMALL slots or fewer): python3's exit frees its
 * 1.4M blocks, and the table's pages go back as it empties.
 */
static inline int live_sparse(const struct live *m)
{
	size_t half = m->cap / 2;

	return m->mapped && half * sizeof(struct slot) >= HS_HUGE_PAGE &&
	       (half > LIVE_SMALL ? 4 * m->used < m->cap : 8 * m->used < m->cap);
}

/*
 * Put @b, allocated at @time, at @a; when a block was live there
 * already, 1 with it in *@old (when @old is not NULL). Event numbers
 * never go down from one put to the next. Returns 0, 1 or -ENOMEM.
 * Address 0 is never live: nothing is put there (0).
 */
static inline int live_replace(struct live *m, uint64_t a, const struct block *b,
			       int64_t time, struct block *old)
{
	struct slot *s;
	uint64_t at;

	if (!a)
		return 0;
	/* (before the old block goes: runs_prune() keeps its run) */
	if (__builtin_expect(!m->runs.n || m->runs.run[m->runs.n - 1].time != time, 0) &&
	    hs__live_new_run(m, b->ord, time))
		return -ENOMEM;
	if (__builtin_expect(!live_packs_addr(a) || !live_packs(b), 0))
		return hs__live_wide_replace(m, a, b, old);
	if (live_full(m) && hs__live_grow(m))
		return -ENOMEM;
	at = a >> LIVE_AT_SHIFT;
	s = &m->slot[live_find(m, at)];
	if (!s->at) {
		slot_set(s, at, b);
		m->used++;
		m->n++;
		return 0;
	}
	if (__builtin_expect(slot_wide(s), 0)) {
		struct block w;

		/* (the block there did not fit: it goes from the map) */
		hs__live_wide_del(m, a, &w);
		if (old)
			*old = w;
	} else if (old) {
		slot_block(s, old);
	}
	slot_set(s, at, b);
	return 1;
}

static inline int live_put(struct live *m, uint64_t a, const struct block *b,
			   int64_t time)
{
	int err = live_replace(m, a, b, time, NULL);

	return err < 0 ? err : 0;
}

static inline int live_has(const struct live *m, uint64_t a)
{
	if (!m->n || !a)
		return 0;
	if (live_packs_addr(a))
		return m->used && m->slot[live_find(m, a >> LIVE_AT_SHIFT)].at;
	return m->nr_wide && hs_u64map_has(&m->wide_at, a);
}

/* Slot @i (in use) empties: the slots after it in its cluster shift back. */
static inline void live_remove_slot(struct live *m, size_t i)
{
	size_t mask = m->cap - 1, j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!m->slot[j].at)
			break;
		home = live_hash(m->slot[j].at & LIVE_AT_MASK) & mask;
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].at = 0;
	m->used--;
}

/*
 * Remove @a; 1 with its block in *@b, or 0 when it is not live. The
 * block's time stays known (live_time()) until the next put.
 */
static inline int live_del(struct live *m, uint64_t a, struct block *b)
{
	size_t i;

	if (!m->n || !a)
		return 0;
	if (__builtin_expect(!live_packs_addr(a), 0)) {
		if (!m->nr_wide || !hs__live_wide_del(m, a, b))
			return 0;
		m->n--;
		return 1;
	}
	if (!m->used)
		return 0;
	i = live_find(m, a >> LIVE_AT_SHIFT);
	if (!m->slot[i].at)
		return 0;
	if (__builtin_expect(slot_wide(&m->slot[i]), 0))
		hs__live_wide_del(m, a, b);
	else
		slot_block(&m->slot[i], b);
	live_remove_slot(m, i);
	m->n--;
	if (__builtin_expect(live_sparse(m), 0))
		hs__live_shrink(m);
	return 1;
}

/*
 * The time of the allocation of event number @ord, a block live or one
 * taken out since the last put; *@first (when not NULL) is the first
 * event number of its run (two blocks of one time share it when
 * nothing of another time was put between them).
 */
static inline int64_t live_run(struct live *m, uint64_t ord, uint64_t *first)
{
	struct runs *r = &m->runs;

	if (__builtin_expect(ord >= r->run[r->n - 1].first, 1)) {
		if (first)
			*first = r->run[r->n - 1].first;
		return r->run[r->n - 1].time;
	}
	return hs__live_time_search(r, ord, first);
}

static inline int64_t live_time(struct live *m, uint64_t ord)
{
	return live_run(m, ord, NULL);
}

/*
 * The table's blocks one by one, in no order: *@i from 0; 1 with the
 * next one in *@b, or 0 once all were seen.
 */
static inline int live_next(const struct live *m, size_t *i, struct block *b)
{
	for (; *i < m->cap; ++*i)
		if (m->slot[*i].at && !slot_wide(&m->slot[*i])) {
			slot_block(&m->slot[(*i)++], b);
			return 1;
		}
	if (*i - m->cap < m->nr_wide) {
		*b = m->wide[*i - m->cap].b;
		++*i;
		return 1;
	}
	return 0;
}

/* Everything freed; @m is empty and usable afterwards. */
void live_release(struct live *m);
#endif
