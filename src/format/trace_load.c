/*
 * trace_load - the in-memory trace, loaded whole or streamed, and its
 * totals (see trace_reader.h).
 */
#include "format/trace_reader.h"
#include "format/trace_amap.h"
#include "format/trace_symbols.h"
#include "format/trace_ties.h"
#include "format/trace_writer.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* --- the loaded trace ------------------------------------------------- */

static uint32_t *node_slot_find(const struct hs_trace *t, uint64_t id)
{
	size_t mask = t->nr_node_slot - 1;
	size_t i = hs_hash_u64(id) & mask;

	while (t->node_slot[i] && t->node_id[t->node_slot[i] - 1] != id)
		i = (i + 1) & mask;
	return &t->node_slot[i];
}

static uint32_t node_index(const struct hs_trace *t, uint64_t id)
{
	uint32_t s;

	if (!t->nr_node_slot)
		return HS_TRACE_NONE;
	s = *node_slot_find(t, id);
	return s ? s - 1 : HS_TRACE_NONE;
}

static int node_index_grow(struct hs_trace *t)
{
	size_t n = t->nr_node_slot ? 2 * t->nr_node_slot : 1024, i;
	uint32_t *old = t->node_slot;
	size_t old_n = t->nr_node_slot;

	t->node_slot = hs_calloc(n, sizeof(uint32_t));
	if (!t->node_slot) {
		t->node_slot = old;
		return -ENOMEM;
	}
	t->nr_node_slot = n;
	for (i = 0; i < old_n; i++)
		if (old[i])
			*node_slot_find(t, t->node_id[old[i] - 1]) = old[i];
	hs_free(old);
	return 0;
}

/* Reallocate one column of a set of parallel arrays to @cap items. */
static int grow_col(void **col, size_t cap, size_t elem)
{
	void *p = hs_realloc(*col, cap * elem);

	if (!p)
		return -ENOMEM;
	*col = p;
	return 0;
}

/* Add a node; a second definition of an id keeps the first. */
static int add_node(struct hs_trace *t, uint64_t id, uint64_t parent, uint64_t addr,
		    uint64_t ticks)
{
	uint32_t *slot;
	size_t n = t->nr_nodes;

	if (n >= UINT32_MAX - 2)
		return -E2BIG;
	if (2 * (n + 1) > t->nr_node_slot && node_index_grow(t))
		return -ENOMEM;
	slot = node_slot_find(t, id);
	if (*slot)
		return 0;
	if (n == t->alloc_nodes) {
		size_t cap = n ? n + n / 2 : 1024;

		if (grow_col((void **)&t->node_addr, cap, sizeof(uint64_t)) ||
		    grow_col((void **)&t->node_parent, cap, sizeof(uint32_t)) ||
		    grow_col((void **)&t->node_module, cap, sizeof(uint32_t)) ||
		    grow_col((void **)&t->node_id, cap, sizeof(uint64_t)) ||
		    grow_col((void **)&t->node_ticks, cap, sizeof(uint64_t)))
			return -ENOMEM;
		t->alloc_nodes = cap;
	}
	t->node_addr[n] = addr;
	t->node_id[n] = id;
	t->node_ticks[n] = ticks;
	/* parents are resolved from their ids once everything is read */
	t->node_parent[n] = HS_TRACE_NONE;
	t->node_module[n] = HS_TRACE_NONE;
	t->nr_nodes = n + 1;
	*slot = (uint32_t)(n + 1);
	return 0;
}

/* Thread index of @tid, added if new (a small hash keeps it O(1)). */
struct tid_map {
	uint64_t *key;
	uint32_t *val;
	size_t n, cap;
};

static int thread_index(struct hs_trace *t, struct tid_map *m, uint64_t tid,
			uint32_t *out)
{
	size_t i, mask;

	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64, j;
		uint64_t *k = hs_calloc(cap, sizeof(uint64_t));
		uint32_t *v = hs_calloc(cap, sizeof(uint32_t));

		if (!k || !v) {
			hs_free(k);
			hs_free(v);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->val[j])
				continue;
			i = hs_hash_u64(m->key[j]) & (cap - 1);
			while (v[i])
				i = (i + 1) & (cap - 1);
			k[i] = m->key[j];
			v[i] = m->val[j];
		}
		hs_free(m->key);
		hs_free(m->val);
		m->key = k;
		m->val = v;
		m->cap = cap;
	}
	mask = m->cap - 1;
	i = hs_hash_u64(tid) & mask;
	while (m->val[i] && m->key[i] != tid)
		i = (i + 1) & mask;
	if (m->val[i]) {
		*out = m->val[i] - 1;
		return 0;
	}
	if (t->nr_threads >= UINT32_MAX - 1 ||
	    HS_GROW(t->threads, t->nr_threads + 1, t->alloc_threads))
		return -ENOMEM;
	memset(&t->threads[t->nr_threads], 0, sizeof(t->threads[0]));
	t->threads[t->nr_threads].tid = tid;
	t->threads[t->nr_threads].start_ns = -1;
	t->threads[t->nr_threads].exit_ns = -1;
	m->key[i] = tid;
	m->val[i] = (uint32_t)++t->nr_threads;
	m->n++;
	*out = (uint32_t)(t->nr_threads - 1);
	return 0;
}

static int grow_events(struct hs_trace *t, size_t need)
{
	size_t cap = t->alloc_events;
	void *p;

	if (need <= cap)
		return 0;
	cap = t->alloc_events ? t->alloc_events + t->alloc_events / 2 : 1024;
	if (cap < need)
		cap = need;
#define GROW_COL(col)                                                   \
	do {                                                            \
		p = hs_realloc(t->col, cap * sizeof(*t->col));          \
		if (!p)                                                 \
			return -ENOMEM;                                 \
		t->col = p;                                             \
	} while (0)
	GROW_COL(time);
	GROW_COL(addr);
	GROW_COL(size);
	GROW_COL(stack);
	GROW_COL(thread);
	GROW_COL(op);
	GROW_COL(fn);
#undef GROW_COL
	t->alloc_events = cap;
	return 0;
}

/*
 * The loader's state. An event's stack is resolved to a node index when
 * its node is already known (the usual case: a 1-entry cache, then the id
 * index); an event whose node is defined later in the file keeps its id
 * in @pending until the end.
 */
struct pending {
	size_t ev;			/* event index */
	uint64_t id;			/* its node id */
};

struct stream;

struct load_state {
	struct tid_map tids;
	struct pending *pending;
	size_t nr_pending, alloc_pending;
	uint64_t last_ticks;
	unsigned sym_section;		/* the symbol section being read */
	unsigned flags;			/* enum hs_trace_load_flags */
	uint64_t cache_id;		/* the last node id resolved, 0 = none */
	uint32_t cache_index;
	uint64_t span_tid;		/* the thread of the current span ... */
	uint32_t span_thread;		/* ... and its index */
	int span_valid;
	uint64_t *parent_ids;		/* node index -> parent id */
	size_t alloc_parent_ids;
	struct stream *stream;		/* hs_trace_stream(): events go there */
};

static inline __attribute__((always_inline)) int
stream_event(struct stream *s, uint32_t thread, uint64_t ticks, enum hs_trace_op op,
	     unsigned fn, uint64_t addr, uint64_t size, uint64_t node);

/* The index of node @id (0: no stack), or HS_TRACE_PENDING while unknown. */
#define HS_TRACE_PENDING (UINT32_MAX - 2)
static uint32_t stack_index(const struct hs_trace *t, struct load_state *ls, uint64_t id)
{
	uint32_t k;

	if (!id)
		return HS_TRACE_NONE;
	if (id == ls->cache_id)
		return ls->cache_index;
	k = node_index(t, id);
	if (k == HS_TRACE_NONE)
		return HS_TRACE_PENDING;
	ls->cache_id = id;
	ls->cache_index = k;
	return k;
}

static inline __attribute__((always_inline)) int
add_event(struct hs_trace *t, struct load_state *ls, uint32_t thread,
		     uint64_t ticks, enum hs_trace_op op, unsigned fn, uint64_t addr,
		     uint64_t size, uint64_t stack)
{
	size_t n = t->nr_events;
	uint32_t k;

	if (ticks > ls->last_ticks)
		ls->last_ticks = ticks;
	if (ls->flags & HS_TRACE_NO_EVENTS)
		return 0;
	k = stack_index(t, ls, stack);
	if (ls->stream)
		return stream_event(ls->stream, thread, ticks, op, fn, addr, size,
				    k == HS_TRACE_PENDING ? HS_TRACE_EV_NODE_ID | stack : k);
	if (n == t->alloc_events && grow_events(t, n + 1))
		return -ENOMEM;
	if (k == HS_TRACE_PENDING) {
		if (HS_GROW(ls->pending, ls->nr_pending + 1, ls->alloc_pending))
			return -ENOMEM;
		ls->pending[ls->nr_pending].ev = n;
		ls->pending[ls->nr_pending++].id = stack;
	}
	t->time[n] = (int64_t)ticks;
	t->addr[n] = addr;
	t->size[n] = size;
	t->stack[n] = k;
	t->thread[n] = thread;
	t->op[n] = (uint8_t)op;
	t->fn[n] = (uint8_t)fn;
	t->nr_events = n + 1;
	return 0;
}

static char *dup_bytes(const uint8_t *s, size_t n)
{
	return hs_strndup((const char *)s, n);
}

static inline int span_thread(struct hs_trace *t, struct load_state *ls, uint64_t tid,
			      uint32_t *th);
static int note_parent(struct hs_trace *t, struct load_state *ls, size_t before,
		       uint64_t parent);

/* Event @ev of a record of tag @tag into @t: its thread's counts, and the event. */
static inline __attribute__((always_inline)) int
walk_event(struct hs_trace *t, struct load_state *ls, unsigned tag,
	   const struct hs_rec_event *ev)
{
	uint32_t th;
	int err = span_thread(t, ls, ev->tid, &th);

	if (err)
		return err;
	switch (ev->op) {
	case HS_OP_ALLOC:
		t->threads[th].allocs++;
		t->threads[th].bytes += ev->size;
		break;
	case HS_OP_FREE:
		/* (a realloc's free is not one of the thread's frees) */
		t->threads[th].frees += !hs_tag_is_realloc(tag);
		break;
	case HS_OP_SAMPLE:
		if (ev->addr == HS_SAMPLE_CPU)
			t->sampling.cpu_samples++;
		else
			t->sampling.wall_samples++;
		break;
	}
	return add_event(t, ls, th, ev->ticks, ev->op, tag, ev->addr, ev->size, ev->stack);
}

/*
 * The events of record @rec (hs_rec_events()) into @t. Returns how many,
 * or a negative errno.
 */
static inline __attribute__((always_inline)) int
walk_events(struct hs_trace *t, struct load_state *ls, const struct hs_rec *rec)
{
	struct hs_rec_event ev[2];
	unsigned n = hs_rec_events(rec, ev);
	int err = 0;

	/* (each by a constant index: the events stay in registers) */
	if (n > 0)
		err = walk_event(t, ls, rec->tag, &ev[0]);
	if (n > 1 && !err)
		err = walk_event(t, ls, rec->tag, &ev[1]);
	return err ? err : (int)n;
}

/*
 * Record @rec into @t: the stack tree, the process, threads, modules,
 * clock, RSS, the end, the footer, sampling, and the events
 * (walk_events()). Symbol records are not for here.
 */
static int walk_record(struct hs_trace *t, struct load_state *ls,
		       const struct hs_rec *rec, const char **why)
{
	uint32_t th;
	int err;

	if (rec->tag == HS_TAG_SPAN)
		return 0;
	if (rec->tag == HS_TAG_NODE) {
		size_t before = t->nr_nodes;

		err = add_node(t, rec->id, rec->parent, rec->addr, ls->last_ticks);
		return err ? err : note_parent(t, ls, before, rec->parent);
	}
	if (rec->tag < HS_TAG_SIZED_FIRST) {
		err = walk_events(t, ls, rec);
		return err < 0 ? err : 0;
	}
	if (rec->tag == HS_TAG_PROCESS) {
		if (t->info.present)
			return 0;
		return hs_trace_info_decode(rec->body, rec->body_len, &t->info, why);
	}
	err = thread_index(t, &ls->tids, rec->tid, &th);
	if (err)
		return err;
	switch (rec->tag) {
	case HS_TAG_CLOCK:
		if (t->nr_clock == t->alloc_clock) {
			size_t cap = t->alloc_clock ? 2 * t->alloc_clock : 64;

			if (grow_col((void **)&t->clock_ticks, cap, sizeof(uint64_t)) ||
			    grow_col((void **)&t->clock_ns, cap, sizeof(int64_t)))
				return -ENOMEM;
			t->alloc_clock = cap;
		}
		t->clock_ticks[t->nr_clock] = rec->ticks;
		t->clock_ns[t->nr_clock] = (int64_t)rec->value;
		t->nr_clock++;
		return 0;
	case HS_TAG_RSS:
		if (t->nr_rss == t->alloc_rss) {
			size_t cap = t->alloc_rss ? 2 * t->alloc_rss : 64;

			if (grow_col((void **)&t->rss_time, cap, sizeof(int64_t)) ||
			    grow_col((void **)&t->rss_bytes, cap, sizeof(uint64_t)))
				return -ENOMEM;
			t->alloc_rss = cap;
		}
		t->rss_time[t->nr_rss] = (int64_t)rec->ticks;
		t->rss_bytes[t->nr_rss] = rec->value;
		t->nr_rss++;
		if (rec->ticks > ls->last_ticks)
			ls->last_ticks = rec->ticks;
		return 0;
	case HS_TAG_MODULE: {
		struct hs_trace_module *m;

		if (HS_GROW(t->modules, t->nr_modules + 1, t->alloc_modules))
			return -ENOMEM;
		m = &t->modules[t->nr_modules];
		memset(m, 0, sizeof(*m));
		m->id = rec->id;
		m->bias = rec->bias;
		m->start = rec->start;
		m->end = rec->end;
		m->load_ticks = rec->ticks;
		m->unload_ticks = UINT64_MAX;
		m->unload_node = UINT64_MAX;
		m->path = dup_bytes(rec->str, rec->str_len);
		m->build_id = hs_malloc(rec->bytes_len ? rec->bytes_len : 1);
		if (!m->path || !m->build_id) {
			hs_free(m->path);
			hs_free(m->build_id);
			return -ENOMEM;
		}
		memcpy(m->build_id, rec->bytes, rec->bytes_len);
		m->build_id_len = rec->bytes_len;
		t->nr_modules++;
		return 0;
	}
	case HS_TAG_MODULE_UNLOAD: {
		size_t i;

		for (i = t->nr_modules; i-- > 0;)
			if (t->modules[i].id == rec->id &&
			    t->modules[i].unload_ticks == UINT64_MAX) {
				t->modules[i].unload_ticks = rec->ticks;
				if (rec->parent)
					t->modules[i].unload_node = rec->parent;
				break;
			}
		return 0;
	}
	case HS_TAG_THREAD_START:
	case HS_TAG_THREAD_NAME: {
		char *name;

		if (rec->tag == HS_TAG_THREAD_NAME && rec->id) {
			err = thread_index(t, &ls->tids, rec->id, &th);
			if (err)
				return err;
		}
		name = dup_bytes(rec->str, rec->str_len);
		if (!name)
			return -ENOMEM;
		hs_free(t->threads[th].name);
		t->threads[th].name = name;
		if (rec->tag == HS_TAG_THREAD_START)
			t->threads[th].start_ns = (int64_t)rec->ticks;
		return 0;
	}
	case HS_TAG_THREAD_EXIT:
		t->threads[th].exit_ns = (int64_t)rec->ticks;
		return 0;
	case HS_TAG_END:
		t->has_end = 1;
		t->end_reason = (unsigned)rec->value;
		t->end_detail = rec->detail;
		if (rec->ticks > ls->last_ticks)
			ls->last_ticks = rec->ticks;
		return 0;
	case HS_TAG_FOOTER: {
		const uint8_t *q = rec->body, *end = rec->body + rec->body_len;
		size_t i;

		for (i = 0; i < HS_FC__COUNT; i++)
			if (hs_get_varint(&q, end, &t->footer[i])) {
				*why = "malformed footer";
				return -EINVAL;
			}
		t->has_footer = 1;
		return 0;
	}
	case HS_TAG_SAMPLE:
		/* (the span's thread comes first: its samples' threads after it) */
		err = walk_events(t, ls, rec);
		return err < 0 ? err : 0;
	case HS_TAG_SAMPLING:
		t->sampling.present = 1;
		t->sampling.cpu_hz = rec->value;
		t->sampling.wall_hz = rec->detail;
		t->sampling.signal = rec->id;
		t->sampling.flags = rec->flags;
		return 0;
	case HS_TAG_SAMPLING_END:
		t->sampling.ended = 1;
		t->sampling.dropped = rec->size;
		t->sampling.signals = rec->old_size;
		return 0;
	default:
		return 0;	/* FORK, EXEC and unknown sized records */
	}
}

/* ticks -> ns with the CLOCK pairs (sorted by ticks). */
static int64_t ticks_to_ns(const struct hs_trace *t, uint64_t ticks)
{
	size_t lo = 0, hi = t->nr_clock, i;
	double rate;

	if (t->info.clock == HS_CLOCK_NS || t->nr_clock == 0)
		return (int64_t)ticks;
	/* last pair with clock_ticks <= ticks */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->clock_ticks[mid] <= ticks)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (t->nr_clock == 1)
		return t->clock_ns[0] + (int64_t)(ticks - t->clock_ticks[0]);
	i = lo == 0 ? 0 : lo - 1;
	if (i + 1 >= t->nr_clock)
		i = t->nr_clock - 2;
	if (t->clock_ticks[i + 1] == t->clock_ticks[i])
		return t->clock_ns[i];
	rate = (double)(t->clock_ns[i + 1] - t->clock_ns[i]) /
	       (double)(t->clock_ticks[i + 1] - t->clock_ticks[i]);
	return t->clock_ns[i] +
	       (int64_t)llround(((double)ticks - (double)t->clock_ticks[i]) * rate);
}

static int cmp_clock(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int sort_clock(struct hs_trace *t)
{
	uint64_t *pairs;
	size_t i, n = t->nr_clock;

	if (n < 2)
		return 0;
	pairs = hs_malloc(2 * n * sizeof(uint64_t));
	if (!pairs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		pairs[2 * i] = t->clock_ticks[i];
		pairs[2 * i + 1] = (uint64_t)t->clock_ns[i];
	}
	qsort(pairs, n, 2 * sizeof(uint64_t), cmp_clock);
	for (i = 0; i < n; i++) {
		t->clock_ticks[i] = pairs[2 * i];
		t->clock_ns[i] = (int64_t)pairs[2 * i + 1];
	}
	hs_free(pairs);
	return 0;
}

/* Stable merge sort of the event permutation @idx by time. */
static void merge_sort(uint32_t *idx, uint32_t *tmp, size_t n, const int64_t *time)
{
	size_t width, i;

	for (width = 1; width < n; width *= 2) {
		for (i = 0; i < n; i += 2 * width) {
			size_t lo = i, mid = i + width < n ? i + width : n;
			size_t hi = i + 2 * width < n ? i + 2 * width : n;
			size_t a = lo, b = mid, k = lo;

			if (mid >= hi || time[idx[mid - 1]] <= time[idx[mid]]) {
				memcpy(tmp + lo, idx + lo, (hi - lo) * sizeof(*idx));
				continue;
			}
			while (a < mid && b < hi)
				tmp[k++] = time[idx[b]] < time[idx[a]] ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[k++] = idx[a++];
			while (b < hi)
				tmp[k++] = idx[b++];
		}
		memcpy(idx, tmp, n * sizeof(*idx));
	}
}

#define PERMUTE(col, type)                                                \
	do {                                                              \
		type *dst = (type *)scratch;                              \
		for (i = 0; i < n; i++)                                   \
			dst[i] = t->col[idx[i]];                          \
		memcpy(t->col, dst, n * sizeof(type));                    \
	} while (0)

static int sort_events(struct hs_trace *t)
{
	size_t n = t->nr_events, i;
	uint32_t *idx, *tmp;
	void *scratch;

	for (i = 1; i < n; i++)
		if (t->time[i] < t->time[i - 1])
			break;
	if (i >= n)
		return 0;
	idx = hs_malloc(n * sizeof(uint32_t));
	tmp = hs_malloc(n * sizeof(uint32_t));
	scratch = hs_malloc(n * sizeof(uint64_t));
	if (!idx || !tmp || !scratch) {
		hs_free(idx);
		hs_free(tmp);
		hs_free(scratch);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	merge_sort(idx, tmp, n, t->time);
	PERMUTE(time, int64_t);
	PERMUTE(addr, uint64_t);
	PERMUTE(size, uint64_t);
	PERMUTE(stack, uint32_t);
	PERMUTE(thread, uint32_t);
	PERMUTE(op, uint8_t);
	PERMUTE(fn, uint8_t);
	hs_free(idx);
	hs_free(tmp);
	hs_free(scratch);
	return 0;
}

/* Whether module @i of @t was loaded before module @j (by time, then id, then file order). */
static int loaded_before(const struct hs_trace *t, size_t i, size_t j)
{
	const struct hs_trace_module *a = &t->modules[i], *b = &t->modules[j];

	if (a->load_ticks != b->load_ticks)
		return a->load_ticks < b->load_ticks;
	if (a->id != b->id)
		return a->id < b->id;
	return i < j;
}

/*
 * Whether module @m may hold node (@a, @id, defined at @tk): it holds the
 * address and was not unloaded before the node was defined (by node id
 * where the unload says, else by time).
 */
static int module_may_hold(const struct hs_trace_module *m, uint64_t a, uint64_t id,
			   uint64_t tk)
{
	if (a < m->start || a >= m->end)
		return 0;
	return m->unload_node != UINT64_MAX ? id < m->unload_node : m->unload_ticks >= tk;
}

/*
 * Module of each node. Among the modules that may hold it, the first
 * loaded whose unload names the next node (so it was unloaded after the
 * node was defined) rules out those loaded after it at those addresses:
 * they came after its unload, after the node. Of the others, the latest
 * loaded no later than the node; failing that, the earliest loaded after
 * it (a load noticed late).
 */
static void resolve_node_modules(struct hs_trace *t)
{
	size_t i, j;

	for (i = 0; i < t->nr_nodes; i++) {
		uint64_t a = t->node_addr[i], tk = t->node_ticks[i], id = t->node_id[i];
		uint32_t before = HS_TRACE_NONE, after = HS_TRACE_NONE, last = HS_TRACE_NONE;

		if (!a)
			continue;
		for (j = 0; j < t->nr_modules; j++)
			if (module_may_hold(&t->modules[j], a, id, tk) &&
			    t->modules[j].unload_node != UINT64_MAX &&
			    (last == HS_TRACE_NONE || loaded_before(t, j, last)))
				last = (uint32_t)j;
		for (j = 0; j < t->nr_modules; j++) {
			const struct hs_trace_module *m = &t->modules[j];

			if (!module_may_hold(m, a, id, tk) ||
			    (last != HS_TRACE_NONE && loaded_before(t, last, j)))
				continue;
			if (m->load_ticks <= tk) {
				if (before == HS_TRACE_NONE ||
				    m->load_ticks >= t->modules[before].load_ticks)
					before = (uint32_t)j;
			} else if (after == HS_TRACE_NONE ||
				   m->load_ticks < t->modules[after].load_ticks) {
				after = (uint32_t)j;
			}
		}
		t->node_module[i] = before != HS_TRACE_NONE ? before : after;
	}
}

void hs_trace_event_get(const struct hs_trace *t, size_t i, struct hs_trace_event *e)
{
	e->time = t->time[i];
	e->addr = t->addr[i];
	e->size = t->size[i];
	e->node = t->stack[i];
	e->thread = t->thread[i];
	e->op = t->op[i];
	e->fn = t->fn[i];
}

/* The reverse of hs_trace_event_get(). */
static void event_put(struct hs_trace *t, size_t i, const struct hs_trace_event *e)
{
	t->time[i] = e->time;
	t->addr[i] = e->addr;
	t->size[i] = e->size;
	t->stack[i] = (uint32_t)e->node;
	t->thread[i] = e->thread;
	t->op[i] = e->op;
	t->fn[i] = e->fn;
}

static int amap_live(void *ctx, uint64_t a)
{
	return hs_amap_has(ctx, a);
}

/* hs_order_ties() over the ticks of a loaded trace with several threads' events. */
static int fix_ties(struct hs_trace *t)
{
	struct hs_tie_work w;
	struct hs_amap live = { 0 };
	struct hs_trace_event *grp = NULL;
	size_t alloc_grp = 0, i = 0, n = t->nr_events, k;
	uint64_t old;
	int err = 0;

	if (t->nr_threads < 2)
		return 0;
	memset(&w, 0, sizeof(w));
	while (i < n && !err) {
		size_t j = i + 1;
		int multi = 0;

		while (j < n && t->time[j] == t->time[i]) {
			multi |= t->thread[j] != t->thread[i];
			j++;
		}
		if (multi) {
			if (HS_GROW(grp, j - i, alloc_grp)) {
				err = -ENOMEM;
				break;
			}
			for (k = i; k < j; k++)
				hs_trace_event_get(t, k, &grp[k - i]);
			err = hs_order_ties(&w, grp, j - i, amap_live, &live);
			if (err > 0)
				for (k = i; k < j; k++)
					event_put(t, k, &grp[k - i]);
			if (err > 0)
				err = 0;
		}
		for (k = i; k < j && !err; k++) {
			if (t->op[k] == HS_OP_ALLOC)
				err = hs_amap_put(&live, t->addr[k], 1, &old);
			else if (t->op[k] == HS_OP_FREE)
				hs_amap_del(&live, t->addr[k]);
		}
		i = j;
	}
	hs_free(grp);
	hs_tie_work_release(&w);
	hs_amap_release(&live);
	return err;
}

/* --- streaming ------------------------------------------------------------- */

/*
 * The events go from the reading thread to the caller's thread in
 * batches of whole groups (the events of one time), through a ring of
 * NR_BATCHES batches: reading and the sink's work overlap.
 *
 * The reorder window: threads' events reach the file in the order the
 * collector drained their buffers, so one thread's events may come after
 * later ones of another thread (each thread's own are in order). The
 * reading side keeps events back, in order, in a staging array: with the
 * footer's chunk index, those that an event of a chunk still to come may
 * go before (stream_chunk()); without it, the last STREAM_WINDOW. In the
 * staging array, a thread's events that come after later ones (a "run")
 * are gathered and merged into it in one pass, after the events of their
 * time already there, as in file order. A batch ends where the time
 * changes. An event older than what was handed over stops the stream
 * (-EAGAIN: the caller loads the trace whole).
 */
#define BATCH_EVENTS 2048
#define NR_BATCHES 8
#define STREAM_WINDOW ((size_t)1 << 17)
#define STREAM_SLICE 4096
/* with the chunk index: the chunks after the current one that are not
 * read ahead (stream_chunk()) */
#define STREAM_AHEAD 1
/* a staging buffer that grows or is taken anew has room for STREAM_ROOM
 * times the events that need it; all hold at most STREAM_BUDGET times */
#define STREAM_ROOM 2
#define STREAM_BUDGET 5

/*
 * A batch is a stretch of a staging buffer: the reading side stages
 * events in one buffer and hands them over where they are; it moves on to
 * another buffer when the current one is full while batches still use it.
 */
struct batch {
	struct hs_trace_event *ev;	/* n events */
	size_t n;
	unsigned buf;			/* in stream.buf[] */
};

struct evbuf {
	struct hs_trace_event *ev;
	size_t alloc;
	unsigned refs;			/* batches handed over from it (under mu) */
};

#define NR_BUFS (NR_BATCHES + 2)

struct stream {
	const struct hs_trace_sink *sink;
	/*
	 * The ring: batches [tail, head) are handed over, [head, head +
	 * held) are the reading side's (the last one being filled), the
	 * others free.
	 */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[NR_BATCHES];
	size_t head, tail;
	int done, stop;
	/* the reorder window (the reading thread) */
	struct evbuf buf[NR_BUFS];
	unsigned cur;			/* the buffer that stage and st_alloc are */
	struct hs_trace_event *stage;	/* waiting events, in order: [st_head, st_end) */
	size_t st_head, st_end, st_alloc;
	struct hs_trace_event *run;	/* a late thread's events, until they merge */
	size_t run_n, run_alloc;
	uint32_t run_thread;		/* the thread whose events come now */
	int in_run;			/* they go to @run, not to @stage */
	/*
	 * The footer's chunk index, when the trace has one: EVENTS chunks'
	 * offsets (increasing) and the lowest time each can hold (its first
	 * ticks, or what stream_peek() found; idx_first[nidx] is INT64_MAX),
	 * and a tree of the lowest of them (stream_lowest()). Events older
	 * than what the chunks still to come can hold go on; without an
	 * index, all but the last STREAM_WINDOW.
	 */
	uint64_t *idx_off;
	int64_t *idx_first;
	uint8_t *idx_peeked;		/* stream_peek() read the chunk */
	size_t *idx_tree;		/* 2 * idx_leaves: chunks, the lowest first */
	size_t nidx, idx_leaves;
	uint8_t *peek_stored, *peek_raw;	/* stream_peek()'s buffers */
	size_t alloc_peek_stored, alloc_peek_raw;
	size_t peeks;			/* chunks stream_peek() read */
	size_t staged_max;		/* the most events kept back at a chunk's start */
	int read_err;			/* what reading returned */
	int published;			/* some events were handed over ... */
	int64_t pub_time;		/* ... the last of them at this time */
	struct hs_tie_work ties;		/* the caller's side: hs_order_ties() */
};

/*
 * Hand the oldest @n staged events (and the rest of their tick) over as a
 * batch with its groups (the reading thread).
 */
static int stream_publish(struct stream *s, size_t n)
{
	struct hs_trace_event *ev = s->stage + s->st_head;
	size_t avail = s->st_end - s->st_head;
	struct batch *b;
	int stop;

	if (n > avail)
		n = avail;
	if (!n)
		return 0;
	while (n < avail && ev[n].time == ev[n - 1].time)
		n++;
	pthread_mutex_lock(&s->mu);
	while (s->head - s->tail >= NR_BATCHES && !s->stop)
		pthread_cond_wait(&s->cv, &s->mu);
	stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	if (stop)
		return -ECANCELED;
	b = &s->b[s->head % NR_BATCHES];
	b->ev = ev;
	b->n = n;
	b->buf = s->cur;
	s->st_head += n;
	s->published = 1;
	s->pub_time = ev[n - 1].time;
	pthread_mutex_lock(&s->mu);
	s->buf[s->cur].refs++;
	s->head++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/*
 * Room for @n more staged events: in place when no batch uses the buffer
 * (moving the waiting events to the front, or growing it), else the
 * waiting events move to a buffer no batch uses. The buffers hold at
 * most STREAM_BUDGET times the events that need room (with some for what
 * comes next): above that, the reading side waits for the caller's side
 * to hand batches back instead of taking more memory.
 */
static int stage_room(struct stream *s, size_t n)
{
	size_t waiting = s->st_end - s->st_head, need = waiting + n;
	size_t a = STREAM_ROOM * need > STREAM_WINDOW ? STREAM_ROOM * need : STREAM_WINDOW;
	size_t budget = STREAM_BUDGET * (need > STREAM_WINDOW ? need : STREAM_WINDOW);
	struct evbuf *to = NULL;
	unsigned i;

	if (s->st_end + n <= s->st_alloc)
		return 0;
	pthread_mutex_lock(&s->mu);
	while (s->buf[s->cur].refs) {
		size_t total = 0;

		/* a free buffer: the smallest one with room, else the largest */
		to = NULL;
		for (i = 0; i < NR_BUFS; i++) {
			struct evbuf *b = &s->buf[i];

			total += b->alloc;
			if (i == s->cur || b->refs)
				continue;
			if (!to || (b->alloc >= need ? to->alloc < need || b->alloc < to->alloc :
				    to->alloc < need && b->alloc > to->alloc))
				to = b;
		}
		/* (there is always one: NR_BATCHES batches and the current) */
		if (to && (to->alloc >= need || total - to->alloc + a <= budget))
			break;
		to = NULL;
		pthread_cond_wait(&s->cv, &s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	if (!to) {
		struct evbuf *c = &s->buf[s->cur];

		if (s->st_head)
			memmove(s->stage, s->stage + s->st_head, waiting * sizeof(*s->stage));
		if (need > s->st_alloc - s->st_alloc / 4) {
			/* (room for as many again: moving the waiting events
			 * to the front each time would cost more) */
			if (HS_GROW(c->ev, a, c->alloc)) {
				s->st_head = 0;
				s->st_end = waiting;
				return -ENOMEM;
			}
			s->stage = c->ev;
			s->st_alloc = c->alloc;
		}
	} else {
		if (to->alloc < need) {
			hs_free(to->ev);
			to->alloc = 0;
			to->ev = hs_malloc(a * sizeof(*to->ev));
			if (!to->ev)
				return -ENOMEM;
			to->alloc = a;
		}
		memcpy(to->ev, s->stage + s->st_head, waiting * sizeof(*s->stage));
		s->cur = (unsigned)(to - s->buf);
		s->stage = to->ev;
		s->st_alloc = to->alloc;
	}
	s->st_head = 0;
	s->st_end = waiting;
	return 0;
}

/*
 * Merge the gathered run into the staged events (the reading thread),
 * from the back: only the staged events later than the run's first move.
 */
static int stream_merge(struct stream *s)
{
	const struct hs_trace_event *r = s->run;
	struct hs_trace_event *st;
	size_t i, j, k;
	int err;

	s->in_run = 0;
	if (!s->run_n)
		return 0;
	if (s->published && r[0].time <= s->pub_time)
		return -EAGAIN;	/* later than the window: load it whole */
	err = stage_room(s, s->run_n);
	if (err)
		return err;
	st = s->stage;
	i = s->st_end;
	j = s->run_n;
	k = i + j;
	/* equal times: the staged events were earlier in the file */
	while (j) {
		if (i > s->st_head && st[i - 1].time > r[j - 1].time)
			st[--k] = st[--i];
		else
			st[--k] = r[--j];
	}
	s->st_end += s->run_n;
	s->run_n = 0;
	return 0;
}

static inline __attribute__((always_inline)) int
stream_event(struct stream *s, uint32_t thread, uint64_t ticks, enum hs_trace_op op,
	     unsigned fn, uint64_t addr, uint64_t size, uint64_t node)
{
	struct hs_trace_event *e;
	int err;

	if (thread != s->run_thread) {
		/* another thread's events: the late ones gathered so far merge */
		if (s->in_run && (err = stream_merge(s)))
			return err;
		s->run_thread = thread;
		s->in_run = s->st_end > s->st_head &&
			    (int64_t)ticks < s->stage[s->st_end - 1].time;
	}
	if (s->in_run) {
		if (s->run_n == s->run_alloc && HS_GROW(s->run, s->run_n + 1, s->run_alloc))
			return -ENOMEM;
		e = &s->run[s->run_n++];
	} else {
		if (s->published && (int64_t)ticks <= s->pub_time)
			return -EAGAIN;
		if (s->st_end == s->st_alloc && (err = stage_room(s, 1)))
			return err;
		e = &s->stage[s->st_end++];
	}
	e->time = (int64_t)ticks;
	e->addr = addr;
	e->size = size;
	e->node = node;
	e->thread = thread;
	e->op = (uint8_t)op;
	e->fn = (uint8_t)fn;
	if (s->nidx || s->st_end - s->st_head < STREAM_WINDOW + BATCH_EVENTS)
		return 0;
	return stream_publish(s, BATCH_EVENTS);
}

/* Of chunks @a and @b, the one that can hold the lower time (the first on a tie). */
static inline size_t lower_chunk(const struct stream *s, size_t a, size_t b)
{
	if (s->idx_first[b] < s->idx_first[a] || (s->idx_first[b] == s->idx_first[a] && b < a))
		return b;
	return a;
}

/* Chunk @i can hold nothing older than @v now. */
static void stream_set_first(struct stream *s, size_t i, int64_t v)
{
	size_t k = s->idx_leaves + i;

	s->idx_first[i] = v;
	for (k /= 2; k; k /= 2)
		s->idx_tree[k] = lower_chunk(s, s->idx_tree[2 * k], s->idx_tree[2 * k + 1]);
}

/* The chunk from @i on that can hold the oldest events (nidx: none). */
static size_t stream_lowest(const struct stream *s, size_t i)
{
	size_t l = s->idx_leaves + i, h = s->idx_leaves + s->nidx, best = s->nidx;

	for (; l < h; l /= 2, h /= 2) {
		if (l & 1)
			best = lower_chunk(s, best, s->idx_tree[l++]);
		if (h & 1)
			best = lower_chunk(s, best, s->idx_tree[--h]);
	}
	return best;
}

/*
 * The lowest time of the events chunk @i holds, read from the chunk
 * itself (the reading thread, while it reads an earlier chunk). Its first
 * ticks in the index are its threads' times before it, far too low when
 * one of them was idle for long. Returns INT64_MIN when it cannot tell:
 * the index's bound stays (reading the chunk in its turn reports what is
 * wrong with it).
 */
static int64_t stream_peek(struct stream *s, struct hs_trace_reader *r, size_t i)
{
	uint64_t off = s->idx_off[i];
	struct hs_chunk_header ch;
	struct hs_rec_state st;
	struct hs_rec rec;
	const uint8_t *hdr, *q, *e;
	const char *why;
	int64_t low = INT64_MAX;

	s->peeks++;
	if (off > r->size || r->size - off < HS_CHUNK_HEADER_SIZE ||
	    hs__reader_read(r, off, HS_CHUNK_HEADER_SIZE, &s->peek_stored, &s->alloc_peek_stored,
		     &hdr) ||
	    hs_chunk_header_parse(hdr, &ch) || ch.kind != HS_CHUNK_EVENTS ||
	    ch.stored > HS_CHUNK_MAX || ch.raw > HS_CHUNK_MAX ||
	    r->size - off - HS_CHUNK_HEADER_SIZE < ch.stored ||
	    hs__reader_read(r, off + HS_CHUNK_HEADER_SIZE, ch.stored, &s->peek_stored,
		     &s->alloc_peek_stored, &q))
		return INT64_MIN;
	e = q + ch.stored;
	if (ch.flags & HS_CHUNK_ZSTD) {
		if (HS_GROW(s->peek_raw, ch.raw ? ch.raw : 1, s->alloc_peek_raw))
			return INT64_MIN;
		if (ZSTD_decompress(s->peek_raw, ch.raw, q, ch.stored) != ch.raw)
			return INT64_MIN;
		q = s->peek_raw;
		e = q + ch.raw;
	}
	memset(&st, 0, sizeof(st));
	while (q < e) {
		struct hs_rec_event ev[2];
		unsigned n, k;

		if (hs_rec_decode(&q, e, &st, &rec, &why))
			return INT64_MIN;
		n = hs_rec_events(&rec, ev);
		for (k = 0; k < n; k++) {
			if (ev[k].ticks > INT64_MAX)
				return INT64_MIN;
			if ((int64_t)ev[k].ticks < low)
				low = (int64_t)ev[k].ticks;
		}
	}
	return low;
}

/*
 * A chunk of the trace @r reads starts at @offset (the reading thread):
 * with the index, the staged events older than every event still to come
 * go on. The chunk that can hold the oldest of them, when it is not one
 * of the next STREAM_AHEAD + 1, is read ahead for its real lowest time
 * (stream_peek()), once: a thread idle for long (a main thread that waits
 * for its workers and frees at exit) otherwise keeps every event back
 * until it writes again.
 */
static int stream_chunk(struct stream *s, struct hs_trace_reader *r, uint64_t offset)
{
	size_t lo = 0, hi = s->nidx, n, at;
	int64_t low;
	int err;

	if (s->st_end - s->st_head + s->run_n > s->staged_max)
		s->staged_max = s->st_end - s->st_head + s->run_n;
	if (!s->nidx)
		return 0;
	if (s->in_run && (err = stream_merge(s)))
		return err;
	s->run_thread = UINT32_MAX;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->idx_off[mid] < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (;;) {
		int64_t v;

		at = stream_lowest(s, lo);
		if (at == s->nidx || at <= lo + STREAM_AHEAD || s->idx_peeked[at])
			break;
		s->idx_peeked[at] = 1;
		v = stream_peek(s, r, at);
		if (v != INT64_MIN)
			stream_set_first(s, at, v);
	}
	low = s->idx_first[at];
	for (;;) {
		lo = s->st_head;
		hi = s->st_end;
		if (lo == hi || s->stage[lo].time >= low)
			return 0;
		/* the events before @low */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (s->stage[mid].time < low)
				lo = mid + 1;
			else
				hi = mid;
		}
		n = lo - s->st_head;
		err = stream_publish(s, n);
		if (err)
			return err;
	}
}

/*
 * Read the footer's chunk index of the trace @r has open, if it has one
 * (its last END chunk holds it), into @s. Anything odd leaves @s without
 * an index: the stream then keeps a window of events back instead.
 */
static void stream_index(struct hs_trace_reader *r, struct stream *s)
{
	uint64_t off = HS_FILE_HEADER_SIZE, end_off = 0, v, n, i;
	struct hs_chunk_header ch;
	struct hs_rec_state st;
	struct hs_rec rec;
	const uint8_t *hdr, *q, *e;
	uint8_t *raw = NULL;
	const char *why;

	while (r->size - off >= HS_CHUNK_HEADER_SIZE) {
		if (hs__reader_read_at(r, off, HS_CHUNK_HEADER_SIZE, &hdr) ||
		    hs_chunk_header_parse(hdr, &ch) || ch.stored > HS_CHUNK_MAX ||
		    ch.raw > HS_CHUNK_MAX || r->size - off - HS_CHUNK_HEADER_SIZE < ch.stored)
			break;
		if (ch.kind == HS_CHUNK_END)
			end_off = off;
		off += HS_CHUNK_HEADER_SIZE + ch.stored;
	}
	if (!end_off || hs__reader_read_at(r, end_off, HS_CHUNK_HEADER_SIZE, &hdr) ||
	    hs_chunk_header_parse(hdr, &ch))
		return;
	if (hs__reader_read_at(r, end_off + HS_CHUNK_HEADER_SIZE, ch.stored, &q))
		return;
	e = q + ch.stored;
	if (ch.flags & HS_CHUNK_ZSTD) {
		raw = hs_malloc(ch.raw ? ch.raw : 1);
		if (!raw || ZSTD_isError(ZSTD_decompress(raw, ch.raw, q, ch.stored)))
			goto out;
		q = raw;
		e = raw + ch.raw;
	}
	memset(&st, 0, sizeof(st));
	while (q < e && !hs_rec_decode(&q, e, &st, &rec, &why)) {
		const uint8_t *b, *be;

		if (rec.tag != HS_TAG_FOOTER || !rec.body)
			continue;
		b = rec.body;
		be = rec.body + rec.body_len;
		for (i = 0; i < HS_FC__COUNT; i++)
			if (hs_get_varint(&b, be, &v))
				goto out;
		if (hs_get_varint(&b, be, &n) || n > (uint64_t)(be - b) / 3)
			goto out;
		for (s->idx_leaves = 1; s->idx_leaves < n + 1; s->idx_leaves *= 2)
			;
		s->idx_off = hs_malloc((n + 1) * sizeof(uint64_t));
		s->idx_first = hs_malloc((n + 1) * sizeof(int64_t));
		s->idx_peeked = hs_calloc(n + 1, 1);
		s->idx_tree = hs_malloc(2 * s->idx_leaves * sizeof(size_t));
		if (!s->idx_off || !s->idx_first || !s->idx_peeked || !s->idx_tree)
			goto bad;
		for (i = 0; i < n; i++) {
			uint64_t first, last;

			if (hs_get_varint(&b, be, &s->idx_off[i]) ||
			    hs_get_varint(&b, be, &first) || hs_get_varint(&b, be, &last) ||
			    (i && s->idx_off[i] <= s->idx_off[i - 1]))
				goto bad;
			/* a chunk without events says UINT64_MAX */
			s->idx_first[i] = first > INT64_MAX ? INT64_MAX : (int64_t)first;
		}
		s->idx_first[n] = INT64_MAX;
		s->nidx = (size_t)n;
		for (i = 0; i < s->idx_leaves; i++)
			s->idx_tree[s->idx_leaves + i] = i < n ? i : n;
		for (i = s->idx_leaves; i-- > 1;)
			s->idx_tree[i] = lower_chunk(s, s->idx_tree[2 * i],
						     s->idx_tree[2 * i + 1]);
		goto out;
	}
	goto out;
bad:
	hs_free(s->idx_off);
	hs_free(s->idx_first);
	hs_free(s->idx_peeked);
	hs_free(s->idx_tree);
	s->idx_off = NULL;
	s->idx_first = NULL;
	s->idx_peeked = NULL;
	s->idx_tree = NULL;
	s->nidx = 0;
out:
	hs_free(raw);
}

/* Hand over every staged event (the end of the file). */
static int stream_drain(struct stream *s)
{
	int err = s->in_run ? stream_merge(s) : 0;

	if (s->st_end - s->st_head > s->staged_max)
		s->staged_max = s->st_end - s->st_head;
	while (!err && s->st_end > s->st_head)
		err = stream_publish(s, BATCH_EVENTS);
	return err;
}

static int finish(struct hs_trace *t, struct load_state *ls)
{
	size_t i, k;
	int err;
	uint32_t missing = HS_TRACE_NONE;

	err = sort_clock(t);
	if (err)
		return err;
	for (k = 0; k < ls->nr_pending; k++) {
		i = ls->pending[k].ev;
		t->stack[i] = node_index(t, ls->pending[k].id);
		if (t->stack[i] == HS_TRACE_NONE) {
			t->missing_nodes++;
			if (missing == HS_TRACE_NONE) {
				/* a BROKEN node (address 0) stands for the lost stack */
				err = add_node(t, UINT64_MAX, 0, 0, 0);
				if (err)
					return err;
				missing = node_index(t, UINT64_MAX);
			}
			t->stack[i] = missing;
		}
	}
	if (t->info.clock != HS_CLOCK_NS && t->nr_clock)
		for (i = 0; i < t->nr_events; i++)
			t->time[i] = ticks_to_ns(t, (uint64_t)t->time[i]);
	for (i = 0; i < t->nr_rss; i++)
		t->rss_time[i] = ticks_to_ns(t, (uint64_t)t->rss_time[i]);
	for (i = 0; i < t->nr_threads; i++) {
		if (t->threads[i].start_ns >= 0)
			t->threads[i].start_ns = ticks_to_ns(t, (uint64_t)t->threads[i].start_ns);
		if (t->threads[i].exit_ns >= 0)
			t->threads[i].exit_ns = ticks_to_ns(t, (uint64_t)t->threads[i].exit_ns);
	}
	t->duration_ns = ticks_to_ns(t, ls->last_ticks);
	resolve_node_modules(t);
	err = hs__trace_syms_resolve(t);
	if (err || ls->stream)
		return err;
	err = sort_events(t);
	if (err)
		return err;
	return fix_ties(t);
}

static void load_state_release(struct load_state *ls)
{
	hs_free(ls->tids.key);
	hs_free(ls->tids.val);
	hs_free(ls->pending);
	hs_free(ls->parent_ids);
}

/* The thread index of the current span (cached until the next SPAN). */
static inline int span_thread(struct hs_trace *t, struct load_state *ls, uint64_t tid,
			      uint32_t *th)
{
	int err;

	if (ls->span_valid && ls->span_tid == tid) {
		*th = ls->span_thread;
		return 0;
	}
	err = thread_index(t, &ls->tids, tid, th);
	if (!err) {
		ls->span_tid = tid;
		ls->span_thread = *th;
		ls->span_valid = 1;
	}
	return err;
}

/* Remember node @index's parent id (parents are resolved at the end). */
static int note_parent(struct hs_trace *t, struct load_state *ls, size_t before,
		       uint64_t parent)
{
	if (t->nr_nodes == before)
		return 0;
	if (HS_GROW(ls->parent_ids, t->nr_nodes, ls->alloc_parent_ids))
		return -ENOMEM;
	ls->parent_ids[before] = parent;
	return 0;
}

/*
 * The fixed records (SPAN, NODE and the event records), decoded inline
 * (hs_rec_decode_fixed()) and walked without going through the record
 * stream. Returns 1 when the record was handled, 0 when it is for the
 * generic path (a sized record, or a malformed one, which the generic
 * decoder then reports), or a negative errno.
 */
static inline __attribute__((always_inline)) int
fast_record(struct hs_trace_reader *r, struct hs_trace *t, struct load_state *ls)
{
	const uint8_t *q = r->p;
	struct hs_rec rec;
	const char *why;
	int n;

	if (hs_rec_decode_fixed(&q, r->end, &r->st, &rec, &why) != 1)
		return 0;
	r->p = q;
	r->nr_records++;
	if (rec.tag == HS_TAG_SPAN)
		return 1;
	if (rec.tag == HS_TAG_NODE) {
		n = walk_record(t, ls, &rec, &why);
		return n < 0 ? n : 1;
	}
	n = walk_events(t, ls, &rec);
	if (n < 0)
		return n;
	r->nr_events += (unsigned)n;
	return 1;
}

/*
 * The stream's common case in one loop (the reading thread): the MALLOC,
 * CALLOC and FREE records of the thread whose events are being taken,
 * decoded by the one decoder and handled as fast_record() and
 * stream_event() would, with their state in locals. Stops before anything
 * else (then fast_record() goes on from there): another record, a stack
 * not the last one seen, an event that would be late, no more room.
 * Returns 0.
 */
/* (not inlined into load(): its loop gets the registers to itself) */
static __attribute__((noinline)) int
stream_run(struct hs_trace_reader *r, struct hs_trace *t, struct load_state *ls,
		      struct stream *s)
{
	const uint8_t *q = r->p, *end = r->end;
	struct hs_rec_state st = r->st;
	uint64_t last = ls->last_ticks, allocs = 0, frees = 0, bytes = 0;
	struct hs_trace_event *e, *first, *lim;
	int64_t pub = s->published && !s->in_run ? s->pub_time : INT64_MIN;
	uint32_t th = ls->span_thread;
	size_t room, n;

	if (!ls->span_valid || ls->span_tid != r->st.tid || th != s->run_thread ||
	    (ls->flags & HS_TRACE_NO_EVENTS))
		return 0;
	if (s->in_run) {
		first = s->run + s->run_n;
		room = s->run_alloc - s->run_n;
	} else {
		size_t waiting = s->st_end - s->st_head, max = STREAM_WINDOW + BATCH_EVENTS - 1;

		first = s->stage + s->st_end;
		room = s->st_alloc - s->st_end;
		/* without the index, the window's end is stream_event()'s */
		if (!s->nidx)
			room = waiting >= max ? 0 : room < max - waiting ? room : max - waiting;
	}
	for (e = first, lim = first + room; e < lim;) {
		const uint8_t *p = q;
		struct hs_rec_state next = st;
		struct hs_rec_event ev[2];
		struct hs_rec rec;
		const char *why;
		uint64_t node = HS_TRACE_NONE;

		/* one allocation or free, not a realloc's two events (the
		 * common tags first: the decoder then needs no other case) */
		if (p >= end || (*p != HS_TAG_MALLOC && *p != HS_TAG_FREE && *p != HS_TAG_CALLOC))
			break;
		if (hs_rec_decode_fixed(&p, end, &next, &rec, &why) != 1 ||
		    hs_rec_events(&rec, ev) != 1 ||
		    (ev[0].op != HS_OP_ALLOC && ev[0].op != HS_OP_FREE))
			break;
		if (ev[0].stack) {
			if (ev[0].stack != ls->cache_id)
				break;
			node = ls->cache_index;
		}
		if ((int64_t)ev[0].ticks <= pub)
			break;	/* stream_event() says what to do */
		st = next;
		q = p;
		if (ev[0].ticks > last)
			last = ev[0].ticks;
		e->time = (int64_t)ev[0].ticks;
		e->addr = ev[0].addr;
		e->size = ev[0].size;
		e->node = node;
		e->thread = th;
		e->fn = rec.tag;
		e->op = ev[0].op;
		if (ev[0].op == HS_OP_FREE) {
			frees++;
		} else {
			allocs++;
			bytes += ev[0].size;
		}
		e++;
	}
	n = (size_t)(e - first);
	if (!n)
		return 0;
	if (s->in_run)
		s->run_n += n;
	else
		s->st_end += n;
	r->p = q;
	r->st = st;
	r->nr_events += n;
	r->nr_records += n;
	ls->last_ticks = last;
	t->threads[th].allocs += allocs;
	t->threads[th].frees += frees;
	t->threads[th].bytes += bytes;
	return 0;
}

/*
 * A damaged file can give nodes parents that lead back to themselves (ids
 * are resolved after the whole file is read, so a parent may come later).
 * Every walk towards the root must end: the node where a walk meets its
 * own path loses its parent, BROKEN there like an undefined one. Each node
 * is walked once: mark[i] is 0 (not seen), the walk's number + 1 while the
 * walk that reached it is going on, UINT32_MAX once its way to the root is
 * known to end.
 */
static int break_cycles(struct hs_trace *t)
{
	uint32_t *mark;
	size_t i;

	if (!t->nr_nodes)
		return 0;
	mark = hs_calloc(t->nr_nodes, sizeof(*mark));
	if (!mark)
		return -ENOMEM;
	for (i = 0; i < t->nr_nodes; i++) {
		uint32_t walk = (uint32_t)i + 1, n = (uint32_t)i, up;

		while (!mark[n]) {
			mark[n] = walk;
			up = t->node_parent[n];
			if (up == HS_TRACE_NONE || up == HS_TRACE_MISSING)
				break;
			if (mark[up] == walk) {		/* back on this walk's path */
				t->node_parent[n] = HS_TRACE_MISSING;
				t->missing_nodes++;
				break;
			}
			n = up;
		}
		for (n = (uint32_t)i; mark[n] == walk; n = t->node_parent[n]) {
			mark[n] = UINT32_MAX;
			if (t->node_parent[n] == HS_TRACE_NONE ||
			    t->node_parent[n] == HS_TRACE_MISSING)
				break;
		}
	}
	hs_free(mark);
	return 0;
}

static int load(struct hs_trace_reader *r, struct hs_trace *t, unsigned flags,
		struct stream *stream, struct hs_diag *diag)
{
	struct load_state ls;
	struct hs_rec rec;
	size_t i;
	const char *why = NULL;
	int ret, err = 0;

	memset(&ls, 0, sizeof(ls));
	ls.flags = flags;
	ls.stream = stream;
	for (;;) {
		if (r->done)
			break;
		if (r->p >= r->end) {
			ret = hs__reader_next_chunk(r, diag);
			if (ret <= 0) {
				r->done = ret < 0 ? ret : 1;
				break;
			}
			ls.span_valid = 0;	/* the chunk starts in thread 0 */
			if (stream && r->chunk.kind == HS_CHUNK_EVENTS &&
			    (err = stream_chunk(stream, r, r->chunk_offset)))
				goto out;
			continue;
		}
		if (r->chunk.kind != HS_CHUNK_SYMBOLS) {
			if (stream) {
				stream_run(r, t, &ls, stream);
				if (r->p >= r->end)
					continue;
			}
			ret = fast_record(r, t, &ls);
			if (ret < 0) {
				err = ret;
				goto out;
			}
			if (ret)
				continue;
		}
		ret = hs_trace_reader_next(r, &rec, diag);
		if (ret != 1)
			break;
		if (rec.tag == HS_TAG_SYM_STRING || rec.tag == HS_TAG_SYM_ADDR) {
			/* the last symbol section counts */
			if (r->sym_sections != ls.sym_section) {
				hs__trace_syms_reset(&t->syms);
				ls.sym_section = r->sym_sections;
				t->syms.offset = r->chunk_offset;
			}
			err = hs__trace_syms_record(t, &rec, &why);
			if (err == -EINVAL) {
				hs__reader_sym_damaged(r, r->chunk_offset,
					    why ? why : "malformed symbol record");
				err = 0;
			}
		} else {
			err = walk_record(t, &ls, &rec, &why);
		}
		if (err == -EINVAL) {
			hs_diag_set_offset(diag, r->chunk_offset,
					   "corrupt trace: chunk %llu: %s",
					   (unsigned long long)(r->nr_chunks - 1),
					   why ? why : "bad record");
			goto out;
		}
		if (err)
			goto out;
	}
	if (r->done < 0) {
		err = r->done;
		goto out;
	}
	/* A parent id that was never defined: the stack is BROKEN there. */
	for (i = 0; i < t->nr_nodes; i++) {
		t->node_parent[i] = HS_TRACE_NONE;
		if (!ls.parent_ids[i])
			continue;
		t->node_parent[i] = node_index(t, ls.parent_ids[i]);
		if (t->node_parent[i] == HS_TRACE_NONE) {
			t->node_parent[i] = HS_TRACE_MISSING;
			t->missing_nodes++;
		}
	}
	err = break_cycles(t);
	if (err)
		goto out;
	t->nr_chunks = r->nr_chunks;
	t->nr_records = r->nr_records;
	t->file_size = r->size;
	t->cut_off = r->cut_off || !r->end_seen;
	t->cut_offset = r->cut_off ? r->cut_offset : r->size;
	t->data_end = r->data_end;
	t->data_chunks = r->data_chunks;
	/* a damaged symbol section: its names cannot be trusted */
	t->sym_damage = r->sym_damage;
	if (r->sym_damage.what)
		hs__trace_syms_reset(&t->syms);
	err = finish(t, &ls);
out:
	load_state_release(&ls);
	return err;
}

static void trace_init(struct hs_trace *t)
{
	memset(t, 0, sizeof(*t));
}

int hs_trace_load(const char *path, struct hs_trace *t, struct hs_diag *diag)
{
	return hs_trace_load_flags(path, t, 0, diag);
}

int hs_trace_load_flags(const char *path, struct hs_trace *t, unsigned flags,
			struct hs_diag *diag)
{
	struct hs_trace_reader r;
	int err;

	trace_init(t);
	err = hs_trace_reader_open(&r, path, diag);
	if (err)
		return err;
	err = load(&r, t, flags, NULL, diag);
	hs_trace_reader_close(&r);
	if (err)
		hs_trace_release(t);
	return err;
}

int hs_trace_load_mem(const void *data, size_t n, const char *name,
		      struct hs_trace *t, struct hs_diag *diag)
{
	struct hs_trace_reader r;
	int err;

	trace_init(t);
	err = hs_trace_reader_open_mem(&r, data, n, name, diag);
	if (err)
		return err;
	err = load(&r, t, 0, NULL, diag);
	hs_trace_reader_close(&r);
	if (err)
		hs_trace_release(t);
	return err;
}

struct reading {
	struct hs_trace_reader r;
	struct hs_trace *t;
	struct stream *s;
	struct hs_diag *diag;
};

/* The reading thread: the whole trace, its events into batches. */
static void *stream_read(void *arg)
{
	struct reading *rd = arg;
	struct stream *s = rd->s;
	int err = load(&rd->r, rd->t, 0, s, rd->diag);

	if (!err)
		err = stream_drain(s);
	pthread_mutex_lock(&s->mu);
	s->read_err = err;
	s->done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* The caller's side: one batch's groups through the sink. */
static int stream_consume(struct stream *s, struct batch *b)
{
	const struct hs_trace_sink *sink = s->sink;
	struct hs_trace_event *ev = b->ev;
	size_t n = b->n, start = 0, g = 0, i;
	int err = 0;

	if (!sink->live)
		return sink->events(sink->ctx, ev, n);
	/*
	 * A batch ends with a tick. The ticks with several threads' events
	 * have their ties ordered, when the events before them are in.
	 */
	while (g < n) {
		int64_t time = ev[g].time;
		uint32_t thread = ev[g].thread;
		int multi = 0;

		for (i = g + 1; i < n && ev[i].time == time; i++)
			multi |= ev[i].thread != thread;
		if (multi || g - start >= STREAM_SLICE) {
			/* (in slices, which the sink reads while they are in cache) */
			if (g > start && (err = sink->events(sink->ctx, ev + start, g - start)))
				return err;
			start = g;
			if (multi && (err = hs_order_ties(&s->ties, ev + g, i - g, sink->live,
						       sink->ctx)) < 0)
				return err;
			err = 0;
		}
		g = i;
	}
	return n > start ? sink->events(sink->ctx, ev + start, n - start) : 0;
}

static int stream(struct reading *rd, const struct hs_trace_sink *sink);

int hs_trace_stream(const char *path, struct hs_trace *t, const struct hs_trace_sink *sink,
		    struct hs_diag *diag)
{
	struct reading rd = { .t = t, .diag = diag };
	int err;

	trace_init(t);
	err = hs_trace_reader_open(&rd.r, path, diag);
	return err ? err : stream(&rd, sink);
}

int hs_trace_stream_mem(const void *data, size_t n, const char *name, struct hs_trace *t,
			const struct hs_trace_sink *sink, struct hs_diag *diag)
{
	struct reading rd = { .t = t, .diag = diag };
	int err;

	trace_init(t);
	err = hs_trace_reader_open_mem(&rd.r, data, n, name, diag);
	return err ? err : stream(&rd, sink);
}

/* hs_trace_stream() of the trace @rd->r has open (and closes). */
static int stream(struct reading *rd, const struct hs_trace_sink *sink)
{
	struct hs_trace *t = rd->t;
	struct stream s;
	pthread_t th;
	size_t i;
	int err = 0, rerr;

	memset(&s, 0, sizeof(s));
	s.sink = sink;
	s.run_thread = UINT32_MAX;
	rd->s = &s;
	stream_index(&rd->r, &s);
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	if (pthread_create(&th, NULL, stream_read, rd)) {
		err = -EAGAIN;	/* no thread: the caller loads the trace */
		goto out;
	}
	for (;;) {
		struct batch *b;
		int failed;

		pthread_mutex_lock(&s.mu);
		while (s.tail == s.head && !s.done)
			pthread_cond_wait(&s.cv, &s.mu);
		if (s.tail == s.head || err) {
			/* nothing left, or an error: let the reading stop */
			s.stop = 1;
			pthread_cond_broadcast(&s.cv);
			if (s.tail == s.head) {
				pthread_mutex_unlock(&s.mu);
				break;
			}
		}
		b = &s.b[s.tail % NR_BATCHES];
		failed = s.done && s.read_err;
		pthread_mutex_unlock(&s.mu);
		if (!err && !failed)
			err = stream_consume(&s, b);
		pthread_mutex_lock(&s.mu);
		s.buf[b->buf].refs--;
		s.tail++;
		pthread_cond_broadcast(&s.cv);
		pthread_mutex_unlock(&s.mu);
	}
	pthread_join(th, NULL);
	rerr = s.read_err;
	if (!err && rerr != -ECANCELED)
		err = rerr;
	/* clock ticks that are not nanoseconds: the times were wrong */
	if (!err && t->info.clock != HS_CLOCK_NS && t->nr_clock)
		err = -EAGAIN;
	t->stream_staged_max = s.staged_max;
out:
	hs_trace_reader_close(&rd->r);
	for (i = 0; i < NR_BUFS; i++)
		hs_free(s.buf[i].ev);
	hs_free(s.run);
	hs_free(s.idx_off);
	hs_free(s.idx_first);
	hs_free(s.idx_peeked);
	hs_free(s.idx_tree);
	hs_free(s.peek_stored);
	hs_free(s.peek_raw);
	hs_tie_work_release(&s.ties);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	if (err)
		hs_trace_release(t);
	return err;
}

uint32_t hs_trace_node_index(const struct hs_trace *t, uint64_t id)
{
	return node_index(t, id);
}

void hs_trace_release(struct hs_trace *t)
{
	size_t i;

	hs_trace_info_release(&t->info);
	hs_free(t->node_addr);
	hs_free(t->node_parent);
	hs_free(t->node_module);
	hs_free(t->node_id);
	hs_free(t->node_ticks);
	hs_free(t->node_slot);
	for (i = 0; i < t->nr_modules; i++) {
		hs_free(t->modules[i].path);
		hs_free(t->modules[i].build_id);
	}
	hs_free(t->modules);
	for (i = 0; i < t->nr_threads; i++)
		hs_free(t->threads[i].name);
	hs_free(t->threads);
	hs_free(t->time);
	hs_free(t->addr);
	hs_free(t->size);
	hs_free(t->stack);
	hs_free(t->thread);
	hs_free(t->op);
	hs_free(t->fn);
	hs_free(t->rss_time);
	hs_free(t->rss_bytes);
	hs_free(t->clock_ticks);
	hs_free(t->clock_ns);
	hs__trace_syms_release(&t->syms);
	memset(t, 0, sizeof(*t));
}

size_t hs_trace_stack(const struct hs_trace *t, uint32_t node, uint32_t *out,
		      size_t max)
{
	size_t n = 0;

	while (node < t->nr_nodes && n < max) {
		out[n++] = node;
		node = t->node_parent[node];
	}
	/* a parent that was referenced but never defined */
	if (node == HS_TRACE_MISSING && n < max)
		out[n++] = HS_TRACE_NONE;
	return n;
}

const char *hs_trace_frame_name(const struct hs_trace *t, uint32_t node,
				char *buf, size_t n)
{
	uint64_t a;
	uint32_t m;

	if (node >= t->nr_nodes || !t->node_addr[node]) {
		snprintf(buf, n, "BROKEN");
		return buf;
	}
	a = t->node_addr[node];
	m = t->node_module[node];
	if (m == HS_TRACE_NONE)
		snprintf(buf, n, "[unknown]!0x%llx", (unsigned long long)a);
	else
		snprintf(buf, n, "%s!0x%llx", t->modules[m].path,
			 (unsigned long long)(a - t->modules[m].bias));
	return buf;
}

double hs_trace_weight(const struct hs_trace *t, uint64_t size)
{
	double p;

	if (!t->info.sample_bytes)
		return 1.0;
	p = -expm1(-(double)size / (double)t->info.sample_bytes);
	return p > 0 ? 1.0 / p : 1.0;
}
