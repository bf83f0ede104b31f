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
		size_t want = cap < 16 ? 16 : cap + cap / 2;
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
 * Lengauer and Tarjan's algorithm (the simple version: path compression,
 * O(m log n)), every step iterative. Vertices are numbered in depth-first
 * preorder from the root; arrays indexed by that number end in _n.
 */
struct lt {
	uint32_t *semi, *label, *ancestor, *path;
};

/* The vertex of least semidominator on @v's path in the forest, compressing it. */
static uint32_t lt_eval(struct lt *t, uint32_t v)
{
	uint32_t x = v, top = 0;

	if (t->ancestor[v] == NONE)
		return v;
	while (t->ancestor[t->ancestor[x]] != NONE) {
		t->path[top++] = x;
		x = t->ancestor[x];
	}
	while (top) {
		uint32_t y = t->path[--top], a = t->ancestor[y];

		if (t->semi[t->label[a]] < t->semi[t->label[y]])
			t->label[y] = t->label[a];
		t->ancestor[y] = t->ancestor[a];
	}
	return t->label[v];
}

int hs_heapgraph_dominators(const struct hs_heapgraph *g, uint32_t *idom)
{
	uint32_t *num = NULL, *vertex = NULL, *dfs_parent = NULL, *next_edge = NULL;
	uint32_t *stack = NULL, *pred_first = NULL, *preds = NULL, *dom = NULL;
	uint32_t *bucket_head = NULL, *bucket_next = NULL;
	struct lt t = {NULL, NULL, NULL, NULL};
	size_t n1 = (size_t)g->nr_nodes + 1;
	uint32_t i, nr = 0, top = 0, w;
	size_t e;
	int err = 0;

	for (i = 0; i < g->nr_nodes; i++)
		idom[i] = NONE;
	if (g->root == NONE || g->root >= g->nr_nodes)
		return 0;
	num = hs_malloc(n1 * sizeof(*num));
	vertex = hs_malloc(n1 * sizeof(*vertex));
	dfs_parent = hs_malloc(n1 * sizeof(*dfs_parent));
	next_edge = hs_malloc(n1 * sizeof(*next_edge));
	stack = hs_malloc(n1 * sizeof(*stack));
	if (!num || !vertex || !dfs_parent || !next_edge || !stack) {
		err = -ENOMEM;
		goto out;
	}
	/* depth-first preorder from the root, with an explicit stack */
	for (i = 0; i < g->nr_nodes; i++)
		num[i] = NONE;
	num[g->root] = nr;
	vertex[nr] = g->root;
	dfs_parent[nr++] = NONE;
	next_edge[g->root] = g->first_child[g->root];
	stack[top++] = g->root;
	while (top) {
		uint32_t node = stack[top - 1], c;

		if (next_edge[node] == g->first_child[node + 1]) {
			top--;
			continue;
		}
		c = g->children[next_edge[node]++];
		if (num[c] != NONE)
			continue;
		num[c] = nr;
		vertex[nr] = c;
		dfs_parent[nr++] = num[node];
		next_edge[c] = g->first_child[c];
		stack[top++] = c;
	}
	hs_free(next_edge);
	next_edge = NULL;
	hs_free(stack);
	stack = NULL;

	/* the predecessors of each reachable vertex, by number (CSR) */
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
	dom = hs_malloc(((size_t)nr + 1) * sizeof(*dom));
	bucket_head = hs_malloc(((size_t)nr + 1) * sizeof(*bucket_head));
	bucket_next = hs_malloc(((size_t)nr + 1) * sizeof(*bucket_next));
	t.semi = hs_malloc(((size_t)nr + 1) * sizeof(*t.semi));
	t.label = hs_malloc(((size_t)nr + 1) * sizeof(*t.label));
	t.ancestor = hs_malloc(((size_t)nr + 1) * sizeof(*t.ancestor));
	t.path = hs_malloc(((size_t)nr + 1) * sizeof(*t.path));
	if (!preds || !dom || !bucket_head || !bucket_next || !t.semi || !t.label ||
	    !t.ancestor || !t.path) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr; i++)
		for (e = g->first_child[vertex[i]]; e < g->first_child[vertex[i] + 1];
		     e++)
			preds[pred_first[num[g->children[e]] + 1]++] = i;
	/* now pred_first[k] .. pred_first[k + 1] are k's predecessors */
	for (i = 0; i < nr; i++) {
		t.semi[i] = i;
		t.label[i] = i;
		t.ancestor[i] = NONE;
		bucket_head[i] = NONE;
		dom[i] = NONE;
	}
	for (w = nr; w-- > 1;) {
		uint32_t p = dfs_parent[w], v, k;

		for (k = pred_first[w]; k < pred_first[w + 1]; k++) {
			uint32_t u = lt_eval(&t, preds[k]);

			if (t.semi[u] < t.semi[w])
				t.semi[w] = t.semi[u];
		}
		bucket_next[w] = bucket_head[t.semi[w]];
		bucket_head[t.semi[w]] = w;
		t.ancestor[w] = p; /* link */
		for (v = bucket_head[p]; v != NONE; v = bucket_next[v]) {
			uint32_t u = lt_eval(&t, v);

			dom[v] = t.semi[u] < t.semi[v] ? u : p;
		}
		bucket_head[p] = NONE;
	}
	dom[0] = 0;
	for (w = 1; w < nr; w++)
		if (dom[w] != t.semi[w])
			dom[w] = dom[dom[w]];
	for (i = 0; i < nr; i++)
		idom[vertex[i]] = vertex[dom[i]];
out:
	hs_free(num);
	hs_free(vertex);
	hs_free(dfs_parent);
	hs_free(next_edge);
	hs_free(stack);
	hs_free(pred_first);
	hs_free(preds);
	hs_free(dom);
	hs_free(bucket_head);
	hs_free(bucket_next);
	hs_free(t.semi);
	hs_free(t.label);
	hs_free(t.ancestor);
	hs_free(t.path);
	return err;
}

int hs_heapgraph_retained(const struct hs_heapgraph *g, const uint32_t *idom,
			  uint64_t *retained)
{
	uint32_t *order, *parent, i, nr;
	int err;

	HS_BUG_ON(g->nr_nodes && (!idom || !retained));
	for (i = 0; i < g->nr_nodes; i++)
		retained[i] = idom[i] != NONE ? g->size[i] : 0;
	/*
	 * The spanning tree's visit order is breadth first from the root: a
	 * node's dominator is on every path to it, so it is visited before
	 * it. Summing in reverse visit order adds each node before its
	 * dominator is added to its own.
	 */
	order = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*order));
	parent = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*parent));
	if (!order || !parent) {
		hs_free(order);
		hs_free(parent);
		return -ENOMEM;
	}
	nr = hs_heapgraph_spanning_tree(g, parent, order, &err);
	for (i = nr; i-- > 1;) {
		uint32_t n = order[i];

		if (idom[n] != NONE && idom[n] != n)
			retained[idom[n]] += retained[n];
	}
	hs_free(order);
	hs_free(parent);
	return err;
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
 * One sample per object of @order (root first, each after its @up), whose
 * stack is its @up chain: the stacks are interned in @order, so that each
 * caller's is known first.
 */
static int tree_source(const struct hs_heapgraph *g, const uint32_t *order, uint32_t nr,
		       const uint32_t *up, struct hs_stack_source *out)
{
	uint32_t *frame, *stack, i, orphan_frame, orphans = HS_NO_STACK;
	int err;

	frame = hs_malloc(((size_t)g->nr_types + 1) * sizeof(*frame));
	stack = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*stack));
	if (!frame || !stack) {
		err = -ENOMEM;
		goto out;
	}
	err = type_frames(g, out, frame);
	if (!err)
		err = hs_source_reserve_samples(out, nr);
	for (i = 0; i < nr && !err; i++) {
		uint32_t n = order[i], caller = HS_NO_STACK;
		double mult;

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
		if (err || !g->size[n])
			continue;
		mult = hs_heapgraph_multiplier(g, n);
		err = hs_source_add_sample(out, 0, (double)g->size[n] * mult, mult,
					   stack[n]);
	}
	if (!err) {
		hs_free(out->metric_unit);
		out->metric_unit = hs_strdup("bytes");
		if (!out->metric_unit)
			err = -ENOMEM;
		out->kind = HS_METRIC_PLAIN;
	}
out:
	hs_free(frame);
	hs_free(stack);
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
		err = tree_source(g, order, nr, parent, out);
out:
	hs_free(parent);
	hs_free(order);
	return err;
}

int hs_heapgraph_retained_source(const struct hs_heapgraph *g,
				 struct hs_stack_source *out)
{
	uint32_t *idom, *parent = NULL, *order = NULL, nr;
	int err;

	idom = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*idom));
	parent = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*parent));
	order = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*order));
	if (!idom || !parent || !order) {
		err = -ENOMEM;
		goto out;
	}
	err = hs_heapgraph_dominators(g, idom);
	if (err)
		goto out;
	/* breadth-first order visits each dominator before what it dominates */
	nr = hs_heapgraph_spanning_tree(g, parent, order, &err);
	if (!err)
		err = tree_source(g, order, nr, idom, out);
out:
	hs_free(idom);
	hs_free(parent);
	hs_free(order);
	return err;
}
