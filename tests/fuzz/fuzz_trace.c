/*
 * fuzz_trace - libFuzzer target for the trace reader: any bytes either
 * load (then the stats and the stack source are built from them) or are
 * rejected with a message; nothing may crash, leak or hang.
 *
 * Each input is tried twice: as a whole file, and as the payload of one
 * stored EVENTS chunk with a valid header and check, so that the fuzzer
 * reaches the record decoder without having to forge checksums.
 *
 * Built and run by tests/fuzz/fuzz.sh (clang -fsanitize=fuzzer).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/diag.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "io/io.h"
#include "model/stack_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void try_file(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *file;

	try_file(data, size);
	if (size > HS_CHUNK_MAX)
		return 0;
	file = malloc(HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + size + 1);
	if (!file)
		return 0;
	hs_tw_file_header(file);
	memcpy(file + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE, data, size);
	hs_tw_chunk_header(file + HS_FILE_HEADER_SIZE, HS_CHUNK_EVENTS, 0, (uint32_t)size,
			   (uint32_t)size, 0, file + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE);
	try_file(file, HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + size);
	free(file);
	return 0;
}

static void try_file(const uint8_t *data, size_t size)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_trace_reader r;
	struct hs_trace_stats s;
	struct hs_stack_source src;
	struct hs_trace t;
	struct hs_rec rec;
	char msg[1024];

	if (!hs_trace_reader_open_mem(&r, data, size, "fuzz", &diag)) {
		while (hs_trace_reader_next(&r, &rec, &diag) == 1)
			;
		hs_trace_reader_close(&r);
	}
	diag = (struct hs_diag)HS_DIAG_INIT("fuzz");
	if (hs_trace_load_mem(data, size, "fuzz", &t, &diag)) {
		hs_diag_format(&diag, msg, sizeof(msg));
		return;
	}
	hs_trace_stats(&t, &s);
	hs_source_init(&src);
	hs_trace_to_source(&t, &src, &diag);
	hs_source_release(&src);
	hs_trace_release(&t);
}
