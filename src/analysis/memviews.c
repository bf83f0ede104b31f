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
 */
#include "analysis/memviews.h"
#include "analysis/presets.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/hash.h"
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
	int i;

	if (!a)
		return NULL;
	for (i = 0; i < HS_MEM__COUNT; i++) {
		json_t *o;

		if (!hs_memview_offered(t, (enum hs_memview_kind)i))
			continue;
		o = json_pack("{s:s, s:s, s:b}", "name", kinds[i].name, "description",
			      kinds[i].description, "default", i == HS_MEM_ALLOC);
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* --- maps ---------------------------------------------------------------- */

/* u64 key (never 0) -> u32 value. */
struct memo {
	uint64_t *key;
	uint32_t *val;
	size_t n, cap;
};

static uint32_t *memo_get(const struct memo *m, uint64_t key)
{
	size_t mask, i;

	if (!m->cap)
		return NULL;
	mask = m->cap - 1;
	i = hs_hash_u64(key) & mask;
	while (m->key[i] && m->key[i] != key)
		i = (i + 1) & mask;
	return m->key[i] ? &m->val[i] : NULL;
}

static int memo_put(struct memo *m, uint64_t key, uint32_t val)
{
	size_t i, mask;

	if (2 * (m->n + 1) > m->cap) {
		struct memo g = { .cap = m->cap ? 2 * m->cap : 4096 };
		size_t j;

		g.key = hs_calloc(g.cap, sizeof(uint64_t));
		g.val = hs_malloc(g.cap * sizeof(uint32_t));
		if (!g.key || !g.val) {
			hs_free(g.key);
			hs_free(g.val);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->key[j])
				continue;
			i = hs_hash_u64(m->key[j]) & (g.cap - 1);
			while (g.key[i])
				i = (i + 1) & (g.cap - 1);
			g.key[i] = m->key[j];
			g.val[i] = m->val[j];
		}
		g.n = m->n;
		hs_free(m->key);
		hs_free(m->val);
		*m = g;
	}
	mask = m->cap - 1;
	i = hs_hash_u64(key) & mask;
	while (m->key[i] && m->key[i] != key)
		i = (i + 1) & mask;
	if (!m->key[i])
		m->n++;
	m->key[i] = key;
	m->val[i] = val;
	return 0;
}

static void memo_release(struct memo *m)
{
	hs_free(m->key);
	hs_free(m->val);
	memset(m, 0, sizeof(*m));
}

/* The live blocks: address (never 0) -> allocating event and its stack. */
struct live {
	uint64_t *key;
	uint64_t *ev;
	uint32_t *stk;
	size_t n, cap;
};

static size_t live_find(const struct live *m, uint64_t a)
{
	size_t mask = m->cap - 1, i = hs_hash_u64(a) & mask;

	while (m->key[i] && m->key[i] != a)
		i = (i + 1) & mask;
	return i;
}

static int live_put(struct live *m, uint64_t a, uint64_t ev, uint32_t stk)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct live g = { .cap = m->cap ? 2 * m->cap : 4096 };
		size_t j;

		g.key = hs_calloc(g.cap, sizeof(uint64_t));
		g.ev = hs_malloc(g.cap * sizeof(uint64_t));
		g.stk = hs_malloc(g.cap * sizeof(uint32_t));
		if (!g.key || !g.ev || !g.stk) {
			hs_free(g.key);
			hs_free(g.ev);
			hs_free(g.stk);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++)
			if (m->key[j]) {
				i = live_find(&g, m->key[j]);
				g.key[i] = m->key[j];
				g.ev[i] = m->ev[j];
				g.stk[i] = m->stk[j];
			}
		g.n = m->n;
		hs_free(m->key);
		hs_free(m->ev);
		hs_free(m->stk);
		*m = g;
	}
	i = live_find(m, a);
	if (!m->key[i])
		m->n++;
	m->key[i] = a;
	m->ev[i] = ev;
	m->stk[i] = stk;
	return 0;
}

/* Remove @a; 1 with its event and stack, or 0 when it is not live. */
static int live_del(struct live *m, uint64_t a, uint64_t *ev, uint32_t *stk)
{
	size_t mask, i, j;

	if (!m->cap || !a)
		return 0;
	mask = m->cap - 1;
	i = live_find(m, a);
	if (!m->key[i])
		return 0;
	*ev = m->ev[i];
	*stk = m->stk[i];
	m->n--;
	j = i;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!m->key[j])
			break;
		home = hs_hash_u64(m->key[j]) & mask;
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			m->key[i] = m->key[j];
			m->ev[i] = m->ev[j];
			m->stk[i] = m->stk[j];
			i = j;
		}
	}
	m->key[i] = 0;
	return 1;
}

static void live_release(struct live *m)
{
	hs_free(m->key);
	hs_free(m->ev);
	hs_free(m->stk);
	memset(m, 0, sizeof(*m));
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
	struct memo roots;		/* thread << 8 | category -> root number */
	uint32_t *root_stack;		/* root number -> its stack */
	size_t nr_roots, alloc_roots;
	struct memo base;		/* root << 32 | node -> stack */
	struct memo leaf;		/* stack << 8 | tag -> stack */
	uint32_t *thread_stack;		/* thread -> its pseudo-frame stack */
	uint32_t process_stack, broken_frame;
	uint32_t fn_frame[256];		/* tag -> allocation function frame */
	uint32_t large_frame;
	uint32_t class_frame[65];
	const char *libc;		/* the C library's path, or NULL */
	uint32_t *path;			/* scratch: nodes leaf first */
};

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
			err = hs_buf_addf(&b->name, "%s!%s%s", mod ? mod : "?", fn,
					  f[i].flags & HS_TSYM_INLINE ? " (inline)" : "");
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
 * The root of an event's stack: its thread's stack, then "LargeAlloc" and
 * the size class when they apply (@cat: class << 1 | large). Returns the
 * root's number (for the memo of node stacks) and its stack in *@stack.
 */
static int category_root(struct builder *b, uint32_t th, unsigned cat, uint32_t *root,
			 uint32_t *stack)
{
	uint64_t key = ((uint64_t)th << 8 | cat) + 1;
	uint32_t *hit = memo_get(&b->roots, key), s, cls = cat >> 1;
	int err;

	if (hit) {
		*root = *hit;
		*stack = b->root_stack[*hit];
		return 0;
	}
	err = thread_stack(b, th, &s);
	if (!err && (cat & 1)) {
		if (b->large_frame == HS_NO_FRAME)
			err = intern(b, "LargeAlloc", 10, &b->large_frame);
		if (!err)
			err = hs_source_intern_stack(b->out, b->large_frame, s, &s);
	}
	if (!err && b->o->size_classes) {
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
		err = memo_put(&b->roots, key, (uint32_t)b->nr_roots);
	if (err)
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
	uint32_t s, *hit = NULL, first;
	size_t n = 0, i;
	unsigned len, k;
	int err;

	if (node == HS_TRACE_NONE) {
		*stack = root_stack;
		return 0;
	}
	/* climb until a node already known under this root, or the root */
	for (;;) {
		hit = memo_get(&b->base, ((uint64_t)root << 32 | node) + 1);
		if (hit || n > HS_DEPTH_LIMIT + 1)
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
	s = hit ? *hit : root_stack;
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
			err = memo_put(&b->base, ((uint64_t)root << 32 | b->path[i]) + 1, s);
		if (err)
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

/* Bit length of @v: the k of the size class "Alloc < 2^k". */
static unsigned bit_length(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

/*
 * The stack of event @ev: Process, Thread, LargeAlloc and the size class
 * when they apply, the frames of its node, then the allocation function
 * as the leaf.
 */
static int event_stack(struct builder *b, size_t ev, uint32_t *stack)
{
	const struct hs_trace *t = b->t;
	uint32_t s, *hit, root, root_stack;
	unsigned tag = t->fn[ev], cat = 0;
	uint64_t size = t->size[ev], key;
	int err;

	if (b->o->large_threshold && size >= b->o->large_threshold)
		cat |= 1;
	if (b->o->size_classes)
		cat |= bit_length(size) << 1;
	err = category_root(b, t->thread[ev], cat, &root, &root_stack);
	if (!err)
		err = base_stack(b, root, root_stack, t->stack[ev], &s);
	if (err)
		return err;
	key = ((uint64_t)s << 8 | tag) + 1;
	hit = memo_get(&b->leaf, key);
	if (hit) {
		*stack = *hit;
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
		err = memo_put(&b->leaf, key, s);
	if (!err)
		*stack = s;
	return err;
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
	b->libc = find_libc(t);
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
	hs_buf_release(&b->name);
	hs_free(b->node_first);
	hs_free(b->node_len);
	hs_free(b->chain_frame);
	hs_free(b->chain_loc);
	memo_release(&b->roots);
	hs_free(b->root_stack);
	memo_release(&b->base);
	memo_release(&b->leaf);
	hs_free(b->thread_stack);
	hs_free(b->path);
}

/* --- the views -------------------------------------------------------------- */

static double weight(const struct hs_trace *t, size_t ev)
{
	return t->info.sample_bytes ? hs_trace_weight(t, t->size[ev]) : 1.0;
}

static int add(struct builder *b, int64_t time, double bytes, double count, uint32_t stack)
{
	return hs_source_add_sample(b->out, time, bytes, count, stack);
}

static int view_alloc(struct builder *b)
{
	const struct hs_trace *t = b->t;
	size_t i;
	uint32_t s;
	int err = 0;

	for (i = 0; i < t->nr_events && !err; i++) {
		double w;

		if (t->op[i] != HS_OP_ALLOC)
			continue;
		w = weight(t, i);
		err = event_stack(b, i, &s);
		if (!err)
			err = add(b, t->time[i], (double)t->size[i] * w, w, s);
	}
	return err;
}

static int view_net(struct builder *b, struct hs_memview_info *info)
{
	const struct hs_trace *t = b->t;
	struct live live = { 0 };
	uint64_t j;
	size_t i;
	uint32_t s;
	int err = 0;

	for (i = 0; i < t->nr_events && !err; i++) {
		double w;

		if (t->op[i] == HS_OP_ALLOC) {
			/* a block at a live address: its free was missed */
			if (live_del(&live, t->addr[i], &j, &s)) {
				w = weight(t, j);
				err = add(b, t->time[i], -(double)t->size[j] * w, -w, s);
				if (info)
					info->missed_frees++;
			}
			w = weight(t, i);
			if (!err)
				err = event_stack(b, i, &s);
			if (!err)
				err = add(b, t->time[i], (double)t->size[i] * w, w, s);
			if (!err)
				err = live_put(&live, t->addr[i], i, s);
		} else if (t->op[i] == HS_OP_FREE) {
			if (!live_del(&live, t->addr[i], &j, &s)) {
				if (info)
					info->unmatched_frees++;
				continue;
			}
			w = weight(t, j);
			err = add(b, t->time[i], -(double)t->size[j] * w, -w, s);
			if (info)
				info->frees += w;
		}
	}
	live_release(&live);
	return err;
}

/* The range in ns, with the filter's 0.0006 ms of slack on each side. */
static void range_ns(const struct hs_memview_opts *o, double *lo, double *hi)
{
	*lo = isnan(o->start_ms) ? -INFINITY : o->start_ms * 1e6 - 600;
	*hi = isnan(o->end_ms) ? INFINITY : o->end_ms * 1e6 + 600;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Emit the blocks of @live in time order. */
static int emit_live(struct builder *b, struct live *live)
{
	const struct hs_trace *t = b->t;
	uint64_t *ev = hs_malloc((live->n + 1) * sizeof(uint64_t));
	size_t i, n = 0;
	uint32_t s;
	int err = 0;

	if (!ev)
		return -ENOMEM;
	for (i = 0; i < live->cap; i++)
		if (live->key[i])
			ev[n++] = live->ev[i];
	qsort(ev, n, sizeof(*ev), cmp_u64);
	for (i = 0; i < n && !err; i++) {
		double w = weight(t, ev[i]);

		err = event_stack(b, ev[i], &s);
		if (!err)
			err = add(b, t->time[ev[i]], (double)t->size[ev[i]] * w, w, s);
	}
	hs_free(ev);
	return err;
}

static int view_leaks(struct builder *b)
{
	const struct hs_trace *t = b->t;
	struct live live = { 0 };
	double lo, hi;
	uint64_t j;
	size_t i;
	uint32_t s;
	int err = 0;

	range_ns(b->o, &lo, &hi);
	for (i = 0; i < t->nr_events && !err; i++) {
		if ((double)t->time[i] > hi)
			break;
		if (t->op[i] == HS_OP_ALLOC) {
			if ((double)t->time[i] >= lo)
				err = live_put(&live, t->addr[i], i, 0);
			else
				live_del(&live, t->addr[i], &j, &s);	/* a reused address */
		} else if (t->op[i] == HS_OP_FREE) {
			live_del(&live, t->addr[i], &j, &s);
		}
	}
	if (!err)
		err = emit_live(b, &live);
	live_release(&live);
	return err;
}

static int view_peak(struct builder *b, struct hs_memview_info *info)
{
	const struct hs_trace *t = b->t;
	struct live live = { 0 };
	double lo, hi, in_use = 0, peak = -1;
	size_t i, upto = 0;	/* the peak is after events [0, upto) */
	int64_t peak_ns = -1;
	uint64_t j;
	uint32_t s;
	int err = 0, have = 0;

	/* pass 1: when was heap in use highest within the range? */
	range_ns(b->o, &lo, &hi);
	for (i = 0; i < t->nr_events && !err; i++) {
		if ((double)t->time[i] > hi)
			break;
		if (!have && (double)t->time[i] >= lo) {
			/* the heap as the range starts */
			have = 1;
			peak = in_use;
			upto = i;
			peak_ns = isfinite(lo) ? (int64_t)(lo + 600) : t->time[i];
		}
		if (t->op[i] == HS_OP_ALLOC) {
			if (live_del(&live, t->addr[i], &j, &s))
				in_use -= (double)t->size[j] * weight(t, j);
			err = live_put(&live, t->addr[i], i, 0);
			in_use += (double)t->size[i] * weight(t, i);
		} else if (t->op[i] == HS_OP_FREE && live_del(&live, t->addr[i], &j, &s)) {
			in_use -= (double)t->size[j] * weight(t, j);
		} else {
			continue;
		}
		if (have && in_use > peak) {
			peak = in_use;
			upto = i + 1;
			peak_ns = t->time[i];
		}
	}
	live_release(&live);
	if (err)
		return err;
	/* pass 2: the blocks live then */
	for (i = 0; i < upto && !err; i++) {
		if (t->op[i] == HS_OP_ALLOC) {
			live_del(&live, t->addr[i], &j, &s);
			err = live_put(&live, t->addr[i], i, 0);
		} else if (t->op[i] == HS_OP_FREE) {
			live_del(&live, t->addr[i], &j, &s);
		}
	}
	if (!err)
		err = emit_live(b, &live);
	live_release(&live);
	if (info) {
		info->peak_ns = have ? peak_ns : -1;
		info->peak_bytes = have ? peak : 0;
	}
	return err;
}

static int view_temporary(struct builder *b)
{
	const struct hs_trace *t = b->t;
	struct live live = { 0 };
	uint64_t last = 0, j;	/* the latest allocation: its address */
	size_t i;
	uint32_t s;
	int err = 0;

	for (i = 0; i < t->nr_events && !err; i++) {
		if (t->op[i] == HS_OP_ALLOC) {
			err = live_put(&live, t->addr[i], i, 0);
			last = t->addr[i];
		} else if (t->op[i] == HS_OP_FREE && live_del(&live, t->addr[i], &j, &s)) {
			double w;

			if (t->addr[i] != last)
				continue;
			last = 0;
			w = weight(t, j);
			err = event_stack(b, j, &s);
			if (!err)
				err = add(b, t->time[j], (double)t->size[j] * w, w, s);
		}
	}
	live_release(&live);
	return err;
}

/*
 * Live anonymous mappings: sorted, disjoint [start, end). A mapping that
 * munmap cut in pieces counts as one block until its last piece goes.
 */
struct mapping {
	uint64_t start, end;
	uint32_t stack;
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
static int maps_unmap(struct builder *b, struct maps *ms, uint64_t a, uint64_t e,
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
		err = add(b, time, -(double)(hi - lo), whole && !ms->pieces[m->id] ? -1 : 0,
			  m->stack);
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

static int view_mmap(struct builder *b)
{
	const struct hs_trace *t = b->t;
	struct maps ms = { 0 };
	size_t i, at;
	uint32_t s;
	int err = 0;

	for (i = 0; i < t->nr_events && !err; i++) {
		uint64_t a = t->addr[i], e = a + t->size[i];

		if (e < a)
			e = UINT64_MAX;
		if (t->op[i] == HS_OP_MUNMAP) {
			err = maps_unmap(b, &ms, a, e, t->time[i]);
			continue;
		}
		if (t->op[i] != HS_OP_MMAP || e == a)
			continue;
		/* a mapping placed over live ones replaces them */
		err = maps_unmap(b, &ms, a, e, t->time[i]);
		if (!err)
			err = event_stack(b, i, &s);
		if (!err)
			err = add(b, t->time[i], (double)t->size[i], 1, s);
		if (!err && (HS_GROW(ms.m, ms.n + 1, ms.alloc) || ms.nr_ids >= UINT32_MAX ||
			     HS_GROW(ms.pieces, ms.nr_ids + 1, ms.alloc_ids)))
			err = -ENOMEM;
		if (err)
			break;
		at = maps_first(&ms, a);
		memmove(ms.m + at + 1, ms.m + at, (ms.n - at) * sizeof(*ms.m));
		ms.m[at].start = a;
		ms.m[at].end = e;
		ms.m[at].stack = s;
		ms.m[at].id = (uint32_t)ms.nr_ids;
		ms.pieces[ms.nr_ids++] = 1;
		ms.n++;
	}
	hs_free(ms.m);
	hs_free(ms.pieces);
	return err;
}

int hs_memview_build(const struct hs_trace *t, const struct hs_memview_opts *o,
		     struct hs_stack_source *out, struct hs_memview_info *info,
		     struct hs_diag *diag)
{
	struct builder b;
	int err;

	hs_source_init(out);
	if (info) {
		memset(info, 0, sizeof(*info));
		info->peak_ns = -1;
		info->uses_range = o->kind == HS_MEM_LEAKS || o->kind == HS_MEM_PEAK;
		info->symbolized = t->syms.present;
	}
	err = builder_init(&b, t, o, out);
	if (!err) {
		out->kind = HS_METRIC_PLAIN;
		out->metric_unit = hs_strdup("bytes");
		out->defaults.fold = hs_strdup(HS_PRESET_HEAP_FOLD);
		if (!out->metric_unit || !out->defaults.fold)
			err = -ENOMEM;
		if (!err && o->kind == HS_MEM_LEAKS &&
		    !(out->defaults.exc = hs_strdup(HS_PRESET_LEAK_SUPPRESS)))
			err = -ENOMEM;
	}
	if (!err) {
		switch (o->kind) {
		case HS_MEM_ALLOC:
			err = view_alloc(&b);
			break;
		case HS_MEM_NET:
			err = view_net(&b, info);
			break;
		case HS_MEM_LEAKS:
			err = view_leaks(&b);
			break;
		case HS_MEM_PEAK:
			err = view_peak(&b, info);
			break;
		case HS_MEM_TEMPORARY:
			err = view_temporary(&b);
			break;
		case HS_MEM_MMAP:
			err = view_mmap(&b);
			break;
		default:
			err = -EINVAL;
			break;
		}
	}
	builder_release(&b);
	if (err == -ENOMEM)
		hs_diag_set(diag, 0, "out of memory");
	else if (err == -E2BIG)
		hs_diag_set(diag, 0, "too many frames or stacks");
	else if (err)
		hs_diag_set(diag, 0, "%s", strerror(-err));
	return err;
}
