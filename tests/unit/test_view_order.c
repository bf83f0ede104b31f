/*
 * test_view_order - sorting a view's rows and Find (analysis/view_order),
 * on the recursion source of views_helpers.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/view_order.h"
#include "common/alloc.h"
#include "views_helpers.h"

/* The names of @v's rows in @order, joined with ' '. */
static const char *names(const struct hs_view *v, const uint32_t *order, size_t n)
{
	static char buf[512];
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s", i ? " " : "",
				       v->rows[order ? order[i] : i].name);
	return buf;
}

/* The rows of @v in the order @sort / @desc ask for, as names. */
static const char *sorted(const struct hs_view *v, const char *sort, const char *order)
{
	struct hs_view_order o;
	uint32_t *idx;
	const char *s;

	assert_int_equal(hs_view_order_parse(&o, sort, order, NULL), 0);
	assert_int_equal(hs_view_order_rows(v, &o, &idx), 0);
	s = names(v, idx, v->nr_rows);
	hs_free(idx);
	return s;
}

static void byname_sorted(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	assert_string_equal(sorted(&v, NULL, NULL), "E B C D A ROOT");
	assert_string_equal(sorted(&v, "", NULL), "E B C D A ROOT");
	/* names ascending by default, numbers descending; ties in view order */
	assert_string_equal(sorted(&v, "name", NULL), "A B C D E ROOT");
	assert_string_equal(sorted(&v, "name", "desc"), "ROOT E D C B A");
	assert_string_equal(sorted(&v, "inc", NULL), "A ROOT E B C D");
	assert_string_equal(sorted(&v, "inc", "asc"), "D C B E A ROOT");
	assert_string_equal(sorted(&v, "inc_count", NULL), "A ROOT B C E D");
	/* First: B, A and ROOT start at 0, E at 30 ms */
	assert_string_equal(sorted(&v, "first", "asc"), "B C D A ROOT E");
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

static void bad_orders(void **state)
{
	struct hs_view_order o = { HS_COL_INC, 1 };
	struct hs_diag d = HS_DIAG_INIT(NULL);

	(void)state;
	assert_int_equal(hs_view_order_parse(&o, "size", NULL, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "unknown sort column 'size'"));
	assert_int_equal(hs_view_order_parse(&o, "exc", "up", &d), -EINVAL);
	assert_int_equal(hs_view_order_parse(&o, NULL, NULL, NULL), 0);
	assert_false(hs_view_order_changes(&o));
	assert_int_equal(hs_view_order_parse(&o, NULL, "desc", NULL), 0);
	assert_true(hs_view_order_changes(&o));
}

/* Trees: depth first, each row's children sorted. */
static void tree_sorted(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_string_equal(sorted(&v, NULL, NULL), "ROOT A E B C B D");
	assert_string_equal(sorted(&v, "name", NULL), "ROOT A B C B D E");
	assert_string_equal(sorted(&v, "inc", "asc"), "ROOT A B C B D E");
	assert_string_equal(sorted(&v, "first", "desc"), "ROOT A E B C B D");
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Caller-Callee sorts inside each of its lists. */
static void caller_callee_sections(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	struct hs_view_order o;
	uint32_t *idx;
	size_t i;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLER_CALLEE, "B");
	assert_int_equal(hs_view_order_parse(&o, "name", "desc", NULL), 0);
	assert_int_equal(hs_view_order_rows(&v, &o, &idx), 0);
	for (i = 1; i < v.nr_rows; i++)
		assert_true(v.rows[idx[i - 1]].section <= v.rows[idx[i]].section);
	hs_free(idx);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

static void find(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	struct hs_pattern *p;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	uint32_t order[6] = { 0, 1, 2, 3, 4, 5 };	/* E B C D A ROOT */
	size_t at = 99;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	assert_int_equal(hs_view_find_compile("^[bd]$", 6, &p, NULL), 0);
	assert_int_equal(hs_view_find(&v, order, 6, p, HS_FIND_START, 0, &at, NULL), 1);
	assert_int_equal(at, 1);
	assert_int_equal(hs_view_find(&v, order, 6, p, 1, 0, &at, NULL), 1);
	assert_int_equal(at, 3);
	/* wraps around */
	assert_int_equal(hs_view_find(&v, order, 6, p, 3, 0, &at, NULL), 1);
	assert_int_equal(at, 1);
	assert_int_equal(hs_view_find(&v, order, 6, p, 1, 1, &at, NULL), 1);
	assert_int_equal(at, 3);
	assert_int_equal(hs_view_find(&v, order, 6, p, HS_FIND_START, 1, &at, NULL), 1);
	assert_int_equal(at, 3);
	assert_int_equal(hs_view_find(&v, order, 0, p, HS_FIND_START, 0, &at, NULL), 0);
	hs_pattern_free(p);
	/* caseless, and nothing found */
	assert_int_equal(hs_view_find_compile("root", 4, &p, NULL), 0);
	assert_int_equal(hs_view_find(&v, order, 6, p, HS_FIND_START, 0, &at, NULL), 1);
	assert_int_equal(at, 5);
	hs_pattern_free(p);
	assert_int_equal(hs_view_find_compile("zz", 2, &p, NULL), 0);
	at = 7;
	assert_int_equal(hs_view_find(&v, order, 6, p, HS_FIND_START, 0, &at, NULL), 0);
	assert_int_equal(at, 7);
	hs_pattern_free(p);
	/* a bad expression says so */
	assert_int_equal(hs_view_find_compile("(", 1, &p, &d), -EINVAL);
	assert_null(p);
	assert_true(d.set && !strncmp(d.msg, "find: ", 6));
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Find all: the matches and, in a tree, the rows that lead to them. */
static void find_all_and_keep(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	struct hs_pattern *p;
	uint32_t *idx, *rows;
	size_t nr;
	struct hs_view_order o = HS_VIEW_ORDER_INIT;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(hs_view_order_rows(&v, &o, &idx), 0);
	assert_int_equal(hs_view_find_compile("^d$", 3, &p, NULL), 0);
	assert_int_equal(hs_view_find_all(&v, idx, v.nr_rows, p, &rows, &nr, NULL), 0);
	assert_string_equal(names(&v, rows, nr), "ROOT A B C B D");
	assert_int_equal(hs_view_keep_rows(&v, rows, nr), 0);
	assert_int_equal(v.nr_rows, 6);
	assert_int_equal(v.nr_total, 7);
	expect_row(&v, 5, 5, "D", 1, 1);
	assert_int_equal(v.rows[5].parent, 4);
	assert_int_equal(v.rows[2].parent, 1);
	assert_int_equal(v.rows[0].parent, HS_NO_NODE);
	hs_free(rows);
	hs_free(idx);
	/* a row whose parent is not kept becomes a root */
	{
		uint32_t two[2] = { 2, 5 };

		assert_int_equal(hs_view_keep_rows(&v, two, 2), 0);
		assert_string_equal(names(&v, NULL, 2), "B D");
		assert_int_equal(v.rows[0].parent, HS_NO_NODE);
		assert_int_equal(v.rows[1].parent, HS_NO_NODE);
	}
	hs_pattern_free(p);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(byname_sorted),
		cmocka_unit_test(bad_orders),
		cmocka_unit_test(tree_sorted),
		cmocka_unit_test(caller_callee_sections),
		cmocka_unit_test(find),
		cmocka_unit_test(find_all_and_keep),
	};
	return cmocka_run_group_tests_name("view_order", tests, NULL, NULL);
}
