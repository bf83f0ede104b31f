/*
 * params - the API's query objects and the report-style GET arguments
 * (see params.h).
 */
#include "server/params.h"
#include "analysis/presets.h"
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/utf8.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEY_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17))

/* An owned (hs_malloc) copy of @o's canonical text, or NULL. */
static char *dump_key(const json_t *o)
{
	char *s = json_dumps(o, KEY_FLAGS), *copy;

	if (!s)
		return NULL;
	copy = hs_strdup(s);
	free(s);
	return copy;
}

/* Set @key to @val (a new reference); NULL or a failure makes it -ENOMEM. */
static int put(json_t *obj, const char *key, json_t *val)
{
	return val && !json_object_set_new(obj, key, val) ? 0 : -ENOMEM;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/*
 * A number: a JSON number, a numeric string, or null / "" for none (NAN).
 * Returns 0 or -EINVAL.
 */
static int get_number(const json_t *v, const char *what, double *out, struct hs_diag *d)
{
	const char *s;
	char *end;

	*out = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_number(v)) {
		*out = json_number_value(v);
	} else if (json_is_string(v)) {
		s = json_string_value(v);
		while (*s == ' ')
			s++;
		if (!*s)
			return 0;
		*out = strtod(s, &end);
		while (*end == ' ')
			end++;
		if (end == s || *end) {
			hs_diag_set(d, 0, "%s expects a number, not '%.80s'", what,
				    json_string_value(v));
			return -EINVAL;
		}
	} else {
		hs_diag_set(d, 0, "%s expects a number", what);
		return -EINVAL;
	}
	if (!isfinite(*out)) {
		hs_diag_set(d, 0, "%s expects a finite number", what);
		return -EINVAL;
	}
	return 0;
}

/* A bounded string without NUL bytes, or NULL for null / absent. */
static int get_text(const json_t *v, const char *what, size_t max, const char **out,
		    struct hs_diag *d)
{
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		hs_diag_set(d, 0, "%s expects a string", what);
		return -EINVAL;
	}
	if (json_string_length(v) > max) {
		hs_diag_set(d, 0, "%s is longer than %zu bytes", what, max);
		return -EINVAL;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		hs_diag_set(d, 0, "%s holds a NUL character", what);
		return -EINVAL;
	}
	*out = json_string_value(v);
	return 0;
}

/* Only the keys in @allowed (NULL-terminated) may appear in @o. */
static int check_keys(const json_t *o, const char *what, const char *const *allowed,
		      struct hs_diag *d)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)o, key, v)
	{
		for (i = 0; allowed[i]; i++)
			if (!strcmp(key, allowed[i]))
				break;
		if (!allowed[i]) {
			hs_diag_set(d, 0, "unknown key '%.80s' in %s", key, what);
			return -EINVAL;
		}
	}
	return 0;
}

static const char *const params_keys[] = {"start",    "end", "group", "fold",
					  "fold_pct", "inc", "exc",   NULL};

/* The canonical object of parsed params (strings "" when absent). */
static json_t *params_json(const struct hs_view_params *vp)
{
	const struct hs_filter_params *f = &vp->filter;
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= put(o, "start", num_or_null(f->start_ms));
	err |= put(o, "end", num_or_null(f->end_ms));
	err |= put(o, "group", hs_view_json_text(f->group ? f->group : ""));
	err |= put(o, "fold", hs_view_json_text(f->fold ? f->fold : ""));
	err |= put(o, "fold_pct", num_or_null(vp->fold_pct));
	err |= put(o, "inc", hs_view_json_text(f->inc ? f->inc : ""));
	err |= put(o, "exc", hs_view_json_text(f->exc ? f->exc : ""));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Parse @p into @vp (no key). */
static int parse_view_params(const json_t *p, struct hs_view_params *vp,
			     struct hs_diag *d)
{
	struct hs_filter_params *f = &vp->filter;
	int err = 0;

	*vp = (struct hs_view_params)HS_VIEW_PARAMS_INIT;
	if (!p || json_is_null(p))
		return 0;
	if (!json_is_object(p)) {
		hs_diag_set(d, 0, "params must be an object");
		return -EINVAL;
	}
	err = check_keys(p, "params", params_keys, d);
	if (!err)
		err = get_number(json_object_get(p, "start"), "start", &f->start_ms, d);
	if (!err)
		err = get_number(json_object_get(p, "end"), "end", &f->end_ms, d);
	if (!err)
		err = get_number(json_object_get(p, "fold_pct"), "fold_pct",
				 &vp->fold_pct, d);
	if (!err)
		err = get_text(json_object_get(p, "group"), "group", HS_API_MAX_TEXT,
			       &f->group, d);
	if (!err)
		err = get_text(json_object_get(p, "fold"), "fold", HS_API_MAX_TEXT,
			       &f->fold, d);
	if (!err)
		err = get_text(json_object_get(p, "inc"), "inc", HS_API_MAX_TEXT, &f->inc,
			       d);
	if (!err)
		err = get_text(json_object_get(p, "exc"), "exc", HS_API_MAX_TEXT, &f->exc,
			       d);
	if (err)
		return err;
	if (vp->fold_pct < 0) {
		hs_diag_set(d, 0, "fold_pct must not be negative");
		return -EINVAL;
	}
	if (f->end_ms < f->start_ms) {
		hs_diag_set(d, 0, "end is before start");
		return -EINVAL;
	}
	return 0;
}

int hs_api_params_parse(const json_t *p, struct hs_api_params *out, struct hs_diag *diag)
{
	json_t *o;
	int err;

	memset(out, 0, sizeof(*out));
	err = parse_view_params(p, &out->vp, diag);
	if (err)
		return err;
	o = params_json(&out->vp);
	out->key = o ? dump_key(o) : NULL;
	json_decref(o);
	return out->key ? 0 : -ENOMEM;
}

void hs_api_params_release(struct hs_api_params *p)
{
	hs_free(p->key);
	memset(p, 0, sizeof(*p));
}

static const char *const step_keys[] = {
    "kind", "params", "name", "path", "what", "tree", NULL,
};

/* Parse step @s into @st; @norm gets its canonical object. */
static int parse_step(const json_t *s, struct hs_query_step *st, json_t **norm,
		      struct hs_diag *d)
{
	const char *kind = NULL, *what = NULL, *tree = NULL;
	const json_t *path;
	const char **names;
	json_t *o, *p;
	size_t i, n;
	int err;

	*norm = NULL;
	memset(st, 0, sizeof(*st));
	if (!json_is_object(s)) {
		hs_diag_set(d, 0, "a step must be an object");
		return -EINVAL;
	}
	err = check_keys(s, "a step", step_keys, d);
	if (!err)
		err = get_text(json_object_get(s, "kind"), "kind", 16, &kind, d);
	if (!err)
		err = get_text(json_object_get(s, "what"), "what", 16, &what, d);
	if (!err)
		err = get_text(json_object_get(s, "name"), "name", HS_API_MAX_TEXT,
			       &st->name, d);
	if (!err)
		err = get_text(json_object_get(s, "tree"), "tree", 16, &tree, d);
	if (!err)
		err = parse_view_params(json_object_get(s, "params"), &st->params, d);
	if (err)
		return err;
	/* a path in the Callers or Callees tree (path[0] the focus), else the CallTree */
	st->tree = HS_VIEW_CALLTREE;
	if (tree && (hs_view_kind_parse(tree, &st->tree) ||
		     (st->tree != HS_VIEW_CALLTREE && st->tree != HS_VIEW_CALLERS &&
		      st->tree != HS_VIEW_CALLEES))) {
		hs_diag_set(
		    d, 0,
		    "a step's tree must be \"calltree\", \"callers\" or \"callees\"");
		return -EINVAL;
	}
	if (!kind || (strcmp(kind, "drill") && strcmp(kind, "flatten"))) {
		hs_diag_set(d, 0, "a step's kind must be \"drill\" or \"flatten\"");
		return -EINVAL;
	}
	st->kind = !strcmp(kind, "drill") ? HS_STEP_DRILL : HS_STEP_FLATTEN;
	if (what && strcmp(what, "inc") && strcmp(what, "exc")) {
		hs_diag_set(d, 0, "a step's what must be \"inc\" or \"exc\"");
		return -EINVAL;
	}
	st->what = what && !strcmp(what, "exc") ? HS_DRILL_EXC : HS_DRILL_INC;
	path = json_object_get(s, "path");
	if (path && !json_is_null(path)) {
		n = json_is_array(path) ? json_array_size(path) : 0;
		if (!n || n > HS_API_MAX_PATH) {
			hs_diag_set(d, 0,
				    "a step's path must be an array of 1 to %d names",
				    HS_API_MAX_PATH);
			return -EINVAL;
		}
		names = hs_calloc(n, sizeof(*names));
		if (!names)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			err = get_text(json_array_get(path, i), "a path name",
				       HS_API_MAX_TEXT, &names[i], d);
			if (!err && !names[i]) {
				hs_diag_set(d, 0, "a path name must be a string");
				err = -EINVAL;
			}
			if (err) {
				hs_free(names);
				return err;
			}
		}
		st->path = names;
		st->path_len = n;
	}
	if (st->kind == HS_STEP_DRILL && !st->name == !st->path_len) {
		hs_diag_set(d, 0, "a drill step needs a name or a path (not both)");
		goto inval;
	}
	if (st->tree != HS_VIEW_CALLTREE &&
	    (st->kind != HS_STEP_DRILL || !st->path_len)) {
		hs_diag_set(d, 0, "a step's tree goes with a drill step's path");
		goto inval;
	}
	if (st->kind == HS_STEP_FLATTEN && (st->name || st->path_len)) {
		hs_diag_set(d, 0, "a flatten step takes no name or path");
		goto inval;
	}
	o = json_object();
	p = params_json(&st->params);
	if (!o || put(o, "params", p) || put(o, "kind", json_string(kind)))
		goto nomem;
	if (st->kind == HS_STEP_DRILL) {
		if (put(o, "what", json_string(st->what == HS_DRILL_EXC ? "exc" : "inc")))
			goto nomem;
		if (st->name ? put(o, "name", json_string(st->name))
			     : put(o, "path", json_deep_copy(path)))
			goto nomem;
		if (st->tree != HS_VIEW_CALLTREE &&
		    put(o, "tree", json_string(hs_view_kind_name(st->tree))))
			goto nomem;
	}
	*norm = o;
	return 0;
nomem:
	json_decref(o);
	err = -ENOMEM;
	goto fail;
inval:
	err = -EINVAL;
fail:
	hs_free((void *)st->path);
	st->path = NULL;
	st->path_len = 0;
	return err;
}

static void src_release(struct hs_api_src *s)
{
	size_t i;

	if (s->test) {
		src_release(s->test);
		hs_free(s->test);
	}
	if (s->base) {
		src_release(s->base);
		hs_free(s->base);
	}
	hs_api_params_release(&s->test_params);
	hs_api_params_release(&s->base_params);
	for (i = 0; i < s->nr_steps; i++)
		hs_free((void *)s->steps[i].path);
	hs_free(s->steps);
	if (s->keys)
		for (i = 0; i <= s->nr_steps; i++)
			hs_free(s->keys[i]);
	hs_free(s->keys);
	memset(s, 0, sizeof(*s));
}

static int parse_src(const json_t *q, size_t nr_traces, int depth, int top,
		     struct hs_api_src *out, json_t **norm, struct hs_diag *d);

static const char *const src_keys[] = {"trace", "source", "diff", "steps", NULL};
static const char *const diff_keys[] = {"test", "test_params", "base", "base_params",
					NULL};

/* The "diff" object of a source: its two sides and their params. */
static int parse_diff(const json_t *dj, size_t nr_traces, int depth,
		      struct hs_api_src *out, json_t *o, struct hs_diag *d)
{
	json_t *dn = json_object(), *tn = NULL, *bn = NULL;
	int err;

	if (!dn)
		return -ENOMEM;
	if (depth >= HS_API_MAX_DIFF_DEPTH) {
		hs_diag_set(d, 0, "diffs nest at most %d deep", HS_API_MAX_DIFF_DEPTH);
		err = -EINVAL;
		goto out;
	}
	if (!json_is_object(dj)) {
		hs_diag_set(d, 0, "diff must be an object");
		err = -EINVAL;
		goto out;
	}
	err = check_keys(dj, "diff", diff_keys, d);
	if (err)
		goto out;
	err = -EINVAL;
	if (!json_object_get(dj, "test") || !json_object_get(dj, "base")) {
		hs_diag_set(d, 0, "a diff needs a test and a base source");
		goto out;
	}
	err = -ENOMEM;
	out->test = hs_calloc(1, sizeof(*out->test));
	out->base = hs_calloc(1, sizeof(*out->base));
	if (!out->test || !out->base)
		goto out;
	err = parse_src(json_object_get(dj, "test"), nr_traces, depth + 1, 0, out->test,
			&tn, d);
	if (!err)
		err = parse_src(json_object_get(dj, "base"), nr_traces, depth + 1, 0,
				out->base, &bn, d);
	if (!err)
		err = hs_api_params_parse(json_object_get(dj, "test_params"),
					  &out->test_params, d);
	if (!err)
		err = hs_api_params_parse(json_object_get(dj, "base_params"),
					  &out->base_params, d);
	if (err)
		goto out;
	err = -ENOMEM;
	if (put(dn, "test", json_incref(tn)) || put(dn, "base", json_incref(bn)) ||
	    put(dn, "test_params", json_loads(out->test_params.key, 0, NULL)) ||
	    put(dn, "base_params", json_loads(out->base_params.key, 0, NULL)) ||
	    put(o, "diff", json_incref(dn)))
		goto out;
	err = 0;
out:
	json_decref(tn);
	json_decref(bn);
	json_decref(dn);
	return err;
}

/*
 * Parse the source described by @q (the keys "trace", "source", "diff", "steps";
 * only those unless @top) into @out, with its canonical object in @norm.
 */
static int parse_src(const json_t *q, size_t nr_traces, int depth, int top,
		     struct hs_api_src *out, json_t **norm, struct hs_diag *d)
{
	const json_t *tj = NULL, *dj = NULL, *sj = NULL, *nj = NULL;
	json_t *o = json_object(), *steps = json_array(), *sn;
	size_t i, n = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	*norm = NULL;
	if (!o || !steps)
		goto fail;
	err = -EINVAL;
	if (q && !json_is_object(q)) {
		hs_diag_set(d, 0, "a source must be an object");
		goto fail;
	}
	if (q) {
		if (!top && check_keys(q, "a source", src_keys, d))
			goto fail;
		tj = json_object_get(q, "trace");
		nj = json_object_get(q, "source");
		dj = json_object_get(q, "diff");
		sj = json_object_get(q, "steps");
	}
	if ((tj || (nj && !json_is_null(nj))) && dj) {
		hs_diag_set(d, 0, "a source is a trace or a diff, not both");
		goto fail;
	}
	if (get_text(nj, "source", 64, &out->source, d))
		goto fail;
	if (dj) {
		out->kind = HS_API_SRC_DIFF;
		err = parse_diff(dj, nr_traces, depth, out, o, d);
		if (err)
			goto fail;
	} else {
		out->kind = HS_API_SRC_TRACE;
		if (tj && !json_is_integer(tj)) {
			hs_diag_set(d, 0, "trace must be a whole number");
			goto fail;
		}
		if (tj && (json_integer_value(tj) < 0 ||
			   (size_t)json_integer_value(tj) >= nr_traces)) {
			hs_diag_set(d, 0, "no trace %lld (%zu loaded)",
				    (long long)json_integer_value(tj), nr_traces);
			goto fail;
		}
		out->trace = tj ? (size_t)json_integer_value(tj) : 0;
		if (!nr_traces) {
			hs_diag_set(d, 0, "no trace is loaded");
			goto fail;
		}
		if (put(o, "trace", json_integer((json_int_t)out->trace)) ||
		    (out->source && *out->source &&
		     put(o, "source", json_string(out->source)))) {
			err = -ENOMEM;
			goto fail;
		}
	}
	if (sj && !json_is_null(sj)) {
		n = json_is_array(sj) ? json_array_size(sj) : (size_t)-1;
		if (n > HS_API_MAX_STEPS) {
			hs_diag_set(d, 0, "steps must be an array of at most %d steps",
				    HS_API_MAX_STEPS);
			goto fail;
		}
	}
	err = -ENOMEM;
	out->steps = hs_calloc(n + 1, sizeof(*out->steps));
	out->keys = hs_calloc(n + 1, sizeof(*out->keys));
	if (!out->steps || !out->keys)
		goto fail;
	for (i = 0; i <= n; i++) {
		/* keys[i]: the source with its first i steps */
		if (put(o, "steps", json_copy(steps)))
			goto fail;
		out->keys[i] = dump_key(o);
		if (!out->keys[i])
			goto fail;
		if (i == n)
			break;
		err = parse_step(json_array_get(sj, i), &out->steps[i], &sn, d);
		if (err)
			goto fail;
		out->nr_steps++;
		err = -ENOMEM;
		if (json_array_append_new(steps, sn))
			goto fail;
	}
	json_decref(steps);
	*norm = o;
	return 0;
fail:
	json_decref(steps);
	json_decref(o);
	/* keys[] holds up to nr_steps + 1 entries; the rest are NULL */
	src_release(out);
	return err;
}

int hs_api_query_parse(const json_t *q, size_t nr_traces, int need_focus,
		       struct hs_api_query *out, struct hs_diag *diag)
{
	const char *view = NULL;
	struct hs_buf key = HS_BUF_INIT;
	const json_t *v;
	json_t *norm = NULL;
	json_int_t n;
	size_t k;
	int err;

	memset(out, 0, sizeof(*out));
	out->view.kind = HS_VIEW_BYNAME;
	if (!json_is_object(q)) {
		hs_diag_set(diag, 0, "the query must be a JSON object");
		return -EINVAL;
	}
	err = parse_src(q, nr_traces, 0, 1, &out->src, &norm, diag);
	json_decref(norm);
	if (!err)
		err =
		    hs_api_params_parse(json_object_get(q, "params"), &out->params, diag);
	if (!err)
		err = get_text(json_object_get(q, "view"), "view", 32, &view, diag);
	if (!err)
		err = get_text(json_object_get(q, "focus"), "focus", HS_API_MAX_TEXT,
			       &out->view.focus, diag);
	if (err)
		goto fail;
	err = -EINVAL;
	if (view && hs_view_kind_parse(view, &out->view.kind)) {
		hs_diag_set(diag, 0,
			    "unknown view '%.40s' (byname, calltree, callers, callees, "
			    "caller-callee or flame)",
			    view);
		goto fail;
	}
	if (hs_view_focus_check(out->view.kind, out->view.focus, need_focus, "focus",
				diag))
		goto fail;
	v = json_object_get(q, "limit");
	if (v && !json_is_null(v)) {
		n = json_is_integer(v) ? json_integer_value(v) : -1;
		if (n < 0) {
			hs_diag_set(diag, 0, "limit must be a whole number");
			goto fail;
		}
		out->view.limit = (size_t)n;
	}
	v = json_object_get(q, "depth");
	if (v && !json_is_null(v)) {
		n = json_is_integer(v) ? json_integer_value(v) : -1;
		if (n < 0) {
			hs_diag_set(diag, 0, "depth must be a whole number");
			goto fail;
		}
		out->view.max_depth = n > 1000000 ? 1000000 : (unsigned)n;
	}
	err = -ENOMEM;
	if (hs_buf_addf(&key, "{\"params\":%s,\"src\":%s}", out->params.key,
			out->src.keys[out->src.nr_steps]))
		goto fail;
	out->tree_key = hs_buf_detach(&key);
	if (!out->tree_key)
		goto fail;
	/* what the cache keys and the trace lookup rely on */
	HS_BUG_ON(out->src.kind == HS_API_SRC_TRACE && out->src.trace >= nr_traces);
	for (k = 0; k <= out->src.nr_steps; k++)
		HS_BUG_ON(!out->src.keys[k]);
	return 0;
fail:
	hs_buf_release(&key);
	hs_api_query_release(out);
	return err;
}

void hs_api_query_release(struct hs_api_query *q)
{
	src_release(&q->src);
	hs_api_params_release(&q->params);
	hs_free(q->tree_key);
	memset(q, 0, sizeof(*q));
}

/* ---- report-style GET arguments ---- */

static const char *const arg_names[] = {
    "trace", "source", "view",	"focus",   "group", "fold",  "fold_pct", "inc",	    "exc",
    "start", "end",    "drill", "flatten", "limit", "depth", "preset",	 "exe_dir", NULL};

static int arg_number(const char *s, const char *what, double *out, struct hs_diag *d)
{
	char *end;

	*out = strtod(s, &end);
	if (end == s || *end || !isfinite(*out)) {
		hs_diag_set(d, 0, "%s expects a number, not '%.80s'", what, s);
		return -EINVAL;
	}
	return 0;
}

static int arg_count(const char *s, const char *what, json_int_t *out, struct hs_diag *d)
{
	char *end;
	unsigned long long v;

	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || v > (1ULL << 40)) {
		hs_diag_set(d, 0, "%s expects a whole number, not '%.80s'", what, s);
		return -EINVAL;
	}
	*out = (json_int_t)v;
	return 0;
}

struct flat {
	const char *group, *fold, *inc, *exc;
	double fold_pct, start, end;
	int has_group, has_fold, has_fold_pct;
};

static json_t *flat_params(const struct flat *f)
{
	struct hs_view_params vp = HS_VIEW_PARAMS_INIT;

	vp.filter.group = f->group;
	vp.filter.fold = f->fold;
	vp.filter.inc = f->inc;
	vp.filter.exc = f->exc;
	vp.filter.start_ms = f->start;
	vp.filter.end_ms = f->end;
	vp.fold_pct = f->fold_pct;
	return params_json(&vp);
}

/* --preset: GroupPats "[name] group", its FoldPats, Fold% and ExcPats, unless given. */
static int apply_preset(struct flat *f, const char *name, const char *exe_dir,
			char **group_text, struct hs_diag *d)
{
	const struct hs_preset *p = hs_preset_find(name);
	double pct;

	if (!p) {
		hs_diag_set(d, 0, "unknown preset '%.80s'", name);
		return -EINVAL;
	}
	if (p->needs_exe_dir && (!exe_dir || exe_dir[0] != '/')) {
		hs_diag_set(d, 0,
			    "preset '%s' needs exe_dir with the program's absolute "
			    "directory",
			    p->name);
		return -EINVAL;
	}
	if (hs_preset_group_text(p, exe_dir, group_text))
		return -ENOMEM;
	if (!f->has_group) {
		f->group = *group_text;
		f->has_group = 1;
	}
	if (!f->has_fold && *p->fold) {
		f->fold = p->fold;
		f->has_fold = 1;
	}
	if (!f->has_fold_pct && *p->fold_pct &&
	    !arg_number(p->fold_pct, "fold_pct", &pct, d)) {
		f->fold_pct = pct;
		f->has_fold_pct = 1;
	}
	if (!f->exc && p->exc)
		f->exc = p->exc;
	return 0;
}

/* Whether argument @key is absent or UTF-8 (else @diag says it is not). */
static int utf8_arg(const char *(*arg)(void *ctx, const char *key), void *ctx,
		    const char *key, struct hs_diag *diag)
{
	const char *s = arg(ctx, key);

	if (!s || hs_utf8_valid(s, strlen(s)))
		return 1;
	hs_diag_set(diag, 0, "argument '%s' is not UTF-8", key);
	return 0;
}

json_t *hs_api_query_from_args(const char *(*arg)(void *ctx, const char *key), void *ctx,
			       const struct hs_source_defaults *(*defaults)(
				   void *dctx, size_t trace, const char *source),
			       void *dctx, struct hs_diag *diag)
{
	struct flat f = {.fold_pct = NAN, .start = NAN, .end = NAN};
	const struct hs_source_defaults *dflt = NULL;
	const char *s, *drill, *source;
	char *group_text = NULL, *drill_name = NULL;
	json_t *q, *steps = NULL, *step;
	json_int_t n, trace = 0;
	json_error_t jerr;
	size_t i, len;
	int err = 0, has_start = 0, has_end = 0;

	/* names are matched as they are: a request's bytes must be UTF-8 */
	for (i = 0; arg_names[i]; i++)
		if (!utf8_arg(arg, ctx, arg_names[i], diag))
			return NULL;
	if (!utf8_arg(arg, ctx, "q", diag))
		return NULL;
	s = arg(ctx, "q");
	if (s) {
		for (i = 0; arg_names[i]; i++)
			if (arg(ctx, arg_names[i])) {
				hs_diag_set(diag, 0, "argument '%s' cannot go with q",
					    arg_names[i]);
				return NULL;
			}
		q = json_loads(s, JSON_REJECT_DUPLICATES, &jerr);
		if (!q)
			hs_diag_set(diag, 0, "q: %s at character %d", jerr.text,
				    jerr.position);
		return q;
	}
	q = json_object();
	if (!q)
		return NULL;
	s = arg(ctx, "trace");
	if (s && (err = arg_count(s, "trace", &trace, diag)))
		goto fail;
	source = arg(ctx, "source");
	if (defaults)
		dflt = defaults(dctx, (size_t)trace, source);
	err = -ENOMEM;
	if (put(q, "trace", json_integer(trace)) ||
	    (source && put(q, "source", json_string(source))))
		goto fail;
	if ((s = arg(ctx, "view")) && put(q, "view", json_string(s)))
		goto fail;
	if ((s = arg(ctx, "focus")) && put(q, "focus", json_string(s)))
		goto fail;
	err = 0;
	if ((s = arg(ctx, "limit"))) {
		err = arg_count(s, "limit", &n, diag);
		if (!err && put(q, "limit", json_integer(n)))
			err = -ENOMEM;
	}
	if (!err && (s = arg(ctx, "depth"))) {
		err = arg_count(s, "depth", &n, diag);
		if (!err && put(q, "depth", json_integer(n)))
			err = -ENOMEM;
	}
	if (err)
		goto fail;
	f.has_group = (f.group = arg(ctx, "group")) != NULL;
	f.has_fold = (f.fold = arg(ctx, "fold")) != NULL;
	f.inc = arg(ctx, "inc");
	f.exc = arg(ctx, "exc");
	if ((s = arg(ctx, "fold_pct"))) {
		err = arg_number(s, "fold_pct", &f.fold_pct, diag);
		f.has_fold_pct = 1;
	}
	if (!err && (s = arg(ctx, "start"))) {
		err = arg_number(s, "start", &f.start, diag);
		has_start = 1;
	}
	if (!err && (s = arg(ctx, "end"))) {
		err = arg_number(s, "end", &f.end, diag);
		has_end = 1;
	}
	if (!err && (s = arg(ctx, "preset")))
		err = apply_preset(&f, s, arg(ctx, "exe_dir"), &group_text, diag);
	if (err)
		goto fail;
	/* what is not given comes from the file's saved view state */
	if (dflt) {
		if (!f.has_group)
			f.group = dflt->group;
		if (!f.has_fold)
			f.fold = dflt->fold;
		if (!f.inc)
			f.inc = dflt->inc;
		if (!f.exc)
			f.exc = dflt->exc;
		if (!f.has_fold_pct)
			f.fold_pct = hs_source_default_number(dflt->fold_pct);
		if (!has_start)
			f.start = hs_source_default_number(dflt->start);
		if (!has_end)
			f.end = hs_source_default_number(dflt->end);
	}
	err = -ENOMEM;
	steps = json_array();
	if (!steps)
		goto fail;
	drill = arg(ctx, "drill");
	if (drill) {
		const char *what = "inc";

		len = strlen(drill);
		drill_name = hs_strdup(drill);
		if (!drill_name)
			goto fail;
		if (len > 4 && (!strcmp(drill + len - 4, ":inc") ||
				!strcmp(drill + len - 4, ":exc"))) {
			what = drill + len - 3;
			drill_name[len - 4] = '\0';
		}
		step = json_pack("{s:s, s:s, s:s, s:o*}", "kind", "drill", "name",
				 drill_name, "what", what, "params", flat_params(&f));
		if (!step || json_array_append_new(steps, step))
			goto fail;
		f.inc = f.exc = NULL;
	}
	s = arg(ctx, "flatten");
	if (s && strcmp(s, "0") && strcmp(s, "false")) {
		step = json_pack("{s:s, s:o*}", "kind", "flatten", "params",
				 flat_params(&f));
		if (!step || json_array_append_new(steps, step))
			goto fail;
		f.group = f.fold = f.inc = f.exc = NULL;
		f.fold_pct = NAN;
	}
	if (put(q, "steps", json_incref(steps)) || put(q, "params", flat_params(&f)))
		goto fail;
	json_decref(steps);
	hs_free(group_text);
	hs_free(drill_name);
	return q;
fail:
	if (err == -ENOMEM)
		hs_diag_set(diag, 0, "out of memory");
	json_decref(steps);
	json_decref(q);
	hs_free(group_text);
	hs_free(drill_name);
	return NULL;
}
