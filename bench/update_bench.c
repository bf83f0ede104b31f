/*
 * update_bench - the analysis side of a stack-viewer Update on a perf
 * script, without the server: for each setting of bench/gui/run.sh
 * (no Fold%, Fold% 1, IncPats, a time range, GroupPats by module, back
 * to the first), then the pattern Updates of bench/gui/bench.mjs
 * (IncPats and ExcPats without Fold%: steps 6 and 7), the call tree
 * (filter, pass over the samples, sums, Fold%), ByName and CallTree in
 * parts, and the rows of a first screen of each with When. Prints each
 * step's CPU and wall seconds (the best of ROUNDS each; a pass over the
 * samples may use two threads).
 *
 * As in the server's cache, the filter's result is shared by the steps
 * of a round with the same patterns (Fold% and the time range do not
 * change it): a step with the patterns of an earlier one builds only its
 * call tree on that result (hs_calltree_build_on()).
 *
 *	build/bench/update_bench FILE [ROUNDS [STEPS]]	# default 3, all
 *
 * STEPS, a list of step numbers from 0 ("0,4"), runs those steps only
 * (for `perf record` of one of them); a step still shares the filter
 * result of the first listed step with its patterns. With UB_MARKS set
 * in the environment, each step prints "MARK step start,end" to stderr
 * in CLOCK_MONOTONIC seconds: `perf record -k CLOCK_MONOTONIC` then
 * `perf report --time start,end` shows that step alone. With UB_PHASES
 * set, each step prints the wall seconds of its phases to stderr.
 *
 * Owns everything it makes; frees each step's results before the next,
 * and the round's filter results at its end.
 */
#include "analysis/calltree.h"
#include "analysis/view_part.h"
#include "analysis/views.h"
#include "io/io.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct setting {
	const char *label, *group, *inc, *exc;
	double fold_pct, start_ms, end_ms;
};

static const struct setting settings[] = {
    {"first (no Fold%)", NULL, NULL, NULL, NAN, NAN, NAN},
    {"Fold% 1", NULL, NULL, NULL, 1, NAN, NAN},
    {"Fold% 1 + IncPats", NULL, "libBuffer2", NULL, 1, NAN, NAN},
    {"Fold% 1 + a time range", NULL, NULL, NULL, 1, 1000, 2000},
    {"GroupPats by module", "{%}!->module $1", NULL, NULL, NAN, NAN, NAN},
    {"back to the first", NULL, NULL, NULL, NAN, NAN, NAN},
    /* bench.mjs's: its IncPats is ByName's top row (`unknown!unknown`,
     * about 8% of the samples), its ExcPats the second (0.1%) */
    {"IncPats (no Fold%)", NULL, "unknown", NULL, NAN, NAN, NAN},
    {"ExcPats (no Fold%)", NULL, NULL, "kernel.kallsyms!flush_update_k835", NAN, NAN,
     NAN},
};
#define NR_SETTINGS (sizeof(settings) / sizeof(settings[0]))

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
#define cpu_now() now(CLOCK_PROCESS_CPUTIME_ID)
#define wall_now() now(CLOCK_MONOTONIC)

/* The first @n rows of @p (the skeleton's or a page's), When included. */
static int first_rows(const struct hs_view_parts *p, size_t n)
{
	uint32_t ids[200];
	struct hs_view v;
	size_t i;
	int err;

	if (n > p->nr_rows)
		n = p->nr_rows;
	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)i;
	err = hs_view_part(p, ids, n, 0, &v);
	if (!err)
		hs_view_release(&v);
	return err;
}

static int run_step[NR_SETTINGS];

/*
 * With UB_PHASES set: the wall seconds of each phase of a step (filter,
 * call tree, ByName parts, CallTree parts, the first rows), to stderr.
 */
static double phase_t0;
static void phase(const char *what)
{
	double t = wall_now();

	if (what && getenv("UB_PHASES"))
		fprintf(stderr, " %s %.3f", what, t - phase_t0);
	phase_t0 = t;
}

/* The steps to run: @list ("0,4"), or every one when NULL. 0 or -1. */
static int parse_steps(const char *list)
{
	size_t k;

	for (k = 0; k < NR_SETTINGS; k++)
		run_step[k] = !list;
	while (list && *list) {
		char *end;
		unsigned long v = strtoul(list, &end, 10);

		if (end == list || v >= NR_SETTINGS || (*end && *end != ','))
			return -1;
		run_step[v] = 1;
		list = *end ? end + 1 : end;
	}
	return 0;
}

static int same_text(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/*
 * Step @k of a round: its call tree on the filter result of the first
 * step with its patterns (built into filters[] when @k is that step).
 */
static int one_update(const struct hs_stack_source *src, size_t k,
		      struct hs_filtered *filters, int *built)
{
	const struct setting *s = &settings[k];
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("update_bench");
	struct hs_view_parts byname, tree;
	struct hs_calltree ct;
	size_t j;
	int err;

	p.filter.group = s->group;
	p.filter.inc = s->inc;
	p.filter.exc = s->exc;
	p.filter.start_ms = s->start_ms;
	p.filter.end_ms = s->end_ms;
	p.fold_pct = s->fold_pct;
	for (j = 0; j < k; j++)
		if (run_step[j] && same_text(settings[j].group, s->group) &&
		    same_text(settings[j].inc, s->inc) &&
		    same_text(settings[j].exc, s->exc))
			break;
	phase(NULL);
	if (j == k) {
		err = hs_calltree_filter(src, &p, &filters[k], &diag);
		if (err)
			return err;
		built[k] = 1;
		phase("filter");
	}
	err = hs_calltree_build_on(&ct, &filters[j], &p);
	if (err)
		return err;
	phase("tree");
	err = hs_view_parts_build(&byname, &ct, HS_VIEW_BYNAME);
	if (!err) {
		phase("byname");
		err = hs_view_parts_build(&tree, &ct, HS_VIEW_CALLTREE);
		if (!err) {
			phase("calltree");
			err = first_rows(&byname, 200);
			if (!err)
				err = first_rows(&tree, 200);
			phase("rows");
			hs_view_parts_release(&tree);
		}
		hs_view_parts_release(&byname);
	}
	hs_calltree_release(&ct);
	phase("release");
	if (getenv("UB_PHASES"))
		fprintf(stderr, " (step %zu)\n", k);
	return err;
}

int main(int argc, char **argv)
{
	struct hs_diag diag = HS_DIAG_INIT("update_bench");
	struct hs_stack_source src;
	struct hs_filtered filters[NR_SETTINGS];
	int built[NR_SETTINGS];
	double best[NR_SETTINGS], best_wall[NR_SETTINGS], t0, w0;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, r;
	size_t k;

	if (argc < 2 || rounds < 1 || parse_steps(argc > 3 ? argv[3] : NULL)) {
		fprintf(stderr, "usage: update_bench FILE [ROUNDS [STEPS]]\n");
		return 2;
	}
	hs_source_init(&src);
	t0 = cpu_now();
	if (hs_import_path(argv[1], HS_FORMAT_UNKNOWN, &src, &diag)) {
		fprintf(stderr, "update_bench: cannot read %s\n", argv[1]);
		return 1;
	}
	printf("import: %.2f s CPU, %zu samples, %zu stacks\n", cpu_now() - t0,
	       src.nr_samples, src.nr_stacks);
	for (k = 0; k < NR_SETTINGS; k++)
		best[k] = best_wall[k] = INFINITY;
	for (r = 0; r < rounds; r++) {
		memset(built, 0, sizeof(built));
		for (k = 0; k < NR_SETTINGS; k++) {
			if (!run_step[k])
				continue;
			t0 = cpu_now();
			w0 = wall_now();
			if (one_update(&src, k, filters, built)) {
				fprintf(stderr, "update_bench: %s failed\n",
					settings[k].label);
				return 1;
			}
			t0 = cpu_now() - t0;
			if (getenv("UB_MARKS"))
				fprintf(stderr, "MARK %zu %.6f,%.6f\n", k, w0,
					wall_now());
			w0 = wall_now() - w0;
			if (t0 < best[k])
				best[k] = t0;
			if (w0 < best_wall[k])
				best_wall[k] = w0;
		}
		for (k = 0; k < NR_SETTINGS; k++)
			if (built[k])
				hs_filtered_release(&filters[k]);
	}
	for (k = 0; k < NR_SETTINGS; k++)
		if (run_step[k])
			printf("%-24s %.3f s CPU %.3f s wall\n", settings[k].label,
			       best[k], best_wall[k]);
	hs_source_release(&src);
	return 0;
}
