#ifndef HS_ANALYSIS_VIEW_ORDER_H
#define HS_ANALYSIS_VIEW_ORDER_H
#include <stddef.h>
#include <stdint.h>
#include "analysis/pattern.h"
#include "analysis/views.h"
#include "common/diag.h"

/*
 * view_order - the order a view's rows are shown in, and Find: what the
 * GUI's column headers and Find box do, for the HTTP API and the CLI
 * (`report --sort`, `--find`) alike.
 *
 * Sorting never changes a view: it gives an order of row ids. Flat views
 * sort their rows (Caller-Callee within each of its three lists); trees
 * are shown depth first, each row's children sorted. Ties keep the view's
 * own order. Find matches a case-insensitive regular expression (PCRE2,
 * with pattern.h's bounds on its length and on the work of a match)
 * against each row's displayed name (hs_view_display_len()).
 *
 * Ownership: the view is borrowed; arrays returned are owned by the
 * caller (hs_free).
 */

enum hs_view_col {
	HS_COL_NONE, /* the view's own order */
	HS_COL_NAME,
	HS_COL_EXC,
	HS_COL_EXC_COUNT,
	HS_COL_INC,
	HS_COL_INC_COUNT,
	HS_COL_FOLD,
	HS_COL_FOLD_COUNT,
	HS_COL_INC_AVG,
	HS_COL_FIRST,
	HS_COL_LAST,
	HS_COL__COUNT
};

struct hs_view_order {
	enum hs_view_col col;
	int desc; /* descending */
};
#define HS_VIEW_ORDER_INIT                                                               \
	{                                                                                \
		HS_COL_NONE, 0                                                           \
	}

/*
 * Parse a column name (@sort: "name", "exc", "exc_count", "inc",
 * "inc_count", "fold", "fold_count", "inc_avg", "first", "last"; NULL or
 * "" for the view's own order) and a direction (@order: "asc", "desc",
 * or NULL for the column's own: names ascending, numbers descending)
 * into @o. Returns 0, or -EINVAL with a message in @diag.
 */
int hs_view_order_parse(struct hs_view_order *o, const char *sort, const char *order,
			struct hs_diag *diag);
/* The column names hs_view_order_parse() takes, for messages. */
#define HS_VIEW_ORDER_COLUMNS                                                            \
	"name, exc, exc_count, inc, inc_count, fold, fold_count, inc_avg, first or last"

/* Whether @o changes anything: a column, or "desc" asked for. */
int hs_view_order_changes(const struct hs_view_order *o);

/* Compare rows @a and @b of @v in order @o (ties: the view's order). */
int hs_view_order_cmp(const struct hs_view *v, const struct hs_view_order *o, uint32_t a,
		      uint32_t b);

/* Sort the @n row ids at @rows in order @o. */
void hs_view_order_sort(const struct hs_view *v, const struct hs_view_order *o,
			uint32_t *rows, size_t n);

/*
 * All rows of @v in the order shown (above): an owned array of
 * @v->nr_rows ids in *@out. Returns 0 or -ENOMEM.
 */
int hs_view_order_rows(const struct hs_view *v, const struct hs_view_order *o,
		       uint32_t **out);

/*
 * Compile @re (@len bytes) as Find's pattern: 0 and an owned pattern in
 * *@out, -EINVAL (message in @diag) or -ENOMEM.
 */
int hs_view_find_compile(const char *re, size_t len, struct hs_pattern **out,
			 struct hs_diag *diag);

#define HS_FIND_START SIZE_MAX /* hs_view_find() from the first (or last) row */

/*
 * Find the next row of @order (@n row ids of @v) whose displayed name @p
 * matches, after position @from (HS_FIND_START: from the start), or
 * before it when @backward (HS_FIND_START: from the end), wrapping
 * around. Returns 1 with its position in *@at, 0 when no row matches,
 * -EINVAL when the pattern hit its match limits (message in @diag), or
 * -ENOMEM.
 */
int hs_view_find(const struct hs_view *v, const uint32_t *order, size_t n,
		 struct hs_pattern *p, size_t from, int backward, size_t *at,
		 struct hs_diag *diag);
/*
 * hs_view_find() over any @n rows: @name_at(@rows, I) is the full name of
 * the row at position I (its displayed part is matched).
 */
int hs_view_find_named(size_t n, const char *(*name_at)(const void *rows, size_t i),
		       const void *rows, struct hs_pattern *p, size_t from, int backward,
		       size_t *at, struct hs_diag *diag);
/* Does @p match @name's displayed part? 1, 0 or an error (in @diag). */
int hs_view_name_matches(struct hs_pattern *p, const char *name, struct hs_diag *diag);

/*
 * Keep only rows @rows (@n ids, each row's parent before it or not kept)
 * of @v, in that order; tree rows keep their depth, a row whose parent
 * is not kept becomes a root. @v->nr_total is left as it was. Returns 0
 * or -ENOMEM (@v unchanged).
 */
int hs_view_keep_rows(struct hs_view *v, const uint32_t *rows, size_t n);

/*
 * The rows of @order (@n ids) whose displayed name @p matches, with
 * their ancestors for a tree (so that each match shows where it is),
 * in the order of @order: an owned array in *@out, its size in *@nr.
 * Returns 0, -EINVAL (match limits; message in @diag) or -ENOMEM.
 */
int hs_view_find_all(const struct hs_view *v, const uint32_t *order, size_t n,
		     struct hs_pattern *p, uint32_t **out, size_t *nr,
		     struct hs_diag *diag);

/*
 * What `report --sort --find` shows: @v's rows in order @o; with @find
 * (not NULL) only the rows it matches and, in a tree, their ancestors;
 * then at most @limit rows of a flat view (0: all). @v->nr_total is
 * left as it was. Returns 0, -EINVAL (match limits; message in @diag)
 * or -ENOMEM (@v unchanged).
 */
int hs_view_arrange(struct hs_view *v, const struct hs_view_order *o,
		    struct hs_pattern *find, size_t limit, struct hs_diag *diag);
#endif
