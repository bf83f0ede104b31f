/*
 * views - ByName, CallTree, Callers, Callees, Caller-Callee and Flame
 * Graph rows from a call tree (see views.h).
 */
#include "analysis/views.h"
#include "analysis/views_internal.h"
#include "common/alloc.h"
#include "model/frame_name.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[HS_VIEW__COUNT] = {
    [HS_VIEW_BYNAME] = "byname",
    [HS_VIEW_CALLTREE] = "calltree",
    [HS_VIEW_CALLERS] = "callers",
    [HS_VIEW_CALLEES] = "callees",
    [HS_VIEW_CALLER_CALLEE] = "caller-callee",
    [HS_VIEW_FLAME] = "flame",
};

const char *hs_view_kind_name(enum hs_view_kind kind)
{
	return kind < HS_VIEW__COUNT ? kind_names[kind] : "?";
}

int hs_view_kind_parse(const char *name, enum hs_view_kind *kind)
{
	int k;

	for (k = 0; k < HS_VIEW__COUNT; k++)
		if (!strcmp(name, kind_names[k])) {
			*kind = (enum hs_view_kind)k;
			return 0;
		}
	return -EINVAL;
}

int hs_view_kind_has_focus(enum hs_view_kind kind)
{
	return kind == HS_VIEW_CALLERS || kind == HS_VIEW_CALLEES ||
	       kind == HS_VIEW_CALLER_CALLEE;
}

int hs_view_focus_check(enum hs_view_kind kind, const char *focus, int need,
			const char *what, struct hs_diag *diag)
{
	if (!hs_view_kind_has_focus(kind) && focus) {
		hs_diag_set(diag, 0,
			    "%s is for the callers, callees and caller-callee "
			    "views, not '%s'",
			    what, hs_view_kind_name(kind));
		return -EINVAL;
	}
	if (need && hs_view_kind_has_focus(kind) && !focus) {
		hs_diag_set(diag, 0, "view '%s' needs %s NAME", hs_view_kind_name(kind),
			    what);
		return -EINVAL;
	}
	return 0;
}

int hs_view_kind_is_tree(enum hs_view_kind kind)
{
	return kind == HS_VIEW_CALLTREE || kind == HS_VIEW_CALLERS ||
	       kind == HS_VIEW_CALLEES || kind == HS_VIEW_FLAME;
}

size_t hs_view_group_start(const char *s, size_t end, char open, char close)
{
	size_t i = end;
	int depth = 0;

	while (i-- > 0) {
		if (s[i] == close)
			depth++;
		else if (s[i] == open && --depth == 0)
			return i;
	}
	return end;
}

size_t hs_view_display_len(const char *name)
{
	size_t n = strlen(name), i;

	if (!n || name[n - 1] != '}')
		return n;
	/* the '{' that opens the group ending the name */
	i = hs_view_group_start(name, n, '{', '}');
	if (i == n || !i || name[i - 1] != ' ')
		return n;
	while (i > 0 && name[i - 1] == ' ')
		i--;
	return i ? i : n;
}

void hs_view_summary_fill(struct hs_view_summary *s, const struct hs_calltree *ct)
{
	const struct hs_node_inc *root = &ct->t.inc[0];
	double span;

	memset(s, 0, sizeof(*s));
	s->metric = root->metric;
	s->count = root->count;
	s->samples = ct->nr_samples;
	if (root->first <= root->last) {
		s->first = root->first;
		s->last = root->last;
	}
	span = (double)(s->last - s->first) / 1e6;
	s->metric_per_interval = span > 0 ? s->metric / span : 0;
	s->bucket_ms = ct->range.bucket / 1e6;
	s->start_ms = (double)ct->range.start / 1e6;
	s->end_ms = (double)ct->range.end / 1e6;
	s->time_metric = ct->range.time_metric;
	s->unit = ct->in->metric_unit;
	s->fold_pct = ct->fold_pct;
}

void hs_view_release(struct hs_view *v)
{
	hs_free(v->focus);
	hs_free(v->rows);
	hs_source_release(&v->names);
	memset(v, 0, sizeof(*v));
}

static struct hs_view_row *add_row(struct hs_view *v, size_t *alloc)
{
	struct hs_view_row *r;

	if (HS_GROW(v->rows, v->nr_rows + 1, *alloc))
		return NULL;
	r = &v->rows[v->nr_rows++];
	memset(r, 0, sizeof(*r));
	r->parent = HS_NO_NODE;
	r->first = INT64_MAX;
	r->last = INT64_MIN;
	return r;
}

void hs__view_row_set(struct hs_view_row *r, const struct hs_node_exc *e,
		      const struct hs_node_inc *c)
{
	r->exc = e->metric;
	r->exc_count = e->count;
	r->fold = e->fold;
	r->fold_count = e->fold_count;
	r->inc = c->metric;
	r->inc_count = c->count;
	r->first = c->first;
	r->last = c->last;
}

/*
 * When maps (hs_when_map), built node by node in increasing node order:
 * map_begin(n) opens node n's entry list, map_add() appends a slot to it
 * (adding the weight when the slot is already there), map_finish()
 * closes the map.
 */
struct map_builder {
	struct hs_when_map m;
	size_t alloc; /* entries allocated */
	uint32_t nr_ent;
	uint32_t open;	 /* first entry of the open node */
	uint32_t *pos;	 /* slot -> entry index + 1 within the open node */
	uint8_t *opened; /* node -> has an entry list */
};

static int map_init(struct map_builder *b, const struct hs_calltree *ct, size_t nr_slots)
{
	memset(b, 0, sizeof(*b));
	b->m.nr_slots = nr_slots;
	b->m.off = hs_calloc(ct->t.nr + 1, sizeof(*b->m.off));
	b->pos = hs_calloc(nr_slots + 1, sizeof(*b->pos));
	b->opened = hs_calloc(ct->t.nr + 1, 1);
	return b->m.off && b->pos && b->opened ? 0 : -ENOMEM;
}

static void map_release(struct map_builder *b)
{
	hs_free(b->m.off);
	hs_free(b->m.ent);
	hs_free(b->pos);
	hs_free(b->opened);
}

static void map_begin(struct map_builder *b, uint32_t n)
{
	uint32_t e;

	for (e = b->open; e < b->nr_ent; e++)
		b->pos[b->m.ent[e].slot] = 0;
	b->open = b->nr_ent;
	b->m.off[n] = b->nr_ent;
	b->opened[n] = 1;
}

static int map_add(struct map_builder *b, uint32_t slot, double w)
{
	if (b->pos[slot]) {
		b->m.ent[b->pos[slot] - 1].w += w;
		return 0;
	}
	if (HS_GROW(b->m.ent, (size_t)b->nr_ent + 1, b->alloc))
		return -ENOMEM;
	b->m.ent[b->nr_ent].slot = slot;
	b->m.ent[b->nr_ent].w = w;
	b->pos[slot] = ++b->nr_ent;
	return 0;
}

/* A node never opened has an empty list: it ends where the next one starts. */
static void map_finish(struct map_builder *b, const struct hs_calltree *ct)
{
	size_t n;

	b->m.off[ct->t.nr] = b->nr_ent;
	for (n = ct->t.nr; n-- > 0;)
		if (!b->opened[n])
			b->m.off[n] = b->m.off[n + 1];
}

/*
 * The slots' histograms take at most this much at once: a view of more
 * slots fills them a block of buckets at a time (a call tree of 1.8M
 * shown nodes would otherwise hold 460 MB of them for one view).
 */
#define WHEN_SLOTS_BUDGET ((size_t)64 << 20)

/* Buckets per block for @nr slots: a power of two, 1 to HS_WHEN_BUCKETS. */
static unsigned when_block(size_t nr)
{
	unsigned nb = HS_WHEN_BUCKETS;

	while (nb > 1 && nr * nb * sizeof(double) > WHEN_SLOTS_BUDGET)
		nb /= 2;
	return nb;
}

/*
 * Fill the map's slots (hs_calltree_when()) and write the When strings of v->rows:
 * row r's histogram is its slot's (@slot_row NULL: slot r is row r; or,
 * with m->chain, the map's row r itself) or
 * the sum of the slots with slot_row[slot] == r. A block of buckets at a
 * time (when_block()); the first also gives ROOT's histogram, hence the
 * scale.
 */
int hs__view_fill_when(struct hs_view *v, const struct hs_calltree *ct,
		       const struct hs_when_map *m, const uint32_t *slot_row)
{
	size_t nr = m->chain ? m->nr_rows : m->nr_slots, nr_h, r, s;
	unsigned nb = when_block(nr > v->nr_rows ? nr : v->nr_rows), b0, b;
	double *hist = NULL, *rows = NULL, root[HS_WHEN_BUCKETS], scale = 0;
	const double *h;

	hist = hs_malloc((nr ? nr : 1) * nb * sizeof(*hist));
	if (slot_row)
		rows = hs_malloc((v->nr_rows + 1) * nb * sizeof(*rows));
	if (!hist || (slot_row && !rows)) {
		hs_free(hist);
		hs_free(rows);
		return -ENOMEM;
	}
	for (b0 = 0; b0 < HS_WHEN_BUCKETS; b0 += nb) {
		hs_calltree_when(ct, m, b0, nb, hist, b0 ? NULL : root);
		if (!b0)
			scale = hs_when_scale(&ct->range, root);
		/*
		 * Both bucket-major; gathering a row's values touches a cache
		 * line per bucket that the next rows use too.
		 */
		h = hist;
		nr_h = nr;
		if (slot_row) {
			memset(rows, 0, (v->nr_rows + 1) * nb * sizeof(*rows));
			for (b = 0; b < nb; b++)
				for (s = 0; s < nr; s++)
					rows[b * v->nr_rows + slot_row[s]] +=
					    hist[b * nr + s];
			h = rows;
			nr_h = v->nr_rows;
		}
		for (r = 0; r < v->nr_rows; r++)
			for (b = 0; b < nb; b++)
				v->rows[r].when[b0 + b] =
				    hs_when_char(h[b * nr_h + r], scale);
	}
	for (r = 0; r < v->nr_rows; r++)
		v->rows[r].when[HS_WHEN_BUCKETS] = '\0';
	hs_free(hist);
	hs_free(rows);
	return 0;
}

/* Nodes whose own samples (ct->rep) land on them: alive, with an exclusive cost. */
static int own_samples(const struct hs_calltree *ct, uint32_t n)
{
	return (ct->t.flags[n] & HS_NODE_ALIVE) &&
	       ct->t.exc[n].first <= ct->t.exc[n].last;
}

/*
 * Flame Graph geometry of a row about to get the children of @fr: they
 * start where they are centred under it (widths |Inc| / @total).
 */
struct frame {
	uint32_t node, row, next;
	double x; /* where the next child's rectangle starts */
};

static void centre_children(const struct hs_view *v, const struct hs_tree *t,
			    struct frame *fr, double total)
{
	const struct hs_view_row *p = &v->rows[fr->row];
	double sum = 0;
	size_t k;

	for (k = 0; k < hs_tree_nr_children(t, fr->node); k++)
		sum += fabs(t->inc[hs_tree_children(t, fr->node)[k]].metric);
	fr->x = p->x + (p->width - (total > 0 ? sum / total : 0)) / 2;
}

/*
 * Tree rows: depth-first from the root of @t, children in their sorted
 * order, at most o->limit rows and o->max_depth levels; for the Flame
 * Graph, each row's rectangle too. Fills row_of[] (node of @t -> row).
 */
static int emit_tree(struct hs_view *v, const struct hs_tree *t,
		     const struct hs_view_opts *o, uint32_t *row_of)
{
	size_t alloc = 0, salloc = 0, depth = 0, limit = o->limit ? o->limit : SIZE_MAX;
	double total = fabs(t->inc[0].metric);
	int flame = v->kind == HS_VIEW_FLAME;
	struct frame *stack = NULL;
	struct hs_view_row *r;
	size_t n;

	v->nr_total = 0;
	for (n = 0; n < t->nr; n++) {
		row_of[n] = HS_NO_NODE;
		v->nr_total += !!(t->flags[n] & HS_NODE_ALIVE);
	}
	if (total == 0)
		for (n = 0; n < hs_tree_nr_children(t, 0); n++)
			total += fabs(t->inc[hs_tree_children(t, 0)[n]].metric);
	if (HS_GROW(stack, 64, salloc) ||
	    HS_GROW(v->rows, v->nr_total < limit ? v->nr_total : limit, alloc)) {
		hs_free(stack);
		return -ENOMEM;
	}
	r = add_row(v, &alloc);
	if (!r)
		goto oom;
	hs__view_row_set(r, &t->exc[0], &t->inc[0]);
	r->name = hs_tree_name(t, 0);
	r->nr_children = (uint32_t)hs_tree_nr_children(t, 0);
	if (flame) {
		r->width = total > 0 ? fabs(t->inc[0].metric) / total : 0;
		r->x = (1 - r->width) / 2;
	}
	row_of[0] = 0;
	stack[0] = (struct frame){0, 0, 0, 0};
	depth = 1;
	while (depth && v->nr_rows < limit) {
		struct frame *fr = &stack[depth - 1];
		uint32_t c;

		if (fr->next == hs_tree_nr_children(t, fr->node) ||
		    (o->max_depth && depth > o->max_depth)) {
			depth--;
			continue;
		}
		if (flame && fr->next == 0)
			centre_children(v, t, fr, total);
		c = hs_tree_children(t, fr->node)[fr->next++];
		r = add_row(v, &alloc);
		if (!r)
			goto oom;
		hs__view_row_set(r, &t->exc[c], &t->inc[c]);
		r->name = hs_tree_name(t, c);
		r->parent = fr->row;
		r->depth = (uint32_t)depth;
		r->nr_children = (uint32_t)hs_tree_nr_children(t, c);
		if (flame) {
			r->x = fr->x;
			r->width = total > 0 ? fabs(t->inc[c].metric) / total : 0;
			fr->x += r->width;
		}
		row_of[c] = (uint32_t)(v->nr_rows - 1);
		if (HS_GROW(stack, depth + 1, salloc))
			goto oom;
		stack[depth] = (struct frame){c, (uint32_t)(v->nr_rows - 1), 0, 0};
		depth++;
	}
	hs_free(stack);
	return 0;
oom:
	hs_free(stack);
	return -ENOMEM;
}

/*
 * When of tree rows: a call-tree node's samples count in the row of the
 * nearest shown ancestor-or-self of land(rep(n)); rows then add up into
 * their parents.
 */
static int tree_when(struct hs_view *v, const struct hs_calltree *ct,
		     const struct hs_tree *t, const uint32_t *land,
		     const uint32_t *row_of)
{
	uint32_t *near = hs_malloc(t->nr * sizeof(*near));
	uint32_t *row_parent = hs_malloc((v->nr_rows + 1) * sizeof(*row_parent));
	struct hs_when_map m = {.nr_slots = v->nr_rows};
	size_t n;
	int err = -ENOMEM;

	m.slot_of = hs_malloc(ct->t.nr * sizeof(*m.slot_of));
	if (!near || !row_parent || !m.slot_of)
		goto out;
	for (n = 0; n < t->nr; n++)
		near[n] = row_of[n] != HS_NO_NODE ? row_of[n]
			  : n			  ? near[t->parent[n]]
						  : HS_NO_NODE;
	for (n = 0; n < v->nr_rows; n++)
		row_parent[n] = v->rows[n].parent;
	for (n = 0; n < ct->t.nr; n++) {
		uint32_t r = ct->rep[n], l = land ? land[r] : r;

		m.slot_of[n] = l == HS_NO_NODE ? HS_NO_NODE : near[l];
	}
	m.slot_parent = row_parent;
	err = hs__view_fill_when(v, ct, &m, NULL);
out:
	hs_free(near);
	hs_free(row_parent);
	hs_free(m.slot_of);
	return err;
}

int hs_view_tree_nodes(const struct hs_tree *t, uint32_t *node_of_row, size_t nr)
{
	uint32_t *todo;
	size_t top = 0, row = 0, k;

	if (!t->nr || !nr)
		return 0;
	todo = hs_malloc(t->nr * sizeof(*todo));
	if (!todo)
		return -ENOMEM;
	/* emit_tree()'s order: a node, then its children's subtrees in turn */
	todo[top++] = 0;
	while (top && row < nr) {
		uint32_t n = todo[--top];

		node_of_row[row++] = n;
		for (k = hs_tree_nr_children(t, n); k-- > 0;)
			todo[top++] = hs_tree_children(t, n)[k];
	}
	hs_free(todo);
	return 0;
}

static int build_calltree(struct hs_view *v, const struct hs_calltree *ct,
			  const struct hs_view_opts *o)
{
	uint32_t *row_of = hs_malloc(ct->t.nr * sizeof(*row_of));
	int err = -ENOMEM;

	if (!row_of)
		return err;
	err = emit_tree(v, &ct->t, o, row_of);
	if (!err && !o->no_when)
		err = tree_when(v, ct, &ct->t, NULL, row_of);
	hs_free(row_of);
	return err;
}

/* ByName ------------------------------------------------------------------ */

struct byname_sort {
	const struct hs_node_exc *exc;
	const struct hs_node_inc *inc;
	const struct hs_calltree *ct;
	size_t nr_frames;
};

static const char *frame_name(const struct hs_calltree *ct, size_t k)
{
	return k == hs_source_nr_frames(&ct->f.out)
		   ? "ROOT"
		   : hs_source_frame_name(&ct->f.out, (uint32_t)k);
}

static int cmp_byname(const void *pa, const void *pb, void *arg)
{
	const struct byname_sort *s = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	double ea = fabs(s->exc[a].metric), eb = fabs(s->exc[b].metric);
	double ia = fabs(s->inc[a].metric), ib = fabs(s->inc[b].metric);
	int c;

	if (ea != eb)
		return ea > eb ? -1 : 1;
	if (ia != ib)
		return ia > ib ? -1 : 1;
	c = strcmp(frame_name(s->ct, a), frame_name(s->ct, b));
	return c ? c : (a > b) - (a < b);
}

/*
 * ByName When: a sample counts once in each shown name on its path, so in
 * the topmost node of that name (HS_NODE_TOP). Those nodes are the slots:
 * a node's own samples go to its nearest slot, slots add up into their
 * nearest slot above, and each name's row sums its slots. When the
 * slots' histograms would not fit one block of buckets (a tree of 4M
 * nodes can have 2M such slots: a pass over the samples per block),
 * each sample goes instead straight to the rows of its slot and of
 * every slot above it (no name twice on a path): one pass, no
 * histogram per slot, but an add per shown name on the sample's path.
 */
int hs__view_byname_when(struct hs_view *v, const struct hs_calltree *ct,
			 const uint32_t *row_of)
{
	const struct hs_tree *t = &ct->t;
	size_t nr_frames = hs_source_nr_frames(&ct->f.out), n, nr = 0;
	uint32_t *near = hs_malloc(t->nr * sizeof(*near));
	uint32_t *slot_parent = NULL, *slot_row = NULL;
	/* a slot a node at most; only the slots' pages are touched */
	struct hs_when_link *chain = hs_malloc((t->nr + 1) * sizeof(*chain));
	struct hs_when_map m = {0};
	int err = -ENOMEM;

	if (!near || !chain)
		goto out;
	/*
	 * Both are read at random, a sample at a time, by the When pass
	 * (tens of MB at 4M nodes): in 4 KiB pages nearly every read is
	 * also a TLB miss.
	 */
	hs_hint_huge(near, t->nr * sizeof(*near));
	hs_hint_huge(chain, (t->nr + 1) * sizeof(*chain));
	for (n = 0; n < t->nr; n++) {
		size_t k = t->frame[n] == HS_NO_FRAME ? nr_frames : t->frame[n];
		uint32_t up = n ? near[t->parent[n]] : HS_NO_NODE;

		near[n] = up;
		if ((t->flags[n] & (HS_NODE_ALIVE | HS_NODE_TOP)) !=
			(HS_NODE_ALIVE | HS_NODE_TOP) ||
		    row_of[k] == HS_NO_NODE)
			continue;
		chain[nr].up = up;
		chain[nr].row = row_of[k];
		near[n] = (uint32_t)nr++;
	}
	/* a node's samples go to its representative's nearest slot */
	for (n = 0; n < t->nr; n++)
		near[n] = near[ct->rep[n]];
	m.nr_slots = nr;
	m.slot_of = near;
	if (when_block(nr) < HS_WHEN_BUCKETS) {
		/* straight to the rows: one pass, however many slots */
		m.chain = chain;
		m.nr_rows = v->nr_rows;
		err = hs__view_fill_when(v, ct, &m, NULL);
		goto out;
	}
	/* the slots' histograms fit: one add a sample, then the forest */
	slot_parent = hs_malloc((nr + 1) * sizeof(*slot_parent));
	slot_row = hs_malloc((nr + 1) * sizeof(*slot_row));
	err = -ENOMEM;
	if (!slot_parent || !slot_row)
		goto out;
	for (n = 0; n < nr; n++) {
		slot_parent[n] = chain[n].up;
		slot_row[n] = chain[n].row;
	}
	m.slot_parent = slot_parent;
	err = hs__view_fill_when(v, ct, &m, slot_row);
out:
	hs_free(near);
	hs_free(chain);
	hs_free(slot_parent);
	hs_free(slot_row);
	return err;
}

static int build_byname(struct hs_view *v, const struct hs_calltree *ct,
			const struct hs_view_opts *o)
{
	size_t nr_frames = hs_source_nr_frames(&ct->f.out), k, nr = 0, alloc = 0;
	size_t limit = o->limit ? o->limit : SIZE_MAX;
	struct hs_node_exc *re = NULL;
	struct hs_node_inc *ri = NULL;
	uint32_t *order = NULL, *row_of = NULL;
	struct byname_sort s;
	int err;

	err = hs_calltree_byname(ct, &re, &ri);
	if (err)
		return err;
	err = -ENOMEM;
	order = hs_malloc((nr_frames + 1) * sizeof(*order));
	row_of = hs_malloc((nr_frames + 1) * sizeof(*row_of));
	if (!order || !row_of)
		goto out;
	for (k = 0; k <= nr_frames; k++) {
		row_of[k] = HS_NO_NODE;
		if (ri[k].first <= ri[k].last)
			order[nr++] = (uint32_t)k;
	}
	s.exc = re;
	s.inc = ri;
	s.ct = ct;
	s.nr_frames = nr_frames;
	qsort_r(order, nr, sizeof(*order), cmp_byname, &s);
	v->nr_total = nr;
	for (k = 0; k < nr && k < limit; k++) {
		struct hs_view_row *r = add_row(v, &alloc);

		if (!r)
			goto out;
		hs__view_row_set(r, &re[order[k]], &ri[order[k]]);
		r->name = frame_name(ct, order[k]);
		row_of[order[k]] = (uint32_t)k;
	}
	err = o->no_when ? 0 : hs__view_byname_when(v, ct, row_of);
out:
	hs_free(re);
	hs_free(ri);
	hs_free(order);
	hs_free(row_of);
	return err;
}

/* Callers and Callees ------------------------------------------------------ */

/*
 * dF[n]: the deepest node on n's path (n included) named @focus, or
 * HS_NO_NODE; for alive nodes only.
 */
static uint32_t *deepest_focus(const struct hs_calltree *ct, uint32_t focus)
{
	const struct hs_tree *t = &ct->t;
	uint32_t *d = hs_malloc(t->nr * sizeof(*d));
	size_t n;

	if (!d)
		return NULL;
	d[0] = focus == HS_NO_FRAME ? 0 : HS_NO_NODE;
	for (n = 1; n < t->nr; n++)
		d[n] = t->frame[n] == focus ? (uint32_t)n : d[t->parent[n]];
	return d;
}

/* Frame of a call-tree node in the view's own name table (interned lazily). */
static int name_in(struct hs_view *v, const struct hs_calltree *ct, uint32_t *map,
		   uint32_t frame, uint32_t *out)
{
	size_t k = frame == HS_NO_FRAME ? hs_source_nr_frames(&ct->f.out) : frame;
	const char *s;
	int err;

	if (map[k] == HS_NO_FRAME) {
		s = frame == HS_NO_FRAME ? "ROOT"
					 : hs_source_frame_name(&ct->f.out, frame);
		err = hs_source_intern_frame(&v->names, s, strlen(s), &map[k]);
		if (err)
			return err;
	}
	*out = map[k];
	return 0;
}

/*
 * Build the Callers (@up) or Callees tree of @focus into @t, whose names
 * are v->names; land[n] gets the node of @t a call-tree node's own
 * samples count in.
 */
static int focus_tree(struct hs_view *v, const struct hs_calltree *ct, uint32_t focus,
		      int up, struct hs_tree *t, uint32_t *land)
{
	const struct hs_tree *c = &ct->t;
	size_t nr_frames = hs_source_nr_frames(&ct->f.out), n;
	uint32_t *map = hs_malloc((nr_frames + 1) * sizeof(*map));
	uint32_t *d = deepest_focus(ct, focus), *leaf = NULL, s;
	struct hs_node_exc root_exc;
	int err = -ENOMEM;

	if (!map || !d)
		goto out;
	for (n = 0; n <= nr_frames; n++)
		map[n] = HS_NO_FRAME;
	hs_node_exc_clear(&root_exc);
	if (up) {
		/* leaf[d]: the trie node of d's whole caller chain, up to ROOT */
		leaf = hs_malloc(c->nr * sizeof(*leaf));
		if (!leaf)
			goto out;
		for (n = 0; n < c->nr; n++)
			leaf[n] = HS_NO_NODE;
	}
	for (n = 0; n < c->nr; n++) {
		uint32_t x = (uint32_t)n, f;

		land[n] = HS_NO_NODE;
		if (!(c->flags[n] & HS_NODE_ALIVE) || d[n] == HS_NO_NODE)
			continue;
		if (d[n] == n)
			hs_node_exc_add(&root_exc, &c->exc[n], 1);
		if (!up) {
			/* callees: below the deepest focus, keyed by path */
			if (d[n] == n) {
				land[n] = 0;
				continue;
			}
			err = name_in(v, ct, map, c->frame[n], &f);
			if (!err)
				err = hs_source_intern_stack(&v->names, f,
							     land[c->parent[n]]
								 ? land[c->parent[n]] - 1
								 : HS_NO_STACK,
							     &s);
			if (err)
				goto out;
			land[n] = s + 1;
			continue;
		}
		if (d[n] == 0) {
			land[n] = 0; /* ROOT has no callers */
			continue;
		}
		if (leaf[d[n]] == HS_NO_NODE) {
			uint32_t at = HS_NO_STACK;

			x = d[n];
			do {
				x = c->parent[x];
				err = name_in(v, ct, map, c->frame[x], &f);
				if (!err)
					err =
					    hs_source_intern_stack(&v->names, f, at, &at);
				if (err)
					goto out;
			} while (x);
			leaf[d[n]] = at + 1;
		}
		land[n] = leaf[d[n]];
	}
	err = hs_tree_alloc(t, v->names.nr_stacks + 1, &v->names);
	if (err)
		goto out;
	t->frame[0] = HS_NO_FRAME;
	t->parent[0] = HS_NO_NODE;
	for (n = 1; n < t->nr; n++) {
		uint32_t caller = v->names.stack_caller[n - 1];

		t->frame[n] = v->names.stack_frame[n - 1];
		t->parent[n] = caller == HS_NO_STACK ? 0 : caller + 1;
	}
	for (n = 0; n < c->nr; n++)
		if (land[n] != HS_NO_NODE && own_samples(ct, (uint32_t)n))
			hs_node_exc_add(&t->exc[land[n]], &c->exc[n], 1);
	err = hs_tree_finish(t);
	if (err)
		goto out;
	/* the root is the focus's by-name node; callers have no exclusive cost */
	t->exc[0] = root_exc;
	if (up)
		for (n = 1; n < t->nr; n++)
			hs_node_exc_clear(&t->exc[n]);
out:
	hs_free(map);
	hs_free(d);
	hs_free(leaf);
	return err;
}

static int build_focus_tree(struct hs_view *v, const struct hs_calltree *ct,
			    const struct hs_view_opts *o, uint32_t focus)
{
	struct hs_tree t = {0};
	uint32_t *land = hs_malloc(ct->t.nr * sizeof(*land)), *row_of = NULL;
	int err = -ENOMEM;

	if (!land)
		return err;
	err = focus_tree(v, ct, focus, v->kind == HS_VIEW_CALLERS, &t, land);
	if (err)
		goto out;
	err = -ENOMEM;
	row_of = hs_malloc(t.nr * sizeof(*row_of));
	if (!row_of)
		goto out;
	err = emit_tree(v, &t, o, row_of);
	if (err)
		goto out;
	v->rows[0].name =
	    focus == HS_NO_FRAME ? "ROOT" : hs_source_frame_name(&ct->f.out, focus);
	if (!o->no_when)
		err = tree_when(v, ct, &t, land, row_of);
	if (err)
		goto out;
	/* names in @t stay valid: they live in v->names */
out:
	hs_tree_release(&t);
	hs_free(land);
	hs_free(row_of);
	return err;
}

int hs_view_focus_pick(const struct hs_calltree *ct, enum hs_view_kind kind,
		       const char *const *path, size_t n, uint8_t *pick,
		       struct hs_diag *diag)
{
	struct hs_view v = {0};
	struct hs_tree t = {0};
	uint32_t focus, at = 0, *land = NULL;
	uint8_t *below = NULL;
	size_t i, k;
	int err;

	if (kind != HS_VIEW_CALLERS && kind != HS_VIEW_CALLEES)
		return -EINVAL;
	if (!n || hs_calltree_find_name(ct, path[0], &focus)) {
		hs_diag_set(diag, 0, "no focus '%s' for a %s node", n ? path[0] : "",
			    hs_view_kind_name(kind));
		return -ENOENT;
	}
	hs_source_init(&v.names);
	err = -ENOMEM;
	land = hs_malloc(ct->t.nr * sizeof(*land));
	if (!land)
		goto out;
	err = focus_tree(&v, ct, focus, kind == HS_VIEW_CALLERS, &t, land);
	if (err)
		goto out;
	/* the node: from the root (the focus) through path[1..n) */
	for (i = 1; i < n; i++) {
		const uint32_t *kids = hs_tree_children(&t, at);
		size_t nr = hs_tree_nr_children(&t, at);

		for (k = 0; k < nr && strcmp(hs_tree_name(&t, kids[k]), path[i]); k++)
			;
		if (k == nr) {
			hs_diag_set(diag, 0, "no %s node '%s' at depth %zu of '%s'",
				    hs_view_kind_name(kind), path[i], i, path[0]);
			err = -ENOENT;
			goto out;
		}
		at = kids[k];
	}
	/* its subtree (a parent has a smaller id), then the nodes landing in it */
	err = -ENOMEM;
	below = hs_calloc(t.nr, 1);
	if (!below)
		goto out;
	below[at] = 1;
	for (k = at + 1; k < t.nr; k++)
		below[k] = (t.flags[k] & HS_NODE_ALIVE) && below[t.parent[k]];
	for (k = 0; k < ct->t.nr; k++)
		if (land[k] != HS_NO_NODE && below[land[k]])
			pick[k] = 1;
	err = 0;
out:
	hs_free(below);
	hs_free(land);
	hs_tree_release(&t);
	hs_view_release(&v);
	return err;
}

/* Caller-Callee ------------------------------------------------------------ */

struct cc_state {
	const struct hs_calltree *ct;
	uint32_t focus;
	size_t nr_frames;
	struct hs_node_exc *caller_exc, *callee_exc; /* by frame; ROOT last */
	struct hs_node_exc *caller_inc, *callee_inc; /* inclusive, as exc records */
	struct hs_node_exc focus_exc, focus_inc;
};

static size_t frame_key(const struct cc_state *s, uint32_t node)
{
	uint32_t f = s->ct->t.frame[node];

	return f == HS_NO_FRAME ? s->nr_frames : f;
}

/* Number of nodes named focus on n's path. */
static unsigned focus_count(const struct cc_state *s, uint32_t n)
{
	const struct hs_tree *t = &s->ct->t;
	unsigned k = 0;

	for (;;) {
		k += t->frame[n] == s->focus;
		if (!n)
			return k;
		n = t->parent[n];
	}
}

/*
 * Visit the occurrences of the focus on n's path: for each, @fn gets the
 * caller node (HS_NO_NODE above ROOT) and the callee node on the path
 * (HS_NO_NODE when the occurrence is n itself).
 */
static int cc_walk(const struct cc_state *s, uint32_t n,
		   int (*fn)(void *arg, uint32_t caller, uint32_t callee, int leaf),
		   void *arg)
{
	const struct hs_tree *t = &s->ct->t;
	uint32_t below = HS_NO_NODE, x = n;
	int err;

	for (;;) {
		if (t->frame[x] == s->focus) {
			err = fn(arg, x ? t->parent[x] : HS_NO_NODE, below, x == n);
			if (err)
				return err;
		}
		if (!x)
			return 0;
		below = x;
		x = t->parent[x];
	}
}

struct cc_sum {
	struct cc_state *s;
	uint32_t node;		     /* the node whose own samples are summed */
	const struct hs_node_exc *e; /* its exclusive cost */
	double w;		     /* 1 / occurrences of the focus on its path */
};

static void add_inc(struct hs_node_exc *dst, const struct hs_node_exc *e, double w)
{
	struct hs_node_exc tmp = *e;

	tmp.fold = tmp.fold_count = 0;
	hs_node_exc_add(dst, &tmp, w);
}

static int cc_sum_one(void *arg, uint32_t caller, uint32_t callee, int leaf)
{
	struct cc_sum *c = arg;
	struct cc_state *s = c->s;

	if (caller != HS_NO_NODE) {
		size_t k = frame_key(s, caller);

		add_inc(&s->caller_inc[k], c->e, c->w);
		if (leaf)
			hs_node_exc_add(&s->caller_exc[k], c->e, c->w);
	}
	if (leaf) {
		hs_node_exc_add(&s->focus_exc, c->e, c->w);
	} else {
		size_t k = frame_key(s, callee);

		add_inc(&s->callee_inc[k], c->e, c->w);
		if (callee == c->node)
			hs_node_exc_add(&s->callee_exc[k], c->e, c->w);
	}
	return 0;
}

struct cc_mapper {
	struct map_builder *b;
	const struct cc_state *s;
	const uint32_t *caller_row, *callee_row;
	double w;
};

static int cc_map_one(void *arg, uint32_t caller, uint32_t callee, int leaf)
{
	struct cc_mapper *m = arg;
	uint32_t r;
	int err = 0;

	if (caller != HS_NO_NODE) {
		r = m->caller_row[frame_key(m->s, caller)];
		if (r != HS_NO_NODE)
			err = map_add(m->b, r, m->w);
	}
	if (!err && !leaf) {
		r = m->callee_row[frame_key(m->s, callee)];
		if (r != HS_NO_NODE)
			err = map_add(m->b, r, m->w);
	}
	return err;
}

struct cc_sort {
	const struct hs_node_exc *inc;
	const struct cc_state *s;
};

static int cmp_cc(const void *pa, const void *pb, void *arg)
{
	const struct cc_sort *c = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	double ia = fabs(c->inc[a].metric), ib = fabs(c->inc[b].metric);
	int d;

	if (ia != ib)
		return ia > ib ? -1 : 1;
	d = strcmp(frame_name(c->s->ct, a), frame_name(c->s->ct, b));
	return d ? d : (a > b) - (a < b);
}

/* Append the rows of one side (callers or callees), sorted; row_of[k] = row. */
static int cc_side(struct hs_view *v, size_t *alloc, const struct cc_state *s,
		   const struct hs_node_exc *exc, const struct hs_node_exc *inc,
		   enum hs_row_section section, size_t limit, uint32_t *row_of,
		   size_t *total)
{
	uint32_t *order = hs_malloc((s->nr_frames + 1) * sizeof(*order));
	struct cc_sort cs = {inc, s};
	size_t k, nr = 0;

	if (!order)
		return -ENOMEM;
	for (k = 0; k <= s->nr_frames; k++) {
		row_of[k] = HS_NO_NODE;
		if (inc[k].first <= inc[k].last)
			order[nr++] = (uint32_t)k;
	}
	qsort_r(order, nr, sizeof(*order), cmp_cc, &cs);
	*total += nr;
	for (k = 0; k < nr && k < limit; k++) {
		struct hs_view_row *r = add_row(v, alloc);
		struct hs_node_inc c;

		if (!r) {
			hs_free(order);
			return -ENOMEM;
		}
		c.metric = inc[order[k]].metric;
		c.count = inc[order[k]].count;
		c.first = inc[order[k]].first;
		c.last = inc[order[k]].last;
		hs__view_row_set(r, &exc[order[k]], &c);
		r->name = frame_name(s->ct, order[k]);
		r->section = section;
		row_of[order[k]] = (uint32_t)(v->nr_rows - 1);
	}
	hs_free(order);
	return 0;
}

static int cc_when(struct hs_view *v, const struct cc_state *s, uint32_t focus_row,
		   const uint32_t *caller_row, const uint32_t *callee_row)
{
	const struct hs_calltree *ct = s->ct;
	struct map_builder b;
	struct cc_mapper m = {&b, s, caller_row, callee_row, 0};
	size_t n;
	int err = map_init(&b, ct, v->nr_rows);

	if (err)
		goto out;
	for (n = 0; n < ct->t.nr; n++) {
		unsigned k;

		if (!own_samples(ct, (uint32_t)n))
			continue;
		k = focus_count(s, (uint32_t)n);
		if (!k)
			continue;
		map_begin(&b, (uint32_t)n);
		m.w = 1.0 / k;
		err = map_add(&b, focus_row, 1);
		if (!err)
			err = cc_walk(s, (uint32_t)n, cc_map_one, &m);
		if (err)
			goto out;
	}
	map_finish(&b, ct);
	err = hs__view_fill_when(v, ct, &b.m, NULL);
out:
	map_release(&b);
	return err;
}

static int build_caller_callee(struct hs_view *v, const struct hs_calltree *ct,
			       const struct hs_view_opts *o, uint32_t focus)
{
	struct cc_state s = {.ct = ct, .focus = focus};
	size_t k, n, alloc = 0, total = 0, limit = o->limit ? o->limit : SIZE_MAX;
	uint32_t *caller_row = NULL, *callee_row = NULL, focus_row;
	struct hs_view_row *r;
	struct hs_node_inc fi;
	int err = -ENOMEM;

	s.nr_frames = hs_source_nr_frames(&ct->f.out);
	k = s.nr_frames + 1;
	s.caller_exc = hs_malloc(k * sizeof(*s.caller_exc));
	s.callee_exc = hs_malloc(k * sizeof(*s.callee_exc));
	s.caller_inc = hs_malloc(k * sizeof(*s.caller_inc));
	s.callee_inc = hs_malloc(k * sizeof(*s.callee_inc));
	caller_row = hs_malloc(k * sizeof(*caller_row));
	callee_row = hs_malloc(k * sizeof(*callee_row));
	if (!s.caller_exc || !s.callee_exc || !s.caller_inc || !s.callee_inc ||
	    !caller_row || !callee_row)
		goto out;
	for (n = 0; n < k; n++) {
		hs_node_exc_clear(&s.caller_exc[n]);
		hs_node_exc_clear(&s.callee_exc[n]);
		hs_node_exc_clear(&s.caller_inc[n]);
		hs_node_exc_clear(&s.callee_inc[n]);
	}
	hs_node_exc_clear(&s.focus_exc);
	hs_node_exc_clear(&s.focus_inc);
	for (n = 0; n < ct->t.nr; n++) {
		struct cc_sum c = {&s, (uint32_t)n, &ct->t.exc[n], 0};
		unsigned nr;

		if (!own_samples(ct, (uint32_t)n))
			continue;
		nr = focus_count(&s, (uint32_t)n);
		if (!nr)
			continue;
		c.w = 1.0 / nr;
		add_inc(&s.focus_inc, c.e, 1);
		cc_walk(&s, (uint32_t)n, cc_sum_one, &c);
	}
	err = cc_side(v, &alloc, &s, s.caller_exc, s.caller_inc, HS_ROW_CALLER, limit,
		      caller_row, &total);
	if (err)
		goto out;
	err = -ENOMEM;
	r = add_row(v, &alloc);
	if (!r)
		goto out;
	fi.metric = s.focus_inc.metric;
	fi.count = s.focus_inc.count;
	fi.first = s.focus_inc.first;
	fi.last = s.focus_inc.last;
	hs__view_row_set(r, &s.focus_exc, &fi);
	r->name = focus == HS_NO_FRAME ? "ROOT" : hs_source_frame_name(&ct->f.out, focus);
	r->section = HS_ROW_FOCUS;
	focus_row = (uint32_t)(v->nr_rows - 1);
	total++;
	err = cc_side(v, &alloc, &s, s.callee_exc, s.callee_inc, HS_ROW_CALLEE, limit,
		      callee_row, &total);
	if (err)
		goto out;
	v->nr_total = total;
	if (!o->no_when)
		err = cc_when(v, &s, focus_row, caller_row, callee_row);
out:
	hs_free(s.caller_exc);
	hs_free(s.callee_exc);
	hs_free(s.caller_inc);
	hs_free(s.callee_inc);
	hs_free(caller_row);
	hs_free(callee_row);
	return err;
}

/* ------------------------------------------------------------------------ */

void hs_view_row_parts(const struct hs_view_row *r, struct hs_row_parts *p)
{
	size_t len = strlen(r->name);
	struct hs_frame_name fn;

	memset(p, 0, sizeof(*p));
	p->module = r->module;
	switch (r->origin) {
	case HS_ORIGIN_GROUP:
		p->group = "plain";
		return;
	case HS_ORIGIN_ENTRY:
		p->group = "entry";
		/* "GROUP <<entry>>" */
		if (r->entry_at + 2 > len)
			return;
		p->entry = r->name + r->entry_at;
		p->entry_len = len - r->entry_at - 2;
		hs_frame_name_split(p->entry, p->entry_len, &fn);
		break;
	default:
		hs_frame_name_split(r->name, len, &fn);
		break;
	}
	p->function = fn.function;
	p->function_len = fn.function_len;
}

/* Each row's origin and module, from the output frame of its name. */
void hs__view_set_origins(struct hs_view *v, const struct hs_calltree *ct)
{
	size_t i, at;
	uint32_t frame;

	for (i = 0; i < v->nr_rows; i++) {
		struct hs_view_row *r = &v->rows[i];

		if (hs_calltree_find_name(ct, r->name, &frame) || frame == HS_NO_FRAME)
			continue;
		r->origin = (uint8_t)hs_filtered_origin(&ct->f, frame, &r->module, &at);
		r->entry_at = (uint32_t)at;
	}
}

double hs_view_pct(const struct hs_view *v, double x)
{
	double r;

	if (!(v->basis > 0))
		return 0;
	r = 100 * x / v->basis;
	return isfinite(r) ? r : x / v->basis * 100; /* 100 * x overflowed */
}

int hs_view_build(struct hs_view *v, const struct hs_calltree *ct,
		  const struct hs_view_opts *opts)
{
	struct hs_view_opts untimed_opts = *opts;
	const struct hs_view_opts *o = opts;
	uint32_t focus = HS_NO_FRAME;
	size_t i;
	int err;

	/* a source without times has no When column to compute */
	if (ct->in->untimed) {
		untimed_opts.no_when = 1;
		o = &untimed_opts;
	}

	memset(v, 0, sizeof(*v));
	hs_source_init(&v->names);
	v->kind = o->kind;
	hs_view_summary_fill(&v->sum, ct);
	v->basis = hs_calltree_basis(ct);
	if (hs_view_kind_has_focus(o->kind)) {
		if (!o->focus || hs_calltree_find_name(ct, o->focus, &focus)) {
			hs_view_release(v);
			return -ENOENT;
		}
		v->focus = hs_strdup(o->focus);
		if (!v->focus) {
			hs_view_release(v);
			return -ENOMEM;
		}
	}
	switch (o->kind) {
	case HS_VIEW_BYNAME:
		err = build_byname(v, ct, o);
		break;
	case HS_VIEW_CALLTREE:
	case HS_VIEW_FLAME:
		err = build_calltree(v, ct, o);
		break;
	case HS_VIEW_CALLERS:
	case HS_VIEW_CALLEES:
		err = build_focus_tree(v, ct, o, focus);
		break;
	case HS_VIEW_CALLER_CALLEE:
		err = build_caller_callee(v, ct, o, focus);
		break;
	default:
		err = -EINVAL;
	}
	if (err) {
		hs_view_release(v);
		return err;
	}
	hs__view_set_origins(v, ct);
	/* depth-first rows: a parent row comes before its children */
	for (i = 0; i < v->nr_rows; i++)
		HS_BUG_ON(v->rows[i].parent != HS_NO_NODE && v->rows[i].parent >= i);
	return 0;
}
