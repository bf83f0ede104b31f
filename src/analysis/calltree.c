/*
 * calltree - trees of named nodes with costs, the call tree and Fold%
 * (see calltree.h).
 */
#include "analysis/calltree.h"
#include "common/alloc.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void hs_node_exc_clear(struct hs_node_exc *e)
{
	memset(e, 0, sizeof(*e));
	e->first = INT64_MAX;
	e->last = INT64_MIN;
}

void hs_node_inc_clear(struct hs_node_inc *c)
{
	memset(c, 0, sizeof(*c));
	c->first = INT64_MAX;
	c->last = INT64_MIN;
}

void hs_node_exc_add(struct hs_node_exc *e, const struct hs_node_exc *add, double w)
{
	e->metric += w * add->metric;
	e->count += w * add->count;
	e->fold += w * add->fold;
	e->fold_count += w * add->fold_count;
	if (add->first < e->first)
		e->first = add->first;
	if (add->last > e->last)
		e->last = add->last;
}

int hs_tree_alloc(struct hs_tree *t, size_t nr, const struct hs_stack_source *names)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->names = names;
	t->nr = nr;
	t->frame = hs_malloc(nr * sizeof(*t->frame));
	t->parent = hs_malloc(nr * sizeof(*t->parent));
	t->exc = hs_malloc(nr * sizeof(*t->exc));
	t->inc = hs_malloc(nr * sizeof(*t->inc));
	t->flags = hs_calloc(nr, 1);
	t->child_off = hs_calloc(nr + 1, sizeof(*t->child_off));
	t->child = hs_malloc((nr ? nr : 1) * sizeof(*t->child));
	if (!t->frame || !t->parent || !t->exc || !t->inc || !t->flags || !t->child_off ||
	    !t->child) {
		hs_tree_release(t);
		return -ENOMEM;
	}
	hs_hint_huge(t->frame, nr * sizeof(*t->frame));
	hs_hint_huge(t->parent, nr * sizeof(*t->parent));
	hs_hint_huge(t->exc, nr * sizeof(*t->exc));
	hs_hint_huge(t->inc, nr * sizeof(*t->inc));
	hs_hint_huge(t->flags, nr);
	hs_hint_huge(t->child_off, (nr + 1) * sizeof(*t->child_off));
	hs_hint_huge(t->child, nr * sizeof(*t->child));
	for (i = 0; i < nr; i++)
		hs_node_exc_clear(&t->exc[i]);
	return 0;
}

void hs_tree_release(struct hs_tree *t)
{
	hs_free(t->frame);
	hs_free(t->parent);
	hs_free(t->exc);
	hs_free(t->inc);
	hs_free(t->flags);
	hs_free(t->child_off);
	hs_free(t->child);
	memset(t, 0, sizeof(*t));
}

const char *hs_tree_name(const struct hs_tree *t, uint32_t n)
{
	if (t->frame[n] == HS_NO_FRAME)
		return "ROOT";
	return hs_source_frame_name(t->names, t->frame[n]);
}

/* Inclusive costs from exclusive ones; PRESENT | ALIVE on non-empty nodes. */
static void sum_tree(struct hs_tree *t)
{
	size_t n;

	for (n = 0; n < t->nr; n++) {
		const struct hs_node_exc *e = &t->exc[n];
		struct hs_node_inc *c = &t->inc[n];

		c->metric = e->metric;
		c->count = e->count;
		c->first = e->first;
		c->last = e->last;
	}
	for (n = t->nr; n-- > 1;) {
		const struct hs_node_inc *c = &t->inc[n];
		struct hs_node_inc *up;

		HS_BUG_ON(t->parent[n] >= n); /* parents first: see struct hs_tree */
		if (c->first > c->last)
			continue;
		t->flags[n] |= HS_NODE_PRESENT | HS_NODE_ALIVE;
		up = &t->inc[t->parent[n]];
		up->metric += c->metric;
		up->count += c->count;
		if (c->first < up->first)
			up->first = c->first;
		if (c->last > up->last)
			up->last = c->last;
	}
	if (t->nr)
		t->flags[0] |= HS_NODE_PRESENT | HS_NODE_ALIVE;
}

static int cmp_children(const void *pa, const void *pb, void *arg)
{
	const struct hs_tree *t = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	double ia = fabs(t->inc[a].metric), ib = fabs(t->inc[b].metric);
	int c;

	if (ia != ib)
		return ia > ib ? -1 : 1;
	if (t->inc[a].first != t->inc[b].first)
		return t->inc[a].first < t->inc[b].first ? -1 : 1;
	c = strcmp(hs_tree_name(t, a), hs_tree_name(t, b));
	if (c)
		return c;
	return a < b ? -1 : a > b;
}

/* Sort each node's children (cmp_children()). */
static void sort_children(struct hs_tree *t)
{
	const uint32_t *off = t->child_off;
	size_t n;

	for (n = 0; n < t->nr; n++)
		if (off[n + 1] - off[n] > 1)
			qsort_r(t->child + off[n], off[n + 1] - off[n], sizeof(*t->child),
				cmp_children, t);
}

/* CSR children lists of the alive nodes, optionally sorted. */
static void link_children(struct hs_tree *t, int sort)
{
	uint32_t *off = t->child_off, sum = 0, tmp;
	size_t n;

	memset(off, 0, (t->nr + 1) * sizeof(*off));
	for (n = 1; n < t->nr; n++)
		if (t->flags[n] & HS_NODE_ALIVE)
			off[t->parent[n]]++;
	for (n = 0; n <= t->nr; n++) {
		tmp = off[n];
		off[n] = sum;
		sum += tmp;
	}
	/* fill using off[p] as a cursor, then shift the offsets back */
	for (n = 1; n < t->nr; n++)
		if (t->flags[n] & HS_NODE_ALIVE)
			t->child[off[t->parent[n]]++] = (uint32_t)n;
	for (n = t->nr; n > 0; n--)
		off[n] = off[n - 1];
	off[0] = 0;
	if (sort)
		sort_children(t);
}

int hs_tree_finish(struct hs_tree *t)
{
	sum_tree(t);
	link_children(t, 1);
	return 0;
}

/*
 * Mark nodes none of whose ancestors has the same frame (HS_NODE_TOP): a
 * depth-first walk that counts, per frame, its nodes on the current path.
 */
static int mark_top(struct hs_tree *t)
{
	size_t nr_frames = hs_source_nr_frames(t->names), depth = 0, alloc = 0;
	uint32_t *on_path = hs_calloc(nr_frames + 1, sizeof(*on_path));
	struct {
		uint32_t node, next;
	} *stack = NULL;
	int err = -ENOMEM;

	if (!on_path || HS_GROW(stack, 64, alloc))
		goto out;
	t->flags[0] |= HS_NODE_TOP;
	stack[depth].node = 0;
	stack[depth++].next = t->child_off[0];
	while (depth) {
		uint32_t n = stack[depth - 1].node, c;

		if (stack[depth - 1].next == t->child_off[n + 1]) {
			if (t->frame[n] != HS_NO_FRAME)
				on_path[t->frame[n]]--;
			depth--;
			continue;
		}
		c = t->child[stack[depth - 1].next++];
		if (!on_path[t->frame[c]]++)
			t->flags[c] |= HS_NODE_TOP;
		if (HS_GROW(stack, depth + 1, alloc))
			goto out;
		stack[depth].node = c;
		stack[depth++].next = t->child_off[c];
	}
	err = 0;
out:
	hs_free(on_path);
	hs_free(stack);
	return err;
}

/* By-name inclusive sums over alive TOP nodes, indexed by frame; ROOT last. */
static double *byname_inclusive(const struct hs_tree *t)
{
	size_t nr_frames = hs_source_nr_frames(t->names), n;
	double *sum = hs_calloc(nr_frames + 1, sizeof(*sum));

	if (!sum)
		return NULL;
	for (n = 0; n < t->nr; n++)
		if ((t->flags[n] & (HS_NODE_ALIVE | HS_NODE_TOP)) ==
		    (HS_NODE_ALIVE | HS_NODE_TOP))
			sum[t->frame[n] == HS_NO_FRAME ? nr_frames : t->frame[n]] +=
			    t->inc[n].metric;
	return sum;
}

/*
 * Fold% (§3): one top-down pass; a child whose |Inc| and whose name's
 * pre-fold by-name |Inc| are both below the threshold goes, subtree and
 * all, into its parent's exclusive and folded cost. BROKEN never folds,
 * ROOT never folds, and nothing folds when the total is not positive.
 */
static int fold_small(struct hs_calltree *ct, double pct)
{
	struct hs_tree *t = &ct->t;
	double total = t->inc[0].metric, limit, *byname;
	uint32_t broken = HS_NO_FRAME;
	size_t n;

	ct->fold_pct = NAN;
	if (!(pct > 0) || !(total > 0))
		return 0;
	limit = pct / 100 * total;
	ct->fold_pct = pct;
	ct->fold_threshold = limit;
	byname = byname_inclusive(t);
	if (!byname)
		return -ENOMEM;
	if (hs_strtab_find(&ct->f.out.frames, "BROKEN", 6, &broken))
		broken = HS_NO_FRAME;
	for (n = 1; n < t->nr; n++) {
		uint32_t p = t->parent[n];
		const struct hs_node_inc *c = &t->inc[n];
		struct hs_node_exc *up;

		if (!(t->flags[n] & HS_NODE_PRESENT))
			continue;
		if (!(t->flags[p] & HS_NODE_ALIVE)) {
			t->flags[n] &= (uint8_t)~HS_NODE_ALIVE;
			ct->rep[n] = ct->rep[p];
			continue;
		}
		if (!(fabs(c->metric) < limit) || !(fabs(byname[t->frame[n]]) < limit) ||
		    t->frame[n] == broken)
			continue;
		t->flags[n] &= (uint8_t)~HS_NODE_ALIVE;
		ct->rep[n] = p;
		ct->nr_folded++;
		up = &t->exc[p];
		up->metric += c->metric;
		up->count += c->count;
		up->fold += c->metric;
		up->fold_count += c->count;
		if (c->first < up->first)
			up->first = c->first;
		if (c->last > up->last)
			up->last = c->last;
	}
	hs_free(byname);
	return 0;
}

#define PREFETCH_AHEAD 16

/*
 * The one pass over the samples: each charged to its node's exclusive cost
 * and, when kept, its When histogram. Samples usually come in time order
 * but land on nodes in no order: the node's costs are cache misses, so
 * they are fetched a few samples ahead (and the filter's map entries that
 * name them further ahead still).
 */
static void charge_samples(struct hs_calltree *ct)
{
	const struct hs_stack_source *in = ct->in;
	const struct hs_filtered *f = &ct->f;
	struct hs_node_exc *exc = ct->t.exc;
	double *hist = ct->hist, val[HS_WHEN_BUCKETS];
	size_t i, nr = 0, nr_nodes = ct->t.nr, n_in = in->nr_samples;
	uint8_t bucket[HS_WHEN_BUCKETS], last_bucket = 0;
	unsigned j;

	for (i = 0; i < n_in; i++) {
		uint32_t s, is = in->stack[i], n, k;
		double m, c;
		int64_t t, end;
		struct hs_node_exc *e;

		if (!f->identity && i + 2 * PREFETCH_AHEAD < n_in &&
		    in->stack[i + 2 * PREFETCH_AHEAD] != HS_NO_STACK)
			__builtin_prefetch(&f->map[in->stack[i + 2 * PREFETCH_AHEAD]]);
		if (i + PREFETCH_AHEAD < n_in) {
			uint32_t ahead = in->stack[i + PREFETCH_AHEAD];

			if (ahead != HS_NO_STACK)
				ahead = hs_filtered_map(f, ahead);
			ahead = ahead < HS_DROPPED ? hs_calltree_stack_node(ct, ahead)
						   : HS_NO_NODE;
			if (ahead != HS_NO_NODE) {
				/* a node's costs may straddle two cache lines */
				__builtin_prefetch(&exc[ahead].metric, 1);
				__builtin_prefetch(&exc[ahead].last, 1);
				if (hist)
					__builtin_prefetch(
					    &hist[last_bucket * nr_nodes + ahead], 1);
			}
		}
		if (!hs_filtered_sample(f, i, &s, &m, &c))
			continue;
		nr++;
		n = hs_calltree_stack_node(ct, s);
		/* plan_nodes() kept every stack with a sample */
		HS_BUG_ON(n == HS_NO_NODE);
		k = hs_when_spread(&ct->range, in->time[i], in->metric[i], m, bucket,
				   val);
		if (hist) {
			if (k)
				last_bucket = bucket[0];
			for (j = 0; j < k; j++)
				hist[bucket[j] * nr_nodes + n] += val[j];
		} else {
			for (j = 0; j < k; j++)
				ct->root_hist[bucket[j]] += val[j];
		}
		e = &exc[n];
		e->metric += m;
		e->count += c;
		if (is != HS_NO_STACK && hs_filtered_folded(f, is)) {
			e->fold += m;
			e->fold_count += c;
		}
		t = in->time[i];
		end = hs_when_sample_end(&ct->range, t, in->metric[i]);
		if (t < e->first)
			e->first = t;
		if (end > e->last)
			e->last = end;
	}
	ct->nr_samples = nr;
	/* ROOT's histogram (for the scale) from the nodes' */
	for (j = 0; hist && j < HS_WHEN_BUCKETS; j++) {
		double sum = 0;

		for (i = 0; i < nr_nodes; i++)
			sum += hist[j * nr_nodes + i];
		ct->root_hist[j] = sum;
	}
}

void hs_calltree_release(struct hs_calltree *ct)
{
	hs_tree_release(&ct->t);
	hs_filtered_release(&ct->f);
	hs_free(ct->rep);
	hs_free(ct->hist);
	hs_free(ct->node_of);
	memset(ct, 0, sizeof(*ct));
}

int hs_calltree_filter(const struct hs_stack_source *in, const struct hs_view_params *p,
		       struct hs_filtered *f, struct hs_diag *diag)
{
	struct hs_filter_params fp = p->filter;

	fp.borrow_stacks = 1; /* nodes are read through the accessors */
	fp.start_ms = fp.end_ms = NAN;
	return hs_filter_apply(in, &fp, f, diag);
}

/* The tree of @ct (its filter result in ct->f) with @p's Fold%. */
static int build_on_filter(struct hs_calltree *ct, const struct hs_stack_source *in,
			   const struct hs_view_params *p);

int hs_calltree_build(struct hs_calltree *ct, const struct hs_stack_source *in,
		      const struct hs_view_params *p, struct hs_diag *diag)
{
	struct hs_filter_params fp = p->filter;
	int err;

	memset(ct, 0, sizeof(*ct));
	fp.borrow_stacks = 1; /* nodes are read through the accessors */
	err = hs_filter_apply(in, &fp, &ct->f, diag);
	if (err) {
		memset(ct, 0, sizeof(*ct));
		return err;
	}
	return build_on_filter(ct, in, p);
}

int hs_calltree_build_on(struct hs_calltree *ct, const struct hs_filtered *shared,
			 const struct hs_view_params *p)
{
	return hs_calltree_build_on_room(ct, shared, p, NULL, NULL);
}

/* The build, with its room callback (hs_calltree_build_on_room()). */
static int build_tree(struct hs_calltree *ct, const struct hs_stack_source *in,
		      const struct hs_view_params *p, void (*room)(void *, size_t),
		      void *arg);

int hs_calltree_build_on_room(struct hs_calltree *ct, const struct hs_filtered *shared,
			      const struct hs_view_params *p,
			      void (*room)(void *arg, size_t bytes), void *arg)
{
	memset(ct, 0, sizeof(*ct));
	hs_filtered_borrow(&ct->f, shared, &p->filter);
	return build_tree(ct, shared->in, p, room, arg);
}

static int build_on_filter(struct hs_calltree *ct, const struct hs_stack_source *in,
			   const struct hs_view_params *p)
{
	return build_tree(ct, in, p, NULL, NULL);
}

/* Bytes a node of @ct takes (hist: whether it keeps When histograms). */
static size_t node_bytes(int hist)
{
	return sizeof(uint32_t) * 5 /* frame, parent, child_off, child, rep */ + 1 +
	       sizeof(struct hs_node_exc) + sizeof(struct hs_node_inc) +
	       (hist ? HS_WHEN_BUCKETS * sizeof(double) : 0);
}

size_t hs_calltree_memory(const struct hs_calltree *ct)
{
	return ct->t.nr * node_bytes(ct->hist != NULL) +
	       (ct->node_of ? hs_filtered_nr_stacks(&ct->f) * sizeof(*ct->node_of) : 0);
}

/*
 * Whether the filter or the window may leave stacks without any sample:
 * IncPats, ExcPats or a time window (patterns that only rename keep a
 * sample on every stack that had one).
 */
static int may_drop(const struct hs_calltree *ct, const struct hs_view_params *p)
{
	return ct->f.has_window || (p->filter.inc && *p->filter.inc) ||
	       (p->filter.exc && *p->filter.exc);
}

/*
 * The stacks that get a node (ct->node_of): when a quarter of the output
 * stacks or more have no sample that passes, only those that have one,
 * or a callee that has, in the stacks' order (so parents still come
 * first, and every loop over nodes meets them in the order it would in
 * the full tree: the same sums). A pass over the samples and one over
 * the stacks; ct->node_of stays NULL otherwise. *@nr_nodes: the tree's
 * nodes, ROOT included. 0 or -ENOMEM.
 */
static int plan_nodes(struct hs_calltree *ct, const struct hs_view_params *p,
		      size_t *nr_nodes)
{
	const struct hs_filtered *f = &ct->f;
	const struct hs_stack_source *in = ct->in;
	size_t nr = hs_filtered_nr_stacks(f), i, kept = 0;
	uint32_t s, next = 1;
	uint8_t *used;

	*nr_nodes = nr + 1;
	if (p->all_nodes || !may_drop(ct, p) || !nr)
		return 0;
	used = hs_calloc(nr, 1);
	if (!used)
		return -ENOMEM;
	hs_hint_huge(used, nr);
	for (i = 0; i < in->nr_samples; i++) {
		double m, c;

		if (!f->identity && i + PREFETCH_AHEAD < in->nr_samples &&
		    in->stack[i + PREFETCH_AHEAD] != HS_NO_STACK)
			__builtin_prefetch(&f->map[in->stack[i + PREFETCH_AHEAD]]);
		if (hs_filtered_sample(f, i, &s, &m, &c) && s != HS_NO_STACK)
			used[s] = 1;
	}
	for (i = nr; i-- > 0;) {
		if (!used[i])
			continue;
		kept++;
		s = hs_filtered_stack_caller(f, (uint32_t)i);
		if (s != HS_NO_STACK) {
			HS_BUG_ON(s >= i); /* callers are interned first */
			used[s] = 1;
		}
	}
	if (kept > nr - nr / 4) {
		hs_free(used);
		return 0;
	}
	ct->node_of = hs_malloc(nr * sizeof(*ct->node_of));
	if (!ct->node_of) {
		hs_free(used);
		return -ENOMEM;
	}
	hs_hint_huge(ct->node_of, nr * sizeof(*ct->node_of));
	for (i = 0; i < nr; i++)
		ct->node_of[i] = used[i] ? next++ : HS_NO_NODE;
	hs_free(used);
	*nr_nodes = next;
	return 0;
}

static int build_tree(struct hs_calltree *ct, const struct hs_stack_source *in,
		      const struct hs_view_params *p, void (*room)(void *, size_t),
		      void *arg)
{
	const struct hs_filtered *f = &ct->f;
	size_t n, nr_nodes, nr_stacks = hs_filtered_nr_stacks(f);
	int err, hist;

	ct->in = in;
	ct->fold_pct = NAN;
	hs_when_range_init(
	    &ct->range, in,
	    isfinite(p->filter.start_ms) ? p->filter.start_ms : p->when_start_ms,
	    isfinite(p->filter.end_ms) ? p->filter.end_ms : p->when_end_ms);
	err = plan_nodes(ct, p, &nr_nodes);
	if (err)
		goto fail;
	hist = !in->untimed &&
	       (p->node_hist > 0 || (p->node_hist == 0 &&
				     nr_nodes <= HS_NODE_HIST_BUDGET(in->nr_samples) /
						     (HS_WHEN_BUCKETS * sizeof(double))));
	if (room)
		room(arg, nr_nodes * node_bytes(hist));
	err = hs_tree_alloc(&ct->t, nr_nodes, &f->out);
	if (err)
		goto fail;
	err = -ENOMEM;
	ct->rep = hs_malloc(ct->t.nr * sizeof(*ct->rep));
	if (!ct->rep)
		goto fail;
	hs_hint_huge(ct->rep, ct->t.nr * sizeof(*ct->rep));
	if (hist) {
		ct->hist = hs_calloc(ct->t.nr * HS_WHEN_BUCKETS, sizeof(*ct->hist));
		if (!ct->hist)
			goto fail;
	}
	ct->t.frame[0] = HS_NO_FRAME;
	ct->t.parent[0] = HS_NO_NODE;
	ct->rep[0] = 0;
	for (n = 0; n < nr_stacks; n++) {
		uint32_t caller = hs_filtered_stack_caller(f, (uint32_t)n);
		uint32_t node = hs_calltree_stack_node(ct, (uint32_t)n);

		if (node == HS_NO_NODE)
			continue;
		ct->t.frame[node] = hs_filtered_stack_frame(f, (uint32_t)n);
		ct->t.parent[node] = hs_calltree_stack_node(ct, caller);
		ct->rep[node] = node;
	}
	charge_samples(ct);
	sum_tree(&ct->t);
	link_children(&ct->t, 0);
	err = mark_top(&ct->t);
	if (err)
		goto fail;
	err = fold_small(ct, p->fold_pct);
	if (err)
		goto fail;
	/* the alive nodes changed only if Fold% folded some */
	if (ct->nr_folded)
		link_children(&ct->t, 1);
	else
		sort_children(&ct->t);
	return 0;
fail:
	hs_calltree_release(ct);
	return err;
}

void hs_calltree_when_bounds(const struct hs_calltree *ct, double *start_ms,
			     double *end_ms)
{
	*start_ms = (double)ct->range.start / 1e6;
	*end_ms = (double)ct->range.end / 1e6;
}

double hs_calltree_basis(const struct hs_calltree *ct)
{
	return fabs(ct->t.inc[0].metric);
}

int hs_calltree_find_name(const struct hs_calltree *ct, const char *name, uint32_t *frame)
{
	if (!strcmp(name, "ROOT")) {
		*frame = HS_NO_FRAME;
		return 0;
	}
	return hs_strtab_find(&ct->f.out.frames, name, strlen(name), frame);
}

int hs_calltree_byname(const struct hs_calltree *ct, struct hs_node_exc **rows_exc,
		       struct hs_node_inc **rows_inc)
{
	const struct hs_tree *t = &ct->t;
	size_t nr_frames = hs_source_nr_frames(t->names), n;
	struct hs_node_exc *re = hs_malloc((nr_frames + 1) * sizeof(*re));
	struct hs_node_inc *ri = hs_malloc((nr_frames + 1) * sizeof(*ri));

	if (!re || !ri) {
		hs_free(re);
		hs_free(ri);
		return -ENOMEM;
	}
	for (n = 0; n <= nr_frames; n++) {
		hs_node_exc_clear(&re[n]);
		hs_node_inc_clear(&ri[n]);
	}
	for (n = 0; n < t->nr; n++) {
		size_t k = t->frame[n] == HS_NO_FRAME ? nr_frames : t->frame[n];
		const struct hs_node_inc *c = &t->inc[n];

		if (!(t->flags[n] & HS_NODE_ALIVE))
			continue;
		hs_node_exc_add(&re[k], &t->exc[n], 1);
		if (!(t->flags[n] & HS_NODE_TOP))
			continue;
		ri[k].metric += c->metric;
		ri[k].count += c->count;
		if (c->first < ri[k].first)
			ri[k].first = c->first;
		if (c->last > ri[k].last)
			ri[k].last = c->last;
	}
	*rows_exc = re;
	*rows_inc = ri;
	return 0;
}

/*
 * Add a sample's @k bucket values to the rows of slot @slot and of the
 * slots above it (@hist: @nb buckets from @b0 of @nr rows each).
 */
static void add_chain(const struct hs_when_link *chain, uint32_t slot, double *hist,
		      size_t nr, unsigned b0, unsigned nb, const uint8_t *bucket,
		      const double *val, unsigned k)
{
	unsigned j;

	for (; slot != HS_NO_NODE; slot = chain[slot].up)
		for (j = 0; j < k; j++)
			if (bucket[j] - b0 < nb)
				hist[(bucket[j] - b0) * nr + chain[slot].row] += val[j];
}

/* hs_calltree_when() from the nodes' histograms: one pass over the nodes. */
static void nodes_when(const struct hs_calltree *ct, const struct hs_when_map *m,
		       unsigned b0, unsigned nb, double *hist)
{
	size_t nr = m->chain ? m->nr_rows : m->nr_slots, nn = ct->t.nr, n;
	uint32_t b, e;
	uint8_t one = 0;

	for (b = 0; b < nb; b++) {
		const double *h = ct->hist + (b0 + b) * nn;
		double *out = hist + b * nr;

		for (n = 0; n < nn; n++) {
			uint32_t r;

			if (h[n] == 0)
				continue;
			if (m->chain) {
				if (m->slot_of[n] != HS_NO_NODE)
					add_chain(m->chain, m->slot_of[n], out, nr, 0, 1,
						  &one, &h[n], 1);
				continue;
			}
			if (m->slot_of) {
				if (m->slot_of[n] != HS_NO_NODE)
					out[m->slot_of[n]] += h[n];
				continue;
			}
			r = ct->rep[n];
			for (e = m->off[r]; e < m->off[r + 1]; e++)
				out[m->ent[e].slot] += m->ent[e].w * h[n];
		}
	}
}

/* The node of sample @i (the filter's map, no window), or HS_NO_NODE. */
static uint32_t sample_node(const struct hs_calltree *ct, size_t i)
{
	uint32_t s = ct->in->stack[i];

	if (s == HS_NO_STACK)
		return 0;
	s = hs_filtered_map(&ct->f, s);
	return s < HS_DROPPED ? hs_calltree_stack_node(ct, s) : HS_NO_NODE;
}

/* Whether any of the @k buckets is in [@b0, @b0 + @nb). */
static int in_block(const uint8_t *bucket, unsigned k, unsigned b0, unsigned nb)
{
	unsigned j;

	for (j = 0; j < k; j++)
		if (bucket[j] - b0 < nb)
			return 1;
	return 0;
}

int hs_calltree_when(const struct hs_calltree *ct, const struct hs_when_map *m,
		     unsigned b0, unsigned nb, double *hist, double *root_hist)
{
	const struct hs_stack_source *in = ct->in;
	size_t nr = m->chain ? m->nr_rows : m->nr_slots, i, r;
	uint8_t bucket[HS_WHEN_BUCKETS];
	double val[HS_WHEN_BUCKETS];

	HS_BUG_ON(!nb || b0 + nb > HS_WHEN_BUCKETS);
	if (nr)
		memset(hist, 0, nb * nr * sizeof(*hist));
	if (root_hist)
		memcpy(root_hist, ct->root_hist, sizeof(ct->root_hist));
	if (ct->hist) {
		nodes_when(ct, m, b0, nb, hist);
		goto forest;
	}
	for (i = 0; i < in->nr_samples; i++) {
		uint32_t s, n, e, k, j;
		double metric, count;

		/*
		 * Fetch what the samples ahead will read, a stage each: the
		 * filter's map entry, then the node's slot, then the slot's
		 * link, then the next link; each stage reads what the one
		 * before fetched. ByName's
		 * slots are millions (a topmost node each): each read is a
		 * cache miss otherwise. (In the loop: GCC drops a function
		 * that only prefetches.)
		 */
		if (m->slot_of && i + 3 * PREFETCH_AHEAD < in->nr_samples) {
			s = in->stack[i + 3 * PREFETCH_AHEAD];
			if (!ct->f.identity && s != HS_NO_STACK)
				__builtin_prefetch(&ct->f.map[s]);
			n = sample_node(ct, i + 2 * PREFETCH_AHEAD);
			if (n != HS_NO_NODE)
				__builtin_prefetch(&m->slot_of[n]);
			n = m->chain ? sample_node(ct, i + PREFETCH_AHEAD) : HS_NO_NODE;
			if (n != HS_NO_NODE && m->slot_of[n] != HS_NO_NODE)
				__builtin_prefetch(&m->chain[m->slot_of[n]]);
			n = m->chain ? sample_node(ct, i + PREFETCH_AHEAD / 2)
				     : HS_NO_NODE;
			if (n != HS_NO_NODE && m->slot_of[n] != HS_NO_NODE &&
			    m->chain[m->slot_of[n]].up != HS_NO_NODE)
				__builtin_prefetch(&m->chain[m->chain[m->slot_of[n]].up]);
		}
		/*
		 * A sample none of whose buckets is in the block is skipped
		 * before the filter's map (the buckets do not depend on the
		 * filtered metric).
		 */
		if (nb < HS_WHEN_BUCKETS) {
			k = hs_when_spread(&ct->range, in->time[i], in->metric[i],
					   in->metric[i], bucket, val);
			if (!in_block(bucket, k, b0, nb))
				continue;
		}
		if (!hs_filtered_sample(&ct->f, i, &s, &metric, &count))
			continue;
		n = hs_calltree_stack_node(ct, s);
		k = hs_when_spread(&ct->range, in->time[i], in->metric[i], metric, bucket,
				   val);
		if (m->chain) {
			uint32_t slot = m->slot_of[n];

			if (slot != HS_NO_NODE)
				add_chain(m->chain, slot, hist, nr, b0, nb, bucket, val,
					  k);
			continue;
		}
		if (m->slot_of) {
			uint32_t slot = m->slot_of[n];

			if (slot != HS_NO_NODE)
				for (j = 0; j < k; j++)
					if (bucket[j] - b0 < nb)
						hist[(bucket[j] - b0) * nr + slot] +=
						    val[j];
			continue;
		}
		n = ct->rep[n];
		for (e = m->off[n]; e < m->off[n + 1]; e++) {
			uint32_t slot = m->ent[e].slot;
			double w = m->ent[e].w;

			for (j = 0; j < k; j++)
				if (bucket[j] - b0 < nb)
					hist[(bucket[j] - b0) * nr + slot] += w * val[j];
		}
	}
forest:
	if (!m->slot_parent || m->chain)
		return 0;
	for (r = nr; r-- > 0;) {
		uint32_t p = m->slot_parent[r], b;

		if (p == HS_NO_NODE)
			continue;
		for (b = 0; b < nb; b++)
			hist[b * nr + p] += hist[b * nr + r];
	}
	return 0;
}
