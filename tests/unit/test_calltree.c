/*
 * test_calltree - the call tree, Fold%, time ranges and the summary, with
 * costs worked out by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "views_helpers.h"

/*
 * ROOT 15 > A 15 > { E 8 (exc 8), B 7 (exc 4) > C 3 (exc 2) > B 1 > D 1 (exc 1) }:
 * children by |Inc| descending, the recursive B its own path-unique node.
 */
static void recursion_tree(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 7);
	expect_row(&v, 0, 0, "ROOT", 0, 15);
	expect_row(&v, 1, 1, "A", 0, 15);
	expect_row(&v, 2, 2, "E", 8, 8);
	expect_row(&v, 3, 2, "B", 4, 7);
	expect_row(&v, 4, 3, "C", 2, 3);
	expect_row(&v, 5, 4, "B", 0, 1);
	expect_row(&v, 6, 5, "D", 1, 1);
	assert_int_equal(v.rows[3].parent, 1);
	assert_int_equal(v.rows[6].parent, 5);
	assert_int_equal(v.rows[1].nr_children, 2);
	/* counts and First/Last (ns) */
	assert_true(v.rows[3].inc_count == 3);
	assert_true(v.rows[3].first == 0 && v.rows[3].last == 20000000);
	assert_true(v.rows[2].first == 30000000 && v.rows[2].last == 30000000);
	assert_int_equal(ct.nr_samples, 4);
	hs_view_release(&v);

	/* --depth and --limit cut rows, not costs */
	{
		struct hs_view_opts o = { .kind = HS_VIEW_CALLTREE, .max_depth = 2 };

		assert_int_equal(hs_view_build(&v, &ct, &o), 0);
		assert_int_equal(v.nr_rows, 4);
		assert_int_equal(v.nr_total, 7);
		expect_row(&v, 3, 2, "B", 4, 7);
		hs_view_release(&v);
		o.max_depth = 0;
		o.limit = 3;
		assert_int_equal(hs_view_build(&v, &ct, &o), 0);
		assert_int_equal(v.nr_rows, 3);
		expect_row(&v, 2, 2, "E", 8, 8);
		hs_view_release(&v);
	}
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* hs_view_tree_nodes(): the node behind each CallTree row, by name and cost. */
static void tree_rows_to_nodes(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	uint32_t node[8];
	size_t r;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_total, 7);
	node[7] = HS_NO_NODE;
	assert_int_equal(hs_view_tree_nodes(&ct.t, node, v.nr_total), 0);
	for (r = 0; r < v.nr_rows; r++) {
		assert_string_equal(hs_tree_name(&ct.t, node[r]), v.rows[r].name);
		assert_true(ct.t.inc[node[r]].metric == v.rows[r].inc);
		assert_true(r == 0 || ct.t.parent[node[r]] == node[v.rows[r].parent]);
	}
	assert_int_equal(node[7], HS_NO_NODE); /* nothing past the rows */
	/* fewer rows asked for: the first ones */
	node[3] = HS_NO_NODE;
	assert_int_equal(hs_view_tree_nodes(&ct.t, node, 3), 0);
	assert_int_equal(node[3], HS_NO_NODE);
	assert_string_equal(hs_tree_name(&ct.t, node[2]), "E");
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Equal |Inc| siblings: First ascending, then name. */
static void children_ties_sort_by_first(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	hs_source_init(&src);
	add(&src, 50, 3, 1, "M;late");
	add(&src, 10, -3, 1, "M;early");
	add(&src, 5, 1, 1, "M;small");
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 5);
	expect_row(&v, 2, 2, "early", -3, -3);
	expect_row(&v, 3, 2, "late", 3, 3);
	expect_row(&v, 4, 2, "small", 1, 1);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/*
 * Fold% 10 of 15 = 1.5: D (1; by name 1) folds into the inner B; the inner
 * B (1) stays because B by name is 7. Fold% 50 = 7.5: B (7, by name 7)
 * folds into A with its whole subtree; E (8) stays.
 */
static void fold_pct_thresholds(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	const struct hs_view_row *r;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, 10);
	assert_true(fabs(ct.fold_threshold - 1.5) < 1e-12);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 6);
	expect_row(&v, 5, 4, "B", 1, 1);
	assert_true(v.rows[5].fold == 1 && v.rows[5].fold_count == 1);
	hs_view_release(&v);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	assert_null(row_named(&v, "D", HS_ROW_PLAIN));
	r = row_named(&v, "B", HS_ROW_PLAIN);
	assert_row(r, 5, 2, 7, 3, 1);
	hs_view_release(&v);
	hs_calltree_release(&ct);

	build_tree(&ct, &src, 50);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 3);
	expect_row(&v, 1, 1, "A", 7, 15);
	assert_true(v.rows[1].fold == 7 && v.rows[1].fold_count == 3);
	/* A's exclusive now ends at the folded samples' last time */
	expect_row(&v, 2, 2, "E", 8, 8);
	hs_view_release(&v);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	assert_int_equal(v.nr_rows, 3);	/* E, A, ROOT */
	assert_null(row_named(&v, "B", HS_ROW_PLAIN));
	assert_null(row_named(&v, "C", HS_ROW_PLAIN));
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* The by-name guard keeps a small node whose name is big elsewhere. */
static void fold_pct_byname_guard(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 90, 1, "main;hot;lib");
	add(&src, 0, 5, 1, "main;cold;lib");
	add(&src, 0, 5, 1, "main;cold;other");
	/* 10% of 100 = 10: cold (10) stays, lib under cold (5) stays by name
	 * (lib is 95), other (5) folds into cold */
	build_tree(&ct, &src, 10);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 6);
	expect_row(&v, 4, 2, "cold", 5, 10);
	expect_row(&v, 5, 3, "lib", 5, 5);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	/* 10.5%: cold (10) itself folds, whole subtree, into main */
	build_tree(&ct, &src, 10.5);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 4);
	expect_row(&v, 1, 1, "main", 10, 100);
	assert_true(v.rows[1].fold == 10 && v.rows[1].fold_count == 2);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* BROKEN never folds; ROOT never folds; a total <= 0 folds nothing. */
static void fold_pct_broken_root_and_negative_total(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 99, 1, "P;T;main");
	add(&src, 0, 1, 1, "P;T;BROKEN;x");
	build_tree(&ct, &src, 5);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	/* ROOT P T {main, BROKEN(x folded into it)} */
	assert_int_equal(v.nr_rows, 5);
	expect_row(&v, 4, 3, "BROKEN", 1, 1);
	assert_true(v.rows[4].fold == 1);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);

	/* a diff whose total is negative: nothing folds at any Fold% */
	hs_source_init(&src);
	add(&src, 0, 2, 1, "X;small");
	add(&src, 0, -5, -1, "X;big");
	build_tree(&ct, &src, 99);
	assert_true(isnan(ct.fold_pct));
	assert_int_equal(ct.nr_folded, 0);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 4);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Negative metrics: |Inc| decides; the folded cost keeps its sign. */
static void fold_pct_negative_metrics(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	double total, count;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 12, 1, "X;P");
	add(&src, 0, -2, -1, "X;N");
	/* total 10, 25% = 2.5: N (|-2|) folds into X */
	build_tree(&ct, &src, 25);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	assert_int_equal(v.nr_rows, 3);
	expect_row(&v, 1, 1, "X", -2, 10);
	assert_true(v.rows[1].fold == -2 && v.rows[1].fold_count == -1);
	hs_view_release(&v);
	/* Fold% never changes the total */
	hs_source_totals(&src, &total, &count);
	assert_true(ct.t.inc[0].metric == total && ct.t.inc[0].count == count);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* A sample with no stack is charged to ROOT itself. */
static void stackless_samples_go_to_root(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 3, 1, "");
	add(&src, 1, 4, 1, "f");
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	expect_row(&v, 0, 0, "ROOT", 3, 7);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/*
 * A time window on a TimeMetric source prorates the metric (count
 * unchanged); Last is t + |metric| capped at End.
 */
static void time_window_prorates_time_metrics(void **state)
{
	struct hs_stack_source src;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_calltree ct;
	struct hs_view v;
	const struct hs_view_row *r;

	(void)state;
	hs_source_init(&src);
	src.kind = HS_METRIC_TIME;
	add(&src, 0, 10, 1, "main;a");		/* [0, 10] */
	add(&src, 95, 10, 1, "main;b");		/* [95, 105] */
	add(&src, 200, 10, 1, "main;c");	/* after End: dropped */
	p.filter.start_ms = 5;
	p.filter.end_ms = 100;
	assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	/* a covers [5 - 0.0006, 10]: 10 * 5.0006 / 10 */
	r = row_named(&v, "a", HS_ROW_PLAIN);
	assert_row(r, 5.0006, 1, 5.0006, 1, 0);
	assert_true(r->first == 0 && r->last == 10000000);
	/* b covers [95, 100.0006]: 10 * 5.0006 / 10; Last capped at End = 100 */
	r = row_named(&v, "b", HS_ROW_PLAIN);
	assert_row(r, 5.0006, 1, 5.0006, 1, 0);
	assert_true(r->first == 95000000 && r->last == 100000000);
	assert_null(row_named(&v, "c", HS_ROW_PLAIN));
	assert_int_equal(v.sum.samples, 2);
	assert_true(fabs(v.sum.metric - 10.0012) < 1e-9);
	assert_true(v.sum.count == 2);
	/* TimeBucket = (100.0006 - 4.9994) / 32 ms */
	assert_true(fabs(v.sum.bucket_ms - 95.0012 / 32) < 1e-9);
	hs_view_release(&v);
	hs_calltree_release(&ct);

	/* a plain source: samples outside the window are dropped, not prorated */
	src.kind = HS_METRIC_PLAIN;
	assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	assert_null(row_named(&v, "a", HS_ROW_PLAIN));
	r = row_named(&v, "b", HS_ROW_PLAIN);
	assert_row(r, 10, 1, 10, 1, 0);
	assert_true(r->last == 95000000);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* Totals Metric, Count, First, Last, Last-First, Metric/Interval, TimeBucket. */
static void summary_line(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view_summary s;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	hs_view_summary_fill(&s, &ct);
	assert_true(s.metric == 15 && s.count == 4 && s.samples == 4);
	assert_true(s.first == 0 && s.last == 30000000);
	assert_true(fabs(s.metric_per_interval - 0.5) < 1e-12);
	/* the histogram spans [0 - 0.0006, 30 + 0.0006] ms */
	assert_true(fabs(s.bucket_ms - 30.0012 / 32) < 1e-12);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/*
 * A source whose samples carry no time (a heap snapshot's) keeps no When
 * histograms and its views leave When empty in every view; the same
 * source with times has them, with the same costs.
 */
static void untimed_source_has_no_when(void **state)
{
	struct hs_stack_source src;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	enum hs_view_kind k;
	int untimed;

	(void)state;
	recursion_source(&src);
	p.node_hist = 1; /* asked for always: an untimed source still keeps none */
	for (untimed = 0; untimed <= 1; untimed++) {
		struct hs_calltree ct;

		src.untimed = untimed;
		assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
		assert_true(untimed ? ct.hist == NULL : ct.hist != NULL);
		for (k = 0; k < HS_VIEW__COUNT; k++) {
			struct hs_view_opts o = {.kind = k, .focus = "B"};
			struct hs_view v;
			size_t r, nr_when = 0;

			assert_int_equal(hs_view_build(&v, &ct, &o), 0);
			for (r = 0; r < v.nr_rows; r++)
				nr_when += v.rows[r].when[0] != 0;
			if (untimed)
				assert_int_equal(nr_when, 0);
			else if (k == HS_VIEW_CALLTREE || k == HS_VIEW_BYNAME)
				assert_int_equal(nr_when, v.nr_rows);
			if (k == HS_VIEW_CALLTREE) {
				assert_int_equal(v.nr_rows, 7);
				expect_row(&v, 3, 2, "B", 4, 7);
			}
			hs_view_release(&v);
		}
		hs_calltree_release(&ct);
	}
	hs_source_release(&src);
}

/*
 * @n samples of random stacks under "main" (up to six frames of a..f,
 * from the xorshift state *@rng), the i-th at @step * i ms, lasting
 * @extra plus up to @spread - 1 ms.
 */
static void add_random_stacks(struct hs_stack_source *src, uint64_t *rng, size_t n, double step,
			      unsigned spread, double extra)
{
	static const char *const names[] = {"a", "b", "c", "d", "e", "f"};
	uint64_t x = *rng;
	size_t i;

	for (i = 0; i < n; i++) {
		char stack[64] = "main";
		size_t depth, d, len = 4;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		depth = x % 7;
		for (d = 0; d < depth; d++)
			len += (size_t)snprintf(stack + len, sizeof(stack) - len, ";%s",
						names[(x >> (8 + 3 * d)) % 6]);
		add(src, (double)i * step, (double)((x >> 40) % spread) + extra, 1, stack);
	}
	*rng = x;
}

/*
 * A block of When buckets (hs_calltree_when() with @b0, @nb) gives each of
 * its buckets exactly what the whole histogram gives, bit for bit: from
 * the samples and from the nodes' histograms, for both kinds of maps
 * (a slot per node with a forest of slots, weighted entries), time
 * metrics spread over several buckets and plain ones.
 */
static void when_blocks_are_exact(void **state)
{
	struct hs_stack_source src;
	uint64_t rng = 88172645463325252ull;
	int kind, hist, form;

	(void)state;
	for (kind = 0; kind < 2; kind++) {
		hs_source_init(&src);
		src.kind = kind ? HS_METRIC_TIME : HS_METRIC_PLAIN;
		/* up to 60 ms long: a time metric straddles buckets */
		add_random_stacks(&src, &rng, 3000, 0.7, 60, 0.5);
		for (hist = -1; hist <= 1; hist += 2) {
			struct hs_view_params p = HS_VIEW_PARAMS_INIT;
			struct hs_calltree ct;

			p.node_hist = hist;
			p.fold_pct = 2;
			assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
			assert_true(hist > 0 ? ct.hist != NULL : ct.hist == NULL);
			for (form = 0; form < 2; form++) {
				size_t nr = ct.t.nr, n;
				uint32_t *slot_of = hs_malloc(nr * sizeof(*slot_of));
				uint32_t *parent = hs_malloc(nr * sizeof(*parent));
				uint32_t *off = hs_malloc((nr + 1) * sizeof(*off));
				struct hs_when_ent *ent = hs_malloc(2 * nr * sizeof(*ent));
				struct hs_when_map m = {.nr_slots = nr};
				double *all = hs_malloc(HS_WHEN_BUCKETS * nr * sizeof(*all));
				double *part = hs_malloc(HS_WHEN_BUCKETS * nr * sizeof(*part));
				double root[HS_WHEN_BUCKETS], root2[HS_WHEN_BUCKETS];
				unsigned nb, b0;

				assert_true(slot_of && parent && off && ent && all && part);
				for (n = 0; n < nr; n++) {
					slot_of[n] = (uint32_t)n;
					parent[n] = n ? ct.t.parent[n] : HS_NO_NODE;
					off[n] = (uint32_t)(2 * n);
					ent[2 * n].slot = (uint32_t)n;
					ent[2 * n].w = 1;
					ent[2 * n + 1].slot = 0;
					ent[2 * n + 1].w = 1.0 / 3;
				}
				off[nr] = (uint32_t)(2 * nr);
				if (form == 0) {
					m.slot_of = slot_of;
					m.slot_parent = parent;
				} else {
					m.off = off;
					m.ent = ent;
				}
				assert_int_equal(hs_calltree_when(&ct, &m, 0, HS_WHEN_BUCKETS,
								  all, root),
						 0);
				for (nb = 1; nb < HS_WHEN_BUCKETS; nb *= 2) {
					for (b0 = 0; b0 < HS_WHEN_BUCKETS; b0 += nb) {
						double *with = b0 ? NULL : root2;

						assert_int_equal(hs_calltree_when(&ct, &m, b0, nb,
										  part, with),
								 0);
						assert_memory_equal(part, all + b0 * nr,
								    nb * nr * sizeof(*part));
						if (with)
							assert_memory_equal(root2, root,
									    sizeof(root));
					}
				}
				hs_free(slot_of);
				hs_free(parent);
				hs_free(off);
				hs_free(ent);
				hs_free(all);
				hs_free(part);
			}
			hs_calltree_release(&ct);
		}
		hs_source_release(&src);
	}
}

/*
 * A map with slot chains (hs_when_map.chain: each sample straight to the
 * rows of its slot and of every slot above it) gives each row what the
 * slot forest gives the sum of its slots, with or without per-node
 * histograms and in blocks of buckets.
 */
static void when_chains_are_forest_sums(void **state)
{
	struct hs_stack_source src;
	uint64_t rng = 2463534242ull;
	int hist;

	(void)state;
	hs_source_init(&src);
	src.kind = HS_METRIC_TIME;
	add_random_stacks(&src, &rng, 2000, 0.9, 50, 0.25);
	for (hist = -1; hist <= 1; hist += 2) {
		struct hs_view_params p = HS_VIEW_PARAMS_INIT;
		struct hs_calltree ct;
		size_t nr, n, nr_rows = 4, b;
		uint32_t *slot_of, *parent;
		struct hs_when_link *chain;
		double *slots, *rows, *want, root[HS_WHEN_BUCKETS];
		unsigned nb, b0;

		p.node_hist = hist;
		assert_int_equal(hs_calltree_build(&ct, &src, &p, NULL), 0);
		nr = ct.t.nr;
		slot_of = hs_malloc(nr * sizeof(*slot_of));
		parent = hs_malloc(nr * sizeof(*parent));
		chain = hs_malloc(nr * sizeof(*chain));
		slots = hs_calloc(HS_WHEN_BUCKETS * nr, sizeof(*slots));
		rows = hs_malloc(HS_WHEN_BUCKETS * nr_rows * sizeof(*rows));
		want = hs_calloc(HS_WHEN_BUCKETS * nr_rows, sizeof(*want));
		assert_true(slot_of && parent && chain && slots && rows && want);
		/* every node a slot; odd ones feed no slot of their own */
		for (n = 0; n < nr; n++) {
			slot_of[n] = (uint32_t)n;
			parent[n] = n ? ct.t.parent[n] : HS_NO_NODE;
			chain[n].up = parent[n];
			chain[n].row = (uint32_t)(n % nr_rows);
		}
		{
			struct hs_when_map forest = {
			    .nr_slots = nr, .slot_of = slot_of, .slot_parent = parent};

			assert_int_equal(hs_calltree_when(&ct, &forest, 0,
							  HS_WHEN_BUCKETS, slots, root),
					 0);
		}
		for (b = 0; b < HS_WHEN_BUCKETS; b++)
			for (n = 0; n < nr; n++)
				want[b * nr_rows + chain[n].row] += slots[b * nr + n];
		for (nb = 1; nb <= HS_WHEN_BUCKETS; nb *= 2) {
			struct hs_when_map m = {.nr_slots = nr,
						.slot_of = slot_of,
						.chain = chain,
						.nr_rows = nr_rows};

			for (b0 = 0; b0 < HS_WHEN_BUCKETS; b0 += nb) {
				assert_int_equal(
				    hs_calltree_when(&ct, &m, b0, nb, rows, NULL), 0);
				for (b = 0; b < nb * nr_rows; b++) {
					double w = want[b0 * nr_rows + b];

					assert_true(fabs(rows[b] - w) <=
						    1e-9 * (fabs(w) + 1));
				}
			}
		}
		hs_free(slot_of);
		hs_free(parent);
		hs_free(chain);
		hs_free(slots);
		hs_free(rows);
		hs_free(want);
		hs_calltree_release(&ct);
	}
	hs_source_release(&src);
}

/* Two trees are the same node for node: costs, links, flags, When and Fold%. */
static void assert_same_tree(const struct hs_calltree *a, const struct hs_calltree *b)
{
	size_t nr = a->t.nr;
	double ta[2], tb[2];

	assert_int_equal(nr, b->t.nr);
	assert_memory_equal(a->t.frame, b->t.frame, nr * sizeof(*a->t.frame));
	assert_memory_equal(a->t.parent, b->t.parent, nr * sizeof(*a->t.parent));
	assert_memory_equal(a->t.exc, b->t.exc, nr * sizeof(*a->t.exc));
	assert_memory_equal(a->t.inc, b->t.inc, nr * sizeof(*a->t.inc));
	assert_memory_equal(a->t.flags, b->t.flags, nr * sizeof(*a->t.flags));
	assert_memory_equal(a->t.child_off, b->t.child_off, (nr + 1) * sizeof(uint32_t));
	assert_memory_equal(a->t.child, b->t.child, a->t.child_off[nr] * sizeof(uint32_t));
	assert_memory_equal(a->rep, b->rep, nr * sizeof(*a->rep));
	assert_true((a->hist == NULL) == (b->hist == NULL));
	if (a->hist)
		assert_memory_equal(a->hist, b->hist,
				    nr * HS_WHEN_BUCKETS * sizeof(*a->hist));
	assert_memory_equal(a->root_hist, b->root_hist, sizeof(a->root_hist));
	hs_calltree_when_bounds(a, &ta[0], &ta[1]);
	hs_calltree_when_bounds(b, &tb[0], &tb[1]);
	assert_memory_equal(ta, tb, sizeof(ta));
	assert_int_equal(a->nr_samples, b->nr_samples);
	assert_int_equal(a->nr_folded, b->nr_folded);
	assert_true(a->fold_threshold == b->fold_threshold);
	assert_int_equal(hs_filtered_nr_stacks(&a->f), hs_filtered_nr_stacks(&b->f));
	assert_int_equal(hs_source_nr_frames(&a->f.out), hs_source_nr_frames(&b->f.out));
}

/*
 * A tree built on a shared filter result (hs_calltree_build_on()) is the
 * tree hs_calltree_build() makes, for every window and Fold% of the
 * patterns it was filtered with; the result outlives the trees on it.
 */
static void trees_share_a_filter_result(void **state)
{
	static const char *const names[] = {"m!a", "m!b", "n!c", "n!d", "m!e"};
	static const char *const groups[] = {NULL, "{%}!->module $1", "n!%=>n"};
	static const char *const incs[] = {NULL, "m!b"};
	static const double windows[][2] = {{NAN, NAN}, {100, 900}, {NAN, 400}};
	static const double folds[] = {NAN, 5};
	struct hs_stack_source src;
	uint64_t rng = 88172645463325252ull;
	size_t i, g, n, w, f, kind;

	(void)state;
	for (kind = 0; kind < 2; kind++) {
		hs_source_init(&src);
		src.kind = kind ? HS_METRIC_TIME : HS_METRIC_PLAIN;
		for (i = 0; i < 2000; i++) {
			char stack[96] = "main";
			size_t depth, d, len = 4;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			depth = rng % 8;
			for (d = 0; d < depth; d++)
				len += (size_t)snprintf(stack + len, sizeof(stack) - len, ";%s",
							names[(rng >> (8 + 3 * d)) % 5]);
			add(&src, (double)i * 0.5, (double)((rng >> 40) % 20) + 0.5, 1, stack);
		}
		for (g = 0; g < 3; g++)
			for (n = 0; n < 2; n++) {
				struct hs_view_params fp = HS_VIEW_PARAMS_INIT;
				struct hs_filtered shared;
				struct hs_calltree on[3 * 2];

				fp.filter.group = groups[g];
				fp.filter.inc = incs[n];
				/* the window it is filtered with makes no difference */
				fp.filter.start_ms = 300;
				assert_int_equal(hs_calltree_filter(&src, &fp, &shared, NULL), 0);
				for (w = 0; w < 3; w++)
					for (f = 0; f < 2; f++) {
						struct hs_view_params p = fp;
						struct hs_calltree alone;

						p.filter.start_ms = windows[w][0];
						p.filter.end_ms = windows[w][1];
						p.fold_pct = folds[f];
						assert_int_equal(
						    hs_calltree_build(&alone, &src, &p, NULL), 0);
						assert_int_equal(
						    hs_calltree_build_on(&on[2 * w + f], &shared, &p),
						    0);
						assert_true(on[2 * w + f].f.borrowed);
						assert_same_tree(&alone, &on[2 * w + f]);
						hs_calltree_release(&alone);
					}
				/* releasing a tree leaves the result, and the others, whole */
				for (i = 0; i < 6; i++) {
					if (i + 1 < 6)
						assert_int_equal(hs_filtered_nr_stacks(&on[i + 1].f),
								 hs_filtered_nr_stacks(&shared));
					hs_calltree_release(&on[i]);
				}
				hs_filtered_release(&shared);
			}
		hs_source_release(&src);
	}
}

/* The rows of @a and @b (every view kind that has no focus) are the same. */
static void assert_same_views(const struct hs_calltree *a, const struct hs_calltree *b)
{
	static const enum hs_view_kind kinds[] = {HS_VIEW_BYNAME, HS_VIEW_CALLTREE,
						  HS_VIEW_FLAME};
	size_t k, r;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct hs_view_opts o = {.kind = kinds[k]};
		struct hs_view va, vb;

		assert_int_equal(hs_view_build(&va, a, &o), 0);
		assert_int_equal(hs_view_build(&vb, b, &o), 0);
		assert_int_equal(va.nr_rows, vb.nr_rows);
		for (r = 0; r < va.nr_rows; r++) {
			const struct hs_view_row *x = &va.rows[r], *y = &vb.rows[r];

			assert_string_equal(x->name, y->name);
			assert_int_equal(x->parent, y->parent);
			assert_true(x->exc == y->exc && x->inc == y->inc &&
				    x->exc_count == y->exc_count &&
				    x->inc_count == y->inc_count && x->fold == y->fold &&
				    x->x == y->x && x->width == y->width);
			assert_true(x->first == y->first && x->last == y->last);
			assert_string_equal(x->when, y->when);
		}
		hs_view_release(&va);
		hs_view_release(&vb);
	}
}

/*
 * When IncPats, ExcPats or the window leave most stacks without a sample,
 * only the others get nodes (node_of), in the same order: the tree is the
 * full one's present part, node for node, its views row for row, and it
 * takes less memory. Patterns that drop nothing keep a node per stack.
 */
static void trees_leave_out_stacks_without_samples(void **state)
{
	static const char *const incs[] = {NULL, "e", "f"};
	static const char *const excs[] = {NULL, "a"};
	static const double windows[][2] = {{NAN, NAN}, {100, 140}};
	struct hs_stack_source src;
	uint64_t rng = 88172645463325252ull;
	size_t i, w, compacted = 0;

	(void)state;
	hs_source_init(&src);
	src.kind = HS_METRIC_TIME;
	add_random_stacks(&src, &rng, 3000, 0.25, 4, 0.5);
	for (i = 0; i < 3 * 2 * 2 * 2; i++) {
		struct hs_view_params p = HS_VIEW_PARAMS_INIT, all;
		struct hs_calltree full, part;
		uint32_t s;

		p.filter.inc = incs[i % 3];
		p.filter.exc = excs[i / 3 % 2];
		w = i / 6 % 2;
		p.filter.start_ms = windows[w][0];
		p.filter.end_ms = windows[w][1];
		p.fold_pct = i / 12 ? 2 : NAN;
		p.node_hist = i % 2 ? -1 : 0; /* When from the samples, or the nodes' */
		all = p;
		all.all_nodes = 1;
		assert_int_equal(hs_calltree_build(&full, &src, &all, NULL), 0);
		assert_int_equal(hs_calltree_build(&part, &src, &p, NULL), 0);
		assert_null(full.node_of);
		if (!p.filter.inc && !p.filter.exc && !w)
			assert_null(part.node_of);
		if (!part.node_of) {
			assert_same_tree(&full, &part);
			goto next;
		}
		compacted++;
		assert_true(part.t.nr < full.t.nr);
		assert_true(hs_calltree_memory(&part) < hs_calltree_memory(&full));
		for (s = 0; s < hs_filtered_nr_stacks(&full.f); s++) {
			uint32_t n = hs_calltree_stack_node(&part, s), m = s + 1;

			if (n == HS_NO_NODE) {
				assert_false(full.t.flags[m] & HS_NODE_PRESENT);
				continue;
			}
			assert_int_equal(part.t.frame[n], full.t.frame[m]);
			assert_int_equal(part.t.flags[n], full.t.flags[m]);
			assert_memory_equal(&part.t.exc[n], &full.t.exc[m],
					    sizeof(*full.t.exc));
			assert_memory_equal(&part.t.inc[n], &full.t.inc[m],
					    sizeof(*full.t.inc));
			assert_int_equal(
			    part.t.parent[n],
			    hs_calltree_stack_node(
				&part, hs_filtered_stack_caller(&full.f, s)));
		}
		assert_memory_equal(part.root_hist, full.root_hist, sizeof(full.root_hist));
		assert_int_equal(part.nr_samples, full.nr_samples);
		assert_int_equal(part.nr_folded, full.nr_folded);
	next:
		assert_same_views(&full, &part);
		hs_calltree_release(&full);
		hs_calltree_release(&part);
	}
	assert_true(compacted >= 8);
	hs_source_release(&src);
}

/* The same when the shared result is the identity (no stack changed). */
static void trees_share_an_identity_result(void **state)
{
	struct hs_stack_source src;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_filtered shared;
	struct hs_calltree alone, on;
	size_t w;

	(void)state;
	hs_source_init(&src);
	add(&src, 0, 4, 1, "main;a;b");
	add(&src, 10, 3, 1, "main;c");
	add(&src, 20, 2, 1, "main;a");
	add(&src, 30, 1, 1, "main;a;b;d");
	assert_int_equal(hs_calltree_filter(&src, &p, &shared, NULL), 0);
	assert_true(shared.identity);
	for (w = 0; w < 3; w++) {
		p.filter.start_ms = w == 1 ? 15 : NAN;
		p.filter.end_ms = w == 2 ? 25 : NAN;
		p.fold_pct = w == 2 ? 30 : NAN;
		assert_int_equal(hs_calltree_build(&alone, &src, &p, NULL), 0);
		assert_int_equal(hs_calltree_build_on(&on, &shared, &p), 0);
		assert_true(on.f.identity && on.f.borrowed);
		assert_same_tree(&alone, &on);
		hs_calltree_release(&alone);
		hs_calltree_release(&on);
	}
	hs_filtered_release(&shared);
	hs_source_release(&src);
}

/* Every failed allocation is reported and leaks nothing. */
static void out_of_memory(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	long n;
	int done = 0;

	(void)state;
	recursion_source(&src);
	p.fold_pct = 10;
	for (n = 0; !done && n < 1000; n++) {
		int err;

		hs_alloc_fail_after(n);
		err = hs_calltree_build(&ct, &src, &p, NULL);
		hs_alloc_fail_after(-1);
		if (!err) {
			enum hs_view_kind k;
			int all = 1;

			for (k = 0; k < HS_VIEW__COUNT; k++) {
				struct hs_view_opts o = { .kind = k, .focus = "B" };
				struct hs_view v;

				hs_alloc_fail_after(n);
				err = hs_view_build(&v, &ct, &o);
				hs_alloc_fail_after(-1);
				assert_true(err == 0 || err == -ENOMEM);
				if (!err)
					hs_view_release(&v);
				all &= err == 0;
			}
			done = all;
			hs_calltree_release(&ct);
		} else {
			assert_int_equal(err, -ENOMEM);
		}
	}
	assert_true(done);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recursion_tree),
		cmocka_unit_test(tree_rows_to_nodes),
		cmocka_unit_test(children_ties_sort_by_first),
		cmocka_unit_test(fold_pct_thresholds),
		cmocka_unit_test(fold_pct_byname_guard),
		cmocka_unit_test(fold_pct_broken_root_and_negative_total),
		cmocka_unit_test(fold_pct_negative_metrics),
		cmocka_unit_test(stackless_samples_go_to_root),
		cmocka_unit_test(time_window_prorates_time_metrics),
		cmocka_unit_test(summary_line),
		cmocka_unit_test(untimed_source_has_no_when),
		cmocka_unit_test(when_blocks_are_exact),
		cmocka_unit_test(when_chains_are_forest_sums),
		cmocka_unit_test(trees_share_a_filter_result),
		cmocka_unit_test(trees_share_an_identity_result),
		cmocka_unit_test(trees_leave_out_stacks_without_samples),
		cmocka_unit_test(out_of_memory),
	};
	return cmocka_run_group_tests_name("calltree", tests, NULL, NULL);
}
