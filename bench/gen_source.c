/*
 * gen_source - the benchmarks' generated stack source (see gen_source.h).
 */
#include "gen_source.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NR_MODULES 200
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

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench: generating the source: %s failed (%d)\n", what, err);
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

void bench_generate(struct hs_stack_source *src, size_t nr_samples, size_t nr_stacks,
		    size_t nr_funcs)
{
	uint32_t *fn = malloc(NR_MODULES * nr_funcs * sizeof(*fn));
	uint32_t process, s;
	char name[128];
	size_t i, m, f;
	int err;

	rng = 0x9e3779b97f4a7c15ull;
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

