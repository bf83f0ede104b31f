/*
 * filter_bench - time one stack-viewer recompute: hs_filter_apply() plus
 * one hs_filtered_sample() pass over every sample, on a generated source.
 *
 *   filter_bench [SAMPLES [STACKS [FUNCS]]]   (default 10000000 200000 100)
 *
 * The source: one process, 16 threads, 200 modules of FUNCS functions
 * (20,000 frame names by default, under /usr/lib and /opt/app), stacks
 * grown as a random call tree up to 48 frames deep, samples spread over
 * the stacks with a skew towards a hot tenth, 1 ms apart, TimeMetric.
 * Each setting is run three times; the best time is printed.
 */
#include "analysis/filter.h"
#include "gen_source.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t nr_funcs = 100;
#define NR_THREADS 16

struct setting {
	const char *what;
	struct hs_filter_params p;
};

static void run(const struct hs_stack_source *src, const struct setting *st)
{
	double best_apply = 1e9, best_pass = 1e9, total = 0;
	size_t kept = 0, out_stacks = 0;
	int rep;

	for (rep = 0; rep < 3; rep++) {
		struct hs_diag d = HS_DIAG_INIT("bench");
		struct hs_filtered f;
		double t0, t1, t2, sum = 0;
		size_t i, n = 0;
		int err;

		t0 = bench_now();
		err = hs_filter_apply(src, &st->p, &f, &d);
		if (err) {
			fprintf(stderr, "filter_bench: %s: %s\n", st->what, d.msg);
			exit(1);
		}
		t1 = bench_now();
		for (i = 0; i < src->nr_samples; i++) {
			uint32_t s;
			double m, c;

			if (hs_filtered_sample(&f, i, &s, &m, &c)) {
				sum += m;
				n++;
			}
		}
		t2 = bench_now();
		if (t1 - t0 < best_apply)
			best_apply = t1 - t0;
		if (t2 - t1 < best_pass)
			best_pass = t2 - t1;
		total = sum;
		kept = n;
		out_stacks = f.out.nr_stacks;
		hs_filtered_release(&f);
	}
	printf("%-44s apply %7.1f ms  pass %7.1f ms  total %7.1f ms  "
	       "(%zu samples kept, metric %.0f, %zu output stacks)\n",
	       st->what, best_apply * 1e3, best_pass * 1e3,
	       (best_apply + best_pass) * 1e3, kept, total, out_stacks);
}

int main(int argc, char **argv)
{
	size_t nr_samples = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	size_t nr_stacks = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
	struct hs_stack_source src;
	struct setting st[] = {
		{ "no patterns", HS_FILTER_PARAMS_INIT },
		{ "module entries + fold + inc", HS_FILTER_PARAMS_INIT },
		{ "group modules + fold + inc + exc", HS_FILTER_PARAMS_INIT },
		{ "class entries + 2 fold + 2 inc + window", HS_FILTER_PARAMS_INIT },
	};
	double t0;
	size_t i;

	st[1].p.group = "[group module entries] {%}!=>module $1";
	st[1].p.fold = "module libmod1%.so";
	st[1].p.inc = "Process% app";
	st[2].p.group = "[group modules] {%}!->module $1";
	st[2].p.fold = "^module libmod1%.so$|libmod7";
	st[2].p.inc = "Process% app";
	st[2].p.exc = "module libmod199.so";
	st[3].p.group = "[group class entries] {%!*}.%(=>class $1;{%!*}::=>class $1";
	st[3].p.fold = "mod3%_fn1;^Thread";
	st[3].p.inc = "Process% app;mod|Worker";
	st[3].p.start_ms = 1000;
	st[3].p.end_ms = (double)nr_samples * 0.9;
	if (argc > 3 && strtoull(argv[3], NULL, 10) >= 2)
		nr_funcs = strtoull(argv[3], NULL, 10);
	if (nr_stacks < 2 * NR_THREADS)
		nr_stacks = 2 * NR_THREADS;
	hs_source_init(&src);
	t0 = bench_now();
	bench_generate(&src, nr_samples, nr_stacks, nr_funcs);
	printf("source: %zu samples, %zu stacks, %zu frames (generated in %.1f s)\n",
	       src.nr_samples, src.nr_stacks, hs_source_nr_frames(&src), bench_now() - t0);
	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		run(&src, &st[i]);
	hs_source_release(&src);
	return 0;
}
