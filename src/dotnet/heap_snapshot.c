/*
 * heap_snapshot - the heap-dump events into a heap graph (heap_snapshot.h).
 * Values are kept as they come; the graph is made at the end, when every
 * address can be looked up (an edge may point at an object reported
 * later) and every type is known.
 */
#include "dotnet/heap_snapshot.h"
#include "dotnet/clr_events.h"
#include "common/alloc.h"
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { WAITING, IN_GC, DONE };

enum category {
	CAT_STATIC,
	CAT_LOCAL,
	CAT_STRONG,
	CAT_PINNING,
	CAT_FINALIZER,
	CAT_OTHER,
	NR_CATS
};

static const char *const category_names[NR_CATS] = {
    "[static vars]",	 "[local vars]",      "[strong Handles]",
    "[pinning Handles]", "[finalizer queue]", "[other roots]",
};

#define ROOT_NAME "[.NET Roots]"
#define GC_TYPE_BACKGROUND 1
#define NAME_DEPTH 8 /* type arguments named this deep */
#define ELEMENT_SZARRAY 0x1d
#define ELEMENT_ARRAY 0x14

static const char *module_path(const struct hs_heap_snapshot *s, uint64_t id);

void hs_heap_snapshot_init(struct hs_heap_snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

/* Forget what a GC kept (it reported no heap, or the dump starts over). */
static void drop_values(struct hs_heap_snapshot *s)
{
	size_t i;

	for (i = 0; i < s->nr_statics; i++)
		hs_free(s->statics[i].field);
	s->nr_nodes = s->nr_edges = s->nr_roots = s->nr_statics = s->nr_cwts = 0;
	s->nr_lost_edges = 0;
}

void hs_heap_snapshot_release(struct hs_heap_snapshot *s)
{
	size_t i;

	drop_values(s);
	for (i = 0; i < s->nr_types; i++) {
		hs_free(s->types[i].name);
		hs_free(s->types[i].params);
	}
	for (i = 0; i < s->nr_modules; i++)
		hs_free(s->modules[i].path);
	hs_free(s->modules);
	hs_free(s->nodes);
	hs_free(s->edges);
	hs_free(s->roots);
	hs_free(s->statics);
	hs_free(s->cwts);
	hs_free(s->types);
	memset(s, 0, sizeof(*s));
}

int hs_heap_snapshot_done(const struct hs_heap_snapshot *s)
{
	return s->state == DONE;
}

int hs_heap_snapshot_started(const struct hs_heap_snapshot *s)
{
	return s->state != WAITING && s->nr_nodes;
}

static uint32_t root_category(const struct hs_clr_heap_root *r)
{
	switch (r->kind) {
	case HS_CLR_ROOT_STACK:
		return CAT_LOCAL;
	case HS_CLR_ROOT_FINALIZER:
	case HS_CLR_ROOT_NEW_FQ:
		return CAT_FINALIZER;
	case HS_CLR_ROOT_HANDLE:
		if (r->flags & HS_CLR_ROOT_WEAK)
			return NR_CATS; /* roots nothing */
		return r->flags & HS_CLR_ROOT_PINNING ? CAT_PINNING : CAT_STRONG;
	default:
		return CAT_OTHER;
	}
}

static int take_type(struct hs_heap_snapshot *s, struct hs_clr_bulk *b)
{
	struct hs_clr_heap_type t;
	struct hs_heap_snapshot_type *k;
	uint32_t i;
	int err = hs_clr_bulk_type(b, &t);

	if (err)
		return err;
	if (HS_GROW(s->types, s->nr_types + 1, s->alloc_types)) {
		hs_free(t.name);
		return -ENOMEM;
	}
	k = &s->types[s->nr_types];
	memset(k, 0, sizeof(*k));
	k->id = t.type_id;
	k->module = t.module_id;
	k->name = t.name;
	k->element_type = t.element_type;
	if (t.nr_params) {
		k->params = hs_malloc((size_t)t.nr_params * sizeof(*k->params));
		if (!k->params) {
			hs_free(t.name);
			return -ENOMEM;
		}
		for (i = 0; i < t.nr_params; i++)
			k->params[i] = hs_clr_heap_type_param(&t, i);
		k->nr_params = t.nr_params;
	}
	s->nr_types++;
	return 0;
}

static int take_batch(struct hs_heap_snapshot *s, struct hs_clr_bulk *b)
{
	uint32_t i;
	int err = 0;

	for (i = 0; i < b->count && !err; i++) {
		switch (b->event_id) {
		case HS_CLR_GC_BULK_TYPE:
			err = take_type(s, b);
			break;
		case HS_CLR_GC_BULK_NODE:
			if (HS_GROW(s->nodes, s->nr_nodes + 1, s->alloc_nodes))
				return -ENOMEM;
			err = hs_clr_bulk_node(b, &s->nodes[s->nr_nodes]);
			if (!err)
				s->nr_nodes++;
			break;
		case HS_CLR_GC_BULK_EDGE: {
			struct hs_clr_heap_edge e;

			err = hs_clr_bulk_edge(b, &e);
			if (err)
				break;
			if (HS_GROW(s->edges, s->nr_edges + 1, s->alloc_edges))
				return -ENOMEM;
			s->edges[s->nr_edges++] = e.target;
			break;
		}
		case HS_CLR_GC_BULK_ROOT_EDGE: {
			struct hs_clr_heap_root r;
			uint32_t cat;

			err = hs_clr_bulk_root(b, &r);
			if (err)
				break;
			cat = root_category(&r);
			if (cat == NR_CATS || !r.address)
				break;
			if (HS_GROW(s->roots, s->nr_roots + 1, s->alloc_roots))
				return -ENOMEM;
			s->roots[s->nr_roots++] = (struct hs_heap_snapshot_root){
			    .address = r.address, .category = cat};
			break;
		}
		case HS_CLR_GC_BULK_ROOT_STATIC_VAR:
			if (HS_GROW(s->statics, s->nr_statics + 1, s->alloc_statics))
				return -ENOMEM;
			err = hs_clr_bulk_static(b, &s->statics[s->nr_statics]);
			if (!err)
				s->nr_statics++;
			break;
		case HS_CLR_GC_BULK_ROOT_CWT_EDGE:
			if (HS_GROW(s->cwts, s->nr_cwts + 1, s->alloc_cwts))
				return -ENOMEM;
			err = hs_clr_bulk_cwt(b, &s->cwts[s->nr_cwts]);
			if (!err)
				s->nr_cwts++;
			break;
		}
	}
	return err;
}

/* Remember module @m's IL path (once per module id). */
static int take_module(struct hs_heap_snapshot *s, const struct hs_clr_module *m)
{
	char *path;

	if (!m->il_path || !m->il_path[0] || module_path(s, m->module_id))
		return 0;
	path = hs_strdup(m->il_path);
	if (!path || HS_GROW(s->modules, s->nr_modules + 1, s->alloc_modules)) {
		hs_free(path);
		return -ENOMEM;
	}
	s->modules[s->nr_modules].id = m->module_id;
	s->modules[s->nr_modules++].path = path;
	return 0;
}

int hs_heap_snapshot_event(struct hs_heap_snapshot *s, const struct hs_nettrace_event *ev,
			   unsigned pointer_size)
{
	struct hs_clr_gc_start start;
	struct hs_clr_gc_end end;
	struct hs_clr_bulk b;
	struct hs_clr_module module;
	int err;

	err = hs_clr_module(ev, &module);
	if (err != -ENOENT) {
		if (!err)
			err = take_module(s, &module);
		hs_clr_module_release(&module);
		return err == -EINVAL ? 0 : err; /* a module we cannot read: no path */
	}
	if (s->state == DONE)
		return 0;
	if (!hs_clr_gc_start(ev, &start)) {
		if (s->state == WAITING && start.depth == 2 &&
		    start.type != GC_TYPE_BACKGROUND) {
			s->state = IN_GC;
			s->gc_count = start.count;
		}
		return 0;
	}
	if (!hs_clr_gc_end(ev, &end)) {
		if (s->state == IN_GC && end.count == s->gc_count) {
			if (s->nr_nodes) {
				s->state = DONE;
			} else {
				drop_values(s); /* a gen2 GC that reported no heap */
				s->state = WAITING;
			}
		}
		return 0;
	}
	err = hs_clr_bulk_begin(ev, pointer_size, &b);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	/* types may come before the GC that uses them; the rest only inside it */
	if (s->state != IN_GC && b.event_id != HS_CLR_GC_BULK_TYPE)
		return 0;
	return take_batch(s, &b);
}

/* ---- building the graph ---- */

static int cmp_type_id(const void *a, const void *b)
{
	uint64_t x = ((const struct hs_heap_snapshot_type *)a)->id;
	uint64_t y = ((const struct hs_heap_snapshot_type *)b)->id;

	return x < y ? -1 : x > y;
}

static const struct hs_heap_snapshot_type *find_type(const struct hs_heap_snapshot *s,
						     uint64_t id)
{
	struct hs_heap_snapshot_type key = {.id = id};

	if (!s->nr_types)
		return NULL;
	return bsearch(&key, s->types, s->nr_types, sizeof(*s->types), cmp_type_id);
}

struct text {
	char *s;
	size_t n, alloc;
	int oom;
};

static void text_put(struct text *t, const char *p, size_t n)
{
	if (t->oom || HS_GROW(t->s, t->n + n + 1, t->alloc)) {
		t->oom = 1;
		return;
	}
	memcpy(t->s + t->n, p, n);
	t->n += n;
	t->s[t->n] = '\0';
}

/*
 * PerfView's spelling of a runtime type name: the arity goes ("`1") and a
 * bracket group that is not an array's "[]" becomes angle brackets, so
 * "List`1[Node]" is "List<Node>", "Entry[System.Int32,CacheEntry][]" is
 * "Entry<System.Int32,CacheEntry>[]" (and "System.String[,]" is
 * "System.String<,>", as PerfView writes it too).
 */
static void perfview_name(const char *name, struct text *t)
{
	const char *p;

	for (p = name; *p; p++) {
		if (*p == '`' && p[1] >= '0' && p[1] <= '9') {
			while (p[1] >= '0' && p[1] <= '9')
				p++;
		} else if (*p == '[' && p[1] == ']') {
			text_put(t, "[]", 2);
			p++;
		} else if (*p == '[') {
			text_put(t, "<", 1);
		} else if (*p == ']') {
			text_put(t, ">", 1);
		} else {
			text_put(t, p, 1);
		}
	}
}

/* The name of type @id; an array without a name is its element's and "[]". */
static void type_name(const struct hs_heap_snapshot *s, uint64_t id, int depth,
		      struct text *t)
{
	const struct hs_heap_snapshot_type *k = find_type(s, id);

	if (!k || depth > NAME_DEPTH) {
		text_put(t, "?", 1);
		return;
	}
	if (!k->name[0] &&
	    (k->element_type == ELEMENT_SZARRAY || k->element_type == ELEMENT_ARRAY) &&
	    k->nr_params == 1) {
		type_name(s, k->params[0], depth + 1, t);
		text_put(t, "[]", 2);
		return;
	}
	perfview_name(k->name, t);
}

/* The IL path of module @id (from the loader's or the rundown's events), or NULL. */
static const char *module_path(const struct hs_heap_snapshot *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->nr_modules; i++)
		if (s->modules[i].id == id)
			return s->modules[i].path;
	return NULL;
}

struct addr_index {
	uint64_t address;
	uint32_t node;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct addr_index *x = a, *y = b;

	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* The graph node of the object at @address, or HS_HEAPGRAPH_NONE. */
static uint32_t lookup(const struct addr_index *idx, size_t n, uint64_t address)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx[mid].address < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && idx[lo].address == address ? idx[lo].node : HS_HEAPGRAPH_NONE;
}

struct builder {
	struct hs_heap_snapshot *s;
	struct hs_heapgraph *g;
	struct addr_index *idx;
	uint32_t *kids;
	size_t alloc_kids;
	uint32_t first_object;	    /* node of s->nodes[0] */
	uint32_t first_static;	    /* node of statics[0]'s pseudo-node */
	uint32_t cat_node[NR_CATS]; /* HS_HEAPGRAPH_NONE when empty */
};

static int add_kid(struct builder *b, size_t *n, uint32_t node)
{
	if (node == HS_HEAPGRAPH_NONE)
		return 0;
	if (HS_GROW(b->kids, *n + 1, b->alloc_kids))
		return -ENOMEM;
	b->kids[(*n)++] = node;
	return 0;
}

/* A pseudo-node of size 0 with a type of its own named @name. */
static int add_pseudo(struct builder *b, const char *name, size_t nr_kids)
{
	uint32_t type;
	int err = hs_heapgraph_add_type(b->g, name, NULL, 0, &type);

	if (!err)
		err = hs_heapgraph_add_node(b->g, type, 0, 0, b->kids, (uint32_t)nr_kids);
	return err;
}

/* Number the root categories in use; the statics and objects follow. */
static void number_roots(struct builder *b)
{
	const struct hs_heap_snapshot *s = b->s;
	uint32_t next = 1, c;
	size_t i;

	for (c = 0; c < NR_CATS; c++) {
		int used = c == CAT_STATIC ? s->nr_statics > 0 : 0;

		for (i = 0; i < s->nr_roots && !used; i++)
			used = s->roots[i].category == c;
		b->cat_node[c] = used ? next++ : HS_HEAPGRAPH_NONE;
	}
	b->first_static = next;
	b->first_object = next + (uint32_t)s->nr_statics;
}

static int add_roots(struct builder *b)
{
	struct hs_heap_snapshot *s = b->s;
	uint32_t c;
	size_t n = 0, i;
	int err;

	for (c = 0; c < NR_CATS; c++)
		if ((err = add_kid(b, &n, b->cat_node[c])))
			return err;
	if ((err = add_pseudo(b, ROOT_NAME, n)))
		return err;
	for (c = 0; c < NR_CATS; c++) {
		if (b->cat_node[c] == HS_HEAPGRAPH_NONE)
			continue;
		n = 0;
		if (c == CAT_STATIC)
			for (i = 0; i < s->nr_statics; i++)
				if ((err = add_kid(b, &n, b->first_static + (uint32_t)i)))
					return err;
		for (i = 0; i < s->nr_roots; i++)
			if (s->roots[i].category == c &&
			    (err = add_kid(
				 b, &n,
				 lookup(b->idx, s->nr_nodes, s->roots[i].address))))
				return err;
		if ((err = add_pseudo(b, category_names[c], n)))
			return err;
	}
	for (i = 0; i < s->nr_statics; i++) {
		struct text t = {0};

		n = 0;
		if ((err = add_kid(b, &n,
				   lookup(b->idx, s->nr_nodes, s->statics[i].object))))
			return err;
		text_put(&t, "[static var ", 12);
		type_name(s, s->statics[i].type_id, 0, &t);
		text_put(&t, ".", 1);
		text_put(&t, s->statics[i].field, strlen(s->statics[i].field));
		text_put(&t, "]", 1);
		err = t.oom ? -ENOMEM : add_pseudo(b, t.s, n);
		hs_free(t.s);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_cwt_key(const void *a, const void *b)
{
	uint64_t x = ((const struct hs_clr_heap_cwt *)a)->key;
	uint64_t y = ((const struct hs_clr_heap_cwt *)b)->key;

	return x < y ? -1 : x > y;
}

/*
 * PerfView's types of large objects: an object of more than 1,000 bytes
 * has its type's name with " (Bytes > 1K)" (10K, 100K, 1M) after it.
 */
#define NR_SIZE_CLASSES 5
static const char *const size_class_suffix[NR_SIZE_CLASSES] = {
    "", " (Bytes > 1K)", " (Bytes > 10K)", " (Bytes > 100K)", " (Bytes > 1M)",
};

static unsigned size_class(uint32_t size)
{
	return size > 1000000  ? 4
	       : size > 100000 ? 3
	       : size > 10000  ? 2
	       : size > 1000   ? 1
			       : 0;
}

/*
 * The graph type of an object of type @id and @size bytes into *@type,
 * made on first use: @map has NR_SIZE_CLASSES slots per s->types (sorted
 * by id), and as many more for the ids no GCBulkType named.
 */
static int object_type(struct builder *b, uint32_t *map, uint64_t id, uint32_t size,
		       uint32_t *type)
{
	const struct hs_heap_snapshot_type *k = find_type(b->s, id);
	unsigned cls = size_class(size);
	size_t slot =
	    (k ? (size_t)(k - b->s->types) : b->s->nr_types) * NR_SIZE_CLASSES + cls;
	struct text t = {0};
	int err;

	if (map[slot] != HS_HEAPGRAPH_NONE) {
		*type = map[slot];
		return 0;
	}
	type_name(b->s, id, 0, &t);
	text_put(&t, size_class_suffix[cls], strlen(size_class_suffix[cls]));
	if (t.oom) {
		hs_free(t.s);
		return -ENOMEM;
	}
	err = hs_heapgraph_add_type(b->g, t.s, k ? module_path(b->s, k->module) : NULL,
				    size, type);
	hs_free(t.s);
	if (!err)
		map[slot] = *type;
	return err;
}

/* The first of @cwts (sorted by key, @n of them) whose key is @key, or @n. */
static size_t first_cwt(const struct hs_clr_heap_cwt *cwts, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cwts[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int add_objects(struct builder *b)
{
	struct hs_heap_snapshot *s = b->s;
	size_t nr_slots = (s->nr_types + 1) * NR_SIZE_CLASSES;
	uint32_t *map = hs_malloc(nr_slots * sizeof(*map));
	size_t i, e = 0, n;
	int err = 0;

	if (!map)
		return -ENOMEM;
	for (i = 0; i < nr_slots; i++)
		map[i] = HS_HEAPGRAPH_NONE;
	if (s->nr_cwts)
		qsort(s->cwts, s->nr_cwts, sizeof(*s->cwts), cmp_cwt_key);
	for (i = 0; i < s->nr_nodes && !err; i++) {
		const struct hs_clr_heap_node *o = &s->nodes[i];
		uint32_t size = o->size > UINT32_MAX ? UINT32_MAX : (uint32_t)o->size,
			 type;
		uint64_t k;

		n = 0;
		for (k = 0; k < o->nr_edges && !err; k++) {
			if (e == s->nr_edges) {
				s->nr_lost_edges += o->nr_edges - k;
				break;
			}
			err = add_kid(b, &n, lookup(b->idx, s->nr_nodes, s->edges[e++]));
		}
		for (k = first_cwt(s->cwts, s->nr_cwts, o->address);
		     k < s->nr_cwts && s->cwts[k].key == o->address && !err; k++)
			err =
			    add_kid(b, &n, lookup(b->idx, s->nr_nodes, s->cwts[k].value));
		if (!err)
			err = object_type(b, map, o->type_id, size, &type);
		if (!err)
			err = hs_heapgraph_add_node(b->g, type, size, o->address, b->kids,
						    (uint32_t)n);
	}
	hs_free(map);
	return err;
}

int hs_heap_snapshot_build(struct hs_heap_snapshot *s, struct hs_heapgraph *g)
{
	struct builder b = {.s = s, .g = g};
	size_t i;
	int err;

	if (!s->nr_nodes)
		return -ENODATA;
	if (s->nr_nodes + s->nr_statics + NR_CATS + 1 >= HS_HEAPGRAPH_ORPHAN)
		return -E2BIG;
	if (s->nr_types)
		qsort(s->types, s->nr_types, sizeof(*s->types), cmp_type_id);
	b.idx = hs_malloc(s->nr_nodes * sizeof(*b.idx));
	if (!b.idx)
		return -ENOMEM;
	/* the node numbers are known before the roots: objects come last */
	number_roots(&b);
	for (i = 0; i < s->nr_nodes; i++)
		b.idx[i] = (struct addr_index){s->nodes[i].address,
					       b.first_object + (uint32_t)i};
	qsort(b.idx, s->nr_nodes, sizeof(*b.idx), cmp_addr);
	err = add_roots(&b);
	if (!err)
		err = add_objects(&b);
	if (!err) {
		g->root = 0;
		err = hs_heapgraph_check(g);
	}
	hs_free(b.idx);
	hs_free(b.kids);
	return err;
}

/* ---- the types of earlier snapshots ---- */

#define TYPE_LINE_MAX 65536 /* a name and its parameters, generously */
#define TYPE_PARAMS_MAX 1024

int hs_heap_snapshot_save_types(const struct hs_heap_snapshot *s, FILE *f)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < s->nr_types; i++) {
		const struct hs_heap_snapshot_type *t = &s->types[i];

		if (strchr(t->name, '\n'))
			continue; /* cannot be one line; the runtime names none so */
		fprintf(f, "%" PRIx64 " %" PRIx64 " %x %" PRIx32, t->id, t->module,
			t->element_type, t->nr_params);
		for (k = 0; k < t->nr_params; k++)
			fprintf(f, " %" PRIx64, t->params[k]);
		fprintf(f, " %s\n", t->name);
	}
	return fflush(f) || ferror(f) ? -EIO : 0;
}

/*
 * The hex number at @p (after one blank unless @first) into *@v: the text
 * after it, which must be a blank, or NULL.
 */
static char *hex_field(char *p, int first, uint64_t *v)
{
	char *end;

	if (!first && *p++ != ' ')
		return NULL;
	if (!isxdigit((unsigned char)*p))
		return NULL;
	errno = 0;
	*v = strtoull(p, &end, 16);
	if (errno || *end != ' ')
		return NULL;
	return end;
}

/* One saved line into @t (its name and params owned): 0, -EINVAL, -ENOMEM. */
static int parse_type_line(char *line, struct hs_heap_snapshot_type *t)
{
	uint64_t v[4];
	char *p = line;
	uint32_t k;
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < 4; i++)
		if (!(p = hex_field(p, i == 0, &v[i])))
			return -EINVAL;
	if (v[2] > 0xff || v[3] > TYPE_PARAMS_MAX)
		return -EINVAL;
	t->id = v[0];
	t->module = v[1];
	t->element_type = (uint8_t)v[2];
	if (v[3] && !(t->params = hs_malloc((size_t)v[3] * sizeof(*t->params))))
		return -ENOMEM;
	for (k = 0; k < v[3]; k++)
		if (!(p = hex_field(p, 0, &t->params[k]))) {
			hs_free(t->params);
			t->params = NULL;
			return -EINVAL;
		}
	t->nr_params = (uint32_t)v[3];
	t->name = hs_strdup(p + 1); /* after the blank */
	if (!t->name) {
		hs_free(t->params);
		t->params = NULL;
		return -ENOMEM;
	}
	return 0;
}

int hs_heap_snapshot_load_types(struct hs_heap_snapshot *s, FILE *f)
{
	char *line = hs_malloc(TYPE_LINE_MAX);
	size_t known = s->nr_types;
	int err = 0;

	if (!line)
		return -ENOMEM;
	/* the types this snapshot received, sorted for the look-ups */
	if (known)
		qsort(s->types, known, sizeof(*s->types), cmp_type_id);
	while (!err && fgets(line, TYPE_LINE_MAX, f)) {
		struct hs_heap_snapshot_type t, key;
		size_t len = strlen(line);

		if (!len || line[len - 1] != '\n') {
			err = -EINVAL; /* cut off, or longer than any type line */
			break;
		}
		line[len - 1] = '\0';
		err = parse_type_line(line, &t);
		if (err)
			break;
		key.id = t.id;
		if (known &&
		    bsearch(&key, s->types, known, sizeof(*s->types), cmp_type_id)) {
			hs_free(t.name); /* this snapshot's own description wins */
			hs_free(t.params);
			continue;
		}
		if (HS_GROW(s->types, s->nr_types + 1, s->alloc_types)) {
			hs_free(t.name);
			hs_free(t.params);
			err = -ENOMEM;
			break;
		}
		s->types[s->nr_types++] = t;
	}
	hs_free(line);
	return err;
}
