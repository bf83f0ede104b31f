/*
 * view_part - the rows of a ByName or CallTree view made for the rows an
 * answer shows (see view_part.h). The rows are made as views.c makes
 * them (views_internal.h); only the set of rows and the slots of the
 * When column are smaller.
 */
#include "analysis/view_part.h"
#include "analysis/view_order.h"
#include "analysis/views_internal.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Number the alive nodes as hs_view_build()'s CallTree rows: depth
 * first from ROOT, a node, then its children's subtrees in the tree's
 * order (hs_view_tree_nodes() walks the same way). One walk fills the
 * three maps: rows come in order, so node_of_row and depth are written
 * in sequence. The walk keeps only the path from ROOT (each node on it
 * and its next child), so its own memory is the tree's depth, not one
 * slot a node.
 */
static int number_rows(struct hs_view_parts *p)
{
	const struct hs_tree *t = &p->ct->t;
	struct path_step {
		uint32_t node, next; /* a node on the path, its next child */
	} *path = NULL;
	size_t alloc_path = 0, top = 0, row = 0, n;

	p->row_of_node = hs_malloc((t->nr + 1) * sizeof(*p->row_of_node));
	p->node_of_row = hs_malloc((t->nr + 1) * sizeof(*p->node_of_row));
	p->depth = hs_malloc((t->nr + 1) * sizeof(*p->depth));
	if (!p->row_of_node || !p->node_of_row || !p->depth)
		return -ENOMEM;
	hs_hint_huge(p->row_of_node, (t->nr + 1) * sizeof(*p->row_of_node));
	hs_hint_huge(p->node_of_row, (t->nr + 1) * sizeof(*p->node_of_row));
	hs_hint_huge(p->depth, (t->nr + 1) * sizeof(*p->depth));
	for (n = 0; n < t->nr; n++)
		p->row_of_node[n] = HS_NO_NODE;
	if (t->nr) {
		if (HS_GROW(path, 1, alloc_path))
			return -ENOMEM;
		path[top++] = (struct path_step){0, 0};
		p->row_of_node[0] = 0;
		p->node_of_row[0] = 0;
		p->depth[row++] = 0;
	}
	while (top) {
		struct path_step *at = &path[top - 1];
		uint32_t child;

		if (at->next == hs_tree_nr_children(t, at->node)) {
			top--;
			continue;
		}
		child = hs_tree_children(t, at->node)[at->next++];
		p->row_of_node[child] = (uint32_t)row;
		p->node_of_row[row] = child;
		p->depth[row++] = (uint32_t)top;
		if (HS_GROW(path, top + 1, alloc_path)) {
			hs_free(path);
			return -ENOMEM;
		}
		path[top++] = (struct path_step){child, 0};
	}
	hs_free(path);
	p->nr_rows = row;
	if (row < t->nr) {
		/* give back the slots of the nodes that are no row */
		uint32_t *less = hs_realloc(p->node_of_row, (row + 1) * sizeof(*less));

		if (less)
			p->node_of_row = less;
		less = hs_realloc(p->depth, (row + 1) * sizeof(*less));
		if (less)
			p->depth = less;
	}
	return 0;
}

int hs_view_parts_build(struct hs_view_parts *p, const struct hs_calltree *ct,
			enum hs_view_kind kind)
{
	struct hs_view_opts o = {.kind = kind, .no_when = 1};
	int err;

	memset(p, 0, sizeof(*p));
	p->ct = ct;
	if (kind != HS_VIEW_BYNAME && kind != HS_VIEW_CALLTREE)
		return -EINVAL;
	if (kind == HS_VIEW_CALLTREE)
		o.limit = 1; /* the summary and ROOT's row; the rest are numbered */
	err = hs_view_build(&p->v, ct, &o);
	if (err) {
		memset(p, 0, sizeof(*p));
		return err;
	}
	if (kind == HS_VIEW_BYNAME) {
		p->nr_rows = p->v.nr_rows;
		return 0;
	}
	/* ROOT's row is made again by hs_view_part(), as any other */
	hs_free(p->v.rows);
	p->v.rows = NULL;
	p->v.nr_rows = 0;
	err = number_rows(p);
	if (err) {
		hs_view_parts_release(p);
		return err;
	}
	HS_BUG_ON(p->nr_rows != p->v.nr_total);
	return 0;
}

void hs_view_parts_release(struct hs_view_parts *p)
{
	hs_view_release(&p->v);
	hs_free(p->node_of_row);
	hs_free(p->row_of_node);
	hs_free(p->depth);
	memset(p, 0, sizeof(*p));
}

size_t hs_view_parts_memory(const struct hs_view_parts *p)
{
	size_t bytes = p->v.nr_rows * sizeof(*p->v.rows);

	if (p->row_of_node)
		bytes += p->ct->t.nr * sizeof(*p->row_of_node) +
			 p->nr_rows * (sizeof(*p->node_of_row) + sizeof(*p->depth));
	return bytes;
}

uint32_t hs_view_parts_parent(const struct hs_view_parts *p, uint32_t r)
{
	uint32_t n;

	if (!p->node_of_row)
		return HS_NO_NODE;
	n = p->node_of_row[r];
	return n ? p->row_of_node[p->ct->t.parent[n]] : HS_NO_NODE;
}

size_t hs_view_parts_nr_children(const struct hs_view_parts *p, uint32_t r)
{
	return p->node_of_row ? hs_tree_nr_children(&p->ct->t, p->node_of_row[r]) : 0;
}

size_t hs_view_parts_children(const struct hs_view_parts *p, uint32_t r, uint32_t *out)
{
	const struct hs_tree *t = &p->ct->t;
	const uint32_t *kids;
	size_t n, k;

	if (!p->node_of_row)
		return 0;
	n = hs_tree_nr_children(t, p->node_of_row[r]);
	kids = hs_tree_children(t, p->node_of_row[r]);
	for (k = 0; k < n; k++)
		out[k] = p->row_of_node[kids[k]];
	return n;
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return (a > b) - (a < b);
}

/* Where @id is in the @n ascending ids at @u (it is there). */
static size_t position(const uint32_t *u, size_t n, uint32_t id)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (u[mid] <= id)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* CallTree row @r into @row, as emit_tree() makes it (views.c). */
static void tree_row(const struct hs_view_parts *p, uint32_t r, struct hs_view_row *row)
{
	const struct hs_tree *t = &p->ct->t;
	uint32_t n = p->node_of_row[r];

	memset(row, 0, sizeof(*row));
	hs__view_row_set(row, &t->exc[n], &t->inc[n]);
	row->name = hs_tree_name(t, n);
	row->parent = hs_view_parts_parent(p, r);
	row->depth = p->depth[r];
	row->nr_children = (uint32_t)hs_tree_nr_children(t, n);
}

/*
 * When of the CallTree rows of @w (rows @u, ascending, so that every
 * shown ancestor of a row comes before it): a slot per row; a node's
 * samples go to the slot of the nearest row at or above its
 * representative (ct->rep), and each slot adds into the nearest one above
 * it, so that a row gets its whole subtree, as tree_when() (views.c)
 * gives it with a slot for every row.
 */
static int tree_when(struct hs_view *w, const struct hs_view_parts *p, const uint32_t *u)
{
	const struct hs_calltree *ct = p->ct;
	const struct hs_tree *t = &ct->t;
	uint32_t *near = hs_malloc((t->nr + 1) * sizeof(*near));
	uint32_t *slot_parent = hs_malloc((w->nr_rows + 1) * sizeof(*slot_parent));
	struct hs_when_map m = {.nr_slots = w->nr_rows};
	size_t n, i;
	int err = -ENOMEM;

	if (!near || !slot_parent)
		goto out;
	hs_hint_huge(near, (t->nr + 1) * sizeof(*near));
	for (n = 0; n < t->nr; n++)
		near[n] = HS_NO_NODE;
	for (i = 0; i < w->nr_rows; i++)
		near[p->node_of_row[u[i]]] = (uint32_t)i;
	/* the nearest slot at or above each node; parents come first */
	for (n = 1; n < t->nr; n++)
		if (near[n] == HS_NO_NODE)
			near[n] = near[t->parent[n]];
	for (i = 0; i < w->nr_rows; i++) {
		uint32_t node = p->node_of_row[u[i]];

		slot_parent[i] = node ? near[t->parent[node]] : HS_NO_NODE;
	}
	/*
	 * A node's samples go to its representative's slot. rep[n] is n or
	 * an ancestor of n (a smaller id), so going down the ids reads
	 * near[rep[n]] before it is overwritten; and a representative is
	 * its own representative.
	 */
	for (n = t->nr; n-- > 0;)
		near[n] = near[ct->rep[n]];
	m.slot_of = near;
	m.slot_parent = slot_parent;
	err = hs__view_fill_when(w, ct, &m, NULL);
out:
	hs_free(near);
	hs_free(slot_parent);
	return err;
}

/* When of the ByName rows of @w: their names' topmost nodes are the slots. */
static int byname_when(struct hs_view *w, const struct hs_calltree *ct)
{
	size_t nr_frames = hs_source_nr_frames(&ct->f.out), k, i;
	uint32_t *row_of = hs_malloc((nr_frames + 1) * sizeof(*row_of)), frame;
	int err;

	if (!row_of)
		return -ENOMEM;
	for (k = 0; k <= nr_frames; k++)
		row_of[k] = HS_NO_NODE;
	for (i = 0; i < w->nr_rows; i++)
		if (!hs_calltree_find_name(ct, w->rows[i].name, &frame))
			row_of[frame == HS_NO_FRAME ? nr_frames : frame] = (uint32_t)i;
	err = hs__view_byname_when(w, ct, row_of);
	hs_free(row_of);
	return err;
}

/* An empty view like @p's full one, with room for @n rows. */
static int part_init(struct hs_view *v, const struct hs_view_parts *p, size_t n)
{
	memset(v, 0, sizeof(*v));
	hs_source_init(&v->names);
	v->kind = p->v.kind;
	v->sum = p->v.sum;
	v->basis = p->v.basis;
	v->nr_total = p->nr_rows;
	v->rows = hs_calloc(n + 1, sizeof(*v->rows));
	return v->rows ? 0 : -ENOMEM;
}

int hs_view_part(const struct hs_view_parts *p, const uint32_t *ids, size_t n,
		 int no_when, struct hs_view *part)
{
	struct hs_view w;
	uint32_t *u = NULL;
	size_t i, nu = 0;
	int err;

	memset(part, 0, sizeof(*part));
	for (i = 0; i < n; i++)
		if (ids[i] >= p->nr_rows)
			return -EINVAL;
	/* the rows once each, in the view's order */
	u = hs_malloc((n + 1) * sizeof(*u));
	err = part_init(&w, p, n);
	if (!err && !u)
		err = -ENOMEM;
	if (err)
		goto out;
	memcpy(u, ids, n * sizeof(*u));
	qsort(u, n, sizeof(*u), cmp_u32);
	for (i = 0; i < n; i++)
		if (!nu || u[nu - 1] != u[i])
			u[nu++] = u[i];
	for (i = 0; i < nu; i++) {
		if (p->node_of_row)
			tree_row(p, u[i], &w.rows[i]);
		else
			w.rows[i] = p->v.rows[u[i]];
	}
	w.nr_rows = nu;
	if (p->node_of_row)
		hs__view_set_origins(&w, p->ct);
	if (!no_when && !p->ct->in->untimed && nu)
		err = p->node_of_row ? tree_when(&w, p, u) : byname_when(&w, p->ct);
	if (!err)
		err = part_init(part, p, n);
	if (err)
		goto out;
	for (i = 0; i < n; i++)
		part->rows[i] = w.rows[position(u, nu, ids[i])];
	part->nr_rows = n;
out:
	if (err)
		hs_view_release(part);
	hs_view_release(&w);
	hs_free(u);
	return err;
}

/* Row @r's full name (for hs_view_find_named(): @rows is the parts). */
static const char *row_name(const void *rows, size_t r)
{
	const struct hs_view_parts *p = rows;

	return p->node_of_row ? hs_tree_name(&p->ct->t, p->node_of_row[r])
			      : p->v.rows[r].name;
}

int hs_view_parts_find(const struct hs_view_parts *p, struct hs_pattern *re, size_t from,
		       int backward, size_t *at, struct hs_diag *diag)
{
	return hs_view_find_named(p->nr_rows, row_name, p, re, from, backward, at, diag);
}
