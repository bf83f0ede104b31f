/*
 * routes_retained - /api/retained: the retained size of each name of a
 * heap snapshot's heap view, for the GUI's Retained column
 * (docs/json-api.md).
 *
 * A snapshot's "retained" source (heapgraph/graph.h) has the dominator
 * chain as each object's stack, so the inclusive bytes of a name in its
 * ByName view (which counts the topmost occurrence on each stack only)
 * are what would be freed if every object of that name were gone: its
 * retained size. The same patterns (GroupPats, FoldPats, ...) are applied
 * as to the heap view asked about, so that the names agree. Any other
 * source answers null. The answer is built on each call (a call tree of
 * the retained source: 0.4 s on 10M objects) and not cached.
 */
#include "analysis/views.h"
#include "server/routes.h"
#include <errno.h>
#include <jansson.h>
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

int hs__api_retained(struct hs_route_ctx *c)
{
	const struct hs_api_src *s = &c->query.src;
	struct hs_app_source *heap, *as;
	json_t *names = NULL, *o;
	int err = 0;

	/* only a trace's heap view, as it is (no diff, no drill step) */
	heap = s->kind == HS_API_SRC_TRACE ? hs_app_source(c->app, s->trace, s->source)
					   : NULL;
	as = heap && !s->nr_steps && !strcmp(heap->name, "heap")
		 ? hs_app_source(c->app, s->trace, "retained")
		 : NULL;
	if (as)
		err = hs_app_load_source(c->app, s->trace, as, &c->diag);
	if (as && !err)
		names = retained_by_name(&as->src, &c->query.params.vp, &c->diag, &err);
	if (err)
		return hs__reply_err(c, err, "");
	o = json_pack("{s:o?}", "retained", names);
	if (!o)
		return hs__reply_error(c->resp, 503, "out of memory");
	return hs__reply_json(c->resp, o, COMPACT);
}
