/*
 * view_json - a view as a JSON document (docs/json-api.md), built with
 * jansson. Rows are objects; trees nest their children.
 */
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/utf8.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Set @key to a new value; a NULL value (out of memory) fails the object. */
static int set(json_t *obj, const char *key, json_t *val)
{
	return val ? json_object_set_new(obj, key, val) : -1;
}

/* A number; one that is not finite (no JSON number is) becomes null. */
static json_t *num(double x)
{
	if (!isfinite(x))
		return json_null();
	return json_real(x == 0 ? 0 : x);
}

/*
 * A string from @len bytes of a name: names need not be UTF-8, JSON must
 * be, so bytes outside valid sequences become U+FFFD.
 */
static json_t *str(const char *s, size_t len)
{
	json_t *j;
	char *fixed;
	size_t n;

	if (hs_utf8_valid(s, len))
		return json_stringn(s, len);
	fixed = hs_utf8_repair(s, len, &n);
	if (!fixed)
		return NULL;
	j = json_stringn(fixed, n);
	hs_free(fixed);
	return j;
}

json_t *hs_view_json_text(const char *s)
{
	return s ? str(s, strlen(s)) : json_null();
}

static json_t *summary_json(const struct hs_view *v)
{
	const struct hs_view_summary *s = &v->sum;
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= set(o, "metric", num(s->metric));
	err |= set(o, "count", num(s->count));
	err |= set(o, "samples", json_integer((json_int_t)s->samples));
	err |= set(o, "first_ms", num(ms(s->first)));
	err |= set(o, "last_ms", num(ms(s->last)));
	err |= set(o, "interval_ms", num(ms(s->last - s->first)));
	err |= set(o, "metric_per_interval", num(s->metric_per_interval));
	err |= set(o, "bucket_ms", num(s->bucket_ms));
	err |= set(o, "start_ms", num(s->start_ms));
	err |= set(o, "end_ms", num(s->end_ms));
	err |= set(o, "time_metric", json_boolean(s->time_metric));
	err |= set(o, "unit", s->unit ? str(s->unit, strlen(s->unit)) : json_null());
	err |= set(o, "fold_pct", isnan(s->fold_pct) ? json_null() : num(s->fold_pct));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *row_json(const struct hs_view *v, const struct hs_view_row *r)
{
	json_t *o = json_object();
	struct hs_row_parts parts;
	int err = 0, empty = r->first > r->last;

	if (!o)
		return NULL;
	err |= set(o, "name", str(r->name, hs_view_display_len(r->name)));
	err |= set(o, "key", str(r->name, strlen(r->name)));
	err |= set(o, "inc", num(r->inc));
	err |= set(o, "inc_pct", num(hs_view_pct(v, r->inc)));
	err |= set(o, "inc_count", num(r->inc_count));
	err |= set(o, "inc_avg", num(r->inc_count != 0 ? r->inc / r->inc_count : 0));
	err |= set(o, "exc", num(r->exc));
	err |= set(o, "exc_pct", num(hs_view_pct(v, r->exc)));
	err |= set(o, "exc_count", num(r->exc_count));
	err |= set(o, "fold", num(r->fold));
	err |= set(o, "fold_count", num(r->fold_count));
	err |= set(o, "first_ms", empty ? json_null() : num(ms(r->first)));
	err |= set(o, "last_ms", empty ? json_null() : num(ms(r->last)));
	err |= set(o, "when", json_string(r->when));
	if (v->kind == HS_VIEW_FLAME) {
		err |= set(o, "x", num(r->x));
		err |= set(o, "width", num(r->width));
	}
	if (hs_view_kind_is_tree(v->kind)) {
		err |= set(o, "depth", json_integer(r->depth));
		err |= set(o, "nr_children", json_integer(r->nr_children));
	}
	hs_view_row_parts(r, &parts);
	err |= set(o, "module", parts.module ? str(parts.module, strlen(parts.module)) : json_null());
	err |= set(o, "function", parts.function ? str(parts.function, parts.function_len) : json_null());
	err |= set(o, "group", parts.group ? json_string(parts.group) : json_null());
	err |= set(o, "entry", parts.entry ? str(parts.entry, parts.entry_len) : json_null());
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Nested tree: each row object gets a "children" array of its shown children. */
static json_t *tree_json(const struct hs_view *v)
{
	json_t **obj = hs_calloc(v->nr_rows + 1, sizeof(*obj)), *root = NULL;
	size_t i;

	if (!obj)
		return NULL;
	for (i = 0; i < v->nr_rows; i++) {
		obj[i] = row_json(v, &v->rows[i]);
		if (!obj[i] || set(obj[i], "children", json_array()))
			goto out;
	}
	/* children were emitted in order after their parent: attach in order */
	for (i = 1; i < v->nr_rows; i++) {
		json_t *kids = json_object_get(obj[v->rows[i].parent], "children");

		if (json_array_append(kids, obj[i]))
			goto out;
	}
	root = v->nr_rows ? json_incref(obj[0]) : json_null();
out:
	for (i = 0; i < v->nr_rows; i++)
		json_decref(obj[i]);
	hs_free(obj);
	return root;
}

static json_t *rows_json(const struct hs_view *v, enum hs_row_section section)
{
	json_t *a = json_array();
	size_t i;

	if (!a)
		return NULL;
	for (i = 0; i < v->nr_rows; i++) {
		if (v->rows[i].section != section)
			continue;
		if (json_array_append_new(a, row_json(v, &v->rows[i]))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *hs_view_json(const struct hs_view *v)
{
	json_t *o = json_object(), *focus;
	int err = 0;

	if (!o)
		return NULL;
	err |= set(o, "view", json_string(hs_view_kind_name(v->kind)));
	err |= set(o, "summary", summary_json(v));
	if (v->focus)
		err |= set(o, "focus", str(v->focus, strlen(v->focus)));
	err |= set(o, "total_rows", json_integer((json_int_t)v->nr_total));
	err |= set(o, "shown_rows", json_integer((json_int_t)v->nr_rows));
	switch (v->kind) {
	case HS_VIEW_BYNAME:
		err |= set(o, "rows", rows_json(v, HS_ROW_PLAIN));
		break;
	case HS_VIEW_CALLER_CALLEE:
		err |= set(o, "callers", rows_json(v, HS_ROW_CALLER));
		focus = rows_json(v, HS_ROW_FOCUS);
		err |= set(o, "focus_row", focus ? json_incref(json_array_get(focus, 0)) : NULL);
		json_decref(focus);
		err |= set(o, "callees", rows_json(v, HS_ROW_CALLEE));
		break;
	default:
		err |= set(o, "tree", tree_json(v));
		break;
	}
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *hs_view_row_json(const struct hs_view *v, size_t i)
{
	return i < v->nr_rows ? row_json(v, &v->rows[i]) : NULL;
}

json_t *hs_view_summary_json(const struct hs_view *v)
{
	return summary_json(v);
}

int hs_view_write_json(const struct hs_view *v, FILE *f)
{
	json_t *o = hs_view_json(v);
	int err;

	if (!o)
		return -ENOMEM;
	err = json_dumpf(o, f, HS_VIEW_JSON_FLAGS);
	json_decref(o);
	if (err)
		return -EIO;
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}
