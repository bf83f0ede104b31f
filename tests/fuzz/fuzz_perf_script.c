/*
 * fuzz_perf_script - libFuzzer target for the `perf script` text importer
 * (io/import_perf_script.c): any bytes are imported as both of its sources
 * (CPU and thread time) and either give a stack source that holds up
 * (fuzz_util.h) or are refused with a message; nothing may crash, leak or
 * hang. The CPU view is imported again from a file, mapped and cut at
 * every blank line into parts parsed on three threads
 * (io/import_perf_script_parts.c), and from the file in one part, where
 * the memo of whole stacks (io/import_perf_script.c), which only a mapped
 * file uses, meets the input's repeats: each must give the same model as
 * the serial parse of the stream, or the same refusal at the same line.
 * Seeds: tests/fuzz/corpus/fuzz_perf_script/.
 */
#include "fuzz_util.h"
#include "io/io.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int import_as(FILE *f, enum hs_perf_view view, struct hs_stack_source *src,
		     struct hs_diag *diag)
{
	int err;

	hs_source_init(src);
	err = hs_import_perf_script_view(f, view, src, diag);
	if (!err)
		fuzz_check_source(src);
	fclose(f);
	return err;
}

static void differ(const char *what)
{
	fprintf(stderr, "fuzz: the stream's parse and a mapped one differ: %s\n", what);
	abort();
}

/* @n bytes at @a and @b are equal (either may be NULL when @n is 0). */
static int same_bytes(const void *a, const void *b, size_t n)
{
	return !n || !memcmp(a, b, n);
}

static void same_model(const struct hs_stack_source *a, const struct hs_stack_source *b)
{
	size_t i, n = a->nr_samples;

	if (hs_source_nr_frames(a) != hs_source_nr_frames(b))
		differ("number of frames");
	for (i = 0; i < hs_source_nr_frames(a); i++)
		if (strcmp(hs_source_frame_name(a, (uint32_t)i),
			   hs_source_frame_name(b, (uint32_t)i)))
			differ("a frame's name");
	if (a->nr_stacks != b->nr_stacks || n != b->nr_samples)
		differ("number of stacks or samples");
	if (!same_bytes(a->stack_frame, b->stack_frame,
			a->nr_stacks * sizeof(uint32_t)) ||
	    !same_bytes(a->stack_caller, b->stack_caller,
			a->nr_stacks * sizeof(uint32_t)))
		differ("stacks");
	if (!same_bytes(a->time, b->time, n * sizeof(*a->time)) ||
	    !same_bytes(a->metric, b->metric, n * sizeof(*a->metric)) ||
	    !same_bytes(a->count, b->count, n * sizeof(*a->count)) ||
	    !same_bytes(a->stack, b->stack, n * sizeof(*a->stack)))
		differ("samples");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_diag d1 = HS_DIAG_INIT("fuzz"), d2 = HS_DIAG_INIT("fuzz");
	struct hs_diag d3 = HS_DIAG_INIT("fuzz"), d4 = HS_DIAG_INIT("fuzz");
	struct hs_diag d5 = HS_DIAG_INIT("fuzz");
	struct hs_stack_source serial, tt, parts, mapped;
	char path[64];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	int e1, e3, e4, e5;
	FILE *f;

	e1 = import_as(fuzz_open_mem(data, size), HS_PERF_CPU, &serial, &d1);
	import_as(fuzz_open_mem(data, size), HS_PERF_THREAD_TIME, &tt, &d2);
	hs_source_release(&tt);
	f = fopen(path, "r");
	if (!f)
		abort();
	setenv("HEAPSCOPE_PARSE_THREADS", "3", 1);
	setenv("HEAPSCOPE_PARSE_PART_BYTES", "1", 1);
	e3 = import_as(f, HS_PERF_CPU, &parts, &d3);
	if (e1 != e3 || d1.line != d3.line || strcmp(d1.msg, d3.msg))
		differ("the result or the error");
	if (!e1)
		same_model(&serial, &parts);
	hs_source_release(&parts);
	/* two big parts, the second handed over an event at a time */
	f = fopen(path, "r");
	if (!f)
		abort();
	setenv("HEAPSCOPE_PARSE_THREADS", "2", 1);
	setenv("HEAPSCOPE_PARSE_PART_BYTES", "4096", 1);
	setenv("HEAPSCOPE_PARSE_CHUNK_BYTES", "1", 1);
	e5 = import_as(f, HS_PERF_CPU, &parts, &d5);
	unsetenv("HEAPSCOPE_PARSE_CHUNK_BYTES");
	setenv("HEAPSCOPE_PARSE_PART_BYTES", "1", 1);
	if (e1 != e5 || d1.line != d5.line || strcmp(d1.msg, d5.msg))
		differ("the result or the error (chunks)");
	if (!e1)
		same_model(&serial, &parts);
	f = fopen(path, "r");
	if (!f)
		abort();
	setenv("HEAPSCOPE_PARSE_THREADS", "1", 1);
	e4 = import_as(f, HS_PERF_CPU, &mapped, &d4);
	if (e1 != e4 || d1.line != d4.line || strcmp(d1.msg, d4.msg))
		differ("the result or the error (one part)");
	if (!e1)
		same_model(&serial, &mapped);
	hs_source_release(&serial);
	hs_source_release(&parts);
	hs_source_release(&mapped);
	close(fd);
	return 0;
}
