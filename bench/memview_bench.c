/*
 * memview_bench - read a heapscope trace and build one memory view, timed.
 *
 *   memview_bench TRACE [VIEW [RUNS [MODE]]]   (net, 3, both)
 *
 * MODE "path" times hs_memview_build_path only, "load" the loading
 * only, "both" both.
 *
 * Prints, for the run of RUNS with the least CPU time, the wall and CPU
 * seconds of:
 *   - the way front ends read a view (hs_memview_build_path: the events
 *     streamed from the file when it allows, else loaded);
 *   - loading the whole trace (hs_trace_load: decompress, decode, sort,
 *     resolve stacks), then building the view from it (hs_memview_build);
 * with events per second, the view's samples and stacks, and the peak
 * RSS. What bench/memviews/run.sh compares with heaptrack_print.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "analysis/memviews.h"
#include "format/trace_reader.h"

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	double best_read = 0, best_build = 0, cpu_read = 0, cpu_build = 0;
	double best_path = 0, cpu_path = 0, cpu_main = 0;
	size_t events = 0, samples = 0, stacks = 0;
	struct rusage ru;
	int runs = 3, r, path_runs = 1, load_runs = 1;

	if (argc < 2 || argc > 5) {
		fprintf(stderr, "usage: memview_bench TRACE [VIEW [RUNS [MODE]]]\n");
		return 2;
	}
	if (argc > 4) {
		path_runs = strcmp(argv[4], "load") ? 1 : 0;
		load_runs = strcmp(argv[4], "path") ? 1 : 0;
	}
	o.kind = HS_MEM_NET;
	if (argc > 2 && hs_memview_parse(argv[2], &o.kind)) {
		fprintf(stderr, "memview_bench: unknown view '%s'\n", argv[2]);
		return 2;
	}
	if (argc > 3)
		runs = atoi(argv[3]);
	for (r = 0; path_runs && r < runs; r++) {
		struct hs_diag diag = HS_DIAG_INIT(argv[1]);
		struct hs_stack_source src;
		double w0, c0, t0, w1, c1, t1;
		char msg[600];

		w0 = now(CLOCK_MONOTONIC);
		c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		t0 = now(CLOCK_THREAD_CPUTIME_ID);
		if (hs_memview_build_path(argv[1], &o, &src, NULL, &diag)) {
			fprintf(stderr, "memview_bench: %s\n", hs_diag_format(&diag, msg, sizeof(msg)));
			return 1;
		}
		w1 = now(CLOCK_MONOTONIC);
		c1 = now(CLOCK_PROCESS_CPUTIME_ID);
		t1 = now(CLOCK_THREAD_CPUTIME_ID);
		if (!r || c1 - c0 < cpu_path) {
			best_path = w1 - w0;
			cpu_path = c1 - c0;
			cpu_main = t1 - t0;
		}
		samples = src.nr_samples;
		stacks = src.nr_stacks;
		hs_source_release(&src);
	}
	for (r = 0; load_runs && r < runs; r++) {
		struct hs_diag diag = HS_DIAG_INIT(argv[1]);
		struct hs_stack_source src;
		struct hs_trace t;
		double w0, c0, w1, c1, w2, c2;
		char msg[600];
		int err;

		w0 = now(CLOCK_MONOTONIC);
		c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		err = hs_trace_load(argv[1], &t, &diag);
		if (err) {
			fprintf(stderr, "memview_bench: %s\n", hs_diag_format(&diag, msg, sizeof(msg)));
			return 1;
		}
		w1 = now(CLOCK_MONOTONIC);
		c1 = now(CLOCK_PROCESS_CPUTIME_ID);
		err = hs_memview_build(&t, &o, &src, NULL, &diag);
		if (err) {
			fprintf(stderr, "memview_bench: %s\n", hs_diag_format(&diag, msg, sizeof(msg)));
			return 1;
		}
		w2 = now(CLOCK_MONOTONIC);
		c2 = now(CLOCK_PROCESS_CPUTIME_ID);
		if (!r || w1 - w0 + w2 - w1 < best_read + best_build) {
			best_read = w1 - w0;
			best_build = w2 - w1;
			cpu_read = c1 - c0;
			cpu_build = c2 - c1;
		}
		events = t.nr_events;
		hs_source_release(&src);
		hs_trace_release(&t);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("view %s of %s: %zu samples, %zu stacks", hs_memview_name(o.kind), argv[1],
	       samples, stacks);
	if (load_runs)
		printf(" (%zu events)", events);
	putchar('\n');
	if (path_runs)
		printf("  hs_memview_build_path:         %.2f s wall, %.2f s CPU (%.2f s in the "
		       "view's thread, %.2f s in the reading thread)\n", best_path, cpu_path,
		       cpu_main, cpu_path - cpu_main);
	if (load_runs)
		printf("  hs_trace_load + hs_memview_build: %.2f s + %.2f s wall, %.2f s + %.2f s "
		       "CPU\n", best_read, best_build, cpu_read, cpu_build);
	printf("  peak RSS %.0f MB\n", (double)ru.ru_maxrss / 1024);
	return 0;
}
