/*
 * routes - the JSON API under /api/ (docs/json-api.md): the route table;
 * for every route, the query of a request (params.h) and the sources,
 * call trees and views it needs (cached, cache.h); the readers of request
 * keys and the row objects the other routes*.c files answer with
 * (routes.h says which file serves what).
 */
#include "analysis/diff.h"
#include "analysis/memviews.h"
#include "analysis/query.h"
#include "server/routes.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/utf8.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * @o's compact text (NULL: out of memory) as an hs_malloc()ed copy in
 * *@text, for the cache to own. 0 or -ENOMEM.
 */
int hs__json_text(const json_t *o, char **text, size_t *len)
{
	char *s = o ? json_dumps(o, COMPACT) : NULL;

	*text = NULL;
	if (s) {
		*len = strlen(s);
		*text = hs_malloc(*len + 1);
		if (*text)
			memcpy(*text, s, *len + 1);
		free(s);
	}
	return *text ? 0 : -ENOMEM;
}

/* Reply with @o (taken), dumped with @flags. */
int hs__reply_json(struct hs_response *resp, json_t *o, size_t flags)
{
	char *s = o ? json_dumps(o, flags) : NULL, *data;
	size_t len;

	json_decref(o);
	if (!s)
		return hs__reply_error(resp, 503, "out of memory");
	len = strlen(s);
	/*
	 * json_dumps() allocates with malloc(), which hs_free() frees:
	 * grown in place for the newline rather than copied, so a big
	 * answer is not held twice
	 */
	data = hs_realloc(s, len + 2);
	if (!data) {
		free(s);
		return hs__reply_error(resp, 503, "out of memory");
	}
	hs_response_release(resp);
	resp->status = 200;
	resp->type = "application/json";
	data[len++] = '\n';
	data[len] = '\0';
	resp->data = data;
	resp->len = len;
	resp->owned = 1;
	return 0;
}

/* Reply with the error of an engine call. */
int hs__reply_err(struct hs_route_ctx *c, int err, const char *what)
{
	const char *msg = c->diag.set ? c->diag.msg : strerror(-err);

	switch (err) {
	case -EINVAL:
		hs__reply_error(c->resp, 400, "%s%s", what, msg);
		break;
	case -ENOENT:
		hs__reply_error(c->resp, 404, "%s%s", what, msg);
		break;
	case -E2BIG:
		hs__reply_error(c->resp, 413, "%s%s", what, msg);
		break;
	case -ECANCELED:
		hs__reply_error(c->resp, 409, "%s%s", what, msg);
		break;
	default:
		hs__reply_error(c->resp, 503, "%s%s", what, strerror(-err));
		break;
	}
	return 0;
}

/* ---- sources, trees and views through the cache ---- */

/* -ECANCELED when the client has cancelled the request since (app.h). */
static int check_superseded(struct hs_route_ctx *c)
{
	const struct hs_request *req = c->req;

	if (req->superseded && req->superseded(req->ctx)) {
		hs_diag_set(&c->diag, 0, "cancelled by the client");
		return -ECANCELED;
	}
	return 0;
}

/*
 * Whether @s stands on a heap trace's peak view: the time range chose its
 * blocks (allocated before the range or not), so no view of it filters
 * by time (as `heapscope report --source peak` does).
 */
static int on_peak(const struct hs_app *a, const struct hs_api_src *s)
{
	const struct hs_app_source *as;

	if (s->kind != HS_API_SRC_TRACE ||
	    !hs_format_has(a->traces[s->trace].fmt, HS_FORMAT_HAS_HEAP))
		return 0;
	as = hs_app_source(a, s->trace, s->source);
	return as && !strcmp(as->name, "peak");
}

/* @p without its time window when @s stands on a peak view. */
static struct hs_filter_params window_for(const struct hs_app *a,
					  const struct hs_api_src *s,
					  const struct hs_filter_params *p)
{
	struct hs_filter_params f = *p;

	if (on_peak(a, s))
		f.start_ms = f.end_ms = NAN;
	return f;
}

/*
 * The memory view a heap trace's source @s is built from a time range
 * for (leaks, peak), in *@kind; 0 when it is not one (or no bound is set
 * in @win).
 */
static int ranged_view(const struct hs_app *a, const struct hs_api_src *s,
		       const struct hs_filter_params *win, enum hs_memview_kind *kind)
{
	const struct hs_app_source *as;

	if (s->kind != HS_API_SRC_TRACE ||
	    !hs_format_has(a->traces[s->trace].fmt, HS_FORMAT_HAS_HEAP) || !win ||
	    (!isfinite(win->start_ms) && !isfinite(win->end_ms)))
		return 0;
	as = hs_app_source(a, s->trace, s->source);
	return as && !hs_memview_parse(as->name, kind) &&
	       (*kind == HS_MEM_LEAKS || *kind == HS_MEM_PEAK);
}

/*
 * The cache key of @s with its first @k steps: keys[k], and the range
 * when the chain stands on a view built from one.
 */
static int src_key(const struct hs_app *a, const struct hs_api_src *s, size_t k,
		   const struct hs_filter_params *win, struct hs_buf *key)
{
	enum hs_memview_kind kind;

	hs_buf_reset(key);
	if (hs_buf_adds(key, s->keys[k]))
		return -ENOMEM;
	if (ranged_view(a, s, win, &kind) &&
	    hs_buf_addf(key, "\nrange %.17g %.17g", win->start_ms, win->end_ms))
		return -ENOMEM;
	return 0;
}

/*
 * A trace's source (k = 0): 0 with @r set when it is loaded in place, 1
 * when it is a ranged view (@mo set) for hs__resolve_src() to build and cache,
 * or a negative errno.
 */
static int trace_source(struct hs_app *a, const struct hs_api_src *s,
			const struct hs_filter_params *win, struct hs_resolved *r,
			struct hs_memview_opts *mo, struct hs_diag *d)
{
	struct hs_app_source *as = hs_app_source(a, s->trace, s->source);

	memset(r, 0, sizeof(*r));
	if (!as) {
		hs_diag_set(d, 0, "trace %zu has no source '%s'", s->trace, s->source);
		return -ENOENT;
	}
	if (!ranged_view(a, s, win, &mo->kind)) {
		r->src = &as->src;
		return hs_app_load_source(a, s->trace, as, d);
	}
	mo->start_ms = win->start_ms;
	mo->end_ms = win->end_ms;
	return 1;
}

/*
 * The source of @s with its first @k steps, built through the cache (a
 * trace's own sources are loaded in place). @win is the time window of
 * the view the chain ends in (for the leaks and peak views of a heap
 * trace). What it uses is held in c->hold.
 */
int hs__resolve_src(struct hs_route_ctx *c, const struct hs_api_src *s, size_t k,
		    const struct hs_filter_params *win, struct hs_resolved *r)
{
	struct hs_memview_opts mo = HS_MEMVIEW_OPTS_INIT;
	struct hs_buf key = HS_BUF_INIT;
	struct hs_filter_params tf, bf;
	struct hs_query_step step;
	struct hs_resolved t, b;
	struct hs_cache_entry *e;
	struct hs_app *a = c->app;
	struct hs_diag *d = &c->diag;
	int trace = !k && s->kind == HS_API_SRC_TRACE;
	int err;

	if (trace) {
		err = trace_source(a, s, win, r, &mo, d);
		if (err <= 0)
			return err;
	}
	err = src_key(a, s, k, win, &key);
	if (err)
		return err;
	err = hs_cache_claim(&a->cache, &c->hold, HS_CACHE_SOURCE, key.s, NULL, &e, d);
	if (err < 0)
		goto out;
	if (err == 1) {
		/* ours to build; what it stands on is resolved (and held) first */
		if (trace) {
			err = hs_app_heap_view(a, s->trace, &mo, &e->u.source.src, d);
		} else if (!k) {
			tf = window_for(a, s->test, &s->test_params.vp.filter);
			bf = window_for(a, s->base, &s->base_params.vp.filter);
			err = hs__resolve_src(c, s->test, s->test->nr_steps,
					      &s->test_params.vp.filter, &t);
			if (!err)
				err = hs__resolve_src(c, s->base, s->base->nr_steps,
						      &s->base_params.vp.filter, &b);
			if (!err)
				err = hs_diff_build(b.src, &bf, t.src, &tf,
						    &e->u.source.src, d);
		} else {
			err = hs__resolve_src(c, s, k - 1, win, &t);
			step = s->steps[k - 1];
			step.params.filter = window_for(a, s, &step.params.filter);
			if (!err)
				err = hs_query_derive(t.src, &step, t.when,
						      &e->u.source.src, e->u.source.when,
						      d);
			e->u.source.has_when = 1;
		}
		hs_cache_publish(&a->cache, e, err, d);
		if (err)
			goto out;
	}
	r->src = &e->u.source.src;
	r->when = e->u.source.has_when ? e->u.source.when : NULL;
	r->ent = e;
	err = 0;
out:
	hs_buf_release(&key);
	return err;
}

/*
 * The filter result of the query's patterns on @r's source, shared by its
 * call trees of every Fold% and time window (held in c->hold), in *@out.
 * Keyed by the source's cache key (or the query's, for a trace's source
 * loaded in place) and the patterns, each prefixed by its length.
 */
static int get_filter(struct hs_route_ctx *c, const struct hs_resolved *r,
		      const struct hs_view_params *p, struct hs_cache_entry **out)
{
	const struct hs_filter_params *f = &p->filter;
	const char *pat[4] = {f->group, f->fold, f->inc, f->exc};
	struct hs_buf key = HS_BUF_INIT;
	struct hs_app *a = c->app;
	struct hs_cache_entry *e;
	size_t i;
	int err = 0;

	for (i = 0; i < 4 && !err; i++)
		err = hs_buf_addf(&key, "%zu:%s\n", pat[i] ? strlen(pat[i]) : 0,
				  pat[i] ? pat[i] : "");
	if (!err)
		err = hs_buf_addf(&key, "%s",
				  r->ent ? r->ent->key
					 : c->query.src.keys[c->query.src.nr_steps]);
	if (err)
		goto out;
	err = hs_cache_claim(&a->cache, &c->hold, HS_CACHE_FILTER, key.s, r->ent, &e,
			     &c->diag);
	if (err == 1) {
		hs_cache_make_room(&a->cache, HS_CACHE_FILTER,
				   hs_cache_filter_estimate(r->src));
		err = hs_calltree_filter(r->src, p, &e->u.filter, &c->diag);
		hs_cache_publish(&a->cache, e, err, &c->diag);
	}
	if (!err)
		*out = e;
out:
	hs_buf_release(&key);
	return err < 0 ? err : 0;
}

/* Room in @cache for a call tree of @bytes, before it is allocated. */
static void tree_room(void *cache, size_t bytes)
{
	hs_cache_make_room(cache, HS_CACHE_TREE, bytes);
}

/* The call tree of the query (c->tree) and its source (c->src). */
int hs__get_tree(struct hs_route_ctx *c)
{
	struct hs_view_params p = c->query.params.vp;
	struct hs_app *a = c->app;
	struct hs_resolved r;
	struct hs_cache_entry *e, *fe = NULL;
	int err;

	e = hs_cache_get(&a->cache, &c->hold, HS_CACHE_TREE, c->query.tree_key);
	if (e) {
		c->tree = e;
		c->src = e->u.tree.in;
		return 0;
	}
	err = check_superseded(c);
	if (!err)
		err = hs__resolve_src(c, &c->query.src, c->query.src.nr_steps,
				      &c->query.params.vp.filter, &r);
	if (!err)
		err = get_filter(c, &r, &p, &fe);
	if (err)
		return err;
	err = hs_cache_claim(&a->cache, &c->hold, HS_CACHE_TREE, c->query.tree_key, fe,
			     &e, &c->diag);
	if (err < 0)
		return err;
	if (err == 1) {
		p.filter = window_for(a, &c->query.src, &p.filter);
		if (r.when) {
			p.when_start_ms = r.when[0];
			p.when_end_ms = r.when[1];
		}
		err = hs_calltree_build_on_room(&e->u.tree, &fe->u.filter, &p, tree_room,
						&a->cache);
		hs_cache_publish(&a->cache, e, err, &c->diag);
		if (err)
			return err;
	}
	c->tree = e;
	c->src = e->u.tree.in;
	return 0;
}

/*
 * The cache's entry of @kind under @key, built from the query's call tree
 * when missing: room made for @estimate's bytes, then @build fills the
 * claimed entry (0 or an error, a message in c->diag). c->tree, c->src
 * and c->view are set from it. 0 or an error.
 */
static int
get_tree_entry(struct hs_route_ctx *c, enum hs_cache_kind kind, const char *key,
	       size_t (*estimate)(const struct hs_calltree *ct, enum hs_view_kind vk),
	       int (*build)(struct hs_route_ctx *c, struct hs_cache_entry *e))
{
	struct hs_cache_entry *e = hs_cache_get(&c->app->cache, &c->hold, kind, key);
	int err;

	if (!e) {
		err = hs__get_tree(c);
		if (!err)
			err = check_superseded(c);
		if (!err)
			err = hs_cache_claim(&c->app->cache, &c->hold, kind, key, c->tree,
					     &e, &c->diag);
		if (err < 0)
			return err;
		if (err == 1) {
			hs_cache_make_room(
			    &c->app->cache, kind,
			    estimate(&c->tree->u.tree, c->query.view.kind));
			err = build(c, e);
			hs_cache_publish(&c->app->cache, e, err, &c->diag);
			if (err)
				return err;
		}
	}
	c->tree = e->dep;
	c->src = c->tree->u.tree.in;
	c->view = e;
	return 0;
}

static int build_view(struct hs_route_ctx *c, struct hs_cache_entry *e)
{
	struct hs_view_opts o = {
	    .kind = c->query.view.kind,
	    .focus = c->query.view.focus,
	};
	int err = hs_view_build(&e->u.view.v, &c->tree->u.tree, &o);

	if (err == -ENOENT)
		hs_diag_set(&c->diag, 0, "no frame named '%s'", o.focus);
	return err ? err : hs_cache_index_view(e);
}

/* The full view of the query (no limit, no depth): c->view. */
int hs__get_view(struct hs_route_ctx *c)
{
	enum hs_view_kind kind = c->query.view.kind;
	const char *focus = c->query.view.focus;
	struct hs_buf key = HS_BUF_INIT;
	int err;

	err = hs_view_focus_check(kind, focus, 1, "focus", &c->diag);
	if (err)
		return err;
	if (hs_buf_addf(&key, "%s\n%s\n%s", c->query.tree_key, hs_view_kind_name(kind),
			focus ? focus : ""))
		return -ENOMEM;
	err = get_tree_entry(c, HS_CACHE_VIEW, key.s, hs_cache_view_estimate, build_view);
	hs_buf_release(&key);
	return err;
}

static int build_parts(struct hs_route_ctx *c, struct hs_cache_entry *e)
{
	return hs_view_parts_build(&e->u.parts, &c->tree->u.tree, c->query.view.kind);
}

/*
 * The view of the query for answers that show some of its rows: ByName
 * and CallTree in parts (view_part.h: c->view of kind HS_CACHE_PARTS,
 * its rows made per answer by hs__rows_json()), any other view whole.
 */
int hs__get_parts(struct hs_route_ctx *c)
{
	enum hs_view_kind kind = c->query.view.kind;
	struct hs_buf key = HS_BUF_INIT;
	int err;

	if (kind != HS_VIEW_BYNAME && kind != HS_VIEW_CALLTREE)
		return hs__get_view(c);
	err = hs_view_focus_check(kind, c->query.view.focus, 1, "focus", &c->diag);
	if (err)
		return err;
	if (hs_buf_addf(&key, "%s\n%s\nparts", c->query.tree_key,
			hs_view_kind_name(kind)))
		return -ENOMEM;
	err = get_tree_entry(c, HS_CACHE_PARTS, key.s, hs_cache_parts_estimate,
			     build_parts);
	hs_buf_release(&key);
	return err;
}

const struct hs_view *hs__view_of(const struct hs_route_ctx *c)
{
	return c->view->kind == HS_CACHE_PARTS ? &c->view->u.parts.v : &c->view->u.view.v;
}

size_t hs__view_rows(const struct hs_route_ctx *c)
{
	return c->view->kind == HS_CACHE_PARTS ? c->view->u.parts.nr_rows
					       : c->view->u.view.v.nr_rows;
}

json_t *hs__rows_json(struct hs_route_ctx *c, const uint32_t *ids, size_t n)
{
	const struct hs_view *v = &c->view->u.view.v;
	struct hs_view part;
	json_t *a = json_array();
	size_t i;
	int parts = c->view->kind == HS_CACHE_PARTS;

	if (!a)
		return NULL;
	if (parts) {
		if (hs_view_part(&c->view->u.parts, ids, n, 0, &part)) {
			json_decref(a);
			return NULL;
		}
		v = &part;
	}
	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, parts ? hs__row_obj_id(v, i, ids[i])
						   : hs__row_obj(v, ids[i]))) {
			json_decref(a);
			a = NULL;
		}
	if (parts)
		hs_view_release(&part);
	return a;
}

/*
 * The answer text cached under @key (kind HS_CACHE_TEXT), built once by
 * @build(@c, @arg, &text, &len) (text hs_malloc()ed; 0 or a negative
 * errno) when it is not there: *@out, held in c->hold.
 */
int hs__cached_text(struct hs_route_ctx *c, const char *key,
		    int (*build)(struct hs_route_ctx *c, void *arg, char **text,
				 size_t *len),
		    void *arg, const struct hs_cache_entry **out)
{
	struct hs_cache_entry *e;
	int err;

	*out = NULL;
	e = hs_cache_get(&c->app->cache, &c->hold, HS_CACHE_TEXT, key);
	if (!e) {
		err = hs_cache_claim(&c->app->cache, &c->hold, HS_CACHE_TEXT, key, NULL,
				     &e, &c->diag);
		if (err < 0)
			return err;
		if (err == 1) {
			err = build(c, arg, &e->u.text.s, &e->u.text.len);
			hs_cache_publish(&c->app->cache, e, err, &c->diag);
			if (err)
				return err;
		}
	}
	*out = e;
	return 0;
}

/* Reply with a copy of the JSON text of @e (HS_CACHE_TEXT). Returns 0. */
int hs__reply_text_entry(struct hs_response *resp, const struct hs_cache_entry *e)
{
	char *copy = hs_malloc(e->u.text.len + 1);

	if (copy)
		memcpy(copy, e->u.text.s, e->u.text.len + 1);
	return hs__reply_json_text(resp, copy, e->u.text.len);
}

/* ---- small readers of request keys ---- */

int hs__get_uint(struct hs_route_ctx *c, const char *key, size_t dflt, size_t max,
		 size_t *out)
{
	json_t *v = json_object_get(c->q, key);
	json_int_t n;

	*out = dflt;
	if (!v || json_is_null(v))
		return 0;
	n = json_is_integer(v) ? json_integer_value(v) : -1;
	if (n < 0 || (size_t)n > max) {
		hs_diag_set(&c->diag, 0, "%s must be a whole number up to %zu", key, max);
		return -EINVAL;
	}
	*out = (size_t)n;
	return 0;
}

int hs__get_bool(struct hs_route_ctx *c, const char *key, int dflt, int *out)
{
	json_t *v = json_object_get(c->q, key);

	*out = dflt;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		hs_diag_set(&c->diag, 0, "%s must be true or false", key);
		return -EINVAL;
	}
	*out = json_is_true(v);
	return 0;
}

int hs__get_string(struct hs_route_ctx *c, const char *key, size_t max, const char **out)
{
	json_t *v = json_object_get(c->q, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		hs_diag_set(&c->diag, 0, "%s must be a string of at most %zu bytes", key,
			    max);
		return -EINVAL;
	}
	*out = json_string_value(v);
	return 0;
}

/* A row id of the view (HS_NO_NODE for none). */
int hs__get_row(struct hs_route_ctx *c, const char *key, uint32_t *out)
{
	size_t n;
	int err = hs__get_uint(c, key, HS_NO_NODE, UINT32_MAX, &n);

	*out = (uint32_t)n;
	if (!err && n != HS_NO_NODE && n >= hs__view_rows(c)) {
		hs_diag_set(&c->diag, 0, "%s: no row %zu", key, n);
		return -EINVAL;
	}
	return err;
}

/* A row object with its "id" and "parent". */
json_t *hs__row_obj(const struct hs_view *v, size_t i)
{
	return hs__row_obj_id(v, i, (uint32_t)i);
}

/* Row @i of @v as the row with id @id ("parent" is v->rows[i].parent). */
json_t *hs__row_obj_id(const struct hs_view *v, size_t i, uint32_t id)
{
	json_t *o = hs_view_row_json(v, i);
	uint32_t p = v->rows[i].parent;

	if (!o || json_object_set_new(o, "id", json_integer((json_int_t)id)) ||
	    json_object_set_new(o, "parent",
				p == HS_NO_NODE ? json_null() : json_integer(p))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A document: the view's name, summary and total rows, plus @key: @val. */
json_t *hs__doc(const struct hs_view *v, const char *key, json_t *val)
{
	return hs__doc_rows(v, v->nr_rows, key, val);
}

/* hs__doc() for a view of @nr_rows rows (a view in parts has fewer). */
json_t *hs__doc_rows(const struct hs_view *v, size_t nr_rows, const char *key,
		     json_t *val)
{
	json_t *o = json_object();

	if (!o || !val ||
	    json_object_set_new(o, "view", json_string(hs_view_kind_name(v->kind))) ||
	    json_object_set_new(o, "summary", hs_view_summary_json(v)) ||
	    json_object_set_new(o, "total_rows", json_integer((json_int_t)nr_rows)) ||
	    json_object_set_new(o, key, val)) {
		json_decref(o);
		json_decref(val);
		return NULL;
	}
	return o;
}

/*
 * How a route's own keys (besides the query's) are written as GET
 * arguments: the same keys, with their values as text.
 */
enum key_kind {
	KEY_UINT,   /* a whole number */
	KEY_BOOL,   /* true, false, 1 or 0 */
	KEY_NUMBER, /* any finite number */
	KEY_STRING, /* the text itself */
	KEY_JSON,   /* an array or object, as JSON text */
};

struct route_key {
	const char *name;
	enum key_kind kind;
};

#define ORDER_KEYS                                                                       \
	{"sort", KEY_STRING},                                                            \
	{                                                                                \
		"order", KEY_STRING                                                      \
	}

static const struct route_key rows_keys[] = {
    {"offset", KEY_UINT}, {"count", KEY_UINT}, {"ids", KEY_JSON}, ORDER_KEYS, {NULL, 0}};
static const struct route_key tree_keys[] = {{"of", KEY_JSON},	   {"levels", KEY_UINT},
					     {"auto", KEY_BOOL},   {"skeleton", KEY_BOOL},
					     {"detail", KEY_UINT}, {"max_rows", KEY_UINT},
					     ORDER_KEYS,	   {NULL, 0}};
static const struct route_key flame_keys[] = {
    {"root", KEY_UINT}, {"max_rows", KEY_UINT}, {"min_width", KEY_NUMBER}, {NULL, 0}};
static const struct route_key find_keys[] = {{"pattern", KEY_STRING},
					     {"from", KEY_UINT},
					     {"backward", KEY_BOOL},
					     ORDER_KEYS,
					     {NULL, 0}};
static const struct route_key view_keys[] = {{"max_rows", KEY_UINT}, {NULL, 0}};
static const struct route_key timeline_keys[] = {{"buckets", KEY_UINT}, {NULL, 0}};
static const struct route_key counts_keys[] = {{"buckets", KEY_UINT},
					       {"start_ms", KEY_NUMBER},
					       {"bucket_ms", KEY_NUMBER},
					       {NULL, 0}};
static const struct route_key retained_keys[] = {{"ids", KEY_JSON}, {NULL, 0}};
static const struct route_key samples_keys[] = {{"name", KEY_STRING},
						{"what", KEY_STRING},
						{"offset", KEY_UINT},
						{"count", KEY_UINT},
						{"path", KEY_JSON},
						{"tree", KEY_STRING},
						{NULL, 0}};
static const struct route_key source_keys[] = {{"name", KEY_STRING}, {NULL, 0}};
static const struct route_key ungroup_keys[] = {
    {"name", KEY_STRING}, {"module", KEY_STRING}, {NULL, 0}};
static const struct route_key overweight_keys[] = {
    {"base", KEY_JSON}, {"base_params", KEY_JSON}, {NULL, 0}};
static const struct route_key stats_keys[] = {{"heap", KEY_BOOL}, {NULL, 0}};
static const struct route_key no_keys[] = {{NULL, 0}};

struct route {
	const char *path;
	int (*fn)(struct hs_route_ctx *c);
	int query;		      /* parses a query (else none) */
	const struct route_key *keys; /* its own keys, for GET arguments */
};

static const struct route routes[] = {
    {"/api/info", hs__api_info, 0, no_keys},
    {"/api/view", hs__api_view, 1, view_keys},
    {"/api/rows", hs__api_rows, 1, rows_keys},
    {"/api/tree", hs__api_tree, 1, tree_keys},
    {"/api/flame", hs__api_flame, 1, flame_keys},
    {"/api/find", hs__api_find, 1, find_keys},
    {"/api/timeline", hs__api_timeline, 1, timeline_keys},
    {"/api/counts", hs__api_counts, 1, counts_keys},
    {"/api/samples", hs__api_samples, 1, samples_keys},
    {"/api/stats", hs__api_stats, 1, stats_keys},
    {"/api/source", hs__api_source, 1, source_keys},
    {"/api/overweight", hs__api_overweight, 1, overweight_keys},
    {"/api/gc", hs__api_gc, 0, no_keys},
    {"/api/retained", hs__api_retained, 1, retained_keys},
    {"/api/ungroup", hs__api_ungroup, 1, ungroup_keys},
    {NULL, NULL, 0, NULL},
};

/*
 * The GET argument @text of key @k as the JSON value a POST body would
 * carry, or NULL with a message in @d.
 */
static json_t *arg_value(const struct route_key *k, const char *text, struct hs_diag *d)
{
	json_error_t jerr;
	unsigned long long u;
	json_t *v = NULL;
	double x;
	char *end;

	switch (k->kind) {
	case KEY_UINT:
		errno = 0;
		u = strtoull(text, &end, 10);
		if (*text >= '0' && *text <= '9' && !*end && !errno && u <= INT64_MAX)
			v = json_integer((json_int_t)u);
		else
			hs_diag_set(d, 0, "%s must be a whole number, not '%.80s'",
				    k->name, text);
		break;
	case KEY_BOOL:
		if (!strcmp(text, "true") || !strcmp(text, "1"))
			v = json_true();
		else if (!strcmp(text, "false") || !strcmp(text, "0"))
			v = json_false();
		else
			hs_diag_set(d, 0, "%s must be true or false, not '%.80s'",
				    k->name, text);
		break;
	case KEY_NUMBER:
		x = strtod(text, &end);
		if (end != text && !*end && isfinite(x))
			v = json_real(x);
		else
			hs_diag_set(d, 0, "%s must be a number, not '%.80s'", k->name,
				    text);
		break;
	case KEY_STRING:
		if (hs_utf8_valid(text, strlen(text)))
			v = json_string(text);
		else
			hs_diag_set(d, 0, "argument '%s' is not UTF-8", k->name);
		break;
	case KEY_JSON:
		v = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
		if (!v)
			hs_diag_set(d, 0, "%s: %s at character %d", k->name, jerr.text,
				    jerr.position);
		break;
	}
	if (!v && !d->set)
		hs_diag_set(d, 0, "out of memory");
	return v;
}

/*
 * Add the route's own keys given as GET arguments to @q (those the query
 * "q" does not give already). 0 or -EINVAL (message in c->diag).
 */
static int add_route_args(struct hs_route_ctx *c, const struct route *r, json_t *q)
{
	const struct route_key *k;
	const char *text;
	json_t *v;

	for (k = r->keys; k->name; k++) {
		text = c->req->arg ? c->req->arg(c->req->ctx, k->name) : NULL;
		if (!text || json_object_get(q, k->name))
			continue;
		v = arg_value(k, text, &c->diag);
		if (!v || json_object_set_new(q, k->name, v))
			return -EINVAL;
	}
	return 0;
}

/* The saved text boxes of a source, for report-style arguments (NULL: none). */
static const struct hs_source_defaults *arg_defaults(void *ctx, size_t trace,
						     const char *source)
{
	struct hs_route_ctx *c = ctx;
	struct hs_app_source *as = hs_app_source(c->app, trace, source);

	if (!as || hs_app_load_source(c->app, trace, as, &c->diag))
		return NULL;
	return &as->src.defaults;
}

static const char *no_arg(void *ctx, const char *key)
{
	(void)ctx;
	(void)key;
	return NULL;
}

/*
 * The request's query object: the POST body, or the GET arguments (the
 * report-style ones of params.h, then the route's own keys).
 */
static json_t *request_query(struct hs_route_ctx *c, const struct route *r)
{
	const struct hs_request *req = c->req;
	json_error_t jerr;
	json_t *q;

	if (!strcmp(req->method, "POST")) {
		q = json_loadb(req->body ? req->body : "", req->body_len,
			       JSON_REJECT_DUPLICATES, &jerr);
		if (!q) {
			hs_diag_set(&c->diag, 0,
				    "the body is not JSON: %s at character %d", jerr.text,
				    jerr.position);
			return NULL;
		}
		return q;
	}
	q = hs_api_query_from_args(req->arg ? req->arg : no_arg, req->ctx, arg_defaults,
				   c, &c->diag);
	if (q && json_is_object(q) && add_route_args(c, r, q)) {
		json_decref(q);
		return NULL;
	}
	return q;
}

static int dispatch(struct hs_app *a, const struct hs_request *req,
		    struct hs_response *resp)
{
	struct hs_route_ctx c = {
	    .app = a, .req = req, .resp = resp, .diag = HS_DIAG_INIT(NULL)};
	const struct route *r;
	int err;

	for (r = routes; r->path; r++)
		if (!strcmp(req->path, r->path))
			break;
	if (!r->path)
		return hs__reply_error(resp, 404, "no API call %.100s", req->path);
	if (strcmp(req->method, "GET") && strcmp(req->method, "POST"))
		return hs__reply_error(resp, 405, "method %s is not allowed here",
				       req->method);
	if (req->body_too_large)
		return hs__reply_error(resp, 413, "the request body is over %u bytes",
				       HS_APP_MAX_BODY);
	if (r->query) {
		c.q = request_query(&c, r);
		if (!c.q)
			return hs__reply_error(resp, 400, "%s",
					       c.diag.set ? c.diag.msg : "bad query");
		if (!json_is_object(c.q)) {
			json_decref(c.q);
			return hs__reply_error(resp, 400,
					       "the query must be a JSON object");
		}
		err = hs_api_query_parse(c.q, a->nr_traces, 0, &c.query, &c.diag);
		if (err) {
			hs__reply_err(&c, err, "");
			json_decref(c.q);
			return 0;
		}
	}
	/* a request the client cancelled while it waited for a worker */
	err = check_superseded(&c);
	if (err)
		hs__reply_err(&c, err, "");
	else
		r->fn(&c);
	hs_cache_hold_release(&a->cache, &c.hold);
	hs_api_query_release(&c.query);
	json_decref(c.q);
	return 0;
}

void hs__routes_handle(struct hs_app *a, const struct hs_request *req,
		       struct hs_response *resp)
{
	dispatch(a, req, resp);
}
