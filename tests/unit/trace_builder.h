#ifndef HS_TEST_TRACE_BUILDER_H
#define HS_TEST_TRACE_BUILDER_H
/*
 * trace_builder - write small .heapscope traces in memory for unit tests:
 * records are appended to a payload, tb_chunk() frames (and compresses)
 * it. Include after cmocka.h; memory comes from malloc (free b->buf).
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "format/trace_format.h"
#include "format/trace_reader.h"
#include "format/trace_record.h"
#include "format/trace_writer.h"

/* --- a small trace builder ------------------------------------------- */

struct tb {
	uint8_t *buf;
	size_t len, cap;
	uint8_t payload[1 << 16];
	size_t plen;
	uint32_t seq;
	size_t chunk_end[16];	/* file size after each chunk */
	size_t chunk_events[16];	/* events in each chunk */
	size_t events;		/* events in the current payload */
};

static inline void tb_put(struct tb *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->buf = realloc(b->buf, b->cap);
		assert_non_null(b->buf);
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static inline void tb_init(struct tb *b)
{
	uint8_t h[HS_FILE_HEADER_SIZE];

	memset(b, 0, sizeof(*b));
	hs_tw_file_header(h);
	tb_put(b, h, sizeof(h));
}

static inline uint8_t *tb_p(struct tb *b)
{
	return b->payload + b->plen;
}

static inline void tb_end(struct tb *b, uint8_t *p)
{
	b->plen = (size_t)(p - b->payload);
}

/* tb_chunk()'s @zstd | TB_COLUMNS: an EVENTS payload in columns (2.0) */
#define TB_COLUMNS 2

static inline void tb_chunk(struct tb *b, enum hs_chunk_kind kind, int zstd)
{
	static uint8_t scratch[(HS_CS__COUNT + 1) * (sizeof(b->payload) + HS_CS_SLACK)];
	static uint8_t cols[sizeof(b->payload) + HS_CS_HEADER_MAX];
	uint8_t h[HS_CHUNK_HEADER_SIZE];
	uint8_t out[1 << 17];
	const uint8_t *data = b->payload;
	size_t n = b->plen, raw = b->plen;
	unsigned flags = 0;

	if ((zstd & TB_COLUMNS) && kind == HS_CHUNK_EVENTS) {
		raw = n = hs_chunk_split(b->payload, b->plen, scratch, cols);
		assert_true(n > 0);
		data = cols;
		flags |= HS_CHUNK_COLUMNS;
	}
	if (zstd & 1) {
		n = ZSTD_compress(out, sizeof(out), data, raw, 1);
		assert_false(ZSTD_isError(n));
		data = out;
		flags |= HS_CHUNK_ZSTD;
	}
	hs_tw_chunk_header(h, kind, flags, (uint32_t)n, (uint32_t)raw, b->seq, data);
	tb_put(b, h, sizeof(h));
	tb_put(b, data, n);
	b->chunk_events[b->seq] = b->events;
	b->chunk_end[b->seq++] = b->len;
	b->plen = 0;
	b->events = 0;
}

static inline uint8_t *put_span(uint8_t *p, uint64_t tid, uint64_t ticks, uint64_t addr)
{
	return hs_enc_span(p, tid, ticks, addr);
}

static inline uint8_t *put_node(uint8_t *p, uint64_t id, uint64_t parent, uint64_t addr)
{
	return hs_enc_node(p, id, parent, addr);
}

static inline uint8_t *put_alloc(struct tb *b, uint8_t *p, unsigned tag, int64_t dt,
			  int64_t da, uint64_t size, uint64_t stack)
{
	b->events++;
	return hs_enc_alloc(p, tag, dt, da, size, stack, 0);
}

static inline uint8_t *put_free(struct tb *b, uint8_t *p, int64_t dt, int64_t da)
{
	b->events++;
	return hs_enc_free(p, HS_TAG_FREE, dt, da);
}

static inline uint8_t *put_sized2(uint8_t *p, unsigned tag, uint64_t a, uint64_t v)
{
	uint8_t body[32], *q = hs_enc_clock_body(body, a, v);

	return hs_tw_sized(p, tag, body, (size_t)(q - body));
}

static inline uint8_t *put_module(uint8_t *p, uint64_t ticks, uint64_t id, uint64_t bias,
			   uint64_t start, uint64_t end, const char *path)
{
	uint8_t body[256], *q;

	q = hs_enc_module_body(body, ticks, id, bias, start, end, path, strlen(path),
			       "\x01\x02", 2);
	return hs_tw_sized(p, HS_TAG_MODULE, body, (size_t)(q - body));
}

static inline uint8_t *put_thread_start(uint8_t *p, uint64_t ticks, const char *name)
{
	uint8_t body[64], *q = hs_enc_thread_start_body(body, ticks, name, strlen(name));

	return hs_tw_sized(p, HS_TAG_THREAD_START, body, (size_t)(q - body));
}

static inline uint8_t *put_process(uint8_t *p)
{
	static const char *const argv[] = { "./prog", "--flag" };
	struct hs_process_info info = {
		.pid = 4242, .ppid = 1, .page_size = 4096, .sample_bytes = 0,
		.max_depth = 128, .unwind = HS_UNWIND_LIBUNWIND, .clock = HS_CLOCK_NS,
		.start_realtime_ns = 1700000000000000000ull, .flags = 0,
		.exe = "/usr/bin/prog", .comm = "prog", .cwd = "/tmp",
		.argc = 2, .argv = argv,
	};

	assert_true(hs_tw_process_size(&info) < 512);
	return hs_tw_process(p, &info);
}

/* A process record of "./app" (pid 77) made with --sample-bytes @sample_bytes. */
static inline uint8_t *put_process_sampled(uint8_t *p, uint64_t sample_bytes)
{
	static const char *const argv[] = { "./app" };
	struct hs_process_info info = {
		.pid = 77, .ppid = 1, .page_size = 4096, .sample_bytes = sample_bytes,
		.max_depth = 128, .clock = HS_CLOCK_NS,
		.exe = "/bin/app", .comm = "app", .cwd = "/",
		.argc = 1, .argv = argv,
	};

	return hs_tw_process(p, &info);
}

static inline uint8_t *put_realloc(struct tb *b, uint8_t *p, int64_t dt, int64_t da,
				   uint64_t size, uint64_t stack, int64_t old_minus_new)
{
	b->events++;
	return hs_enc_realloc(p, HS_TAG_REALLOC, dt, da, size, stack, old_minus_new, 0);
}

/* An END record: @reason (enum hs_end_reason) and its @detail. */
static inline uint8_t *put_end(uint8_t *p, uint64_t ticks, uint64_t reason, uint64_t detail)
{
	uint8_t body[3 * HS_VARINT_MAX], *q = hs_enc_end_body(body, ticks, reason, detail);

	return hs_tw_sized(p, HS_TAG_END, body, (size_t)(q - body));
}

/*
 * The trace of one process image for the exec tests: pid @pid (@comm,
 * /bin/x) started at @start_ns with @flags (HS_PROC_*), one malloc, and an
 * END of @reason (enum hs_end_reason), built whole into @b: the caller
 * writes b->buf (b->len bytes) where it wants and frees it.
 */
static inline void tb_process_image(struct tb *b, uint64_t pid, const char *comm,
				    uint64_t start_ns, unsigned flags, unsigned reason)
{
	static const char *const argv[] = { "x" };
	struct hs_process_info info = {
		.pid = pid, .ppid = 1, .page_size = 4096, .max_depth = 128,
		.clock = HS_CLOCK_NS, .start_realtime_ns = start_ns, .flags = flags,
		.exe = "/bin/x", .comm = comm, .cwd = "/", .argc = 1, .argv = argv,
	};
	uint8_t *p;

	tb_init(b);
	p = hs_tw_process(tb_p(b), &info);
	p = put_span(p, pid, 0, 0);
	p = put_node(p, 1, 0, 0x10);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000, 0x1000, 8, 1);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
	p = put_end(tb_p(b), 2000, reason, 0);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, 0);
}

/* An emit callback of the symbol writer (hs_symw_init()): the chunk into @ctx, a tb. */
static inline int tb_emit(void *ctx, const uint8_t *chunk, size_t n)
{
	struct tb *b = ctx;

	tb_put(b, chunk, n);
	b->seq++;
	return 0;
}

/* Load the trace built in @b into @t (which the caller releases). */
static inline void tb_load(struct tb *b, struct hs_trace *t)
{
	struct hs_diag diag = HS_DIAG_INIT("t");

	assert_int_equal(hs_trace_load_mem(b->buf, b->len, "t", t, &diag), 0);
}

/*
 * One thread "main" of /bin/app (module 1 at 0x1000), in its span from
 * tick 0, with three stacks: node 1 = 0x1010, nodes 2 = 0x1020 and
 * 3 = 0x1030 under it.
 */
static inline uint8_t *put_app_main(uint8_t *p)
{
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_span(p, 1, 0, 0);
	p = put_thread_start(p, 0, "main");
	p = put_node(p, 1, 0, 0x1010);
	p = put_node(p, 2, 1, 0x1020);
	return put_node(p, 3, 1, 0x1030);
}

/*
 * A small program's heap events (times in ticks of 1 ns). Thread 10
 * "main"; modules app (id 1, at 0x1000) and libc (id 2, at 0x9000);
 * stacks: node 1 = libc 0x9020 (the entry), node 2 = app 0x1010 under it
 * (function f), node 3 = app 0x1040 under node 1 (function g). Addresses
 * are relative to the span:
 *   1 ms  malloc 100 @0x1000 on f         (freed at 4 ms)
 *   2 ms  malloc 40  @0x2000 on g         (freed at 3 ms: temporary)
 *   3 ms  free 0x2000
 *   4 ms  malloc 300000 @0x3000 on g      (live at the end: large, leaked)
 *   4 ms  free 0x1000
 *   5 ms  realloc 0x3000 -> 0x4000, 500000 bytes on f
 *   6 ms  free 0x9999 (never allocated: ignored)
 *   7 ms  malloc 8 @0x5000 on f; 8 ms malloc 16 @0x5000 on g (a free we
 *         never saw: the first block is dropped)
 */
static inline uint8_t *put_heap_program(struct tb *b, uint8_t *p)
{
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_module(p, 0, 2, 0x9000, 0x9000, 0xa000, "/lib/libc.so.6");
	p = put_span(p, 10, 0, 0);
	p = put_thread_start(p, 0, "main");
	p = put_node(p, 1, 0, 0x9020);
	p = put_node(p, 2, 1, 0x1010);
	p = put_node(p, 3, 1, 0x1040);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000000, 0x1000, 100, 2);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000000, 0x1000, 40, 3);
	p = put_free(b, p, 1000000, 0);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000000, 0x1000, 300000, 3);
	p = put_free(b, p, 0, -0x2000);
	p = put_realloc(b, p, 1000000, 0x3000, 500000, 2, -0x1000);
	p = put_free(b, p, 1000000, 0x5999);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000000, -0x4999, 8, 2);
	p = put_alloc(b, p, HS_TAG_CALLOC, 1000000, 0, 16, 3);
	return p;
}

#endif
