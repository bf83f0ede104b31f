/*
 * trace_walk - the walk over a trace's records in file order (see
 * trace_walk.h): the stack tree, modules, threads, clock, RSS and the
 * rest of struct hs_trace, and each record's events (hs_rec_events())
 * into the loaded columns or the time-order sink (trace_order.h).
 */
#include "format/trace_walk.h"
#include "format/trace_order.h"
#include "format/trace_prefetch.h"
#include "format/trace_symbols.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/u64map.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- the loaded trace ------------------------------------------------- */

/* Does node @i have id *@key? (the node index's keys are t->node_id) */
static int node_id_is(const void *ctx, uint32_t i, const void *key)
{
	const struct hs_trace *t = ctx;

	return t->node_id[i] == *(const uint64_t *)key;
}

static uint32_t node_index(const struct hs_trace *t, uint64_t id)
{
	return hs_idindex_find(&t->node_ix, hs_hash_u64(id), node_id_is, t, &id);
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
	size_t n = t->nr_nodes, pos;
	uint64_t hash = hs_hash_u64(id);

	if (n >= UINT32_MAX - 2)
		return -E2BIG;
	if (hs_idindex_reserve(&t->node_ix, n + 1))
		return -ENOMEM;
	pos = hs_idindex_slot(&t->node_ix, hash, node_id_is, t, &id);
	if (hs_idindex_at(&t->node_ix, pos) != HS_IDINDEX_NONE)
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
	hs_idindex_set(&t->node_ix, pos, hash, (uint32_t)n);
	return 0;
}

/* Thread index of @tid, added if new (@m: tid -> index). */
static int thread_index(struct hs_trace *t, struct hs_u64map *m, uint64_t tid,
			uint32_t *out)
{
	uint64_t *idx;
	int added;

	if (t->nr_threads >= UINT32_MAX - 1)
		return -ENOMEM;
	idx = hs_u64map_ref(m, tid, t->nr_threads, &added);
	if (!idx)
		return -ENOMEM;
	if (added) {
		if (HS_GROW(t->threads, t->nr_threads + 1, t->alloc_threads)) {
			hs_u64map_del(m, tid, NULL);
			return -ENOMEM;
		}
		memset(&t->threads[t->nr_threads], 0, sizeof(t->threads[0]));
		t->threads[t->nr_threads].tid = tid;
		t->threads[t->nr_threads].start_ns = -1;
		t->threads[t->nr_threads].exit_ns = -1;
		t->nr_threads++;
	}
	*out = (uint32_t)*idx;
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
#define GROW_COL(col)                                                                    \
	do {                                                                             \
		p = hs_realloc(t->col, cap * sizeof(*t->col));                           \
		if (!p)                                                                  \
			return -ENOMEM;                                                  \
		t->col = p;                                                              \
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
	size_t ev;   /* event index */
	uint64_t id; /* its node id */
};

struct hs__order;

struct load_state {
	struct hs_u64map tids; /* thread id -> index in t->threads */
	struct pending *pending;
	size_t nr_pending, alloc_pending;
	uint64_t last_ticks;
	unsigned sym_section; /* the symbol section being read */
	unsigned flags;	      /* enum hs_trace_load_flags */
	uint64_t cache_id;    /* the last node id resolved, 0 = none */
	uint32_t cache_index;
	uint64_t span_tid;    /* the thread of the current span ... */
	uint32_t span_thread; /* ... and its index */
	int span_valid;
	uint64_t *parent_ids; /* node index -> parent id */
	size_t alloc_parent_ids;
	struct hs__order *stream; /* hs_trace_stream(): events go there */
	size_t piece_at;	  /* the current chunk's next decoded piece (r->pre) */
};

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
add_event(struct hs_trace *t, struct load_state *ls, uint32_t thread, uint64_t ticks,
	  enum hs_trace_op op, unsigned fn, uint64_t addr, uint64_t size, uint64_t stack)
{
	size_t n = t->nr_events;
	uint32_t k;

	if (ticks > ls->last_ticks)
		ls->last_ticks = ticks;
	if (ls->flags & HS_TRACE_NO_EVENTS)
		return 0;
	k = stack_index(t, ls, stack);
	if (ls->stream)
		return hs__order_event(ls->stream, thread, ticks, op, fn, addr, size,
				       k == HS_TRACE_PENDING ? HS_TRACE_EV_NODE_ID | stack
							     : k);
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
static inline __attribute__((always_inline)) int walk_event(struct hs_trace *t,
							    struct load_state *ls,
							    unsigned tag,
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
	return add_event(t, ls, th, ev->ticks, ev->op, tag, ev->addr, ev->size,
			 ev->stack);
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
 * clock, RSS, the end, the footer, sampling, and a SAMPLE's event
 * (walk_events()). The other fixed records never come here: every one
 * that decodes is walked by fast_record() (which gives NODE to this
 * function). Symbol records are not for here.
 */
static int walk_record(struct hs_trace *t, struct load_state *ls,
		       const struct hs_rec *rec, const char **why)
{
	uint32_t th;
	int err;

	if (rec->tag == HS_TAG_NODE) {
		size_t before = t->nr_nodes;

		err = add_node(t, rec->id, rec->parent, rec->addr, ls->last_ticks);
		return err ? err : note_parent(t, ls, before, rec->parent);
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
		const uint8_t *q = rec->body;

		if (hs_footer_counts(&q, rec->body + rec->body_len, t->footer)) {
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
		return 0; /* FORK, EXEC and unknown sized records */
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

/* Whether module @i of @t was loaded before module @j (by time, then id, then file
 * order). */
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
		uint32_t before = HS_TRACE_NONE, after = HS_TRACE_NONE,
			 last = HS_TRACE_NONE;

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
			t->threads[i].start_ns =
			    ticks_to_ns(t, (uint64_t)t->threads[i].start_ns);
		if (t->threads[i].exit_ns >= 0)
			t->threads[i].exit_ns =
			    ticks_to_ns(t, (uint64_t)t->threads[i].exit_ns);
	}
	t->duration_ns = ticks_to_ns(t, ls->last_ticks);
	resolve_node_modules(t);
	return hs__trace_syms_resolve(t);
}

static void load_state_release(struct load_state *ls)
{
	hs_u64map_release(&ls->tids);
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
 * Where stream_run() and piece_fill() put the events they take without
 * hs__order_event(): after the current run, or at the stage's end within
 * the window (without the index, the window's end is hs__order_event()'s).
 * Sets *@first and the time of the last event before it (*@tail,
 * INT64_MIN for none); returns how many events fit.
 */
static inline size_t order_space(struct hs__order *s, struct hs_trace_event **first,
				 int64_t *tail)
{
	size_t room, waiting, max;

	if (s->deferring) {
		/* (counted, not kept: the chunk is decoded again in its turn) */
		*first = s->defer_scratch;
		*tail = INT64_MIN;
		return STREAM_DEFER_SCRATCH;
	}
	if (s->in_run) {
		*first = s->run + s->run_n;
		*tail = s->run_n ? s->run[s->run_n - 1].time : INT64_MIN;
		room = s->run_alloc - s->run_n;
		/* (at the bound hs__order_event() starts a new run) */
		if (s->run_cap)
			room = s->run_n >= s->run_cap	      ? 0
			       : room < s->run_cap - s->run_n ? room
							      : s->run_cap - s->run_n;
		return room;
	}
	*first = s->stage + s->st_end;
	*tail = s->st_end > s->st_head ? s->stage[s->st_end - 1].time : INT64_MIN;
	room = s->st_alloc - s->st_end;
	if (s->nidx)
		return room;
	waiting = s->st_end - s->st_head;
	max = STREAM_WINDOW + BATCH_EVENTS - 1;
	if (waiting >= max)
		return 0;
	return room < max - waiting ? room : max - waiting;
}

/*
 * The stream's common case in one loop (the reading thread): the MALLOC,
 * CALLOC and FREE records of the thread whose events are being taken,
 * decoded by the one decoder and handled as fast_record() and
 * hs__order_event() would, with their state in locals. Stops before anything
 * else (then fast_record() goes on from there): another record, a stack
 * not the last one seen, an event that would be late, no more room.
 * Returns 0.
 */
/* (not inlined into load(): its loop gets the registers to itself) */
static __attribute__((noinline)) int stream_run(struct hs_trace_reader *r,
						struct hs_trace *t, struct load_state *ls,
						struct hs__order *s)
{
	const uint8_t *q = r->p, *end = r->end;
	struct hs_rec_state st = r->st;
	uint64_t last = ls->last_ticks, allocs = 0, frees = 0, bytes = 0;
	struct hs_trace_event *e, *first, *lim;
	int64_t pub = s->published && !s->in_run ? s->pub_time : INT64_MIN, tail;
	uint32_t th = ls->span_thread;
	size_t room, n;

	if (!ls->span_valid || ls->span_tid != r->st.tid || th != s->run_thread ||
	    (ls->flags & HS_TRACE_NO_EVENTS))
		return 0;
	room = order_space(s, &first, &tail);
	for (e = first, lim = first + room; e < lim;) {
		const uint8_t *p = q;
		struct hs_rec_state next = st;
		struct hs_rec_event ev[2];
		struct hs_rec rec;
		const char *why;
		uint64_t node = HS_TRACE_NONE;

		/* one allocation or free, not a realloc's two events (the
		 * common tags first: the decoder then needs no other case) */
		if (p >= end ||
		    (*p != HS_TAG_MALLOC && *p != HS_TAG_FREE && *p != HS_TAG_CALLOC))
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
		if ((int64_t)ev[0].ticks <= pub || (int64_t)ev[0].ticks < tail)
			break; /* hs__order_event() says what to do */
		tail = (int64_t)ev[0].ticks;
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
		e->seq = s->seq;
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
	if (s->deferring)
		s->defer_events += n;
	else if (s->in_run)
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

/* how many events ahead piece_fill() asks for the next ones */
#define PIECE_AHEAD 16

/*
 * The stream's common case for events the pool decoded (r->pre), as
 * stream_run() takes them from the records: @n events of thread index
 * @th from @ev, staged while they are in order, of the order's current
 * thread, with a known stack (or none) and room. Returns how many it
 * took; the caller walks the next one the generic way.
 */
static __attribute__((noinline)) size_t
piece_fill(struct hs_trace *t, struct load_state *ls, struct hs__order *s, uint32_t th,
	   const struct hs_trace_event *ev, size_t n)
{
	uint64_t last = ls->last_ticks, allocs = 0, frees = 0, bytes = 0;
	int64_t pub = s->published && !s->in_run ? s->pub_time : INT64_MIN, tail;
	uint64_t cache_id = ls->cache_id;
	uint32_t cache_index = ls->cache_index;
	struct hs_trace_event *first;
	size_t room, i;

	if (th != s->run_thread || (ls->flags & HS_TRACE_NO_EVENTS))
		return 0;
	room = order_space(s, &first, &tail);
	if (room > n)
		room = n;
	for (i = 0; i < room; i++) {
		const struct hs_trace_event *x = &ev[i];
		struct hs_trace_event *e = &first[i];
		uint64_t node = HS_TRACE_NONE;

		/* (the events were written on another core: ask for them
		 * ahead, and for the room they go to) */
		__builtin_prefetch(x + PIECE_AHEAD);
		__builtin_prefetch(e + PIECE_AHEAD, 1);
		if (x->op == HS_OP_SAMPLE)
			break;
		if (x->node) {
			if (x->node != cache_id) {
				uint32_t k = node_index(t, x->node);

				/* (defined later: add_event() keeps the id) */
				if (k == HS_TRACE_NONE)
					break;
				cache_id = x->node;
				cache_index = k;
			}
			node = cache_index;
		}
		if (x->time <= pub || x->time < tail)
			break; /* hs__order_event() says what to do */
		tail = x->time;
		if ((uint64_t)x->time > last)
			last = (uint64_t)x->time;
		*e = *x;
		e->node = node;
		e->thread = th;
		e->seq = s->seq;
		if (x->op == HS_OP_ALLOC) {
			allocs++;
			bytes += x->size;
		} else if (x->op == HS_OP_FREE) {
			/* (a realloc's free is not one of the thread's frees) */
			frees += !hs_tag_is_realloc(x->fn);
		}
	}
	ls->cache_id = cache_id;
	ls->cache_index = cache_index;
	if (!i)
		return 0;
	if (s->deferring)
		s->defer_events += i;
	else if (s->in_run)
		s->run_n += i;
	else
		s->st_end += i;
	ls->last_ticks = last;
	t->threads[th].allocs += allocs;
	t->threads[th].frees += frees;
	t->threads[th].bytes += bytes;
	return i;
}

/*
 * When the reader is at the start of a piece the pool decoded (r->pre),
 * its events go to the stream (piece_fill(), else walk_event() one at a
 * time) and the reader moves past its records. Returns 1 when it walked
 * a piece, 0 when the reader is not at one, or a negative errno.
 */
static int stream_piece(struct hs_trace_reader *r, struct hs_trace *t,
			struct load_state *ls, struct hs__order *s)
{
	const struct hs__chunk_events *ce = r->pre;
	size_t at = (size_t)(r->p - r->payload), i = 0, n, from;
	const struct hs__chunk_piece *pc;
	const struct hs_trace_event *ev;
	uint32_t th;
	int err;

	while (ls->piece_at < ce->nr_pieces && ce->piece[ls->piece_at].begin < at)
		ls->piece_at++;
	if (ls->piece_at == ce->nr_pieces || ce->piece[ls->piece_at].begin != at)
		return 0;
	pc = &ce->piece[ls->piece_at];
	from = ls->piece_at ? ce->piece[ls->piece_at - 1].ev_end : 0;
	ev = ce->ev + from;
	n = pc->ev_end - from;
	err = span_thread(t, ls, pc->tid, &th);
	if (err)
		return err;
	while (i < n) {
		size_t upto = n, g = from + i;

		/*
		 * At each stretch, the staged events older than the rest of the
		 * piece and of the chunk go on while the piece is read.
		 */
		if (ce->complete) {
			int64_t low = ce->stretch_low[g / HS_CHUNK_STRETCH];

			if (g % HS_CHUNK_STRETCH == 0 &&
			    (err = hs__order_early(s, low < pc->low_rest ? low
									 : pc->low_rest)))
				return err;
			if (upto > (g / HS_CHUNK_STRETCH + 1) * HS_CHUNK_STRETCH - from)
				upto =
				    (g / HS_CHUNK_STRETCH + 1) * HS_CHUNK_STRETCH - from;
		}
		i += piece_fill(t, ls, s, th, ev + i, upto - i);
		if (i < upto) {
			struct hs_rec_event one = {.ticks = (uint64_t)ev[i].time,
						   .tid = pc->tid,
						   .addr = ev[i].addr,
						   .size = ev[i].size,
						   .stack = ev[i].node,
						   .op = ev[i].op};

			err = walk_event(t, ls, ev[i].fn, &one);
			if (err)
				return err;
			i++;
		}
	}
	r->p = r->payload + pc->end;
	r->st = pc->st;
	r->nr_records += pc->records;
	r->nr_events += n;
	ls->piece_at++;
	if (ce->complete && (err = hs__order_early(s, pc->low_rest)))
		return err;
	return 1;
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
			if (mark[up] == walk) { /* back on this walk's path */
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

int hs__trace_walk(struct hs_trace_reader *r, struct hs_trace *t, unsigned flags,
		   struct hs__order *stream, struct hs_diag *diag)
{
	struct load_state ls;
	struct hs_rec rec;
	size_t i;
	const char *why = NULL;
	int ret, err = 0;

	HS_BUG_ON(!r || !t || r->p > r->end);
	memset(&ls, 0, sizeof(ls));
	ls.flags = flags;
	ls.stream = stream;
	if (stream) {
		/* (for decoding deferred chunks again: trace_order.h) */
		stream->tids = &ls.tids;
		stream->trace = t;
	}
	for (;;) {
		if (r->done)
			break;
		/* the pieces of events first (those whose records were not
		 * written may end the chunk: hs_chunk_unpack_events()) */
		if (stream && r->pre &&
		    (r->p >= r->end || r->chunk.kind != HS_CHUNK_SYMBOLS)) {
			ret = stream_piece(r, t, &ls, stream);
			if (ret < 0) {
				err = ret;
				goto out;
			}
			if (ret)
				continue;
		}
		if (r->p >= r->end) {
			ret = hs__reader_next_chunk(r, diag);
			if (ret <= 0) {
				r->done = ret < 0 ? ret : 1;
				break;
			}
			ls.span_valid = 0; /* the chunk starts in thread 0 */
			ls.piece_at = 0;
			if (stream && r->chunk.kind == HS_CHUNK_EVENTS &&
			    (err = hs__order_chunk(stream, r, r->chunk_offset)))
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
		if (rec.tag == HS_TAG_SYM_STRING || rec.tag == HS_TAG_SYM_ADDR)
			err = hs__trace_syms_take(t, r, &rec, &ls.sym_section);
		else
			err = walk_record(t, &ls, &rec, &why);
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
	/* (the deferred chunks' events, while the thread ids are known) */
	if (stream && (err = hs__order_undefer(stream, r)))
		goto out;
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
	if (stream) {
		/* (they pointed into this walk's state) */
		stream->tids = NULL;
		stream->trace = NULL;
	}
	load_state_release(&ls);
	return err;
}

uint32_t hs_trace_node_index(const struct hs_trace *t, uint64_t id)
{
	return node_index(t, id);
}
