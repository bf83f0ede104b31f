/*
 * memviews - the memory views of a heap trace as stack sources (see
 * memviews.h).
 *
 * One builder turns trace nodes into stacks: a node's frames (its
 * symbols, inlined functions first expanded, or its MODULE!0xOFFSET name)
 * are computed once; the stack of (thread, node) is memoised, and so is
 * the final stack of (base stack, allocation function, size class). Each
 * view is then one pass over the events in time order, with a map of the
 * live blocks where it needs one.
 *
 * The leaks view puts the known exit-time allocations of libc and
 * libstdc++ under a pseudo-frame (HS_EXIT_TIME_FRAME in presets.h) that
 * its default ExcPats leave out: a block is one when one of its
 * allocating frames matches HS_PRESET_EXIT_TIME_ALLOCS. The allocating frames are those
 * nearest the allocation function once the allocator's own
 * (HS_PRESET_HEAP_FOLD) are passed: the first other frame and its callers
 * in the same module, up to a frame of another module. So a block that a
 * dlopen()ed library's constructor allocates is the library's, although
 * the dynamic linker's functions are on its stack.
 */
#include "analysis/memviews_internal.h"
#include "analysis/pattern.h"
#include "analysis/presets.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/hash.h"
#include "model/frame_name.h"
#include "common/idindex.h"
#include "common/u64map.h"
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

static const struct {
	const char *name, *description;
} kinds[HS_MEM__COUNT] = {
    [HS_MEM_ALLOC] = {"alloc", "every allocation, frees ignored"},
    [HS_MEM_NET] = {"net", "allocations minus frees, charged to the allocating "
			   "stack: a time range shows the growth in it"},
    [HS_MEM_LEAKS] = {"leaks", "blocks allocated in the range and still live at "
			       "its end"},
    [HS_MEM_PEAK] = {"peak", "the blocks live when heap in use was highest"},
    [HS_MEM_TEMPORARY] = {"temporary", "allocations freed before their thread "
				       "allocated again"},
    [HS_MEM_MMAP] = {"mmap", "anonymous mappings: mapped minus unmapped bytes"},
    [HS_MEM_CPU] = {"cpu", "CPU samples (run --cpu): ms of CPU time"},
    [HS_MEM_WALL] = {"wall", "wall-clock samples (run --wall): every thread's "
			     "time, CPU_TIME, BLOCKED_TIME or READIED_TIME"},
};

const char *hs_memview_name(enum hs_memview_kind kind)
{
	return (unsigned)kind < HS_MEM__COUNT ? kinds[kind].name : NULL;
}

const char *hs_memview_description(enum hs_memview_kind kind)
{
	return (unsigned)kind < HS_MEM__COUNT ? kinds[kind].description : NULL;
}

int hs_memview_parse(const char *name, enum hs_memview_kind *kind)
{
	int i;

	for (i = 0; i < HS_MEM__COUNT; i++)
		if (!strcmp(name, kinds[i].name)) {
			*kind = (enum hs_memview_kind)i;
			return 0;
		}
	return -EINVAL;
}

int hs_memview_offered(const struct hs_trace *t, enum hs_memview_kind kind)
{
	size_t i;

	if (kind == HS_MEM_CPU)
		return t->sampling.cpu_samples > 0;
	if (kind == HS_MEM_WALL)
		return t->sampling.wall_samples > 0;
	if (t->sampling.present && (t->sampling.flags & 1))
		return 0; /* --no-heap: no heap views */
	if (kind != HS_MEM_MMAP)
		return (unsigned)kind < HS_MEM__COUNT;
	for (i = 0; i < t->nr_events; i++)
		if (t->op[i] == HS_OP_MMAP)
			return 1;
	return 0;
}

json_t *hs_memview_list_json(const struct hs_trace *t)
{
	json_t *a = json_array();
	int i, def = -1;

	if (!a)
		return NULL;
	/* the default: alloc, else the first view offered */
	for (i = 0; i < HS_MEM__COUNT && def < 0; i++)
		if (hs_memview_offered(t, (enum hs_memview_kind)i))
			def = i;
	for (i = 0; i < HS_MEM__COUNT; i++) {
		json_t *o;

		if (!hs_memview_offered(t, (enum hs_memview_kind)i))
			continue;
		o = json_pack("{s:s, s:s, s:b}", "name", kinds[i].name, "description",
			      kinds[i].description, "default", i == def);
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* --- maps ---------------------------------------------------------------- */

/* A live block's allocation. */
struct block {
	uint64_t ord; /* its event's place in the stream */
	int64_t time;
	uint64_t size;
	uint32_t key; /* its stack key */
};

/*
 * The live blocks: address (never 0) -> the block's allocation, open
 * addressing with linear probing. A slot is 32 bytes, so two share a
 * cache line and none straddles one (a lookup at random is one miss): a
 * size of 4 GiB or more is SIZE_BIG in the slot, its value in @big by
 * address (nearly always empty). A large table grows at three quarters
 * full (live_full()), so a block costs 43-85 bytes (32 / load), not the
 * 80-160 of 40-byte slots at most half full.
 */
#define SIZE_BIG UINT32_MAX
struct slot {
	uint64_t addr; /* 0 = empty */
	uint64_t ord;
	int64_t time;
	uint32_t size; /* SIZE_BIG: in big */
	uint32_t key;
};

struct live {
	struct slot *slot;
	void *mem;     /* what holds the slots */
	size_t mapped; /* its bytes when hs_map_zeroed() gave it, else 0 (hs_calloc()) */
	size_t n, cap;
	struct hs_u64map big; /* address -> size, of the slots with SIZE_BIG */
};

/* A cheap mix of an address (aligned: the low bits say little). */
static inline size_t addr_hash(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdull;
	return (size_t)(a ^ (a >> 33));
}

static inline size_t live_find(const struct live *m, uint64_t a)
{
	size_t mask = m->cap - 1, i = addr_hash(a) & mask;

	while (m->slot[i].addr && m->slot[i].addr != a)
		i = (i + 1) & mask;
	return i;
}

/* The block of occupied slot @s. */
static inline void slot_block(const struct live *m, const struct slot *s,
			      struct block *blk)
{
	uint64_t big;

	blk->ord = s->ord;
	blk->time = s->time;
	blk->key = s->key;
	blk->size = s->size;
	if (s->size == SIZE_BIG && hs_u64map_get(&m->big, s->addr, &big))
		blk->size = big;
}

/*
 * Slot @s (its address set) holds @blk from now on; a size of 4 GiB or
 * more goes to @big. 0 or -ENOMEM (then @s is as it was).
 */
static inline int slot_set(struct live *m, struct slot *s, const struct block *blk)
{
	if (blk->size >= SIZE_BIG) {
		if (hs_u64map_put(&m->big, s->addr, blk->size, NULL) < 0)
			return -ENOMEM;
		s->size = SIZE_BIG;
	} else {
		if (s->size == SIZE_BIG)
			hs_u64map_del(&m->big, s->addr, NULL);
		s->size = (uint32_t)blk->size;
	}
	s->ord = blk->ord;
	s->time = blk->time;
	s->key = blk->key;
	return 0;
}

/*
 * Ask for @a's home slot ahead of its lookup, and the cache line after
 * its own: the slots are read at random, and a pass looks up every
 * event's address in turn. A lookup or a free goes on past the home
 * line often enough to want the next one too: on python3's stats, a
 * quarter of the lookups ended in another line than their home slot's,
 * and a free's shifting back read 2.7 slots after the block's (not for
 * a table of less than LIVE_FAR slots, in the core's own cache). For a
 * free the heap pass asks for two lines more (live_prefetch_lines()):
 * its shifting back reads to the end of the block's cluster, and those
 * loads were half of the pass's stalls on python3 (0.91x the CPU of
 * `report --source peak` there). A macro:
 * GCC takes a function that only prefetches for one without effects
 * and drops the calls to it (ipa-pure-const), which it did to this one.
 */
#define LIVE_AHEAD 8
#define LIVE_FAR ((size_t)1 << 16) /* slots (2 MB): the next line too */
#define live_prefetch(m, a) live_prefetch_lines(m, a, 0)
#define live_prefetch_lines(m, a, more)                                                  \
	do {                                                                             \
		const struct live *m_ = (m);                                             \
		if (m_->cap) {                                                           \
			size_t h_ = addr_hash(a) & (m_->cap - 1);                        \
			__builtin_prefetch(&m_->slot[h_]);                               \
			if (m_->cap >= LIVE_FAR) {                                       \
				__builtin_prefetch(&m_->slot[(h_ + 2) & (m_->cap - 1)]); \
				if (more) {                                              \
					__builtin_prefetch(                              \
					    &m_->slot[(h_ + 4) & (m_->cap - 1)]);        \
					__builtin_prefetch(                              \
					    &m_->slot[(h_ + 6) & (m_->cap - 1)]);        \
				}                                                        \
			}                                                                \
		}                                                                        \
	} while (0)

/*
 * @bytes of memory held by *@mem (to be freed with hs_free()); NULL
 * when out of memory. @bytes of LIVE_HUGE or more are asked for in huge
 * pages (a hint the kernel may not take): radix_blocks()' scatter, like
 * the live table's lookups (a mapping, live_grow()), missed the TLB at
 * nearly every block with 4 KiB pages.
 */
#define LIVE_HUGE HS_HUGE_PAGE
static void *huge_alloc(size_t bytes, void **mem)
{
	uintptr_t at;

	if (bytes < LIVE_HUGE)
		return *mem = hs_malloc(bytes);
	*mem = hs_malloc(bytes + LIVE_HUGE);
	if (!*mem)
		return NULL;
	at = ((uintptr_t)*mem + LIVE_HUGE - 1) & ~(uintptr_t)(LIVE_HUGE - 1);
	hs_hint_huge((void *)at, bytes);
	return (void *)at;
}

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

		if (!x.addr)
			continue;
		m->slot[i].addr = 0;
		m->slot[live_find(m, x.addr)] = x;
	}
	for (i = 0; i < s; i++)
		m->slot[live_find(m, wrap[i].addr)] = wrap[i];
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

	while (m->slot[s].addr)
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
 * Twice the slots (256 at first). A table of LIVE_HUGE bytes or more is
 * a mapping (hs_map_zeroed()) and grows in place from then on; a
 * smaller one comes from calloc and its blocks move to a new one.
 */
static int live_grow(struct live *m)
{
	size_t cap = m->cap ? 2 * m->cap : 256, j, bytes = cap * sizeof(struct slot);
	struct slot *old = m->slot, *slot;
	size_t old_cap = m->cap, mapped = 0;
	void *old_mem = m->mem;

	if (m->mapped)
		return live_grow_mapped(m);
	if (bytes >= LIVE_HUGE) {
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
		if (old[j].addr)
			m->slot[live_find(m, old[j].addr)] = old[j];
	hs_free(old_mem);
	return 0;
}

/*
 * Is the table too full for one more block? At most half full while it
 * is small (LIVE_SMALL slots, 8 MB: probes stay short where the table
 * is in the caches anyway), three quarters once it is larger, where its
 * memory is what counts and a lookup's cost is its first cache miss.
 */
#define LIVE_SMALL ((size_t)1 << 18)
static inline int live_full(const struct live *m)
{
	return m->cap <= LIVE_SMALL ? 2 * (m->n + 1) > m->cap
				    : 4 * (m->n + 1) > 3 * m->cap;
}

/*
 * A mapped table halved in place once it is a quarter full (an eighth
 * when the half is LIVE_SMALL slots or fewer, so that it is then at most
 * a quarter full where it grows at half): python3's exit frees its 1.4M
 * blocks while the peak's ghosts of them grow, and the table's pages go
 * back as the ghosts take theirs. The blocks of the lower half stay (a
 * block's home there is the same), those of the upper half and of the
 * cluster that wrapped to the start (the first @s slots: their homes
 * move) are put back into it. Never below LIVE_HUGE bytes (a smaller
 * table is not a mapping). When the copy of the wrapped blocks cannot be
 * had, the table stays as it is.
 */
static inline int live_sparse(const struct live *m)
{
	size_t half = m->cap / 2;

	return m->mapped && half * sizeof(struct slot) >= LIVE_HUGE &&
	       (half > LIVE_SMALL ? 4 * m->n < m->cap : 8 * m->n < m->cap);
}

__attribute__((cold, noinline)) static void live_shrink(struct live *m)
{
	size_t cap = m->cap, half = cap / 2, s = 0, i;
	struct slot local[WRAP_LOCAL], *wrap = local;

	while (m->slot[s].addr)
		s++;
	if (s > WRAP_LOCAL && !(wrap = hs_malloc(s * sizeof(*wrap))))
		return;
	memcpy(wrap, m->slot, s * sizeof(*wrap));
	memset(m->slot, 0, s * sizeof(*wrap));
	m->cap = half;
	for (i = half; i < cap; i++)
		if (m->slot[i].addr)
			m->slot[live_find(m, m->slot[i].addr)] = m->slot[i];
	for (i = 0; i < s; i++)
		m->slot[live_find(m, wrap[i].addr)] = wrap[i];
	if (wrap != local)
		hs_free(wrap);
	m->mapped = hs_map_shrink(m->mem, m->mapped, half * sizeof(struct slot));
}

/*
 * Put @blk at @a; when a block was live there already, 1 with it in
 * *@old (when @old is not NULL). Returns 0, 1 or -ENOMEM.
 */
static inline int live_replace(struct live *m, uint64_t a, const struct block *blk,
			       struct block *old)
{
	struct slot *s;

	if (live_full(m) && live_grow(m))
		return -ENOMEM;
	s = &m->slot[live_find(m, a)];
	if (s->addr) {
		if (old)
			slot_block(m, s, old);
		if (slot_set(m, s, blk))
			return -ENOMEM;
		return 1;
	}
	s->addr = a;
	s->size = 0;
	if (slot_set(m, s, blk)) {
		s->addr = 0;
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

static int live_put(struct live *m, uint64_t a, const struct block *blk)
{
	int err = live_replace(m, a, blk, NULL);

	return err < 0 ? err : 0;
}

static int live_has(const struct live *m, uint64_t a)
{
	return m->cap && a && m->slot[live_find(m, a)].addr == a;
}

/* Remove @a; 1 with its block in *@blk, or 0 when it is not live. */
static inline int live_del(struct live *m, uint64_t a, struct block *blk)
{
	size_t mask, i, j;

	if (!m->n || !a)
		return 0;
	mask = m->cap - 1;
	i = live_find(m, a);
	if (!m->slot[i].addr)
		return 0;
	slot_block(m, &m->slot[i], blk);
	if (m->slot[i].size == SIZE_BIG)
		hs_u64map_del(&m->big, a, NULL);
	m->n--;
	j = i;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!m->slot[j].addr)
			break;
		home = addr_hash(m->slot[j].addr) & mask;
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].addr = 0;
	if (__builtin_expect(live_sparse(m), 0))
		live_shrink(m);
	return 1;
}

static void live_release(struct live *m)
{
	if (m->mapped)
		hs_map_free(m->mem, m->mapped);
	else
		hs_free(m->mem);
	hs_u64map_release(&m->big);
	memset(m, 0, sizeof(*m));
}

/*
 * The table's blocks allocated by event @upto, in its own memory as an
 * array of blocks with room for @room more after them; *@n is their
 * number. A slot and a block are the same size, so the slots are turned
 * into blocks front to back, each one read before any block is written
 * over it. The table is empty afterwards, its memory still its own
 * (live_release() frees the array). NULL when the table's memory cannot hold
 * them (the table as it was). A mapped table that has not room for
 * @room more (it shrank: live_shrink()) grows its mapping past its
 * slots for them; a table that never shrank holds the peak's ghosts as
 * room: they and the blocks still live that are taken were all live at
 * the candidate, in this table.
 */
_Static_assert(sizeof(struct block) == sizeof(struct slot), "a slot becomes a block");
static struct block *live_take(struct live *m, uint64_t upto, size_t room, size_t *n)
{
	struct block *all;
	size_t i, k = 0;

	if (!m->cap)
		return NULL;
	if (m->n + room > m->cap) {
		/* (a table that shrank: its mapping grows past its slots,
		 * unless it could not be cut then) */
		size_t bytes = (m->n + room) * sizeof(struct block);
		void *mem;

		if (!m->mapped)
			return NULL;
		if (bytes > m->mapped) {
			if (!(mem = hs_map_grow(m->mem, m->mapped, bytes)))
				return NULL;
			m->mem = mem;
			m->slot = mem;
			m->mapped = bytes;
		}
	}
	all = (struct block *)m->slot;
	for (i = 0; i < m->cap; i++) {
		struct slot s = m->slot[i];
		struct block blk;

		if (!s.addr || s.ord > upto)
			continue;
		slot_block(m, &s, &blk);
		all[k++] = blk;
	}
	*n = k;
	m->slot = NULL;
	m->n = m->cap = 0;
	hs_u64map_release(&m->big);
	return all;
}

/* --- the views -------------------------------------------------------------- */

/*
 * A view's pass over the events, the same for a loaded trace and a
 * streamed one: samples are emitted with stack keys, one sample per key
 * and time (events of one stack at one clock tick add up).
 */
/*
 * The peak in one pass: the heap in use after each event, and the best
 * candidate so far, the moment after event number @upto. The blocks live
 * at that moment are those still live now that were allocated by then,
 * and the "ghosts": blocks live then that went since (each one at most
 * once, so they are at most the blocks live at the candidate). A higher
 * candidate forgets the ghosts, which were all gone by then.
 */
/*
 * A ghost: a block of 24 bytes rather than 32 (python3's exit frees its
 * 1.4M blocks after the peak), a size of 4 GiB or more SIZE_BIG here and
 * its value in the peak's @big_ghosts by ord.
 */
struct ghost {
	uint64_t ord;
	int64_t time;
	uint32_t size;
	uint32_t key;
};

struct peak {
	double in_use, bytes; /* heap in use now, and at the candidate */
	int64_t ns;	      /* the candidate's time */
	uint64_t upto;	      /* the candidate follows events [1, upto] */
	size_t nr_keys;	      /* keys met by then */
	int have, done;	      /* a candidate; the range ended */
	struct ghost *ghost;
	size_t nr_ghosts, alloc_ghosts;
	size_t max_ghosts;	     /* blocks live at the candidate: no more ghosts */
	struct hs_u64map big_ghosts; /* ord -> size, of the ghosts with SIZE_BIG */
};

/*
 * Live anonymous mappings: sorted, disjoint [start, end). A mapping that
 * munmap cut in pieces counts as one block until its last piece goes.
 */
struct mapping {
	uint64_t start, end;
	uint32_t key;
	uint32_t id; /* the mmap it came from */
};

struct maps {
	struct mapping *m;
	size_t n, alloc;
	uint32_t *pieces; /* id -> live pieces */
	size_t nr_ids, alloc_ids;
};

struct view {
	const struct hs_trace *t;
	const struct hs_memview_opts *o;
	struct hs_stack_source *out;
	struct hs_memview_info *info;
	struct keytab keys;
	struct live live;
	double lo, hi; /* the range in ns (leaks, peak) */
	uint64_t ord;  /* events seen */
	/* temporary: per thread index, the ord of its latest allocation (0:
	 * freed already) */
	uint64_t *last_ord;
	size_t nr_last;
	struct peak peak;
	struct maps maps;
	/* the block the latest event took out of the live ones (peak) */
	int gone;
	uint64_t gone_size;
	/*
	 * A peak view without a range can also give the alloc, leaks and
	 * temporary views of the same events (hs_memview_pass_new_heap()):
	 * they share its keys and live blocks. NULL: not wanted.
	 */
	struct side {
		struct hs_stack_source *out;
		size_t *last; /* key -> its latest sample here, or SIZE_MAX */
		size_t nr_last;
		struct hs_memview_opts o;
	} side[HS_MEM__COUNT];
	/*
	 * The heap views' default FoldPats (heap_fold()), found once for
	 * the view and its side outputs: it depends on the trace and on
	 * options they share, not on the kind. NULL: not yet.
	 */
	char *fold;
	/* heap_fold() under way on a thread of its own (fold_start()) */
	struct fold_job *folding;
};

static inline double weight(const struct hs_trace *t, uint64_t size)
{
	return t->info.sample_bytes ? hs_trace_weight(t, size) : 1.0;
}

/* Bit length of @v: the k of the size class "Alloc < 2^k". */
static unsigned size_class(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

static inline int event_key(struct view *v, const struct hs_trace_event *e, uint32_t *key)
{
	unsigned cat = 0;

	if (v->o->large_threshold && e->size >= v->o->large_threshold)
		cat |= 1;
	if (v->o->size_classes)
		cat |= size_class(e->size) << 1;
	return key_of(&v->keys, e->node, e->thread, (unsigned)e->fn << 8 | cat, key);
}

/* A sample of @key: added to the key's latest one when that has the same time. */
static inline int emit_into(struct hs_stack_source *src, size_t *last, int64_t time,
			    double bytes, double count, uint32_t key)
{
	size_t i = last[key];

	if (i != SIZE_MAX && src->time[i] == time) {
		src->metric[i] += bytes;
		src->count[i] += count;
		return 0;
	}
	if (src->nr_samples == src->alloc_samples && hs_source_reserve_samples(src, 1))
		return -ENOMEM;
	/* the stack column holds the key until the keys become stacks */
	i = src->nr_samples++;
	src->time[i] = time;
	src->metric[i] = bytes;
	src->count[i] = count;
	src->stack[i] = key;
	last[key] = i;
	return 0;
}

static inline int emit(struct view *v, int64_t time, double bytes, double count,
		       uint32_t key)
{
	return emit_into(v->out, v->keys.last, time, bytes, count, key);
}

/* A sample of side output @kind (its latest samples by key grow with the keys). */
static int emit_side(struct view *v, enum hs_memview_kind kind, int64_t time,
		     double bytes, double count, uint32_t key)
{
	struct side *sd = &v->side[kind];

	if (key >= sd->nr_last) {
		size_t n = v->keys.alloc > key ? v->keys.alloc : (size_t)key + 1, i;
		size_t *last = hs_realloc(sd->last, n * sizeof(*last));

		if (!last)
			return -ENOMEM;
		for (i = sd->nr_last; i < n; i++)
			last[i] = SIZE_MAX;
		sd->last = last;
		sd->nr_last = n;
	}
	return emit_into(sd->out, sd->last, time, bytes, count, key);
}

static int emit_block(struct view *v, const struct block *blk, double sign, int64_t time)
{
	double w = weight(v->t, blk->size);

	return emit(v, time, sign * (double)blk->size * w, sign * w, blk->key);
}

static int put_block(struct view *v, const struct hs_trace_event *e, uint32_t key)
{
	struct block blk = {.ord = v->ord, .time = e->time, .size = e->size, .key = key};

	return live_put(&v->live, e->addr, &blk);
}

/*
 * A CPU or wall sample: over [time - duration, time], so its sample time
 * is the start and its metric the duration in ms (TimeMetric).
 */
static int view_sample(struct view *v, const struct hs_trace_event *e)
{
	unsigned cat = 0;
	uint32_t key;
	int err;

	if (e->op != HS_OP_SAMPLE)
		return 0;
	if (v->o->kind == HS_MEM_CPU) {
		if (e->addr != HS_SAMPLE_CPU)
			return 0;
	} else if (e->addr == HS_SAMPLE_WALL_CPU || e->addr == HS_SAMPLE_WALL_BLOCKED ||
		   e->addr == HS_SAMPLE_WALL_READY) {
		cat = (unsigned)e->addr; /* 1, 2, 3: key_stack()'s state[] */
	} else {
		return 0;
	}
	err = key_of(&v->keys, e->node, e->thread, (unsigned)HS_TAG_SAMPLE << 8 | cat,
		     &key);
	if (!err)
		err = emit(v, e->time - (int64_t)e->size, (double)e->size / 1e6, 1, key);
	return err;
}

/*
 * temporary: a block freed before its thread made another allocation. A
 * sampled trace's collector saw every allocation and marked those frees
 * (FREE_TEMPORARY); without the marks (traces before 1.5) the test is
 * made on the recorded allocations only, which overestimates. The
 * temporary view and the peak pass's side output both ask here.
 */
static int temporary_marked(const struct view *v)
{
	const struct hs_trace_info *info = &v->t->info;

	return info->sample_bytes && (info->flags & HS_PROC_TEMPORARY_MARKS);
}

/* Allocation @e (event number v->ord) is its thread's latest. */
static int temporary_alloc(struct view *v, const struct hs_trace_event *e)
{
	uint32_t th = e->thread;

	if (temporary_marked(v) || th == HS_TRACE_NONE)
		return 0;
	if (th >= v->nr_last) {
		size_t had = v->nr_last;

		if (HS_GROW(v->last_ord, (size_t)th + 1, v->nr_last))
			return -ENOMEM;
		memset(v->last_ord + had, 0, (v->nr_last - had) * sizeof(*v->last_ord));
	}
	v->last_ord[th] = v->ord;
	return 0;
}

/* Free @e took live block @blk: was it a temporary allocation? */
static int temporary_free(struct view *v, const struct hs_trace_event *e,
			  const struct block *blk)
{
	uint32_t th = e->thread;

	if (temporary_marked(v))
		return e->fn == HS_TAG_FREE_TEMPORARY;
	if (th >= v->nr_last || v->last_ord[th] != blk->ord)
		return 0;
	v->last_ord[th] = 0;
	return 1;
}

static int temporary_event(struct view *v, const struct hs_trace_event *e)
{
	struct block blk;
	uint32_t key;
	int err;

	if (e->op == HS_OP_ALLOC) {
		err = event_key(v, e, &key);
		if (!err)
			err = put_block(v, e, key);
		return err ? err : temporary_alloc(v, e);
	}
	if (e->op != HS_OP_FREE || !live_del(&v->live, e->addr, &blk))
		return 0;
	return temporary_free(v, e, &blk) ? emit_block(v, &blk, 1, blk.time) : 0;
}

static int peak_event(struct view *v, const struct hs_trace_event *e);
static int mmap_event(struct view *v, const struct hs_trace_event *e);

static int view_event(struct view *v, const struct hs_trace_event *e)
{
	struct block blk;
	uint32_t key;
	int err = 0;

	v->ord++;
	if (is_sample_view(v->o->kind))
		return view_sample(v, e);
	switch (v->o->kind) {
	case HS_MEM_ALLOC:
		if (e->op != HS_OP_ALLOC)
			return 0;
		err = event_key(v, e, &key);
		if (!err)
			err = emit(v, e->time, (double)e->size * weight(v->t, e->size),
				   weight(v->t, e->size), key);
		return err;
	case HS_MEM_NET:
		if (e->op == HS_OP_ALLOC) {
			double w = weight(v->t, e->size);
			struct block nb;

			err = event_key(v, e, &key);
			if (err)
				return err;
			nb.ord = v->ord;
			nb.time = e->time;
			nb.size = e->size;
			nb.key = key;
			err = live_replace(&v->live, e->addr, &nb, &blk);
			if (err == 1) {
				/* a block at a live address: its free was missed */
				err = emit_block(v, &blk, -1, e->time);
				if (v->info)
					v->info->missed_frees++;
			}
			if (!err)
				err = emit(v, e->time, (double)e->size * w, w, key);
		} else if (e->op == HS_OP_FREE) {
			if (!live_del(&v->live, e->addr, &blk)) {
				if (v->info)
					v->info->unmatched_frees++;
				return 0;
			}
			err = emit_block(v, &blk, -1, e->time);
			if (v->info)
				v->info->frees += weight(v->t, blk.size);
		}
		return err;
	case HS_MEM_PEAK:
		return peak_event(v, e);
	case HS_MEM_MMAP:
		return mmap_event(v, e);
	case HS_MEM_LEAKS:
		/* every block, for liveness; those before the range are left
		 * out when the live ones are emitted */
		if ((double)e->time > v->hi)
			return 0;
		if (e->op == HS_OP_ALLOC) {
			/* (a block live at the address is replaced where it is:
			 * one lookup, and the blocks go out sorted by ord) */
			err = event_key(v, e, &key);
			if (!err)
				err = put_block(v, e, key);
		} else if (e->op == HS_OP_FREE) {
			live_del(&v->live, e->addr, &blk);
		}
		return err;
	case HS_MEM_TEMPORARY:
		return temporary_event(v, e);
	default:
		return 0;
	}
}

static int cmp_block(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/*
 * Blocks @all[0, @n) into event order, every ord at most @max_ord: an LSD
 * radix sort on ord (ords are distinct, so the order is the one qsort
 * with cmp_block() gives), where rank_blocks() would take more memory.
 * A million blocks live at a peak took a tenth of `stats`' time in
 * qsort; this is a few passes over them. The digits are as wide as
 * ORD_DIGIT_MAX bits allows for the fewest passes, split evenly: an ord below 2^24 (16M
 * events) takes two passes, which also leave the blocks where they started, not three and
 * a copy back. The scratch copy is asked for in huge pages (huge_alloc()): each pass
 * scatters the blocks to 2^digit places at once, and with 4 KiB pages
 * that missed the TLB at nearly every block. qsort when the scratch copy
 * cannot be had.
 */
#define ORD_DIGIT_MAX 12
static void radix_blocks(struct block *all, size_t n, uint64_t max_ord)
{
	struct block *tmp, *from = all, *to;
	size_t count[1u << ORD_DIGIT_MAX];
	unsigned bits = max_ord ? 64u - (unsigned)__builtin_clzll(max_ord) : 1;
	unsigned passes = (bits + ORD_DIGIT_MAX - 1) / ORD_DIGIT_MAX;
	unsigned digit = (bits + passes - 1) / passes, shift;
	size_t mask = ((size_t)1 << digit) - 1, i;
	void *mem;

	if (n < 64 || !(tmp = huge_alloc(n * sizeof(*tmp), &mem))) {
		qsort(all, n, sizeof(*all), cmp_block);
		return;
	}
	to = tmp;
	for (shift = 0; shift < bits; shift += digit) {
		size_t sum = 0, c;
		struct block *swap;

		memset(count, 0, (mask + 1) * sizeof(*count));
		for (i = 0; i < n; i++)
			count[(from[i].ord >> shift) & mask]++;
		for (i = 0; i <= mask; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			to[count[(from[i].ord >> shift) & mask]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != all)
		memcpy(all, from, n * sizeof(*all));
	hs_free(mem);
}

/*
 * The event order of blocks @all[0, @n), their ords within [@lo, @hi],
 * without moving them: ords are distinct, so a block's rank is the
 * number of ords below its own, counted in a bitmap of the span (a bit
 * an event, and the count before every 64 of them); the result holds at
 * each rank the index of its block (the caller frees it). The span
 * costs 3/16 of a byte an event and the result 4 bytes a block: on
 * python3's stats, 1.4M blocks live at the peak over 5.6M events, 7 MB
 * against radix_blocks()' 46 MB scratch copy. NULL when out of memory
 * or when two blocks have one ord.
 */
static uint32_t *rank_blocks(const struct block *all, size_t n, uint64_t lo, uint64_t hi)
{
	size_t words = (size_t)((hi - lo) >> 6) + 1, w, i;
	uint64_t *bit = hs_calloc(words, sizeof(*bit));
	uint32_t *below = hs_malloc(words * sizeof(*below));
	uint32_t *order = hs_malloc(n * sizeof(*order));
	uint32_t sum = 0;

	if (!bit || !below || !order)
		goto fail;
	for (i = 0; i < n; i++) {
		uint64_t d = all[i].ord - lo;

		bit[d >> 6] |= 1ull << (d & 63);
	}
	for (w = 0; w < words; w++) {
		below[w] = sum;
		sum += (uint32_t)__builtin_popcountll(bit[w]);
	}
	if (sum != n)
		goto fail;
	for (i = 0; i < n; i++) {
		uint64_t d = all[i].ord - lo;

		order[below[d >> 6] + (uint32_t)__builtin_popcountll(
					  bit[d >> 6] & ((1ull << (d & 63)) - 1))] =
		    (uint32_t)i;
	}
	hs_free(bit);
	hs_free(below);
	return order;
fail:
	hs_free(bit);
	hs_free(below);
	hs_free(order);
	return NULL;
}

/*
 * Blocks @all[0, @n) in event order (every ord at most @max_ord): their
 * indexes by rank in *@order (rank_blocks(), the caller frees it) when
 * the bitmap of their span and the indexes take less memory than a copy
 * of the blocks, else *@order is NULL and @all is radix-sorted
 * (radix_blocks()). Block @r in order is blocks_at() of @r.
 */
static void order_blocks(struct block *all, size_t n, uint64_t max_ord, uint32_t **order)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i;

	*order = NULL;
	for (i = 0; i < n; i++) {
		if (all[i].ord < lo)
			lo = all[i].ord;
		if (all[i].ord > hi)
			hi = all[i].ord;
	}
	if (n >= 64 && n <= UINT32_MAX &&
	    (hi - lo) / 64 * 12 + n * sizeof(**order) < n * sizeof(*all))
		*order = rank_blocks(all, n, lo, hi);
	if (!*order)
		radix_blocks(all, n, max_ord);
}

/*
 * Block @r of @all in the order order_blocks() gave, the one @ahead ranks
 * later asked for (the blocks are read at random).
 */
#define BLOCK_AHEAD 16
static inline const struct block *blocks_at(const struct block *all,
					    const uint32_t *order, size_t n, size_t r)
{
	if (!order)
		return &all[r];
	if (r + BLOCK_AHEAD < n)
		__builtin_prefetch(&all[order[r + BLOCK_AHEAD]]);
	return &all[order[r]];
}

/* Emit the live blocks allocated at @lo or later, in time order. */
static int emit_live(struct view *v, double lo)
{
	struct block *all = hs_malloc((v->live.n + 1) * sizeof(*all));
	uint32_t *order;
	size_t i, n = 0;
	int err = 0;

	if (!all)
		return -ENOMEM;
	for (i = 0; i < v->live.cap; i++)
		if (v->live.slot[i].addr && (double)v->live.slot[i].time >= lo)
			slot_block(&v->live, &v->live.slot[i], &all[n++]);
	order_blocks(all, n, v->ord, &order);
	for (i = 0; i < n && !err; i++) {
		const struct block *blk = blocks_at(all, order, n, i);

		err = emit_block(v, blk, 1, blk->time);
	}
	hs_free(order);
	hs_free(all);
	return err;
}

/*
 * peak: the moment after event number @upto (the events before @v->ord,
 * or through it) becomes the candidate, with @bytes in use at @ns.
 */
static void peak_candidate(struct view *v, uint64_t upto, double bytes, int64_t ns)
{
	struct peak *p = &v->peak;

	p->have = 1;
	p->upto = upto;
	p->bytes = bytes;
	p->ns = ns;
	p->nr_keys = v->keys.n;
	p->nr_ghosts = 0; /* all gone by now */
	p->max_ghosts = v->live.n;
	if (hs_u64map_count(&p->big_ghosts))
		hs_u64map_clear(&p->big_ghosts);
}

/* A block that goes: a ghost when it was live at the candidate. */
static int peak_gone(struct view *v, const struct block *blk)
{
	struct peak *p = &v->peak;

	v->gone = 1;
	v->gone_size = blk->size;

	p->in_use -= (double)blk->size * weight(v->t, blk->size);
	if (!v->out || !p->have || blk->ord > p->upto)
		return 0;
	/* grown at once to the most ghosts there can be: the pages of a
	 * large array are only had as they are written, where doubling left
	 * up to half of them unused (python3's peak: 64 MB for 46 of ghosts) */
	if (p->nr_ghosts == p->alloc_ghosts) {
		size_t want =
		    p->max_ghosts > p->nr_ghosts ? p->max_ghosts : 2 * p->nr_ghosts + 16;
		struct ghost *ghost = hs_realloc(p->ghost, want * sizeof(*ghost));

		if (!ghost)
			return -ENOMEM;
		p->ghost = ghost;
		p->alloc_ghosts = want;
	}
	if (blk->size >= SIZE_BIG &&
	    hs_u64map_put(&p->big_ghosts, blk->ord, blk->size, NULL) < 0)
		return -ENOMEM;
	p->ghost[p->nr_ghosts++] = (struct ghost){
	    .ord = blk->ord,
	    .time = blk->time,
	    .size = blk->size >= SIZE_BIG ? SIZE_BIG : (uint32_t)blk->size,
	    .key = blk->key,
	};
	return 0;
}

/*
 * peak: heap in use event by event, within the range; the heap as the
 * range starts is a candidate (at its first event, or at the end when
 * no event is inside), then every higher heap in use after an event.
 * Address 0 is never live, but its blocks stay in use to the end.
 */
static int peak_event(struct view *v, const struct hs_trace_event *e)
{
	struct peak *p = &v->peak;
	struct block blk, old;
	double w;
	int err = 0;

	if (p->done)
		return 0;
	if ((double)e->time > v->hi) {
		p->done = 1;
		if (!p->have && isfinite(v->lo))
			peak_candidate(v, v->ord - 1, p->in_use, (int64_t)(v->lo + 600));
		return 0;
	}
	if (!p->have && (double)e->time >= v->lo)
		peak_candidate(v, v->ord - 1, p->in_use,
			       isfinite(v->lo) ? (int64_t)(v->lo + 600) : e->time);
	if (e->op == HS_OP_ALLOC) {
		w = weight(v->t, e->size);
		blk.ord = v->ord;
		blk.time = e->time;
		blk.size = e->size;
		err = event_key(v, e, &blk.key);
		if (!err && v->side[HS_MEM_ALLOC].out)
			err = emit_side(v, HS_MEM_ALLOC, e->time, (double)e->size * w, w,
					blk.key);
		if (!err && e->addr) {
			err = live_replace(&v->live, e->addr, &blk, &old);
			if (err == 1)
				err = peak_gone(v, &old);
		}
		if (!err && v->side[HS_MEM_TEMPORARY].out)
			err = temporary_alloc(v, e);
		p->in_use += (double)e->size * w;
	} else if (e->op == HS_OP_FREE && live_del(&v->live, e->addr, &old)) {
		err = peak_gone(v, &old);
		if (!err && v->side[HS_MEM_TEMPORARY].out && temporary_free(v, e, &old)) {
			w = weight(v->t, old.size);
			err = emit_side(v, HS_MEM_TEMPORARY, old.time,
					(double)old.size * w, w, old.key);
		}
	} else {
		return 0;
	}
	if (!err && p->have && p->in_use > p->bytes)
		peak_candidate(v, v->ord, p->in_use, e->time);
	return err;
}

/*
 * The blocks live at the peak (those still live, and the ghosts), in time
 * order. The live table's last use: it is empty afterwards.
 */
static int peak_finish(struct view *v)
{
	struct peak *p = &v->peak;
	struct block *all;
	void *own = NULL; /* the array when the table could not hold it */
	uint32_t *order;
	size_t i, n = 0;
	int err = 0;

	if (!p->done && !p->have && isfinite(v->lo))
		peak_candidate(v, v->ord, p->in_use, (int64_t)(v->lo + 600));
	if (v->info) {
		v->info->peak_ns = p->have ? p->ns : -1;
		v->info->peak_bytes = p->have ? p->bytes : 0;
	}
	if (!p->have)
		p->nr_keys = 0;
	/* the blocks in the live table's memory, the ghosts after them (the
	 * table's last use: python3's 1.4M blocks live at its peak cost no
	 * copy of them) */
	all = live_take(&v->live, p->have ? p->upto : 0, p->nr_ghosts, &n);
	if (!all) {
		/* (no room in the table: an array of them all) */
		all = own = hs_malloc((v->live.n + p->nr_ghosts + 1) * sizeof(*all));
		if (!all)
			return -ENOMEM;
		for (i = 0; p->have && i < v->live.cap; i++)
			if (v->live.slot[i].addr && v->live.slot[i].ord <= p->upto)
				slot_block(&v->live, &v->live.slot[i], &all[n++]);
	}
	for (i = 0; i < p->nr_ghosts; i++) {
		const struct ghost *g = &p->ghost[i];
		struct block *blk = &all[n++];
		uint64_t big;

		blk->ord = g->ord;
		blk->time = g->time;
		blk->size = g->size;
		blk->key = g->key;
		if (g->size == SIZE_BIG && hs_u64map_get(&p->big_ghosts, g->ord, &big))
			blk->size = big;
	}
	hs_free(p->ghost);
	p->ghost = NULL;
	p->nr_ghosts = p->alloc_ghosts = 0;
	order_blocks(all, n, v->ord, &order);
	for (i = 0; i < n && !err; i++) {
		const struct block *blk = blocks_at(all, order, n, i);

		err = emit_block(v, blk, 1, blk->time);
	}
	hs_free(order);
	hs_free(own);
	live_release(&v->live);
	return err;
}

/* First mapping whose end is above @a. */
static size_t maps_first(const struct maps *ms, uint64_t a)
{
	size_t lo = 0, hi = ms->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ms->m[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Unmap [a, e) at @time: -bytes for each part of a mapping it covers. */
static int maps_unmap(struct view *v, struct maps *ms, uint64_t a, uint64_t e,
		      int64_t time)
{
	size_t i = maps_first(ms, a);
	int err = 0;

	while (i < ms->n && ms->m[i].start < e && !err) {
		struct mapping *m = &ms->m[i];
		uint64_t lo = m->start > a ? m->start : a, hi = m->end < e ? m->end : e;
		int whole = lo == m->start && hi == m->end;

		if (whole)
			ms->pieces[m->id]--;
		err = emit(v, time, -(double)(hi - lo),
			   whole && !ms->pieces[m->id] ? -1 : 0, m->key);
		if (err)
			break;
		if (lo > m->start && hi < m->end) {
			/* a hole in the middle: split */
			if (HS_GROW(ms->m, ms->n + 1, ms->alloc))
				return -ENOMEM;
			m = &ms->m[i];
			memmove(ms->m + i + 1, ms->m + i, (ms->n - i) * sizeof(*m));
			ms->n++;
			ms->m[i].end = lo;
			ms->m[i + 1].start = hi;
			ms->pieces[ms->m[i].id]++;
			return 0;
		}
		if (lo > m->start) {
			m->end = lo;
			i++;
		} else if (hi < m->end) {
			m->start = hi;
			i++;
		} else {
			memmove(ms->m + i, ms->m + i + 1, (ms->n - i - 1) * sizeof(*m));
			ms->n--;
		}
	}
	return err;
}

/* mmap: +bytes at a mapping, -bytes for each part of one that goes. */
static int mmap_event(struct view *v, const struct hs_trace_event *e)
{
	struct maps *ms = &v->maps;
	struct hs_trace_event ev;
	uint64_t a = e->addr, end = a + e->size;
	size_t at;
	uint32_t key;
	int err;

	if (end < a)
		end = UINT64_MAX;
	if (e->op == HS_OP_MUNMAP)
		return maps_unmap(v, ms, a, end, e->time);
	if (e->op != HS_OP_MMAP || end == a)
		return 0;
	/* a mapping placed over live ones replaces them */
	err = maps_unmap(v, ms, a, end, e->time);
	ev = *e;
	ev.size = 0; /* mappings have no size class */
	if (!err)
		err = event_key(v, &ev, &key);
	if (!err)
		err = emit(v, e->time, (double)e->size, 1, key);
	if (!err && (HS_GROW(ms->m, ms->n + 1, ms->alloc) || ms->nr_ids >= UINT32_MAX ||
		     HS_GROW(ms->pieces, ms->nr_ids + 1, ms->alloc_ids)))
		err = -ENOMEM;
	if (err)
		return err;
	at = maps_first(ms, a);
	memmove(ms->m + at + 1, ms->m + at, (ms->n - at) * sizeof(*ms->m));
	ms->m[at].start = a;
	ms->m[at].end = end;
	ms->m[at].key = key;
	ms->m[at].id = (uint32_t)ms->nr_ids;
	ms->pieces[ms->nr_ids++] = 1;
	ms->n++;
	return 0;
}

/* The range in ns, with the filter's 0.0006 ms of slack on each side. */
static void range_ns(const struct hs_memview_opts *o, double *lo, double *hi)
{
	*lo = isnan(o->start_ms) ? -INFINITY : o->start_ms * 1e6 - 600;
	*hi = isnan(o->end_ms) ? INFINITY : o->end_ms * 1e6 + 600;
}

static void view_init(struct view *v, const struct hs_memview_opts *o,
		      struct hs_stack_source *out, struct hs_memview_info *info)
{
	memset(v, 0, sizeof(*v));
	v->o = o;
	v->out = out;
	v->info = info;
	range_ns(o, &v->lo, &v->hi);
	if (out)
		hs_source_init(out);
	if (info) {
		memset(info, 0, sizeof(*info));
		info->peak_ns = -1;
		info->uses_range = o->kind == HS_MEM_LEAKS || o->kind == HS_MEM_PEAK;
	}
}

static void view_release(struct view *v)
{
	int k;

	keytab_release(&v->keys);
	live_release(&v->live);
	hs_free(v->last_ord);
	hs_free(v->peak.ghost);
	hs_u64map_release(&v->peak.big_ghosts);
	hs_free(v->maps.m);
	hs_free(v->maps.pieces);
	hs_free(v->fold);
	for (k = 0; k < HS_MEM__COUNT; k++)
		hs_free(v->side[k].last);
}

/*
 * The counts of an output's frames, locations and stacks after its
 * first keys got their stacks: they only grow, so what a builder made of
 * fewer keys is the start of what it made of more.
 */
struct stacks_mark {
	size_t frames, locs, stacks;
};

static void mark_stacks(const struct hs_stack_source *out, struct stacks_mark *m)
{
	m->frames = hs_source_nr_frames(out);
	m->locs = out->nr_locs;
	m->stacks = out->nr_stacks;
}

/*
 * The stacks of keys [0, @nr_keys) (those with @used set, when @used is
 * not NULL) into @out, in key order, key -> stack in @stack_of. @at is
 * @nr_at key counts in increasing order: @marks[j] is what @out held once
 * the first @at[j] keys had their stacks.
 */
static int build_stacks(struct view *v, const struct hs_trace *t,
			const struct hs_memview_opts *o, struct hs_stack_source *out,
			size_t nr_keys, const uint8_t *used, uint32_t *stack_of,
			const size_t *at, struct stacks_mark *marks, size_t nr_at)
{
	struct builder b;
	size_t i, m = 0;
	int err;

	memset(&b, 0, sizeof(b));
	err = builder_init(&b, t, o, out);
	for (i = 0; !err && i < nr_keys; i++) {
		for (; m < nr_at && at[m] == i; m++)
			mark_stacks(out, &marks[m]);
		if (!used || used[i])
			err = key_stack(&b, &v->keys, i, &stack_of[i]);
	}
	for (; !err && m < nr_at && at[m] == nr_keys; m++)
		mark_stacks(out, &marks[m]);
	builder_release(&b);
	return err;
}

/*
 * Do outputs of options @a and @b get the same stacks for the same keys?
 * The builder (memviews_stacks.c) reads of its options only the kind
 * (leaks: the exit-time pseudo-frame; the CPU and wall views: no size
 * class, the thread state as leaf), size_classes and split_inline.
 */
static int same_stacks(const struct hs_memview_opts *a, const struct hs_memview_opts *b)
{
	return (a->kind == HS_MEM_LEAKS) == (b->kind == HS_MEM_LEAKS) &&
	       is_sample_view(a->kind) == is_sample_view(b->kind) &&
	       !!a->size_classes == !!b->size_classes &&
	       !!a->split_inline == !!b->split_inline;
}

/*
 * @dst (no frames or stacks yet) gets the first frames, locations and
 * stacks of @src that @m counts, interned in @src's order: the same ids,
 * as if the builder that made them had made them in @dst.
 */
static int copy_stacks(struct hs_stack_source *dst, const struct hs_stack_source *src,
		       const struct stacks_mark *m)
{
	uint32_t id, line;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < m->frames; i++) {
		err =
		    hs_source_intern_frame(dst, hs_source_frame_name(src, (uint32_t)i),
					   hs_strtab_len(&src->frames, (uint32_t)i), &id);
		HS_BUG_ON(!err && id != i);
	}
	for (i = 1; !err && i <= m->locs; i++) {
		const char *file = hs_source_loc(src, (uint32_t)i, &line);

		err = hs_source_intern_loc(dst, file, strlen(file), line, &id);
		HS_BUG_ON(!err && id != i);
	}
	for (i = 0; !err && i < m->stacks; i++) {
		err = hs_source_intern_stack_loc(
		    dst, src->stack_frame[i], src->stack_caller[i],
		    hs_source_stack_loc(src, (uint32_t)i), &id);
		HS_BUG_ON(!err && id != i);
	}
	return err;
}

/* The samples of @out carry keys until here (emit()): now their stacks. */
static void keys_to_stacks(struct hs_stack_source *out, const uint32_t *stack_of,
			   size_t nr_keys)
{
	size_t i;

	for (i = 0; i < out->nr_samples; i++) {
		HS_BUG_ON(out->stack[i] >= nr_keys);
		out->stack[i] = stack_of[out->stack[i]];
	}
}

/*
 * The view's FoldPats (heap_fold()) found on a thread of its own while
 * the view's end makes its stacks (a builder over every node of the
 * trace beside the builder of the first output's stacks). They
 * depend only on the trace and on options that a view's outputs share
 * (keep_wrappers, split_inline), so the view's own options give what
 * its first output's did. No thread: found when first wanted, as before.
 */
struct fold_job {
	pthread_t th;
	const struct hs_trace *t;
	const struct hs_memview_opts *o;
	char *fold;
	int err;
};

static void *fold_run(void *arg)
{
	struct fold_job *j = arg;

	j->err = heap_fold(j->t, j->o, &j->fold);
	return NULL;
}

static void fold_start(struct view *v, const struct hs_trace *t)
{
	struct fold_job *j;

	if (v->fold || v->folding || is_sample_view(v->o->kind))
		return;
	j = hs_malloc(sizeof(*j));
	if (!j)
		return;
	*j = (struct fold_job){.t = t, .o = v->o};
	if (pthread_create(&j->th, NULL, fold_run, j)) {
		hs_free(j);
		return;
	}
	v->folding = j;
}

/* The FoldPats of fold_start(), once found: 0 or its error. */
static int fold_wait(struct view *v)
{
	struct fold_job *j = v->folding;
	int err;

	if (!j)
		return 0;
	pthread_join(j->th, NULL);
	v->folding = NULL;
	err = j->err;
	if (!err && !v->fold)
		v->fold = j->fold;
	else
		hs_free(j->fold);
	hs_free(j);
	return err;
}

/* Output @out of view kind @o->kind gets its metric, name and defaults. */
static int finish_meta(struct view *v, const struct hs_trace *t,
		       const struct hs_memview_opts *o, struct hs_stack_source *out)
{
	int err = 0;

	if (is_sample_view(o->kind)) {
		out->kind = HS_METRIC_TIME;
		if (!(out->metric_unit = hs_strdup("ms")))
			err = -ENOMEM;
	} else {
		out->kind = HS_METRIC_PLAIN;
		out->metric_unit = hs_strdup("bytes");
		err = fold_wait(v);
		if (!err && !v->fold)
			err = heap_fold(t, o, &v->fold);
		if (!err && !(out->defaults.fold = hs_strdup(v->fold)))
			err = -ENOMEM;
		if (!out->metric_unit)
			err = -ENOMEM;
		if (!err && o->kind == HS_MEM_LEAKS &&
		    !(out->defaults.exc = hs_strdup(HS_PRESET_LEAK_SUPPRESS)))
			err = -ENOMEM;
	}
	if (!err && !(out->view_name = hs_strdup(kinds[o->kind].name)))
		err = -ENOMEM;
	return err;
}

/*
 * Output @out of view kind @o->kind: its samples' keys [0, @nr_keys)
 * become stacks, and it gets its defaults. @used_only: only the keys its
 * samples have get a stack (the same samples and sums, fewer stacks and
 * frames; run's summary, which only adds them up).
 */
static int finish_output(struct view *v, const struct hs_trace *t,
			 const struct hs_memview_opts *o, struct hs_stack_source *out,
			 size_t nr_keys, int used_only)
{
	uint32_t *stack_of = NULL;
	uint8_t *used = NULL;
	size_t i;
	int err = 0;

	if (!(stack_of = hs_malloc((nr_keys + 1) * sizeof(uint32_t))))
		err = -ENOMEM;
	if (!err && used_only && !(used = hs_calloc(nr_keys + 1, 1)))
		err = -ENOMEM;
	for (i = 0; !err && used && i < out->nr_samples; i++) {
		HS_BUG_ON(out->stack[i] >= nr_keys);
		used[out->stack[i]] = 1;
	}
	if (!err)
		err = build_stacks(v, t, o, out, nr_keys, used, stack_of, NULL, NULL, 0);
	if (!err)
		keys_to_stacks(out, stack_of, nr_keys);
	hs_free(stack_of);
	hs_free(used);
	return err ? err : finish_meta(v, t, o, out);
}

/* One output of a view: its options, its source, how many keys it has. */
struct output {
	const struct hs_memview_opts *o;
	struct hs_stack_source *out;
	size_t nr_keys;
	int done;
};

/*
 * The outputs of a view that need every one of their keys' stacks
 * (stats: the peak view and its alloc, leaks and temporary side
 * outputs), finished together: a builder runs once for the outputs whose
 * stacks are the same (same_stacks()), over the most keys any of them
 * has; each other one is a copy of what it built, up to that output's
 * own number of keys (the peak's keys are a prefix: those met up to the
 * peak). So stats builds two sets of stacks (leaks' and the others')
 * rather than four, with the same ids, frames and samples.
 */
static int finish_outputs(struct view *v, const struct hs_trace *t, struct output *outs,
			  size_t n)
{
	size_t at[HS_MEM__COUNT + 1], i, j, k, nr_at;
	struct stacks_mark marks[HS_MEM__COUNT + 1];
	uint32_t *stack_of;
	int err = 0;

	HS_BUG_ON(n > HS_MEM__COUNT + 1);
	if (!(stack_of = hs_malloc((v->keys.n + 1) * sizeof(uint32_t))))
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		size_t best = i;

		if (outs[i].done)
			continue;
		/* the builder's output: the one with the most keys */
		for (j = i + 1; j < n; j++)
			if (!outs[j].done && same_stacks(outs[i].o, outs[j].o) &&
			    outs[j].nr_keys > outs[best].nr_keys)
				best = j;
		/* the key counts of the copies, in increasing order */
		nr_at = 0;
		for (j = i; j < n; j++) {
			if (outs[j].done || j == best ||
			    !same_stacks(outs[i].o, outs[j].o))
				continue;
			for (k = nr_at; k > 0 && at[k - 1] > outs[j].nr_keys; k--)
				at[k] = at[k - 1];
			at[k] = outs[j].nr_keys;
			nr_at++;
		}
		err = build_stacks(v, t, outs[best].o, outs[best].out, outs[best].nr_keys,
				   NULL, stack_of, at, marks, nr_at);
		for (j = i; j < n && !err; j++) {
			if (outs[j].done || !same_stacks(outs[i].o, outs[j].o))
				continue;
			if (j != best) {
				for (k = 0; at[k] != outs[j].nr_keys; k++)
					;
				err = copy_stacks(outs[j].out, outs[best].out, &marks[k]);
			}
			if (!err)
				keys_to_stacks(outs[j].out, stack_of, outs[j].nr_keys);
			if (!err)
				err = finish_meta(v, t, outs[j].o, outs[j].out);
			outs[j].done = 1;
		}
	}
	hs_free(stack_of);
	return err;
}

/* Emit the live blocks (all of them) to side output leaks, in time order. */
static int side_leaks(struct view *v)
{
	struct block *all = hs_malloc((v->live.n + 1) * sizeof(*all));
	uint32_t *order;
	size_t i, n = 0;
	int err = 0;

	if (!all)
		return -ENOMEM;
	for (i = 0; i < v->live.cap; i++)
		if (v->live.slot[i].addr)
			slot_block(&v->live, &v->live.slot[i], &all[n++]);
	order_blocks(all, n, v->ord, &order);
	for (i = 0; i < n && !err; i++) {
		const struct block *blk = blocks_at(all, order, n, i);
		double w = weight(v->t, blk->size);

		err = emit_side(v, HS_MEM_LEAKS, blk->time, (double)blk->size * w, w,
				blk->key);
	}
	hs_free(order);
	hs_free(all);
	return err;
}

/* The end of a view: the live blocks of leaks, then keys become stacks. */
static int ended_by_exec(const struct hs_trace *t)
{
	return t->has_end && t->end_reason == HS_END_EXEC;
}

static int view_finish(struct view *v, const struct hs_trace *t)
{
	size_t nr_keys;
	int err = 0, k;

	v->t = t;
	/* an exec frees the heap of the image it replaces: no leaks */
	if (v->o->kind == HS_MEM_LEAKS && !ended_by_exec(t))
		err = emit_live(v, v->lo);
	if (!err && v->side[HS_MEM_LEAKS].out && !ended_by_exec(t))
		err = side_leaks(v);
	/* (after the leaks: the peak takes the live table's memory) */
	if (!err && v->o->kind == HS_MEM_PEAK && v->out)
		err = peak_finish(v);
	/* (the FoldPats beside the stacks: after the sorts above, whose
	 * copies of the blocks live at the peak are the end's most memory) */
	if (!err)
		fold_start(v, t);
	/* peak: the stacks of the allocations up to the peak, no more */
	nr_keys = v->o->kind == HS_MEM_PEAK ? v->peak.nr_keys : v->keys.n;
	if (!err && v->out) {
		struct output outs[HS_MEM__COUNT + 1];
		size_t n = 0;

		outs[n++] = (struct output){v->o, v->out, nr_keys, 0};
		for (k = 0; k < HS_MEM__COUNT; k++)
			if (v->side[k].out)
				outs[n++] = (struct output){&v->side[k].o, v->side[k].out,
							    v->keys.n, 0};
		err = finish_outputs(v, t, outs, n);
	}
	/* without the peak view (run's summary) the side views are only summed */
	for (k = 0; k < HS_MEM__COUNT && !err && !v->out; k++)
		if (v->side[k].out)
			err = finish_output(v, t, &v->side[k].o, v->side[k].out,
					    v->keys.n, 1);
	/* (the FoldPats' thread ends before the view does) */
	k = fold_wait(v);
	if (!err)
		err = k;
	if (!err && v->info) {
		v->info->symbolized = t->syms.present;
		v->info->cut_off = t->cut_off;
		v->info->sym_damage = t->sym_damage;
		v->info->lost = t->has_footer ? t->footer[HS_FC_LOST] : 0;
		v->info->events = t->nr_events ? t->nr_events : (size_t)v->ord;
	}
	return err;
}

static int set_error(int err, struct hs_diag *diag)
{
	if (err == -ENOMEM)
		hs_diag_set(diag, 0, "out of memory");
	else if (err == -E2BIG)
		hs_diag_set(diag, 0, "too many frames or stacks");
	else if (err && !diag->set)
		hs_diag_set(diag, 0, "%s", strerror(-err));
	return err;
}

int hs_memview_build(const struct hs_trace *t, const struct hs_memview_opts *o,
		     struct hs_stack_source *out, struct hs_memview_info *info,
		     struct hs_diag *diag)
{
	struct hs_trace_event e;
	struct view v;
	size_t i;
	int err = 0;

	view_init(&v, o, out, info);
	v.t = t;
	if ((unsigned)o->kind >= HS_MEM__COUNT)
		err = -EINVAL;
	for (i = 0; i < t->nr_events && !err; i++) {
		hs_trace_event_get(t, i, &e);
		err = view_event(&v, &e);
	}
	if (!err)
		err = view_finish(&v, t);
	view_release(&v);
	return set_error(err, diag);
}

/* --- streaming ------------------------------------------------------------------ */

/*
 * view_event() of the net view of an unsampled trace, as one loop: what
 * reading a trace spends most of its time on (weights are 1, blocks are
 * not ordered).
 */
static int net_events(struct view *v, const struct hs_trace_event *ev, size_t n)
{
	struct hs_memview_info *info = v->info;
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		const struct hs_trace_event *e = &ev[i];

		if (i + LIVE_AHEAD < n)
			live_prefetch(&v->live, ev[i + LIVE_AHEAD].addr);
		struct block blk, nb;

		if (e->op == HS_OP_ALLOC) {
			err = event_key(v, e, &nb.key);
			if (err)
				break;
			nb.ord = v->ord + i + 1;
			nb.time = e->time;
			nb.size = e->size;
			err = live_replace(&v->live, e->addr, &nb, &blk);
			if (err == 1) {
				/* a block at a live address: its free was missed */
				err = emit(v, e->time, -(double)blk.size, -1.0, blk.key);
				if (info)
					info->missed_frees++;
			}
			if (!err)
				err = emit(v, e->time, (double)e->size, 1.0, nb.key);
		} else if (e->op == HS_OP_FREE) {
			if (!live_del(&v->live, e->addr, &blk)) {
				if (info)
					info->unmatched_frees++;
				continue;
			}
			err = emit(v, e->time, -(double)blk.size, -1.0, blk.key);
			if (info)
				info->frees += 1.0;
		}
	}
	v->ord += i;
	return err;
}

/*
 * peak_event() of a heap pass (no range) over an unsampled trace whose
 * peak has a candidate (every event but the first), with its side
 * outputs, as one loop: the kind, the range and the weights (all 1) are
 * not asked again at every event, and the helpers are inlined. The same
 * floating-point operations in the same order as peak_event(), so the
 * same sums. Returns how many events it took (it stops at an error, in
 * *@err), each one's effect on the live blocks in @gone and @gone_size.
 */
static size_t heap_events(struct view *v, const struct hs_trace_event *ev, size_t n,
			  uint8_t *gone, uint64_t *gone_size, int *err)
{
	struct peak *p = &v->peak;
	struct side *alloc = v->side[HS_MEM_ALLOC].out ? &v->side[HS_MEM_ALLOC] : NULL;
	int temporary = v->side[HS_MEM_TEMPORARY].out != NULL;
	size_t i;

	*err = 0;
	for (i = 0; i < n; i++) {
		const struct hs_trace_event *e = &ev[i];
		struct block blk, old;
		int r;

		if (i + LIVE_AHEAD < n)
			live_prefetch_lines(&v->live, ev[i + LIVE_AHEAD].addr,
					    ev[i + LIVE_AHEAD].op == HS_OP_FREE);
		gone[i] = 0;
		v->ord++;
		if (e->op == HS_OP_ALLOC) {
			blk.ord = v->ord;
			blk.time = e->time;
			blk.size = e->size;
			r = event_key(v, e, &blk.key);
			if (!r && alloc) {
				if (blk.key < alloc->nr_last)
					r = emit_into(alloc->out, alloc->last, e->time,
						      (double)e->size, 1.0, blk.key);
				else
					r = emit_side(v, HS_MEM_ALLOC, e->time,
						      (double)e->size, 1.0, blk.key);
			}
			if (!r && e->addr) {
				r = live_replace(&v->live, e->addr, &blk, &old);
				if (r == 1) {
					gone[i] = 1;
					gone_size[i] = old.size;
					r = peak_gone(v, &old);
				}
			}
			if (!r && temporary)
				r = temporary_alloc(v, e);
			p->in_use += (double)e->size;
		} else if (e->op == HS_OP_FREE && live_del(&v->live, e->addr, &old)) {
			gone[i] = 1;
			gone_size[i] = old.size;
			r = peak_gone(v, &old);
			if (!r && temporary && temporary_free(v, e, &old))
				r = emit_side(v, HS_MEM_TEMPORARY, old.time,
					      (double)old.size, 1.0, old.key);
		} else {
			continue;
		}
		if (r) {
			*err = r;
			return i + 1;
		}
		if (p->in_use > p->bytes)
			peak_candidate(v, v->ord, p->in_use, e->time);
	}
	return n;
}

/*
 * The events of a heap pass or of a peak view without a range: those of
 * an unsampled trace through heap_events(), the others one by one; event
 * i's effect on the live blocks in @gone[i] and @gone_size[i] (as
 * hs_memview_pass_event() says it).
 */
static int peak_events(struct view *v, const struct hs_trace_event *ev, size_t n,
		       uint8_t *gone, uint64_t *gone_size)
{
	size_t i = 0;
	int err;

	while (i < n) {
		if (v->peak.have && !v->t->info.sample_bytes) {
			i += heap_events(v, ev + i, n - i, gone + i, gone_size + i, &err);
			if (err)
				return err;
			continue;
		}
		v->gone = 0;
		err = view_event(v, &ev[i]);
		if (err)
			return err;
		gone[i] = (uint8_t)v->gone;
		gone_size[i++] = v->gone_size;
	}
	return 0;
}

#define PEAK_SLICE 512
static int sink_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct view *v = ctx;
	size_t i;
	int err = 0;

	if (v->o->kind == HS_MEM_NET && !v->t->info.sample_bytes)
		return net_events(v, ev, n);
	if (v->o->kind == HS_MEM_PEAK && !isfinite(v->lo) && !isfinite(v->hi)) {
		/* (in slices: what the events did to the live blocks is for the
		 * totals, which this view has not) */
		uint64_t gone_size[PEAK_SLICE];
		uint8_t gone[PEAK_SLICE];
		size_t k;

		for (i = 0; i < n && !err; i += k) {
			k = n - i < PEAK_SLICE ? n - i : PEAK_SLICE;
			err = peak_events(v, ev + i, k, gone, gone_size);
		}
		return err;
	}
	for (i = 0; i < n && !err; i++) {
		if (i + LIVE_AHEAD < n)
			live_prefetch(&v->live, ev[i + LIVE_AHEAD].addr);
		err = view_event(v, &ev[i]);
	}
	return err;
}

static int sink_live(void *ctx, uint64_t addr)
{
	const struct view *v = ctx;

	return live_has(&v->live, addr);
}

/* A pass is a view (hs_memview_pass_*(), memviews.h). */
struct hs_memview_pass {
	struct view v;
};

int hs_memview_pass_new(const struct hs_trace *t, const struct hs_memview_opts *o,
			struct hs_stack_source *out, struct hs_memview_info *info,
			struct hs_memview_pass **pass)
{
	*pass = hs_malloc(sizeof(**pass));
	if (!*pass) {
		if (out)
			hs_source_init(out);
		return -ENOMEM;
	}
	view_init(&(*pass)->v, o, out, info);
	(*pass)->v.t = t;
	return 0;
}

int hs_memview_pass_new_heap(const struct hs_trace *t, const struct hs_memview_opts *o,
			     struct hs_stack_source *peak, struct hs_stack_source *alloc,
			     struct hs_stack_source *leaks,
			     struct hs_stack_source *temporary,
			     struct hs_memview_pass **pass)
{
	struct hs_stack_source *side[3] = {alloc, leaks, temporary};
	static const enum hs_memview_kind side_kind[3] = {HS_MEM_ALLOC, HS_MEM_LEAKS,
							  HS_MEM_TEMPORARY};
	int k, err;

	HS_BUG_ON(o->kind != HS_MEM_PEAK || !isnan(o->start_ms) || !isnan(o->end_ms));
	for (k = 0; k < 3; k++)
		if (side[k])
			hs_source_init(side[k]);
	err = hs_memview_pass_new(t, o, peak, NULL, pass);
	for (k = 0; k < 3 && !err; k++) {
		struct side *sd = &(*pass)->v.side[side_kind[k]];

		if (!side[k])
			continue;
		sd->out = side[k];
		sd->o = *o;
		sd->o.kind = side_kind[k];
	}
	return err;
}

void hs_memview_pass_prefetch(const struct hs_memview_pass *pass, uint64_t addr)
{
	live_prefetch(&pass->v.live, addr);
}

int hs_memview_pass_event(struct hs_memview_pass *pass, const struct hs_trace_event *e,
			  uint64_t *gone_size)
{
	struct view *v = &pass->v;
	int err;

	HS_BUG_ON(v->o->kind != HS_MEM_PEAK || isfinite(v->hi));
	v->gone = 0;
	err = view_event(v, e);
	if (err)
		return err;
	*gone_size = v->gone_size;
	return v->gone;
}

int hs_memview_pass_events_gone(struct hs_memview_pass *pass,
				const struct hs_trace_event *ev, size_t n, uint8_t *gone,
				uint64_t *gone_size)
{
	struct view *v = &pass->v;

	HS_BUG_ON(v->o->kind != HS_MEM_PEAK || isfinite(v->hi) || isfinite(v->lo));
	return peak_events(v, ev, n, gone, gone_size);
}

int hs_memview_pass_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct hs_memview_pass *pass = ctx;

	return sink_events(&pass->v, ev, n);
}

int hs_memview_pass_live(void *ctx, uint64_t addr)
{
	struct hs_memview_pass *pass = ctx;

	return sink_live(&pass->v, addr);
}

int hs_memview_pass_finish(struct hs_memview_pass *pass, struct hs_diag *diag)
{
	return set_error(view_finish(&pass->v, pass->v.t), diag);
}

void hs_memview_pass_free(struct hs_memview_pass *pass)
{
	if (!pass)
		return;
	view_release(&pass->v);
	hs_free(pass);
}

int hs_memview_build_path(const char *path, const struct hs_memview_opts *o,
			  struct hs_stack_source *out, struct hs_memview_info *info,
			  struct hs_diag *diag)
{
	struct hs_trace t;
	struct view v;
	int err;

	if ((unsigned)o->kind < HS_MEM__COUNT) {
		struct hs_trace_sink sink = {
		    .events = sink_events,
		    .live = o->kind == HS_MEM_ALLOC || o->kind == HS_MEM_MMAP ||
				    is_sample_view(o->kind)
				? NULL
				: sink_live,
		    .ctx = &v,
		};

		view_init(&v, o, out, info);
		v.t = &t; /* the weights need only its process record */
		err = hs_trace_stream(path, &t, &sink, diag);
		if (!err) {
			err = view_finish(&v, &t);
			hs_trace_release(&t);
		}
		view_release(&v);
		if (err != -EAGAIN)
			return set_error(err, diag);
		hs_source_release(out);
	}
	/* the events must be loaded (a file whose events are too far out of
	 * time order to stream) */
	err = hs_trace_load(path, &t, diag);
	if (err) {
		hs_source_init(out);
		return set_error(err, diag);
	}
	err = hs_memview_build(&t, o, out, info, diag);
	hs_trace_release(&t);
	return err;
}
