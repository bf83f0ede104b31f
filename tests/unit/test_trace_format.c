/*
 * Tests of the trace format: varints, record decoding, chunk framing,
 * loading, and recovery from cut-off and corrupt files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <zstd.h>
#include "analysis/totals.h"
#include "format/trace_format.h"
#include "format/trace_reader.h"
#include "format/trace_record.h"
#include "format/trace_writer.h"

#include "trace_builder.h"

/*
 * The reference trace, in two EVENTS chunks and an END chunk:
 *   thread 100 (main): malloc(100) at t=1000 -> 0x5000, stack main<-start
 *                      malloc(32)  at t=1100 -> 0x5100, stack f<-main<-start
 *                      free(0x5000) at t=5000
 *   thread 101 (worker): calloc 64 at t=2000 -> 0x9000 (stack f<-main<-start)
 *                        realloc 0x9000 -> 0x9800, 200 bytes, at t=3000
 *   leaked at the end: 0x5100 (32) and 0x9800 (200); peak 100+32+200 at t=3000
 */
static void build_reference(struct tb *b, int zstd)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process(p);
	p = put_sized2(p, HS_TAG_CLOCK, 0, 0);
	p = put_module(p, 0, 1, 0x400000, 0x400000, 0x401000, "/usr/bin/prog");
	p = put_module(p, 0, 2, 0x7f0000000000, 0x7f0000000000, 0x7f0000100000,
		       "/lib/libc.so.6");
	p = put_span(p, 100, 0, 0);
	p = put_thread_start(p, 10, "prog");
	p = put_node(p, 1, 0, 0x7f0000000123);		/* start */
	p = put_node(p, 2, 1, 0x400100);		/* main */
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000, 0x5000, 100, 2);
	p = put_node(p, 3, 2, 0x400200);		/* f */
	p = put_alloc(b, p, HS_TAG_MALLOC, 100, 0x100, 32, 3);
	p = put_span(p, 101, 1500, 0);
	p = put_thread_start(p, 1500, "worker");
	p = put_alloc(b, p, HS_TAG_CALLOC, 500, 0x9000, 64, 3);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, zstd);

	p = tb_p(b);
	p = put_sized2(p, HS_TAG_RSS, 2500, 1 << 20);
	p = put_span(p, 101, 2000, 0x9000);
	b->events++;
	p = hs_enc_realloc(p, HS_TAG_REALLOC, 1000, 0x800, 200, 3, -0x800, 0);
	p = put_span(p, 100, 1100, 0x5100);
	p = put_free(b, p, 3900, -0x100);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, zstd);

	p = tb_p(b);
	p = put_end(p, 6000, HS_END_EXIT, 0);
	{
		uint64_t counts[HS_FC__COUNT] = { 4, 1, 1, 0, 0, 0, 3, 2, 2, 396, 0 };
		struct hs_chunk_index idx[2] = { { 16, 0, 1500 }, { 200, 2000, 5000 } };

		p = hs_tw_footer(p, counts, idx, 2);
	}
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, zstd);
}

/* --- varints ---------------------------------------------------------- */

static void varint_lengths_and_round_trip(void **state)
{
	static const struct {
		uint64_t v;
		size_t len;
	} cases[] = {
		{ 0, 1 }, { 1, 1 }, { 127, 1 }, { 128, 2 }, { 16383, 2 },
		{ 16384, 3 }, { 1ull << 32, 5 }, { 1ull << 63, 10 },
		{ UINT64_MAX, 10 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[HS_VARINT_MAX];
		const uint8_t *q = buf;
		uint64_t back = 12345;

		assert_int_equal(hs_put_varint(buf, cases[i].v) - buf, cases[i].len);
		assert_int_equal(hs_get_varint(&q, buf + cases[i].len, &back), 0);
		assert_true(back == cases[i].v);
		assert_ptr_equal(q, buf + cases[i].len);
		/* one byte short fails and leaves the position alone */
		q = buf;
		assert_int_equal(hs_get_varint(&q, buf + cases[i].len - 1, &back), -1);
		assert_ptr_equal(q, buf);
	}
	/* 300 = 0b1_0010_1100 -> ac 02 */
	{
		uint8_t buf[4];

		assert_int_equal(hs_put_varint(buf, 300) - buf, 2);
		assert_int_equal(buf[0], 0xac);
		assert_int_equal(buf[1], 0x02);
	}
}

static void varint_rejects_overlong(void **state)
{
	uint8_t eleven[11] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
			       0x80, 0x80, 0x00 };
	uint8_t too_big[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				0xff, 0x02 };
	const uint8_t *q;
	uint64_t v;

	(void)state;
	q = eleven;
	assert_int_equal(hs_get_varint(&q, eleven + 11, &v), -1);
	q = too_big;
	assert_int_equal(hs_get_varint(&q, too_big + 10, &v), -1);
	too_big[9] = 0x01;
	q = too_big;
	assert_int_equal(hs_get_varint(&q, too_big + 10, &v), 0);
	assert_true(v == UINT64_MAX);
}

/* hs_get_varint() as a byte loop, what its 8-byte path must agree with */
static int varint_by_bytes(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		if (q >= end || shift > 63)
			return -1;
		if (shift == 63 && *q > 1)
			return -1;
		v |= (uint64_t)(*q & 0x7f) << shift;
		if (!(*q++ & 0x80))
			break;
		shift += 7;
	}
	*p = q;
	*out = v;
	return 0;
}

static void varint_with_bytes_after_it(void **state)
{
	uint8_t buf[HS_VARINT_MAX + 8];
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned b, k, round;

	(void)state;
	/* every length, the varint followed by bytes that are not its own */
	for (b = 0; b < 64; b++) {
		uint64_t vals[3] = { (1ull << b) - 1, 1ull << b, (1ull << b) | 1 };

		for (k = 0; k < 3; k++) {
			const uint8_t *q = buf;
			size_t len;
			uint64_t back = 7;

			memset(buf, 0xff, sizeof(buf));
			len = (size_t)(hs_put_varint(buf, vals[k]) - buf);
			assert_int_equal(hs_get_varint(&q, buf + sizeof(buf), &back), 0);
			assert_true(back == vals[k]);
			assert_ptr_equal(q, buf + len);
		}
	}
	/* any bytes at all (non-minimal, overlong, too big): as the byte loop */
	for (round = 0; round < 200000; round++) {
		const uint8_t *q = buf, *r = buf;
		uint64_t a = 1, c = 2;
		size_t avail;
		int ra, rc;

		for (k = 0; k < sizeof(buf); k++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* mostly continuation bytes, so that long ones come up */
			buf[k] = (uint8_t)(seed >> 56) | ((seed >> 40 & 7) ? 0x80 : 0);
		}
		avail = 1 + (size_t)(seed >> 20) % sizeof(buf);
		ra = hs_get_varint(&q, buf + avail, &a);
		rc = varint_by_bytes(&r, buf + avail, &c);
		assert_int_equal(ra, rc);
		assert_ptr_equal(q, r);
		if (!ra)
			assert_true(a == c);
	}
}

static void zigzag(void **state)
{
	(void)state;
	assert_true(hs_zigzag(0) == 0);
	assert_true(hs_zigzag(-1) == 1);
	assert_true(hs_zigzag(1) == 2);
	assert_true(hs_zigzag(-2) == 3);
	assert_true(hs_zigzag(INT64_MIN) == UINT64_MAX);
	assert_true(hs_unzigzag(UINT64_MAX) == INT64_MIN);
	assert_true(hs_unzigzag(hs_zigzag(-123456789)) == -123456789);
}

/* --- records ---------------------------------------------------------- */

static void decode_records_with_span_state(void **state)
{
	uint8_t buf[256], *p = buf;
	const uint8_t *q = buf;
	struct hs_rec_state st = { 0 };
	struct hs_rec rec;
	const char *why = NULL;
	struct tb b;

	(void)state;
	b.events = 0;
	p = put_span(p, 7, 100, 0x1000);
	p = put_node(p, 5, 4, 0x401234);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 20, 0x10, 48, 5);
	p = hs_enc_alloc(p, HS_TAG_POSIX_MEMALIGN, 5, 0x100, 4096, 5, 64);
	p = put_free(&b, p, 1, -0x110);
	p = hs_enc_mremap(p, 2, 0x10000, 8192, 5, -0x10000, 4096);
	*p++ = 0x7e;		/* an unknown sized record is skipped */
	*p++ = 2;
	*p++ = 0xaa;
	*p++ = 0xbb;

	assert_int_equal(hs_rec_decode(&q, p, &st, &rec, &why), 0);
	assert_int_equal(rec.tag, HS_TAG_SPAN);
	assert_true(st.tid == 7 && st.ticks == 100 && st.addr == 0x1000);

	assert_int_equal(hs_rec_decode(&q, p, &st, &rec, &why), 0);
	assert_int_equal(rec.tag, HS_TAG_NODE);
	assert_true(rec.id == 5 && rec.parent == 4 && rec.addr == 0x401234);

	assert_int_equal(hs_rec_decode(&q, p, &st, &rec, &why), 0);
	assert_int_equal(rec.tag, HS_TAG_MALLOC);
	assert_true(rec.tid == 7 && rec.ticks == 120 && rec.addr == 0x1010);
	assert_true(rec.size == 48 && rec.stack == 5);

	assert_int_equal(hs_rec_decode(&q, p, &st, &rec, &why), 0);
	assert_int_equal(rec.tag, HS_TAG_POSIX_MEMALIGN);
	assert_true(rec.ticks == 125 && rec.addr == 0x1110 && rec.size == 4096);
	assert_true(rec.align == 64);

	assert_int_equal(hs_rec_decode(&q, p, &st, &rec, &why), 0);
	assert_int_equal(rec.tag, HS_TAG_FREE);
	assert_true(rec.ticks == 126 && rec.addr == 0x1000);

	assert_int_equal(hs_rec_decode(&q, p, &st, &rec, &why), 0);
	assert_int_equal(rec.tag, HS_TAG_MREMAP);
	assert_true(rec.ticks == 128 && rec.addr == 0x11000 && rec.size == 8192);
	assert_true(rec.old_addr == 0x1000 && rec.old_size == 4096);

	assert_int_equal(hs_rec_decode(&q, p, &st, &rec, &why), 0);
	assert_int_equal(rec.tag, 0x7e);
	assert_int_equal(rec.body_len, 2);
	assert_ptr_equal(q, p);

	/* a record cut short fails without moving or changing the state */
	{
		uint8_t cut[8], *c = cut;
		const uint8_t *cq = cut;
		struct hs_rec_state before;

		c = put_alloc(&b, c, HS_TAG_MALLOC, 1, 1, 300, 1);
		before = st;
		assert_int_equal(hs_rec_decode(&cq, c - 1, &st, &rec, &why), -1);
		assert_ptr_equal(cq, cut);
		assert_true(st.ticks == before.ticks && st.addr == before.addr);
		assert_non_null(why);
	}
	/* tag 0x80 and tag 0x3f are invalid */
	{
		uint8_t bad[2] = { 0x80, 0 };
		const uint8_t *bq = bad;

		assert_int_equal(hs_rec_decode(&bq, bad + 2, &st, &rec, &why), -1);
		bad[0] = 0x3f;
		assert_int_equal(hs_rec_decode(&bq, bad + 2, &st, &rec, &why), -1);
	}
}

static void chunk_header_round_trip(void **state)
{
	uint8_t h[HS_CHUNK_HEADER_SIZE];
	const uint8_t payload[5] = "abcde";
	struct hs_chunk_header ch;

	(void)state;
	hs_tw_chunk_header(h, HS_CHUNK_EVENTS, 0, 5, 5, 3, payload);
	assert_memory_equal(h, "HSCK", 4);
	assert_int_equal(hs_chunk_header_parse(h, &ch), 0);
	assert_int_equal(ch.kind, HS_CHUNK_EVENTS);
	assert_int_equal(ch.stored, 5);
	assert_int_equal(ch.raw, 5);
	assert_int_equal(ch.seq, 3);
	assert_int_equal(ch.check, hs_chunk_check(h, payload, 5));
	/* the check covers the payload */
	assert_int_not_equal(ch.check, hs_chunk_check(h, (const uint8_t *)"abcdf", 5));
	h[0] = 'X';
	assert_int_equal(hs_chunk_header_parse(h, &ch), -1);
}

/* --- loading ----------------------------------------------------------- */

static void check_reference(const struct hs_trace *t)
{
	struct hs_heap_totals s;
	uint32_t frames[8];
	char name[256];
	size_t n;

	assert_true(t->info.present);
	assert_true(t->info.pid == 4242);
	assert_string_equal(t->info.exe, "/usr/bin/prog");
	assert_string_equal(t->info.comm, "prog");
	assert_int_equal(t->info.argc, 2);
	assert_string_equal(t->info.argv[1], "--flag");
	assert_int_equal(t->nr_modules, 2);
	assert_int_equal(t->nr_nodes, 3);
	assert_false(t->cut_off);
	assert_true(t->has_footer && t->has_end);
	assert_true(t->footer[HS_FC_BYTES] == 396);

	/* events in time order: malloc 1000, malloc 1100, calloc 2000,
	 * realloc (free + alloc) 3000, free 5000 */
	assert_int_equal(t->nr_events, 6);
	assert_int_equal(t->time[0], 1000);
	assert_int_equal(t->op[0], HS_OP_ALLOC);
	assert_true(t->addr[0] == 0x5000 && t->size[0] == 100);
	assert_int_equal(t->time[1], 1100);
	assert_true(t->addr[1] == 0x5100 && t->size[1] == 32);
	assert_int_equal(t->time[2], 2000);
	assert_int_equal(t->fn[2], HS_TAG_CALLOC);
	assert_int_equal(t->time[3], 3000);
	assert_int_equal(t->op[3], HS_OP_FREE);
	assert_true(t->addr[3] == 0x9000);
	assert_int_equal(t->op[4], HS_OP_ALLOC);
	assert_int_equal(t->fn[4], HS_TAG_REALLOC);
	assert_true(t->addr[4] == 0x9800 && t->size[4] == 200);
	assert_int_equal(t->time[5], 5000);
	assert_int_equal(t->op[5], HS_OP_FREE);
	assert_true(t->addr[5] == 0x5000);
	assert_string_equal(t->threads[t->thread[2]].name, "worker");
	assert_true(t->threads[t->thread[0]].tid == 100);

	/* the stack of the second malloc: f <- main <- start */
	n = hs_trace_stack(t, t->stack[1], frames, 8);
	assert_int_equal(n, 3);
	assert_string_equal(hs_trace_frame_name(t, frames[0], name, sizeof(name)),
			    "/usr/bin/prog!0x200");
	assert_string_equal(hs_trace_frame_name(t, frames[1], name, sizeof(name)),
			    "/usr/bin/prog!0x100");
	assert_string_equal(hs_trace_frame_name(t, frames[2], name, sizeof(name)),
			    "/lib/libc.so.6!0x123");
	/* cut as snprintf() cuts: in the path, in "!0x", in the digits */
	assert_string_equal(hs_trace_frame_name(t, frames[0], name, 10), "/usr/bin/");
	assert_string_equal(hs_trace_frame_name(t, frames[0], name, 16),
			    "/usr/bin/prog!0");
	assert_string_equal(hs_trace_frame_name(t, frames[2], name, 20),
			    "/lib/libc.so.6!0x12");
	assert_string_equal(hs_trace_frame_name(t, frames[2], name, 1), "");

	assert_int_equal(hs_heap_totals(t, &s), 0);
	assert_int_equal(s.allocs, 4);
	assert_int_equal(s.frees, 2);
	assert_int_equal(s.reallocs, 1);
	assert_int_equal(s.bytes_allocated, 396);
	assert_int_equal(s.peak_heap, 100 + 32 + 200);
	assert_int_equal(s.peak_ns, 3000);
	assert_int_equal(s.leaked_bytes, 232);
	assert_int_equal(s.leaked_blocks, 2);
	assert_int_equal(s.unmatched_frees, 0);
	assert_int_equal(s.peak_rss, 1 << 20);
}

static void load_reference_trace(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("ref");
	struct hs_trace t;
	struct tb b;
	int z;

	(void)state;
	for (z = 0; z < 2; z++) {
		build_reference(&b, z);
		assert_int_equal(hs_trace_load_mem(b.buf, b.len, "ref", &t, &diag), 0);
		check_reference(&t);
		hs_trace_release(&t);
		free(b.buf);
	}
}

/*
 * Since 2.0 EVENTS chunks may be in columns: they load as the plain ones,
 * cut off anywhere they keep the whole chunks before, and a 1.x file
 * (which has none) still loads, but not with a columnar chunk in it.
 */
static void columnar_chunks(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("cols");
	struct hs_trace t;
	struct tb b;
	char msg[1024];
	size_t cut;
	int z;

	(void)state;
	for (z = TB_COLUMNS; z <= (TB_COLUMNS | 1); z++) {
		build_reference(&b, z);
		assert_int_equal(hs_trace_load_mem(b.buf, b.len, "cols", &t, &diag), 0);
		check_reference(&t);
		hs_trace_release(&t);
		for (cut = HS_FILE_HEADER_SIZE; cut < b.len; cut++) {
			size_t events = 0, whole = 0, i;

			diag = (struct hs_diag)HS_DIAG_INIT("cut");
			assert_int_equal(hs_trace_load_mem(b.buf, cut, "cut", &t, &diag), 0);
			for (i = 0; i < b.seq && b.chunk_end[i] <= cut; i++) {
				whole++;
				events += b.chunk_events[i];
			}
			assert_int_equal(t.nr_chunks, whole);
			/* a realloc counts twice in the loaded events */
			assert_int_equal(t.nr_events, events + (whole >= 2));
			hs_trace_release(&t);
		}
		free(b.buf);
	}

	/* a 1.4 file: plain chunks load */
	build_reference(&b, 1);
	b.buf[8] = 1;
	b.buf[10] = 4;
	diag = (struct hs_diag)HS_DIAG_INIT("v1");
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "v1", &t, &diag), 0);
	check_reference(&t);
	hs_trace_release(&t);
	free(b.buf);
	/* and a columnar chunk there is not one of its chunks */
	build_reference(&b, TB_COLUMNS | 1);
	b.buf[8] = 1;
	diag = (struct hs_diag)HS_DIAG_INIT("v1");
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "v1", &t, &diag), -EINVAL);
	assert_int_equal(diag.offset, HS_FILE_HEADER_SIZE);
	hs_diag_format(&diag, msg, sizeof(msg));
	assert_non_null(strstr(msg, "unknown chunk flags"));
	free(b.buf);
}

/* Cut the reference trace at every offset: a prefix of whole chunks. */
static void truncation_at_every_offset_recovers_a_prefix(void **state)
{
	struct tb b;
	size_t cut;

	(void)state;
	build_reference(&b, 1);
	for (cut = 0; cut <= b.len; cut++) {
		struct hs_diag diag = HS_DIAG_INIT("cut");
		struct hs_trace t;
		size_t whole = 0, events = 0, i;
		int err = hs_trace_load_mem(b.buf, cut, "cut", &t, &diag);

		if (cut < HS_FILE_HEADER_SIZE) {
			assert_int_equal(err, -EINVAL);
			assert_true(diag.set);
			continue;
		}
		assert_int_equal(err, 0);
		for (i = 0; i < b.seq && b.chunk_end[i] <= cut; i++) {
			whole++;
			events += b.chunk_events[i];
		}
		assert_int_equal(t.nr_chunks, whole);
		assert_int_equal(t.cut_off, cut < b.len);
		/* a realloc counts twice in the loaded events */
		assert_int_equal(t.nr_events, events + (whole >= 2));
		if (whole < b.seq)
			assert_int_equal(t.cut_offset, whole ? b.chunk_end[whole - 1]
							     : HS_FILE_HEADER_SIZE);
		hs_trace_release(&t);
	}
	free(b.buf);
}

static void corrupt_chunk_names_its_offset(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("bad");
	struct hs_trace t;
	struct tb b;
	char msg[1024];

	(void)state;
	build_reference(&b, 1);
	/* a byte inside chunk 1's payload */
	b.buf[b.chunk_end[0] + HS_CHUNK_HEADER_SIZE + 2] ^= 0x40;
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "bad", &t, &diag), -EINVAL);
	assert_true(diag.has_offset);
	assert_int_equal(diag.offset, b.chunk_end[0]);
	hs_diag_format(&diag, msg, sizeof(msg));
	assert_non_null(strstr(msg, "check"));
	free(b.buf);

	/* a bad chunk magic */
	build_reference(&b, 0);
	b.buf[b.chunk_end[1]] = 'X';
	diag = (struct hs_diag)HS_DIAG_INIT("bad");
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "bad", &t, &diag), -EINVAL);
	assert_int_equal(diag.offset, b.chunk_end[1]);
	free(b.buf);

	/* not a trace at all */
	diag = (struct hs_diag)HS_DIAG_INIT("text");
	assert_int_equal(hs_trace_load_mem("hello, world, this is text\n", 27, "text",
					   &t, &diag), -EINVAL);
	assert_int_equal(diag.offset, 0);

	/* a major version we do not read */
	build_reference(&b, 0);
	b.buf[8] = HS_TRACE_MAJOR + 1;
	diag = (struct hs_diag)HS_DIAG_INIT("v2");
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "v2", &t, &diag), -EINVAL);
	assert_int_equal(diag.offset, 8);
	free(b.buf);
}

/* A record malformed inside a valid chunk: the message names both offsets. */
static void malformed_record_inside_a_chunk(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("rec");
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	char msg[1024];

	(void)state;
	tb_init(&b);
	p = tb_p(&b);
	p = put_span(p, 1, 0, 0);
	*p++ = 0x3f;		/* invalid tag at payload offset 4 */
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 1);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "rec", &t, &diag), -EINVAL);
	hs_diag_format(&diag, msg, sizeof(msg));
	assert_non_null(strstr(msg, "offset 16"));
	assert_non_null(strstr(msg, "payload offset 4"));
	free(b.buf);
}

/* Random corruption never crashes: either an error or a loaded trace. */
static void random_corruption_is_rejected_or_survived(void **state)
{
	struct tb b;
	unsigned seed = 12345;
	int round, errors = 0;

	(void)state;
	for (round = 0; round < 3000; round++) {
		struct hs_diag diag = HS_DIAG_INIT("fuzz");
		struct hs_trace t;
		uint8_t *copy;
		int k, flips, err;

		build_reference(&b, round & 1);
		copy = malloc(b.len);
		memcpy(copy, b.buf, b.len);
		flips = 1 + (int)(rand_r(&seed) % 4);
		for (k = 0; k < flips; k++)
			copy[rand_r(&seed) % b.len] = (uint8_t)rand_r(&seed);
		err = hs_trace_load_mem(copy, b.len - (rand_r(&seed) % 3 == 0 ?
						       rand_r(&seed) % b.len : 0),
					"fuzz", &t, &diag);
		if (err) {
			assert_int_equal(err, -EINVAL);
			assert_true(diag.set);
			errors++;
		} else {
			hs_trace_release(&t);
		}
		free(copy);
		free(b.buf);
	}
	assert_true(errors > 100);
}

/* A second definition of a node id, an unknown chunk kind, a missing parent. */
static void odd_but_valid_input(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("odd");
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	uint32_t frames[8];
	char name[64];
	size_t n;

	(void)state;
	tb_init(&b);
	p = tb_p(&b);
	p = put_span(p, 1, 0, 0);
	p = put_node(p, 9, 8, 0x10);		/* parent 8 is never defined */
	p = put_node(p, 9, 0, 0x20);		/* ignored: id 9 exists */
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1, 0x100, 8, 9);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1, 0x100, 8, 77);	/* no node 77 */
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 0);
	p = tb_p(&b);
	*p++ = 0x01;
	tb_end(&b, p);
	tb_chunk(&b, 9, 0);			/* unknown kind: skipped */
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "odd", &t, &diag), 0);
	assert_true(t.cut_off);			/* no END chunk */
	assert_int_equal(t.nr_chunks, 2);
	assert_int_equal(t.nr_events, 2);
	n = hs_trace_stack(&t, t.stack[0], frames, 8);
	assert_int_equal(n, 2);
	assert_string_equal(hs_trace_frame_name(&t, frames[0], name, sizeof(name)),
			    "[unknown]!0x10");
	assert_string_equal(hs_trace_frame_name(&t, frames[1], name, sizeof(name)),
			    "BROKEN");
	n = hs_trace_stack(&t, t.stack[1], frames, 8);
	assert_int_equal(n, 1);
	assert_string_equal(hs_trace_frame_name(&t, frames[0], name, sizeof(name)),
			    "BROKEN");
	assert_int_equal(t.missing_nodes, 2);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * Nodes whose parents lead back to themselves (a damaged file): every walk
 * to the root ends, the node where the loop closes BROKEN like a missing
 * parent. 5 is its own parent; 1 -> 3 -> 2 -> 1 (child -> parent); 4 hangs
 * below that loop, which the walk from 1 (the first defined) closes at 2.
 */
static void cyclic_parents_end(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("cyclic");
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	uint32_t frames[16];
	char name[64];
	size_t n, i;

	(void)state;
	tb_init(&b);
	p = tb_p(&b);
	p = put_span(p, 1, 0, 0);
	p = put_node(p, 5, 5, 0x50);
	p = put_node(p, 1, 3, 0x10);
	p = put_node(p, 2, 1, 0x20);
	p = put_node(p, 3, 2, 0x30);
	p = put_node(p, 4, 3, 0x40);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1, 0x100, 8, 5);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 1, 0x200, 8, 4);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 0);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "cyclic", &t, &diag), 0);
	assert_int_equal(t.missing_nodes, 2);	/* one per loop */
	n = hs_trace_stack(&t, t.stack[0], frames, 16);
	assert_int_equal(n, 2);
	assert_string_equal(hs_trace_frame_name(&t, frames[0], name, sizeof(name)),
			    "[unknown]!0x50");
	assert_string_equal(hs_trace_frame_name(&t, frames[1], name, sizeof(name)),
			    "BROKEN");
	n = hs_trace_stack(&t, t.stack[1], frames, 16);
	assert_int_equal(n, 4);			/* 4, 3, 2, BROKEN */
	for (i = 0; i < 3; i++) {
		char want[32];

		snprintf(want, sizeof(want), "[unknown]!0x%x", (unsigned)(0x40 - 0x10 * i));
		assert_string_equal(hs_trace_frame_name(&t, frames[i], name, sizeof(name)),
				    want);
	}
	assert_string_equal(hs_trace_frame_name(&t, frames[3], name, sizeof(name)),
			    "BROKEN");
	hs_trace_release(&t);
	free(b.buf);
}

/* A MODULE_UNLOAD record of module @id, the next node @next_node. */
static uint8_t *put_unload(uint8_t *p, uint64_t ticks, uint64_t id, uint64_t next_node)
{
	uint8_t body[32], *q = hs_enc_module_unload_body(body, ticks, id, next_node);

	return hs_tw_sized(p, HS_TAG_MODULE_UNLOAD, body, (size_t)(q - body));
}

/*
 * Libraries loaded in turn at one address within one tick: each node is
 * named by the one that was loaded when the node was defined (the
 * unloads' next nodes say which), not by one loaded after it.
 */
static void modules_in_turn_at_one_address(void **state)
{
	static const char *const want[] = { "/a.so!0x10", "/b.so!0x10", "/a.so!0x10",
					    "/b.so!0x10" };
	struct hs_trace t;
	struct tb b;
	uint8_t *p;
	char name[64];
	size_t i;

	(void)state;
	tb_init(&b);
	p = tb_p(&b);
	p = put_span(p, 1, 0, 0);
	for (i = 0; i < 4; i++) {
		p = put_module(p, 7, 10 + i, 0x7000, 0x7000, 0x8000, i % 2 ? "/b.so" : "/a.so");
		p = put_node(p, 1 + i, 0, 0x7010);
		p = put_alloc(&b, p, HS_TAG_MALLOC, i ? 0 : 7, i ? 0x10 : 0x100, 8, 1 + i);
		p = put_unload(p, 7, 10 + i, 2 + i);
	}
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 0);
	tb_load(&b, &t);
	assert_int_equal(t.nr_events, 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(hs_trace_frame_name(&t, t.stack[i], name, sizeof(name)),
				    want[(t.addr[i] - 0x100) / 0x10]);
	hs_trace_release(&t);
	free(b.buf);
}

/* The streamed totals agree with the loaded trace's; a cut file too. */
static void scan_agrees_with_load(void **state)
{
	char path[] = "/tmp/hs-scan-XXXXXX";
	struct hs_diag diag = HS_DIAG_INIT("scan");
	struct hs_heap_totals tot;
	struct hs_trace t;
	struct tb b;
	int fd;

	(void)state;
	build_reference(&b, 1);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.buf, b.len), (ssize_t)b.len);
	assert_int_equal(hs_heap_totals_path(path, &t, &tot, &diag), 0);
	assert_int_equal(tot.allocs, 4);
	assert_int_equal(tot.frees, 2);
	assert_int_equal(tot.reallocs, 1);
	assert_int_equal(tot.bytes_allocated, 396);
	assert_int_equal(tot.peak_heap, 332);
	assert_int_equal(tot.leaked_bytes, 232);
	assert_int_equal(tot.leaked_blocks, 2);
	assert_int_equal(tot.unmatched_frees, 0);
	assert_int_equal(tot.peak_rss, 1 << 20);
	assert_int_equal(tot.events, 6);	/* as loaded: the realloc is two */
	assert_false(t.cut_off);
	hs_trace_release(&t);
	/* without the END chunk and half of chunk 1: chunk 0 only */
	assert_int_equal(ftruncate(fd, (off_t)(b.chunk_end[0] + 30)), 0);
	assert_int_equal(hs_heap_totals_path(path, &t, &tot, &diag), 0);
	assert_true(t.cut_off);
	assert_int_equal(t.cut_offset, b.chunk_end[0]);
	assert_int_equal(tot.allocs, 3);
	assert_int_equal(tot.leaked_bytes, 196);
	hs_trace_release(&t);
	close(fd);
	unlink(path);
	free(b.buf);
}

/* Index of the event @op at @addr (for allocations, @addr | size). */
static size_t find_event(const struct hs_trace *t, unsigned op, uint64_t key)
{
	size_t i;

	for (i = 0; i < t->nr_events; i++) {
		uint64_t k = t->op[i] == HS_OP_ALLOC && (key & 0xff) ? t->addr[i] | t->size[i]
								      : t->addr[i];

		if (t->op[i] == op && k == key)
			return i;
	}
	fail_msg("no event %u at 0x%llx", op, (unsigned long long)key);
	return 0;
}

/*
 * Equal times from two threads: the reader orders frees and allocations of
 * one address so that a block is freed before it is allocated again.
 */
static void equal_times_are_ordered_by_address_life(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("tie");
	struct hs_trace t;
	struct tb b;
	uint8_t *p;

	(void)state;
	tb_init(&b);
	p = tb_p(&b);
	/* thread 1 allocates 0x100 at t=5 */
	p = put_span(p, 1, 0, 0);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 5, 0x100, 16, 0);
	/* thread 2, at t=10: allocates 0x100 (reused) and 0x300 (new) */
	p = put_span(p, 2, 0, 0);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 10, 0x100, 32, 0);
	p = put_alloc(&b, p, HS_TAG_MALLOC, 0, 0x200, 48, 0);
	/* thread 1, at t=10: frees 0x100 and 0x300 (handed over by thread 2) */
	p = put_span(p, 1, 5, 0x100);
	p = put_free(&b, p, 5, 0);
	p = put_free(&b, p, 0, 0x200);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 0);
	assert_int_equal(hs_trace_load_mem(b.buf, b.len, "tie", &t, &diag), 0);
	assert_int_equal(t.nr_events, 5);
	/* 0x100: free (thread 1) before the reuse (thread 2) */
	assert_true(find_event(&t, HS_OP_FREE, 0x100) < find_event(&t, HS_OP_ALLOC, 0x100 | 32));
	/* 0x300: allocated (thread 2) before it is freed (thread 1) */
	assert_true(find_event(&t, HS_OP_ALLOC, 0x300) < find_event(&t, HS_OP_FREE, 0x300));
	{
		struct hs_heap_totals s;

		assert_int_equal(hs_heap_totals(&t, &s), 0);
		assert_int_equal(s.unmatched_frees, 0);
		assert_int_equal(s.leaked_bytes, 32);
	}
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * One tick (t=10) in which threads 2, 3, ... each allocate ('a') and
 * free ('f') the block at 0x100 as @seqs[k] says, written thread after
 * thread; thread 1 allocated it at t=5 when @live_before.
 */
static void build_tick(struct tb *b, int live_before, const char *const *seqs, size_t nseqs)
{
	uint8_t *p;
	size_t k, i;

	tb_init(b);
	p = tb_p(b);
	p = put_span(p, 1, 0, 0);
	if (live_before)
		p = put_alloc(b, p, HS_TAG_MALLOC, 5, 0x100, 8, 0);
	for (k = 0; k < nseqs; k++) {
		p = put_span(p, 2 + k, 0, 0);
		for (i = 0; seqs[k][i]; i++) {
			if (seqs[k][i] == 'a')
				p = put_alloc(b, p, HS_TAG_MALLOC, i ? 0 : 10, i ? 0 : 0x100,
					      16 + k, 0);
			else
				p = put_free(b, p, i ? 0 : 10, i ? 0 : 0x100);
		}
	}
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

/* The events of a tick as "2f 3a ...": thread id and operation, in order. */
struct tick_order {
	char s[1 << 16];
	size_t len;
	uint32_t thread[1 << 14];	/* the stream: thread indexes, until mapped */
	char op[1 << 14];
	size_t n;
	int live;			/* the stream: the block at 0x100 */
	size_t unmatched;
};

static void tick_add(struct tick_order *o, uint32_t thread, uint8_t op)
{
	assert_true(o->n < sizeof(o->op));
	o->thread[o->n] = thread;
	o->op[o->n++] = op == HS_OP_FREE ? 'f' : 'a';
	if (op == HS_OP_FREE && !o->live)
		o->unmatched++;
	o->live = op != HS_OP_FREE;
}

static void tick_string(struct tick_order *o, const struct hs_trace *t)
{
	size_t i;

	o->len = 0;
	for (i = 0; i < o->n; i++)
		o->len += (size_t)snprintf(o->s + o->len, sizeof(o->s) - o->len, "%s%llu%c",
					   i ? " " : "",
					   (unsigned long long)t->threads[o->thread[i]].tid,
					   o->op[i]);
}

static int tick_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct tick_order *o = ctx;
	size_t i;

	for (i = 0; i < n; i++)
		if (ev[i].time == 10)
			tick_add(o, ev[i].thread, ev[i].op);
		else if (ev[i].op == HS_OP_ALLOC)
			o->live = 1;
	return 0;
}

static int tick_live(void *ctx, uint64_t addr)
{
	struct tick_order *o = ctx;

	return addr == 0x100 && o->live;
}

/*
 * The order of the tick of build_tick() as hs_trace_load() and
 * hs_trace_stream() give it (they must agree) into @o, which also
 * counts frees of a block that is not live.
 */
static void tick_order(struct tb *b, struct tick_order *o)
{
	static struct tick_order streamed;
	struct hs_trace_sink sink = { .events = tick_events, .live = tick_live };
	struct hs_diag diag = HS_DIAG_INIT("tick");
	struct hs_trace t;
	size_t i;

	memset(o, 0, sizeof(*o));
	tb_load(b, &t);
	for (i = 0; i < t.nr_events; i++)
		if (t.time[i] == 10)
			tick_add(o, t.thread[i], t.op[i]);
		else
			o->live = 1;
	tick_string(o, &t);
	hs_trace_release(&t);

	memset(&streamed, 0, sizeof(streamed));
	sink.ctx = &streamed;
	assert_int_equal(hs_trace_stream_mem(b->buf, b->len, "tick", &t, &sink, &diag), 0);
	tick_string(&streamed, &t);
	hs_trace_release(&t);
	assert_string_equal(streamed.s, o->s);
	assert_int_equal(streamed.unmatched, o->unmatched);
}

/*
 * Equal times of several threads at one address: whole threads'
 * sequences, in the order that alternates allocation and free.
 */
static void ties_alternate_across_threads(void **state)
{
	static const char *const swap[] = { "fa", "af" };
	static const char *const nest[] = { "af", "fa" };
	static const char *const lost[] = { "f", "af" };
	static struct tick_order o;
	struct tb b;

	(void)state;
	/* live before: thread 2 frees and gets it back, thread 3 uses it in
	 * between (taking the first event that fits would let thread 2
	 * allocate it again at once, and thread 3 allocate a live block) */
	build_tick(&b, 1, swap, 2);
	tick_order(&b, &o);
	assert_string_equal(o.s, "2f 3a 3f 2a");
	assert_int_equal(o.unmatched, 0);
	free(b.buf);

	/* free before: thread 3's free and allocation go inside thread 2's life of it */
	build_tick(&b, 0, nest, 2);
	tick_order(&b, &o);
	assert_string_equal(o.s, "2a 3f 3a 2f");
	assert_int_equal(o.unmatched, 0);
	free(b.buf);

	/* no order alternates (a free was lost): each thread's order is kept */
	build_tick(&b, 0, lost, 2);
	tick_order(&b, &o);
	assert_string_equal(o.s, "3a 2f 3f");
	assert_int_equal(o.unmatched, 1);
	free(b.buf);
}

/*
 * A run of thousands of events of one address in one tick: three threads
 * allocate and free it 1000 times each, a fourth frees it (it was live);
 * written in that order, the last thread's free goes first.
 */
static void a_long_run_of_ties(void **state)
{
	static char seq[2001];
	static struct tick_order o;
	const char *seqs[] = { seq, seq, seq, "f" };
	struct tb b;
	size_t i;

	(void)state;
	for (i = 0; i < 2000; i++)
		seq[i] = i % 2 ? 'f' : 'a';
	build_tick(&b, 1, seqs, 4);
	tick_order(&b, &o);
	assert_int_equal(o.n, 6001);
	assert_int_equal(o.unmatched, 0);
	assert_memory_equal(o.s, "5f 2a 2f 2a", 11);
	assert_int_equal(o.len, 6001 * 3 - 1);
	free(b.buf);
}

static void sampling_weight(void **state)
{
	struct hs_trace t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_true(hs_trace_weight(&t, 100) == 1.0);
	t.info.sample_bytes = 1000;
	/* 1 / (1 - e^-1) = 1.5819767... */
	assert_true(hs_trace_weight(&t, 1000) > 1.58197 &&
		    hs_trace_weight(&t, 1000) < 1.58198);
	/* huge blocks are always sampled: weight 1 */
	assert_true(hs_trace_weight(&t, 1000000) == 1.0);
}

/*
 * A crafted trace whose time runs backwards @reps times in one chunk: an
 * EVENTS chunk of @reps spans, of threads 1 and 2 in turn, each from
 * tick 0 with @per mallocs a tick apart (zstd makes it a few hundred
 * bytes), and an END chunk whose footer indexes it. Into @b (tb_init()
 * here).
 */
static void build_backwards(struct tb *b, int reps, int per)
{
	size_t cap = (size_t)reps * ((size_t)per * 8 + 16);
	uint8_t *raw = malloc(cap), *z = malloc(ZSTD_compressBound(cap)), *p = raw;
	uint8_t h[HS_CHUNK_HEADER_SIZE];
	uint64_t counts[HS_FC__COUNT] = { 0 };
	struct hs_chunk_index idx = { HS_FILE_HEADER_SIZE, 0, 0 };
	size_t zn;
	int i, k;

	assert_non_null(raw);
	assert_non_null(z);
	for (i = 0; i < reps; i++) {
		p = hs_enc_span(p, 1 + (i & 1), 0, 0x1000);
		for (k = 0; k < per; k++)
			p = hs_enc_alloc(p, HS_TAG_MALLOC, 1, 0, 16, 0, 0);
	}
	tb_init(b);
	zn = ZSTD_compress(z, ZSTD_compressBound(cap), raw, (size_t)(p - raw), 3);
	assert_false(ZSTD_isError(zn));
	hs_tw_chunk_header(h, HS_CHUNK_EVENTS, HS_CHUNK_ZSTD, (uint32_t)zn, (uint32_t)(p - raw),
			   0, z);
	tb_put(b, h, sizeof(h));
	tb_put(b, z, zn);
	b->seq = 1;
	p = put_end(tb_p(b), (uint64_t)per + 1, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, &idx, 1);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, 1);
	free(raw);
	free(z);
}

/* A sink that checks time order and counts. */
struct ordered {
	size_t n;
	int64_t last;
};

static int ordered_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct ordered *o = ctx;
	size_t i;

	for (i = 0; i < n; i++) {
		assert_true(ev[i].time >= o->last);
		o->last = ev[i].time;
	}
	o->n += n;
	return 0;
}

static int never_live(void *ctx, uint64_t addr)
{
	(void)ctx;
	(void)addr;
	return 0;
}

/*
 * Time that runs backwards again and again costs n log n, not n^2 (a
 * 3 KB file of this kind took 12-20 s): the late runs wait and merge
 * with runs of their size. 400 runs of 1000 events: merging each run
 * into everything staged moved about 80M events.
 */
static void time_running_backwards_is_not_quadratic(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("back");
	struct ordered o = { 0, INT64_MIN };
	struct hs_trace_sink sink = { .events = ordered_events, .live = never_live, .ctx = &o };
	struct hs_trace t;
	struct tb b;
	size_t n = 400 * 1000;

	(void)state;
	build_backwards(&b, 400, 1000);
	assert_true(b.len < 3000);
	assert_int_equal(hs_trace_stream_mem(b.buf, b.len, "back", &t, &sink, &diag), 0);
	assert_int_equal(o.n, n);
	assert_true(t.stream_moves < 20 * n);
	hs_trace_release(&t);
	/* the same events as the loaded trace, in the same order */
	tb_load(&b, &t);
	assert_int_equal(t.nr_events, n);
	assert_int_equal(t.time[0], 1);
	assert_int_equal(t.time[n - 1], 1000);
	hs_trace_release(&t);
	free(b.buf);
}

/* A columnar trace streams the events it loads, in time order. */
static void columnar_chunks_stream(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("cols");
	struct ordered o = { 0, INT64_MIN };
	struct hs_trace_sink sink = { .events = ordered_events, .live = never_live, .ctx = &o };
	struct hs_trace t;
	struct tb b;
	size_t loaded;

	(void)state;
	build_reference(&b, TB_COLUMNS | 1);
	tb_load(&b, &t);
	loaded = t.nr_events;
	hs_trace_release(&t);
	assert_int_equal(hs_trace_stream_mem(b.buf, b.len, "cols", &t, &sink, &diag), 0);
	assert_int_equal(o.n, loaded);
	assert_int_equal(loaded, 6);
	hs_trace_release(&t);
	free(b.buf);
}

/*
 * Three EVENTS chunks: the process, a module, a node and an allocation;
 * allocations only; a node and an allocation. The footer indexes them,
 * with the 1.4 marks (@marked: the first and third hold records other
 * than events) or without.
 */
static void build_marked(struct tb *b, int marked)
{
	static const uint8_t has_records[3] = { 1, 0, 1 };
	struct hs_chunk_index idx[3];
	uint64_t counts[HS_FC__COUNT] = { 0 };
	uint8_t *p;
	int i;

	tb_init(b);
	p = put_span(tb_p(b), 0, 0, 0);
	p = put_process(p);
	p = put_module(p, 0, 1, 0, 0x400000, 0x500000, "/usr/bin/prog");
	p = put_span(p, 7, 10, 0x1000);
	p = put_node(p, 1, 0, 0x401000);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1, 0, 16, 1);
	tb_end(b, p);
	idx[0] = (struct hs_chunk_index){ b->len, 10, 11 };
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
	p = put_span(tb_p(b), 7, 11, 0x1000);
	for (i = 0; i < 100; i++)
		p = put_alloc(b, p, HS_TAG_MALLOC, 1, 64, 32, 1);
	tb_end(b, p);
	idx[1] = (struct hs_chunk_index){ b->len, 11, 111 };
	tb_chunk(b, HS_CHUNK_EVENTS, 0);
	p = put_span(tb_p(b), 7, 111, 0x1000 + 6400);
	p = put_node(p, 2, 1, 0x402000);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1, 64, 48, 2);
	tb_end(b, p);
	idx[2] = (struct hs_chunk_index){ b->len, 111, 112 };
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
	p = put_end(tb_p(b), 113, HS_END_EXIT, 0);
	p = marked ? hs_tw_footer_marked(p, counts, idx, 3, has_records)
		   : hs_tw_footer(p, counts, idx, 3);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, 1);
}

/* Read @b's records after hs_trace_reader_skip_events(): nodes, events. */
static void read_skipping(const struct tb *b, int want_skip, unsigned *nodes,
			  uint64_t *events)
{
	struct hs_diag diag = HS_DIAG_INIT("marked");
	struct hs_trace_reader r;
	struct hs_rec rec;
	int ret;

	assert_int_equal(hs_trace_reader_open_mem(&r, b->buf, b->len, "marked", &diag), 0);
	assert_int_equal(hs_trace_reader_skip_events(&r), want_skip);
	*nodes = 0;
	while ((ret = hs_trace_reader_next(&r, &rec, &diag)) == 1)
		*nodes += rec.tag == HS_TAG_NODE;
	assert_int_equal(ret, 0);
	assert_false(r.cut_off);
	assert_true(r.end_seen);
	assert_true(r.skipped == (uint64_t)want_skip);
	assert_true(r.nr_chunks == 4);
	assert_true(r.data_end == b->len);
	*events = r.nr_events;
	hs_trace_reader_close(&r);
}

/*
 * Symbolize's reading: the chunks the footer marks as events only are
 * stepped over, with the stack tree whole; without the marks, every chunk
 * is read.
 */
static void chunks_of_events_only_are_skipped(void **state)
{
	struct tb b;
	unsigned nodes;
	uint64_t events;

	(void)state;
	build_marked(&b, 1);
	read_skipping(&b, 1, &nodes, &events);
	assert_int_equal(nodes, 2);
	assert_true(events == 2);
	free(b.buf);
	build_marked(&b, 0);
	read_skipping(&b, 0, &nodes, &events);
	assert_int_equal(nodes, 2);
	assert_true(events == 102);
	free(b.buf);
}

/*
 * @nr EVENTS chunks as the collector writes them with --cpu: the process,
 * a module, a node and an allocation; then allocations only; except
 * chunk @at, where the sampler's SAMPLING record is (after its SPAN, or
 * first in the chunk with @first). The footer marks chunk 0 and @at as
 * holding records other than events (@marked) or has no marks.
 */
static void build_sampling(struct tb *b, int nr, int at, int first, int marked)
{
	struct hs_chunk_index idx[12];
	uint8_t has_records[12] = {0};
	uint64_t counts[HS_FC__COUNT] = {0};
	uint8_t body[5 * HS_VARINT_MAX], *p, *q;
	uint64_t ticks = 10, addr = 0x1000;
	int c, i;

	assert_true(nr <= 12 && at < nr);
	tb_init(b);
	for (c = 0; c < nr; c++) {
		idx[c] = (struct hs_chunk_index){b->len, ticks, ticks + 20};
		p = tb_p(b);
		if (c == 0) {
			p = put_span(p, 0, 0, 0);
			p = put_process(p);
			p = put_module(p, 0, 1, 0, 0x400000, 0x500000, "/usr/bin/prog");
			has_records[c] = 1;
		}
		if (c == at) {
			q = hs_enc_sampling_body(body, ticks, 99, 0, 34, 2);
			if (!first)
				p = put_span(p, 8, ticks, 0);
			p = hs_tw_sized(p, HS_TAG_SAMPLING, body, (size_t)(q - body));
			has_records[c] = 1;
		}
		p = put_span(p, 7, ticks, addr);
		if (c == 0)
			p = put_node(p, 1, 0, 0x401000);
		for (i = 0; i < 20; i++) {
			p = put_alloc(b, p, HS_TAG_MALLOC, 1, 64, 32, 1);
			addr += 64;
		}
		ticks += 20;
		tb_end(b, p);
		tb_chunk(b, HS_CHUNK_EVENTS, c == 0);
	}
	p = put_end(tb_p(b), ticks, HS_END_EXIT, 0);
	p = marked ? hs_tw_footer_marked(p, counts, idx, (size_t)nr, has_records)
		   : hs_tw_footer(p, counts, idx, (size_t)nr);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, 1);
}

/* hs_trace_peek_sampling() of @b's bytes in a file */
static int peek_sampling(const struct tb *b, struct hs_trace_sampling *s)
{
	char path[] = "/tmp/hs-peek-XXXXXX";
	struct hs_diag diag = HS_DIAG_INIT("peek");
	int fd, ret;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->buf, b->len), (ssize_t)b->len);
	close(fd);
	ret = hs_trace_peek_sampling(path, s, &diag);
	unlink(path);
	return ret;
}

/*
 * The peek finds SAMPLING where a reading of every record from the start
 * does: in chunks 0 to 7 and as chunk 8's first record, not later; with
 * the marks it steps over the chunks of events only unread (a damaged
 * one goes unseen), without them it reads them.
 */
static void sampling_is_peeked_past_the_first_chunk(void **state)
{
	static const struct {
		int at, first, found;
	} cases[] = {
	    {0, 0, 1}, {3, 0, 1}, {7, 0, 1}, {8, 1, 1}, {8, 0, 0}, {9, 1, 0}, {11, 0, 0},
	};
	struct hs_trace_sampling s;
	struct tb b;
	size_t k;
	int marked;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		for (marked = 0; marked < 2; marked++) {
			build_sampling(&b, 12, cases[k].at, cases[k].first, marked);
			assert_int_equal(peek_sampling(&b, &s), cases[k].found);
			assert_int_equal(s.present, cases[k].found);
			if (cases[k].found) {
				assert_true(s.cpu_hz == 99 && s.wall_hz == 0);
				assert_true(s.signal == 34 && s.flags == 2);
			}
			free(b.buf);
		}
	}
	/* chunk 2 holds events only: damaged, it stops a reading of every
	 * chunk, not the peek that the marks let step over it */
	for (marked = 0; marked < 2; marked++) {
		build_sampling(&b, 6, 4, 0, marked);
		b.buf[b.chunk_end[1] + HS_CHUNK_HEADER_SIZE + 3] ^= 0x40;
		assert_int_equal(peek_sampling(&b, &s), marked ? 1 : -EINVAL);
		free(b.buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(varint_lengths_and_round_trip),
		cmocka_unit_test(varint_rejects_overlong),
		cmocka_unit_test(varint_with_bytes_after_it),
		cmocka_unit_test(zigzag),
		cmocka_unit_test(decode_records_with_span_state),
		cmocka_unit_test(chunk_header_round_trip),
		cmocka_unit_test(load_reference_trace),
		cmocka_unit_test(columnar_chunks),
		cmocka_unit_test(columnar_chunks_stream),
		cmocka_unit_test(truncation_at_every_offset_recovers_a_prefix),
		cmocka_unit_test(corrupt_chunk_names_its_offset),
		cmocka_unit_test(malformed_record_inside_a_chunk),
		cmocka_unit_test(random_corruption_is_rejected_or_survived),
		cmocka_unit_test(odd_but_valid_input),
		cmocka_unit_test(cyclic_parents_end),
		cmocka_unit_test(modules_in_turn_at_one_address),
		cmocka_unit_test(equal_times_are_ordered_by_address_life),
		cmocka_unit_test(ties_alternate_across_threads),
		cmocka_unit_test(a_long_run_of_ties),
		cmocka_unit_test(scan_agrees_with_load),
		cmocka_unit_test(time_running_backwards_is_not_quadratic),
		cmocka_unit_test(sampling_weight),
		cmocka_unit_test(chunks_of_events_only_are_skipped),
		cmocka_unit_test(sampling_is_peeked_past_the_first_chunk),
	};
	return cmocka_run_group_tests_name("trace_format", tests, NULL, NULL);
}
