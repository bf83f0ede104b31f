/*
 * fuzz_trace - libFuzzer target for the trace reader: any bytes either
 * load (then the stats and the stack source are built from them) or are
 * rejected with a message; nothing may crash, leak or hang.
 *
 * Each input is tried seven times: as a whole file, as the payload of one
 * stored EVENTS chunk with a valid header and check, as that of a
 * columnar one (2.0), of a compact one (3.0), of a compact one with
 * size classes (4.0) and of one with predicted addresses and NODE
 * streams (5.0), and as the payload of a SYMBOLS chunk after a small
 * valid trace, so that the fuzzer reaches the record decoders, the
 * columns' join and the compact chunks' references without having to
 * forge checksums. A
 * trace that loads is also streamed, and its memory views, stats and
 * source lines are built.
 *
 * The stack source of the default memory view must hold up
 * (fuzz_util.h). Seeds: tests/fuzz/corpus/fuzz_trace/ (whole traces of
 * 1.4, 2.0, 3.0, 4.0 and 5.0, a cut-off one, and the decompressed payloads
 * of a trace's chunks, plain, columnar, compact, compact with size
 * classes and 5.0's, sizes whole and split).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_util.h"
#include "analysis/memviews.h"
#include "analysis/sourcelines.h"
#include "analysis/stats.h"
#include "analysis/totals.h"
#include "common/diag.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "io/io.h"
#include "model/stack_source.h"

static void try_file(const uint8_t *data, size_t size);

/* A small valid EVENTS payload: process, a module, a stack, a malloc. */
static size_t events_payload(uint8_t *p)
{
	static const char *const argv[] = { "f" };
	struct hs_process_info info = {
		.pid = 1, .page_size = 4096, .max_depth = 128, .exe = "/f", .comm = "f",
		.cwd = "/", .argc = 1, .argv = argv,
	};
	uint8_t *q = hs_tw_process(p, &info), body[64], *b = body;

	b = hs_put_varint(b, 0);
	b = hs_put_varint(b, 1);
	b = hs_put_varint(b, 0x1000);
	b = hs_put_varint(b, 0x1000);
	b = hs_put_varint(b, 0x2000);
	b = hs_put_bytes(b, "/f", 2);
	b = hs_put_bytes(b, "", 0);
	q = hs_tw_sized(q, HS_TAG_MODULE, body, (size_t)(b - body));
	*q++ = HS_TAG_SPAN;
	q = hs_put_varint(q, 7);
	q = hs_put_varint(q, 0);
	q = hs_put_varint(q, 0);
	*q++ = HS_TAG_NODE;
	q = hs_put_varint(q, 1);
	q = hs_put_varint(q, 0);
	q = hs_put_varint(q, 0x1010);
	*q++ = HS_TAG_MALLOC;
	q = hs_put_svarint(q, 5);
	q = hs_put_svarint(q, 0x500);
	q = hs_put_varint(q, 16);
	q = hs_put_varint(q, 1);
	return (size_t)(q - p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *file, *c;
	size_t n;

	try_file(data, size);
	if (size > HS_CHUNK_MAX)
		return 0;
	file = malloc(HS_FILE_HEADER_SIZE + 2 * HS_CHUNK_HEADER_SIZE + 1024 + size + 1);
	if (!file)
		return 0;
	hs_tw_file_header(file);
	memcpy(file + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE, data, size);
	hs_tw_chunk_header(file + HS_FILE_HEADER_SIZE, HS_CHUNK_EVENTS, 0, (uint32_t)size,
			   (uint32_t)size, 0, file + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE);
	try_file(file, HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + size);
	hs_tw_chunk_header(file + HS_FILE_HEADER_SIZE, HS_CHUNK_EVENTS, HS_CHUNK_COLUMNS,
			   (uint32_t)size, (uint32_t)size, 0,
			   file + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE);
	try_file(file, HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + size);
	hs_tw_chunk_header(file + HS_FILE_HEADER_SIZE, HS_CHUNK_EVENTS, HS_CHUNK_COMPACT,
			   (uint32_t)size, (uint32_t)size, 0,
			   file + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE);
	try_file(file, HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + size);
	hs_tw_chunk_header(file + HS_FILE_HEADER_SIZE, HS_CHUNK_EVENTS,
			   HS_CHUNK_COMPACT | HS_CHUNK_CLASSES, (uint32_t)size, (uint32_t)size,
			   0, file + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE);
	try_file(file, HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + size);
	hs_tw_chunk_header(file + HS_FILE_HEADER_SIZE, HS_CHUNK_EVENTS,
			   HS_CHUNK_COMPACT | HS_CHUNK_CLASSES | HS_CHUNK_PREDICT,
			   (uint32_t)size, (uint32_t)size, 0,
			   file + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE);
	try_file(file, HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + size);
	/* a valid trace, then the input as its symbol section */
	c = file + HS_FILE_HEADER_SIZE;
	n = events_payload(c + HS_CHUNK_HEADER_SIZE);
	hs_tw_chunk_header(c, HS_CHUNK_EVENTS, 0, (uint32_t)n, (uint32_t)n, 0,
			   c + HS_CHUNK_HEADER_SIZE);
	c += HS_CHUNK_HEADER_SIZE + n;
	memcpy(c + HS_CHUNK_HEADER_SIZE, data, size);
	hs_tw_chunk_header(c, HS_CHUNK_SYMBOLS, 0, (uint32_t)size, (uint32_t)size, 1,
			   c + HS_CHUNK_HEADER_SIZE);
	try_file(file, (size_t)(c - file) + HS_CHUNK_HEADER_SIZE + size);
	free(file);
	return 0;
}

static int count_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	(void)ev;
	*(size_t *)ctx += n;
	return 0;
}

static int is_live(void *ctx, uint64_t addr)
{
	(void)ctx;
	return (int)(addr >> 4) & 1;
}

/* Everything built from a loaded trace. */
static void try_views(const struct hs_trace *t)
{
	struct hs_filter_params fp = HS_FILTER_PARAMS_INIT;
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_heap_stats hs;
	struct hs_source_lines sl;
	struct hs_stack_source src;
	int k;

	o.size_classes = 1;
	for (k = 0; k < HS_MEM__COUNT; k++) {
		o.kind = (enum hs_memview_kind)k;
		o.start_ms = k == HS_MEM_LEAKS ? 1 : NAN;
		if (!hs_memview_build(t, &o, &src, NULL, &diag) &&
		    !hs_source_lines_build(&src, &fp, "main", &sl, &diag))
			hs_source_lines_release(&sl);
		hs_source_release(&src);
	}
	if (!hs_heap_stats_compute(t, NULL, &hs, &diag))
		hs_heap_stats_release(&hs);
}

static void try_file(const uint8_t *data, size_t size)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_trace_reader r;
	struct hs_heap_totals s;
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
	hs_heap_totals(&t, &s);
	hs_source_init(&src);
	if (!hs_trace_to_source(&t, &src, &diag))
		fuzz_check_source(&src);
	hs_source_release(&src);
	try_views(&t);
	hs_trace_release(&t);
	/* streamed, with equal-time events of several threads reordered */
	{
		size_t n = 0;
		struct hs_trace_sink sink = { .events = count_events, .live = is_live, .ctx = &n };

		diag = (struct hs_diag)HS_DIAG_INIT("fuzz");
		if (!hs_trace_stream_mem(data, size, "fuzz", &t, &sink, &diag))
			hs_trace_release(&t);
	}
}
