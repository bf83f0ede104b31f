/*
 * fuzz_perf_script - libFuzzer target for the `perf script` text importer
 * (io/import_perf_script.c): any bytes are imported as both of its sources
 * (CPU and thread time) and either give a stack source that holds up
 * (fuzz_util.h) or are refused with a message; nothing may crash, leak or
 * hang. Seeds: tests/fuzz/corpus/fuzz_perf_script/.
 */
#include "fuzz_util.h"
#include "io/io.h"

static void import_as(const uint8_t *data, size_t size, enum hs_perf_view view)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_stack_source src;
	FILE *f = fuzz_open_mem(data, size);

	hs_source_init(&src);
	if (!hs_import_perf_script_view(f, view, &src, &diag))
		fuzz_check_source(&src);
	hs_source_release(&src);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	import_as(data, size, HS_PERF_CPU);
	import_as(data, size, HS_PERF_THREAD_TIME);
	return 0;
}
