/*
 * import_bench - time one import and report its speed and memory.
 *
 *	import_bench FILE [SOURCE]
 *
 * Imports FILE (perf script text, or a .trace.zip) into a stack source
 * (SOURCE: "cpu", the default, or "thread-time") and prints one line of
 * key=value pairs: input bytes, wall seconds, MB/s, CPU seconds (user +
 * system) and MB per CPU second (steadier than MB/s on a busy machine),
 * samples, frames, stacks, the model's size (hs_source_memory), the
 * process's peak RSS (getrusage) and their ratio.
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
	int err;

	if (argc < 2 || argc > 3 || stat(argv[1], &st)) {
		fprintf(stderr, "usage: import_bench FILE [SOURCE]\n");
		return 2;
	}
	hs_source_init(&src);
	t0 = now();
	err = hs_import_path_source(argv[1], HS_FORMAT_UNKNOWN, argc > 2 ? argv[2] : NULL,
				    &src, &d);
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
