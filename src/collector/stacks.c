/*
 * stacks - intern call stacks as a prefix tree shared by all threads, so
 * that each distinct stack is written to the trace once (as NODE records)
 * and events carry one node id.
 *
 * The tree is a hash table of (parent id, call site) -> id. Lookups take
 * no lock: a slot's key is published with a release store after its
 * value, and readers that find nothing retry under the insert lock. Inserts
 * (a stack seen for the first time) take the lock. A full table is
 * replaced by a larger copy; readers still holding the old one can only
 * miss, never see a wrong entry, and the old one is never unmapped.
 *
 * Each thread also keeps the previous stack it interned, root first with
 * the node of every prefix: a new stack that shares a prefix with it
 * (a loop calling malloc from the same place shares all of it) only looks
 * up the frames below the shared part.
 */
#include "collector/collector.h"
#include "common/hash.h"
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MARKER_KEY UINTPTR_MAX /* the incomplete-stack marker frame */
#define INITIAL_SLOTS (1u << 14)

struct slot {
	_Atomic uintptr_t key; /* call site; 0 = empty */
	_Atomic uint64_t meta; /* parent << 32 | id */
};

struct table {
	size_t mask;
	size_t count;
	struct slot slots[];
};

static _Atomic(struct table *) cur;
static pthread_mutex_t insert_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_id = 1; /* under insert_lock */

static struct table *table_new(size_t nslots)
{
	size_t bytes = sizeof(struct table) + nslots * sizeof(struct slot);
	struct table *tb = (void *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if ((long)tb < 0 && (long)tb > -4096)
		return NULL;
	tb->mask = nslots - 1;
	tb->count = 0;
	return tb;
}

static inline size_t slot_of(uint32_t parent, uintptr_t key, size_t mask)
{
	uint64_t k[2] = {parent, key};

	return (size_t)XXH3_64bits(k, sizeof(k)) & mask;
}

static uint32_t lookup(const struct table *tb, uint32_t parent, uintptr_t key)
{
	size_t i = slot_of(parent, key, tb->mask);

	for (;;) {
		const struct slot *s = &tb->slots[i];
		uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);

		if (!k)
			return 0;
		if (k == key) {
			uint64_t m = atomic_load_explicit(&s->meta, memory_order_relaxed);

			if ((uint32_t)(m >> 32) == parent)
				return (uint32_t)m;
		}
		i = (i + 1) & tb->mask;
	}
}

static void put(struct table *tb, uint32_t parent, uintptr_t key, uint32_t id)
{
	size_t i = slot_of(parent, key, tb->mask);

	while (atomic_load_explicit(&tb->slots[i].key, memory_order_relaxed))
		i = (i + 1) & tb->mask;
	atomic_store_explicit(&tb->slots[i].meta, (uint64_t)parent << 32 | id,
			      memory_order_relaxed);
	atomic_store_explicit(&tb->slots[i].key, key, memory_order_release);
	tb->count++;
}

/* Copy @tb into a table twice as large; NULL if out of memory. */
static struct table *grow(struct table *tb)
{
	struct table *nt = table_new(2 * (tb->mask + 1));
	size_t i;

	if (!nt)
		return NULL;
	for (i = 0; i <= tb->mask; i++) {
		uintptr_t k =
		    atomic_load_explicit(&tb->slots[i].key, memory_order_relaxed);
		uint64_t m;

		if (!k)
			continue;
		m = atomic_load_explicit(&tb->slots[i].meta, memory_order_relaxed);
		put(nt, (uint32_t)(m >> 32), k, (uint32_t)m);
	}
	return nt;
}

static void emit_node(struct hs_thread *t, uint32_t id, uint32_t parent, uintptr_t key)
{
	uint8_t rec[1 + 3 * HS_VARINT_MAX], *p = rec;

	p = hs_enc_node(p, id, parent, key == MARKER_KEY ? 0 : key);
	hs_ring_mark(t, (size_t)(p - rec));
	hs_ring_put(t, rec, (size_t)(p - rec));
}

static uint32_t intern_slow(struct hs_thread *t, uint32_t parent, uintptr_t key);

/*
 * The id of (@parent, @key), inserting it (and writing its NODE) if new.
 * A small per-thread cache comes first: the shared table is large and its
 * slots are spread over many cache lines.
 */
static uint32_t intern_one(struct hs_thread *t, uint32_t parent, uintptr_t key)
{
	size_t c = (size_t)(((key ^ ((uint64_t)parent << 17)) * 0x9E3779B97F4A7C15ull) >>
			    (64 - 12)) &
		   (HS_NODE_CACHE - 1);
	struct table *tb;
	uint32_t id;
	int e;

	if (t->nodes[c].key == key && t->nodes[c].parent == parent && t->nodes[c].id)
		return t->nodes[c].id;
	tb = atomic_load_explicit(&cur, memory_order_acquire);
	id = lookup(tb, parent, key);
	if (HS_UNLIKELY(!id)) {
		e = errno;
		id = intern_slow(t, parent, key);
		errno = e;
	}
	t->nodes[c].key = key;
	t->nodes[c].parent = parent;
	t->nodes[c].id = id;
	return id;
}

static uint32_t intern_slow(struct hs_thread *t, uint32_t parent, uintptr_t key)
{
	struct table *tb;
	uint32_t id;

	pthread_mutex_lock(&insert_lock);
	tb = atomic_load_explicit(&cur, memory_order_relaxed);
	id = lookup(tb, parent, key);
	if (!id) {
		if (2 * (tb->count + 1) > tb->mask + 1) {
			struct table *nt = grow(tb);

			if (!nt) {
				pthread_mutex_unlock(&insert_lock);
				return 0;
			}
			atomic_store_explicit(&cur, nt, memory_order_release);
			tb = nt;
		}
		id = next_id++;
		put(tb, parent, key, id);
		pthread_mutex_unlock(&insert_lock);
		emit_node(t, id, parent, key);
		atomic_fetch_add_explicit(&hs_count_nodes, 1, memory_order_relaxed);
		/* a module loaded since the last scan: record it now */
		if (key != MARKER_KEY)
			hs_module_notice(t, key);
		return id;
	}
	pthread_mutex_unlock(&insert_lock);
	return id;
}

int hs_stacks_init(void)
{
	struct table *tb = table_new(INITIAL_SLOTS);

	if (!tb)
		return -1;
	atomic_store(&cur, tb);
	return 0;
}

uint32_t hs_stacks_reset(void)
{
	struct table *tb = table_new(INITIAL_SLOTS);
	uint32_t next;

	pthread_mutex_lock(&insert_lock);
	if (tb)
		atomic_store_explicit(&cur, tb, memory_order_release);
	next = next_id;
	pthread_mutex_unlock(&insert_lock);
	atomic_fetch_add(&hs_gen, 1);
	return next;
}

void hs_stacks_restart(void)
{
	pthread_mutex_init(&insert_lock, NULL);
	hs_stacks_reset();
	next_id = 1;
}

void hs_thread_check_gen(struct hs_thread *t)
{
	uint64_t g = atomic_load_explicit(&hs_gen, memory_order_acquire);

	if (HS_LIKELY(t->seen_gen == g))
		return;
	t->seen_gen = g;
	t->prev_depth = 0;
	memset(t->nodes, 0, sizeof(t->nodes));
	t->memo_epoch++;
	t->walks[0].valid = t->walks[1].valid = 0;
	hs_unwind_flush(t);
}

uint32_t hs_stack_intern(struct hs_thread *t, const uintptr_t *ips, unsigned n,
			 int complete)
{
	unsigned total = n + !complete, common = 0, i;
	uint32_t node;

	if (!total)
		return 0;
		/* key(i), root first: the marker (if incomplete), then ips[n-1..0] */
#define KEY(i) (!complete ? ((i) == 0 ? MARKER_KEY : ips[n - (i)]) : ips[n - 1 - (i)])
	while (common < total && common < t->prev_depth &&
	       KEY(common) == t->prev_key[common])
		common++;
	node = common ? t->prev_node[common - 1] : 0;
	for (i = common; i < total; i++) {
		uintptr_t k = KEY(i);

		node = intern_one(t, node, k);
		if (!node) {
			t->prev_depth = 0;
			return 0;
		}
		t->prev_key[i] = k;
		t->prev_node[i] = node;
	}
#undef KEY
	t->prev_depth = total;
	return node;
}

/*
 * Copy into @m the stack words walk @w's result depends on; sets
 * m->nreads (over HS_MEMO_READS: too many, @m not usable). Of a fast walk
 * (w->valid), a frame's saved rbp is left out unless the frames above it
 * use it (HS_WF_NEED_BP on the next frame): code built without frame
 * pointers keeps data in rbp, and a walk that changes with it would be
 * made again on every call.
 */
static unsigned memo_reads(const struct hs_walk *w, struct hs_memo *m)
{
	unsigned k, i, end, kept = 0;

	if (!w->valid) {
		if (w->nlog <= HS_MEMO_READS) {
			memcpy(m->addr, w->addr, w->nlog * sizeof(uintptr_t));
			memcpy(m->val, w->val, w->nlog * sizeof(uintptr_t));
		}
		return m->nreads = w->nlog;
	}
	/* every frame but an outermost one reads its return address */
	if (w->n > HS_MEMO_READS + 1)
		return m->nreads = HS_MEMO_READS + 1;
	for (k = 0; k < w->n; k++) {
		i = w->logpos[k];
		end = k + 1 < w->n ? w->logpos[k + 1] : w->nlog;
		/* a restoring frame reads the saved rbp first, then the return address */
		if ((w->flags[k] & HS_WF_RESTORE) && i < end &&
		    !(k + 1 < w->n && (w->flags[k + 1] & HS_WF_NEED_BP)))
			i++;
		for (; i < end; i++) {
			if (kept == HS_MEMO_READS)
				return m->nreads = HS_MEMO_READS + 1;
			m->addr[kept] = w->addr[i];
			m->val[kept] = w->val[i];
			kept++;
		}
	}
	return m->nreads = kept;
}

uint32_t hs_stack_walk(struct hs_thread *t, void *fp, struct hs_memo *m)
{
	uintptr_t f = (uintptr_t)fp, *ips = t->scratch;
	struct hs_walk *w = &t->walks[t->cur_walk];
	unsigned n;
	uint32_t node;
	int complete;

	w->valid = w->overflow = w->truncated = w->complete = 0;
	w->n = w->nlog = 0;
	w->flags[0] = 0;
	m->epoch = 0;
	n = hs_unwind(t, fp, ips, hs_cfg.max_depth, &complete, w);
	node = hs_stack_intern(t, ips, n, complete);
	if (!node)
		return 0;
	if (!w->overflow && memo_reads(w, m) <= HS_MEMO_READS) {
		m->sp0 = f + 16;
		m->bp0 = ((uintptr_t *)f)[0];
		m->ra0 = ((uintptr_t *)f)[1];
		m->node = node;
		m->uses_bp0 = n > 0 && (w->flags[0] & HS_WF_NEED_BP);
		m->epoch = t->memo_epoch;
	}
	if (w->valid)
		t->cur_walk ^= 1; /* the one the next walk may splice */
	return node;
}

uint32_t hs_stack_memo_check(struct hs_thread *t, void *fp, struct hs_memo *m)
{
	uint32_t remembered = m->node, node = hs_stack_walk(t, fp, m);

	hs_unwind_memo_checked(remembered, node);
	return node;
}
