/*
 * routes_counts - /api/counts (docs/json-api.md): how many events the
 * samples of a source stand for (their counts) per time bucket, all of
 * them and those the filter keeps (the time window aside), on buckets
 * the caller names: "start_ms", "bucket_ms" and "buckets", those of its
 * /api/timeline answer, so that the two line up. The GUI's Charts draw
 * allocations and temporary allocations over time from it (the alloc and
 * temporary views count one per allocation, where the timeline gives
 * bytes).
 *
 * A sample counts in the bucket its time falls in; one before the first
 * bucket counts in the first, one after the last in the last. Everything
 * is borrowed from the request's context; the answer is built here.
 */
#include "server/routes.h"
#include "common/alloc.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>

/* A finite number of milliseconds under @key into *@out (@dflt without one). */
static int get_ms(struct hs_route_ctx *c, const char *key, double dflt, double *out)
{
	json_t *v = json_object_get(c->q, key);

	*out = dflt;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v) || !isfinite(json_number_value(v))) {
		hs_diag_set(&c->diag, 0, "%s must be a number of milliseconds", key);
		return -EINVAL;
	}
	*out = json_number_value(v);
	return 0;
}

/* @h as a JSON array of reals, or NULL when out of memory. */
static json_t *array_of(const double *h, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_real(h[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int hs__api_counts(struct hs_route_ctx *c)
{
	const struct hs_calltree *ct;
	const struct hs_stack_source *s;
	double start, width, *all = NULL, *kept = NULL;
	json_t *o = NULL;
	size_t nb, i;
	int err = hs__get_tree(c);

	if (!err)
		err = hs__get_uint(c, "buckets", 400, MAX_BUCKETS, &nb);
	if (!err)
		err = get_ms(c, "start_ms", 0, &start);
	if (!err)
		err = get_ms(c, "bucket_ms", 0, &width);
	if (!err && (!nb || !(width > 0))) {
		hs_diag_set(&c->diag, 0, "buckets and bucket_ms must be above 0");
		err = -EINVAL;
	}
	if (err)
		return hs__reply_err(c, err, "");
	ct = &c->tree->u.tree;
	s = c->src;
	all = hs_calloc(nb, sizeof(*all));
	kept = hs_calloc(nb, sizeof(*kept));
	if (!all || !kept)
		goto out;
	for (i = 0; i < s->nr_samples; i++) {
		double k = floor(((double)s->time[i] / 1e6 - start) / width);
		size_t b = k <= 0 ? 0 : k >= (double)nb ? nb - 1 : (size_t)k;
		uint32_t st = s->stack[i];
		uint32_t to = st == HS_NO_STACK ? ct->f.root_map : ct->f.map[st];

		all[b] += s->count[i];
		if (to != HS_DROPPED)
			kept[b] += s->count[i];
	}
	o = json_object();
	if (!o || json_object_set_new(o, "all", array_of(all, nb)) ||
	    json_object_set_new(o, "filtered", array_of(kept, nb)) ||
	    json_object_set_new(o, "start_ms", json_real(start)) ||
	    json_object_set_new(o, "bucket_ms", json_real(width))) {
		json_decref(o);
		o = NULL;
	}
out:
	hs_free(all);
	hs_free(kept);
	return hs__reply_json(c->resp, o, COMPACT);
}
