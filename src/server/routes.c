/*
 * routes - the JSON API under /api/ (docs/json-api.md): the query of a
 * request (params.h), the sources, call trees and views it needs (cached,
 * cache.h), and the documents answered.
 */
#include "analysis/diff.h"
#include "analysis/memviews.h"
#include "analysis/sourcelines.h"
#include "analysis/stats.h"
#include "analysis/overweight.h"
#include "analysis/presets.h"
#include "analysis/query.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "server/app.h"
#include "server/params.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define MAX_ROWS_PAGE 10000		/* rows in one /api/rows answer */
#define MAX_TREE_ROWS 200000		/* rows in one /api/tree or /api/flame answer */
#define MAX_IDS 100000			/* ids in one "of" list */
#define MAX_BUCKETS 4000		/* timeline buckets */
#define MAX_SAMPLES_PAGE 1000		/* samples in one /api/samples answer */
#define MAX_STACK_SHOWN 256		/* frames of one sample's stack */
#define MAX_FIND_PATTERN 1024

/* What a request works on, found or built through the cache. */
struct ctx {
	struct hs_app *app;
	const struct hs_request *req;
	struct hs_response *resp;
	json_t *q;			/* the request's query object */
	struct hs_api_query query;
	struct hs_diag diag;
	const struct hs_stack_source *src;	/* the query's source */
	struct hs_cache_entry *tree, *view;
};

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Reply with @o (taken), dumped with @flags. */
static int reply_json(struct hs_response *resp, json_t *o, size_t flags)
{
	char *s = o ? json_dumps(o, flags) : NULL;

	json_decref(o);
	if (!s)
		return hs__reply_error(resp, 503, "out of memory");
	hs_response_release(resp);
	resp->status = 200;
	resp->type = "application/json";
	resp->len = strlen(s);
	/* json_dumps() allocates with malloc; hand over an hs_malloc copy */
	resp->data = hs_malloc(resp->len + 2);
	if (!resp->data) {
		free(s);
		return hs__reply_error(resp, 503, "out of memory");
	}
	memcpy((char *)resp->data, s, resp->len);
	((char *)resp->data)[resp->len++] = '\n';
	((char *)resp->data)[resp->len] = '\0';
	resp->owned = 1;
	free(s);
	return 0;
}

#define COMPACT (JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)

/* Reply with the error of an engine call. */
static int reply_err(struct ctx *c, int err, const char *what)
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
	default:
		hs__reply_error(c->resp, 503, "%s%s", what, strerror(-err));
		break;
	}
	return 0;
}

/* ---- sources, trees and views through the cache ---- */

struct resolved {
	const struct hs_stack_source *src;
	const double *when;		/* the When range it carries, or NULL */
	struct hs_cache_entry *ent;	/* its cache entry, NULL for a trace */
};

/*
 * Whether @s stands on a heap trace's peak view: the time range chose its
 * blocks (allocated before the range or not), so no view of it filters
 * by time (as `heapscope report --source peak` does).
 */
static int on_peak(const struct hs_app *a, const struct hs_api_src *s)
{
	const struct hs_app_source *as;

	if (s->kind != HS_API_SRC_TRACE || a->traces[s->trace].fmt != HS_FORMAT_HEAPSCOPE)
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

	if (s->kind != HS_API_SRC_TRACE || a->traces[s->trace].fmt != HS_FORMAT_HEAPSCOPE ||
	    !win || (!isfinite(win->start_ms) && !isfinite(win->end_ms)))
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
 * when it is a ranged view (@mo set) for resolve_src() to build and cache,
 * or a negative errno.
 */
static int trace_source(struct hs_app *a, const struct hs_api_src *s,
			const struct hs_filter_params *win, struct resolved *r,
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
 * trace).
 */
static int resolve_src(struct hs_app *a, const struct hs_api_src *s, size_t k,
		       const struct hs_filter_params *win, struct resolved *r,
		       struct hs_diag *d)
{
	struct hs_memview_opts mo = HS_MEMVIEW_OPTS_INIT;
	struct hs_buf key = HS_BUF_INIT;
	struct hs_filter_params tf, bf;
	struct hs_query_step step;
	struct resolved t, b;
	const struct hs_trace *heap;
	struct hs_cache_entry *e;
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
	e = hs_cache_get(&a->cache, HS_CACHE_SOURCE, key.s);
	if (!e) {
		if (trace) {
			err = hs_app_heap(a, s->trace, &heap, d);
		} else if (!k) {
			tf = window_for(a, s->test, &s->test_params.vp.filter);
			bf = window_for(a, s->base, &s->base_params.vp.filter);
			err = resolve_src(a, s->test, s->test->nr_steps,
					  &s->test_params.vp.filter, &t, d);
			if (!err)
				err = resolve_src(a, s->base, s->base->nr_steps,
						  &s->base_params.vp.filter, &b, d);
		} else {
			err = resolve_src(a, s, k - 1, win, &t, d);
		}
		if (err)
			goto out;
		err = -ENOMEM;
		e = hs_cache_entry_new(HS_CACHE_SOURCE, key.s, NULL);
		if (!e)
			goto out;
		if (trace) {
			err = hs_memview_build(heap, &mo, &e->u.source.src, NULL, d);
		} else if (!k) {
			err = hs_diff_build(b.src, &bf, t.src, &tf, &e->u.source.src, d);
		} else {
			step = s->steps[k - 1];
			step.params.filter = window_for(a, s, &step.params.filter);
			err = hs_query_derive(t.src, &step, t.when, &e->u.source.src,
					      e->u.source.when, d);
			e->u.source.has_when = 1;
		}
		if (err) {
			hs_cache_entry_free(e);
			goto out;
		}
		err = hs_cache_add(&a->cache, e);
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

/* The call tree of the query (c->tree) and its source (c->src). */
static int get_tree(struct ctx *c)
{
	struct hs_view_params p = c->query.params.vp;
	struct hs_app *a = c->app;
	struct resolved r;
	struct hs_cache_entry *e;
	int err;

	e = hs_cache_get(&a->cache, HS_CACHE_TREE, c->query.tree_key);
	if (e) {
		c->tree = e;
		c->src = e->u.tree.in;
		return 0;
	}
	err = resolve_src(a, &c->query.src, c->query.src.nr_steps,
			  &c->query.params.vp.filter, &r, &c->diag);
	if (err)
		return err;
	p.filter = window_for(a, &c->query.src, &p.filter);
	if (r.when) {
		p.when_start_ms = r.when[0];
		p.when_end_ms = r.when[1];
	}
	e = hs_cache_entry_new(HS_CACHE_TREE, c->query.tree_key, r.ent);
	if (!e)
		return -ENOMEM;
	err = hs_calltree_build(&e->u.tree, r.src, &p, &c->diag);
	if (err) {
		hs_cache_entry_free(e);
		return err;
	}
	err = hs_cache_add(&a->cache, e);
	if (err)
		return err;
	c->tree = e;
	c->src = r.src;
	return 0;
}

/* The full view of the query (no limit, no depth): c->view. */
static int get_view(struct ctx *c)
{
	struct hs_view_opts o = {
		.kind = c->query.view.kind, .focus = c->query.view.focus,
	};
	struct hs_buf key = HS_BUF_INIT;
	struct hs_cache_entry *e;
	int err;

	err = hs_view_focus_check(o.kind, o.focus, 1, "focus", &c->diag);
	if (err)
		return err;
	if (hs_buf_addf(&key, "%s\n%s\n%s", c->query.tree_key, hs_view_kind_name(o.kind),
			o.focus ? o.focus : ""))
		return -ENOMEM;
	e = hs_cache_get(&c->app->cache, HS_CACHE_VIEW, key.s);
	if (!e) {
		err = get_tree(c);
		if (err)
			goto out;
		err = -ENOMEM;
		e = hs_cache_entry_new(HS_CACHE_VIEW, key.s, c->tree);
		if (!e)
			goto out;
		err = hs_view_build(&e->u.view.v, &c->tree->u.tree, &o);
		if (err == -ENOENT)
			hs_diag_set(&c->diag, 0, "no frame named '%s'", o.focus);
		if (!err)
			err = hs_cache_index_view(e);
		if (err) {
			hs_cache_entry_free(e);
			goto out;
		}
		err = hs_cache_add(&c->app->cache, e);
		if (err)
			goto out;
	} else {
		c->tree = e->dep;
		c->src = c->tree->u.tree.in;
	}
	c->view = e;
	err = 0;
out:
	hs_buf_release(&key);
	return err;
}

/* ---- small readers of request keys ---- */

static int get_uint(struct ctx *c, const char *key, size_t dflt, size_t max, size_t *out)
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

static int get_bool(struct ctx *c, const char *key, int dflt, int *out)
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

static int get_string(struct ctx *c, const char *key, size_t max, const char **out)
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
static int get_row(struct ctx *c, const char *key, uint32_t *out)
{
	size_t n;
	int err = get_uint(c, key, HS_NO_NODE, UINT32_MAX, &n);

	*out = (uint32_t)n;
	if (!err && n != HS_NO_NODE && n >= c->view->u.view.v.nr_rows) {
		hs_diag_set(&c->diag, 0, "%s: no row %zu", key, n);
		return -EINVAL;
	}
	return err;
}

/* A row object with its "id" and "parent". */
static json_t *row_obj(const struct hs_view *v, size_t i)
{
	json_t *o = hs_view_row_json(v, i);
	uint32_t p = v->rows[i].parent;

	if (!o || json_object_set_new(o, "id", json_integer((json_int_t)i)) ||
	    json_object_set_new(o, "parent", p == HS_NO_NODE ? json_null()
							     : json_integer(p))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A document: the view's name, summary and total rows, plus @key: @val. */
static json_t *doc(const struct hs_view *v, const char *key, json_t *val)
{
	json_t *o = json_object();

	if (!o || !val ||
	    json_object_set_new(o, "view", json_string(hs_view_kind_name(v->kind))) ||
	    json_object_set_new(o, "summary", hs_view_summary_json(v)) ||
	    json_object_set_new(o, "total_rows", json_integer((json_int_t)v->nr_rows)) ||
	    json_object_set_new(o, key, val)) {
		json_decref(o);
		json_decref(val);
		return NULL;
	}
	return o;
}

/* ---- sorting flat rows ---- */

enum col { COL_NONE, COL_NAME, COL_EXC, COL_EXC_CT, COL_INC, COL_INC_CT, COL_FOLD,
	   COL_FOLD_CT, COL_INC_AVG, COL_FIRST, COL_LAST };

static const char *const col_names[] = {
	[COL_NONE] = "", [COL_NAME] = "name", [COL_EXC] = "exc", [COL_EXC_CT] = "exc_count",
	[COL_INC] = "inc", [COL_INC_CT] = "inc_count", [COL_FOLD] = "fold",
	[COL_FOLD_CT] = "fold_count", [COL_INC_AVG] = "inc_avg", [COL_FIRST] = "first",
	[COL_LAST] = "last",
};

struct sorter {
	const struct hs_view *v;
	enum col col;
	int desc;
};

static double col_value(const struct hs_view_row *r, enum col col)
{
	switch (col) {
	case COL_EXC: return r->exc;
	case COL_EXC_CT: return r->exc_count;
	case COL_INC: return r->inc;
	case COL_INC_CT: return r->inc_count;
	case COL_FOLD: return r->fold;
	case COL_FOLD_CT: return r->fold_count;
	case COL_INC_AVG: return r->inc_count != 0 ? r->inc / r->inc_count : 0;
	case COL_FIRST: return r->first > r->last ? INFINITY : (double)r->first;
	case COL_LAST: return r->first > r->last ? -INFINITY : (double)r->last;
	default: return 0;
	}
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct sorter *s = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct hs_view_row *ra = &s->v->rows[a], *rb = &s->v->rows[b];
	int c = 0;

	if (s->col == COL_NAME) {
		c = strcmp(ra->name, rb->name);
	} else if (s->col != COL_NONE) {
		double x = col_value(ra, s->col), y = col_value(rb, s->col);

		c = x < y ? -1 : x > y;
	}
	if (s->desc)
		c = -c;
	return c ? c : (a > b) - (a < b);	/* then the view's order */
}

/* The order "sort" and "order" ask for (col COL_NONE: the view's own). */
static int get_sorter(struct ctx *c, struct sorter *s)
{
	const char *sort, *order;
	size_t i;
	int err;

	memset(s, 0, sizeof(*s));
	s->v = &c->view->u.view.v;
	err = get_string(c, "sort", 32, &sort);
	if (!err)
		err = get_string(c, "order", 8, &order);
	if (err)
		return err;
	if (sort && *sort) {
		for (i = 1; i < sizeof(col_names) / sizeof(col_names[0]); i++)
			if (!strcmp(sort, col_names[i]))
				break;
		if (i == sizeof(col_names) / sizeof(col_names[0])) {
			hs_diag_set(&c->diag, 0, "unknown sort column '%s'", sort);
			return -EINVAL;
		}
		s->col = (enum col)i;
		s->desc = s->col != COL_NAME;
	}
	if (order && strcmp(order, "asc") && strcmp(order, "desc")) {
		hs_diag_set(&c->diag, 0, "order must be \"asc\" or \"desc\"");
		return -EINVAL;
	}
	if (order)
		s->desc = !strcmp(order, "desc");
	return 0;
}

/* Whether @s changes the view's order. */
static int sorts(const struct sorter *s)
{
	return s->col != COL_NONE || s->desc;
}

/* The rows of the view in the order "sort" / "order" ask for (owned). */
static int sorted_rows(struct ctx *c, uint32_t **out)
{
	const struct hs_view *v = &c->view->u.view.v;
	struct sorter s;
	uint32_t *idx;
	size_t i;
	int err;

	err = get_sorter(c, &s);
	if (err)
		return err;
	idx = hs_malloc((v->nr_rows + 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < v->nr_rows; i++)
		idx[i] = (uint32_t)i;
	if (sorts(&s))
		qsort_r(idx, v->nr_rows, sizeof(*idx), cmp_rows, &s);
	*out = idx;
	return 0;
}

/* ---- the routes ---- */

/* The saved text boxes of a source (null where absent). */
static json_t *defaults_json(const struct hs_source_defaults *df)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "start", hs_view_json_text(df->start),
			 "end", hs_view_json_text(df->end),
			 "group", hs_view_json_text(df->group),
			 "fold", hs_view_json_text(df->fold),
			 "fold_pct", hs_view_json_text(df->fold_pct),
			 "inc", hs_view_json_text(df->inc),
			 "exc", hs_view_json_text(df->exc),
			 "notes", hs_view_json_text(df->notes));
}

static json_t *trace_json(const struct hs_app_trace *t, size_t id)
{
	const struct hs_stack_source *s = &t->sources[0].src;
	json_t *o, *srcs = json_array();
	double metric, count;
	int64_t first, last;
	size_t k;

	/* sources not read yet have no numbers and no defaults (null) */
	for (k = 0; srcs && k < t->nr_sources; k++) {
		const struct hs_app_source *as = &t->sources[k];
		json_int_t n = (json_int_t)as->src.nr_samples;
		json_t *x = json_pack("{s:o, s:o, s:b, s:o?, s:o?}",
			"name", hs_view_json_text(as->name),
			"summary", hs_view_json_text(as->summary), "loaded", as->loaded,
			"samples", as->loaded ? json_integer(n) : NULL,
			"defaults", as->loaded ? defaults_json(&as->src.defaults) : NULL);

		if (json_array_append_new(srcs, x)) {
			json_decref(srcs);
			srcs = NULL;
		}
	}
	hs_source_totals(s, &metric, &count);
	hs_source_time_range(s, &first, &last);
	o = json_pack("{s:I, s:o, s:o, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:b,"
		      " s:o, s:o}",
		      "id", (json_int_t)id, "name", hs_view_json_text(t->name),
		      "format", hs_view_json_text(t->format),
		      "samples", (json_int_t)s->nr_samples,
		      "frames", (json_int_t)hs_source_nr_frames(s),
		      "stacks", (json_int_t)s->nr_stacks,
		      "metric", metric, "count", count,
		      "first_ms", ms(first), "last_ms", ms(last),
		      "unit", hs_view_json_text(s->metric_unit),
		      "time_metric", s->kind == HS_METRIC_TIME, "sources", srcs, "defaults", defaults_json(&s->defaults));
	if (o &&
	    json_object_set_new(o, "heap", json_boolean(t->fmt == HS_FORMAT_HEAPSCOPE))) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static int api_info(struct ctx *c)
{
	struct hs_app *a = c->app;
	json_t *o = json_object(), *traces = json_array(), *presets = json_array(), *t;
	size_t i;
	int err = !o || !traces || !presets;

	for (i = 0; !err && i < a->nr_traces; i++)
		err = json_array_append_new(traces, trace_json(&a->traces[i], i));
	for (i = 0; !err && i < hs_presets_count(); i++) {
		const struct hs_preset *p = hs_presets_get(i);
		char *text = NULL;

		if (!p->needs_exe_dir && hs_preset_group_text(p, NULL, &text)) {
			err = 1;
			break;
		}
		t = json_pack("{s:s, s:s?, s:s, s:s, s:s, s:b}", "name", p->name,
			      "group", text, "fold", p->fold, "fold_pct", p->fold_pct,
			      "comment", p->comment, "needs_exe_dir", p->needs_exe_dir);
		hs_free(text);
		err = !t || json_array_append_new(presets, t);
	}
	if (!err)
		err = json_object_set_new(o, "version", json_string(HS_VERSION)) ||
		      json_object_set(o, "traces", traces) ||
		      json_object_set(o, "presets", presets) ||
		      json_object_set_new(o, "default_group",
					  json_string(HS_PRESET_DEFAULT_GROUP)) ||
		      json_object_set_new(o, "ignore_pid_tid",
					  json_string(HS_PRESET_IGNORE_PID_TID)) ||
		      json_object_set_new(o, "overweight", json_true()) ||
		      json_object_set_new(o, "source_lines", json_true());
	json_decref(traces);
	json_decref(presets);
	if (err) {
		json_decref(o);
		o = NULL;
	}
	return reply_json(c->resp, o, COMPACT);
}

/* Exactly `heapscope report --format json` for the same parameters. */
static int api_view(struct ctx *c)
{
	struct hs_view fresh, *v;
	char *json_text;
	size_t json_len;
	int err;

	if (!c->query.view.limit && !c->query.view.max_depth) {
		err = get_view(c);
		if (err)
			return reply_err(c, err, "");
		v = &c->view->u.view.v;
	} else {
		err = get_tree(c);
		if (!err) {
			err = hs_view_build(&fresh, &c->tree->u.tree, &c->query.view);
			if (err == -ENOENT)
				hs_diag_set(&c->diag, 0, "no frame named '%s'",
					    c->query.view.focus);
		}
		if (err)
			return reply_err(c, err, "");
		v = &fresh;
	}
	json_text = hs_view_json_dump(v, HS_VIEW_JSON_FLAGS, &json_len);
	hs__reply_json_text(c->resp, json_text, json_len);
	if (v == &fresh)
		hs_view_release(&fresh);
	return 0;
}

/* A JSON array of row objects for @rows (with "id" and "parent"). */
static json_t *rows_array(const struct hs_view *v, const uint32_t *rows, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, row_obj(v, rows[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* The rows whose ids "ids" lists (at most MAX_ROWS_PAGE), in that order. */
static int rows_by_id(struct ctx *c)
{
	const struct hs_view *v = &c->view->u.view.v;
	json_t *ids = json_object_get(c->q, "ids"), *o;
	uint32_t *rows;
	size_t i, n = json_is_array(ids) ? json_array_size(ids) : MAX_ROWS_PAGE + 1;

	if (n > MAX_ROWS_PAGE)
		return hs__reply_error(c->resp, 400,
				       "ids must be an array of at most %d row ids",
				       MAX_ROWS_PAGE);
	rows = hs_malloc((n + 1) * sizeof(*rows));
	if (!rows)
		return hs__reply_error(c->resp, 503, "out of memory");
	for (i = 0; i < n; i++) {
		json_t *id = json_array_get(ids, i);

		if (!json_is_integer(id) || json_integer_value(id) < 0 ||
		    (size_t)json_integer_value(id) >= v->nr_rows) {
			hs_free(rows);
			return hs__reply_error(c->resp, 400, "ids: no such row");
		}
		rows[i] = (uint32_t)json_integer_value(id);
	}
	o = doc(v, "rows", rows_array(v, rows, n));
	hs_free(rows);
	return reply_json(c->resp, o, COMPACT);
}

/* A page of rows in the order asked for, or the rows "ids" names. */
static int api_rows(struct ctx *c)
{
	const struct hs_view *v;
	size_t offset, count, i;
	uint32_t *idx = NULL;
	json_t *rows, *o;
	int err;

	err = get_view(c);
	if (!err)
		err = get_uint(c, "offset", 0, UINT32_MAX, &offset);
	if (!err)
		err = get_uint(c, "count", 500, MAX_ROWS_PAGE, &count);
	if (!err && json_object_get(c->q, "ids"))
		return rows_by_id(c);
	if (!err)
		err = sorted_rows(c, &idx);
	if (err)
		return reply_err(c, err, "");
	v = &c->view->u.view.v;
	rows = json_array();
	for (i = offset; rows && i < v->nr_rows && i - offset < count; i++)
		if (json_array_append_new(rows, row_obj(v, idx[i]))) {
			json_decref(rows);
			rows = NULL;
		}
	hs_free(idx);
	o = doc(v, "rows", rows);
	if (o && json_object_set_new(o, "offset", json_integer((json_int_t)offset))) {
		json_decref(o);
		o = NULL;
	}
	return reply_json(c->resp, o, COMPACT);
}

/*
 * Tree rows: the descendants of each row in "of" (or the roots and theirs)
 * down "levels" levels (0 = all); with "auto", a row with one child is
 * opened too; children in the order of "sort" / "order". Each row names
 * its parent, so a client can place it. With "skeleton", only the ids,
 * parents and numbers of children of the rows come as arrays, and whole
 * rows for the first "detail" of them (the others by /api/rows "ids").
 */
struct walk {
	const struct hs_cache_entry *e;
	const struct sorter *sort;	/* NULL: the view's order */
	uint32_t *out;			/* the rows emitted, in order */
	size_t nr_out, alloc_out, max_rows;
	int truncated, failed;
	uint32_t *stack;		/* pairs (row, levels left) */
	size_t nr, alloc;
	uint32_t *kids;			/* scratch: children to sort */
	size_t alloc_kids;
};

static void emit(struct walk *w, uint32_t row)
{
	if (w->failed || w->truncated)
		return;
	if (w->nr_out >= w->max_rows) {
		w->truncated = 1;
		return;
	}
	if (HS_GROW(w->out, w->nr_out + 1, w->alloc_out))
		w->failed = 1;
	else
		w->out[w->nr_out++] = row;
}

/*
 * Emit the descendants of @row down @levels levels (0 = all). A stack
 * entry is (row, levels of its descendants to show); with @autoopen a
 * row with exactly one child shows it although no level is left.
 */
static void walk_children(struct walk *w, uint32_t row, uint32_t levels, int autoopen)
{
	const uint32_t *off = w->e->u.view.child_off, *child = w->e->u.view.child;
	const uint32_t *kids;
	uint32_t r, left, k, n, ch, ch_left;

	w->nr = 0;
	if (HS_GROW(w->stack, 2, w->alloc)) {
		w->failed = 1;
		return;
	}
	w->stack[w->nr++] = row;
	w->stack[w->nr++] = levels ? levels : UINT32_MAX;
	while (w->nr && !w->failed && !w->truncated) {
		left = w->stack[--w->nr];
		r = w->stack[--w->nr];
		if (r != row)
			emit(w, r);
		if (!left)
			continue;
		n = off[r + 1] - off[r];
		kids = child + off[r];
		if (HS_GROW(w->stack, w->nr + 2 * (size_t)n, w->alloc)) {
			w->failed = 1;
			return;
		}
		if (w->sort && n > 1) {
			if (HS_GROW(w->kids, n, w->alloc_kids)) {
				w->failed = 1;
				return;
			}
			memcpy(w->kids, kids, n * sizeof(*kids));
			qsort_r(w->kids, n, sizeof(*w->kids), cmp_rows, (void *)w->sort);
			kids = w->kids;
		}
		/* pushed in reverse, so that the first child comes out first */
		for (k = n; k > 0; k--) {
			ch = kids[k - 1];
			ch_left = left == UINT32_MAX ? left : left - 1;
			if (!ch_left && autoopen && off[ch + 1] - off[ch] == 1)
				ch_left = 1;
			w->stack[w->nr++] = ch;
			w->stack[w->nr++] = ch_left;
		}
	}
}

/* Append @n numbers as a JSON array member "@key":[...] to @b. */
static int add_array(struct hs_buf *b, const char *key, const uint32_t *x, size_t n,
		     int nullable)
{
	size_t i;
	int err = hs_buf_addf(b, ",\"%s\":[", key);

	for (i = 0; !err && i < n; i++) {
		if (nullable && x[i] == HS_NO_NODE)
			err = hs_buf_adds(b, i ? ",null" : "null");
		else
			err = hs_buf_addf(b, i ? ",%u" : "%u", x[i]);
	}
	return err ? err : hs_buf_addc(b, ']');
}

/* The skeleton answer: @o (the document without the arrays) plus them. */
static int reply_skeleton(struct ctx *c, json_t *o, const struct walk *w)
{
	const struct hs_view *v = &c->view->u.view.v;
	const uint32_t *off = c->view->u.view.child_off;
	struct hs_buf b = HS_BUF_INIT;
	uint32_t *x = NULL;
	char *head;
	size_t i;
	int err = -ENOMEM;

	head = o ? json_dumps(o, COMPACT) : NULL;
	json_decref(o);
	x = hs_malloc((w->nr_out + 1) * sizeof(*x));
	if (!head || !x || hs_buf_add(&b, head, strlen(head) - 1))
		goto out;
	err = add_array(&b, "id", w->out, w->nr_out, 0);
	for (i = 0; i < w->nr_out; i++)
		x[i] = v->rows[w->out[i]].parent;
	if (!err)
		err = add_array(&b, "parent", x, w->nr_out, 1);
	for (i = 0; i < w->nr_out; i++)
		x[i] = off[w->out[i] + 1] - off[w->out[i]];
	if (!err)
		err = add_array(&b, "nr_children", x, w->nr_out, 0);
	if (!err)
		err = hs_buf_adds(&b, "}\n");
out:
	free(head);
	hs_free(x);
	if (err) {
		hs_buf_release(&b);
		return hs__reply_error(c->resp, 503, "out of memory");
	}
	hs_response_release(c->resp);
	c->resp->status = 200;
	c->resp->type = "application/json";
	c->resp->len = b.len;
	c->resp->data = hs_buf_detach(&b);
	c->resp->owned = 1;
	return 0;
}

static int api_tree(struct ctx *c)
{
	struct walk w = { 0 };
	struct sorter sort;
	const struct hs_view *v;
	size_t levels, detail, i, n;
	json_t *of, *o;
	int err, autoopen, skeleton;

	err = get_view(c);
	if (!err)
		err = get_uint(c, "levels", 1, UINT32_MAX, &levels);
	if (!err)
		err = get_bool(c, "auto", 1, &autoopen);
	if (!err)
		err = get_bool(c, "skeleton", 0, &skeleton);
	if (!err)
		err = get_uint(c, "detail", 200, MAX_ROWS_PAGE, &detail);
	if (!err)
		err = get_uint(c, "max_rows", 100000, MAX_TREE_ROWS, &w.max_rows);
	if (!err)
		err = get_sorter(c, &sort);
	if (err)
		return reply_err(c, err, "");
	v = &c->view->u.view.v;
	w.e = c->view;
	w.sort = sorts(&sort) ? &sort : NULL;
	of = json_object_get(c->q, "of");
	if (of && !json_is_null(of)) {
		n = json_is_array(of) ? json_array_size(of) : MAX_IDS + 1;
		if (n > MAX_IDS)
			return hs__reply_error(c->resp, 400,
					       "of must be an array of at most %d "
					       "row ids",
					       MAX_IDS);
		for (i = 0; i < n; i++) {
			json_t *id = json_array_get(of, i);

			if (!json_is_integer(id) || json_integer_value(id) < 0 ||
			    (size_t)json_integer_value(id) >= v->nr_rows)
				return hs__reply_error(c->resp, 400, "of: no row %s",
						       json_is_integer(id)
							   ? "with that id"
							   : "(not a number)");
		}
		for (i = 0; i < n; i++)
			walk_children(&w,
				      (uint32_t)json_integer_value(json_array_get(of, i)),
				      (uint32_t)levels, autoopen);
	} else {
		for (i = 0; i < v->nr_rows; i++)
			if (v->rows[i].parent == HS_NO_NODE) {
				emit(&w, (uint32_t)i);
				walk_children(&w, (uint32_t)i, (uint32_t)levels, autoopen);
			}
	}
	hs_free(w.stack);
	hs_free(w.kids);
	o = w.failed ? NULL
		     : doc(v, "rows",
			   rows_array(v, w.out,
				      skeleton && detail < w.nr_out ? detail : w.nr_out));
	if (o && json_object_set_new(o, "truncated", json_boolean(w.truncated))) {
		json_decref(o);
		o = NULL;
	}
	if (skeleton && o)
		err = reply_skeleton(c, o, &w);
	else
		err = reply_json(c->resp, o, COMPACT);
	hs_free(w.out);
	return err;
}

/* The keys from below the tree's root down to row @r (a call-tree path). */
static json_t *root_path(const struct hs_view *v, uint32_t r)
{
	json_t *a = json_array();

	for (; a && r < v->nr_rows && v->rows[r].parent != HS_NO_NODE;
	     r = v->rows[r].parent)
		if (json_array_insert_new(a, 0, hs_view_json_text(v->rows[r].name))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* Flame Graph rectangles under "root" at least "min_width" of its width. */
static int api_flame(struct ctx *c)
{
	const struct hs_view *v;
	const uint32_t *off, *child;
	uint32_t root, *stack = NULL, r, k;
	size_t nr = 0, alloc = 0, max_rows;
	double min_width = 0.0005, thr;
	json_t *rows, *mw, *o;
	int err, truncated = 0;

	if (c->query.view.kind != HS_VIEW_FLAME)
		c->query.view.kind = HS_VIEW_FLAME;
	err = get_view(c);
	if (!err)
		err = get_row(c, "root", &root);
	if (!err)
		err = get_uint(c, "max_rows", 50000, MAX_TREE_ROWS, &max_rows);
	if (err)
		return reply_err(c, err, "");
	mw = json_object_get(c->q, "min_width");
	if (mw && !json_is_null(mw)) {
		min_width = json_is_number(mw) ? json_number_value(mw) : -1;
		if (!(min_width >= 0 && min_width <= 1))
			return hs__reply_error(c->resp, 400,
					       "min_width must be a number from 0 "
					       "to 1");
	}
	v = &c->view->u.view.v;
	off = c->view->u.view.child_off;
	child = c->view->u.view.child;
	if (root == HS_NO_NODE)
		root = 0;
	rows = json_array();
	if (!v->nr_rows)
		goto done;
	thr = v->rows[root].width * min_width;
	if (HS_GROW(stack, 1, alloc))
		goto fail;
	stack[nr++] = root;
	while (nr) {
		r = stack[--nr];
		if (json_array_size(rows) >= max_rows) {
			truncated = 1;
			break;
		}
		if (json_array_append_new(rows, row_obj(v, r)))
			goto fail;
		if (HS_GROW(stack, nr + off[r + 1] - off[r], alloc))
			goto fail;
		for (k = off[r + 1]; k > off[r]; k--)
			if (v->rows[child[k - 1]].width >= thr &&
			    v->rows[child[k - 1]].width > 0)
				stack[nr++] = child[k - 1];
	}
	goto done;
fail:
	json_decref(rows);
	rows = NULL;
done:
	hs_free(stack);
	o = doc(v, "rows", rows);
	if (o && (json_object_set_new(o, "root", json_integer(root)) ||
		  json_object_set_new(o, "root_path", root_path(v, root)) ||
		  json_object_set_new(o, "truncated", json_boolean(truncated)))) {
		json_decref(o);
		o = NULL;
	}
	return reply_json(c->resp, o, COMPACT);
}

/*
 * Find: the next row after "from" (in the order of "sort"/"order" for a
 * flat view, depth-first for a tree) whose name the regular expression
 * "pattern" matches (case-insensitive), with the ids of its ancestors.
 */
static int api_find(struct ctx *c)
{
	const struct hs_view *v;
	const char *pattern;
	pcre2_code *re = NULL;
	pcre2_match_data *md = NULL;
	pcre2_match_context *mc = NULL;
	uint32_t *idx = NULL, from, *path = NULL;
	size_t i, start = 0, n, depth = 0, ncount;
	json_t *o = NULL, *pj;
	int err, rc, backward;
	PCRE2_SIZE eoff;

	err = get_view(c);
	if (!err)
		err = get_string(c, "pattern", MAX_FIND_PATTERN, &pattern);
	if (!err)
		err = get_row(c, "from", &from);
	if (!err)
		err = get_bool(c, "backward", 0, &backward);
	if (!err && !pattern) {
		hs_diag_set(&c->diag, 0, "find needs a pattern");
		err = -EINVAL;
	}
	if (!err)
		err = sorted_rows(c, &idx);
	if (err)
		return reply_err(c, err, "");
	v = &c->view->u.view.v;
	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_CASELESS, &rc,
			   &eoff, NULL);
	if (!re) {
		PCRE2_UCHAR msg[160];

		pcre2_get_error_message(rc, msg, sizeof(msg));
		hs_free(idx);
		return hs__reply_error(c->resp, 400, "find: %s at character %zu",
				       (char *)msg, (size_t)eoff);
	}
	md = pcre2_match_data_create_from_pattern(re, NULL);
	mc = pcre2_match_context_create(NULL);
	if (!md || !mc)
		goto out;
	pcre2_set_match_limit(mc, 100000);
	pcre2_set_depth_limit(mc, 1000);
	/* the position of "from" in the order; the search starts after it */
	n = v->nr_rows;
	if (from != HS_NO_NODE)
		for (i = 0; i < n; i++)
			if (idx[i] == from) {
				start = i + 1;
				break;
			}
	if (backward && from == HS_NO_NODE)
		start = n;
	else if (backward)
		start = start ? start - 1 : 0;
	for (ncount = 0; ncount < n; ncount++) {
		uint32_t r;

		if (backward) {
			/* from the row before "from", wrapping around */
			i = (start + 2 * n - 1 - ncount) % n;
		} else {
			i = (start + ncount) % n;
		}
		r = idx[i];
		rc = pcre2_match(re, (PCRE2_SPTR)v->rows[r].name,
				 hs_view_display_len(v->rows[r].name), 0, 0, md, mc);
		if (rc >= 0)
			break;
	}
	o = json_object();
	if (!o)
		goto out;
	if (ncount == n) {
		if (json_object_set_new(o, "id", json_null()))
			goto fail;
		goto out;
	}
	/* ancestors, root first */
	for (uint32_t p = v->rows[idx[i]].parent; p != HS_NO_NODE; p = v->rows[p].parent)
		depth++;
	path = hs_malloc((depth + 1) * sizeof(*path));
	pj = json_array();
	if (!path || !pj || json_object_set_new(o, "path", pj))
		goto fail;
	n = depth;
	for (uint32_t p = v->rows[idx[i]].parent; p != HS_NO_NODE; p = v->rows[p].parent)
		path[--n] = p;
	for (n = 0; n < depth; n++)
		if (json_array_append_new(pj, json_integer(path[n])))
			goto fail;
	if (json_object_set_new(o, "id", json_integer(idx[i])) ||
	    json_object_set_new(o, "index", json_integer((json_int_t)i)) ||
	    json_object_set_new(o, "row", row_obj(v, idx[i])))
		goto fail;
	goto out;
fail:
	json_decref(o);
	o = NULL;
out:
	hs_free(path);
	hs_free(idx);
	pcre2_match_context_free(mc);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return reply_json(c->resp, o, COMPACT);
}

/* Add @v spread evenly over [@a, @b) ns into the buckets of @h. */
static void spread(double *h, size_t nb, double lo, double width, double a, double b,
		   double v)
{
	size_t i, i0, i1;

	if (b <= a) {
		i = a <= lo ? 0 : (size_t)((a - lo) / width);
		h[i < nb ? i : nb - 1] += v;
		return;
	}
	i0 = a <= lo ? 0 : (size_t)((a - lo) / width);
	i1 = b <= lo ? 0 : (size_t)((b - lo) / width);
	if (i0 >= nb)
		i0 = nb - 1;
	if (i1 >= nb)
		i1 = nb - 1;
	for (i = i0; i <= i1; i++) {
		double s = lo + (double)i * width, e = s + width;
		double ov = (b < e ? b : e) - (a > s ? a : s);

		if (i == nb - 1 && b > e)
			ov += b - e;
		if (i == 0 && a < s)
			ov += s - a;
		if (ov > 0)
			h[i] += v * ov / (b - a);
	}
}

/* The heapscope trace the query's source is a view of, or NULL. */
static const struct hs_trace *heap_trace(struct ctx *c)
{
	struct hs_diag d = HS_DIAG_INIT(NULL);
	const struct hs_trace *t;

	if (c->query.src.kind != HS_API_SRC_TRACE ||
	    c->app->traces[c->query.src.trace].fmt != HS_FORMAT_HEAPSCOPE ||
	    hs_app_heap(c->app, c->query.src.trace, &t, &d))
		return NULL;
	return t;
}

/*
 * A heap trace's heap in use and RSS, "heap" and "rss": [[ms, bytes], ...]
 * in at most @points points, each the highest value in its stretch of
 * time. A trace that cannot be read again gives none. 0 or -ENOMEM.
 */
static int add_heap_timelines(struct ctx *c, json_t *o, size_t points)
{
	struct hs_timeline heap = { 0 }, rss = { 0 };
	const struct hs_trace *t = heap_trace(c);
	int err = 0;

	if (hs_heap_timelines(t, points, &heap, &rss) ||
	    json_object_set_new(o, "heap", hs_timeline_json(&heap)) ||
	    json_object_set_new(o, "rss", hs_timeline_json(&rss)))
		err = -ENOMEM;
	hs_timeline_release(&heap);
	hs_timeline_release(&rss);
	return err;
}

/*
 * The timeline: the source's metric per time bucket over the whole trace,
 * for all samples and for those the filter keeps (the time window aside).
 */
static int api_timeline(struct ctx *c)
{
	const struct hs_calltree *ct;
	const struct hs_stack_source *s;
	size_t nb, i;
	double *all = NULL, *kept = NULL, lo, hi, width;
	json_t *o = NULL, *ja, *jk;
	int64_t first, last;
	int tm;

	int err = get_tree(c);

	if (!err)
		err = get_uint(c, "buckets", 400, MAX_BUCKETS, &nb);
	if (!err && !nb) {
		hs_diag_set(&c->diag, 0, "buckets must be at least 1");
		err = -EINVAL;
	}
	if (err)
		return reply_err(c, err, "");
	ct = &c->tree->u.tree;
	s = c->src;
	tm = s->kind == HS_METRIC_TIME;
	hs_source_time_range(s, &first, &last);
	lo = first < 0 ? (double)first : 0;
	hi = (double)last;
	if (tm)
		for (i = 0; i < s->nr_samples; i++) {
			double e = (double)s->time[i] + fabs(s->metric[i]) * 1e6;

			if (e > hi)
				hi = e;
		}
	/* a heap trace's timeline spans the whole run (its heap and RSS too) */
	if (heap_trace(c) && (double)heap_trace(c)->duration_ns > hi)
		hi = (double)heap_trace(c)->duration_ns;
	/* all at one time: 1 ms in all */
	width = hi > lo ? (hi - lo) / (double)nb : 1e6 / (double)nb;
	all = hs_calloc(nb, sizeof(*all));
	kept = hs_calloc(nb, sizeof(*kept));
	if (!all || !kept)
		goto out;
	for (i = 0; i < s->nr_samples; i++) {
		double t = (double)s->time[i], m = s->metric[i];
		double e = tm ? t + fabs(m) * 1e6 : t;
		uint32_t st = s->stack[i];
		uint32_t to = st == HS_NO_STACK ? ct->f.root_map : ct->f.map[st];

		spread(all, nb, lo, width, t, e, m);
		if (to != HS_DROPPED)
			spread(kept, nb, lo, width, t, e, m);
	}
	o = json_object();
	ja = json_array();
	jk = json_array();
	if (!o || !ja || !jk || json_object_set_new(o, "all", ja) ||
	    json_object_set_new(o, "filtered", jk)) {
		json_decref(ja);
		json_decref(jk);
		goto fail;
	}
	for (i = 0; i < nb; i++)
		if (json_array_append_new(ja, json_real(all[i])) ||
		    json_array_append_new(jk, json_real(kept[i])))
			goto fail;
	if (heap_trace(c) && add_heap_timelines(c, o, nb))
		goto fail;
	if (json_object_set_new(o, "start_ms", json_real(lo / 1e6)) ||
	    json_object_set_new(o, "end_ms", json_real((lo + width * (double)nb) / 1e6)) ||
	    json_object_set_new(o, "bucket_ms", json_real(width / 1e6)) ||
	    json_object_set_new(o, "time_metric", json_boolean(tm)) ||
	    json_object_set_new(o, "unit", hs_view_json_text(s->metric_unit)))
		goto fail;
	goto out;
fail:
	json_decref(o);
	o = NULL;
out:
	hs_free(all);
	hs_free(kept);
	return reply_json(c->resp, o, COMPACT);
}

/*
 * The samples of a name ("name") or call-tree node ("path"), inclusive or
 * exclusive ("what"), that pass the filter: a page of them in time order
 * with their original stacks.
 */
static int api_samples(struct ctx *c)
{
	struct hs_stack_source out;
	struct hs_query_step step = { .kind = HS_STEP_DRILL, .what = HS_DRILL_INC };
	const struct hs_calltree *ct;
	const char *what, **names = NULL;
	uint32_t id, frames[MAX_STACK_SHOWN];
	size_t offset, count, i, k, depth, n;
	json_t *o = NULL, *rows, *path, *row, *st;
	int err;

	hs_source_init(&out);
	err = get_tree(c);
	if (!err)
		err = get_string(c, "name", HS_API_MAX_TEXT, &step.name);
	if (!err)
		err = get_string(c, "what", 8, &what);
	if (!err)
		err = get_uint(c, "offset", 0, UINT32_MAX, &offset);
	if (!err)
		err = get_uint(c, "count", 100, MAX_SAMPLES_PAGE, &count);
	if (err)
		return reply_err(c, err, "");
	if (what && strcmp(what, "inc") && strcmp(what, "exc"))
		return hs__reply_error(c->resp, 400, "what must be \"inc\" or \"exc\"");
	step.what = what && !strcmp(what, "exc") ? HS_DRILL_EXC : HS_DRILL_INC;
	path = json_object_get(c->q, "path");
	if (path && !json_is_null(path)) {
		n = json_is_array(path) ? json_array_size(path) : 0;
		if (!n || n > HS_API_MAX_PATH)
			return hs__reply_error(c->resp, 400,
					       "path must be an array of 1 to %d "
					       "names",
					       HS_API_MAX_PATH);
		names = hs_calloc(n, sizeof(*names));
		if (!names)
			return hs__reply_error(c->resp, 503, "out of memory");
		for (i = 0; i < n; i++) {
			names[i] = json_string_value(json_array_get(path, i));
			if (!names[i]) {
				hs_free(names);
				return hs__reply_error(c->resp, 400,
						       "path: names are strings");
			}
		}
		step.path = names;
		step.path_len = n;
	}
	if (!step.name == !step.path_len) {
		hs_free(names);
		return hs__reply_error(c->resp, 400, "samples needs a name or a path");
	}
	ct = &c->tree->u.tree;
	if (step.path_len) {
		err = hs_query_find_path(ct, step.path, step.path_len, &id);
		if (!err)
			err = hs_drill_node(ct, id, step.what, &out);
	} else {
		err = hs_calltree_find_name(ct, step.name, &id);
		if (!err)
			err = hs_drill_name(ct, id, step.what, &out);
	}
	hs_free(names);
	if (err) {
		hs_source_release(&out);
		if (err == -ENOENT)
			return hs__reply_error(c->resp, 404,
					       "no such name or call-tree node");
		return reply_err(c, err, "");
	}
	rows = json_array();
	o = json_pack("{s:I, s:I, s:o}", "total", (json_int_t)out.nr_samples,
		      "offset", (json_int_t)offset, "rows", rows);
	if (!o)
		goto fail;
	for (i = offset; i < out.nr_samples && i - offset < count; i++) {
		depth = hs_source_stack_frames(&out, out.stack[i], frames, MAX_STACK_SHOWN);
		st = json_array();
		row = json_pack("{s:f, s:f, s:f, s:I, s:o}", "time_ms", ms(out.time[i]),
				"metric", out.metric[i], "count", out.count[i],
				"depth", (json_int_t)depth, "stack", st);
		if (!row || json_array_append_new(rows, row))
			goto fail;
		n = depth < MAX_STACK_SHOWN ? depth : MAX_STACK_SHOWN;
		for (k = 0; k < n; k++)
			if (json_array_append_new(
				st, hs_view_json_text(hs_source_frame_name(&out, frames[k]))))
				goto fail;
	}
	goto out;
fail:
	json_decref(o);
	o = NULL;
out:
	hs_source_release(&out);
	return reply_json(c->resp, o, COMPACT);
}

/* The stats of the heap trace behind @s (cached per trace), or NULL. */
static json_t *heap_stats(struct ctx *c, const struct hs_api_src *s)
{
	struct hs_app_trace *t;
	struct hs_heap_stats hs;
	const struct hs_trace *ht;
	struct hs_diag d = HS_DIAG_INIT(NULL);

	if (s->kind != HS_API_SRC_TRACE)
		return NULL;
	t = &c->app->traces[s->trace];
	if (t->fmt != HS_FORMAT_HEAPSCOPE)
		return NULL;
	if (!t->heap_stats && !hs_app_heap(c->app, s->trace, &ht, &d) &&
	    !hs_heap_stats_compute(ht, &(struct hs_stats_opts){ 0 }, &hs, &d)) {
		t->heap_stats = hs_heap_stats_json(&hs);
		hs_heap_stats_release(&hs);
	}
	return t->heap_stats ? json_incref(t->heap_stats) : NULL;
}

/*
 * Numbers about the query's source (with its saved text boxes) and what
 * the filter made of it; for a heap trace also its stats (`heapscope
 * stats --format json`).
 */
static int api_stats(struct ctx *c)
{
	const struct hs_calltree *ct;
	const struct hs_stack_source *s;
	double metric, count;
	int64_t first, last;
	uint32_t maxd = 0;
	size_t i;
	json_t *o, *heap;
	int err = get_tree(c);

	if (err)
		return reply_err(c, err, "");
	ct = &c->tree->u.tree;
	s = c->src;
	hs_source_totals(s, &metric, &count);
	hs_source_time_range(s, &first, &last);
	for (i = 0; i < s->nr_stacks; i++)
		if (s->stack_depth[i] > maxd)
			maxd = s->stack_depth[i];
	o = json_pack("{s:{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:b, s:I, s:o},"
		      " s:{s:I, s:I, s:I, s:I, s:I, s:f, s:o?},"
		      " s:{s:I, s:I, s:I}}",
		      "source",
		      "samples", (json_int_t)s->nr_samples,
		      "frames", (json_int_t)hs_source_nr_frames(s),
		      "stacks", (json_int_t)s->nr_stacks,
		      "max_depth", (json_int_t)maxd,
		      "metric", metric, "count", count,
		      "first_ms", ms(first), "last_ms", ms(last),
		      "unit", hs_view_json_text(s->metric_unit),
		      "time_metric", s->kind == HS_METRIC_TIME,
		      "memory_bytes", (json_int_t)hs_source_memory(s),
		      "defaults", defaults_json(&s->defaults),
		      "filter",
		      "samples", (json_int_t)ct->nr_samples,
		      "frames", (json_int_t)hs_source_nr_frames(&ct->f.out),
		      "stacks", (json_int_t)ct->f.out.nr_stacks,
		      "groups", (json_int_t)ct->f.nr_groups,
		      "folded_nodes", (json_int_t)ct->nr_folded,
		      "fold_threshold", ct->fold_threshold,
		      "fold_pct", isnan(ct->fold_pct) ? NULL : json_real(ct->fold_pct),
		      "cache",
		      "entries", (json_int_t)c->app->cache.nr,
		      "hits", (json_int_t)c->app->cache.hits,
		      "misses", (json_int_t)c->app->cache.misses);
	heap = heap_stats(c, &c->query.src);
	if (o && heap && json_object_set_new(o, "heap", heap)) {
		json_decref(o);
		o = NULL;
	}
	return reply_json(c->resp, o, COMPACT);
}

/* Each line's exc_pct and inc_pct of @basis in the files of @o. */
static int add_line_pcts(json_t *o, double basis)
{
	json_t *file, *line;
	size_t i, k;

	json_array_foreach(json_object_get(o, "files"), i, file)
		json_array_foreach(json_object_get(file, "lines"), k, line) {
			double e = json_real_value(json_object_get(line, "exc"));
			double n = json_real_value(json_object_get(line, "inc"));

			if (json_object_set_new(line, "exc_pct",
						json_real(basis > 0 ? 100 * e / basis : 0)) ||
			    json_object_set_new(line, "inc_pct",
						json_real(basis > 0 ? 100 * n / basis : 0)))
				return -ENOMEM;
		}
	return 0;
}

/* Goto Source reads at most this many files of at most this size an answer. */
#define SOURCE_MAX_FILES 8
#define SOURCE_MAX_BYTES ((size_t)4 << 20)

/*
 * Goto Source: the cost of the function "name" (a row key) per source
 * line over the samples the query's filter keeps, computed as `heapscope
 * source` does (analysis/sourcelines.h), with the text of the files the
 * trace's line information names for it: never a path from the request,
 * only regular files, bounded in number and size. 501 when the source has
 * no locations.
 */
static int api_source(struct ctx *c)
{
	struct hs_source_text text[SOURCE_MAX_FILES];
	const struct hs_source_text **tp;
	const struct hs_calltree *ct;
	struct hs_source_lines sl;
	const char *name;
	size_t i, nr_read = 0;
	json_t *o;
	int err = get_tree(c);

	if (!err)
		err = get_string(c, "name", HS_API_MAX_TEXT, &name);
	if (!err && !name) {
		hs_diag_set(&c->diag, 0, "source needs a name");
		err = -EINVAL;
	}
	if (err)
		return reply_err(c, err, "");
	ct = &c->tree->u.tree;
	err = hs_source_lines_filtered(&ct->f, name, &sl, &c->diag);
	if (err == -ENODATA)
		return hs__reply_error(c->resp, 501, "%s", c->diag.msg);
	if (err)
		return reply_err(c, err, "");
	/* the costliest files first (sl.files is in that order) */
	tp = hs_calloc(sl.nr_files + 1, sizeof(*tp));
	for (i = 0; tp && i < sl.nr_files && nr_read < SOURCE_MAX_FILES; i++)
		if (sl.files[i].path &&
		    !hs_source_text_load(sl.files[i].path, NULL, 0, SOURCE_MAX_BYTES,
					 &text[nr_read]))
			tp[i] = &text[nr_read++];
	o = tp ? hs_source_lines_json(&sl, tp, HS_SOURCE_JSON_WHOLE_TEXT) : NULL;
	for (i = 0; i < nr_read; i++)
		hs_source_text_release(&text[i]);
	hs_free(tp);
	hs_source_lines_release(&sl);
	if (o && (json_object_set_new(o, "name", json_string(name)) ||
		  json_object_set_new(o, "unit", hs_view_json_text(ct->in->metric_unit)) ||
		  add_line_pcts(o, hs_calltree_basis(ct)))) {
		json_decref(o);
		o = NULL;
	}
	return reply_json(c->resp, o, COMPACT);
}

/*
 * The Overweight report: the query's source and params are the test, the
 * "base" source (as in a diff) with "base_params" the baseline.
 */
static int api_overweight(struct ctx *c)
{
	struct hs_api_params bp;
	struct hs_api_query bq;
	struct hs_overweight ow;
	struct resolved t, b;
	json_t *bj, *o = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	bj = json_object_get(c->q, "base");
	if (!bj || !json_is_object(bj))
		return hs__reply_error(c->resp, 400, "overweight needs a base source");
	err = hs_api_query_parse(bj, c->app->nr_traces, 0, &bq, &c->diag);
	if (err)
		return reply_err(c, err, "base: ");
	err = hs_api_params_parse(json_object_get(c->q, "base_params"), &bp, &c->diag);
	if (!err)
		err = resolve_src(c->app, &c->query.src, c->query.src.nr_steps,
				  &c->query.params.vp.filter, &t, &c->diag);
	if (!err)
		err = resolve_src(c->app, &bq.src, bq.src.nr_steps, &bp.vp.filter, &b,
				  &c->diag);
	if (!err)
		err = hs_overweight_compute(b.src, &bp.vp, t.src, &c->query.params.vp, &ow,
					    &c->diag);
	hs_api_query_release(&bq);
	hs_api_params_release(&bp);
	if (err)
		return reply_err(c, err, "");
	f = open_memstream(&text, &len);
	err = f ? hs_overweight_write_json(&ow, f) : -ENOMEM;
	if (f && fclose(f))
		err = -EIO;
	hs_overweight_release(&ow);
	if (!err)
		o = json_loadb(text, len, 0, NULL);
	free(text);
	return reply_json(c->resp, o, COMPACT);
}

struct route {
	const char *path;
	int (*fn)(struct ctx *c);
	int query;		/* parses a query (else none) */
};

static const struct route routes[] = {
	{ "/api/info", api_info, 0 },
	{ "/api/view", api_view, 1 },
	{ "/api/rows", api_rows, 1 },
	{ "/api/tree", api_tree, 1 },
	{ "/api/flame", api_flame, 1 },
	{ "/api/find", api_find, 1 },
	{ "/api/timeline", api_timeline, 1 },
	{ "/api/samples", api_samples, 1 },
	{ "/api/stats", api_stats, 1 },
	{ "/api/source", api_source, 1 },
	{ "/api/overweight", api_overweight, 1 },
	{ NULL, NULL, 0 },
};

/* The saved text boxes of a source, for report-style arguments (NULL: none). */
static const struct hs_source_defaults *arg_defaults(void *ctx, size_t trace,
						     const char *source)
{
	struct ctx *c = ctx;
	struct hs_app_source *as = hs_app_source(c->app, trace, source);

	if (!as || hs_app_load_source(c->app, trace, as, &c->diag))
		return NULL;
	return &as->src.defaults;
}

/* The request's query object: the POST body, or the GET arguments. */
static json_t *request_query(struct ctx *c)
{
	const struct hs_request *req = c->req;
	json_error_t jerr;
	json_t *q;

	if (!strcmp(req->method, "POST")) {
		q = json_loadb(req->body ? req->body : "", req->body_len,
			       JSON_REJECT_DUPLICATES, &jerr);
		if (!q) {
			hs_diag_set(&c->diag, 0, "the body is not JSON: %s at character %d",
				    jerr.text, jerr.position);
			return NULL;
		}
		return q;
	}
	return hs_api_query_from_args(req->arg, req->ctx, arg_defaults, c, &c->diag);
}

static int dispatch(struct hs_app *a, const struct hs_request *req,
		    struct hs_response *resp)
{
	struct ctx c = { .app = a, .req = req, .resp = resp, .diag = HS_DIAG_INIT(NULL) };
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
		c.q = request_query(&c);
		if (!c.q)
			return hs__reply_error(resp, 400, "%s", c.diag.set ? c.diag.msg
									  : "bad query");
		if (!json_is_object(c.q)) {
			json_decref(c.q);
			return hs__reply_error(resp, 400,
					       "the query must be a JSON object");
		}
		err = hs_api_query_parse(c.q, a->nr_traces, 0, &c.query, &c.diag);
		if (err) {
			reply_err(&c, err, "");
			json_decref(c.q);
			return 0;
		}
	}
	r->fn(&c);
	hs_api_query_release(&c.query);
	json_decref(c.q);
	return 0;
}

void hs__routes_handle(struct hs_app *a, const struct hs_request *req,
		       struct hs_response *resp)
{
	dispatch(a, req, resp);
}
