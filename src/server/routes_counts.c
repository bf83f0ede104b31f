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
 * is borrowed from the request's context (the call tree held by the
 * request, cache.h); the answer's text is built once per call tree and
 * buckets and kept in the cache, so that requests for the same counts
 * share one computation.
 */
#include "server/routes.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The buckets an /api/counts request names (its cache key has them). */
struct counts_buckets {
	size_t nb;
	double start, width;
};

/* The counts' JSON text over the buckets @arg (struct counts_buckets). */
static int build_counts(struct hs_route_ctx *c, void *arg, char **text, size_t *len)
{
	const struct counts_buckets *cb = arg;
	const struct hs_calltree *ct = &c->tree->u.tree;
	const struct hs_stack_source *s = c->src;
	double *all = NULL, *kept = NULL;
	json_t *o = NULL;
	size_t nb = cb->nb, i;
	int err = -ENOMEM;

	all = hs_calloc(nb, sizeof(*all));
	kept = hs_calloc(nb, sizeof(*kept));
	if (!all || !kept)
		goto out;
	for (i = 0; i < s->nr_samples; i++) {
		double k = floor(((double)s->time[i] / 1e6 - cb->start) / cb->width);
		size_t b = k <= 0 ? 0 : k >= (double)nb ? nb - 1 : (size_t)k;
		uint32_t st = s->stack[i];
		uint32_t to =
		    st == HS_NO_STACK ? ct->f.root_map : hs_filtered_map(&ct->f, st);

		all[b] += s->count[i];
		if (to != HS_DROPPED)
			kept[b] += s->count[i];
	}
	o = json_object();
	if (!o || json_object_set_new(o, "all", array_of(all, nb)) ||
	    json_object_set_new(o, "filtered", array_of(kept, nb)) ||
	    json_object_set_new(o, "start_ms", json_real(cb->start)) ||
	    json_object_set_new(o, "bucket_ms", json_real(cb->width)))
		goto out;
	err = hs__json_text(o, text, len);
out:
	if (err)
		hs_diag_set(&c->diag, 0, "out of memory");
	json_decref(o);
	hs_free(all);
	hs_free(kept);
	return err;
}

/*
 * The counts, built once per call tree (a source with its filter and time
 * range) and buckets, held in the cache as the timeline is (routes_time.c).
 */
int hs__api_counts(struct hs_route_ctx *c)
{
	const struct hs_cache_entry *e;
	struct hs_buf key = HS_BUF_INIT;
	struct counts_buckets cb;
	int err = hs__get_tree(c);

	if (!err)
		err = hs__get_uint(c, "buckets", 400, MAX_BUCKETS, &cb.nb);
	if (!err)
		err = get_ms(c, "start_ms", 0, &cb.start);
	if (!err)
		err = get_ms(c, "bucket_ms", 0, &cb.width);
	if (!err && (!cb.nb || !(cb.width > 0))) {
		hs_diag_set(&c->diag, 0, "buckets and bucket_ms must be above 0");
		err = -EINVAL;
	}
	if (!err && hs_buf_addf(&key, "counts\nbuckets %zu\nstart %.17g\nwidth %.17g\n%s",
				cb.nb, cb.start, cb.width, c->query.tree_key))
		err = -ENOMEM;
	if (!err)
		err = hs__cached_text(c, key.s, build_counts, &cb, &e);
	hs_buf_release(&key);
	if (err)
		return hs__reply_err(c, err, "");
	return hs__reply_text_entry(c->resp, e);
}
