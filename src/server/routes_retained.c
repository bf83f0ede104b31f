/*
 * routes_retained - /api/retained: the retained sizes behind the GUI's
 * Retained column of a heap snapshot's heap view (docs/json-api.md), by
 * name for ByName and by row for CallTree.
 *
 * ByName: a snapshot's "retained" source (heapgraph/graph.h) has the
 * dominator chain as each object's stack, so the inclusive bytes of a
 * name in its ByName view (which counts the topmost occurrence on each
 * stack only) are what would be freed if every object of that name were
 * gone: its retained size. The same patterns (GroupPats, FoldPats, ...)
 * are applied as to the heap view asked about, so that the names agree.
 *
 * CallTree: the "heap-retained" source has the heap source's stacks, id
 * for id, with each stack's retained bytes (those of the objects whose
 * spanning-tree path ends there) as its one sample, and its samples in
 * the heap source's order. Each sample goes where the heap view's call
 * tree (the cached one, patterns and Fold% applied) charged the heap
 * sample of that stack; a row's value is the sum over its node. That sum
 * is exact while no object of the node dominates another, which holds
 * unless the patterns or Fold% merged a stack with its caller's into one
 * node (FoldPats, a group that collapses a chain, a folded subtree):
 * such a node answers null.
 *
 * Any other source answers null. The ByName answer (a call tree of the
 * retained source, 0.4 s on 10M objects) is built once per heap view
 * (its call tree's key) and kept in the cache as text, so that requests
 * running at once on the server's workers share one computation; the
 * CallTree answer (one pass over the stacks and the rows up to the
 * largest id asked for) is built on each call from the heap view that
 * the request holds (c->hold, cache.h). The retained sources are loaded
 * once, through hs_app_load_source().
 */
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "server/routes.h"
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* {"retained": {NAME: BYTES, ...}} for the retained source's ByName rows. */
static json_t *retained_by_name(const struct hs_stack_source *src,
				const struct hs_view_params *p, struct hs_diag *diag,
				int *err)
{
	struct hs_view_opts o = {.kind = HS_VIEW_BYNAME, .no_when = 1};
	struct hs_calltree ct;
	struct hs_view v;
	json_t *names;
	size_t i;

	*err = hs_calltree_build(&ct, src, p, diag);
	if (*err)
		return NULL;
	*err = hs_view_build(&v, &ct, &o);
	if (*err) {
		hs_calltree_release(&ct);
		return NULL;
	}
	names = json_object();
	for (i = 0; names && i < v.nr_rows; i++)
		if (json_object_set_new(names, v.rows[i].name,
					json_real(v.rows[i].inc))) {
			json_decref(names);
			names = NULL;
		}
	if (!names)
		*err = -ENOMEM;
	hs_view_release(&v);
	hs_calltree_release(&ct);
	return names;
}

/* The call-tree node that heap stack @k went to, or HS_NO_NODE (dropped). */
static uint32_t node_of_stack(const struct hs_calltree *ct, uint32_t k)
{
	uint32_t m = hs_filtered_map(&ct->f, k), n;

	if (m == HS_DROPPED)
		return HS_NO_NODE;
	n = hs_calltree_stack_node(ct, m);
	return n == HS_NO_NODE ? HS_NO_NODE : ct->rep[n];
}

/* Whether @a and @b have the same stacks and samples (on the same stacks). */
static int same_stacks(const struct hs_stack_source *a, const struct hs_stack_source *b)
{
	return a->nr_stacks == b->nr_stacks && a->nr_samples == b->nr_samples &&
	       hs_source_nr_frames(a) == hs_source_nr_frames(b) &&
	       (!a->nr_stacks || (!memcmp(a->stack_frame, b->stack_frame,
					  a->nr_stacks * sizeof(*a->stack_frame)) &&
				  !memcmp(a->stack_caller, b->stack_caller,
					  a->nr_stacks * sizeof(*a->stack_caller)))) &&
	       (!a->nr_samples ||
		!memcmp(a->stack, b->stack, a->nr_samples * sizeof(*a->stack)));
}

/*
 * Each node's retained bytes into @bytes, and into @merged whether the
 * node holds a stack and its caller's (its sum is then not exact).
 */
static void retained_by_node(const struct hs_calltree *ct,
			     const struct hs_stack_source *hr, double *bytes,
			     uint8_t *merged)
{
	const struct hs_stack_source *in = ct->in;
	size_t i;

	for (i = 0; i < in->nr_stacks; i++) {
		uint32_t n = node_of_stack(ct, (uint32_t)i), up = in->stack_caller[i];

		if (n != HS_NO_NODE && up != HS_NO_STACK && node_of_stack(ct, up) == n)
			merged[n] = 1;
	}
	for (i = 0; i < in->nr_samples; i++) {
		uint32_t s;
		double m, cnt;

		if (hs_filtered_sample(&ct->f, i, &s, &m, &cnt))
			bytes[ct->rep[hs_calltree_stack_node(ct, s)]] += hr->metric[i];
	}
}

/*
 * [BYTES or null, ...] for the CallTree rows that "ids" names (at most
 * MAX_ROWS_PAGE), in that order; json null when the heap-retained source
 * does not match the heap view's. NULL with *@err or a 400 reply sent
 * (*@replied).
 */
static json_t *retained_by_row(struct hs_route_ctx *c, const struct hs_stack_source *hr,
			       int *err, int *replied)
{
	json_t *ids = json_object_get(c->q, "ids"), *out = NULL;
	const struct hs_calltree *ct;
	const uint32_t *node_of_row;
	size_t i, n;
	double *bytes = NULL;
	uint8_t *merged = NULL;

	/* the CallTree in parts: its rows' nodes (view_part.h) */
	*err = hs__get_parts(c);
	if (*err)
		return NULL;
	ct = &c->tree->u.tree;
	node_of_row = c->view->u.parts.node_of_row;
	n = json_is_array(ids) ? json_array_size(ids) : MAX_ROWS_PAGE + 1;
	for (i = 0; n <= MAX_ROWS_PAGE && i < n; i++) {
		json_t *id = json_array_get(ids, i);

		if (!json_is_integer(id) || json_integer_value(id) < 0 ||
		    (size_t)json_integer_value(id) >= hs__view_rows(c))
			break;
	}
	if (n > MAX_ROWS_PAGE || i < n) {
		*replied = 1;
		hs__reply_error(c->resp, 400,
				"ids must be an array of at most %d row ids",
				MAX_ROWS_PAGE);
		return NULL;
	}
	if (!same_stacks(ct->in, hr))
		return json_null();
	*err = -ENOMEM;
	bytes = hs_calloc(ct->t.nr + 1, sizeof(*bytes));
	merged = hs_calloc(ct->t.nr + 1, 1);
	if (!bytes || !merged)
		goto out;
	retained_by_node(ct, hr, bytes, merged);
	out = json_array();
	for (i = 0; out && i < n; i++) {
		uint32_t node = node_of_row[json_integer_value(json_array_get(ids, i))];

		if (json_array_append_new(out, merged[node] ? json_null()
							    : json_real(bytes[node]))) {
			json_decref(out);
			out = NULL;
		}
	}
	if (out)
		*err = 0;
out:
	hs_free(bytes);
	hs_free(merged);
	return out;
}

/* The answer for ByName: {"retained": {NAME: BYTES, ...}} as text, once. */
static int build_by_name(struct hs_route_ctx *c, void *arg, char **text, size_t *len)
{
	const struct hs_app_source *as = arg;
	json_t *names, *o;
	int err;

	names = retained_by_name(&as->src, &c->query.params.vp, &c->diag, &err);
	if (err)
		return err;
	o = json_pack("{s:o}", "retained", names);
	err = hs__json_text(o, text, len);
	json_decref(o);
	if (err)
		hs_diag_set(&c->diag, 0, "out of memory");
	return err;
}

int hs__api_retained(struct hs_route_ctx *c)
{
	const struct hs_api_src *s = &c->query.src;
	const struct hs_cache_entry *e;
	struct hs_app_source *heap, *as;
	int calltree = c->query.view.kind == HS_VIEW_CALLTREE;
	struct hs_buf key = HS_BUF_INIT;
	json_t *names = NULL, *o;
	int err = 0, replied = 0;

	/* only a trace's heap view, as it is (no diff, no drill step) */
	heap = s->kind == HS_API_SRC_TRACE ? hs_app_source(c->app, s->trace, s->source)
					   : NULL;
	as =
	    heap && !s->nr_steps && !strcmp(heap->name, "heap")
		? hs_app_source(c->app, s->trace, calltree ? "heap-retained" : "retained")
		: NULL;
	/* loaded once (app.h); built from the held heap view (c->hold) */
	if (as)
		err = hs_app_load_source(c->app, s->trace, as, &c->diag);
	if (as && !err && calltree) {
		names = retained_by_row(c, &as->src, &err, &replied);
	} else if (as && !err) {
		/* the patterns are the heap view's: its call tree's key has them */
		if (hs_buf_addf(&key, "retained\n%s", c->query.tree_key))
			err = -ENOMEM;
		if (!err)
			err = hs__cached_text(c, key.s, build_by_name, as, &e);
		hs_buf_release(&key);
		if (!err)
			return hs__reply_text_entry(c->resp, e);
	}
	if (replied)
		return 0;
	if (err)
		return hs__reply_err(c, err, "");
	o = json_pack("{s:o?}", "retained", names);
	if (!o)
		return hs__reply_error(c->resp, 503, "out of memory");
	return hs__reply_json(c->resp, o, COMPACT);
}
