/*
 * memviews_stacks - the stacks of the memory views (memviews.c): the key
 * table that numbers what decides an event's stack, and the builder that
 * turns trace nodes and keys into stacks of the output source (the
 * node's frames, the pseudo-frames for Process, Thread, the exit-time
 * allocations, LargeAlloc and size classes, the allocation function),
 * and the heap views' default FoldPats with the trace's allocation
 * wrappers (heap_fold()), found over the paths of every node by a builder
 * that interns their frames alone.
 *
 * Ownership: the builder owns its caches and borrows the trace, the
 * options and the output source; memviews_internal.h lists what the view
 * code calls.
 */
#include "analysis/memviews_internal.h"
#include "analysis/presets.h"
#include "analysis/wrappers.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "model/frame_name.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct key_probe {
	uint64_t node;
	uint32_t thread;
	unsigned tagcat;
};

static uint64_t key_hash(const struct key_probe *p)
{
	uint64_t k[2] = {p->node, (uint64_t)p->thread << 16 | p->tagcat};

	return hs_hash_bytes(k, sizeof(k));
}

static int key_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct keytab *k = ctx;
	const struct key_probe *p = key;

	return k->node[id] == p->node && k->thread[id] == p->thread &&
	       k->tagcat[id] == p->tagcat;
}

int key_find(struct keytab *k, uint64_t node, uint32_t thread, unsigned tagcat,
	     uint32_t *key)
{
	struct key_probe p = {node, thread, tagcat};
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

void keytab_release(struct keytab *k)
{
	hs_free(k->node);
	hs_free(k->thread);
	hs_free(k->tagcat);
	hs_free(k->last);
	hs_idindex_release(&k->index);
	memset(k, 0, sizeof(*k));
}

/* --- frames and stacks ---------------------------------------------------- */

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

/*
 * "@mod!@fn" (mod NULL: "?") into @name, without printf's formatting: a
 * builder names every frame of every node this way. 0 or -ENOMEM.
 */
static int put_frame_name(struct hs_buf *name, const char *mod, const char *fn)
{
	int err = hs_buf_adds(name, mod ? mod : "?");

	if (!err)
		err = hs_buf_add(name, "!", 1);
	if (!err)
		err = hs_buf_adds(name, fn);
	return err;
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
			err = put_frame_name(&b->name, mod, "?");
			i = 0;
			file = NULL;
		} else {
			uint32_t id;

			err = put_frame_name(&b->name, mod, fn);
			if (!err && (f[i].flags & HS_TSYM_INLINE) &&
			    (b->o->split_inline ||
			     hs_strtab_find(&b->outofline, b->name.s, b->name.len, &id)))
				err = hs_buf_adds(&b->name, " (inline)");
		}
		if (!err)
			err = intern(b, b->name.s, b->name.len, &frame);
		loc = 0;
		if (!err && file && f[i].line)
			err = hs_source_intern_loc(b->out, file, strlen(file), f[i].line,
						   &loc);
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
	b->node_len[node] =
	    (uint8_t)(b->nr_chain - start > 255 ? 255 : b->nr_chain - start);
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
	uint64_t key = (uint64_t)th << 9 | (uint64_t) !!exit << 8 | cat, hit;
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
			err = cls < 64
				  ? hs_buf_addf(&b->name, "Alloc < %" PRIu64,
						(uint64_t)1 << cls)
				  : hs_buf_adds(&b->name, "Alloc >= 9223372036854775808");
			if (!err)
				err = intern(b, b->name.s, b->name.len,
					     &b->class_frame[cls]);
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

/*
 * One step of a climb from a node towards the root, for base_stack() and
 * fold_path(): *@node goes onto b->path (its *@n-th entry), then *@node
 * becomes its parent. Returns 0 where the climb ends: at the root
 * (HS_TRACE_NONE), or at a parent that is missing, where a BROKEN entry
 * (HS_TRACE_NONE) goes onto the path; 1 while it goes on.
 */
static int climb_up(struct builder *b, uint32_t *node, size_t *n)
{
	b->path[(*n)++] = *node;
	*node = b->t->node_parent[*node];
	if (*node == HS_TRACE_MISSING) {
		b->path[(*n)++] = HS_TRACE_NONE; /* BROKEN */
		return 0;
	}
	return *node != HS_TRACE_NONE;
}

/* The stack of node @node under root @root (without the allocation function). */
static int base_stack(struct builder *b, uint32_t root, uint32_t root_stack,
		      uint32_t node, uint32_t *stack)
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
		if (found || n > HS_DEPTH_LIMIT + 1 || !climb_up(b, &node, &n))
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
			err =
			    hs_source_intern_stack_loc(b->out, b->chain_frame[first + k],
						       s, b->chain_loc[first + k], &s);
		if (!err)
			err = hs_u64map_put(&b->base, (uint64_t)root << 32 | b->path[i],
					    s, NULL);
		if (err < 0)
			return err;
	}
	*stack = s;
	return 0;
}

static const char *fn_name(unsigned tag)
{
	switch (tag) {
	case HS_TAG_MALLOC:
		return "malloc";
	case HS_TAG_CALLOC:
		return "calloc";
	case HS_TAG_REALLOC:
		return "realloc";
	case HS_TAG_REALLOCARRAY:
		return "reallocarray";
	case HS_TAG_POSIX_MEMALIGN:
		return "posix_memalign";
	case HS_TAG_ALIGNED_ALLOC:
		return "aligned_alloc";
	case HS_TAG_MEMALIGN:
		return "memalign";
	case HS_TAG_VALLOC:
		return "valloc";
	case HS_TAG_PVALLOC:
		return "pvalloc";
	case HS_TAG_MMAP:
		return "mmap";
	case HS_TAG_MREMAP:
		return "mremap";
	default:
		return "alloc";
	}
}

/* Length of the module part of frame name @s ("module!function"). */
static size_t module_len(const char *s)
{
	const char *bang = hs_frame_name_bang(s, strlen(s));

	return bang ? (size_t)(bang - s) : SIZE_MAX;
}

/*
 * The FK_* bits of @frame (a frame of a node's chain), and the length of
 * its module part in *@mod_len (SIZE_MAX: none), found once per frame.
 */
static int frame_kind(struct builder *b, uint32_t frame, unsigned *kind, size_t *mod_len)
{
	const char *name;
	size_t which, n;
	int r;

	if (frame >= b->alloc_kind) {
		size_t a = b->alloc_kind, a2 = b->alloc_kind;

		if (HS_GROW(b->frame_kind, (size_t)frame + 1, a) ||
		    HS_GROW(b->frame_mod, (size_t)frame + 1, a2))
			return -ENOMEM;
		if (a2 < a && HS_GROW(b->frame_mod, a, a2))
			return -ENOMEM;
		memset(b->frame_kind + b->alloc_kind, 0, a - b->alloc_kind);
		b->alloc_kind = a;
	}
	if (!b->frame_kind[frame]) {
		unsigned k = FK_SEEN;
		size_t ml;

		name = hs_source_frame_name(b->out, frame);
		n = strlen(name);
		ml = module_len(name);
		b->frame_mod[frame] = ml > UINT32_MAX - 1 ? UINT32_MAX : (uint32_t)ml;
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
	*mod_len = b->frame_mod[frame] == UINT32_MAX ? SIZE_MAX : b->frame_mod[frame];
	return 0;
}

/*
 * Is the allocation at node @idx a known exit-time allocation: does one of
 * its allocating frames (the file's header comment) match? 0, 1 or an error.
 * Once the allocating module is known, the rest of the walk depends only
 * on the node it has come to and that module: each node it went through
 * keeps the answer (b->node_cont), and a later walk that comes to one of
 * them in the same module stops there with it, so that the nodes of a
 * deep stack in one module (an interpreter's) are walked once, not once
 * per allocating node below them.
 */
static int exit_time_walk(struct builder *b, uint32_t idx)
{
	const char *mod = NULL;
	size_t mod_len = 0, len_here, nr_path = 0, i;
	uint32_t first, mod_frame = HS_NO_FRAME;
	unsigned len, k, kind;
	int err, r = 0;

	while (idx != HS_TRACE_NONE && idx != HS_TRACE_MISSING) {
		if (mod) {
			/* the walk goes on from here as from any walk that
			 * came to this node in the same module: its answer */
			uint32_t c = b->node_cont[idx];

			if (c != HS_NO_FRAME && b->frame_mod[c >> 1] == mod_len &&
			    !memcmp(hs_source_frame_name(b->out, c >> 1), mod, mod_len)) {
				r = (int)(c & 1);
				break;
			}
			if (nr_path < HS_DEPTH_LIMIT + 4)
				b->path[nr_path++] = idx;
		}
		err = node_chain(b, idx, &first, &len);
		for (k = len; !err && k-- > 0;) {
			uint32_t f = b->chain_frame[first + k];

			err = frame_kind(b, f, &kind, &len_here);
			if (err)
				break;
			if (!mod) {
				if (kind & FK_ALLOCATOR)
					continue; /* the allocator's own */
				mod = hs_source_frame_name(b->out, f);
				mod_len = len_here;
				mod_frame = f;
				if (mod_len == SIZE_MAX)
					return 0;
			} else if (len_here != mod_len ||
				   memcmp(hs_source_frame_name(b->out, f), mod,
					  mod_len)) {
				r = 0; /* called from another module */
				goto out;
			}
			if (kind & FK_EXIT) {
				r = 1;
				goto out;
			}
		}
		if (err)
			return err;
		idx = b->t->node_parent[idx];
	}
out:
	for (i = 0; i < nr_path && mod_frame < UINT32_MAX / 2; i++)
		b->node_cont[b->path[i]] = mod_frame << 1 | (uint32_t)r;
	return r;
}

/* exit_time_walk() once per node: keys of several threads share nodes. */
static int exit_time(struct builder *b, uint32_t idx)
{
	int r;

	if (!b->node_exit && !(b->node_exit = hs_calloc(b->t->nr_nodes + 1, 1)))
		return -ENOMEM;
	if (!b->node_cont) {
		size_t i;

		b->node_cont = hs_malloc((b->t->nr_nodes + 1) * sizeof(*b->node_cont));
		if (!b->node_cont)
			return -ENOMEM;
		for (i = 0; i <= b->t->nr_nodes; i++)
			b->node_cont[i] = HS_NO_FRAME;
	}
	if (b->node_exit[idx])
		return b->node_exit[idx] - 1;
	r = exit_time_walk(b, idx);
	if (r >= 0)
		b->node_exit[idx] = (uint8_t)(r + 1);
	return r;
}

/*
 * The stack of key @k: Process, Thread, the exit-time pseudo-frame for a
 * known exit-time allocation of the leaks view, LargeAlloc and the size
 * class when they apply, the frames of its node, then the allocation
 * function as the leaf.
 */
int key_stack(struct builder *b, const struct keytab *keys, size_t k, uint32_t *stack)
{
	const struct hs_trace *t = b->t;
	uint64_t node = keys->node[k], key, hit;
	unsigned tag = keys->tagcat[k] >> 8, cat = keys->tagcat[k] & 0xff;
	uint32_t s, root, root_stack, idx = HS_TRACE_NONE;
	int err, broken = 0, exit = 0;

	if (node & HS_TRACE_EV_NODE_ID) {
		idx = hs_trace_node_index(t, node & ~HS_TRACE_EV_NODE_ID);
		broken = idx == HS_TRACE_NONE; /* never defined: cut off */
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
		static const char *const state[] = {NULL, HS_FRAME_CPU_TIME,
						    HS_FRAME_BLOCKED_TIME,
						    HS_FRAME_READIED_TIME};
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
			err = put_frame_name(&b->name, mod, fn);
			if (!err)
				err = hs_strtab_intern(&b->outofline, b->name.s,
						       b->name.len, &id);
		}
	}
	hs_buf_reset(&b->name);
	return err;
}

int builder_init(struct builder *b, const struct hs_trace *t,
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
			  t->info.comm && t->info.comm[0] ? t->info.comm : "?",
			  t->info.pid);
	if (!err)
		err = intern(b, b->name.s, b->name.len, &frame);
	if (!err)
		err = hs_source_intern_stack(out, frame, HS_NO_STACK, &b->process_stack);
	if (!err)
		err = intern(b, "BROKEN", 6, &b->broken_frame);
	return err;
}

void builder_release(struct builder *b)
{
	hs_patlist_release(&b->alloc_pats);
	hs_patlist_release(&b->exit_pats);
	hs_free(b->frame_kind);
	hs_free(b->frame_mod);
	hs_free(b->node_exit);
	hs_free(b->node_cont);
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

/*
 * heap_fold()'s walk of the path of node @node up to the process, as
 * base_stack() walks it under the process's stack (root 0), the calls
 * between its frames handed to @g instead of interned as stacks: the
 * same frames in the same order, and so the same calls. @frame_of is
 * the memo base_stack() keeps as stacks: node -> the frame its path
 * ends in (HS_NO_FRAME: not walked yet); a path of more than
 * HS_DEPTH_LIMIT + 1 nodes none of which was walked hangs under the
 * process, as there. The frame @node's path ends in goes in *@last.
 */
static int fold_path(struct builder *b, uint32_t *frame_of, struct hs_wrappers_graph *g,
		     uint32_t node, uint32_t *last)
{
	uint32_t f, first;
	size_t n = 0, i;
	unsigned len, k;
	int err = 0, found;

	for (;;) {
		found = frame_of[node] != HS_NO_FRAME;
		if (found || n > HS_DEPTH_LIMIT + 1 || !climb_up(b, &node, &n))
			break;
	}
	f = found ? frame_of[node] : b->out->stack_frame[b->process_stack];
	for (i = n; !err && i-- > 0;) {
		if (b->path[i] == HS_TRACE_NONE) {
			err = hs_wrappers_graph_call(g, f, b->broken_frame);
			f = b->broken_frame;
			continue;
		}
		err = node_chain(b, b->path[i], &first, &len);
		for (k = 0; !err && k < len; k++) {
			err = hs_wrappers_graph_call(g, f, b->chain_frame[first + k]);
			f = b->chain_frame[first + k];
		}
		frame_of[b->path[i]] = f;
	}
	*last = f;
	return err;
}

/*
 * The heap views' default FoldPats: the heap preset, then the trace's
 * allocation wrappers (analysis/wrappers.h) unless @o->keep_wrappers.
 * The wrappers are found over every path of the trace's stack tree,
 * whatever the view keeps: from the process to each leaf of the tree,
 * with an allocation function below it (the event's own function is not
 * known here; any of them is one). The calls along the paths go to the
 * wrappers' graph as they are walked (fold_path()): the frames are
 * interned, the paths are not. Returns 0 or -ENOMEM.
 */
int heap_fold(const struct hs_trace *t, const struct hs_memview_opts *o, char **fold)
{
	struct hs_memview_opts all = *o;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_wrappers_graph g = HS_WRAPPERS_GRAPH_INIT;
	struct hs_stack_source frames;
	struct builder b;
	uint8_t *has_child = NULL;
	uint32_t *frame_of = NULL;
	char *wrappers = NULL;
	uint32_t alloc, f;
	size_t i, n;
	int err;

	*fold = NULL;
	if (o->keep_wrappers || !t->nr_nodes)
		return (*fold = hs_strdup(HS_PRESET_HEAP_FOLD)) ? 0 : -ENOMEM;
	all.kind = HS_MEM_ALLOC;
	hs_source_init(&frames);
	err = builder_init(&b, t, &all, &frames);
	if (!err && (!(has_child = hs_calloc(t->nr_nodes, 1)) ||
		     !(frame_of = hs_malloc(t->nr_nodes * sizeof(*frame_of)))))
		err = -ENOMEM;
	for (i = 0; !err && i < t->nr_nodes; i++) {
		frame_of[i] = HS_NO_FRAME;
		if (t->node_parent[i] < t->nr_nodes)
			has_child[t->node_parent[i]] = 1;
	}
	if (!err)
		err = intern(&b, "?!malloc", 8, &alloc);
	for (i = 0; !err && i < t->nr_nodes; i++) {
		if (has_child[i])
			continue;
		err = fold_path(&b, frame_of, &g, (uint32_t)i, &f);
		if (!err)
			err = hs_wrappers_graph_call(&g, f, alloc);
		if (!err)
			err = hs_wrappers_graph_leaf(&g, alloc);
	}
	if (!err)
		err = hs_wrappers_graph_find(&g, &frames.frames, HS_PRESET_HEAP_FOLD,
					     &wrappers, &diag);
	hs_wrappers_graph_release(&g);
	builder_release(&b);
	hs_source_release(&frames);
	hs_free(has_child);
	hs_free(frame_of);
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
