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
#include "analysis/memviews.h"
#include "analysis/pattern.h"
#include "analysis/presets.h"
#include "analysis/wrappers.h"
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
	[HS_MEM_ALLOC] = { "alloc", "every allocation, frees ignored" },
	[HS_MEM_NET] = { "net", "allocations minus frees, charged to the allocating "
		"stack: a time range shows the growth in it" },
	[HS_MEM_LEAKS] = { "leaks", "blocks allocated in the range and still live at "
		"its end" },
	[HS_MEM_PEAK] = { "peak", "the blocks live when heap in use was highest" },
	[HS_MEM_TEMPORARY] = { "temporary", "allocations freed before any other "
		"allocation was made" },
	[HS_MEM_MMAP] = { "mmap", "anonymous mappings: mapped minus unmapped bytes" },
	[HS_MEM_CPU] = { "cpu", "CPU samples (run --cpu): ms of CPU time" },
	[HS_MEM_WALL] = { "wall", "wall-clock samples (run --wall): every thread's "
		"time, CPU_TIME, BLOCKED_TIME or READIED_TIME" },
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
		return 0;	/* --no-heap: no heap views */
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
	uint64_t ord;		/* its event's place in the stream */
	int64_t time;
	uint64_t size;
	uint32_t key;		/* its stack key */
};

struct slot {
	uint64_t addr;		/* 0 = empty */
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
	struct live g = { .cap = m->cap ? 2 * m->cap : 256 };
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
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
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

/*
 * Stack keys: what decides an event's stack (thread, node, allocation
 * function, category: size class << 1 | large), numbered as met. Samples
 * carry keys while the events are read (a streamed trace's nodes are not
 * all known yet); the keys become stacks at the end.
 */
struct keytab {
	uint64_t *node;		/* node index, HS_TRACE_NONE, or id | HS_TRACE_EV_NODE_ID */
	uint32_t *thread;
	uint16_t *tagcat;	/* tag << 8 | category */
	size_t *last;		/* key -> its latest sample, or SIZE_MAX */
	size_t n, alloc;
	struct hs_idindex index;	/* of the keys above */
	size_t c_key;		/* the last key looked up (n: none) */
};

struct key_probe {
	uint64_t node;
	uint32_t thread;
	unsigned tagcat;
};

static uint64_t key_hash(const struct key_probe *p)
{
	uint64_t k[2] = { p->node, (uint64_t)p->thread << 16 | p->tagcat };

	return hs_hash_bytes(k, sizeof(k));
}

static int key_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct keytab *k = ctx;
	const struct key_probe *p = key;

	return k->node[id] == p->node && k->thread[id] == p->thread &&
	       k->tagcat[id] == p->tagcat;
}

static int key_find(struct keytab *k, uint64_t node, uint32_t thread, unsigned tagcat,
		    uint32_t *key)
{
	struct key_probe p = { node, thread, tagcat };
	uint64_t h = key_hash(&p);
	size_t i, a;
	uint32_t id;

	if (hs_idindex_reserve(&k->index, k->n + 1))
		return -ENOMEM;
	i = hs_idindex_slot(&k->index, h, key_eq, k, &p);
	id = hs_idindex_at(&k->index, i);
	if (id == HS_IDINDEX_NONE) {
		if (k->n >= UINT32_MAX - 1)
			return -E2BIG;
		a = k->alloc;
		if (HS_GROW(k->node, k->n + 1, a))
			return -ENOMEM;
		a = k->alloc;
		if (HS_GROW(k->thread, k->n + 1, a))
			return -ENOMEM;
		a = k->alloc;
		if (HS_GROW(k->tagcat, k->n + 1, a))
			return -ENOMEM;
		a = k->alloc;
		if (HS_GROW(k->last, k->n + 1, a))
			return -ENOMEM;
		k->alloc = a;
		id = (uint32_t)k->n++;
		k->node[id] = node;
		k->thread[id] = thread;
		k->tagcat[id] = (uint16_t)tagcat;
		k->last[id] = SIZE_MAX;
		hs_idindex_set(&k->index, i, h, id);
	}
	k->c_key = id;
	*key = id;
	return 0;
}

/* The key of (@node, @thread, @tagcat), a new one when it has none. */
static inline int key_of(struct keytab *k, uint64_t node, uint32_t thread, unsigned tagcat,
			 uint32_t *key)
{
	size_t c = k->c_key;

	if (c < k->n && k->node[c] == node && k->thread[c] == thread && k->tagcat[c] == tagcat) {
		*key = (uint32_t)c;
		return 0;
	}
	return key_find(k, node, thread, tagcat, key);
}

static void keytab_release(struct keytab *k)
{
	hs_free(k->node);
	hs_free(k->thread);
	hs_free(k->tagcat);
	hs_free(k->last);
	hs_idindex_release(&k->index);
	memset(k, 0, sizeof(*k));
}

/* --- frames and stacks ---------------------------------------------------- */

#define NO_CHAIN UINT32_MAX

struct builder {
	const struct hs_trace *t;
	const struct hs_memview_opts *o;
	struct hs_stack_source *out;
	struct hs_buf name;
	/* node -> its frames (outermost first) in chain_frame/chain_loc */
	uint32_t *node_first;		/* NO_CHAIN: not computed yet */
	uint8_t *node_len;
	uint32_t *chain_frame, *chain_loc;
	size_t nr_chain, alloc_chain;
	struct hs_u64map roots;		/* thread << 9 | exit << 8 | category -> root number */
	uint32_t *root_stack;		/* root number -> its stack */
	size_t nr_roots, alloc_roots;
	struct hs_u64map base;		/* root << 32 | node -> stack */
	struct hs_u64map leaf;		/* stack << 8 | tag -> stack */
	uint32_t *thread_stack;		/* thread -> its pseudo-frame stack */
	uint32_t process_stack, broken_frame;
	uint32_t fn_frame[256];		/* tag -> allocation function frame */
	uint32_t large_frame;
	uint32_t class_frame[65];
	const char *libc;		/* the C library's path, or NULL */
	uint32_t *path;			/* scratch: nodes leaf first */
	/* leaks: which allocations are known exit-time ones */
	struct hs_patlist alloc_pats, exit_pats;
	uint8_t *frame_kind;		/* frame -> FK_* bits (0: not looked at) */
	size_t alloc_kind;
	uint32_t exit_frame;		/* HS_EXIT_TIME_FRAME */
	/*
	 * "module!function" of every out-of-line frame of the symbol
	 * section: an inlined copy of one of these is named as it is, not
	 * "... (inline)", unless o->split_inline
	 */
	struct hs_strtab outofline;
};

enum { FK_SEEN = 1, FK_ALLOCATOR = 2, FK_EXIT = 4 };

static int is_sample_view(enum hs_memview_kind kind)
{
	return kind == HS_MEM_CPU || kind == HS_MEM_WALL;
}

static int intern(struct builder *b, const char *s, size_t n, uint32_t *frame)
{
	return hs_source_intern_frame(b->out, s, n, frame);
}

static int chain_push(struct builder *b, uint32_t frame, uint32_t loc)
{
	size_t a = b->alloc_chain;

	if (HS_GROW(b->chain_frame, b->nr_chain + 1, a))
		return -ENOMEM;
	a = b->alloc_chain;
	if (HS_GROW(b->chain_loc, b->nr_chain + 1, a))
		return -ENOMEM;
	b->alloc_chain = a;
	b->chain_frame[b->nr_chain] = frame;
	b->chain_loc[b->nr_chain] = loc;
	b->nr_chain++;
	return 0;
}

/* The frames of node @node from the symbol section, outermost first. */
static int sym_chain(struct builder *b, const struct hs_trace_sym *sym,
		     const struct hs_trace_sym_frame *f, unsigned n)
{
	const char *mod = hs_trace_sym_module(b->t, sym);
	uint32_t frame, loc;
	unsigned i;
	int err;

	for (i = n; i-- > 0;) {
		const char *fn = hs_trace_sym_str(b->t, f[i].function);
		const char *file = hs_trace_sym_str(b->t, f[i].file);

		hs_buf_reset(&b->name);
		if (sym->status != HS_TSYM_FOUND || !fn) {
			/* one frame: "module!?" or "?!?" */
			err = hs_buf_addf(&b->name, "%s!?", mod ? mod : "?");
			i = 0;
			file = NULL;
		} else {
			uint32_t id;

			err = hs_buf_addf(&b->name, "%s!%s", mod ? mod : "?", fn);
			if (!err && (f[i].flags & HS_TSYM_INLINE) &&
			    (b->o->split_inline ||
			     hs_strtab_find(&b->outofline, b->name.s, b->name.len, &id)))
				err = hs_buf_adds(&b->name, " (inline)");
		}
		if (!err)
			err = intern(b, b->name.s, b->name.len, &frame);
		loc = 0;
		if (!err && file && f[i].line)
			err = hs_source_intern_loc(b->out, file, strlen(file), f[i].line, &loc);
		if (!err)
			err = chain_push(b, frame, loc);
		if (err)
			return err;
	}
	return 0;
}

static int node_chain(struct builder *b, uint32_t node, uint32_t *first, unsigned *n)
{
	const struct hs_trace_sym *sym;
	const struct hs_trace_sym_frame *f;
	unsigned nf;
	size_t start;
	char name[1200];
	uint32_t frame;
	int err;

	if (b->node_first[node] != NO_CHAIN) {
		*first = b->node_first[node];
		*n = b->node_len[node];
		return 0;
	}
	start = b->nr_chain;
	if (start > UINT32_MAX - HS_SYM_FRAMES_MAX - 1)
		return -E2BIG;
	nf = hs_trace_node_syms(b->t, node, &sym, &f);
	if (nf) {
		err = sym_chain(b, sym, f, nf);
	} else {
		hs_trace_frame_name(b->t, node, name, sizeof(name));
		err = intern(b, name, strlen(name), &frame);
		if (!err)
			err = chain_push(b, frame, 0);
	}
	if (err)
		return err;
	b->node_first[node] = (uint32_t)start;
	b->node_len[node] = (uint8_t)(b->nr_chain - start > 255 ? 255 : b->nr_chain - start);
	*first = (uint32_t)start;
	*n = b->node_len[node];
	return 0;
}

static int thread_stack(struct builder *b, uint32_t th, uint32_t *stack)
{
	const struct hs_trace_thread *tt = &b->t->threads[th];
	uint32_t frame;
	int err;

	if (b->thread_stack[th] != HS_NO_STACK) {
		*stack = b->thread_stack[th];
		return 0;
	}
	hs_buf_reset(&b->name);
	if (tt->name && tt->name[0])
		err = hs_buf_addf(&b->name, "Thread (%" PRIu64 ") %s", tt->tid, tt->name);
	else
		err = hs_buf_addf(&b->name, "Thread (%" PRIu64 ")", tt->tid);
	if (!err)
		err = intern(b, b->name.s, b->name.len, &frame);
	if (!err)
		err = hs_source_intern_stack(b->out, frame, b->process_stack, stack);
	if (!err)
		b->thread_stack[th] = *stack;
	return err;
}

/*
 * The root of an event's stack: its thread's stack, then the exit-time
 * pseudo-frame when @exit, "LargeAlloc" and the size class when they apply
 * (@cat: class << 1 | large). Returns the root's number (for the memo of
 * node stacks) and its stack in *@stack.
 */
static int category_root(struct builder *b, uint32_t th, unsigned cat, int exit,
			 uint32_t *root, uint32_t *stack)
{
	uint64_t key = (uint64_t)th << 9 | (uint64_t)!!exit << 8 | cat, hit;
	uint32_t s, cls = cat >> 1;
	int err;

	if (hs_u64map_get(&b->roots, key, &hit)) {
		*root = (uint32_t)hit;
		*stack = b->root_stack[hit];
		return 0;
	}
	err = thread_stack(b, th, &s);
	if (!err && exit) {
		if (b->exit_frame == HS_NO_FRAME)
			err = intern(b, HS_EXIT_TIME_FRAME, strlen(HS_EXIT_TIME_FRAME),
				     &b->exit_frame);
		if (!err)
			err = hs_source_intern_stack(b->out, b->exit_frame, s, &s);
	}
	if (!err && (cat & 1)) {
		if (b->large_frame == HS_NO_FRAME)
			err = intern(b, "LargeAlloc", 10, &b->large_frame);
		if (!err)
			err = hs_source_intern_stack(b->out, b->large_frame, s, &s);
	}
	if (!err && b->o->size_classes && !is_sample_view(b->o->kind)) {
		if (b->class_frame[cls] == HS_NO_FRAME) {
			hs_buf_reset(&b->name);
			err = cls < 64 ? hs_buf_addf(&b->name, "Alloc < %" PRIu64,
						     (uint64_t)1 << cls)
				       : hs_buf_adds(&b->name, "Alloc >= 9223372036854775808");
			if (!err)
				err = intern(b, b->name.s, b->name.len, &b->class_frame[cls]);
		}
		if (!err)
			err = hs_source_intern_stack(b->out, b->class_frame[cls], s, &s);
	}
	if (!err && (b->nr_roots >= UINT32_MAX - 1 ||
		     HS_GROW(b->root_stack, b->nr_roots + 1, b->alloc_roots)))
		err = -ENOMEM;
	if (!err)
		err = hs_u64map_put(&b->roots, key, b->nr_roots, NULL);
	if (err < 0)
		return err;
	b->root_stack[b->nr_roots] = s;
	*root = (uint32_t)b->nr_roots++;
	*stack = s;
	return 0;
}

/* The stack of node @node under root @root (without the allocation function). */
static int base_stack(struct builder *b, uint32_t root, uint32_t root_stack, uint32_t node,
		      uint32_t *stack)
{
	uint32_t s, first;
	uint64_t hit;
	size_t n = 0, i;
	unsigned len, k;
	int err, found;

	if (node == HS_TRACE_NONE) {
		*stack = root_stack;
		return 0;
	}
	/* climb until a node already known under this root, or the root */
	for (;;) {
		found = hs_u64map_get(&b->base, (uint64_t)root << 32 | node, &hit);
		if (found || n > HS_DEPTH_LIMIT + 1)
			break;
		b->path[n++] = node;
		node = b->t->node_parent[node];
		if (node == HS_TRACE_MISSING) {
			b->path[n++] = HS_TRACE_NONE;	/* BROKEN */
			break;
		}
		if (node == HS_TRACE_NONE)
			break;
	}
	s = found ? (uint32_t)hit : root_stack;
	for (i = n; i-- > 0;) {
		if (b->path[i] == HS_TRACE_NONE) {
			err = hs_source_intern_stack(b->out, b->broken_frame, s, &s);
			if (err)
				return err;
			continue;
		}
		err = node_chain(b, b->path[i], &first, &len);
		for (k = 0; !err && k < len; k++)
			err = hs_source_intern_stack_loc(b->out, b->chain_frame[first + k], s,
							 b->chain_loc[first + k], &s);
		if (!err)
			err = hs_u64map_put(&b->base, (uint64_t)root << 32 | b->path[i], s, NULL);
		if (err < 0)
			return err;
	}
	*stack = s;
	return 0;
}

static const char *fn_name(unsigned tag)
{
	switch (tag) {
	case HS_TAG_MALLOC: return "malloc";
	case HS_TAG_CALLOC: return "calloc";
	case HS_TAG_REALLOC: return "realloc";
	case HS_TAG_REALLOCARRAY: return "reallocarray";
	case HS_TAG_POSIX_MEMALIGN: return "posix_memalign";
	case HS_TAG_ALIGNED_ALLOC: return "aligned_alloc";
	case HS_TAG_MEMALIGN: return "memalign";
	case HS_TAG_VALLOC: return "valloc";
	case HS_TAG_PVALLOC: return "pvalloc";
	case HS_TAG_MMAP: return "mmap";
	case HS_TAG_MREMAP: return "mremap";
	default: return "alloc";
	}
}

/* The FK_* bits of @frame (a frame of a node's chain). */
static int frame_kind(struct builder *b, uint32_t frame, unsigned *kind)
{
	const char *name;
	size_t which, n;
	int r;

	if (frame >= b->alloc_kind) {
		size_t a = b->alloc_kind;

		if (HS_GROW(b->frame_kind, (size_t)frame + 1, a))
			return -ENOMEM;
		memset(b->frame_kind + b->alloc_kind, 0, a - b->alloc_kind);
		b->alloc_kind = a;
	}
	if (!b->frame_kind[frame]) {
		unsigned k = FK_SEEN;

		name = hs_source_frame_name(b->out, frame);
		n = strlen(name);
		r = hs_patlist_match_any(&b->alloc_pats, name, n, &which);
		if (r > 0)
			k |= FK_ALLOCATOR;
		if (r >= 0)
			r = hs_patlist_match_any(&b->exit_pats, name, n, &which);
		if (r < 0)
			return r;
		if (r)
			k |= FK_EXIT;
		b->frame_kind[frame] = (uint8_t)k;
	}
	*kind = b->frame_kind[frame];
	return 0;
}

/* Length of the module part of frame name @s ("module!function"). */
static size_t module_len(const char *s)
{
	const char *bang = hs_frame_name_bang(s, strlen(s));

	return bang ? (size_t)(bang - s) : SIZE_MAX;
}

/*
 * Is the allocation at node @idx a known exit-time allocation: does one of
 * its allocating frames (the file's header comment) match? 0, 1 or an error.
 */
static int exit_time(struct builder *b, uint32_t idx)
{
	const char *mod = NULL;
	size_t mod_len = 0;
	uint32_t first;
	unsigned len, k, kind;
	int err;

	while (idx != HS_TRACE_NONE && idx != HS_TRACE_MISSING) {
		err = node_chain(b, idx, &first, &len);
		for (k = len; !err && k-- > 0;) {
			uint32_t f = b->chain_frame[first + k];
			const char *name = hs_source_frame_name(b->out, f);

			err = frame_kind(b, f, &kind);
			if (err)
				break;
			if (!mod) {
				if (kind & FK_ALLOCATOR)
					continue;	/* the allocator's own */
				mod = name;
				mod_len = module_len(name);
				if (mod_len == SIZE_MAX)
					return 0;
			} else if (module_len(name) != mod_len ||
				   memcmp(name, mod, mod_len)) {
				return 0;	/* called from another module */
			}
			if (kind & FK_EXIT)
				return 1;
		}
		if (err)
			return err;
		idx = b->t->node_parent[idx];
	}
	return 0;
}

/*
 * The stack of key @k: Process, Thread, the exit-time pseudo-frame for a
 * known exit-time allocation of the leaks view, LargeAlloc and the size
 * class when they apply, the frames of its node, then the allocation
 * function as the leaf.
 */
static int key_stack(struct builder *b, const struct keytab *keys, size_t k, uint32_t *stack)
{
	const struct hs_trace *t = b->t;
	uint64_t node = keys->node[k], key, hit;
	unsigned tag = keys->tagcat[k] >> 8, cat = keys->tagcat[k] & 0xff;
	uint32_t s, root, root_stack, idx = HS_TRACE_NONE;
	int err, broken = 0, exit = 0;

	if (node & HS_TRACE_EV_NODE_ID) {
		idx = hs_trace_node_index(t, node & ~HS_TRACE_EV_NODE_ID);
		broken = idx == HS_TRACE_NONE;	/* never defined: cut off */
	} else if (node < t->nr_nodes) {
		idx = (uint32_t)node;
	}
	if (b->exit_pats.nr && !broken && idx != HS_TRACE_NONE) {
		exit = exit_time(b, idx);
		if (exit < 0)
			return exit;
	}
	err = category_root(b, keys->thread[k], tag == HS_TAG_SAMPLE ? 0 : cat, exit,
			    &root, &root_stack);
	if (!err && broken)
		err = hs_source_intern_stack(b->out, b->broken_frame, root_stack, &s);
	else if (!err)
		err = base_stack(b, root, root_stack, idx, &s);
	if (err)
		return err;
	if (tag == HS_TAG_SAMPLE) {
		/*
		 * wall: the leaf says whether the thread ran (cat 1), was blocked
		 * (2) or waited for a CPU (3), named as in the perf thread-time
		 * source
		 */
		static const char *const state[] = { NULL, HS_FRAME_CPU_TIME,
						     HS_FRAME_BLOCKED_TIME,
						     HS_FRAME_READIED_TIME };
		uint32_t f;

		if (cat < 1 || cat > 3) {
			*stack = s;
			return 0;
		}
		err = intern(b, state[cat], strlen(state[cat]), &f);
		if (!err)
			err = hs_source_intern_stack(b->out, f, s, stack);
		return err;
	}
	key = (uint64_t)s << 8 | tag;
	if (hs_u64map_get(&b->leaf, key, &hit)) {
		*stack = (uint32_t)hit;
		return 0;
	}
	if (b->fn_frame[tag] == HS_NO_FRAME) {
		hs_buf_reset(&b->name);
		err = b->libc ? hs_buf_addf(&b->name, "%s!%s", b->libc, fn_name(tag))
			      : hs_buf_adds(&b->name, fn_name(tag));
		if (!err)
			err = intern(b, b->name.s, b->name.len, &b->fn_frame[tag]);
		if (err)
			return err;
	}
	err = hs_source_intern_stack(b->out, b->fn_frame[tag], s, &s);
	if (!err)
		err = hs_u64map_put(&b->leaf, key, s, NULL);
	if (err < 0)
		return err;
	*stack = s;
	return 0;
}

/* The C library's path: the module named libc.so* or libc-*.so. */
static const char *find_libc(const struct hs_trace *t)
{
	size_t i;

	for (i = 0; i < t->nr_modules; i++) {
		const char *p = t->modules[i].path, *base = strrchr(p, '/');

		base = base ? base + 1 : p;
		if (!strncmp(base, "libc.so", 7) ||
		    (!strncmp(base, "libc-", 5) && strstr(base, ".so")))
			return p;
	}
	return NULL;
}

/* b->outofline: the functions the symbol section has out-of-line frames of. */
static int find_outofline(struct builder *b)
{
	const struct hs_trace *t = b->t;
	const struct hs_trace_sym *sym;
	const struct hs_trace_sym_frame *f;
	size_t i;
	unsigned nf, k;
	uint32_t id;
	int err = 0;

	for (i = 0; !err && i < t->nr_nodes; i++) {
		const char *mod;

		nf = hs_trace_node_syms(t, (uint32_t)i, &sym, &f);
		if (!nf || sym->status != HS_TSYM_FOUND)
			continue;
		mod = hs_trace_sym_module(t, sym);
		for (k = 0; !err && k < nf; k++) {
			const char *fn = hs_trace_sym_str(t, f[k].function);

			if ((f[k].flags & HS_TSYM_INLINE) || !fn)
				continue;
			hs_buf_reset(&b->name);
			err = hs_buf_addf(&b->name, "%s!%s", mod ? mod : "?", fn);
			if (!err)
				err = hs_strtab_intern(&b->outofline, b->name.s, b->name.len, &id);
		}
	}
	hs_buf_reset(&b->name);
	return err;
}

static int builder_init(struct builder *b, const struct hs_trace *t,
			const struct hs_memview_opts *o, struct hs_stack_source *out)
{
	uint32_t frame;
	size_t i;
	int err;

	memset(b, 0, sizeof(*b));
	b->t = t;
	b->o = o;
	b->out = out;
	hs_buf_init(&b->name);
	b->node_first = hs_malloc((t->nr_nodes + 1) * sizeof(uint32_t));
	b->node_len = hs_malloc(t->nr_nodes + 1);
	b->thread_stack = hs_malloc((t->nr_threads + 1) * sizeof(uint32_t));
	b->path = hs_malloc((HS_DEPTH_LIMIT + 4) * sizeof(uint32_t));
	if (!b->node_first || !b->node_len || !b->thread_stack || !b->path)
		return -ENOMEM;
	for (i = 0; i < t->nr_nodes; i++)
		b->node_first[i] = NO_CHAIN;
	for (i = 0; i < t->nr_threads; i++)
		b->thread_stack[i] = HS_NO_STACK;
	for (i = 0; i < 256; i++)
		b->fn_frame[i] = HS_NO_FRAME;
	for (i = 0; i < 65; i++)
		b->class_frame[i] = HS_NO_FRAME;
	b->large_frame = HS_NO_FRAME;
	b->exit_frame = HS_NO_FRAME;
	b->libc = find_libc(t);
	hs_strtab_init(&b->outofline, (size_t)1 << 30);
	if (!o->split_inline && t->syms.present) {
		err = find_outofline(b);
		if (err)
			return err;
	}
	if (o->kind == HS_MEM_LEAKS) {
		struct hs_diag diag = HS_DIAG_INIT(NULL);

		err = hs_patlist_parse(&b->alloc_pats, HS_PRESET_HEAP_FOLD, "FoldPats",
				       &diag);
		if (!err)
			err = hs_patlist_parse(&b->exit_pats, HS_PRESET_EXIT_TIME_ALLOCS,
					       "ExcPats", &diag);
		if (err)
			return err;
	}
	err = hs_buf_addf(&b->name, "Process %s (%" PRIu64 ")",
			  t->info.comm && t->info.comm[0] ? t->info.comm : "?", t->info.pid);
	if (!err)
		err = intern(b, b->name.s, b->name.len, &frame);
	if (!err)
		err = hs_source_intern_stack(out, frame, HS_NO_STACK, &b->process_stack);
	if (!err)
		err = intern(b, "BROKEN", 6, &b->broken_frame);
	return err;
}

static void builder_release(struct builder *b)
{
	hs_patlist_release(&b->alloc_pats);
	hs_patlist_release(&b->exit_pats);
	hs_free(b->frame_kind);
	hs_strtab_release(&b->outofline);
	hs_buf_release(&b->name);
	hs_free(b->node_first);
	hs_free(b->node_len);
	hs_free(b->chain_frame);
	hs_free(b->chain_loc);
	hs_u64map_release(&b->roots);
	hs_free(b->root_stack);
	hs_u64map_release(&b->base);
	hs_u64map_release(&b->leaf);
	hs_free(b->thread_stack);
	hs_free(b->path);
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
	double lo, hi;			/* the range in ns (leaks, peak) */
	uint64_t ord;			/* events seen */
	uint64_t last;			/* temporary: the latest allocation's address */
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
	struct block blk = { .ord = v->ord, .time = e->time, .size = e->size, .key = key };

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
		cat = (unsigned)e->addr;	/* 1, 2, 3: key_stack()'s state[] */
	} else {
		return 0;
	}
	err = key_of(&v->keys, e->node, e->thread, (unsigned)HS_TAG_SAMPLE << 8 | cat, &key);
	if (!err)
		err = emit(v, e->time - (int64_t)e->size, (double)e->size / 1e6, 1, key);
	return err;
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
		if (e->op == HS_OP_ALLOC) {
			err = event_key(v, e, &key);
			if (!err)
				err = put_block(v, e, key);
			v->last = e->addr;
		} else if (e->op == HS_OP_FREE && live_del(&v->live, e->addr, &blk)) {
			if (e->addr != v->last)
				return 0;
			v->last = 0;
			err = emit_block(v, &blk, 1, blk.time);
		}
		return err;
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
 * peak: when was heap in use highest within the range (pass 1), then the
 * blocks live at that moment (pass 2, a view of the events before it).
 */
static int view_peak(struct view *v)
{
	const struct hs_trace *t = v->t;
	struct hs_trace_event e;
	struct hs_u64map sizes = HS_U64MAP_INIT;	/* live address -> size */
	uint64_t old;
	double in_use = 0, peak = -1;
	size_t i, upto = 0;	/* the peak is after events [0, upto) */
	int64_t peak_ns = -1;
	int err = 0, have = 0;

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
		if (t->op[i] == HS_OP_ALLOC) {
			err = live_size_put(&sizes, t->addr[i], t->size[i], &old);
			if (err == 1)
				in_use -= (double)old * weight(t, old);
			err = err < 0 ? err : 0;
			in_use += (double)t->size[i] * weight(t, t->size[i]);
		} else if (t->op[i] == HS_OP_FREE && live_size_del(&sizes, t->addr[i], &old)) {
			in_use -= (double)old * weight(t, old);
		} else {
			continue;
		}
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
	struct hs_u64map sizes = HS_U64MAP_INIT;	/* live address -> size */
	uint64_t old;
	double in_use = 0;
	size_t i;
	int err = 0;

	for (i = 0; i < t->nr_events && !err; i++) {
		if (t->op[i] == HS_OP_ALLOC) {
			err = live_size_put(&sizes, t->addr[i], t->size[i], &old);
			if (err == 1)
				in_use -= (double)old * weight(t, old);
			err = err < 0 ? err : 0;
			in_use += (double)t->size[i] * weight(t, t->size[i]);
		} else if (t->op[i] == HS_OP_FREE && live_size_del(&sizes, t->addr[i], &old)) {
			in_use -= (double)old * weight(t, old);
		} else {
			continue;
		}
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
	uint32_t id;		/* the mmap it came from */
};

struct maps {
	struct mapping *m;
	size_t n, alloc;
	uint32_t *pieces;	/* id -> live pieces */
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
static int maps_unmap(struct view *v, struct maps *ms, uint64_t a, uint64_t e, int64_t time)
{
	size_t i = maps_first(ms, a);
	int err = 0;

	while (i < ms->n && ms->m[i].start < e && !err) {
		struct mapping *m = &ms->m[i];
		uint64_t lo = m->start > a ? m->start : a, hi = m->end < e ? m->end : e;
		int whole = lo == m->start && hi == m->end;

		if (whole)
			ms->pieces[m->id]--;
		err = emit(v, time, -(double)(hi - lo), whole && !ms->pieces[m->id] ? -1 : 0,
			   m->key);
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
	struct maps ms = { 0 };
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
		ev.size = 0;	/* mappings have no size class */
		if (!err)
			err = event_key(v, &ev, &key);
		if (!err)
			err = emit(v, t->time[i], (double)t->size[i], 1, key);
		if (!err && (HS_GROW(ms.m, ms.n + 1, ms.alloc) || ms.nr_ids >= UINT32_MAX ||
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
}

/*
 * The heap views' default FoldPats: the heap preset, then the trace's
 * allocation wrappers (analysis/wrappers.h) unless @o->keep_wrappers.
 * The wrappers are found over every stack of the trace, whatever the view
 * keeps: each leaf of the stack tree, under the process, with an
 * allocation function below it (the event's own function is not known
 * here; any of them is one). Returns 0 or -ENOMEM.
 */
static int heap_fold(const struct hs_trace *t, const struct hs_memview_opts *o,
		     char **fold)
{
	struct hs_memview_opts all = *o;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_stack_source graph;
	struct builder b;
	uint8_t *has_child = NULL;
	char *wrappers = NULL;
	uint32_t alloc, s;
	size_t i, n;
	int err;

	*fold = NULL;
	if (o->keep_wrappers || !t->nr_nodes)
		return (*fold = hs_strdup(HS_PRESET_HEAP_FOLD)) ? 0 : -ENOMEM;
	all.kind = HS_MEM_ALLOC;
	hs_source_init(&graph);
	err = builder_init(&b, t, &all, &graph);
	if (!err && !(has_child = hs_calloc(t->nr_nodes, 1)))
		err = -ENOMEM;
	for (i = 0; !err && i < t->nr_nodes; i++)
		if (t->node_parent[i] < t->nr_nodes)
			has_child[t->node_parent[i]] = 1;
	if (!err)
		err = intern(&b, "?!malloc", 8, &alloc);
	for (i = 0; !err && i < t->nr_nodes; i++) {
		if (has_child[i])
			continue;
		err = base_stack(&b, 0, b.process_stack, (uint32_t)i, &s);
		if (!err)
			err = hs_source_intern_stack(&graph, alloc, s, &s);
	}
	if (!err)
		err = hs_wrappers_find(&graph, HS_PRESET_HEAP_FOLD, &wrappers, &diag);
	builder_release(&b);
	hs_source_release(&graph);
	hs_free(has_child);
	if (err)
		return err == -ENOMEM ? -ENOMEM : 0;
	n = strlen(HS_PRESET_HEAP_FOLD) + (wrappers ? 1 + strlen(wrappers) : 0) + 1;
	*fold = hs_malloc(n);
	if (*fold)
		snprintf(*fold, n, "%s%s%s", HS_PRESET_HEAP_FOLD, wrappers ? ";" : "",
			 wrappers ? wrappers : "");
	hs_free(wrappers);
	return *fold ? 0 : -ENOMEM;
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
	if (v->o->kind == HS_MEM_LEAKS)
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
			.live = o->kind == HS_MEM_ALLOC || is_sample_view(o->kind) ? NULL
										  : sink_live,
			.ctx = &v,
		};

		view_init(&v, o, out, info);
		v.t = &t;	/* the weights need only its process record */
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
