/*
 * test_callercallee - Callers, Callees and Caller-Callee of a focus name:
 * the recursion case by hand, then invariants over random sources.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "views_helpers.h"

/*
 * Focus B in A->B->C->B->D (1), A->B->C (2), A->B (4), A->E (8). Each sample
 * goes through its deepest B: sample 1's caller is C (then B, A, ROOT) and
 * its callee D; samples 2 and 3 have caller A, sample 2 callee C.
 */
static void recursion_callers_callees(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);

	build_view(&v, &ct, HS_VIEW_CALLERS, "B");
	assert_int_equal(v.nr_rows, 7);
	expect_row(&v, 0, 0, "B", 4, 7);	/* the focus's by-name row */
	expect_row(&v, 1, 1, "A", 0, 6);
	expect_row(&v, 2, 2, "ROOT", 0, 6);
	expect_row(&v, 3, 1, "C", 0, 1);
	expect_row(&v, 4, 2, "B", 0, 1);
	expect_row(&v, 5, 3, "A", 0, 1);
	expect_row(&v, 6, 4, "ROOT", 0, 1);
	assert_true(v.rows[3].inc_count == 1 && v.rows[1].inc_count == 2);
	hs_view_release(&v);

	build_view(&v, &ct, HS_VIEW_CALLEES, "B");
	assert_int_equal(v.nr_rows, 3);
	expect_row(&v, 0, 0, "B", 4, 7);
	expect_row(&v, 1, 1, "C", 2, 2);
	expect_row(&v, 2, 1, "D", 1, 1);
	hs_view_release(&v);

	/* ROOT as the focus: no callers; its callees are the call tree */
	build_view(&v, &ct, HS_VIEW_CALLERS, "ROOT");
	assert_int_equal(v.nr_rows, 1);
	expect_row(&v, 0, 0, "ROOT", 0, 15);
	hs_view_release(&v);
	build_view(&v, &ct, HS_VIEW_CALLEES, "ROOT");
	assert_int_equal(v.nr_rows, 7);
	expect_row(&v, 3, 2, "B", 4, 7);
	hs_view_release(&v);

	/* an unknown focus */
	{
		struct hs_view_opts o = { .kind = HS_VIEW_CALLERS, .focus = "nope" };

		assert_int_equal(hs_view_build(&v, &ct, &o), -ENOENT);
		o.focus = NULL;
		assert_int_equal(hs_view_build(&v, &ct, &o), -ENOENT);
	}
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/*
 * Caller-Callee of B: sample 1 has B twice, so each occurrence weighs 1/2:
 * callers A 0.5 (occurrence 1) and C 0.5 (occurrence 2); callees C 0.5 and
 * D 0.5 (D is the leaf: its exclusive too). Samples 2 and 3: A 2 + 4
 * (A also gets sample 3's exclusive, B being its leaf), callee C 2.
 */
static void recursion_caller_callee(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	const struct hs_view_row *r;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLER_CALLEE, "B");
	assert_int_equal(v.nr_rows, 5);
	assert_int_equal(v.rows[0].section, HS_ROW_CALLER);
	assert_string_equal(v.rows[0].name, "A");
	assert_row(&v.rows[0], 4, 1, 6.5, 2.5, 0);
	r = row_named(&v, "C", HS_ROW_CALLER);
	assert_row(r, 0, 0, 0.5, 0.5, 0);
	r = row_named(&v, "B", HS_ROW_FOCUS);
	assert_row(r, 4, 1, 7, 3, 0);
	assert_true(r == &v.rows[2]);
	assert_string_equal(v.rows[3].name, "C");
	assert_row(&v.rows[3], 2, 1, 2.5, 1.5, 0);
	r = row_named(&v, "D", HS_ROW_CALLEE);
	assert_row(r, 0.5, 0.5, 0.5, 0.5, 0);
	/*
	 * When rows are weighted the same way: C's 0.5 at t = 0 against a
	 * scale of 8 / 2 (the peak is sample 4, t = 30 in bucket 31) is 12.5%;
	 * the focus B: 1 (25%), 2 (50%) and 4 (100%) at t = 0, 10 and 20.
	 */
	assert_string_equal(row_named(&v, "C", HS_ROW_CALLER)->when,
			    "1_______________________________");
	assert_string_equal(row_named(&v, "B", HS_ROW_FOCUS)->when,
			    "2_________5__________A__________");
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Random sources: a few names, recursion, negative metrics, no stack. */
static void random_source(struct hs_stack_source *src, unsigned seed)
{
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	char stack[64];
	int i;

	srand(seed);
	hs_source_init(src);
	for (i = 0; i < 60; i++) {
		int depth = rand() % 8, k;
		size_t len = 0;
		double metric = (rand() % 14) - 3;

		stack[0] = '\0';
		for (k = 0; k < depth; k++)
			len += (size_t)snprintf(stack + len, sizeof(stack) - len, "%s%s",
						k ? ";" : "", names[rand() % 5]);
		add(src, rand() % 1000, metric, metric < 0 ? -1 : 1, stack);
	}
}

static double sum_section(const struct hs_view *v, enum hs_row_section s)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < v->nr_rows; i++)
		if (v->rows[i].section == s)
			sum += v->rows[i].inc;
	return sum;
}

/* Every row of a tree: Inc = Exc + the children's Inc (callers: ROOT rows end). */
static void check_tree_sums(const struct hs_view *v, int callers)
{
	double *kids = calloc(v->nr_rows, sizeof(*kids));
	size_t i;

	assert_non_null(kids);
	for (i = 1; i < v->nr_rows; i++)
		kids[v->rows[i].parent] += v->rows[i].inc;
	for (i = 0; i < v->nr_rows; i++) {
		const struct hs_view_row *r = &v->rows[i];

		if (callers) {
			if (i > 0)
				assert_true(r->exc == 0);
			if (!r->nr_children)
				continue;	/* a caller chain's end (ROOT) or the focus alone */
			assert_true(fabs(r->inc - kids[i]) < 1e-9);
		} else {
			assert_true(fabs(r->inc - r->exc - kids[i]) < 1e-9);
		}
	}
	free(kids);
}

/*
 * When, the slow way: every sample that passed, walked up from the node it
 * is charged to, added to each row @weight says it belongs to.
 */
typedef double (*weight_fn)(const struct hs_calltree *ct, uint32_t node,
			    const struct hs_view_row *r);

static const char *node_name(const struct hs_calltree *ct, uint32_t n)
{
	return hs_tree_name(&ct->t, n);
}

static const struct hs_view_row *rows_base;	/* the rows check_when() checks */

/* ByName: 1 when the name is on the path. */
static double w_byname(const struct hs_calltree *ct, uint32_t n, const struct hs_view_row *r)
{
	for (;;) {
		if (!strcmp(node_name(ct, n), r->name))
			return 1;
		if (!n)
			return 0;
		n = ct->t.parent[n];
	}
}

/* Caller-Callee: 1/N per occurrence of the focus whose caller/callee is the row. */
static const char *cc_focus;

static double w_cc(const struct hs_calltree *ct, uint32_t n, const struct hs_view_row *r)
{
	uint32_t x = n, below = HS_NO_NODE;
	double k = 0, hits = 0;

	for (;;) {
		if (!strcmp(node_name(ct, x), cc_focus)) {
			k++;
			if (r->section == HS_ROW_CALLER && x && !strcmp(node_name(ct, ct->t.parent[x]), r->name))
				hits++;
			if (r->section == HS_ROW_CALLEE && below != HS_NO_NODE &&
			    !strcmp(node_name(ct, below), r->name))
				hits++;
		}
		if (!x)
			break;
		below = x;
		x = ct->t.parent[x];
	}
	if (r->section == HS_ROW_FOCUS)
		return k ? 1 : 0;
	return k ? hits / k : 0;
}

static void check_when(const struct hs_calltree *ct, const struct hs_view *v, weight_fn fn)
{
	const struct hs_stack_source *in = ct->in;
	double (*hist)[HS_WHEN_BUCKETS] = calloc(v->nr_rows + 1, sizeof(*hist));
	double root[HS_WHEN_BUCKETS] = { 0 }, val[HS_WHEN_BUCKETS], scale;
	uint8_t b[HS_WHEN_BUCKETS];
	char when[HS_WHEN_BUCKETS + 1];
	size_t i, r;

	assert_non_null(hist);
	rows_base = v->rows;
	for (i = 0; i < in->nr_samples; i++) {
		uint32_t s, n, k, j;
		double m, c;

		if (!hs_filtered_sample(&ct->f, i, &s, &m, &c))
			continue;
		n = ct->rep[hs_calltree_stack_node(ct, s)];
		k = hs_when_spread(&ct->range, in->time[i], in->metric[i], m, b, val);
		for (j = 0; j < k; j++)
			root[b[j]] += val[j];
		for (r = 0; r < v->nr_rows; r++) {
			double w = fn(ct, n, &v->rows[r]);

			for (j = 0; j < k; j++)
				hist[r][b[j]] += w * val[j];
		}
	}
	scale = hs_when_scale(&ct->range, root);
	for (r = 0; r < v->nr_rows; r++) {
		hs_when_format(hist[r], scale, when);
		assert_string_equal(when, v->rows[r].when);
	}
	free(hist);
}

/*
 * Call-tree rows: 1 when the row's node is on the path. The rows are the
 * alive nodes in depth-first order; row_node[] maps them back.
 */
static uint32_t *row_node;

static double w_tree(const struct hs_calltree *ct, uint32_t n, const struct hs_view_row *r)
{
	uint32_t want = row_node[r - rows_base];

	for (;;) {
		if (n == want)
			return 1;
		if (!n)
			return 0;
		n = ct->t.parent[n];
	}
}

static void check_tree_when(const struct hs_calltree *ct, const struct hs_view *v)
{
	uint32_t stack[256], depth = 1, next = 0;

	row_node = malloc((v->nr_rows + 1) * sizeof(*row_node));
	assert_non_null(row_node);
	stack[0] = 0;
	while (depth) {
		uint32_t n = stack[--depth];
		size_t c;

		for (c = hs_tree_nr_children(&ct->t, n); c-- > 0;)
			stack[depth++] = hs_tree_children(&ct->t, n)[c];
		assert_true(next < v->nr_rows);
		row_node[next++] = n;
	}
	assert_int_equal(next, v->nr_rows);
	check_when(ct, v, w_tree);
	free(row_node);
}

static void invariants_on_random_sources(void **state)
{
	unsigned seed;

	(void)state;
	for (seed = 1; seed <= 40; seed++) {
		struct hs_stack_source src;
		struct hs_calltree ct;
		struct hs_view byname, v;
		double total, exc_sum = 0;
		size_t i;

		random_source(&src, seed);
		if (seed % 2)
			src.kind = HS_METRIC_TIME;	/* spread over buckets */
		{
			struct hs_view_params p = HS_VIEW_PARAMS_INIT;

			/* When from per-node histograms, or from a pass over the samples */
			p.node_hist = (seed / 2) % 2 ? 1 : -1;
			if (seed % 3 == 0) {
				p.filter.start_ms = 100;
				p.filter.end_ms = 800;
			}
			assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
			assert_true(!ct.hist == (p.node_hist < 0));
			total = ct.t.inc[0].metric;	/* without Fold% */
			hs_calltree_release(&ct);
			p.fold_pct = (seed % 4) * 7.0;
			assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
		}
		/* Fold% never changes the total */
		assert_true(fabs(ct.t.inc[0].metric - total) < 1e-9);
		build_view(&byname, &ct, HS_VIEW_BYNAME, NULL);
		/* ByName inclusive of ROOT is the total; exclusives sum to it */
		assert_true(fabs(row_named(&byname, "ROOT", HS_ROW_PLAIN)->inc - total) < 1e-9);
		for (i = 0; i < byname.nr_rows; i++)
			exc_sum += byname.rows[i].exc;
		assert_true(fabs(exc_sum - total) < 1e-9);
		check_when(&ct, &byname, w_byname);
		build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
		check_tree_sums(&v, 0);
		check_tree_when(&ct, &v);
		hs_view_release(&v);

		for (i = 0; i < byname.nr_rows; i++) {
			const struct hs_view_row *b = &byname.rows[i];
			const struct hs_view_row *f;

			build_view(&v, &ct, HS_VIEW_CALLER_CALLEE, b->name);
			f = row_named(&v, b->name, HS_ROW_FOCUS);
			assert_non_null(f);
			/* focus Inc = ByName Inc; Σ callers = focus; Exc + Σ callees = focus */
			assert_true(fabs(f->inc - b->inc) < 1e-9);
			if (strcmp(b->name, "ROOT"))
				assert_true(fabs(sum_section(&v, HS_ROW_CALLER) - f->inc) < 1e-9);
			assert_true(fabs(f->exc + sum_section(&v, HS_ROW_CALLEE) - f->inc) < 1e-9);
			cc_focus = b->name;
			check_when(&ct, &v, w_cc);
			hs_view_release(&v);

			build_view(&v, &ct, HS_VIEW_CALLERS, b->name);
			assert_string_equal(v.rows[0].when, b->when);
			assert_true(fabs(v.rows[0].inc - b->inc) < 1e-9);
			assert_true(fabs(v.rows[0].exc - b->exc) < 1e-9);
			check_tree_sums(&v, 1);
			hs_view_release(&v);

			build_view(&v, &ct, HS_VIEW_CALLEES, b->name);
			assert_string_equal(v.rows[0].when, b->when);
			assert_true(fabs(v.rows[0].inc - b->inc) < 1e-9);
			assert_true(fabs(v.rows[0].exc - b->exc) < 1e-9);
			check_tree_sums(&v, 0);
			hs_view_release(&v);
		}
		hs_view_release(&byname);
		hs_calltree_release(&ct);
		hs_source_release(&src);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recursion_callers_callees),
		cmocka_unit_test(recursion_caller_callee),
		cmocka_unit_test(invariants_on_random_sources),
	};
	return cmocka_run_group_tests_name("callercallee", tests, NULL, NULL);
}
