#ifndef HS_BENCH_GEN_SOURCE_H
#define HS_BENCH_GEN_SOURCE_H
#include <stddef.h>
#include "model/stack_source.h"

/*
 * gen_source - the generated stack source the stack-viewer benchmarks
 * share (filter_bench, views_bench): one process, 16 threads, 200 modules
 * of @nr_funcs functions (20,000 frame names by default, under /usr/lib
 * and /opt/app), stacks grown as a random call tree up to 48 frames deep
 * until there are @nr_stacks, then @nr_samples samples spread over the
 * stacks with a skew towards a hot tenth, 1 ms apart, TimeMetric, metric
 * 1 ms each. Deterministic: the same arguments give the same source.
 * Exits the program on failure.
 */
void bench_generate(struct hs_stack_source *src, size_t nr_samples, size_t nr_stacks,
		    size_t nr_funcs);
/* Seconds from a monotonic clock. */
double bench_now(void);
#endif
