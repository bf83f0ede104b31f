/*
 * routes_views - the rows of a view (docs/json-api.md): /api/view (a
 * whole view, as `report --format json`), /api/rows (a page in the order
 * asked for, or rows by id), /api/tree (the descendants of rows, for the
 * tree tabs), /api/flame (Flame Graph rectangles) and /api/find. Sorting
 * and Find are analysis/view_order's; this file only walks and answers.
 */
#include "analysis/view_order.h"
#include "server/routes.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the order asked for (analysis/view_order.h) ---- */

/* The order "sort" and "order" ask for (col HS_COL_NONE: the view's own). */
static int get_order(struct hs_route_ctx *c, struct hs_view_order *o)
{
	const char *sort, *order;
	int err;

	err = hs__get_string(c, "sort", 32, &sort);
	if (!err)
		err = hs__get_string(c, "order", 8, &order);
	if (!err)
		err = hs_view_order_parse(o, sort, order, &c->diag);
	return err;
}

/*
 * The rows of the view in the order "sort" / "order" ask for (owned): of
 * c->view, whole or ByName in parts (which has every row but When).
 */
static int sorted_rows(struct hs_route_ctx *c, uint32_t **out)
{
	struct hs_view_order o;
	int err = get_order(c, &o);

	return err ? err : hs_view_order_rows(hs__view_of(c), &o, out);
}

/* c->view is a CallTree in parts: no rows kept, only their numbering. */
static int tree_parts(const struct hs_route_ctx *c)
{
	return c->view->kind == HS_CACHE_PARTS && c->view->u.parts.node_of_row;
}

/*
 * About the bytes of row @i in the indented document of hs_view_json_dump():
 * its fields, its name (escapes included) and the indentation of its
 * lines, which stops growing HS_VIEW_JSON_MAX_INDENT levels deep (a tree
 * row nests two levels below its parent: "children" and the object).
 */
static size_t row_bytes(const struct hs_view_row *r)
{
	size_t levels = 2 * (size_t)r->depth + 2;

	if (levels > HS_VIEW_JSON_MAX_INDENT)
		levels = HS_VIEW_JSON_MAX_INDENT;
	return 600 + 2 * strlen(r->name) + 40 * levels;
}

/* How many of @v's first rows fit in @max_rows rows and MAX_VIEW_BYTES. */
static size_t rows_within(const struct hs_view *v, size_t max_rows)
{
	size_t i, bytes = 0;

	for (i = 0; i < v->nr_rows && i < max_rows; i++) {
		bytes += row_bytes(&v->rows[i]);
		if (bytes > MAX_VIEW_BYTES)
			break;
	}
	return i;
}

/* @text (a JSON object, @*len bytes) with "truncated": true at its end. */
static char *mark_truncated(char *text, size_t *len)
{
	static const char mark[] = ",\n  \"truncated\": true\n}";
	size_t end = *len;
	char *grown;

	/* the object's closing brace, and the blank before it */
	while (end && text[end - 1] != '}')
		end--;
	if (end)
		end--;
	while (end && (text[end - 1] == '\n' || text[end - 1] == ' '))
		end--;
	grown = end ? hs_realloc(text, end + sizeof(mark)) : NULL;
	if (!grown) {
		hs_free(text);
		return NULL;
	}
	memcpy(grown + end, mark, sizeof(mark));
	*len = end + sizeof(mark) - 1;
	return grown;
}

/*
 * A whole view, as `report --format json`, within bounds: at most
 * "max_rows" rows (≤ MAX_VIEW_ROWS, the default) and about MAX_VIEW_BYTES
 * of text; a view beyond them is cut (a tree depth first, as --limit
 * does) and the document says "truncated": true. The full view is
 * the cached one (rows, tree and flame page through it); a cut or a
 * limit/depth asked for is built for this answer only.
 */
int hs__api_view(struct hs_route_ctx *c)
{
	struct hs_view_opts o = c->query.view;
	struct hs_view fresh, *v = NULL;
	char *json_text;
	size_t json_len, max_rows, keep;
	int err, truncated = 0, built = 0;

	err = hs__get_uint(c, "max_rows", MAX_VIEW_ROWS, MAX_VIEW_ROWS, &max_rows);
	if (!err && !max_rows) {
		hs_diag_set(&c->diag, 0, "max_rows must be at least 1");
		err = -EINVAL;
	}
	if (!err && !o.limit && !o.max_depth) {
		err = hs__get_view(c);
		v = err ? NULL : &c->view->u.view.v;
	} else if (!err) {
		err = hs__get_tree(c);
	}
	for (;;) {
		if (err)
			break;
		if (v) {
			keep = rows_within(v, max_rows);
			if (keep >= v->nr_rows)
				break;
			/* one row is the least an answer has */
			if (o.limit == 1)
				break;
			/* cut: the first @keep rows; caller-callee limits each list */
			if (o.limit && o.limit <= keep)
				keep = o.limit - 1;
			if (built)
				hs_view_release(&fresh);
			built = 0;
			truncated = 1;
			o.limit = keep ? keep : 1;
		}
		err = hs_view_build(&fresh, &c->tree->u.tree, &o);
		if (err == -ENOENT)
			hs_diag_set(&c->diag, 0, "no frame named '%s'", o.focus);
		if (err)
			break;
		built = 1;
		v = &fresh;
	}
	if (err) {
		if (built)
			hs_view_release(&fresh);
		return hs__reply_err(c, err, "");
	}
	/* written without recursion: a view as deep as its stacks (views.h) */
	json_text = hs_view_json_dump(v, HS_VIEW_JSON_FLAGS, &json_len);
	if (json_text && truncated)
		json_text = mark_truncated(json_text, &json_len);
	hs__reply_json_text(c->resp, json_text, json_len);
	if (built)
		hs_view_release(&fresh);
	return 0;
}

/* The rows whose ids "ids" lists (at most MAX_ROWS_PAGE), in that order. */
static int rows_by_id(struct hs_route_ctx *c)
{
	size_t nr_rows = hs__view_rows(c);
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
		    (size_t)json_integer_value(id) >= nr_rows) {
			hs_free(rows);
			return hs__reply_error(c->resp, 400, "ids: no such row");
		}
		rows[i] = (uint32_t)json_integer_value(id);
	}
	o = hs__doc_rows(hs__view_of(c), nr_rows, "rows", hs__rows_json(c, rows, n));
	hs_free(rows);
	return hs__reply_json(c->resp, o, COMPACT);
}

/*
 * A page of rows in the order asked for, or the rows "ids" names. ByName
 * and CallTree rows are made for the page (hs__get_parts()); a CallTree
 * page in another order than its own takes the whole view.
 */
/* A page of rows: where it starts, how many at most, in which order. */
struct rows_page {
	size_t offset, count;
	struct hs_view_order order;
};

/* The answer to the page of rows @arg (struct rows_page) as JSON text. */
static int build_rows_page(struct hs_route_ctx *c, void *arg, char **text, size_t *len)
{
	const struct rows_page *pg = arg;
	size_t offset = pg->offset, i, n = 0, nr_rows;
	uint32_t *idx = NULL, *page;
	json_t *o;
	int err = 0;

	if (tree_parts(c) && hs_view_order_changes(&pg->order))
		err = hs__get_view(c);
	if (!err && !tree_parts(c))
		err = hs_view_order_rows(hs__view_of(c), &pg->order, &idx);
	if (err)
		return err;
	nr_rows = hs__view_rows(c);
	page = hs_malloc((pg->count + 1) * sizeof(*page));
	if (!page) {
		hs_free(idx);
		return -ENOMEM;
	}
	/* a tree's own order is its row ids */
	for (i = offset; i < nr_rows && i - offset < pg->count; i++)
		page[n++] = idx ? idx[i] : (uint32_t)i;
	hs_free(idx);
	o = hs__doc_rows(hs__view_of(c), nr_rows, "rows", hs__rows_json(c, page, n));
	hs_free(page);
	if (o && json_object_set_new(o, "offset", json_integer((json_int_t)offset))) {
		json_decref(o);
		o = NULL;
	}
	err = hs__json_text(o, text, len);
	json_decref(o);
	return err;
}

/*
 * A page of rows in the order asked for, or rows by id. The first page
 * (offset 0: what the page asks on opening and after every Update, and
 * what hs_app_warm() asks ahead) is kept as text in the cache under the
 * view, the order and the count, so that the same question again (the
 * page's after the warm one, "back" to earlier settings) costs no When
 * pass; later pages are made each time.
 */
int hs__api_rows(struct hs_route_ctx *c)
{
	const struct hs_cache_entry *e;
	struct hs_buf key = HS_BUF_INIT;
	struct rows_page pg;
	char *text = NULL;
	size_t len = 0;
	int err;

	err = hs__get_parts(c);
	if (!err)
		err = hs__get_uint(c, "offset", 0, UINT32_MAX, &pg.offset);
	if (!err)
		err = hs__get_uint(c, "count", 500, MAX_ROWS_PAGE, &pg.count);
	if (!err && json_object_get(c->q, "ids"))
		return rows_by_id(c);
	if (!err)
		err = get_order(c, &pg.order);
	if (!err && pg.offset) {
		err = build_rows_page(c, &pg, &text, &len);
		if (!err)
			return hs__reply_json_text(c->resp, text, len);
	}
	if (!err && hs_buf_addf(&key, "rows\ncount %zu\nsort %d %d\n%s\n%s\nfocus %s",
				pg.count, (int)pg.order.col, pg.order.desc,
				c->query.tree_key, hs_view_kind_name(c->query.view.kind),
				c->query.view.focus ? c->query.view.focus : ""))
		err = -ENOMEM;
	if (!err)
		err = hs__cached_text(c, key.s, build_rows_page, &pg, &e);
	hs_buf_release(&key);
	if (err)
		return hs__reply_err(c, err, "");
	return hs__reply_text_entry(c->resp, e);
}

/*
 * Tree rows: the descendants of each row in "of" (or the roots and theirs)
 * down "levels" levels (0 = all); with "auto", a row with one child is
 * opened too; children in the order of "sort" / "order". Each row names
 * its parent, so a client can place it. With "skeleton", only the ids,
 * parents and numbers of children of the rows come as arrays, and whole
 * rows for the first "detail" of them (the others by /api/rows "ids").
 * A CallTree is walked in parts (view_part.h): the rows are numbered,
 * and only those the answer carries whole are made.
 */
struct walk {
	const struct hs_cache_entry *e;	   /* a whole view, */
	const struct hs_view_parts *parts; /* or a CallTree in parts */
	const struct hs_view_order *order; /* NULL: the view's order */
	uint32_t *out;			   /* the rows emitted, in order */
	size_t nr_out, alloc_out, max_rows;
	int truncated, failed;
	uint32_t *stack; /* pairs (row, levels left) */
	size_t nr, alloc;
	uint32_t *kids; /* scratch: children to sort */
	size_t alloc_kids;
	uint32_t *local; /* scratch: their positions, sorting in parts */
	size_t alloc_local;
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

static uint32_t nr_kids(const struct walk *w, uint32_t r)
{
	const uint32_t *off = w->e ? w->e->u.view.child_off : NULL;

	return off ? off[r + 1] - off[r]
		   : (uint32_t)hs_view_parts_nr_children(w->parts, r);
}

static uint32_t parent_of(const struct walk *w, uint32_t r)
{
	return w->e ? w->e->u.view.v.rows[r].parent : hs_view_parts_parent(w->parts, r);
}

/* Sort the @n children at w->kids in w->order; 0 or -ENOMEM. */
static int sort_kids(struct walk *w, uint32_t n)
{
	struct hs_view part;
	uint32_t k;

	if (w->e) {
		hs_view_order_sort(&w->e->u.view.v, w->order, w->kids, n);
		return 0;
	}
	/* the children's rows, without When (no column of an order is it) */
	if (HS_GROW(w->local, n, w->alloc_local) ||
	    hs_view_part(w->parts, w->kids, n, 1, &part))
		return -ENOMEM;
	for (k = 0; k < n; k++)
		w->local[k] = k;
	hs_view_order_sort(&part, w->order, w->local, n);
	hs_view_release(&part);
	for (k = 0; k < n; k++)
		w->local[k] = w->kids[w->local[k]];
	memcpy(w->kids, w->local, n * sizeof(*w->kids));
	return 0;
}

/*
 * Emit the descendants of @row down @levels levels (0 = all). A stack
 * entry is (row, levels of its descendants to show); with @autoopen a
 * row with exactly one child shows it although no level is left.
 */
static void walk_children(struct walk *w, uint32_t row, uint32_t levels, int autoopen)
{
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
		n = nr_kids(w, r);
		if (HS_GROW(w->stack, w->nr + 2 * (size_t)n, w->alloc)) {
			w->failed = 1;
			return;
		}
		if (w->e) {
			kids = w->e->u.view.child + w->e->u.view.child_off[r];
		} else {
			if (HS_GROW(w->kids, n, w->alloc_kids)) {
				w->failed = 1;
				return;
			}
			hs_view_parts_children(w->parts, r, w->kids);
			kids = w->kids;
		}
		if (w->order && n > 1) {
			if (w->e) {
				if (HS_GROW(w->kids, n, w->alloc_kids)) {
					w->failed = 1;
					return;
				}
				memcpy(w->kids, kids, n * sizeof(*kids));
			}
			if (sort_kids(w, n)) {
				w->failed = 1;
				return;
			}
			kids = w->kids;
		}
		/* pushed in reverse, so that the first child comes out first */
		for (k = n; k > 0; k--) {
			ch = kids[k - 1];
			ch_left = left == UINT32_MAX ? left : left - 1;
			if (!ch_left && autoopen && nr_kids(w, ch) == 1)
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
static int reply_skeleton(struct hs_route_ctx *c, json_t *o, const struct walk *w)
{
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
		x[i] = parent_of(w, w->out[i]);
	if (!err)
		err = add_array(&b, "parent", x, w->nr_out, 1);
	for (i = 0; i < w->nr_out; i++)
		x[i] = nr_kids(w, w->out[i]);
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

int hs__api_tree(struct hs_route_ctx *c)
{
	struct walk w = {0};
	struct hs_view_order order;
	size_t levels, detail, i, n, nr_rows;
	json_t *of, *o;
	int err, autoopen, skeleton;

	err = hs__get_parts(c);
	if (!err)
		err = hs__get_uint(c, "levels", 1, UINT32_MAX, &levels);
	if (!err)
		err = hs__get_bool(c, "auto", 1, &autoopen);
	if (!err)
		err = hs__get_bool(c, "skeleton", 0, &skeleton);
	if (!err)
		err = hs__get_uint(c, "detail", 200, MAX_ROWS_PAGE, &detail);
	if (!err)
		err = hs__get_uint(c, "max_rows", 100000, MAX_TREE_ROWS, &w.max_rows);
	if (!err)
		err = get_order(c, &order);
	if (err)
		return hs__reply_err(c, err, "");
	nr_rows = hs__view_rows(c);
	if (c->view->kind == HS_CACHE_PARTS)
		w.parts = &c->view->u.parts;
	else
		w.e = c->view;
	w.order = hs_view_order_changes(&order) ? &order : NULL;
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
			    (size_t)json_integer_value(id) >= nr_rows)
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
		for (i = 0; i < nr_rows; i++)
			if (parent_of(&w, (uint32_t)i) == HS_NO_NODE) {
				emit(&w, (uint32_t)i);
				walk_children(&w, (uint32_t)i, (uint32_t)levels,
					      autoopen);
				/* a CallTree has one root, ROOT's row */
				if (w.parts && w.parts->node_of_row)
					break;
			}
	}
	hs_free(w.stack);
	hs_free(w.kids);
	hs_free(w.local);
	o = w.failed
		? NULL
		: hs__doc_rows(
		      hs__view_of(c), nr_rows, "rows",
		      hs__rows_json(c, w.out,
				    skeleton && detail < w.nr_out ? detail : w.nr_out));
	if (o && json_object_set_new(o, "truncated", json_boolean(w.truncated))) {
		json_decref(o);
		o = NULL;
	}
	if (skeleton && o)
		err = reply_skeleton(c, o, &w);
	else
		err = hs__reply_json(c->resp, o, COMPACT);
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
int hs__api_flame(struct hs_route_ctx *c)
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
	err = hs__get_view(c);
	if (!err)
		err = hs__get_row(c, "root", &root);
	if (!err)
		err = hs__get_uint(c, "max_rows", 50000, MAX_TREE_ROWS, &max_rows);
	if (err)
		return hs__reply_err(c, err, "");
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
		if (json_array_append_new(rows, hs__row_obj(v, r)))
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
	o = hs__doc(v, "rows", rows);
	if (o && (json_object_set_new(o, "root", json_integer(root)) ||
		  json_object_set_new(o, "root_path", root_path(v, root)) ||
		  json_object_set_new(o, "truncated", json_boolean(truncated)))) {
		json_decref(o);
		o = NULL;
	}
	return hs__reply_json(c->resp, o, COMPACT);
}

/* The row object of row @id of c->view (made for it when in parts). */
static json_t *row_obj_of(struct hs_route_ctx *c, uint32_t id)
{
	json_t *a = hs__rows_json(c, &id, 1), *r;

	r = a ? json_incref(json_array_get(a, 0)) : NULL;
	json_decref(a);
	return r;
}

/* Row @r's parent row in c->view (HS_NO_NODE for none). */
static uint32_t row_parent(const struct hs_route_ctx *c, uint32_t r)
{
	if (c->view->kind == HS_CACHE_PARTS)
		return hs_view_parts_parent(&c->view->u.parts, r);
	return c->view->u.view.v.rows[r].parent;
}

/*
 * Find: the next row after "from" (in the order of "sort"/"order" for a
 * flat view, depth-first for a tree) whose name the regular expression
 * "pattern" matches (case-insensitive), with the ids of its ancestors.
 */
int hs__api_find(struct hs_route_ctx *c)
{
	struct hs_view_order order;
	const struct hs_view *v;
	const char *pattern;
	struct hs_pattern *re = NULL;
	uint32_t *idx = NULL, from, *path = NULL, p, at_id = 0;
	size_t i, at = HS_FIND_START, n, depth = 0;
	json_t *o = NULL, *pj;
	int err, backward;

	/* in parts, but a CallTree in another order than its own whole */
	err = hs__get_parts(c);
	if (!err)
		err = get_order(c, &order);
	if (!err && tree_parts(c) && hs_view_order_changes(&order))
		err = hs__get_view(c);
	if (!err)
		err = hs__get_string(c, "pattern", HS_PATTERN_MAX_LEN, &pattern);
	if (!err)
		err = hs__get_row(c, "from", &from);
	if (!err)
		err = hs__get_bool(c, "backward", 0, &backward);
	if (!err && !pattern) {
		hs_diag_set(&c->diag, 0, "find needs a pattern");
		err = -EINVAL;
	}
	if (!err && !tree_parts(c))
		err = sorted_rows(c, &idx);
	if (err)
		return hs__reply_err(c, err, "");
	err = hs_view_find_compile(pattern, strlen(pattern), &re, &c->diag);
	v = hs__view_of(c);
	n = v->nr_rows;
	/* the position of "from" in the order; the search starts after it */
	for (i = 0; !err && idx && from != HS_NO_NODE && i < n; i++)
		if (idx[i] == from) {
			at = i;
			break;
		}
	if (!err && !idx) {
		/* a CallTree in parts: its own order, a row's id is its place */
		err = hs_view_parts_find(&c->view->u.parts, re, from, backward, &at,
					 &c->diag);
	} else if (!err) {
		err = hs_view_find(v, idx, n, re, at, backward, &at, &c->diag);
		if (err > 0)
			at_id = idx[at];
	}
	if (err > 0 && !idx)
		at_id = (uint32_t)at;
	hs_pattern_free(re);
	if (err < 0) {
		hs_free(idx);
		return hs__reply_err(c, err, "");
	}
	o = json_object();
	if (!o)
		goto out;
	if (!err) {
		if (json_object_set_new(o, "id", json_null()))
			goto fail;
		goto out;
	}
	/* ancestors, root first */
	for (p = row_parent(c, at_id); p != HS_NO_NODE; p = row_parent(c, p))
		depth++;
	path = hs_malloc((depth + 1) * sizeof(*path));
	pj = json_array();
	if (!path || !pj || json_object_set_new(o, "path", pj))
		goto fail;
	n = depth;
	for (p = row_parent(c, at_id); p != HS_NO_NODE; p = row_parent(c, p))
		path[--n] = p;
	for (n = 0; n < depth; n++)
		if (json_array_append_new(pj, json_integer(path[n])))
			goto fail;
	if (json_object_set_new(o, "id", json_integer(at_id)) ||
	    json_object_set_new(o, "index", json_integer((json_int_t)at)) ||
	    json_object_set_new(o, "row", row_obj_of(c, at_id)))
		goto fail;
	goto out;
fail:
	json_decref(o);
	o = NULL;
out:
	hs_free(path);
	hs_free(idx);
	return hs__reply_json(c->resp, o, COMPACT);
}
