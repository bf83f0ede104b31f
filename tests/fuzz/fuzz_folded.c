/*
 * fuzz_folded - libFuzzer target for the folded-stacks importer
 * (io/import_folded.c) and the format sniffer (io.c) that sends text to
 * it: any bytes either import into a stack source that holds up
 * (fuzz_util.h) or are refused with a message; nothing may crash, leak
 * or hang. Seeds: tests/fuzz/corpus/fuzz_folded/.
 */
#include "fuzz_util.h"
#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_stack_source src;
	FILE *f = fuzz_open_mem(data, size);

	(void)hs_format_sniff(data, size);
	hs_source_init(&src);
	if (!hs_import_folded(f, &src, &diag))
		fuzz_check_source(&src);
	hs_source_release(&src);
	fclose(f);
	return 0;
}
