/*
 * views_bench - time the stack viewer's recompute and each view on a
 * generated source (gen_source.h).
 *
 *   views_bench [SAMPLES [STACKS]]   (default 10000000 200000)
 *
 * For each setting (GroupPats, FoldPats, Fold%, time window) it times
 * hs_calltree_build() (the filter, the one pass over the samples, the
 * inclusive sums and Fold%), then hs_view_build() of every view with all
 * rows and the When column (one more pass over the samples), the focus
 * views on the heaviest name. Each is run three times; the best time is
 * printed.
 */
#include "analysis/calltree.h"
#include "analysis/views.h"
#include "gen_source.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define REPEAT 3

struct setting {
	const char *what;
	struct hs_view_params p;
};

/* CPU seconds of this process: on a busy machine, closer to an idle wall time. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "views_bench: %s failed (%d)\n", what, err);
	exit(1);
}

/* Wall time of a build; its CPU time in *@cpu. */
static double build(const struct hs_stack_source *src, const struct hs_view_params *p,
		    struct hs_calltree *ct, double *cpu)
{
	struct hs_diag d = HS_DIAG_INIT("bench");
	double t0 = bench_now(), c0 = cpu_now();
	int err = hs_calltree_build(ct, src, p, &d);

	if (err) {
		fprintf(stderr, "views_bench: %s\n", d.msg);
		die("hs_calltree_build", err);
	}
	*cpu = cpu_now() - c0;
	return bench_now() - t0;
}

static double view(const struct hs_calltree *ct, enum hs_view_kind kind, const char *focus,
		   size_t *rows, double *cpu)
{
	struct hs_view_opts o = { .kind = kind, .focus = focus };
	struct hs_view v;
	double t0 = bench_now(), c0 = cpu_now(), t;
	int err = hs_view_build(&v, ct, &o);

	if (err)
		die("hs_view_build", err);
	t = bench_now() - t0;
	*cpu = cpu_now() - c0;
	*rows = v.nr_rows;
	hs_view_release(&v);
	return t;
}

/* The heaviest name but ROOT: the focus of the focus views. */
static char *heaviest(const struct hs_calltree *ct)
{
	struct hs_view_opts o = { .kind = HS_VIEW_BYNAME, .no_when = 1 };
	struct hs_view v;
	char *name = NULL;
	double best = -1;
	size_t i;

	if (hs_view_build(&v, ct, &o))
		die("byname", -1);
	for (i = 0; i < v.nr_rows; i++)
		if (strcmp(v.rows[i].name, "ROOT") && fabs(v.rows[i].inc) > best &&
		    fabs(v.rows[i].inc) < fabs(v.sum.metric)) {
			best = fabs(v.rows[i].inc);
			free(name);
			name = strdup(v.rows[i].name);
		}
	hs_view_release(&v);
	return name;
}

static void run(const struct hs_stack_source *src, const struct setting *st)
{
	double best_build = 1e9, best_view[HS_VIEW__COUNT];
	double cpu_build = 1e9, cpu_view[HS_VIEW__COUNT], cpu;
	size_t rows[HS_VIEW__COUNT], nodes = 0, alive = 0, folded = 0, n;
	char *focus = NULL;
	int rep, k;

	for (k = 0; k < HS_VIEW__COUNT; k++)
		best_view[k] = cpu_view[k] = 1e9;
	for (rep = 0; rep < REPEAT; rep++) {
		struct hs_calltree ct;
		double t = build(src, &st->p, &ct, &cpu);

		if (t < best_build)
			best_build = t;
		if (cpu < cpu_build)
			cpu_build = cpu;
		if (!focus)
			focus = heaviest(&ct);
		nodes = ct.t.nr;
		folded = ct.nr_folded;
		for (alive = 0, n = 0; n < ct.t.nr; n++)
			alive += !!(ct.t.flags[n] & HS_NODE_ALIVE);
		for (k = 0; k < HS_VIEW__COUNT; k++) {
			t = view(&ct, (enum hs_view_kind)k, focus, &rows[k], &cpu);
			if (t < best_view[k])
				best_view[k] = t;
			if (cpu < cpu_view[k])
				cpu_view[k] = cpu;
		}
		hs_calltree_release(&ct);
	}
	printf("== %s\n", st->what);
	printf("   tree: %zu nodes, %zu shown, %zu folded by Fold%%; focus '%s'\n", nodes,
	       alive, folded, focus);
	printf("   %-40s %7.1f ms wall %7.1f ms CPU\n", "recompute (filter + call tree + Fold%)",
	       best_build * 1e3, cpu_build * 1e3);
	for (k = 0; k < HS_VIEW__COUNT; k++)
		printf("   + %-13s %7.1f ms wall %7.1f ms CPU; with the recompute %7.1f ms wall"
		       " %7.1f ms CPU (%zu rows)\n",
		       hs_view_kind_name((enum hs_view_kind)k), best_view[k] * 1e3,
		       cpu_view[k] * 1e3, (best_build + best_view[k]) * 1e3,
		       (cpu_build + cpu_view[k]) * 1e3, rows[k]);
	free(focus);
}

int main(int argc, char **argv)
{
	size_t nr_samples = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	size_t nr_stacks = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
	struct hs_stack_source src;
	struct setting st[] = {
		{ "no patterns", HS_VIEW_PARAMS_INIT },
		{ "module entries + fold + Fold% 1", HS_VIEW_PARAMS_INIT },
		{ "group modules + fold + Fold% 0.5 + window", HS_VIEW_PARAMS_INIT },
	};
	struct rusage ru;
	double t0;
	size_t i;

	st[1].p.filter.group = "[group module entries] {%}!=>module $1";
	st[1].p.filter.fold = "module libmod1%.so";
	st[1].p.fold_pct = 1;
	st[2].p.filter.group = "[group modules] {%}!->module $1";
	st[2].p.filter.fold = "^module libmod1%.so$|libmod7";
	st[2].p.fold_pct = 0.5;
	st[2].p.filter.start_ms = 1000;
	st[2].p.filter.end_ms = (double)nr_samples * 0.9;
	if (nr_stacks < 64)
		nr_stacks = 64;
	hs_source_init(&src);
	t0 = bench_now();
	bench_generate(&src, nr_samples, nr_stacks, 100);
	printf("source: %zu samples, %zu stacks, %zu frames (built in %.2f s, %.0f MB)\n",
	       src.nr_samples, src.nr_stacks, hs_source_nr_frames(&src), bench_now() - t0,
	       (double)hs_source_memory(&src) / 1e6);
	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		run(&src, &st[i]);
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS: %.0f MB\n", (double)ru.ru_maxrss / 1e3);
	hs_source_release(&src);
	return 0;
}
