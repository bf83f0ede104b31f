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

/* The live blocks: address (never 0) -> the block's allocation. */
struct block {
	uint64_t ord; /* its event's place in the stream */
	int64_t time;
	uint64_t size;
	uint32_t key; /* its stack key */
};

struct slot {
	uint64_t addr; /* 0 = empty */
	struct block blk;
};

struct live {
	struct slot *slot;
	size_t n, cap;
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

static int live_grow(struct live *m)
{
	struct live g = {.cap = m->cap ? 2 * m->cap : 256};
	size_t j;

	g.slot = hs_calloc(g.cap, sizeof(struct slot));
	if (!g.slot)
		return -ENOMEM;
	for (j = 0; j < m->cap; j++)
		if (m->slot[j].addr)
			g.slot[live_find(&g, m->slot[j].addr)] = m->slot[j];
	g.n = m->n;
	hs_free(m->slot);
	*m = g;
	return 0;
}

/*
 * Put @blk at @a; when a block was live there already, 1 with it in
 * *@old (when @old is not NULL). Returns 0, 1 or -ENOMEM.
 */
static inline int live_replace(struct live *m, uint64_t a, const struct block *blk,
			       struct block *old)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap && live_grow(m))
		return -ENOMEM;
	i = live_find(m, a);
	if (m->slot[i].addr) {
		if (old)
			*old = m->slot[i].blk;
		m->slot[i].blk = *blk;
		return 1;
	}
	m->slot[i].addr = a;
	m->slot[i].blk = *blk;
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
	*blk = m->slot[i].blk;
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
	return 1;
}

static void live_release(struct live *m)
{
	hs_free(m->slot);
	memset(m, 0, sizeof(*m));
}

/*
 * Where only sizes count (heap in use over time), the live blocks are a
 * u64map of address -> size. Address 0 is never live, as above.
 */
static inline int live_size_put(struct hs_u64map *m, uint64_t a, uint64_t size,
				uint64_t *old)
{
	return a ? hs_u64map_put(m, a, size, old) : 0;
}

static inline int live_size_del(struct hs_u64map *m, uint64_t a, uint64_t *old)
{
	return a && hs_u64map_del(m, a, old);
}

/* --- the views -------------------------------------------------------------- */

/*
 * A view's pass over the events, the same for a loaded trace and a
 * streamed one: samples are emitted with stack keys, one sample per key
 * and time (events of one stack at one clock tick add up).
 */
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
static inline int emit(struct view *v, int64_t time, double bytes, double count,
		       uint32_t key)
{
	struct hs_stack_source *src = v->out;
	size_t i = v->keys.last[key];

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
	v->keys.last[key] = i;
	return 0;
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
 * made on the recorded allocations only, which overestimates.
 */
static int temporary_event(struct view *v, const struct hs_trace_event *e)
{
	const struct hs_trace_info *info = &v->t->info;
	int marked = info->sample_bytes && (info->flags & HS_PROC_TEMPORARY_MARKS);
	uint32_t th = e->thread;
	struct block blk;
	uint32_t key;
	int err;

	if (e->op == HS_OP_ALLOC) {
		err = event_key(v, e, &key);
		if (!err)
			err = put_block(v, e, key);
		if (err || marked || th == HS_TRACE_NONE)
			return err;
		if (th >= v->nr_last) {
			size_t had = v->nr_last;

			if (HS_GROW(v->last_ord, (size_t)th + 1, v->nr_last))
				return -ENOMEM;
			memset(v->last_ord + had, 0,
			       (v->nr_last - had) * sizeof(*v->last_ord));
		}
		v->last_ord[th] = v->ord;
		return 0;
	}
	if (e->op != HS_OP_FREE || !live_del(&v->live, e->addr, &blk))
		return 0;
	if (marked)
		return e->fn == HS_TAG_FREE_TEMPORARY ? emit_block(v, &blk, 1, blk.time)
						      : 0;
	if (th >= v->nr_last || v->last_ord[th] != blk.ord)
		return 0;
	v->last_ord[th] = 0;
	return emit_block(v, &blk, 1, blk.time);
}

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
	case HS_MEM_LEAKS:
	case HS_MEM_PEAK:
		/* every block, for liveness; those before the range are left
		 * out when the live ones are emitted (leaks) */
		if ((double)e->time > v->hi)
			return 0;
		if (e->op == HS_OP_ALLOC) {
			live_del(&v->live, e->addr, &blk);
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

/* Emit the live blocks allocated at @lo or later, in time order. */
static int emit_live(struct view *v, double lo)
{
	struct block *all = hs_malloc((v->live.n + 1) * sizeof(*all));
	size_t i, n = 0;
	int err = 0;

	if (!all)
		return -ENOMEM;
	for (i = 0; i < v->live.cap; i++)
		if (v->live.slot[i].addr && (double)v->live.slot[i].blk.time >= lo)
			all[n++] = v->live.slot[i].blk;
	qsort(all, n, sizeof(*all), cmp_block);
	for (i = 0; i < n && !err; i++)
		err = emit_block(v, &all[i], 1, all[i].time);
	hs_free(all);
	return err;
}

/*
 * Apply event @i of @t to @sizes (live address -> size) and to the weighted
 * bytes in use *@in_use. Returns 1 if the heap changed, 0 if the event is
 * neither an allocation nor the free of a live block, or a negative errno
 * (*@in_use still counts the allocation).
 */
static int heap_step(const struct hs_trace *t, size_t i, struct hs_u64map *sizes,
		     double *in_use)
{
	uint64_t old;
	int err;

	if (t->op[i] == HS_OP_ALLOC) {
		err = live_size_put(sizes, t->addr[i], t->size[i], &old);
		if (err == 1)
			*in_use -= (double)old * weight(t, old);
		*in_use += (double)t->size[i] * weight(t, t->size[i]);
		return err < 0 ? err : 1;
	}
	if (t->op[i] == HS_OP_FREE && live_size_del(sizes, t->addr[i], &old)) {
		*in_use -= (double)old * weight(t, old);
		return 1;
	}
	return 0;
}

/*
 * peak: when was heap in use highest within the range (pass 1), then the
 * blocks live at that moment (pass 2, a view of the events before it).
 */
static int view_peak(struct view *v)
{
	const struct hs_trace *t = v->t;
	struct hs_trace_event e;
	struct hs_u64map sizes = HS_U64MAP_INIT; /* live address -> size */
	double in_use = 0, peak = -1;
	size_t i, upto = 0; /* the peak is after events [0, upto) */
	int64_t peak_ns = -1;
	int err = 0, have = 0, step;

	for (i = 0; !err; i++) {
		int end = i == t->nr_events || (double)t->time[i] > v->hi;

		/*
		 * The heap as the range starts, a candidate: at its first event,
		 * or after every event before it when none is inside
		 */
		if (!have && (end ? isfinite(v->lo) : (double)t->time[i] >= v->lo)) {
			have = 1;
			peak = in_use;
			upto = i;
			peak_ns = isfinite(v->lo) ? (int64_t)(v->lo + 600) : t->time[i];
		}
		if (end)
			break;
		step = heap_step(t, i, &sizes, &in_use);
		if (!step)
			continue;
		err = step < 0 ? step : 0;
		if (have && in_use > peak) {
			peak = in_use;
			upto = i + 1;
			peak_ns = t->time[i];
		}
	}
	hs_u64map_release(&sizes);
	if (v->info) {
		v->info->peak_ns = have ? peak_ns : -1;
		v->info->peak_bytes = have ? peak : 0;
	}
	v->hi = INFINITY;
	for (i = 0; i < upto && !err; i++) {
		hs_trace_event_get(t, i, &e);
		err = view_event(v, &e);
	}
	return err ? err : emit_live(v, -INFINITY);
}

int hs_memview_heap_walk(const struct hs_trace *t,
			 void (*fn)(void *ctx, int64_t time, double in_use), void *ctx)
{
	struct hs_u64map sizes = HS_U64MAP_INIT; /* live address -> size */
	double in_use = 0;
	size_t i;
	int err = 0, step;

	for (i = 0; i < t->nr_events && !err; i++) {
		step = heap_step(t, i, &sizes, &in_use);
		if (!step)
			continue;
		err = step < 0 ? step : 0;
		fn(ctx, t->time[i], in_use);
	}
	hs_u64map_release(&sizes);
	return err;
}

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

static int view_mmap(struct view *v)
{
	const struct hs_trace *t = v->t;
	struct hs_trace_event ev;
	struct maps ms = {0};
	size_t i, at;
	uint32_t key;
	int err = 0;

	for (i = 0; i < t->nr_events && !err; i++) {
		uint64_t a = t->addr[i], e = a + t->size[i];

		if (e < a)
			e = UINT64_MAX;
		if (t->op[i] == HS_OP_MUNMAP) {
			err = maps_unmap(v, &ms, a, e, t->time[i]);
			continue;
		}
		if (t->op[i] != HS_OP_MMAP || e == a)
			continue;
		/* a mapping placed over live ones replaces them */
		err = maps_unmap(v, &ms, a, e, t->time[i]);
		hs_trace_event_get(t, i, &ev);
		ev.size = 0; /* mappings have no size class */
		if (!err)
			err = event_key(v, &ev, &key);
		if (!err)
			err = emit(v, t->time[i], (double)t->size[i], 1, key);
		if (!err &&
		    (HS_GROW(ms.m, ms.n + 1, ms.alloc) || ms.nr_ids >= UINT32_MAX ||
		     HS_GROW(ms.pieces, ms.nr_ids + 1, ms.alloc_ids)))
			err = -ENOMEM;
		if (err)
			break;
		at = maps_first(&ms, a);
		memmove(ms.m + at + 1, ms.m + at, (ms.n - at) * sizeof(*ms.m));
		ms.m[at].start = a;
		ms.m[at].end = e;
		ms.m[at].key = key;
		ms.m[at].id = (uint32_t)ms.nr_ids;
		ms.pieces[ms.nr_ids++] = 1;
		ms.n++;
	}
	hs_free(ms.m);
	hs_free(ms.pieces);
	return err;
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
	hs_source_init(out);
	if (info) {
		memset(info, 0, sizeof(*info));
		info->peak_ns = -1;
		info->uses_range = o->kind == HS_MEM_LEAKS || o->kind == HS_MEM_PEAK;
	}
}

static void view_release(struct view *v)
{
	keytab_release(&v->keys);
	live_release(&v->live);
	hs_free(v->last_ord);
}

/* The end of a view: the live blocks of leaks, then keys become stacks. */
static int view_finish(struct view *v, const struct hs_trace *t)
{
	struct hs_stack_source *out = v->out;
	struct builder b;
	uint32_t *stack_of = NULL;
	size_t i;
	int err = 0;

	memset(&b, 0, sizeof(b));
	v->t = t;
	/* an exec frees the heap of the image it replaces: no leaks */
	if (v->o->kind == HS_MEM_LEAKS && !(t->has_end && t->end_reason == HS_END_EXEC))
		err = emit_live(v, v->lo);
	if (!err)
		err = builder_init(&b, t, v->o, out);
	if (!err && !(stack_of = hs_malloc((v->keys.n + 1) * sizeof(uint32_t))))
		err = -ENOMEM;
	for (i = 0; !err && i < v->keys.n; i++)
		err = key_stack(&b, &v->keys, i, &stack_of[i]);
	for (i = 0; !err && i < out->nr_samples; i++) {
		/* the stack column holds keys until here (emit()) */
		HS_BUG_ON(out->stack[i] >= v->keys.n);
		out->stack[i] = stack_of[out->stack[i]];
	}
	builder_release(&b);
	hs_free(stack_of);
	if (!err && is_sample_view(v->o->kind)) {
		out->kind = HS_METRIC_TIME;
		if (!(out->metric_unit = hs_strdup("ms")))
			err = -ENOMEM;
	} else if (!err) {
		out->kind = HS_METRIC_PLAIN;
		out->metric_unit = hs_strdup("bytes");
		err = heap_fold(t, v->o, &out->defaults.fold);
		if (!out->metric_unit)
			err = -ENOMEM;
		if (!err && v->o->kind == HS_MEM_LEAKS &&
		    !(out->defaults.exc = hs_strdup(HS_PRESET_LEAK_SUPPRESS)))
			err = -ENOMEM;
	}
	if (!err && !(out->view_name = hs_strdup(kinds[v->o->kind].name)))
		err = -ENOMEM;
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
	switch (o->kind) {
	case HS_MEM_ALLOC:
	case HS_MEM_NET:
	case HS_MEM_LEAKS:
	case HS_MEM_TEMPORARY:
	case HS_MEM_CPU:
	case HS_MEM_WALL:
		for (i = 0; i < t->nr_events && !err; i++) {
			hs_trace_event_get(t, i, &e);
			err = view_event(&v, &e);
		}
		break;
	case HS_MEM_PEAK:
		err = view_peak(&v);
		break;
	case HS_MEM_MMAP:
		err = view_mmap(&v);
		break;
	default:
		err = -EINVAL;
		break;
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

static int sink_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct view *v = ctx;
	size_t i;
	int err = 0;

	if (v->o->kind == HS_MEM_NET && !v->t->info.sample_bytes)
		return net_events(v, ev, n);
	for (i = 0; i < n && !err; i++)
		err = view_event(v, &ev[i]);
	return err;
}

static int sink_live(void *ctx, uint64_t addr)
{
	const struct view *v = ctx;

	return live_has(&v->live, addr);
}

int hs_memview_build_path(const char *path, const struct hs_memview_opts *o,
			  struct hs_stack_source *out, struct hs_memview_info *info,
			  struct hs_diag *diag)
{
	struct hs_trace t;
	struct view v;
	int err;

	if (o->kind == HS_MEM_ALLOC || o->kind == HS_MEM_NET || o->kind == HS_MEM_LEAKS ||
	    o->kind == HS_MEM_TEMPORARY || is_sample_view(o->kind)) {
		struct hs_trace_sink sink = {
		    .events = sink_events,
		    .live = o->kind == HS_MEM_ALLOC || is_sample_view(o->kind)
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
	/* the events must be loaded (a view that needs two passes, or a file
	 * whose events are not in time order) */
	err = hs_trace_load(path, &t, diag);
	if (err) {
		hs_source_init(out);
		return set_error(err, diag);
	}
	err = hs_memview_build(&t, o, out, info, diag);
	hs_trace_release(&t);
	return err;
}
