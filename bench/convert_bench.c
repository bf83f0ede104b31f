/*
 * convert_bench - time the PerfView XML/JSON and folded exporters and
 * importers on a generated source.
 *
 *	convert_bench [SAMPLES [STACKS]]	# default 500000 20000
 *
 * Builds a source of SAMPLES samples over STACKS distinct stacks (up to 32
 * frames deep, 5000 frames with realistic full names, ns times, integer
 * and fractional metrics), then for each format writes it to a file in
 * $TMPDIR, reads it back, and prints one line per format: file size, write
 * and read seconds, MB/s and samples/s of the read. Reading the file back
 * must give the same number of samples. Each step runs three times; the
 * best time is printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "io/io.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Stop when building the source fails (out of memory). */
static void must(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "convert_bench: %s: %s\n", what, strerror(-err));
		exit(1);
	}
}

static void generate(struct hs_stack_source *src, size_t nr_samples, size_t nr_stacks)
{
	enum { NR_FRAMES = 5000 };
	static uint32_t frames[NR_FRAMES];
	uint32_t *stacks = malloc(nr_stacks * sizeof(*stacks)), path[32];
	size_t i, k;
	int64_t t = 0;

	hs_source_init(src);
	for (i = 0; i < NR_FRAMES; i++) {
		char name[160];

		snprintf(name, sizeof(name), "/usr/lib/x86_64-linux-gnu/libmod%zu.so!"
			 "ns%zu::Class%zu::function_%zu(int, char const*)",
			 i % 60, i % 7, i % 101, i);
		must(hs_source_intern_frame(src, name, strlen(name), &frames[i]), "frame");
	}
	for (i = 0; i < nr_stacks; i++) {
		size_t depth = 4 + next() % 29;

		for (k = 0; k < depth; k++)
			path[k] = frames[k < 3 ? k : next() % NR_FRAMES];
		must(hs_source_intern_path(src, path, depth, &stacks[i]), "stack");
	}
	must(hs_source_reserve_samples(src, nr_samples), "samples");
	for (i = 0; i < nr_samples; i++) {
		/* skewed: a tenth of the stacks get most samples */
		size_t s = next() % 4 ? next() % (nr_stacks / 10 + 1)
				      : next() % nr_stacks;
		double metric = next() % 2 ? (double)(next() % 65536)
					   : (double)(next() % 100000) / 1000;

		t += (int64_t)(next() % 2000000);
		must(hs_source_add_sample(src, t, metric, 1, stacks[s]), "sample");
	}
	free(stacks);
}

int main(int argc, char **argv)
{
	static const enum hs_format formats[] = {
		HS_FORMAT_PERFVIEW_XML, HS_FORMAT_PERFVIEW_XML_ZIP,
		HS_FORMAT_PERFVIEW_JSON, HS_FORMAT_FOLDED,
	};
	static const char *const ext[] = {
		".perfView.xml", ".perfView.xml.zip", ".perfView.json", ".folded",
	};
	size_t nr_samples = argc > 1 ? strtoul(argv[1], NULL, 10) : 500000;
	size_t nr_stacks = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct hs_stack_source src;
	struct rusage ru;
	size_t f;

	if (!nr_samples || !nr_stacks) {
		fprintf(stderr, "usage: convert_bench [SAMPLES [STACKS]]\n");
		return 2;
	}
	generate(&src, nr_samples, nr_stacks);
	printf("source: %zu samples, %zu stacks, %zu frames, model %.1f MB\n",
	       src.nr_samples, src.nr_stacks, hs_source_nr_frames(&src),
	       (double)hs_source_memory(&src) / 1e6);
	for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		double tw = 1e9, tr = 1e9;
		char path[4096], msg[700];
		struct stat st;
		int run;

		snprintf(path, sizeof(path), "%s/convert-bench-%d%s", tmp, (int)getpid(),
			 ext[f]);
		for (run = 0; run < 3; run++) {
			struct hs_diag d = HS_DIAG_INIT(path);
			struct hs_stack_source back;
			double t0 = now();

			if (hs_export_path(&src, path, formats[f], &d)) {
				fprintf(stderr, "%s\n",
					hs_diag_format(&d, msg, sizeof(msg)));
				return 1;
			}
			if (now() - t0 < tw)
				tw = now() - t0;
			hs_source_init(&back);
			t0 = now();
			if (hs_import_path(path, formats[f], &back, &d)) {
				fprintf(stderr, "%s\n",
					hs_diag_format(&d, msg, sizeof(msg)));
				return 1;
			}
			if (now() - t0 < tr)
				tr = now() - t0;
			if (formats[f] != HS_FORMAT_FOLDED &&
			    back.nr_samples != src.nr_samples) {
				fprintf(stderr, "%s: %zu samples read back, not %zu\n",
					path, back.nr_samples, src.nr_samples);
				return 1;
			}
			hs_source_release(&back);
		}
		stat(path, &st);
		printf("%-18s %8.1f MB  write %6.3f s  read %6.3f s  %7.1f MB/s  %6.2f M "
		       "samples/s\n",
		       hs_format_name(formats[f]), (double)st.st_size / 1e6, tw, tr,
		       (double)st.st_size / 1e6 / tr, (double)nr_samples / 1e6 / tr);
		unlink(path);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS %.1f MB\n", (double)ru.ru_maxrss * 1024 / 1e6);
	hs_source_release(&src);
	return 0;
}
