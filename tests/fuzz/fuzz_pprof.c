/*
 * fuzz_pprof - libFuzzer target for the pprof importer (io/import_pprof.c):
 * a gzip'd profile.proto. An input that starts with gzip's magic goes to
 * the importer as it is (the inflate layer and its size bound); any other
 * input is taken as the profile.proto bytes themselves and gzip'd here
 * first, so that mutations reach the protobuf decoding and the checks of
 * every index and id rather than dying in inflate. Either way the bytes
 * import into a stack source that holds up (fuzz_util.h) or are refused
 * with a message; nothing may crash, leak or hang.
 * Seeds: tests/fuzz/corpus/fuzz_pprof/ (raw .pb and one .pb.gz).
 */
#include "fuzz_util.h"
#include "io/io.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* @size bytes at @data as a gzip stream in a new buffer (*@out, *@len). */
static void gzip_bytes(const uint8_t *data, size_t size, uint8_t **out, size_t *len)
{
	z_stream z;
	uLong bound;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	bound = deflateBound(&z, (uLong)size);
	*out = malloc(bound);
	if (!*out)
		abort();
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = (uInt)size;
	z.next_out = *out;
	z.avail_out = (uInt)bound;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	*len = bound - z.avail_out;
	deflateEnd(&z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_stack_source src;
	uint8_t *packed = NULL;
	size_t len = size;
	FILE *f;

	(void)hs_format_sniff(data, size);
	if (!hs_pprof_sniff(data, size))
		gzip_bytes(data, size, &packed, &len);
	f = fuzz_open_mem(packed ? packed : data, len);
	hs_source_init(&src);
	if (!hs_import_pprof_stream(f, 0, "fuzz", &src, &diag))
		fuzz_check_source(&src);
	hs_source_release(&src);
	fclose(f);
	free(packed);
	return 0;
}
