/*
 * memviews - the memory views of a heap trace as stack sources (see
 * memviews.h).
 *
 * One builder turns trace nodes into stacks: a node's frames (its
 * symbols, inlined functions first expanded, or its MODULE!0xOFFSET name)
 * are computed once; the stack of (thread, node) is memoised, and so is
 * the final stack of (base stack, allocation function, size class). Each
 * view is then one pass over the events in time order, with a map of the
 * live blocks where it needs one (memviews_live.h).
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
#include "analysis/memviews_live.h"
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
/* A block with its time: what the end of a sampled trace's view sorts. */
struct dated_block {
	uint64_t ord;
	int64_t time;
	uint64_t size;
	uint32_t key;
};

/*
 * Blocks added up by stack key and run of allocations at one time
 * (live_run()), each sum with its first block's event number: what the
 * views of an unsampled trace emit at their end in event order. The
 * blocks of one key and run are next to each other among that key's
 * blocks in event order (a run is a stretch of event numbers, all at
 * its time), and a sample adds up a key's blocks of one time that come
 * one after another: so emitting the sums in the order of their first
 * blocks, through emit_into(), gives the samples that emitting the
 * blocks one by one gave, with the same sums (of whole numbers, exact
 * below 2^53 bytes). python3's 1.4M blocks live at its peak are 14k
 * sums. An index of 64-bit slots, the current generation << 32 | the
 * sum's number + 1, finds a sum; a slot of another generation is
 * free, so a new candidate forgets the peak's sums at once.
 */
struct sum {
	uint64_t run;	/* its run's first event number */
	uint64_t first; /* its first block's event number */
	int64_t time;
	uint64_t bytes, count;
	uint32_t key;
};

struct sums {
	struct sum *s;
	size_t n, alloc;
	uint64_t *index; /* see above; cap slots, at most half in use */
	size_t cap;
	uint64_t gen; /* from 1 */
};

struct peak {
	double in_use, bytes; /* heap in use now, and at the candidate */
	int64_t ns;	      /* the candidate's time */
	uint64_t upto;	      /* the candidate follows events [1, upto] */
	size_t nr_keys;	      /* keys met by then */
	int have, done;	      /* a candidate; the range ended */
	/*
	 * The ghosts: of an unsampled trace as sums (struct sums, @summed
	 * set), of a sampled one each with its time (a weight per block,
	 * and few blocks)
	 */
	int summed;
	struct sums sums;
	struct dated_block *ghost;
	size_t nr_ghosts, alloc_ghosts;
	size_t max_ghosts; /* blocks live at the candidate: no more ghosts */
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
		/*
		 * Only summed (hs_memview_pass_sum_temporary()): @out is
		 * @own, whose samples (one per key and tick, as always) get
		 * no stacks; view_finish() leaves their sums in @bytes and
		 * @count and frees them
		 */
		int sums_only;
		struct hs_stack_source own;
		double bytes, count;
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
	struct block blk = {.ord = v->ord, .size = e->size, .key = key};

	return live_put(&v->live, e->addr, &blk, e->time);
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
	return temporary_free(v, e, &blk)
		   ? emit_block(v, &blk, 1, live_time(&v->live, blk.ord))
		   : 0;
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
			nb.size = e->size;
			nb.key = key;
			err = live_replace(&v->live, e->addr, &nb, e->time, &blk);
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

/* --- the blocks a view emits at its end, in event order ------------------------ */

static int cmp_dated(const void *a, const void *b)
{
	const struct dated_block *x = a, *y = b;

	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int cmp_sum(const void *a, const void *b)
{
	const struct sum *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static inline size_t sum_hash(uint32_t key, uint64_t run)
{
	return live_hash(run ^ (uint64_t)key << 40 ^ key);
}

/* The sums' index twice as large (64 slots at first): 0 or -ENOMEM. */
static int sums_grow(struct sums *ss)
{
	size_t cap = ss->cap ? 2 * ss->cap : 64, i, j;
	uint64_t *index = hs_calloc(cap, sizeof(*index));

	if (!index)
		return -ENOMEM;
	hs_free(ss->index);
	ss->index = index;
	ss->cap = cap;
	if (!ss->gen)
		ss->gen = 1;
	for (i = 0; i < ss->n; i++) {
		j = sum_hash(ss->s[i].key, ss->s[i].run) & (cap - 1);
		while (index[j] >> 32 == ss->gen)
			j = (j + 1) & (cap - 1);
		index[j] = ss->gen << 32 | (i + 1);
	}
	return 0;
}

/* Block @b, of the run that starts at event @run at @time, into its sum. */
static int sums_add(struct sums *ss, const struct block *b, uint64_t run, int64_t time)
{
	size_t mask, j;

	if (2 * (ss->n + 1) > ss->cap && (ss->n >= UINT32_MAX - 1 || sums_grow(ss)))
		return -ENOMEM;
	mask = ss->cap - 1;
	for (j = sum_hash(b->key, run) & mask; ss->index[j] >> 32 == ss->gen;
	     j = (j + 1) & mask) {
		struct sum *s = &ss->s[(uint32_t)ss->index[j] - 1];

		if (s->run == run && s->key == b->key) {
			s->bytes += b->size;
			s->count++;
			if (b->ord < s->first)
				s->first = b->ord;
			return 0;
		}
	}
	if (HS_GROW(ss->s, ss->n + 1, ss->alloc))
		return -ENOMEM;
	ss->s[ss->n] = (struct sum){.run = run,
				    .first = b->ord,
				    .time = time,
				    .bytes = b->size,
				    .count = 1,
				    .key = b->key};
	ss->index[j] = ss->gen << 32 | ++ss->n;
	return 0;
}

/* Forget every sum (the index stays, its slots of an older generation). */
static void sums_clear(struct sums *ss)
{
	ss->n = 0;
	if (++ss->gen >> 32) {
		if (ss->cap)
			memset(ss->index, 0, ss->cap * sizeof(*ss->index));
		ss->gen = 1;
	}
}

static void sums_release(struct sums *ss)
{
	hs_free(ss->s);
	hs_free(ss->index);
	memset(ss, 0, sizeof(*ss));
}

/* Does the view's end add its blocks up (struct sums): are their weights all 1? */
static int summed(const struct view *v)
{
	return !v->t->info.sample_bytes;
}

/* A sample of output @kind: HS_MEM__COUNT the view's own, else a side output. */
static int emit_to(struct view *v, int kind, int64_t time, double bytes, double count,
		   uint32_t key)
{
	if (kind == HS_MEM__COUNT)
		return emit(v, time, bytes, count, key);
	return emit_side(v, (enum hs_memview_kind)kind, time, bytes, count, key);
}

/* The live blocks allocated by event @upto, at @lo or later, into sums @ss. */
static int sum_live(struct view *v, struct sums *ss, uint64_t upto, double lo)
{
	struct block b;
	size_t i = 0;
	int err = 0;

	while (!err && live_next(&v->live, &i, &b)) {
		uint64_t run;
		int64_t time;

		if (b.ord > upto)
			continue;
		time = live_run(&v->live, b.ord, &run);
		if ((double)time >= lo)
			err = sums_add(ss, &b, run, time);
	}
	return err;
}

/* Sums @ss to output @kind, in the order of their first blocks; @ss is empty afterwards.
 */
static int emit_sums(struct view *v, struct sums *ss, int kind)
{
	size_t i;
	int err = 0;

	if (ss->n)
		qsort(ss->s, ss->n, sizeof(*ss->s), cmp_sum);
	for (i = 0; i < ss->n && !err; i++) {
		const struct sum *s = &ss->s[i];

		err =
		    emit_to(v, kind, s->time, (double)s->bytes, (double)s->count, s->key);
	}
	sums_release(ss);
	return err;
}

/*
 * The live blocks allocated by event @upto, at @lo or later, and the
 * @nr_more blocks @more, to output @kind one by one in event order, each
 * with its weight (a sampled trace's: few blocks).
 */
static int emit_dated(struct view *v, int kind, uint64_t upto, double lo,
		      const struct dated_block *more, size_t nr_more)
{
	struct dated_block *all = hs_malloc((v->live.n + nr_more + 1) * sizeof(*all));
	struct block b;
	size_t i = 0, n = 0;
	int err = 0;

	if (!all)
		return -ENOMEM;
	while (live_next(&v->live, &i, &b)) {
		int64_t time;

		if (b.ord > upto)
			continue;
		time = live_time(&v->live, b.ord);
		if ((double)time >= lo)
			all[n++] = (struct dated_block){
			    .ord = b.ord, .time = time, .size = b.size, .key = b.key};
	}
	if (nr_more)
		memcpy(all + n, more, nr_more * sizeof(*all));
	n += nr_more;
	if (n)
		qsort(all, n, sizeof(*all), cmp_dated);
	for (i = 0; i < n && !err; i++) {
		double w = weight(v->t, all[i].size);

		err =
		    emit_to(v, kind, all[i].time, (double)all[i].size * w, w, all[i].key);
	}
	hs_free(all);
	return err;
}

/* Emit the live blocks allocated at @lo or later, in time order, to output @kind. */
static int emit_live(struct view *v, int kind, double lo)
{
	struct sums ss = {0};
	int err;

	if (!summed(v))
		return emit_dated(v, kind, UINT64_MAX, lo, NULL, 0);
	err = sum_live(v, &ss, UINT64_MAX, lo);
	if (!err)
		err = emit_sums(v, &ss, kind);
	sums_release(&ss);
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
	/* the ghosts are all gone by now */
	p->nr_ghosts = 0;
	p->max_ghosts = v->live.n;
	if (p->sums.n)
		sums_clear(&p->sums);
	p->summed = summed(v);
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
	if (p->summed) {
		uint64_t run;
		int64_t time = live_run(&v->live, blk->ord, &run);

		return sums_add(&p->sums, blk, run, time);
	}
	/* grown at once to the most ghosts there can be: the pages of a
	 * large array are only had as they are written */
	if (p->nr_ghosts == p->alloc_ghosts) {
		size_t want =
		    p->max_ghosts > p->nr_ghosts ? p->max_ghosts : 2 * p->nr_ghosts + 16;
		struct dated_block *ghost = hs_realloc(p->ghost, want * sizeof(*ghost));

		if (!ghost)
			return -ENOMEM;
		p->ghost = ghost;
		p->alloc_ghosts = want;
	}
	p->ghost[p->nr_ghosts++] = (struct dated_block){
	    .ord = blk->ord,
	    .time = live_time(&v->live, blk->ord),
	    .size = blk->size,
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
		blk.size = e->size;
		err = event_key(v, e, &blk.key);
		if (!err && v->side[HS_MEM_ALLOC].out)
			err = emit_side(v, HS_MEM_ALLOC, e->time, (double)e->size * w, w,
					blk.key);
		if (!err && e->addr) {
			err = live_replace(&v->live, e->addr, &blk, e->time, &old);
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
			err = emit_side(v, HS_MEM_TEMPORARY, live_time(&v->live, old.ord),
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
 * order. The live table's last use: it is freed afterwards.
 */
static int peak_finish(struct view *v)
{
	struct peak *p = &v->peak;
	int err = 0;

	if (!p->done && !p->have && isfinite(v->lo))
		peak_candidate(v, v->ord, p->in_use, (int64_t)(v->lo + 600));
	if (v->info) {
		v->info->peak_ns = p->have ? p->ns : -1;
		v->info->peak_bytes = p->have ? p->bytes : 0;
	}
	if (!p->have) {
		p->nr_keys = 0;
	} else if (p->summed) {
		err = sum_live(v, &p->sums, p->upto, -INFINITY);
		if (!err)
			err = emit_sums(v, &p->sums, HS_MEM__COUNT);
	} else {
		err = emit_dated(v, HS_MEM__COUNT, p->upto, -INFINITY, p->ghost,
				 p->nr_ghosts);
	}
	hs_free(p->ghost);
	p->ghost = NULL;
	p->nr_ghosts = p->alloc_ghosts = 0;
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
	sums_release(&v->peak.sums);
	hs_free(v->maps.m);
	hs_free(v->maps.pieces);
	hs_free(v->fold);
	for (k = 0; k < HS_MEM__COUNT; k++) {
		hs_free(v->side[k].last);
		if (v->side[k].sums_only)
			hs_source_release(&v->side[k].own);
	}
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
		err = emit_live(v, HS_MEM__COUNT, v->lo);
	if (!err && v->side[HS_MEM_LEAKS].out && !ended_by_exec(t))
		err = emit_live(v, HS_MEM_LEAKS, -INFINITY);
	if (!err && v->o->kind == HS_MEM_PEAK && v->out)
		err = peak_finish(v);
	/* (the live blocks are all emitted: their memory goes before the
	 * stacks are made, and the FoldPats are found beside them) */
	live_release(&v->live);
	if (!err)
		fold_start(v, t);
	/* an output only summed: its sums, then its samples go (the
	 * same sums, in the same order, as hs_source_totals() of the view) */
	for (k = 0; k < HS_MEM__COUNT && !err; k++)
		if (v->side[k].sums_only) {
			hs_source_totals(&v->side[k].own, &v->side[k].bytes,
					 &v->side[k].count);
			hs_source_release(&v->side[k].own);
			hs_source_init(&v->side[k].own);
		}
	/* peak: the stacks of the allocations up to the peak, no more */
	nr_keys = v->o->kind == HS_MEM_PEAK ? v->peak.nr_keys : v->keys.n;
	if (!err && v->out) {
		struct output outs[HS_MEM__COUNT + 1];
		size_t n = 0;

		outs[n++] = (struct output){v->o, v->out, nr_keys, 0};
		for (k = 0; k < HS_MEM__COUNT; k++)
			if (v->side[k].out && !v->side[k].sums_only)
				outs[n++] = (struct output){&v->side[k].o, v->side[k].out,
							    v->keys.n, 0};
		err = finish_outputs(v, t, outs, n);
	}
	/* without the peak view (run's summary) the side views are only summed */
	for (k = 0; k < HS_MEM__COUNT && !err && !v->out; k++)
		if (v->side[k].out && !v->side[k].sums_only)
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
			nb.size = e->size;
			err = live_replace(&v->live, e->addr, &nb, e->time, &blk);
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
				r = live_replace(&v->live, e->addr, &blk, e->time, &old);
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
				r = emit_side(v, HS_MEM_TEMPORARY,
					      live_time(&v->live, old.ord),
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

void hs_memview_pass_sum_temporary(struct hs_memview_pass *pass)
{
	struct side *sd = &pass->v.side[HS_MEM_TEMPORARY];

	HS_BUG_ON(sd->out || pass->v.o->kind != HS_MEM_PEAK);
	hs_source_init(&sd->own);
	sd->out = &sd->own;
	sd->sums_only = 1;
	sd->o = *pass->v.o;
	sd->o.kind = HS_MEM_TEMPORARY;
}

void hs_memview_pass_temporary_totals(const struct hs_memview_pass *pass, double *bytes,
				      double *count)
{
	const struct side *sd = &pass->v.side[HS_MEM_TEMPORARY];

	HS_BUG_ON(!sd->sums_only);
	*bytes = sd->bytes;
	*count = sd->count;
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
