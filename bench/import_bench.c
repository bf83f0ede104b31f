/*
 * import_bench - time one import and report its speed and memory.
 *
 *	import_bench FILE
 *
 * Imports FILE (perf script text, or a .trace.zip) into a stack source
 * and prints one line of key=value pairs: input bytes, wall seconds,
 * MB/s, CPU seconds (user + system) and MB per CPU second (steadier than
 * MB/s on a busy machine), samples, frames, stacks, the model's size
 * (hs_source_memory), the process's peak RSS (getrusage) and their ratio.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include "io/io.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT(argc > 1 ? argv[1] : NULL);
	struct rusage ru;
	struct stat st;
	double t0, t, rss, cpu;
	size_t model;
	char msg[700];
	size_t n = strlen(argc > 1 ? argv[1] : "");
	FILE *f = NULL;
	int err;

	if (argc != 2 || stat(argv[1], &st)) {
		fprintf(stderr, "usage: import_bench FILE\n");
		return 2;
	}
	hs_source_init(&src);
	t0 = now();
	if (n > 10 && !strcmp(argv[1] + n - 10, ".trace.zip")) {
		err = hs_import_trace_zip(argv[1], &src, &d);
	} else {
		f = fopen(argv[1], "r");
		if (!f) {
			perror(argv[1]);
			return 1;
		}
		err = hs_import_perf_script(f, &src, &d);
		fclose(f);
	}
	t = now() - t0;
	if (err) {
		fprintf(stderr, "import_bench: %s\n",
			hs_diag_format(&d, msg, sizeof(msg)));
		return 1;
	}
	model = hs_source_memory(&src);
	getrusage(RUSAGE_SELF, &ru);
	rss = (double)ru.ru_maxrss * 1024;
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("bytes=%lld seconds=%.3f MB/s=%.1f cpu_seconds=%.3f MB/cpu_s=%.1f "
	       "samples=%zu frames=%zu stacks=%zu model_MB=%.1f peak_rss_MB=%.1f "
	       "rss/model=%.2f\n",
	       (long long)st.st_size, t, (double)st.st_size / 1e6 / t, cpu,
	       (double)st.st_size / 1e6 / cpu, src.nr_samples, hs_source_nr_frames(&src),
	       src.nr_stacks, (double)model / 1e6, rss / 1e6, rss / (double)model);
	hs_source_release(&src);
	return 0;
}
