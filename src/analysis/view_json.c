/*
 * view_json - a view as a JSON document (docs/json-api.md). Rows are
 * objects built with jansson one at a time; trees nest their children,
 * written without recursion (see "The writer" below).
 */
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/log.h"
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
	err |= set(o, "module",
		   parts.module ? str(parts.module, strlen(parts.module)) : json_null());
	err |=
	    set(o, "function",
		parts.function ? str(parts.function, parts.function_len) : json_null());
	err |= set(o, "group", parts.group ? json_string(parts.group) : json_null());
	err |= set(o, "entry",
		   parts.entry ? str(parts.entry, parts.entry_len) : json_null());
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/*
 * The writer. jansson's dumper and json_decref() recurse once per level of
 * nesting, and a tree view nests two levels per frame of its deepest
 * stack: 14,000 frames overflowed the stack. So the document is written
 * here, without recursion through the tree, in the layout jansson gives
 * for the same flags (jansson still writes each scalar); only one row's
 * object exists at a time. Indentation stops growing at
 * HS_VIEW_JSON_MAX_INDENT levels, so that every line of a deep tree costs
 * the same: whitespace means nothing in JSON, and without the cap a
 * 100,000-frame stack is gigabytes of spaces.
 */
struct json_out {
	FILE *f;	  /* the sink: a file, */
	struct hs_buf *b; /* or a buffer */
	size_t flags;	  /* jansson dump flags */
	int err;	  /* the first error: -ENOMEM or -EIO */
};

static void out_fail(struct json_out *o, int err)
{
	if (!o->err)
		o->err = err;
}

static void out_add(struct json_out *o, const char *s, size_t n)
{
	if (o->err)
		return;
	if (o->b)
		o->err = hs_buf_add(o->b, s, n);
	else if (n && fwrite(s, 1, n, o->f) != n)
		o->err = -EIO;
}

static void out_str(struct json_out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

/* jansson's layout: a new line at @level, or a space between items. */
static void out_indent(struct json_out *o, size_t level, int between)
{
	static const char spaces[] = "                                ";
	size_t n = o->flags & 0x1F; /* JSON_INDENT(n) */

	if (!n) {
		if (between && !(o->flags & JSON_COMPACT))
			out_add(o, " ", 1);
		return;
	}
	out_add(o, "\n", 1);
	n *= level < HS_VIEW_JSON_MAX_INDENT ? level : HS_VIEW_JSON_MAX_INDENT;
	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		out_add(o, spaces, k);
		n -= k;
	}
}

static void out_key(struct json_out *o, const char *key)
{
	out_add(o, "\"", 1);
	out_str(o, key); /* keys are this module's own ASCII words */
	out_str(o, o->flags & JSON_COMPACT ? "\":" : "\": ");
}

static void out_value(struct json_out *o, json_t *val, size_t level);

/* "{" and the members of object @obj at @level, without the closing brace. */
static void out_members(struct json_out *o, json_t *obj, size_t level)
{
	const char *key;
	json_t *x;
	size_t i = 0;

	out_add(o, "{", 1);
	json_object_foreach(obj, key, x)
	{
		if (i++)
			out_add(o, ",", 1);
		out_indent(o, level + 1, i > 1);
		out_key(o, key);
		out_value(o, x, level + 1);
	}
}

/*
 * @val (borrowed; NULL: out of memory) at nesting @level. Recursive, for
 * the few levels of a summary or a row; trees go through out_tree().
 */
static void out_value(struct json_out *o, json_t *val, size_t level)
{
	char small[128], *big;
	size_t n, i;
	json_t *x;

	if (!val)
		return out_fail(o, -ENOMEM);
	if (json_is_object(val)) {
		if (!json_object_size(val))
			return out_str(o, "{}");
		out_members(o, val, level);
		out_indent(o, level, 0);
		return out_add(o, "}", 1);
	}
	if (json_is_array(val)) {
		if (!json_array_size(val))
			return out_str(o, "[]");
		out_add(o, "[", 1);
		json_array_foreach(val, i, x)
		{
			if (i)
				out_add(o, ",", 1);
			out_indent(o, level + 1, i > 0);
			out_value(o, x, level + 1);
		}
		out_indent(o, level, 0);
		return out_add(o, "]", 1);
	}
	n = json_dumpb(val, small, sizeof(small), o->flags | JSON_ENCODE_ANY);
	if (!n)
		return out_fail(o, -ENOMEM);
	if (n <= sizeof(small))
		return out_add(o, small, n);
	big = hs_malloc(n);
	if (!big)
		return out_fail(o, -ENOMEM);
	out_add(o, big, json_dumpb(val, big, n, o->flags | JSON_ENCODE_ANY));
	hs_free(big);
}

/* Row @i's object at @level, left open after "children": [ */
static void out_row_open(struct json_out *o, const struct hs_view *v, size_t i,
			 size_t level)
{
	json_t *row = row_json(v, &v->rows[i]);

	if (!row)
		return out_fail(o, -ENOMEM);
	out_members(o, row, level);
	json_decref(row);
	out_add(o, ",", 1);
	out_indent(o, level + 1, 1);
	out_key(o, "children");
	out_add(o, "[", 1);
}

/* Close the children array and the object of a row at @level. */
static void out_row_close(struct json_out *o, size_t level, int had_children)
{
	if (had_children)
		out_indent(o, level + 1, 0);
	out_add(o, "]", 1);
	out_indent(o, level, 0);
	out_add(o, "}", 1);
}

/*
 * The tree of a tree view, its root at @level: each row object gets a
 * "children" array of its shown children. Rows are in depth-first order
 * (views.h), so a stack of the open rows is all the state: a row's
 * children follow it, and a row whose parent is not on top closes the
 * rows above its parent.
 */
static void out_tree(struct json_out *o, const struct hs_view *v, size_t level)
{
	uint32_t *open;
	size_t nr_open = 0, i;

	if (!v->nr_rows)
		return out_str(o, "null");
	open = hs_malloc(v->nr_rows * sizeof(*open));
	if (!open)
		return out_fail(o, -ENOMEM);
	for (i = 0; i < v->nr_rows && !o->err; i++) {
		if (i) {
			uint32_t parent = v->rows[i].parent;

			while (nr_open && open[nr_open - 1] != parent) {
				nr_open--;
				out_row_close(o, level + 2 * nr_open, 1);
			}
			HS_BUG_ON(!nr_open); /* rows are not depth-first */
			if (parent != i - 1)
				out_add(o, ",", 1); /* after a sibling */
			out_indent(o, level + 2 * nr_open, parent != i - 1);
		}
		out_row_open(o, v, i, level + 2 * nr_open);
		if (i + 1 < v->nr_rows && v->rows[i + 1].parent == i)
			open[nr_open++] = (uint32_t)i;
		else
			out_row_close(o, level + 2 * nr_open, 0);
	}
	while (nr_open && !o->err) {
		nr_open--;
		out_row_close(o, level + 2 * nr_open, 1);
	}
	hs_free(open);
}
/* "KEY": [rows of @section], members of the document at level 1. */
static void out_rows(struct json_out *o, const struct hs_view *v, const char *key,
		     enum hs_row_section section)
{
	size_t i, n = 0;
	json_t *row;

	out_add(o, ",", 1);
	out_indent(o, 1, 1);
	out_key(o, key);
	out_add(o, "[", 1);
	for (i = 0; i < v->nr_rows && !o->err; i++) {
		if (v->rows[i].section != section)
			continue;
		if (n++)
			out_add(o, ",", 1);
		out_indent(o, 2, n > 1);
		row = row_json(v, &v->rows[i]);
		out_value(o, row, 2);
		json_decref(row);
	}
	if (n)
		out_indent(o, 1, 0);
	out_add(o, "]", 1);
}

/* "KEY": the first row of @section, or null; a member at level 1. */
static void out_first_row(struct json_out *o, const struct hs_view *v, const char *key,
			  enum hs_row_section section)
{
	json_t *row;
	size_t i;

	out_add(o, ",", 1);
	out_indent(o, 1, 1);
	out_key(o, key);
	for (i = 0; i < v->nr_rows; i++)
		if (v->rows[i].section == section)
			break;
	if (i == v->nr_rows)
		return out_str(o, "null");
	row = row_json(v, &v->rows[i]);
	out_value(o, row, 1);
	json_decref(row);
}

static void out_view(struct json_out *o, const struct hs_view *v)
{
	json_t *head = json_object();
	int err = 0;

	if (!head)
		return out_fail(o, -ENOMEM);
	err |= set(head, "view", json_string(hs_view_kind_name(v->kind)));
	err |= set(head, "summary", summary_json(v));
	if (v->focus)
		err |= set(head, "focus", str(v->focus, strlen(v->focus)));
	err |= set(head, "total_rows", json_integer((json_int_t)v->nr_total));
	err |= set(head, "shown_rows", json_integer((json_int_t)v->nr_rows));
	if (err) {
		json_decref(head);
		return out_fail(o, -ENOMEM);
	}
	out_members(o, head, 0);
	json_decref(head);
	switch (v->kind) {
	case HS_VIEW_BYNAME:
		out_rows(o, v, "rows", HS_ROW_PLAIN);
		break;
	case HS_VIEW_CALLER_CALLEE:
		out_rows(o, v, "callers", HS_ROW_CALLER);
		out_first_row(o, v, "focus_row", HS_ROW_FOCUS);
		out_rows(o, v, "callees", HS_ROW_CALLEE);
		break;
	default:
		out_add(o, ",", 1);
		out_indent(o, 1, 1);
		out_key(o, "tree");
		out_tree(o, v, 1);
		break;
	}
	out_indent(o, 0, 0);
	out_add(o, "}", 1);
}

char *hs_view_json_dump(const struct hs_view *v, size_t flags, size_t *len)
{
	struct hs_buf b = HS_BUF_INIT;
	struct json_out o = {.b = &b, .flags = flags};

	out_view(&o, v);
	if (o.err) {
		hs_buf_release(&b);
		return NULL;
	}
	*len = b.len;
	return hs_buf_detach(&b);
}

json_t *hs_view_json(const struct hs_view *v)
{
	size_t len;
	char *s = hs_view_json_dump(v, JSON_COMPACT | JSON_REAL_PRECISION(17), &len);
	json_t *j;

	if (!s)
		return NULL;
	j = json_loadb(s, len, 0, NULL);
	hs_free(s);
	return j;
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
	struct json_out o = {.f = f, .flags = HS_VIEW_JSON_FLAGS};

	out_view(&o, v);
	if (o.err)
		return o.err;
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}
