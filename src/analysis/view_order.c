/*
 * view_order - sort a view's rows, and Find (see view_order.h).
 *
 * A tree's shown order is built from child lists made in one pass over
 * the rows (a row's children come after it, in the view's order), each
 * list sorted, then a depth-first walk with an explicit stack.
 */
#include "analysis/view_order.h"
#include "common/alloc.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const col_names[HS_COL__COUNT] = {
    [HS_COL_NONE] = "",		  [HS_COL_NAME] = "name",
    [HS_COL_EXC] = "exc",	  [HS_COL_EXC_COUNT] = "exc_count",
    [HS_COL_INC] = "inc",	  [HS_COL_INC_COUNT] = "inc_count",
    [HS_COL_FOLD] = "fold",	  [HS_COL_FOLD_COUNT] = "fold_count",
    [HS_COL_INC_AVG] = "inc_avg", [HS_COL_FIRST] = "first",
    [HS_COL_LAST] = "last",
};

int hs_view_order_parse(struct hs_view_order *o, const char *sort, const char *order,
			struct hs_diag *diag)
{
	size_t i;

	o->col = HS_COL_NONE;
	o->desc = 0;
	if (sort && *sort) {
		for (i = 1; i < HS_COL__COUNT; i++)
			if (!strcmp(sort, col_names[i]))
				break;
		if (i == HS_COL__COUNT) {
			hs_diag_set(diag, 0, "unknown sort column '%s' (%s)", sort,
				    HS_VIEW_ORDER_COLUMNS);
			return -EINVAL;
		}
		o->col = (enum hs_view_col)i;
		o->desc = o->col != HS_COL_NAME;
	}
	if (order && strcmp(order, "asc") && strcmp(order, "desc")) {
		hs_diag_set(diag, 0, "order must be \"asc\" or \"desc\"");
		return -EINVAL;
	}
	if (order)
		o->desc = !strcmp(order, "desc");
	return 0;
}

int hs_view_order_changes(const struct hs_view_order *o)
{
	return o->col != HS_COL_NONE || o->desc;
}

static double col_value(const struct hs_view_row *r, enum hs_view_col col)
{
	switch (col) {
	case HS_COL_EXC:
		return r->exc;
	case HS_COL_EXC_COUNT:
		return r->exc_count;
	case HS_COL_INC:
		return r->inc;
	case HS_COL_INC_COUNT:
		return r->inc_count;
	case HS_COL_FOLD:
		return r->fold;
	case HS_COL_FOLD_COUNT:
		return r->fold_count;
	case HS_COL_INC_AVG:
		return r->inc_count != 0 ? r->inc / r->inc_count : 0;
	/* a row without samples sorts after the others, either way */
	case HS_COL_FIRST:
		return r->first > r->last ? INFINITY : (double)r->first;
	case HS_COL_LAST:
		return r->first > r->last ? -INFINITY : (double)r->last;
	default:
		return 0;
	}
}

int hs_view_order_cmp(const struct hs_view *v, const struct hs_view_order *o, uint32_t a,
		      uint32_t b)
{
	const struct hs_view_row *ra = &v->rows[a], *rb = &v->rows[b];
	int c = 0;

	if (ra->section != rb->section)
		return ra->section < rb->section ? -1 : 1; /* Caller-Callee's lists */
	if (o->col == HS_COL_NAME) {
		c = strcmp(ra->name, rb->name);
	} else if (o->col != HS_COL_NONE) {
		double x = col_value(ra, o->col), y = col_value(rb, o->col);

		c = x < y ? -1 : x > y;
	}
	if (o->desc)
		c = -c;
	return c ? c : (a > b) - (a < b);
}

struct sort_arg {
	const struct hs_view *v;
	const struct hs_view_order *o;
};

static int cmp_ids(const void *pa, const void *pb, void *arg)
{
	const struct sort_arg *s = arg;

	return hs_view_order_cmp(s->v, s->o, *(const uint32_t *)pa,
				 *(const uint32_t *)pb);
}

void hs_view_order_sort(const struct hs_view *v, const struct hs_view_order *o,
			uint32_t *rows, size_t n)
{
	struct sort_arg s = {v, o};

	if (n > 1 && hs_view_order_changes(o))
		qsort_r(rows, n, sizeof(*rows), cmp_ids, &s);
}

/* Depth first from the roots, each row's children in order @o. */
static int tree_order(const struct hs_view *v, const struct hs_view_order *o,
		      uint32_t *out)
{
	size_t n = v->nr_rows, i, nr = 0, k = 0;
	uint32_t *off = hs_calloc(n + 2, sizeof(*off));
	uint32_t *kids = hs_malloc((n + 1) * sizeof(*kids));
	uint32_t *stack = hs_malloc((n + 1) * sizeof(*stack));
	uint32_t p;

	if (!off || !kids || !stack) {
		hs_free(off);
		hs_free(kids);
		hs_free(stack);
		return -ENOMEM;
	}
	/* children of row p at kids[off[p]..off[p + 1]); roots under p = n */
	for (i = 0; i < n; i++) {
		p = v->rows[i].parent < n ? v->rows[i].parent : (uint32_t)n;
		off[p + 1]++;
	}
	for (i = 1; i <= n + 1; i++)
		off[i] += off[i - 1];
	for (i = 0; i < n; i++) {
		p = v->rows[i].parent < n ? v->rows[i].parent : (uint32_t)n;
		kids[off[p]++] = (uint32_t)i;
	}
	for (i = n + 1; i > 0; i--)
		off[i] = off[i - 1];
	off[0] = 0;
	for (i = 0; i <= n; i++)
		hs_view_order_sort(v, o, kids + off[i], off[i + 1] - off[i]);
	/* pushed in reverse, so that the first child comes out first */
	for (i = off[n + 1]; i > off[n]; i--)
		stack[nr++] = kids[i - 1];
	while (nr) {
		uint32_t r = stack[--nr];

		out[k++] = r;
		for (i = off[r + 1]; i > off[r]; i--)
			stack[nr++] = kids[i - 1];
	}
	hs_free(off);
	hs_free(kids);
	hs_free(stack);
	return 0;
}

int hs_view_order_rows(const struct hs_view *v, const struct hs_view_order *o,
		       uint32_t **out)
{
	uint32_t *idx = hs_malloc((v->nr_rows + 1) * sizeof(*idx));
	size_t i;
	int err = 0;

	*out = NULL;
	if (!idx)
		return -ENOMEM;
	if (hs_view_kind_is_tree(v->kind) && hs_view_order_changes(o)) {
		err = tree_order(v, o, idx);
	} else {
		for (i = 0; i < v->nr_rows; i++)
			idx[i] = (uint32_t)i;
		hs_view_order_sort(v, o, idx, v->nr_rows);
	}
	if (err) {
		hs_free(idx);
		return err;
	}
	*out = idx;
	return 0;
}

int hs_view_find_compile(const char *re, size_t len, struct hs_pattern **out,
			 struct hs_diag *diag)
{
	struct hs_diag sub = HS_DIAG_INIT(NULL);
	int err = hs_pattern_compile_regex(re, len, out, &sub);

	if (err && sub.set)
		hs_diag_set(diag, 0, "find: %s", sub.msg);
	return err;
}

int hs_view_name_matches(struct hs_pattern *p, const char *name, struct hs_diag *diag)
{
	int rc = hs_pattern_match(p, name, hs_view_display_len(name), NULL);

	if (rc < 0) {
		hs_pattern_match_error(diag, "find", p, rc, name);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	return rc;
}

int hs_view_find_named(size_t n, const char *(*name_at)(const void *rows, size_t i),
		       const void *rows, struct hs_pattern *p, size_t from, int backward,
		       size_t *at, struct hs_diag *diag)
{
	size_t k, i, first;
	int rc;

	if (!n)
		return 0;
	if (from >= n)
		first = backward ? n - 1 : 0;
	else
		first = backward ? (from + n - 1) % n : (from + 1) % n;
	for (k = 0; k < n; k++) {
		i = backward ? (first + n - k) % n : (first + k) % n;
		rc = hs_view_name_matches(p, name_at(rows, i), diag);
		if (rc < 0)
			return rc;
		if (rc) {
			*at = i;
			return 1;
		}
	}
	return 0;
}

/* The rows of a view in an order, for hs_view_find_named(). */
struct ordered_rows {
	const struct hs_view *v;
	const uint32_t *order;
};

static const char *ordered_name(const void *rows, size_t i)
{
	const struct ordered_rows *o = rows;

	return o->v->rows[o->order[i]].name;
}

int hs_view_find(const struct hs_view *v, const uint32_t *order, size_t n,
		 struct hs_pattern *p, size_t from, int backward, size_t *at,
		 struct hs_diag *diag)
{
	struct ordered_rows o = {v, order};

	return hs_view_find_named(n, ordered_name, &o, p, from, backward, at, diag);
}

int hs_view_find_all(const struct hs_view *v, const uint32_t *order, size_t n,
		     struct hs_pattern *p, uint32_t **out, size_t *nr,
		     struct hs_diag *diag)
{
	uint8_t *keep = hs_calloc(v->nr_rows + 1, 1);
	uint32_t *rows = hs_malloc((n + 1) * sizeof(*rows));
	size_t i, k = 0;
	int rc = 0;

	*out = NULL;
	*nr = 0;
	if (!keep || !rows) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		uint32_t r = order[i];

		rc = hs_view_name_matches(p, v->rows[r].name, diag);
		if (rc < 0)
			goto out;
		/* a match, and the ancestors that lead to it */
		for (; rc && r < v->nr_rows && !keep[r]; r = v->rows[r].parent)
			keep[r] = 1;
	}
	for (i = 0; i < n; i++)
		if (keep[order[i]])
			rows[k++] = order[i];
	*out = rows;
	*nr = k;
	rows = NULL;
	rc = 0;
out:
	hs_free(keep);
	hs_free(rows);
	return rc;
}

int hs_view_keep_rows(struct hs_view *v, const uint32_t *rows, size_t n)
{
	struct hs_view_row *kept = hs_malloc((n + 1) * sizeof(*kept));
	uint32_t *pos = hs_malloc((v->nr_rows + 1) * sizeof(*pos));
	size_t i;

	if (!kept || !pos) {
		hs_free(kept);
		hs_free(pos);
		return -ENOMEM;
	}
	for (i = 0; i < v->nr_rows; i++)
		pos[i] = HS_NO_NODE;
	for (i = 0; i < n; i++) {
		uint32_t p = v->rows[rows[i]].parent;

		kept[i] = v->rows[rows[i]];
		kept[i].parent = p < v->nr_rows ? pos[p] : HS_NO_NODE;
		pos[rows[i]] = (uint32_t)i;
	}
	hs_free(pos);
	hs_free(v->rows);
	v->rows = kept;
	v->nr_rows = n;
	return 0;
}

int hs_view_arrange(struct hs_view *v, const struct hs_view_order *o,
		    struct hs_pattern *find, size_t limit, struct hs_diag *diag)
{
	uint32_t *idx, *rows = NULL;
	size_t n = v->nr_rows;
	int err = hs_view_order_rows(v, o, &idx);

	if (err)
		return err;
	if (find) {
		err = hs_view_find_all(v, idx, n, find, &rows, &n, diag);
		hs_free(idx);
		if (err)
			return err;
		idx = rows;
	}
	if (limit && n > limit && !hs_view_kind_is_tree(v->kind))
		n = limit;
	err = hs_view_keep_rows(v, idx, n);
	hs_free(idx);
	return err;
}
