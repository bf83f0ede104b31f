/*
 * heapgraph - the heap snapshot graph (graph.h): building it, PerfView's
 * spanning tree, the dominator tree and retained sizes, and the heap and
 * retained views as stack sources.
 *
 * Every traversal is iterative (explicit stacks and queues sized by the
 * node count): heaps hold chains millions of objects deep.
 */
#include "heapgraph/graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "common/alloc.h"

#define NONE HS_HEAPGRAPH_NONE

void hs_heapgraph_init(struct hs_heapgraph *g)
{
	memset(g, 0, sizeof(*g));
	g->root = NONE;
	g->avg_count_multiplier = 1;
	g->avg_size_multiplier = 1;
}

void hs_heapgraph_release(struct hs_heapgraph *g)
{
	uint32_t i;

	if (!g)
		return;
	for (i = 0; i < g->nr_types; i++) {
		hs_free(g->types[i].name);
		hs_free(g->types[i].module);
	}
	hs_free(g->types);
	hs_free(g->address);
	hs_free(g->size);
	hs_free(g->type);
	hs_free(g->first_child);
	hs_free(g->children);
	hs_free(g->count_multiplier);
	hs_heapgraph_init(g);
}

static int contains_nocase(const char *s, const char *part)
{
	size_t n = strlen(part);

	for (; *s; s++)
		if (!strncasecmp(s, part, n))
			return 1;
	return 0;
}

enum hs_heap_root_kind hs_heapgraph_root_kind(const char *name)
{
	if (contains_nocase(name, "static var"))
		return HS_HEAP_ROOT_STATIC;
	if (contains_nocase(name, "local var"))
		return HS_HEAP_ROOT_LOCAL;
	if (contains_nocase(name, "finaliz"))
		return HS_HEAP_ROOT_FINALIZER;
	if (contains_nocase(name, "handle"))
		return HS_HEAP_ROOT_HANDLE;
	return HS_HEAP_ROOT_OTHER;
}

int hs_heapgraph_add_type(struct hs_heapgraph *g, const char *name, const char *module,
			  uint32_t size, uint32_t *index)
{
	struct hs_heapgraph_type *t;

	HS_BUG_ON(!name || !index);
	if (g->nr_types == NONE)
		return -E2BIG;
	if (HS_GROW(g->types, (size_t)g->nr_types + 1, g->alloc_types))
		return -ENOMEM;
	t = &g->types[g->nr_types];
	t->name = hs_strdup(name);
	t->module = module ? hs_strdup(module) : NULL;
	t->size = size;
	if (!t->name || (module && !t->module)) {
		hs_free(t->name);
		hs_free(t->module);
		return -ENOMEM;
	}
	*index = g->nr_types++;
	return 0;
}

/* Room for @want nodes (and the end of the CSR): 0 or -ENOMEM. */
static int grow_nodes(struct hs_heapgraph *g, size_t want)
{
	uint64_t *a;
	uint32_t *s, *t, *f;

	a = hs_realloc(g->address, want * sizeof(*a));
	if (!a)
		return -ENOMEM;
	g->address = a;
	s = hs_realloc(g->size, want * sizeof(*s));
	if (!s)
		return -ENOMEM;
	g->size = s;
	t = hs_realloc(g->type, want * sizeof(*t));
	if (!t)
		return -ENOMEM;
	g->type = t;
	f = hs_realloc(g->first_child, (want + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	g->first_child = f;
	g->alloc_nodes = want;
	return 0;
}

int hs_heapgraph_reserve(struct hs_heapgraph *g, size_t nodes)
{
	if (nodes + 2 <= g->alloc_nodes)
		return 0;
	if (nodes + 1 >= NONE)
		return -ENOMEM;
	return grow_nodes(g, nodes + 2);
}

int hs_heapgraph_add_node(struct hs_heapgraph *g, uint32_t type, uint32_t size,
			  uint64_t address, const uint32_t *children, uint32_t nr)
{
	size_t n = g->nr_nodes, cap = g->alloc_nodes;

	HS_BUG_ON(nr && !children);
	if (type >= g->nr_types)
		return -EINVAL;
	if (n + 1 >= NONE || g->nr_edges + nr >= NONE)
		return -E2BIG;
	if (n + 2 > cap) {
		int err = grow_nodes(g, cap < 16 ? 16 : cap + cap / 2);

		if (err)
			return err;
	}
	if (nr && HS_GROW(g->children, g->nr_edges + nr, g->alloc_edges))
		return -ENOMEM;
	if (nr)
		memcpy(g->children + g->nr_edges, children, nr * sizeof(*children));
	g->address[n] = address;
	g->size[n] = size;
	g->type[n] = type;
	g->first_child[n] = (uint32_t)g->nr_edges;
	g->nr_edges += nr;
	g->first_child[n + 1] = (uint32_t)g->nr_edges;
	g->nr_nodes++;
	return 0;
}

int hs_heapgraph_check(const struct hs_heapgraph *g)
{
	size_t e;

	if (g->root != NONE && g->root >= g->nr_nodes)
		return -EINVAL;
	for (e = 0; e < g->nr_edges; e++)
		if (g->children[e] >= g->nr_nodes)
			return -EINVAL;
	return 0;
}

size_t hs_heapgraph_memory(const struct hs_heapgraph *g)
{
	size_t n = g->alloc_nodes * (sizeof(uint64_t) + 3 * sizeof(uint32_t)) +
		   g->alloc_edges * sizeof(uint32_t) + g->alloc_types * sizeof(*g->types);
	uint32_t i;

	for (i = 0; i < g->nr_types; i++)
		n += strlen(g->types[i].name) + 1 +
		     (g->types[i].module ? strlen(g->types[i].module) + 1 : 0);
	return n;
}

double hs_heapgraph_multiplier(const struct hs_heapgraph *g, uint32_t node)
{
	HS_BUG_ON(node >= g->nr_nodes);
	if (g->count_multiplier)
		return g->count_multiplier[g->type[node]];
	return g->avg_count_multiplier > 0 ? g->avg_count_multiplier : 1;
}

/* ---- PerfView's spanning tree ---- */

/* PerfView's default priorities, as case-insensitive substrings of a type name. */
static const struct {
	const char *prefix, *suffix; /* "[" ... "local vars]": "[*local vars]" */
	float priority;
} default_priorities[] = {
    {"[", "local vars]", -1000},
    {"Runtime.CompilerServices.ConditionalWeakTable", NULL, -10000},
    {"[COM/WinRT Objects]", NULL, -1000000},
    {"[", "handles]", -2000000},
    {"[other roots]", NULL, -2000000},
};

static int match_priority(const char *name, const char *prefix, const char *suffix)
{
	const char *p;
	size_t np = strlen(prefix), ns = suffix ? strlen(suffix) : 0;

	for (p = name; *p; p++) {
		const char *q;

		if (strncasecmp(p, prefix, np))
			continue;
		if (!suffix)
			return 1;
		for (q = p + np; *q; q++)
			if (!strncasecmp(q, suffix, ns))
				return 1;
	}
	return 0;
}

static float type_priority(const struct hs_heapgraph_type *t)
{
	size_t i;

	for (i = 0; i < sizeof(default_priorities) / sizeof(default_priorities[0]); i++)
		if (match_priority(t->name, default_priorities[i].prefix,
				   default_priorities[i].suffix))
			return default_priorities[i].priority;
	return 0;
}

/*
 * The work queue: highest priority first, first queued first among
 * equals. Priorities take few distinct values (a type's, plus a tenth of
 * the parent's, which fades to nothing within a few dozen levels), so the
 * queue is a FIFO per distinct priority, chained through @next (a node is
 * queued once), the FIFOs kept sorted by priority, the highest last.
 */
struct fifo {
	float priority;
	uint32_t head, tail;
};

struct work_queue {
	struct fifo *fifos;
	size_t nr, alloc;
	uint32_t *next; /* node -> the node queued after it */
};

static int queue_push(struct work_queue *q, float priority, uint32_t node)
{
	size_t lo = 0, hi = q->nr;
	struct fifo *f;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (q->fifos[mid].priority < priority)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == q->nr || q->fifos[lo].priority != priority) {
		if (HS_GROW(q->fifos, q->nr + 1, q->alloc))
			return -ENOMEM;
		memmove(q->fifos + lo + 1, q->fifos + lo,
			(q->nr - lo) * sizeof(*q->fifos));
		q->fifos[lo] = (struct fifo){priority, NONE, NONE};
		q->nr++;
	}
	f = &q->fifos[lo];
	q->next[node] = NONE;
	if (f->tail == NONE)
		f->head = node;
	else
		q->next[f->tail] = node;
	f->tail = node;
	return 0;
}

/* The next node, or NONE when the queue is empty. */
static uint32_t queue_pop(struct work_queue *q)
{
	while (q->nr) {
		struct fifo *f = &q->fifos[q->nr - 1];
		uint32_t node = f->head;

		if (node == NONE) {
			q->nr--;
			continue;
		}
		f->head = q->next[node];
		if (f->head == NONE)
			f->tail = NONE;
		return node;
	}
	return NONE;
}

uint32_t hs_heapgraph_spanning_tree(const struct hs_heapgraph *g, uint32_t *parent,
				    uint32_t *order, int *err)
{
	struct work_queue q = {NULL, 0, 0, NULL};
	float *type_prio = NULL, *node_prio = NULL;
	uint32_t i, nr = 0, next_orphan = 0, node;

	*err = 0;
	for (i = 0; i < g->nr_nodes; i++)
		parent[i] = NONE;
	if (g->root == NONE || g->root >= g->nr_nodes)
		return 0;
	q.next = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*q.next));
	type_prio = hs_malloc(((size_t)g->nr_types + 1) * sizeof(*type_prio));
	node_prio = hs_calloc((size_t)g->nr_nodes + 1, sizeof(*node_prio));
	if (!q.next || !type_prio || !node_prio) {
		*err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nr_types; i++)
		type_prio[i] = type_priority(&g->types[i]);
	/* the root is its own parent while walking, so that no edge re-queues it */
	parent[g->root] = g->root;
	if ((*err = queue_push(&q, 0, g->root)))
		goto out;
	for (;;) {
		while ((node = queue_pop(&q)) != NONE) {
			uint32_t e;

			order[nr++] = node;
			for (e = g->first_child[node]; e < g->first_child[node + 1];
			     e++) {
				uint32_t c = g->children[e];

				if (parent[c] != NONE)
					continue;
				parent[c] = node;
				node_prio[c] =
				    type_prio[g->type[c]] + node_prio[node] / 10;
				if ((*err = queue_push(&q, node_prio[c], c)))
					goto out;
			}
		}
		/* the next node no root reaches starts a tree of orphans */
		while (next_orphan < g->nr_nodes && parent[next_orphan] != NONE)
			next_orphan++;
		if (next_orphan == g->nr_nodes)
			break;
		parent[next_orphan] = HS_HEAPGRAPH_ORPHAN;
		node_prio[next_orphan] = type_prio[g->type[next_orphan]];
		if ((*err = queue_push(&q, node_prio[next_orphan], next_orphan)))
			goto out;
	}
	parent[g->root] = NONE;
out:
	hs_free(q.fifos);
	hs_free(q.next);
	hs_free(type_prio);
	hs_free(node_prio);
	return *err ? 0 : nr;
}

/* ---- dominators ---- */

/*
 * Semi-NCA (Georgiadis): Lengauer and Tarjan's semidominators, computed
 * with path compression, then each immediate dominator as the nearest
 * common ancestor of its DFS parent and its semidominator, found by
 * walking the dominators already known (vertices in preorder). It needs
 * no buckets, and every step is iterative. Vertices are numbered in
 * depth-first preorder from the root; arrays by number end in _n.
 *
 * Memory, beyond the caller's @idom and @order (n each): the parents,
 * the ancestors of the compression forest, the semidominators and the
 * predecessors by number (CSR: n + 1 offsets, one entry an edge): 4n + m
 * words. Whether a vertex is linked into the forest is told by its
 * number: the loop links the vertices in decreasing order, so those at
 * least @lowest are. The label array (the least semidominator on a
 * vertex's forest path) lives in @idom, free once the predecessors are
 * numbered; the dominators by number live in the ancestors', free once
 * the semidominators are known.
 */
struct snca {
	uint32_t *ancestor_n, *label_n, lowest;
	uint32_t *path; /* the compression's stack, grown on demand */
	size_t alloc_path;
};

/* The least semidominator on @v's forest path, compressing it; -ENOMEM as NONE. */
static uint32_t snca_eval(struct snca *t, uint32_t v)
{
	uint32_t x = v;
	size_t top = 0;

	if (v < t->lowest)
		return v; /* not linked: its own number */
	while (t->ancestor_n[x] >= t->lowest) {
		if (HS_GROW(t->path, top + 1, t->alloc_path))
			return NONE;
		t->path[top++] = x;
		x = t->ancestor_n[x];
	}
	while (top) {
		uint32_t y = t->path[--top], a = t->ancestor_n[y];

		if (t->label_n[a] < t->label_n[y])
			t->label_n[y] = t->label_n[a];
		t->ancestor_n[y] = t->ancestor_n[a];
	}
	return t->label_n[v];
}

/*
 * The dominators into @idom, and into @order the reachable nodes in
 * depth-first preorder from the root (a node's dominator comes before
 * it); their number in *@nr. Returns 0 or -ENOMEM.
 */
static int dominators(const struct hs_heapgraph *g, uint32_t *idom, uint32_t *order,
		      uint32_t *nr_out)
{
	uint32_t *vertex = order, *num = idom, *parent_n = NULL, *semi_n = NULL;
	uint32_t *pred_first = NULL, *preds = NULL, *dom_n;
	struct snca t = {NULL, NULL, 0, NULL, 0};
	size_t n1 = (size_t)g->nr_nodes + 1;
	uint32_t i, nr = 0, top = 0, w;
	size_t e;
	int err = 0;

	*nr_out = 0;
	for (i = 0; i < g->nr_nodes; i++)
		idom[i] = NONE;
	if (g->root == NONE || g->root >= g->nr_nodes)
		return 0;
	parent_n = hs_malloc(n1 * sizeof(*parent_n));
	semi_n = hs_malloc(n1 * sizeof(*semi_n));
	t.ancestor_n = hs_malloc(n1 * sizeof(*t.ancestor_n));
	if (!parent_n || !semi_n || !t.ancestor_n) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * Depth-first preorder from the root: the stack (of numbers) lives
	 * in the ancestors' array, each vertex's next edge in semi_n.
	 */
	num[g->root] = 0;
	vertex[0] = g->root;
	parent_n[0] = NONE;
	semi_n[0] = g->first_child[g->root];
	t.ancestor_n[top++] = 0;
	nr = 1;
	while (top) {
		uint32_t v = t.ancestor_n[top - 1], node = vertex[v], c;

		if (semi_n[v] == g->first_child[node + 1]) {
			top--;
			continue;
		}
		c = g->children[semi_n[v]++];
		if (num[c] != NONE)
			continue;
		num[c] = nr;
		vertex[nr] = c;
		parent_n[nr] = v;
		semi_n[nr] = g->first_child[c];
		t.ancestor_n[top++] = nr++;
	}
	/* the predecessors of each vertex, by number (CSR) */
	pred_first = hs_calloc((size_t)nr + 2, sizeof(*pred_first));
	if (!pred_first) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr; i++)
		for (e = g->first_child[vertex[i]]; e < g->first_child[vertex[i] + 1];
		     e++)
			pred_first[num[g->children[e]] + 2]++;
	for (i = 0; i < nr; i++)
		pred_first[i + 2] += pred_first[i + 1];
	preds = hs_malloc(((size_t)pred_first[nr + 1] + 1) * sizeof(*preds));
	if (!preds) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr; i++)
		for (e = g->first_child[vertex[i]]; e < g->first_child[vertex[i] + 1];
		     e++)
			preds[pred_first[num[g->children[e]] + 1]++] = i;
	/* now pred_first[k] .. pred_first[k + 1] are k's predecessors; num is free */
	t.label_n = idom;
	for (i = 0; i < nr; i++) {
		semi_n[i] = i;
		t.label_n[i] = i;
		t.ancestor_n[i] = parent_n[i];
	}
	t.ancestor_n[0] = 0;
	t.lowest = nr; /* nothing linked yet */
	for (w = nr; w-- > 1;) {
		uint32_t k;

		for (k = pred_first[w]; k < pred_first[w + 1]; k++) {
			uint32_t s = snca_eval(&t, preds[k]);

			if (s == NONE) {
				err = -ENOMEM;
				goto out;
			}
			if (s < semi_n[w])
				semi_n[w] = s;
		}
		t.label_n[w] = semi_n[w];
		t.lowest = w; /* link w below its parent */
	}
	/* each dominator: the nearest common ancestor of parent and semidominator */
	dom_n = t.ancestor_n;
	dom_n[0] = 0;
	for (w = 1; w < nr; w++) {
		uint32_t x = parent_n[w];

		while (x > semi_n[w])
			x = dom_n[x];
		dom_n[w] = x;
	}
	for (i = 0; i < g->nr_nodes; i++)
		idom[i] = NONE;
	for (i = 0; i < nr; i++)
		idom[vertex[i]] = vertex[dom_n[i]];
	*nr_out = nr;
out:
	if (err)
		for (i = 0; i < g->nr_nodes; i++)
			idom[i] = NONE;
	hs_free(parent_n);
	hs_free(semi_n);
	hs_free(t.ancestor_n);
	hs_free(t.path);
	hs_free(pred_first);
	hs_free(preds);
	return err;
}

int hs_heapgraph_dominators(const struct hs_heapgraph *g, uint32_t *idom)
{
	uint32_t *order = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*order)), nr;
	int err;

	if (!order) {
		uint32_t i;

		for (i = 0; i < g->nr_nodes; i++)
			idom[i] = NONE;
		return -ENOMEM;
	}
	err = dominators(g, idom, order, &nr);
	hs_free(order);
	return err;
}

int hs_heapgraph_retained(const struct hs_heapgraph *g, const uint32_t *idom,
			  uint64_t *retained)
{
	uint32_t *nr_dominated, *queue, i, head = 0, tail = 0;

	HS_BUG_ON(g->nr_nodes && (!idom || !retained));
	for (i = 0; i < g->nr_nodes; i++)
		retained[i] = idom[i] != NONE ? g->size[i] : 0;
	/*
	 * Leaves of the dominator tree first: a node is added to its
	 * dominator's sum once all it dominates has been added to its own.
	 */
	nr_dominated = hs_calloc((size_t)g->nr_nodes + 1, sizeof(*nr_dominated));
	queue = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*queue));
	if (!nr_dominated || !queue) {
		hs_free(nr_dominated);
		hs_free(queue);
		return -ENOMEM;
	}
	for (i = 0; i < g->nr_nodes; i++)
		if (idom[i] != NONE && idom[i] != i)
			nr_dominated[idom[i]]++;
	for (i = 0; i < g->nr_nodes; i++)
		if (idom[i] != NONE && !nr_dominated[i])
			queue[tail++] = i;
	while (head < tail) {
		uint32_t n = queue[head++], d = idom[n];

		if (d == n)
			continue; /* the root */
		retained[d] += retained[n];
		if (!--nr_dominated[d])
			queue[tail++] = d;
	}
	hs_free(nr_dominated);
	hs_free(queue);
	return 0;
}

/* ---- the type table ---- */

static int total_cmp(const void *pa, const void *pb)
{
	const struct hs_heapgraph_type_total *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return a->type < b->type ? -1 : a->type > b->type;
}

size_t hs_heapgraph_type_totals(const struct hs_heapgraph *g,
				struct hs_heapgraph_type_total **out, int *err)
{
	struct hs_heapgraph_type_total *rows;
	uint32_t i;
	size_t n = 0;

	*out = NULL;
	*err = 0;
	rows = hs_calloc((size_t)g->nr_types + 1, sizeof(*rows));
	if (!rows) {
		*err = -ENOMEM;
		return 0;
	}
	for (i = 0; i < g->nr_types; i++)
		rows[i].type = i;
	for (i = 0; i < g->nr_nodes; i++) {
		double mult = hs_heapgraph_multiplier(g, i);

		rows[g->type[i]].count += mult;
		rows[g->type[i]].bytes += (double)g->size[i] * mult;
	}
	for (i = 0; i < g->nr_types; i++)
		if (rows[i].count > 0)
			rows[n++] = rows[i];
	qsort(rows, n, sizeof(*rows), total_cmp);
	*out = rows;
	return n;
}

/* ---- the views ---- */

/* The frame of each type, interned once: "MODULE!TYPE" or "TYPE". */
static int type_frames(const struct hs_heapgraph *g, struct hs_stack_source *out,
		       uint32_t *frame)
{
	char *buf = NULL;
	size_t cap = 0;
	uint32_t t;
	int err = 0;

	for (t = 0; t < g->nr_types && !err; t++) {
		const struct hs_heapgraph_type *ty = &g->types[t];
		size_t len = strlen(ty->name) + (ty->module ? strlen(ty->module) + 1 : 0);

		if (HS_GROW(buf, len + 1, cap)) {
			err = -ENOMEM;
			break;
		}
		if (ty->module && *ty->module)
			len = (size_t)snprintf(buf, cap, "%s!%s", ty->module, ty->name);
		else
			len = (size_t)snprintf(buf, cap, "%s", ty->name);
		err = hs_source_intern_frame(out, buf, len, &frame[t]);
	}
	hs_free(buf);
	return err;
}

/*
 * The objects of @order (root first, each after its @up) as samples whose
 * stack is their @up chain: the stacks are interned in @order, so that
 * each caller's is known first. Objects of one stack make one sample (its
 * bytes and its object count): the views need no more, and a heap has
 * far fewer distinct paths of types than objects. An object's bytes are
 * @weight[object] when @weight is not NULL, else its size.
 */
static int tree_source(const struct hs_heapgraph *g, const uint32_t *order, uint32_t nr,
		       const uint32_t *up, const double *weight,
		       struct hs_stack_source *out)
{
	uint32_t *frame, *stack, i, orphan_frame, orphans = HS_NO_STACK;
	double *bytes = NULL, *objects = NULL;
	size_t k, nr_stacks, nr_samples = 0;
	int err;

	frame = hs_malloc(((size_t)g->nr_types + 1) * sizeof(*frame));
	stack = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*stack));
	if (!frame || !stack) {
		err = -ENOMEM;
		goto out;
	}
	err = type_frames(g, out, frame);
	for (i = 0; i < nr && !err; i++) {
		uint32_t n = order[i], caller = HS_NO_STACK;

		if (up[n] == HS_HEAPGRAPH_ORPHAN || (up[n] == NONE && n != g->root)) {
			if (orphans == HS_NO_STACK) {
				err = hs_source_intern_frame(
				    out, HS_HEAPGRAPH_ORPHANS_FRAME,
				    strlen(HS_HEAPGRAPH_ORPHANS_FRAME), &orphan_frame);
				if (!err)
					err = hs_source_intern_stack(
					    out, orphan_frame, HS_NO_STACK, &orphans);
				if (err)
					break;
			}
			caller = orphans;
		} else if (up[n] != NONE && up[n] != n) {
			caller = stack[up[n]];
		}
		err = hs_source_intern_stack(out, frame[g->type[n]], caller, &stack[n]);
	}
	if (err)
		goto out;
	/* the bytes and objects of each stack, then one sample per stack that has some */
	hs_free(frame);
	frame = NULL;
	/* (@out may hold stacks already, which these may share) */
	nr_stacks = out->nr_stacks;
	bytes = hs_calloc(nr_stacks + 1, sizeof(*bytes));
	objects = hs_calloc(nr_stacks + 1, sizeof(*objects));
	if (!bytes || !objects) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		uint32_t n = order[i];
		double mult;

		if (!g->size[n])
			continue;
		mult = hs_heapgraph_multiplier(g, n);
		k = stack[n];
		nr_samples += objects[k] == 0;
		bytes[k] += weight ? weight[n] : (double)g->size[n] * mult;
		objects[k] += mult;
	}
	hs_free(stack);
	stack = NULL;
	err = hs_source_reserve_samples(out, nr_samples);
	for (k = 0; k < nr_stacks && !err; k++)
		if (objects[k] > 0)
			err = hs_source_add_sample(out, 0, bytes[k], objects[k],
						   (uint32_t)k);
	if (!err) {
		hs_free(out->metric_unit);
		out->metric_unit = hs_strdup("bytes");
		if (!out->metric_unit)
			err = -ENOMEM;
		out->kind = HS_METRIC_PLAIN;
		out->untimed = 1;
	}
out:
	hs_free(frame);
	hs_free(stack);
	hs_free(bytes);
	hs_free(objects);
	return err;
}

int hs_heapgraph_heap_source(const struct hs_heapgraph *g, struct hs_stack_source *out)
{
	uint32_t *parent, *order, nr;
	int err;

	parent = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*parent));
	order = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*order));
	if (!parent || !order) {
		err = -ENOMEM;
		goto out;
	}
	nr = hs_heapgraph_spanning_tree(g, parent, order, &err);
	if (!err)
		err = tree_source(g, order, nr, parent, NULL, out);
out:
	hs_free(parent);
	hs_free(order);
	return err;
}

int hs_heapgraph_retained_source(const struct hs_heapgraph *g,
				 struct hs_stack_source *out)
{
	uint32_t *idom, *order, nr, i;
	int err;

	idom = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*idom));
	order = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*order));
	if (!idom || !order) {
		err = -ENOMEM;
		goto out;
	}
	/* depth-first preorder visits each dominator before what it dominates */
	err = dominators(g, idom, order, &nr);
	if (err)
		goto out;
	/* then the objects no root reaches, each on its own */
	for (i = 0; i < g->nr_nodes && nr; i++)
		if (idom[i] == NONE)
			order[nr++] = i;
	err = tree_source(g, order, nr, idom, NULL, out);
out:
	hs_free(idom);
	hs_free(order);
	return err;
}

int hs_heapgraph_heap_retained_source(const struct hs_heapgraph *g,
				      struct hs_stack_source *out)
{
	uint32_t *idom, *order, nr, i;
	double *retained;
	int err;

	idom = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*idom));
	order = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*order));
	retained = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*retained));
	if (!idom || !order || !retained) {
		err = -ENOMEM;
		goto out;
	}
	err = dominators(g, idom, order, &nr);
	if (err)
		goto out;
	/*
	 * Each object's retained bytes, scaled as the views scale sizes: its
	 * own, plus what it dominates, summed from the dominator tree's
	 * leaves (the preorder backwards). An object no root reaches
	 * retains its own bytes only, as in the retained view.
	 */
	for (i = 0; i < g->nr_nodes; i++)
		retained[i] = (double)g->size[i] * hs_heapgraph_multiplier(g, i);
	for (i = nr; i-- > 1;)
		retained[idom[order[i]]] += retained[order[i]];
	/* idom's room holds the spanning tree's parents now */
	nr = hs_heapgraph_spanning_tree(g, idom, order, &err);
	if (!err)
		err = tree_source(g, order, nr, idom, retained, out);
out:
	hs_free(idom);
	hs_free(order);
	hs_free(retained);
	return err;
}
