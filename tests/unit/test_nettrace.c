/*
 * test_nettrace - the EventPipe NetTrace reader (dotnet/nettrace.c) and
 * the runtime's payload layouts (dotnet/clr_events.c): LEB128 and UTF-16,
 * compressed and uncompressed event headers on streams built here,
 * ordering between sequence points, stack ids that restart, and a recorded
 * fixture cut at every offset and damaged at many.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "dotnet/clr_events.h"
#include "dotnet/nettrace.h"

/* ---- a stream builder ---- */

struct out {
	unsigned char b[8192];
	size_t n;
};

static void put(struct out *o, const void *p, size_t n)
{
	assert_true(o->n + n <= sizeof(o->b));
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void u8(struct out *o, unsigned v)
{
	unsigned char c = (unsigned char)v;

	put(o, &c, 1);
}

static void u16(struct out *o, unsigned v)
{
	u8(o, v & 0xff);
	u8(o, v >> 8 & 0xff);
}

static void u32(struct out *o, uint32_t v)
{
	u16(o, v & 0xffff);
	u16(o, v >> 16);
}

static void u64(struct out *o, uint64_t v)
{
	u32(o, (uint32_t)v);
	u32(o, (uint32_t)(v >> 32));
}

static void leb(struct out *o, uint64_t v)
{
	do {
		u8(o, (unsigned)(v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void utf16(struct out *o, const char *ascii)
{
	for (; *ascii; ascii++)
		u16(o, (unsigned char)*ascii);
	u16(o, 0);
}

static void stream_header(struct out *o)
{
	put(o, "Nettrace", 8);
	u32(o, 20);
	put(o, "!FastSerialization.1", 20);
}

static void begin_object(struct out *o, const char *type, uint32_t version)
{
	u8(o, 5);
	u8(o, 5);
	u8(o, 1);
	u32(o, version);
	u32(o, version);
	u32(o, (uint32_t)strlen(type));
	put(o, type, strlen(type));
	u8(o, 6);
}

static void trace_object(struct out *o)
{
	int i;

	begin_object(o, "Trace", 4);
	for (i = 0; i < 8; i++)
		u16(o, (unsigned)i);
	u64(o, 1000);		/* sync time */
	u64(o, 1000000000);	/* 1 GHz */
	u32(o, 8);
	u32(o, 4242);
	u32(o, 2);
	u32(o, 1000000);
	u8(o, 6);
}

/* A block of @content; the size field and padding put it 4-byte aligned. */
static void block(struct out *o, const char *type, const struct out *content)
{
	begin_object(o, type, 2);
	u32(o, (uint32_t)content->n);
	while (o->n & 3)
		u8(o, 0);
	put(o, content->b, content->n);
	u8(o, 6);
}

static void block_header(struct out *c, unsigned flags)
{
	u16(c, 20);
	u16(c, flags);
	u64(c, 0);
	u64(c, 0);
}

/* A compressed metadata blob defining @id as @provider/@event_id v@version. */
static void metadata_blob(struct out *c, uint32_t id, const char *provider, uint32_t event_id,
			  uint32_t version)
{
	struct out p = { .n = 0 };

	u32(&p, id);
	utf16(&p, provider);
	u32(&p, event_id);
	utf16(&p, "");
	u64(&p, 1);
	u32(&p, version);
	u32(&p, 5);
	u32(&p, 0);
	/* the runtime sets flag 0x02 on metadata blobs too */
	u8(c, 0x01 | 0x02 | 0x04 | 0x80);
	leb(c, 0);		/* metadata id 0 */
	leb(c, 0);		/* sequence delta */
	leb(c, 77);		/* capture thread */
	leb(c, 0);		/* processor */
	leb(c, 77);		/* thread */
	leb(c, 5);		/* timestamp delta */
	leb(c, p.n);
	put(c, p.b, p.n);
}

/* ---- a consumer that records what it got ---- */

struct got {
	int n;
	uint32_t meta_event[16], sequence[16], depth[16];
	uint64_t thread[16], capture[16], leaf[16];
	int64_t ts[16];
	uint32_t payload0[16];
	struct hs_nettrace_header hdr;
};

static int got_header(void *ctx, const struct hs_nettrace_header *h)
{
	((struct got *)ctx)->hdr = *h;
	return 0;
}

static int got_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct got *g = ctx;
	int i = g->n++;

	assert_true(i < 16);
	g->meta_event[i] = ev->meta->event_id;
	g->sequence[i] = ev->sequence;
	g->thread[i] = ev->thread_id;
	g->capture[i] = ev->capture_thread_id;
	g->ts[i] = ev->timestamp;
	g->depth[i] = ev->stack_depth;
	g->leaf[i] = ev->stack_depth ? ev->stack[0] : 0;
	g->payload0[i] = ev->payload_size >= 4 ? (uint32_t)ev->payload[0] : 0xffffffff;
	return 0;
}

static int read_mem(const void *p, size_t n, struct got *g, struct hs_nettrace_stats *st,
		    struct hs_diag *d)
{
	struct hs_nettrace_ops ops = { .ctx = g, .header = got_header, .event = got_event };
	FILE *f = n ? fmemopen((void *)p, n, "rb") : fopen("/dev/null", "rb");
	int err;

	assert_non_null(f);
	memset(g, 0, sizeof(*g));
	err = hs_nettrace_read(f, &ops, st, d);
	fclose(f);
	return err;
}

/* ---- decoding ---- */

static void varints_decode_and_stop(void **state)
{
	static const unsigned char v[] = { 0x00, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f,
					   0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	const unsigned char *p = v, *end = v + sizeof(v);
	uint64_t x;

	(void)state;
	assert_int_equal(hs_nettrace_varint(&p, end, 5, &x), 0);
	assert_int_equal(x, 0);
	assert_int_equal(hs_nettrace_varint(&p, end, 5, &x), 0);
	assert_int_equal(x, 127);
	assert_int_equal(hs_nettrace_varint(&p, end, 5, &x), 0);
	assert_int_equal(x, 128);
	assert_int_equal(hs_nettrace_varint(&p, end, 5, &x), 0);
	assert_int_equal(x, 0xffffffffu);
	/* six bytes are too many for 32 bits, fine for 64 */
	assert_int_equal(hs_nettrace_varint(&p, end, 5, &x), -EINVAL);
	assert_ptr_equal(p, v + 9);
	assert_int_equal(hs_nettrace_varint(&p, end, 10, &x), 0);
	assert_int_equal(x, (uint64_t)1 << 35);
	/* running out of bytes */
	p = v + 2;
	assert_int_equal(hs_nettrace_varint(&p, v + 3, 10, &x), -EINVAL);
}

static void utf16_to_utf8(void **state)
{
	/* "A", U+00E9, U+1F600 (a surrogate pair), an unpaired surrogate, NUL */
	static const unsigned char s[] = { 'A', 0, 0xe9, 0, 0x3d, 0xd8, 0x00, 0xde,
					   0x00, 0xdc, 0, 0, 'x' };
	const unsigned char *p = s;
	char *u = NULL;

	(void)state;
	assert_int_equal(hs_nettrace_utf16(&p, s + sizeof(s), &u), 0);
	assert_string_equal(u, "A\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd");
	assert_ptr_equal(p, s + 12);
	hs_free(u);
	p = s;
	assert_int_equal(hs_nettrace_utf16(&p, s + 10, &u), -EINVAL);
}

static void sniffs_the_magic(void **state)
{
	(void)state;
	assert_true(hs_nettrace_sniff((const unsigned char *)"Nettrace\x14", 9));
	assert_false(hs_nettrace_sniff((const unsigned char *)"Nettrac", 7));
	assert_false(hs_nettrace_sniff((const unsigned char *)"PK\3\4xxxxx", 9));
}

/* Events thread 20 tried to log after its last one in the file. */
static uint32_t sp_dropped;

/*
 * Two regions. The first: a metadata block, a stack block (ids 1, 2), an
 * event block whose blobs use every header flag, with thread 20's events
 * written before thread 10's older ones; then a sequence point. The second
 * reuses stack id 1 for another stack.
 */
static void build_stream(struct out *o, int compressed_events)
{
	struct out c = { .n = 0 };

	stream_header(o);
	trace_object(o);

	block_header(&c, 1);
	metadata_blob(&c, 1, "Prov", 7, 2);
	metadata_blob(&c, 2, "Prov", 8, 0);
	block(o, "MetadataBlock", &c);

	c.n = 0;
	u32(&c, 1);		/* first id */
	u32(&c, 2);		/* count */
	u32(&c, 16);
	u64(&c, 0x1000);
	u64(&c, 0x2000);
	u32(&c, 8);
	u64(&c, 0x3000);
	block(o, "StackBlock", &c);

	c.n = 0;
	if (compressed_events) {
		block_header(&c, 1);
		/* thread 20 at t=500: every field, activity ids too */
		u8(&c, 0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x20 | 0x40 | 0x80);
		leb(&c, 1);
		leb(&c, 9);	/* sequence 0 + 9 + 1 = 10 */
		leb(&c, 20);
		leb(&c, 1);
		leb(&c, 20);
		leb(&c, 2);	/* stack 2 */
		leb(&c, 500);
		for (int i = 0; i < 32; i++)
			u8(&c, 0xaa);
		leb(&c, 4);
		u32(&c, 0xa1);
		/* thread 20 again at t=600: only the timestamp changes */
		u8(&c, 0);
		leb(&c, 100);
		u32(&c, 0xa2);
		/* thread 10 at t=300 (an earlier time, later in the file), stack 1, event 8 */
		u8(&c, 0x01 | 0x02 | 0x04 | 0x08);
		leb(&c, 2);
		leb(&c, 0);	/* sequence 11 + 0 + 1 = 12 */
		leb(&c, 10);
		leb(&c, 0);
		leb(&c, 10);
		leb(&c, 1);
		/* the timestamp delta wraps: 600 + delta = 300 */
		leb(&c, (uint64_t)-300);
		u32(&c, 0xa3);
	} else {
		/* uncompressed: the same three events, each 4-byte aligned */
		static const struct {
			uint32_t meta, seq, stack, payload;
			uint64_t thread;
			int64_t ts;
		} e[] = {
			{ 1, 10, 2, 0xa1, 20, 500 },
			{ 1, 11, 2, 0xa2, 20, 600 },
			{ 2, 12, 1, 0xa3, 10, 300 },
		};
		block_header(&c, 0);
		for (size_t i = 0; i < 3; i++) {
			u32(&c, 76 + 4);
			u32(&c, e[i].meta | (i == 0 ? 0x80000000u : 0));
			u32(&c, e[i].seq);
			u64(&c, e[i].thread);
			u64(&c, e[i].thread);
			u32(&c, 0);
			u32(&c, e[i].stack);
			u64(&c, (uint64_t)e[i].ts);
			for (int k = 0; k < 32; k++)
				u8(&c, 0);
			u32(&c, 4);
			u32(&c, e[i].payload);
		}
	}
	block(o, "EventBlock", &c);

	c.n = 0;
	u64(&c, 700);
	u32(&c, 2);
	u64(&c, 10);
	u32(&c, 12);
	u64(&c, 20);
	u32(&c, 11 + sp_dropped);
	block(o, "SPBlock", &c);

	/* region two: stack id 1 is now another stack */
	c.n = 0;
	u32(&c, 1);
	u32(&c, 1);
	u32(&c, 8);
	u64(&c, 0x9000);
	block(o, "StackBlock", &c);
	c.n = 0;
	block_header(&c, 1);
	u8(&c, 0x01 | 0x02 | 0x04 | 0x08);
	leb(&c, 1);
	leb(&c, 0);
	leb(&c, 10);
	leb(&c, 0);
	leb(&c, 10);
	leb(&c, 1);
	leb(&c, 800);	/* no payload: the size starts at 0 in each block */
	block(o, "EventBlock", &c);
	u8(o, 1);	/* the end */
}

static void check_stream(const struct got *g)
{
	assert_int_equal(g->n, 4);
	/* sorted by time: thread 10's event first */
	assert_int_equal(g->ts[0], 300);
	assert_int_equal(g->thread[0], 10);
	assert_int_equal(g->meta_event[0], 8);
	assert_int_equal(g->sequence[0], 12);
	assert_int_equal(g->depth[0], 2);
	assert_int_equal(g->leaf[0], 0x1000);
	assert_int_equal(g->payload0[0], 0xa3);
	assert_int_equal(g->ts[1], 500);
	assert_int_equal(g->thread[1], 20);
	assert_int_equal(g->capture[1], 20);
	assert_int_equal(g->sequence[1], 10);
	assert_int_equal(g->meta_event[1], 7);
	assert_int_equal(g->depth[1], 1);
	assert_int_equal(g->leaf[1], 0x3000);
	assert_int_equal(g->ts[2], 600);
	assert_int_equal(g->sequence[2], 11);
	assert_int_equal(g->payload0[2], 0xa2);
	assert_int_equal(g->hdr.pid, 4242);
	assert_int_equal(g->hdr.pointer_size, 8);
}

static void compressed_headers_sorted_by_time(void **state)
{
	struct out o = { .n = 0 };
	struct hs_nettrace_stats st;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct got g;

	(void)state;
	build_stream(&o, 1);
	assert_int_equal(read_mem(o.b, o.n, &g, &st, &d), 0);
	check_stream(&g);
	assert_true(st.complete);
	assert_false(st.truncated);
	assert_int_equal(st.nr_sequence_points, 1);
	assert_int_equal(st.nr_metadata, 2);
	/* region two: stack id 1 is the new stack; no payload size flag: 0 bytes */
	assert_int_equal(g.ts[3], 800);
	assert_int_equal(g.leaf[3], 0x9000);
	assert_int_equal(st.nr_lost, 0);
}

/* A sequence point past a thread's last event: the difference was dropped. */
static void sequence_point_counts_lost_events(void **state)
{
	struct out o = { .n = 0 };
	struct hs_nettrace_stats st;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct got g;

	(void)state;
	sp_dropped = 3;
	build_stream(&o, 1);
	sp_dropped = 0;
	assert_int_equal(read_mem(o.b, o.n, &g, &st, &d), 0);
	assert_int_equal(st.nr_lost, 3);
	assert_int_equal(g.n, 4);
}

static void uncompressed_headers(void **state)
{
	struct out o = { .n = 0 };
	struct hs_nettrace_stats st;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct got g;

	(void)state;
	build_stream(&o, 0);
	assert_int_equal(read_mem(o.b, o.n, &g, &st, &d), 0);
	check_stream(&g);
}

/* Every prefix of the stream reads without error: cut off, or complete. */
static void synthetic_truncation_every_offset(void **state)
{
	struct out o = { .n = 0 };
	struct hs_nettrace_stats st;
	struct got g;
	size_t n;

	(void)state;
	build_stream(&o, 1);
	for (n = 0; n <= o.n; n++) {
		struct hs_diag d = HS_DIAG_INIT("t");
		int err = read_mem(o.b, n, &g, &st, &d);

		if (n < 8) {
			assert_int_equal(err, -EINVAL);
			assert_true(d.has_offset);
			continue;
		}
		assert_int_equal(err, 0);
		if (n == o.n || n == o.n - 1) {
			assert_true(st.complete);	/* with or without its end tag */
		} else if (!st.complete) {
			assert_true(st.truncated);
			assert_int_equal(st.truncated_at, n);
			assert_true(st.truncated_object <= n);
		}
	}
}

static void garbage_names_its_offset(void **state)
{
	struct out o = { .n = 0 };
	struct hs_nettrace_stats st;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct got g;
	size_t at;

	(void)state;
	build_stream(&o, 1);
	/* the first object after the Trace one: its tag becomes 9 */
	at = 32 + 1 + 1 + 1 + 12 + 5 + 1 + 48 + 1;
	assert_int_equal(o.b[at], 5);
	o.b[at] = 9;
	assert_int_equal(read_mem(o.b, o.n, &g, &st, &d), -EINVAL);
	assert_true(d.has_offset);
	assert_int_equal(d.offset, at);
	assert_non_null(strstr(d.msg, "expected an object"));

	memset(&d, 0, sizeof(d));
	assert_int_equal(read_mem("Netscape", 8, &g, &st, &d), -EINVAL);
	assert_int_equal(d.offset, 0);

	/* version 6 has another header: refused by name */
	memset(&d, 0, sizeof(d));
	assert_int_equal(read_mem("Nettrace\0\0\0\0\6\0\0\0\0\0\0\0", 20, &g, &st, &d),
			 -EINVAL);
	assert_int_equal(d.offset, 12);
	assert_non_null(strstr(d.msg, "version 6 is not supported"));
}

static void blob_past_its_block_is_corrupt(void **state)
{
	struct out o = { .n = 0 }, c = { .n = 0 };
	struct hs_nettrace_stats st;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct got g;

	(void)state;
	stream_header(&o);
	trace_object(&o);
	block_header(&c, 1);
	u8(&c, 0x80 | 0x01);
	leb(&c, 1);
	leb(&c, 5);
	leb(&c, 1000);		/* a payload far past the block's end */
	block(&o, "EventBlock", &c);
	assert_int_equal(read_mem(o.b, o.n, &g, &st, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "past its block"));
	/* the blob starts right after the 20-byte block header */
	assert_int_equal(d.offset % 4, 0);
}

/* ---- the recorded fixture ---- */

static unsigned char *slurp(const char *name, size_t *n)
{
	char path[4096];
	FILE *f;
	unsigned char *b;
	long len;

	snprintf(path, sizeof(path), "%s/dotnet/%s", HS_TEST_DATA, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	b = malloc((size_t)len);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return b;
}

struct tally {
	uint64_t events, ticks, tick_bytes, large, methods, stacked;
	int named_foo;
	unsigned pointer_size;
};

static int tally_header(void *ctx, const struct hs_nettrace_header *h)
{
	((struct tally *)ctx)->pointer_size = h->pointer_size;
	return 0;
}

static int tally_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct tally *t = ctx;
	struct hs_clr_alloc_tick tick;
	struct hs_clr_method m;

	t->events++;
	t->stacked += ev->stack_depth > 0;
	if (!hs_clr_alloc_tick(ev, t->pointer_size, &tick)) {
		t->ticks++;
		t->tick_bytes += tick.amount64;
		t->large += tick.kind == HS_CLR_ALLOC_LARGE;
		t->named_foo |= !strcmp(tick.type_name, "Allocs.Foo");
		hs_clr_alloc_tick_release(&tick);
	}
	if (!hs_clr_method(ev, &m)) {
		t->methods++;
		hs_clr_method_release(&m);
	}
	return 0;
}

static int read_tally(const unsigned char *b, size_t n, struct tally *t,
		      struct hs_nettrace_stats *st, struct hs_diag *d)
{
	struct hs_nettrace_ops ops = { .ctx = t, .header = tally_header, .event = tally_event };
	FILE *f = fmemopen((void *)b, n, "rb");
	int err;

	assert_non_null(f);
	memset(t, 0, sizeof(*t));
	err = hs_nettrace_read(f, &ops, st, d);
	fclose(f);
	return err;
}

static void fixture_reads_whole(void **state)
{
	size_t n;
	unsigned char *b = slurp("allocs.nettrace", &n);
	struct hs_nettrace_stats st;
	struct hs_diag d = HS_DIAG_INIT("allocs.nettrace");
	struct tally t;

	(void)state;
	assert_int_equal(read_tally(b, n, &t, &st, &d), 0);
	assert_true(st.complete);
	assert_int_equal(st.bytes, n);
	assert_int_equal(st.nr_lost, 0);
	/* the program allocates ten byte[200_000]: ten large-object ticks */
	assert_int_equal(t.large, 10);
	assert_true(t.ticks >= 50);
	assert_true(t.named_foo);
	assert_true(t.methods > 10);
	assert_true(t.stacked > t.ticks);
	free(b);
}

/*
 * Every prefix of the fixture: never an error past the header, the offset
 * where it stops reported, and never more events than the whole file.
 */
static void fixture_truncated_at_every_offset(void **state)
{
	size_t n, cut;
	unsigned char *b = slurp("allocs-sampled.nettrace", &n);
	struct hs_nettrace_stats st;
	struct tally whole, t;
	uint64_t last = 0;

	(void)state;
	{
		struct hs_diag d = HS_DIAG_INIT("whole");

		assert_int_equal(read_tally(b, n, &whole, &st, &d), 0);
	}
	for (cut = 8; cut < n; cut++) {
		struct hs_diag d = HS_DIAG_INIT("cut");
		int err = read_tally(b, cut, &t, &st, &d);

		if (err)
			fail_msg("cut at %zu: %d %s", cut, err, d.msg);
		if (!st.complete) {
			assert_true(st.truncated);
			assert_int_equal(st.truncated_at, cut);
		}
		assert_true(t.events <= whole.events);
		assert_true(t.events >= last);	/* whole blocks only, so it only grows */
		last = t.events;
	}
	free(b);
}

/* Damage a byte at a time: an error names an offset inside the file. */
static void fixture_damaged_never_crashes(void **state)
{
	size_t n, at;
	unsigned char *b = slurp("allocs-sampled.nettrace", &n);
	struct hs_nettrace_stats st;
	struct tally t;

	(void)state;
	for (at = 0; at < n; at += 7) {
		struct hs_diag d = HS_DIAG_INIT("damaged");
		unsigned char keep = b[at];
		int err;

		b[at] ^= 0xa5;
		err = read_tally(b, n, &t, &st, &d);
		b[at] = keep;
		if (err) {
			assert_true(err == -EINVAL || err == -E2BIG);
			assert_true(d.set);
			assert_true(d.has_offset);
			assert_true(d.offset <= n);
		}
	}
	free(b);
}

/* The GC lifecycle events of the fixture: three GCs, as the program says. */
struct gcs {
	unsigned pointer_size;
	int starts, ends, stats, suspends, restarts;
	uint32_t last_count, depth_of_induced;
	struct hs_clr_gc_heap_stats first, last;
};

static int gc_header(void *ctx, const struct hs_nettrace_header *h)
{
	((struct gcs *)ctx)->pointer_size = h->pointer_size;
	return 0;
}

static int gc_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct gcs *g = ctx;
	struct hs_clr_gc_start start;
	struct hs_clr_gc_end end;
	struct hs_clr_gc_heap_stats stats;
	struct hs_clr_gc_suspend suspend;

	if (!hs_clr_gc_start(ev, &start)) {
		g->starts++;
		assert_int_equal(start.count, g->last_count + 1);
		g->last_count = start.count;
		/* GC.Collect() is induced (reason 1), blocking, of generation 2 */
		assert_int_equal(start.reason, 1);
		g->depth_of_induced = start.depth;
	}
	if (!hs_clr_gc_end(ev, &end)) {
		g->ends++;
		assert_int_equal(end.count, g->last_count);
	}
	if (!hs_clr_gc_heap_stats(ev, &stats)) {
		if (!g->stats++)
			g->first = stats;
		g->last = stats;
	}
	if (!hs_clr_gc_suspend(ev, &suspend))
		g->suspends++;
	g->restarts += hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_GC_RESTART_EE_END);
	return 0;
}

static void fixture_gc_lifecycle(void **state)
{
	size_t n;
	unsigned char *b = slurp("allocs.nettrace", &n);
	struct gcs g;
	struct hs_nettrace_ops ops = { .ctx = &g, .header = gc_header, .event = gc_event };
	struct hs_diag d = HS_DIAG_INIT("allocs.nettrace");
	FILE *f = fmemopen(b, n, "rb");

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_int_equal(hs_nettrace_read(f, &ops, NULL, &d), 0);
	fclose(f);
	/* allocs.truth: gc_count 3, all three from GC.Collect() */
	assert_int_equal(g.starts, 3);
	assert_int_equal(g.ends, 3);
	assert_int_equal(g.stats, 3);
	assert_int_equal(g.depth_of_induced, 2);
	/* every pause is a suspension and a restart (the runtime also suspends for itself) */
	assert_true(g.suspends >= 3);
	assert_int_equal(g.suspends, g.restarts);
	/*
	 * Three full GCs one after another: what the first left in gen1 is in
	 * gen2 at the end, gen0 is empty; the pinned object heap (a v2 field)
	 * holds the runtime's pinned arrays throughout.
	 */
	assert_true(g.first.gen_size[1] > 0);
	assert_true(g.last.gen_size[2] >= g.first.gen_size[1]);
	assert_int_equal(g.last.gen_size[0], 0);
	assert_true(g.last.gen_size[4] > 0);
	assert_int_equal(g.last.gen_size[4], g.first.gen_size[4]);
	free(b);
}

/* ---- payload layouts ---- */

static void alloc_tick_layout(void **state)
{
	struct out p = { .n = 0 };
	struct hs_nettrace_meta m = { .id = 1, .provider = (char *)HS_CLR_PROVIDER,
				      .event_id = HS_CLR_GC_ALLOCATION_TICK, .version = 4 };
	struct hs_nettrace_event ev = { .meta = &m };
	struct hs_clr_alloc_tick t;

	(void)state;
	u32(&p, 100000);
	u32(&p, HS_CLR_ALLOC_LARGE);
	u16(&p, 7);
	u64(&p, 5000000000ull);
	u64(&p, 0x7f00);
	utf16(&p, "System.Byte[]");
	u32(&p, 3);
	u64(&p, 0xdead0);
	u64(&p, 200024);
	ev.payload = p.b;
	ev.payload_size = (uint32_t)p.n;
	assert_int_equal(hs_clr_alloc_tick(&ev, 8, &t), 0);
	assert_int_equal(t.amount, 100000);
	assert_int_equal(t.kind, HS_CLR_ALLOC_LARGE);
	assert_int_equal(t.amount64, 5000000000ull);
	assert_int_equal(t.type_id, 0x7f00);
	assert_string_equal(t.type_name, "System.Byte[]");
	assert_int_equal(t.heap_index, 3);
	assert_int_equal(t.address, 0xdead0);
	assert_int_equal(t.object_size, 200024);
	hs_clr_alloc_tick_release(&t);
	/* one byte short of version 4 */
	ev.payload_size--;
	assert_int_equal(hs_clr_alloc_tick(&ev, 8, &t), -EINVAL);
	assert_null(t.type_name);
	/* version 3 stops before the object size */
	m.version = 3;
	assert_int_equal(hs_clr_alloc_tick(&ev, 8, &t), 0);
	assert_int_equal(t.object_size, 0);
	hs_clr_alloc_tick_release(&t);
	m.event_id = 11;
	assert_int_equal(hs_clr_alloc_tick(&ev, 8, &t), -ENOENT);
}

static void method_names_as_perfview(void **state)
{
	struct out p = { .n = 0 };
	struct hs_nettrace_meta m = { .id = 1, .provider = (char *)HS_CLR_RUNDOWN_PROVIDER,
				      .event_id = HS_CLR_RUNDOWN_METHOD_DC_END_VERBOSE,
				      .version = 1 };
	struct hs_nettrace_event ev = { .meta = &m };
	struct hs_clr_method me;
	char *name;

	(void)state;
	u64(&p, 1);
	u64(&p, 2);
	u64(&p, 0x5000);
	u32(&p, 0x40);
	u32(&p, 0x06000001);
	u32(&p, 0);
	utf16(&p, "Allocs.Program");
	utf16(&p, "AllocateFoos");
	utf16(&p, "void  (int32)");
	u16(&p, 0);
	ev.payload = p.b;
	ev.payload_size = (uint32_t)p.n;
	assert_int_equal(hs_clr_method(&ev, &me), 0);
	assert_int_equal(me.start, 0x5000);
	assert_int_equal(me.size, 0x40);
	name = hs_clr_method_frame(&me, "allocs");
	assert_string_equal(name, "allocs!Allocs.Program.AllocateFoos(int32)");
	hs_free(name);
	hs_clr_method_release(&me);
	name = hs_clr_module_name("/usr/share/dotnet/shared/System.Private.CoreLib.dll");
	assert_string_equal(name, "System.Private.CoreLib");
	hs_free(name);
	assert_string_equal(hs_clr_event_name(HS_CLR_GC_ALLOCATION_TICK), "GC/AllocationTick");
	assert_string_equal(hs_clr_event_name(80), "Exception/Start");
	assert_null(hs_clr_event_name(99999));
}

static void heap_stats_and_sampling_weight(void **state)
{
	struct out p = { .n = 0 };
	struct hs_nettrace_meta m = { .id = 1, .provider = (char *)HS_CLR_PROVIDER,
				      .event_id = HS_CLR_GC_HEAP_STATS, .version = 2 };
	struct hs_nettrace_event ev = { .meta = &m };
	struct hs_clr_gc_heap_stats hs;
	double w;
	int i;

	(void)state;
	for (i = 0; i < 8; i++)
		u64(&p, (uint64_t)(i + 1) * 1000);
	u64(&p, 9);
	u64(&p, 10);
	u32(&p, 11);
	u32(&p, 12);
	u32(&p, 13);
	u16(&p, 0);
	u64(&p, 14000);
	u64(&p, 15000);
	ev.payload = p.b;
	ev.payload_size = (uint32_t)p.n;
	assert_int_equal(hs_clr_gc_heap_stats(&ev, &hs), 0);
	assert_int_equal(hs.gen_size[0], 1000);
	assert_int_equal(hs.promoted[0], 2000);
	assert_int_equal(hs.gen_size[3], 7000);
	assert_int_equal(hs.pinned_objects, 11);
	assert_int_equal(hs.gen_size[4], 14000);
	assert_int_equal(hs.promoted[4], 15000);
	/* a huge object is always sampled: it stands for itself */
	w = hs_clr_alloc_sampled_weight(100000000);
	assert_true(w > 99999999.0 && w < 100000001.0);
	/* a 24-byte object stands for about 102400 bytes */
	w = hs_clr_alloc_sampled_weight(24);
	assert_true(w > 102000 && w < 102500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(varints_decode_and_stop),
		cmocka_unit_test(utf16_to_utf8),
		cmocka_unit_test(sniffs_the_magic),
		cmocka_unit_test(compressed_headers_sorted_by_time),
		cmocka_unit_test(uncompressed_headers),
		cmocka_unit_test(sequence_point_counts_lost_events),
		cmocka_unit_test(synthetic_truncation_every_offset),
		cmocka_unit_test(garbage_names_its_offset),
		cmocka_unit_test(blob_past_its_block_is_corrupt),
		cmocka_unit_test(fixture_reads_whole),
		cmocka_unit_test(fixture_truncated_at_every_offset),
		cmocka_unit_test(fixture_damaged_never_crashes),
		cmocka_unit_test(fixture_gc_lifecycle),
		cmocka_unit_test(alloc_tick_layout),
		cmocka_unit_test(method_names_as_perfview),
		cmocka_unit_test(heap_stats_and_sampling_weight),
	};
	return cmocka_run_group_tests_name("nettrace", tests, NULL, NULL);
}
