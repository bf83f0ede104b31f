/*
 * views_helpers - small sources for the view tests, built with the model
 * API. Included by test_calltree.c, test_byname.c, ... (header-only).
 */
#ifndef HS_TEST_VIEWS_HELPERS_H
#define HS_TEST_VIEWS_HELPERS_H
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "analysis/calltree.h"
#include "analysis/views.h"
#include "model/stack_source.h"
#include "testutil.h"

/* Add a sample at @t_ms with stack @stack ("A;B;C", root first; "" = none). */
static inline void add(struct hs_stack_source *src, double t_ms, double metric, double count,
		       const char *stack)
{
	tu_sample(src, (int64_t)llround(t_ms * 1e6), metric, count, stack);
}

/*
 * The recursion source: A->B->C->B->D (1), A->B->C (2), A->B (4), A->E (8),
 * at 0, 10, 20 and 30 ms, count 1 each.
 */
static inline void recursion_source(struct hs_stack_source *src)
{
	hs_source_init(src);
	add(src, 0, 1, 1, "A;B;C;B;D");
	add(src, 10, 2, 1, "A;B;C");
	add(src, 20, 4, 1, "A;B");
	add(src, 30, 8, 1, "A;E");
}

static inline void build_tree(struct hs_calltree *ct, const struct hs_stack_source *src,
			      double fold_pct)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;

	p.fold_pct = fold_pct;
	assert_int_equal(hs_calltree_build(ct, src, &p, NULL), 0);
}

static inline void build_view(struct hs_view *v, const struct hs_calltree *ct,
			      enum hs_view_kind kind, const char *focus)
{
	struct hs_view_opts o = { .kind = kind, .focus = focus };

	assert_int_equal(hs_view_build(v, ct, &o), 0);
}

/* The first row named @name (and in @section), or NULL. */
static inline const struct hs_view_row *row_named(const struct hs_view *v, const char *name,
						  enum hs_row_section section)
{
	size_t i;

	for (i = 0; i < v->nr_rows; i++)
		if (!strcmp(v->rows[i].name, name) && v->rows[i].section == section)
			return &v->rows[i];
	return NULL;
}

/* Row @i has @depth, @name and the exclusive and inclusive metrics given. */
static inline void expect_row(const struct hs_view *v, size_t i, unsigned depth,
			      const char *name, double exc, double inc)
{
	assert_true(i < v->nr_rows);
	assert_int_equal(v->rows[i].depth, depth);
	assert_string_equal(v->rows[i].name, name);
	assert_true(fabs(v->rows[i].exc - exc) < 1e-9);
	assert_true(fabs(v->rows[i].inc - inc) < 1e-9);
}

/* What @fn writes for @v, as a string to free(). */
static inline char *capture(const struct hs_view *v, int (*fn)(const struct hs_view *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(v, f), 0);
	fclose(f);
	return buf;
}

/* Exact costs of a row: exc, exc count, inc, inc count, fold. */
#define assert_row(r, e, ec, i, ic, f)                                    \
	do {                                                              \
		assert_non_null(r);                                       \
		assert_true(fabs((r)->exc - (e)) < 1e-9);                 \
		assert_true(fabs((r)->exc_count - (ec)) < 1e-9);          \
		assert_true(fabs((r)->inc - (i)) < 1e-9);                 \
		assert_true(fabs((r)->inc_count - (ic)) < 1e-9);          \
		assert_true(fabs((r)->fold - (f)) < 1e-9);                \
	} while (0)
#endif
