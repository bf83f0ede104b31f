/*
 * test_view_part - ByName and CallTree rows made for some rows only
 * (analysis/view_part.h) are the rows of the whole view: every field,
 * When included, for every row and for subsets in any order, under
 * Fold%, a time window, GroupPats and fractional and negative metrics;
 * the numbering's parents and children are the whole view's, and so is
 * Find in the view's own order; bad ids
 * and kinds are refused; failed allocations leak nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "analysis/view_order.h"
#include "analysis/view_part.h"
#include "common/alloc.h"
#include "views_helpers.h"

/* A small deterministic generator (xorshift), so that runs repeat. */
static uint32_t next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * @nr samples over 1 s on random walks over 12 names in 3 modules
 * (recursion included: a name may repeat on a stack), metrics with
 * fractions, a few negative ones when @negative.
 */
static void random_source(struct hs_stack_source *src, uint32_t seed, size_t nr,
			  int negative)
{
	static const char *const names[] = {
	    "m1!main", "m1!run",  "m1!parse", "m2!alloc", "m2!free",	"m2!copy",
	    "m3!hash", "m3!find", "m3!sort",  "m1!loop",  "m2!memcpy", "m3!cmp",
	};
	char stack[512];
	size_t i, len, depth, d;

	hs_source_init(src);
	for (i = 0; i < nr; i++) {
		double metric = (double)(next_rand(&seed) % 1000) / 7.0;

		if (negative && next_rand(&seed) % 5 == 0)
			metric = -metric;
		len = (size_t)snprintf(stack, sizeof(stack), "m1!main");
		depth = 1 + next_rand(&seed) % 7;
		for (d = 0; d < depth; d++)
			len += (size_t)snprintf(stack + len, sizeof(stack) - len, ";%s",
						names[1 + next_rand(&seed) % 11]);
		add(src, (double)(next_rand(&seed) % 1000000) / 1000.0, metric, 1, stack);
	}
}

/* Part row @p equals whole row @w, field by field. */
static void expect_same_row(const struct hs_view_row *p, const struct hs_view_row *w)
{
	assert_string_equal(p->name, w->name);
	assert_int_equal(p->parent, w->parent);
	assert_int_equal(p->depth, w->depth);
	assert_int_equal(p->nr_children, w->nr_children);
	assert_int_equal(p->section, w->section);
	assert_true(p->exc == w->exc && p->exc_count == w->exc_count);
	assert_true(p->inc == w->inc && p->inc_count == w->inc_count);
	assert_true(p->fold == w->fold && p->fold_count == w->fold_count);
	assert_true(p->first == w->first && p->last == w->last);
	assert_string_equal(p->when, w->when);
	assert_int_equal(p->origin, w->origin);
	assert_int_equal(p->entry_at, w->entry_at);
	assert_true(p->module == w->module ||
		    (p->module && w->module && !strcmp(p->module, w->module)));
}

/* Find's patterns: several matches, one, none */
static const char *const find_res[] = {"m2!", "sort", "^m1!main$", "ROOT", "nomatch"};

/*
 * The parts of @kind of @ct against its whole view: every row at once,
 * then a subset in shuffled order with repeats, then each row alone; for
 * CallTree, each row's parent and children; Find from rows all along.
 */
static void check_parts(const struct hs_calltree *ct, enum hs_view_kind kind, uint32_t seed)
{
	struct hs_view_parts parts;
	struct hs_view whole, part;
	uint32_t *ids, *kids;
	size_t n, i, k, nr;

	build_view(&whole, ct, kind, NULL);
	assert_int_equal(hs_view_parts_build(&parts, ct, kind), 0);
	n = whole.nr_rows;
	assert_int_equal(parts.nr_rows, n);
	assert_int_equal(parts.v.nr_total, n);
	assert_true(hs_view_parts_memory(&parts) > 0 || !n);
	ids = malloc((2 * n + 1) * sizeof(*ids));
	kids = malloc((n + 1) * sizeof(*kids));
	assert_non_null(ids);
	assert_non_null(kids);

	/* every row, in order */
	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)i;
	assert_int_equal(hs_view_part(&parts, ids, n, 0, &part), 0);
	assert_int_equal(part.nr_rows, n);
	assert_int_equal(part.nr_total, n);
	assert_int_equal(part.kind, kind);
	assert_true(part.basis == whole.basis);
	assert_true(part.sum.metric == whole.sum.metric);
	for (i = 0; i < n; i++)
		expect_same_row(&part.rows[i], &whole.rows[i]);
	hs_view_release(&part);

	/* a third of them, shuffled, some twice */
	for (nr = 0, i = 0; i < n; i++)
		if (next_rand(&seed) % 3 == 0) {
			ids[nr++] = (uint32_t)i;
			if (next_rand(&seed) % 4 == 0)
				ids[nr++] = (uint32_t)i;
		}
	for (i = nr; i > 1; i--) {
		uint32_t j = next_rand(&seed) % i, t = ids[i - 1];

		ids[i - 1] = ids[j];
		ids[j] = t;
	}
	assert_int_equal(hs_view_part(&parts, ids, nr, 0, &part), 0);
	assert_int_equal(part.nr_rows, nr);
	for (i = 0; i < nr; i++)
		expect_same_row(&part.rows[i], &whole.rows[ids[i]]);
	hs_view_release(&part);

	/* some alone (a hundred); without When, When is empty, the rest the same */
	for (i = 0; i < n; i += 1 + n / 100) {
		uint32_t id = (uint32_t)i;

		assert_int_equal(hs_view_part(&parts, &id, 1, 0, &part), 0);
		expect_same_row(&part.rows[0], &whole.rows[i]);
		hs_view_release(&part);
		assert_int_equal(hs_view_part(&parts, &id, 1, 1, &part), 0);
		assert_string_equal(part.rows[0].when, "");
		assert_true(part.rows[0].inc == whole.rows[i].inc);
		hs_view_release(&part);
	}

	/* the numbering: parents and children as in the whole view */
	for (i = 0; i < n; i++) {
		assert_int_equal(hs_view_parts_parent(&parts, (uint32_t)i),
				 whole.rows[i].parent);
		assert_int_equal(hs_view_parts_nr_children(&parts, (uint32_t)i),
				 kind == HS_VIEW_CALLTREE ? whole.rows[i].nr_children : 0);
		nr = hs_view_parts_children(&parts, (uint32_t)i, kids);
		assert_int_equal(nr, hs_view_parts_nr_children(&parts, (uint32_t)i));
		/* the children, in order: the rows whose parent is i */
		for (k = 0; k < nr; k++) {
			assert_int_equal(whole.rows[kids[k]].parent, i);
			assert_true(k == 0 || kids[k] > kids[k - 1]);
		}
	}
	/* Find in the own order: hs_view_find()'s answer over the whole view */
	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)i;
	for (k = 0; k < sizeof(find_res) / sizeof(find_res[0]); k++) {
		struct hs_pattern *re;
		size_t from, at_part, at_whole;
		int back;

		assert_int_equal(
		    hs_view_find_compile(find_res[k], strlen(find_res[k]), &re, NULL), 0);
		for (from = 0; from <= n; from += 1 + n / 20)
			for (back = 0; back < 2; back++) {
				size_t start = from == n ? HS_FIND_START : from;
				int a = hs_view_parts_find(&parts, re, start, back, &at_part,
							   NULL);
				int b = hs_view_find(&whole, ids, n, re, start, back,
						     &at_whole, NULL);

				assert_int_equal(a, b);
				if (a == 1)
					assert_int_equal(at_part, at_whole);
			}
		hs_pattern_free(re);
	}
	free(ids);
	free(kids);
	hs_view_parts_release(&parts);
	hs_view_release(&whole);
}

static void check_source(const struct hs_stack_source *src, const struct hs_view_params *p,
			 uint32_t seed)
{
	struct hs_calltree ct;

	assert_int_equal(hs_calltree_build(&ct, src, p, NULL), 0);
	check_parts(&ct, HS_VIEW_CALLTREE, seed);
	check_parts(&ct, HS_VIEW_BYNAME, seed + 1);
	hs_calltree_release(&ct);
}

/* The recursion source of the other view tests, rows worked out there. */
static void recursion(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_stack_source src;

	(void)state;
	recursion_source(&src);
	check_source(&src, &p, 7);
	p.fold_pct = 10;
	check_source(&src, &p, 8);
	hs_source_release(&src);
}

/* Random walks: no pattern, Fold%, a window, GroupPats; the nodes' histograms or not. */
static void random_walks(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_stack_source src;
	int hist;

	(void)state;
	random_source(&src, 12345, 3000, 0);
	for (hist = -1; hist <= 1; hist += 2) {
		p = (struct hs_view_params)HS_VIEW_PARAMS_INIT;
		p.node_hist = hist;
		check_source(&src, &p, 1);
		p.fold_pct = 2;
		check_source(&src, &p, 2);
		p.fold_pct = NAN;
		p.filter.start_ms = 200;
		p.filter.end_ms = 700;
		check_source(&src, &p, 3);
		p.filter.start_ms = p.filter.end_ms = NAN;
		p.filter.group = "m2!->group two";
		check_source(&src, &p, 4);
	}
	hs_source_release(&src);
}

/* Negative metrics (a diff's): the sums still print alike. */
static void negative_metrics(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_stack_source src;

	(void)state;
	random_source(&src, 777, 2000, 1);
	check_source(&src, &p, 5);
	p.fold_pct = 5;
	check_source(&src, &p, 6);
	hs_source_release(&src);
}

/* Ids past the rows and views not made in parts are refused. */
static void refused(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_stack_source src;
	struct hs_view_parts parts;
	struct hs_calltree ct;
	struct hs_view part;
	uint32_t ids[2] = {0, 7};

	(void)state;
	recursion_source(&src);
	assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
	assert_int_equal(hs_view_parts_build(&parts, &ct, HS_VIEW_CALLERS), -EINVAL);
	assert_int_equal(hs_view_parts_build(&parts, &ct, HS_VIEW_FLAME), -EINVAL);
	assert_int_equal(hs_view_parts_build(&parts, &ct, HS_VIEW_CALLTREE), 0);
	assert_int_equal(parts.nr_rows, 7);
	assert_int_equal(hs_view_part(&parts, ids, 2, 0, &part), -EINVAL);
	assert_null(part.rows);
	assert_int_equal(hs_view_part(&parts, ids, 1, 0, &part), 0);
	assert_string_equal(part.rows[0].name, "ROOT");
	hs_view_release(&part);
	/* no rows asked for: an empty part */
	assert_int_equal(hs_view_part(&parts, ids, 0, 0, &part), 0);
	assert_int_equal(part.nr_rows, 0);
	assert_int_equal(part.nr_total, 7);
	hs_view_release(&part);
	hs_view_parts_release(&parts);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Every failed allocation is reported and leaks nothing. */
static void out_of_memory(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_stack_source src;
	struct hs_view_parts parts;
	struct hs_calltree ct;
	struct hs_view part;
	uint32_t ids[3] = {4, 0, 4};
	enum hs_view_kind kinds[2] = {HS_VIEW_CALLTREE, HS_VIEW_BYNAME};
	long n;
	int k, done;

	(void)state;
	recursion_source(&src);
	assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
	for (k = 0; k < 2; k++) {
		for (done = 0, n = 0; !done && n < 1000; n++) {
			int err;

			hs_alloc_fail_after(n);
			err = hs_view_parts_build(&parts, &ct, kinds[k]);
			if (!err) {
				err = hs_view_part(&parts, ids, 3, 0, &part);
				if (!err)
					hs_view_release(&part);
				hs_view_parts_release(&parts);
			}
			hs_alloc_fail_after(-1);
			assert_true(err == 0 || err == -ENOMEM);
			done = !err;
		}
		assert_true(done);
	}
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(recursion),	cmocka_unit_test(random_walks),
	    cmocka_unit_test(negative_metrics), cmocka_unit_test(refused),
	    cmocka_unit_test(out_of_memory),
	};
	return cmocka_run_group_tests_name("view_part", tests, NULL, NULL);
}
