/*
 * fuzz_perfview_xml - libFuzzer target for the .perfView.xml importer
 * (io/import_perfview_xml.c, expat underneath): any bytes either import
 * into a stack source that holds up, its saved view state (GroupPats,
 * FoldPats, Fold%, the time range) applied as `heapscope report` applies
 * it (fuzz_util.h), or are refused with a message; nothing may crash,
 * leak or hang. Seeds: tests/fuzz/corpus/fuzz_perfview_xml/.
 */
#include "fuzz_util.h"
#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_stack_source src;
	FILE *f = fuzz_open_mem(data, size);

	hs_source_init(&src);
	if (!hs_import_perfview_xml(f, &src, &diag))
		fuzz_check_source(&src);
	hs_source_release(&src);
	fclose(f);
	return 0;
}
