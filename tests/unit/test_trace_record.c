/*
 * Tests of the record codec (format/trace_record.h): every encoder's
 * record decodes to what was encoded, the inline decoder of fixed records
 * agrees with the generic one, and the one rule of what events a record
 * stands for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "format/trace_reader.h"
#include "format/trace_record.h"
#include "format/trace_writer.h"

/* Decode the one record in [buf, end) with state @st; it must use all of it. */
static void decode_one(const uint8_t *buf, const uint8_t *end, struct hs_rec_state *st,
		       struct hs_rec *rec)
{
	const uint8_t *q = buf;
	const char *why = NULL;

	assert_int_equal(hs_rec_decode(&q, end, st, rec, &why), 0);
	assert_ptr_equal(q, end);
}

static void fixed_records_round_trip(void **state)
{
	struct hs_rec_state st = { 0 }, st2;
	struct hs_rec rec, fast;
	uint8_t buf[256] = { 0 }, *p;
	const uint8_t *q;
	const char *why;

	(void)state;
	p = hs_enc_span(buf, 42, 1000, 0x10000);
	decode_one(buf, p, &st, &rec);
	assert_int_equal(rec.tag, HS_TAG_SPAN);
	assert_true(st.tid == 42 && st.ticks == 1000 && st.addr == 0x10000);

	p = hs_enc_node(buf, 7, 3, 0x401000);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.tag == HS_TAG_NODE && rec.id == 7 && rec.parent == 3 &&
		    rec.addr == 0x401000);

	p = hs_enc_alloc(buf, HS_TAG_MEMALIGN, 5, 0x40, 4096, 7, 64);
	st2 = st;
	decode_one(buf, p, &st, &rec);
	assert_true(rec.tag == HS_TAG_MEMALIGN && rec.tid == 42 && rec.ticks == 1005 &&
		    rec.addr == 0x10040 && rec.size == 4096 && rec.stack == 7 &&
		    rec.align == 64);
	/* the inline decoder agrees, from the same state */
	q = buf;
	memset(&fast, 0xa5, sizeof(fast));
	assert_int_equal(hs_rec_decode_fixed(&q, p, &st2, &fast, &why), 1);
	assert_ptr_equal(q, p);
	assert_true(fast.ticks == rec.ticks && fast.addr == rec.addr && fast.size == rec.size &&
		    fast.stack == rec.stack && fast.align == rec.align && fast.old_addr == 0 &&
		    fast.lead == 0 && fast.value == 0);
	assert_memory_equal(&st, &st2, sizeof(st));

	/* MALLOC has no alignment: @align is not written */
	p = hs_enc_alloc(buf, HS_TAG_MALLOC, 1, 0x100, 24, 0, 999);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.ticks == 1006 && rec.addr == 0x10140 && rec.size == 24 && rec.align == 0);

	p = hs_enc_realloc(buf, HS_TAG_REALLOCARRAY, 2, 0x1000, 80, 7, -0x1000, 1);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.addr == 0x11140 && rec.old_addr == 0x10140 && rec.lead == 1 &&
		    rec.ticks == 1008 && rec.size == 80);
	/* a realloc in place: old minus new is 0, the old address is the new one */
	p = hs_enc_realloc(buf, HS_TAG_REALLOC, 0, 0, 96, 7, 0, 0);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.old_addr == 0x11140 && rec.addr == 0x11140);

	p = hs_enc_free(buf, HS_TAG_REALLOC_FREE, 1, -0x1000);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.tag == HS_TAG_REALLOC_FREE && rec.addr == 0x10140 && rec.ticks == 1009);
	/* since 1.5: a sampled temporary block's free, a FREE otherwise */
	p = hs_enc_free(buf, HS_TAG_FREE_TEMPORARY, 0, 0);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.tag == HS_TAG_FREE_TEMPORARY && rec.addr == 0x10140 &&
		    rec.ticks == 1009);
	assert_string_equal(hs_tag_name(HS_TAG_FREE_TEMPORARY), "free-temporary");

	p = hs_enc_mmap(buf, 1, 0x100000, 8192, 3, 0x22, 7);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.tag == HS_TAG_MMAP && rec.addr == 0x110140 && rec.size == 8192 &&
		    rec.prot == 3 && rec.flags == 0x22 && rec.stack == 7);

	p = hs_enc_munmap(buf, 1, 0x1000, 4096);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.tag == HS_TAG_MUNMAP && rec.addr == 0x111140 && rec.size == 4096);

	p = hs_enc_mremap(buf, 1, 0x10000, 16384, 7, -0x10000, 4096);
	decode_one(buf, p, &st, &rec);
	assert_true(rec.tag == HS_TAG_MREMAP && rec.addr == 0x121140 && rec.size == 16384 &&
		    rec.old_addr == 0x111140 && rec.old_size == 4096 && rec.ticks == 1012);

	/* not a fixed record: the inline decoder leaves it */
	buf[0] = HS_TAG_RSS;
	q = buf;
	assert_int_equal(hs_rec_decode_fixed(&q, buf + 4, &st, &fast, &why), 0);
	assert_ptr_equal(q, buf);
	/* cut short: -1, nothing moves */
	p = hs_enc_alloc(buf, HS_TAG_MALLOC, 1, 1, 1 << 20, 7, 0);
	q = buf;
	st2 = st;
	assert_int_equal(hs_rec_decode_fixed(&q, p - 1, &st, &fast, &why), -1);
	assert_ptr_equal(q, buf);
	assert_memory_equal(&st, &st2, sizeof(st));
	assert_non_null(why);
}

/*
 * Frame the body [body, end) as a sized record of @tag and decode it.
 * A decoded record borrows its strings from the bytes it was read from,
 * so those outlive the call (until the next one).
 */
static void sized(unsigned tag, const uint8_t *body, const uint8_t *end, struct hs_rec *rec)
{
	static uint8_t rec_buf[512];
	uint8_t *p;
	struct hs_rec_state st = { .tid = 9 };

	p = hs_tw_sized(rec_buf, tag, body, (size_t)(end - body));
	decode_one(rec_buf, p, &st, rec);
	assert_int_equal(rec->tag, tag);
}

static void sized_bodies_round_trip(void **state)
{
	uint8_t body[256] = { 0 };
	struct hs_rec rec;

	(void)state;
	sized(HS_TAG_CLOCK, body, hs_enc_clock_body(body, 10, 20), &rec);
	assert_true(rec.ticks == 10 && rec.value == 20);
	sized(HS_TAG_RSS, body, hs_enc_rss_body(body, 11, 1 << 20), &rec);
	assert_true(rec.ticks == 11 && rec.value == 1 << 20);
	sized(HS_TAG_MODULE, body,
	      hs_enc_module_body(body, 12, 3, 0x1000, 0x1000, 0x5000, "/bin/x", 6, "\x01\x02", 2),
	      &rec);
	assert_true(rec.ticks == 12 && rec.id == 3 && rec.bias == 0x1000 &&
		    rec.start == 0x1000 && rec.end == 0x5000 && rec.str_len == 6 &&
		    !memcmp(rec.str, "/bin/x", 6) && rec.bytes_len == 2 && rec.bytes[1] == 2);
	sized(HS_TAG_MODULE_UNLOAD, body, hs_enc_module_unload_body(body, 13, 3, 77), &rec);
	assert_true(rec.ticks == 13 && rec.id == 3 && rec.parent == 77);
	sized(HS_TAG_THREAD_START, body, hs_enc_thread_start_body(body, 14, "main", 4), &rec);
	assert_true(rec.ticks == 14 && rec.str_len == 4 && !memcmp(rec.str, "main", 4));
	sized(HS_TAG_THREAD_NAME, body, hs_enc_thread_name_body(body, 15, 44, "io", 2), &rec);
	assert_true(rec.ticks == 15 && rec.id == 44 && rec.str_len == 2);
	sized(HS_TAG_THREAD_EXIT, body, hs_enc_thread_exit_body(body, 16), &rec);
	assert_true(rec.ticks == 16);
	sized(HS_TAG_FORK, body, hs_enc_fork_body(body, 17, 1234, 1), &rec);
	assert_true(rec.ticks == 17 && rec.id == 1234 && rec.parent == 1);
	sized(HS_TAG_EXEC, body, hs_enc_exec_body(body, 18, "/bin/sh", 7), &rec);
	assert_true(rec.ticks == 18 && rec.str_len == 7);
	sized(HS_TAG_END, body, hs_enc_end_body(body, 19, HS_END_SIGNAL, 11), &rec);
	assert_true(rec.ticks == 19 && rec.value == HS_END_SIGNAL && rec.detail == 11);
	sized(HS_TAG_SAMPLE, body, hs_enc_sample_body(body, 20, 55, HS_SAMPLE_WALL_READY,
						      1000000, 8), &rec);
	assert_true(rec.ticks == 20 && rec.id == 55 && rec.value == HS_SAMPLE_WALL_READY &&
		    rec.size == 1000000 && rec.stack == 8 && rec.tid == 9);
	sized(HS_TAG_SAMPLING, body, hs_enc_sampling_body(body, 21, 999, 100, 34, 1), &rec);
	assert_true(rec.ticks == 21 && rec.value == 999 && rec.detail == 100 && rec.id == 34 &&
		    rec.flags == 1);
	sized(HS_TAG_SAMPLING_END, body, hs_enc_sampling_end_body(body, 22, 5, 6, 7, 8), &rec);
	assert_true(rec.ticks == 22 && rec.value == 5 && rec.detail == 6 && rec.size == 7 &&
		    rec.old_size == 8);
}

/* The events of the record in [buf, end), decoded from state @st. */
static unsigned events_of(const uint8_t *buf, const uint8_t *end, struct hs_rec_state *st,
			  struct hs_rec_event ev[2])
{
	struct hs_rec rec;

	decode_one(buf, end, st, &rec);
	return hs_rec_events(&rec, ev);
}

static void a_realloc_that_freed_and_an_mremap_are_two_events(void **state)
{
	struct hs_rec_state st = { .tid = 5, .ticks = 100, .addr = 0x1000 };
	struct hs_rec_event ev[2];
	uint8_t buf[128] = { 0 }, *p;

	(void)state;
	p = hs_enc_alloc(buf, HS_TAG_CALLOC, 1, 0, 32, 3, 0);
	assert_int_equal(events_of(buf, p, &st, ev), 1);
	assert_true(ev[0].op == HS_OP_ALLOC && ev[0].ticks == 101 && ev[0].addr == 0x1000 &&
		    ev[0].size == 32 && ev[0].stack == 3 && ev[0].tid == 5);

	/* realloc 0x1000 -> 0x2000, the old block freed 1 tick before it returned */
	p = hs_enc_realloc(buf, HS_TAG_REALLOC, 9, 0x1000, 64, 4, -0x1000, 1);
	assert_int_equal(events_of(buf, p, &st, ev), 2);
	assert_true(ev[0].op == HS_OP_FREE && ev[0].ticks == 109 && ev[0].addr == 0x1000 &&
		    ev[0].size == 0 && ev[0].stack == 0);
	assert_true(ev[1].op == HS_OP_ALLOC && ev[1].ticks == 110 && ev[1].addr == 0x2000 &&
		    ev[1].size == 64 && ev[1].stack == 4);
	/* a lead longer than the time: the free is at 0 */
	p = hs_enc_realloc(buf, HS_TAG_REALLOC, 0, 0, 64, 4, 0x10, 1000);
	assert_int_equal(events_of(buf, p, &st, ev), 2);
	assert_true(ev[0].ticks == 0 && ev[0].addr == 0x2010 && ev[1].ticks == 110);
	/* realloc(NULL, n): the old address is 0, one allocation */
	p = hs_enc_realloc(buf, HS_TAG_REALLOC, 0, 0x1000, 8, 4, -0x3000, 0);
	assert_int_equal(events_of(buf, p, &st, ev), 1);
	assert_true(ev[0].op == HS_OP_ALLOC && ev[0].addr == 0x3000);

	p = hs_enc_free(buf, HS_TAG_FREE, 0, 0);
	assert_int_equal(events_of(buf, p, &st, ev), 1);
	assert_true(ev[0].op == HS_OP_FREE && ev[0].addr == 0x3000 && ev[0].size == 0);
	p = hs_enc_free(buf, HS_TAG_FREE_TEMPORARY, 0, 0);
	assert_int_equal(events_of(buf, p, &st, ev), 1);
	assert_true(ev[0].op == HS_OP_FREE && ev[0].addr == 0x3000 && ev[0].size == 0 &&
		    ev[0].stack == 0);

	p = hs_enc_mmap(buf, 1, 0x7000, 4096, 3, 0x22, 6);
	assert_int_equal(events_of(buf, p, &st, ev), 1);
	assert_true(ev[0].op == HS_OP_MMAP && ev[0].addr == 0xa000 && ev[0].size == 4096 &&
		    ev[0].stack == 6);
	p = hs_enc_munmap(buf, 1, 0, 4096);
	assert_int_equal(events_of(buf, p, &st, ev), 1);
	assert_true(ev[0].op == HS_OP_MUNMAP && ev[0].size == 4096 && ev[0].stack == 0);

	/* mremap 0xa000 (4096) -> 0x20000 (8192): an munmap, then an mmap */
	p = hs_enc_mremap(buf, 1, 0x16000, 8192, 6, -0x16000, 4096);
	assert_int_equal(events_of(buf, p, &st, ev), 2);
	assert_true(ev[0].op == HS_OP_MUNMAP && ev[0].addr == 0xa000 && ev[0].size == 4096 &&
		    ev[0].ticks == 113);
	assert_true(ev[1].op == HS_OP_MMAP && ev[1].addr == 0x20000 && ev[1].size == 8192 &&
		    ev[1].stack == 6 && ev[1].ticks == 113);

	/* records that are no events */
	p = hs_enc_span(buf, 6, 0, 0);
	assert_int_equal(events_of(buf, p, &st, ev), 0);
	p = hs_enc_node(buf, 9, 0, 0x1234);
	assert_int_equal(events_of(buf, p, &st, ev), 0);
}

static void a_sample_is_an_event_of_its_thread(void **state)
{
	struct hs_rec_state st = { .tid = 5 };
	struct hs_rec_event ev[2];
	uint8_t body[64] = { 0 }, buf[80] = { 0 }, *q, *p;
	unsigned kind;

	(void)state;
	for (kind = HS_SAMPLE_CPU; kind <= HS_SAMPLE_WALL_READY + 1; kind++) {
		q = hs_enc_sample_body(body, 50, kind == HS_SAMPLE_CPU ? 0 : 77, kind, 1000, 2);
		p = hs_tw_sized(buf, HS_TAG_SAMPLE, body, (size_t)(q - body));
		if (kind > HS_SAMPLE_WALL_READY) {
			/* a kind from a newer version */
			assert_int_equal(events_of(buf, p, &st, ev), 0);
			continue;
		}
		assert_int_equal(events_of(buf, p, &st, ev), 1);
		assert_true(ev[0].op == HS_OP_SAMPLE && ev[0].addr == kind &&
			    ev[0].size == 1000 && ev[0].stack == 2 && ev[0].ticks == 50);
		/* thread 0: the span's */
		assert_true(ev[0].tid == (kind == HS_SAMPLE_CPU ? 5 : 77));
	}
	q = hs_enc_rss_body(body, 1, 2);
	p = hs_tw_sized(buf, HS_TAG_RSS, body, (size_t)(q - body));
	assert_int_equal(events_of(buf, p, &st, ev), 0);
}

/* PROCESS: the body encoder and hs_trace_info_decode() agree; long arguments are cut. */
static void process_round_trip(void **state)
{
	static char long_arg[HS_ARG_MAX + 100];
	const char *argv[] = { "./prog", "", long_arg };
	struct hs_process_info info = {
		.pid = 77, .ppid = 1, .page_size = 4096, .sample_bytes = 524288,
		.max_depth = 64, .unwind = HS_UNWIND_LIBUNWIND, .clock = HS_CLOCK_NS,
		.start_realtime_ns = 1700000000123456789ull, .flags = 0, .parent_pid = 5,
		.exe = "/usr/bin/prog", .comm = "prog", .cwd = "/", .argc = 3, .argv = argv,
	};
	uint8_t buf[HS_ARG_MAX + 1024], *p;
	struct hs_trace_info back;
	const char *why = NULL;

	(void)state;
	memset(long_arg, 'x', sizeof(long_arg) - 1);
	assert_true(hs_enc_process_body_size(&info) < sizeof(buf));
	p = hs_enc_process_body(buf, &info);
	assert_true((size_t)(p - buf) <= hs_enc_process_body_size(&info));
	memset(&back, 0, sizeof(back));
	assert_int_equal(hs_trace_info_decode(buf, (size_t)(p - buf), &back, &why), 0);
	assert_true(back.pid == 77 && back.ppid == 1 && back.page_size == 4096);
	assert_true(back.sample_bytes == 524288 && back.max_depth == 64);
	assert_true(back.start_realtime_ns == info.start_realtime_ns && back.parent_pid == 5);
	assert_string_equal(back.exe, "/usr/bin/prog");
	assert_string_equal(back.comm, "prog");
	assert_string_equal(back.cwd, "/");
	assert_true(back.argc == 3);
	assert_string_equal(back.argv[0], "./prog");
	assert_string_equal(back.argv[1], "");
	assert_int_equal(strlen(back.argv[2]), HS_ARG_MAX);
	hs_trace_info_release(&back);
}

/* Since 1.4: the marks of the chunks that hold records other than events. */
static void footer_marks_round_trip(void **state)
{
	uint64_t counts[HS_FC__COUNT] = { 0 }, back[HS_FC__COUNT], n, at = 0, i;
	struct hs_chunk_index idx[5] = { { 16, 0, 1 }, { 100, 1, 2 }, { 200, 2, 3 },
					 { 300, 3, 4 }, { 400, 4, 5 } }, e;
	static const uint8_t marks[5] = { 0, 1, 1, 0, 1 };
	static const uint64_t want[3] = { 1, 2, 4 };
	uint8_t buf[512] = { 0 }, *p;
	struct hs_rec_state st = { 0 };
	struct hs_rec rec;
	const uint8_t *q, *end;

	(void)state;
	p = hs_tw_footer_marked(buf, counts, idx, 5, marks);
	decode_one(buf, p, &st, &rec);
	q = rec.body;
	end = rec.body + rec.body_len;
	assert_int_equal(hs_footer_counts(&q, end, back), 0);
	assert_int_equal(hs_footer_index_len(&q, end, &n), 0);
	assert_true(n == 5);
	for (i = 0; i < n; i++)
		assert_int_equal(hs_footer_index_next(&q, end, &e), 0);
	assert_int_equal(hs_footer_marks_len(&q, end, &n), 0);
	assert_true(n == 3);
	for (i = 0; i < n; i++) {
		assert_int_equal(hs_footer_mark_next(&q, end, i, &at), 0);
		assert_true(at == want[i]);
	}
	assert_ptr_equal(q, end);
	/* a second mark at the same entry is malformed */
	q = (const uint8_t[]){ 0 };
	at = 3;
	assert_int_equal(hs_footer_mark_next(&q, q + 1, 1, &at), -1);
}

static void footer_round_trip(void **state)
{
	uint64_t counts[HS_FC__COUNT], back[HS_FC__COUNT], n;
	struct hs_chunk_index idx[2] = { { 16, 5, 9 }, { 4000, 7, UINT64_MAX } }, e;
	uint8_t buf[512] = { 0 }, *p;
	struct hs_rec_state st = { 0 };
	struct hs_rec rec;
	const uint8_t *q, *end;
	unsigned i;

	(void)state;
	for (i = 0; i < HS_FC__COUNT; i++)
		counts[i] = 1000 * i + 1;
	p = hs_tw_footer(buf, counts, idx, 2);
	decode_one(buf, p, &st, &rec);
	assert_int_equal(rec.tag, HS_TAG_FOOTER);
	q = rec.body;
	end = rec.body + rec.body_len;
	assert_int_equal(hs_footer_counts(&q, end, back), 0);
	assert_memory_equal(back, counts, sizeof(counts));
	assert_int_equal(hs_footer_index_len(&q, end, &n), 0);
	assert_true(n == 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(hs_footer_index_next(&q, end, &e), 0);
		assert_memory_equal(&e, &idx[i], sizeof(e));
	}
	assert_ptr_equal(q, end);
	assert_int_equal(hs_footer_index_next(&q, end, &e), -1);
	/* no 1.4 marks */
	assert_int_equal(hs_footer_marks_len(&q, end, &n), 1);
	/* cut inside the counts */
	q = rec.body;
	assert_int_equal(hs_footer_counts(&q, rec.body + 3, back), -1);
}

/* --- columnar chunks ------------------------------------------------------ */

/* A payload with every event kind, SPAN, NODE and sized records; its end. */
static uint8_t *every_record(uint8_t *p)
{
	uint8_t body[64], *q;

	p = hs_enc_span(p, 42, 1000, 0x10000);
	q = hs_enc_thread_start_body(body, 1000, "main", 4);
	p = hs_tw_sized(p, HS_TAG_THREAD_START, body, (size_t)(q - body));
	p = hs_enc_node(p, 1, 0, 0x401234);
	p = hs_enc_node(p, 300, 1, 0x7f0000001234);
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, 0x50, 24, 300, 0);
	p = hs_enc_alloc(p, HS_TAG_CALLOC, 1000000, -0x5000, 1u << 20, 1, 0);
	p = hs_enc_alloc(p, HS_TAG_VALLOC, 0, 0x1000, 4096, 0, 4096);
	p = hs_enc_alloc(p, HS_TAG_PVALLOC, 0, 0x1000, 5000, 1, 4096);
	p = hs_enc_alloc(p, HS_TAG_POSIX_MEMALIGN, 3, 0x40, 100, 1, 64);
	p = hs_enc_alloc(p, HS_TAG_ALIGNED_ALLOC, 0, 0x40, 128, 300, 128);
	p = hs_enc_alloc(p, HS_TAG_MEMALIGN, 0, -0x40, 256, 300, 256);
	p = hs_enc_realloc(p, HS_TAG_REALLOC, 1, 0x100, 512, 300, -0x100, 7);
	p = hs_enc_realloc(p, HS_TAG_REALLOCARRAY, 0, 0, 1024, 1, 0, 0);
	p = hs_enc_free(p, HS_TAG_FREE, 0, -0x30);
	p = hs_enc_free(p, HS_TAG_REALLOC_FREE, 2, INT64_MIN);
	p = hs_enc_free(p, HS_TAG_FREE_TEMPORARY, 1, 0x30);
	q = hs_enc_clock_body(body, 5000, 1 << 22);
	p = hs_tw_sized(p, HS_TAG_RSS, body, (size_t)(q - body));
	p = hs_enc_mmap(p, 9, 0x7f0000000000, 1 << 21, 3, 0x22, 300);
	p = hs_enc_munmap(p, 0, 0x1000, 4096);
	p = hs_enc_mremap(p, 1, 0x200000, 1 << 22, 1, -0x200000, 1 << 21);
	p = hs_enc_span(p, 43, 0, 0);
	return hs_enc_free(p, HS_TAG_FREE, 5, UINT64_MAX >> 1);
}

/* Split, then joined back: the same bytes; the streams hold what they should. */
static void columns_round_trip(void **state)
{
	static uint8_t in[4096], scratch[6 * (sizeof(in) + HS_CS_SLACK)],
		cols[sizeof(in) + HS_CS_HEADER_MAX], out[sizeof(cols) + HS_CS_SLACK];
	const uint8_t *q;
	const char *why = NULL;
	uint64_t len[HS_CS__COUNT];
	size_t n, c, got = 0, sum = 0;
	unsigned i;

	(void)state;
	n = (size_t)(every_record(in) - in);
	c = hs_chunk_split(in, n, scratch, cols);
	assert_true(c > n && c <= n + HS_CS_HEADER_MAX);
	q = cols;
	for (i = 0; i < HS_CS__COUNT; i++) {
		assert_int_equal(hs_get_varint(&q, cols + c, &len[i]), 0);
		sum += len[i];
	}
	/* 16 events, one time each: 15 of one byte and 1000000's three */
	assert_int_equal(len[HS_CS_TIME], 18);
	/* 11 events have a stack, of one byte each but the five 300s (two) */
	assert_int_equal(len[HS_CS_STACK], 11 + 5);
	assert_int_equal(c - (size_t)(q - cols), n);
	assert_true(sum < n);
	assert_int_equal(hs_chunk_join(cols, c, out, sizeof(out), &got, &why), 0);
	assert_int_equal(got, n);
	assert_memory_equal(out, in, n);

	/* in place: the same columns */
	memcpy(out, in, n);
	assert_int_equal(hs_chunk_split(out, n, scratch, out), c);
	assert_memory_equal(out, cols, c);

	/* an empty payload is five empty columns */
	c = hs_chunk_split(in, 0, scratch, cols);
	assert_int_equal(c, HS_CS__COUNT);
	assert_int_equal(hs_chunk_join(cols, c, out, sizeof(out), &got, &why), 0);
	assert_int_equal(got, 0);

	/* too little room is refused before anything is written */
	assert_int_equal(hs_chunk_join(cols, c, out, c, &got, &why), -1);
}

/*
 * Many events of random kinds and values (varints of 1 to 10 bytes), with
 * the other records among them: split and joined, the same bytes, however
 * the split's 64-byte windows fall.
 */
static void columns_round_trip_at_length(void **state)
{
	static uint8_t in[1 << 16], scratch[6 * (sizeof(in) + HS_CS_SLACK)],
		cols[sizeof(in) + HS_CS_HEADER_MAX], out[sizeof(cols) + HS_CS_SLACK];
	static const unsigned tags[] = { HS_TAG_MALLOC,	       HS_TAG_FREE,
					 HS_TAG_REALLOC,       HS_TAG_MEMALIGN,
					 HS_TAG_MMAP,	       HS_TAG_MREMAP,
					 HS_TAG_MUNMAP,	       HS_TAG_REALLOC_FREE };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	const char *why;
	size_t n, c, got, cut;
	uint8_t *p = in;

	(void)state;
	while ((size_t)(p - in) < sizeof(in) - 128) {
		uint64_t v[6];
		unsigned i;

		for (i = 0; i < 6; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v[i] = x >> (x & 63); /* any length */
		}
		i = (unsigned)(x % 9); /* 8: a NODE or a SPAN */
		switch (i < 8 ? tags[i] : 0) {
		case HS_TAG_MALLOC:
			p = hs_enc_alloc(p, HS_TAG_MALLOC, (int64_t)v[0], (int64_t)v[1], v[2],
					 v[3], 0);
			break;
		case HS_TAG_FREE:
		case HS_TAG_REALLOC_FREE:
			p = hs_enc_free(p, HS_TAG_FREE, (int64_t)v[0], (int64_t)v[1]);
			break;
		case HS_TAG_REALLOC:
			p = hs_enc_realloc(p, HS_TAG_REALLOC, (int64_t)v[0], (int64_t)v[1], v[2],
					   v[3], (int64_t)v[4], v[5]);
			break;
		case HS_TAG_MEMALIGN:
			p = hs_enc_alloc(p, HS_TAG_MEMALIGN, (int64_t)v[0], (int64_t)v[1], v[2],
					 v[3], v[4]);
			break;
		case HS_TAG_MMAP:
			p = hs_enc_mmap(p, (int64_t)v[0], (int64_t)v[1], v[2], v[3], v[4], v[5]);
			break;
		case HS_TAG_MREMAP:
			p = hs_enc_mremap(p, (int64_t)v[0], (int64_t)v[1], v[2], v[3],
					  (int64_t)v[4], v[5]);
			break;
		case HS_TAG_MUNMAP:
			p = hs_enc_munmap(p, (int64_t)v[0], (int64_t)v[1], v[2]);
			break;
		default:
			p = x & 1 ? hs_enc_node(p, v[0] | 1, v[1], v[2])
				  : hs_enc_span(p, v[0], v[1], v[2]);
		}
	}
	n = (size_t)(p - in);
	for (cut = n - 300; cut <= n; cut++) {
		/* every end: the last events go through the split's slow part */
		const uint8_t *q = in;
		struct hs_rec_state st = { 0 };
		struct hs_rec rec;
		size_t whole = 0;

		while (q < in + cut && !hs_rec_decode(&q, in + cut, &st, &rec, &why))
			whole = (size_t)(q - in);
		if (cut == n)
			assert_int_equal(whole, n);
		c = hs_chunk_split(in, whole, scratch, cols);
		assert_true(c > 0);
		assert_int_equal(hs_chunk_join(cols, c, out, sizeof(out), &got, &why), 0);
		assert_int_equal(got, whole);
		assert_memory_equal(out, in, whole);
	}
}

/* A fixed tag the codec has no layout for: not split (written as it is). */
static void columns_refuse_unknown_records(void **state)
{
	static uint8_t in[64], scratch[6 * (sizeof(in) + HS_CS_SLACK)],
		cols[sizeof(in) + HS_CS_HEADER_MAX], out[sizeof(in) + HS_CS_SLACK];
	const char *why = NULL;
	size_t got;
	uint8_t *p = in;

	(void)state;
	p = hs_enc_free(p, HS_TAG_FREE, 0, 16);
	*p++ = 0x0f; /* not a record of this version */
	*p++ = 0;
	assert_int_equal(hs_chunk_split(in, (size_t)(p - in), scratch, cols), 0);
	/* a varint cut at the end */
	p = hs_enc_free(in, HS_TAG_FREE, 0, 1 << 20);
	assert_int_equal(hs_chunk_split(in, (size_t)(p - in) - 1, scratch, cols), 0);

	/* joined: the same tag in the record stream is refused */
	memcpy(cols, "\0\0\0\0\0\x0f", 6);
	assert_int_equal(hs_chunk_join(cols, 6, out, sizeof(out), &got, &why), -1);
	assert_non_null(strstr(why, "record"));
	/* a column longer than the payload */
	memcpy(cols, "\x09\0\0\0\0\x0c", 6);
	assert_int_equal(hs_chunk_join(cols, 6, out, sizeof(out), &got, &why), -1);
	/* a FREE whose time column is empty */
	memcpy(cols, "\0\x01\0\0\0\x02\x0c", 7);
	assert_int_equal(hs_chunk_join(cols, 7, out, sizeof(out), &got, &why), -1);
	assert_non_null(strstr(why, "column"));
	/* a column with more than its events use */
	memcpy(cols, "\x02\x01\0\0\0\0\0\0\x0c", 9);
	assert_int_equal(hs_chunk_join(cols, 9, out, sizeof(out), &got, &why), -1);
	assert_non_null(strstr(why, "more than"));
}

/*
 * Every cut and every flipped bit of a columnar payload: joined or refused,
 * never more than the room given (ASan checks the reads).
 */
static void columns_survive_damage(void **state)
{
	static uint8_t in[4096], scratch[6 * (sizeof(in) + HS_CS_SLACK)],
		cols[sizeof(in) + HS_CS_HEADER_MAX], out[sizeof(cols) + HS_CS_SLACK];
	const char *why;
	size_t n, c, k, got;
	unsigned bit;

	(void)state;
	n = (size_t)(every_record(in) - in);
	c = hs_chunk_split(in, n, scratch, cols);
	for (k = 0; k < c; k++) {
		got = 0;
		if (!hs_chunk_join(cols, k, out, k + HS_CS_SLACK, &got, &why))
			assert_true(got <= k);
	}
	for (k = 0; k < c; k++)
		for (bit = 0; bit < 8; bit++) {
			cols[k] ^= (uint8_t)(1u << bit);
			got = 0;
			if (!hs_chunk_join(cols, c, out, sizeof(out), &got, &why))
				assert_true(got <= c);
			cols[k] ^= (uint8_t)(1u << bit);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixed_records_round_trip),
		cmocka_unit_test(sized_bodies_round_trip),
		cmocka_unit_test(a_realloc_that_freed_and_an_mremap_are_two_events),
		cmocka_unit_test(a_sample_is_an_event_of_its_thread),
		cmocka_unit_test(footer_round_trip),
		cmocka_unit_test(footer_marks_round_trip),
		cmocka_unit_test(process_round_trip),
		cmocka_unit_test(columns_round_trip),
		cmocka_unit_test(columns_round_trip_at_length),
		cmocka_unit_test(columns_refuse_unknown_records),
		cmocka_unit_test(columns_survive_damage),
	};
	return cmocka_run_group_tests_name("trace_record", tests, NULL, NULL);
}
