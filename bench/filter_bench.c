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
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NR_MODULES 200
static size_t nr_funcs = 100;
#define NR_THREADS 16
#define MAX_DEPTH 48

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "filter_bench: %s failed (%d)\n", what, err);
	exit(1);
}

static uint32_t frame(struct hs_stack_source *src, const char *name)
{
	uint32_t id;
	int err = hs_source_intern_frame(src, name, strlen(name), &id);

	if (err)
		die("intern frame", err);
	return id;
}

static void generate(struct hs_stack_source *src, size_t nr_samples,
		     size_t nr_stacks)
{
	uint32_t *fn = malloc(NR_MODULES * nr_funcs * sizeof(*fn));
	uint32_t process, s;
	char name[128];
	size_t i, m, f;
	int err;

	if (!fn)
		die("malloc", -1);
	src->kind = HS_METRIC_TIME;
	process = frame(src, "Process app (4242)");
	for (m = 0; m < NR_MODULES; m++)
		for (f = 0; f < nr_funcs; f++) {
			if (m == 0)
				snprintf(name, sizeof(name),
					 "/opt/app/bin/app!app::Worker::step%zu(int)", f);
			else if (f == nr_funcs - 1)
				snprintf(name, sizeof(name), "/usr/lib/libmod%zu.so!?", m);
			else
				snprintf(name, sizeof(name),
					 "/usr/lib/libmod%zu.so!mod%zu_fn%zu", m, m, f);
			fn[m * nr_funcs + f] = frame(src, name);
		}
	err = hs_source_intern_stack(src, process, HS_NO_STACK, &s);
	for (i = 0; i < NR_THREADS && !err; i++) {
		snprintf(name, sizeof(name), "Thread (%zu) worker", 4242 + i);
		err = hs_source_intern_stack(src, frame(src, name), s, &(uint32_t){ 0 });
	}
	/* grow a random call tree: extend a random stack by one frame;
	 * callees stay in the caller's module half of the time */
	while (!err && src->nr_stacks < nr_stacks) {
		uint32_t parent = 1 + rnd((uint32_t)src->nr_stacks - 1);
		uint32_t pf = src->stack_frame[parent], callee;

		if (src->stack_depth[parent] >= MAX_DEPTH)
			continue;
		if (rnd(2) && pf >= fn[0] && pf - fn[0] < NR_MODULES * nr_funcs)
			m = (pf - fn[0]) / nr_funcs;
		else
			m = rnd(NR_MODULES);
		callee = fn[m * nr_funcs + rnd(nr_funcs)];
		err = hs_source_intern_stack(src, callee, parent, &s);
	}
	if (!err)
		err = hs_source_reserve_samples(src, nr_samples);
	for (i = 0; i < nr_samples && !err; i++) {
		uint32_t n = (uint32_t)src->nr_stacks;
		uint32_t st = rnd(4) ? n - 1 - rnd(n / 10) : rnd(n);

		err = hs_source_add_sample(src, (int64_t)i * 1000000, 1.0, 1, st);
	}
	if (err)
		die("generate", err);
	free(fn);
}

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

		t0 = now();
		err = hs_filter_apply(src, &st->p, &f, &d);
		if (err) {
			fprintf(stderr, "filter_bench: %s: %s\n", st->what, d.msg);
			exit(1);
		}
		t1 = now();
		for (i = 0; i < src->nr_samples; i++) {
			uint32_t s;
			double m, c;

			if (hs_filtered_sample(&f, i, &s, &m, &c)) {
				sum += m;
				n++;
			}
		}
		t2 = now();
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
		{ "group modules (regex) + fold + inc + exc", HS_FILTER_PARAMS_INIT },
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
	t0 = now();
	generate(&src, nr_samples, nr_stacks);
	printf("source: %zu samples, %zu stacks, %zu frames (generated in %.1f s)\n",
	       src.nr_samples, src.nr_stacks, hs_source_nr_frames(&src), now() - t0);
	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		run(&src, &st[i]);
	hs_source_release(&src);
	return 0;
}
