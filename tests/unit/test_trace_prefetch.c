/*
 * Tests of format/trace_prefetch.c: decompression that grows with what
 * zstd makes rather than with what a header declares, and chunks read
 * ahead on worker threads giving exactly what the reader alone gives
 * (events, cut-off files, corrupt chunks and their messages), a chunk's
 * events decoded on a worker being what its records say, and a stream
 * read with workers handing over what it hands over alone; batches lent
 * from the stage, and the switch to copies when the stage grows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <zstd.h>
#include "common/alloc.h"
#include "format/trace_format.h"
#include "format/trace_order.h"
#include "format/trace_prefetch.h"
#include "format/trace_reader.h"
#include "format/trace_record.h"
#include "format/trace_writer.h"

#include "trace_builder.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* @n bytes of records-like data that zstd compresses well but not to nothing. */
static uint8_t *pattern(size_t n)
{
	uint8_t *d = malloc(n);
	uint64_t x = 88172645463325252ull;
	size_t i;

	assert_non_null(d);
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		d[i] = (uint8_t)(i % 7 == 0 ? x & 15 : i & 3);
	}
	return d;
}

/* zstd of @n bytes at @d, with or without the content size in the frame. */
static size_t compress(const uint8_t *d, size_t n, int content_size, uint8_t **out)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(n), z;

	*out = malloc(cap);
	assert_non_null(*out);
	assert_non_null(c);
	ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size);
	z = ZSTD_compress2(c, *out, cap, d, n);
	assert_false(ZSTD_isError(z));
	ZSTD_freeCCtx(c);
	return z;
}

static void inflate_grows_with_what_zstd_makes(void **state)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	size_t mib = (size_t)1 << 20, z, got, alloc;
	uint8_t *d = pattern(mib), *zd, *buf;
	int cs;

	(void)state;
	for (cs = 0; cs < 2; cs++) {
		/* a whole MiB, from a first guess far below it */
		z = compress(d, mib, cs, &zd);
		assert_true(z * 8 < mib);
		buf = NULL;
		alloc = 0;
		assert_int_equal(hs__chunk_inflate(dctx, zd, z, mib, &buf, &alloc, &got),
				 0);
		assert_int_equal(got, mib);
		assert_true(alloc >= mib);
		assert_memory_equal(buf, d, mib);
		/* declared one byte too few, or too many: refused */
		assert_int_equal(
		    hs__chunk_inflate(dctx, zd, z, mib - 1, &buf, &alloc, &got), -EINVAL);
		assert_int_equal(
		    hs__chunk_inflate(dctx, zd, z, mib + 1, &buf, &alloc, &got), -EINVAL);
		hs_free(buf);
		free(zd);

		/* 40 bytes that declare 16 MiB: the room stays small */
		z = compress(d, 40, cs, &zd);
		buf = NULL;
		alloc = 0;
		assert_int_equal(
		    hs__chunk_inflate(dctx, zd, z, HS_CHUNK_MAX, &buf, &alloc, &got),
		    -EINVAL);
		assert_true(alloc <= ((size_t)64 << 10));
		hs_free(buf);
		free(zd);
	}
	/* an empty payload */
	z = compress(d, 0, 1, &zd);
	buf = NULL;
	alloc = 0;
	assert_int_equal(hs__chunk_inflate(dctx, zd, z, 0, &buf, &alloc, &got), 0);
	assert_int_equal(got, 0);
	hs_free(buf);
	free(zd);
	free(d);
	ZSTD_freeDCtx(dctx);
}

/* --- many chunks, read alone and with workers ---------------------------- */

/* Frame @n payload bytes at @raw as chunk @seq, declaring @declared raw bytes. */
static void put_chunk(struct tb *b, enum hs_chunk_kind kind, const uint8_t *raw, size_t n,
		      uint32_t seq, size_t declared)
{
	uint8_t h[HS_CHUNK_HEADER_SIZE], *z;
	size_t zn = compress(raw, n, 1, &z);

	hs_tw_chunk_header(h, kind, HS_CHUNK_ZSTD, (uint32_t)zn, (uint32_t)declared, seq,
			   z);
	tb_put(b, h, sizeof(h));
	tb_put(b, z, zn);
	free(z);
}

/*
 * A trace of @nr EVENTS chunks, each one thread's span and @per mallocs
 * freed in turn, and an END chunk; the offset of each chunk into @off
 * (room for nr + 1).
 */
static void build_many(struct tb *b, unsigned nr, unsigned per, size_t *off)
{
	static uint8_t raw[1 << 20];
	uint64_t tick = 0;
	unsigned c, i;
	uint8_t *p;

	tb_init(b);
	for (c = 0; c < nr; c++) {
		off[c] = b->len;
		p = raw;
		if (c == 0) {
			p = put_process(p);
			p = put_sized2(p, HS_TAG_CLOCK, 0, 0);
		}
		p = hs_enc_span(p, 1 + c % 3, tick, 0x10000);
		for (i = 0; i < per; i++) {
			p = hs_enc_alloc(p, HS_TAG_MALLOC, 1, 16 * (int64_t)(i + 1),
					 16 + (i * 7 + c) % 500, 0, 0);
			p = hs_enc_free(p, HS_TAG_FREE, 1, 0);
		}
		tick += 2 * per;
		assert_true((size_t)(p - raw) < sizeof(raw));
		put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), c,
			  (size_t)(p - raw));
	}
	off[nr] = b->len;
	p = put_end(raw, tick + 1, HS_END_EXIT, 0);
	put_chunk(b, HS_CHUNK_END, raw, (size_t)(p - raw), nr, (size_t)(p - raw));
}

struct loaded {
	int err;
	char msg[512];
	struct hs_trace t;
};

/* Load @n bytes at @data with @threads workers. */
static void load_with(const uint8_t *data, size_t n, const char *threads,
		      struct loaded *l)
{
	struct hs_diag diag = HS_DIAG_INIT("many");

	setenv("HEAPSCOPE_READ_THREADS", threads, 1);
	memset(l, 0, sizeof(*l));
	l->err = hs_trace_load_mem(data, n, "many", &l->t, &diag);
	if (diag.set)
		hs_diag_format(&diag, l->msg, sizeof(l->msg));
	unsetenv("HEAPSCOPE_READ_THREADS");
}

static void assert_same(struct loaded *a, struct loaded *b)
{
	assert_int_equal(a->err, b->err);
	assert_string_equal(a->msg, b->msg);
	if (a->err)
		return;
	assert_int_equal(a->t.nr_chunks, b->t.nr_chunks);
	assert_int_equal(a->t.cut_off, b->t.cut_off);
	assert_int_equal(a->t.cut_offset, b->t.cut_offset);
	assert_int_equal(a->t.nr_events, b->t.nr_events);
	if (a->t.nr_events) {
		assert_memory_equal(a->t.time, b->t.time,
				    a->t.nr_events * sizeof(*a->t.time));
		assert_memory_equal(a->t.addr, b->t.addr,
				    a->t.nr_events * sizeof(*a->t.addr));
		assert_memory_equal(a->t.size, b->t.size,
				    a->t.nr_events * sizeof(*a->t.size));
	}
	hs_trace_release(&a->t);
	hs_trace_release(&b->t);
}

static void workers_read_what_the_reader_reads(void **state)
{
	enum { NR = 40, PER = 300 };
	size_t off[NR + 1], cut;
	struct loaded alone, pool;
	struct tb b;

	(void)state;
	build_many(&b, NR, PER, off);
	load_with(b.buf, b.len, "0", &alone);
	assert_int_equal(alone.err, 0);
	assert_int_equal(alone.t.nr_events, (size_t)NR * PER * 2);
	assert_false(alone.t.cut_off);
	load_with(b.buf, b.len, "3", &pool);
	assert_same(&alone, &pool);

	/* cut inside chunks, and between them */
	for (cut = off[5]; cut < b.len; cut += 997) {
		load_with(b.buf, cut, "0", &alone);
		load_with(b.buf, cut, "2", &pool);
		assert_true(alone.err || alone.t.cut_off);
		assert_same(&alone, &pool);
	}
	/* a corrupt payload far ahead of the reader, and a bad chunk magic */
	b.buf[off[25] + HS_CHUNK_HEADER_SIZE + 3] ^= 0x10;
	load_with(b.buf, b.len, "0", &alone);
	load_with(b.buf, b.len, "2", &pool);
	assert_int_equal(alone.err, -EINVAL);
	assert_non_null(strstr(alone.msg, "check"));
	assert_same(&alone, &pool);
	b.buf[off[25] + HS_CHUNK_HEADER_SIZE + 3] ^= 0x10;
	b.buf[off[31]] = 'X';
	load_with(b.buf, b.len, "0", &alone);
	load_with(b.buf, b.len, "8", &pool);
	assert_int_equal(alone.err, -EINVAL);
	assert_non_null(strstr(alone.msg, "magic"));
	assert_same(&alone, &pool);
	free(b.buf);
}

/* --- a chunk's events, decoded on a worker ------------------------------ */

/* One record of a payload as the reader decodes it. */
struct ref_rec {
	size_t off, end;	 /* its bytes */
	struct hs_rec_state st;	 /* the state after it */
	unsigned tag, nr_ev;	 /* its tag and how many events it makes */
	struct hs_rec_event ev[2];
	int fixed;		 /* hs_rec_decode_fixed() decodes it */
};

/* The records of @n bytes at @raw, as hs_rec_decode() reads them, up to a bad one. */
static size_t ref_records(const uint8_t *raw, size_t n, struct ref_rec *out, size_t max)
{
	const uint8_t *q = raw, *end = raw + n;
	struct hs_rec_state st;
	size_t k = 0;

	memset(&st, 0, sizeof(st));
	while (q < end && k < max) {
		const uint8_t *f = q;
		struct hs_rec_state fst = st;
		struct hs_rec rec;
		const char *why;

		out[k].fixed = hs_rec_decode_fixed(&f, end, &fst, &rec, &why) == 1;
		out[k].off = (size_t)(q - raw);
		if (hs_rec_decode(&q, end, &st, &rec, &why))
			break;
		out[k].end = (size_t)(q - raw);
		out[k].st = st;
		out[k].tag = rec.tag;
		out[k].nr_ev = hs_rec_events(&rec, out[k].ev);
		k++;
	}
	return k;
}

/*
 * Check what hs__chunk_events_decode() made of @raw: each piece is a run
 * of whole records (SPANs and fixed event records) whose events, state
 * and times it holds; every record outside the pieces makes no event of
 * a fixed record; with @complete, each piece knows the lowest time after
 * it. Returns how many events the pieces hold.
 */
static size_t check_decoded(const uint8_t *raw, size_t n, const struct hs__chunk_events *ce,
			    size_t max)
{
	static struct ref_rec rr[4096];
	size_t nr = ref_records(raw, n, rr, 4096), k = 0, e = 0, pi;

	for (pi = 0; pi < ce->nr_pieces; pi++) {
		const struct hs__chunk_piece *pc = &ce->piece[pi];
		int64_t low = INT64_MAX;
		size_t recs = 0, j, first = e;

		/* the records before it are no fixed records with events */
		for (; k < nr && rr[k].off < pc->begin; k++)
			assert_false(rr[k].fixed && rr[k].tag != HS_TAG_SPAN && rr[k].nr_ev);
		assert_true(k < nr);
		assert_int_equal(rr[k].off, pc->begin);
		for (; k < nr && rr[k].off < pc->end; k++, recs++) {
			assert_true(rr[k].fixed);
			if (rr[k].tag == HS_TAG_SPAN) {
				assert_int_equal(recs, 0);
				continue;
			}
			assert_true(rr[k].nr_ev > 0);
			for (j = 0; j < rr[k].nr_ev; j++, e++) {
				const struct hs_trace_event *d = &ce->ev[e];
				const struct hs_rec_event *w = &rr[k].ev[j];

				assert_true(e < pc->ev_end);
				assert_int_equal(d->time, (int64_t)w->ticks);
				assert_int_equal(d->addr, w->addr);
				assert_int_equal(d->size, w->size);
				assert_int_equal(d->node, w->stack);
				assert_int_equal(d->op, w->op);
				assert_int_equal(d->fn, rr[k].tag);
				assert_int_equal(w->tid, pc->tid);
				if (d->time < low)
					low = d->time;
			}
		}
		assert_int_equal(rr[k - 1].end, pc->end);
		assert_memory_equal(&rr[k - 1].st, &pc->st, sizeof(pc->st));
		assert_int_equal(pc->records, recs);
		assert_int_equal(pc->ev_end, e);
		assert_int_equal(pc->low, low);
		if (ce->complete) {
			int64_t rest = INT64_MAX;

			/* each stretch: the lowest from it to the piece's end */
			for (j = first; j < e; j++) {
				int64_t sl = INT64_MAX;
				size_t x;

				if (j % HS_CHUNK_STRETCH)
					continue;
				for (x = j; x < e; x++)
					if (ce->ev[x].time < sl)
						sl = ce->ev[x].time;
				assert_int_equal(ce->stretch_low[j / HS_CHUNK_STRETCH], sl);
			}

			for (j = k; j < nr; j++) {
				unsigned x;

				for (x = 0; x < rr[j].nr_ev; x++)
					if ((int64_t)rr[j].ev[x].ticks < rest)
						rest = (int64_t)rr[j].ev[x].ticks;
			}
			assert_int_equal(pc->low_rest, rest);
		}
	}
	assert_int_equal(ce->nr_ev, e);
	if (ce->complete) {
		assert_int_equal(nr ? rr[nr - 1].end : 0, n);
		/* (past @max events, the rest is the reader's) */
		for (; k < nr && ce->nr_ev + 2 <= max; k++)
			assert_false(rr[k].fixed && rr[k].tag != HS_TAG_SPAN && rr[k].nr_ev);
	}
	return e;
}

static void chunk_events_are_what_the_records_say(void **state)
{
	static uint8_t raw[1 << 14];
	struct hs__chunk_events ce;
	uint8_t *p = raw, body[64], *q;
	size_t n, all, cut;
	unsigned i;

	(void)state;
	memset(&ce, 0, sizeof(ce));
	p = hs_enc_span(p, 7, 1000, 0x10000);
	p = hs_enc_node(p, 5, 0, 0x401000);
	for (i = 0; i < 40; i++) {
		p = hs_enc_alloc(p, i % 3 ? HS_TAG_MALLOC : HS_TAG_CALLOC, 1, 64,
				 16 + i, 5, 0);
		p = hs_enc_free(p, HS_TAG_FREE, 2, -32);
	}
	p = hs_enc_realloc(p, HS_TAG_REALLOC, 1, 0x100, 200, 5, -0x40, 1);
	p = hs_enc_realloc(p, HS_TAG_REALLOC, 1, 0x100, 300, 5, 0, 0);
	p = hs_enc_alloc(p, HS_TAG_POSIX_MEMALIGN, 3, 16, 128, 5, 64);
	q = hs_enc_thread_start_body(body, 1200, "w", 1);
	p = hs_tw_sized(p, HS_TAG_THREAD_START, body, (size_t)(q - body));
	p = hs_enc_mmap(p, 1, 0x100000, 4096, 3, 0x22, 0);
	p = hs_enc_munmap(p, 1, 0, 4096);
	p = hs_enc_mremap(p, 1, 0x2000, 8192, 5, -0x2000, 4096);
	p = hs_enc_node(p, 6, 5, 0x401100);
	p = hs_enc_free(p, HS_TAG_FREE_TEMPORARY, 1, 0x40);
	/* another thread, older, and going back in its own time */
	p = hs_enc_span(p, 9, 900, 0x20000);
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 1, 16, 24, 6, 0);
	p = hs_enc_alloc(p, HS_TAG_MALLOC, -5, 16, 24, 6, 0);
	p = hs_enc_free(p, HS_TAG_FREE, 1, -16);
	p = hs_enc_span(p, 7, 1500, 0x10000);
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 1, 16, 24, 0, 0);
	n = (size_t)(p - raw);

	assert_int_equal(hs__chunk_events_decode(raw, n, HS_CHUNK_EVENTS_MAX, &ce), 0);
	assert_true(ce.complete);
	assert_true(ce.nr_pieces >= 4);
	all = check_decoded(raw, n, &ce, HS_CHUNK_EVENTS_MAX);
	assert_true(all >= 90);
	/* the first piece's rest: thread 9's older events */
	assert_int_equal(ce.piece[0].low_rest, 896);

	/* at most a few events: the pieces end there, the rests still known */
	assert_int_equal(hs__chunk_events_decode(raw, n, 9, &ce), 0);
	assert_true(ce.complete);
	assert_true(ce.nr_ev <= 9 && ce.nr_ev >= 7);
	assert_int_equal(check_decoded(raw, n, &ce, 9), ce.nr_ev);
	assert_int_equal(ce.piece[ce.nr_pieces - 1].low_rest, 896);

	/* cut anywhere: the records before the cut, and no more */
	for (cut = 0; cut < n; cut += 7) {
		assert_int_equal(hs__chunk_events_decode(raw, cut, HS_CHUNK_EVENTS_MAX, &ce), 0);
		assert_true(check_decoded(raw, cut, &ce, HS_CHUNK_EVENTS_MAX) <= all);
	}
	hs__chunk_events_release(&ce);
}

/* --- a stream read with workers ----------------------------------------- */

struct collected {
	struct hs_trace_event *ev;
	size_t n, cap;
};

/* a sink's events(): collect() or a slower one */
typedef int events_fn(void *ctx, const struct hs_trace_event *ev, size_t n);

static int collect(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct collected *c = ctx;

	if (c->n + n > c->cap) {
		c->cap = 2 * (c->n + n);
		c->ev = realloc(c->ev, c->cap * sizeof(*c->ev));
		assert_non_null(c->ev);
	}
	memcpy(c->ev + c->n, ev, n * sizeof(*ev));
	c->n += n;
	return 0;
}

/* The same events (field by field: the struct has padding). */
static void assert_same_events(const struct collected *a, const struct collected *b)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		assert_int_equal(a->ev[i].time, b->ev[i].time);
		assert_int_equal(a->ev[i].addr, b->ev[i].addr);
		assert_int_equal(a->ev[i].size, b->ev[i].size);
		assert_int_equal(a->ev[i].node, b->ev[i].node);
		assert_int_equal(a->ev[i].thread, b->ev[i].thread);
		assert_int_equal(a->ev[i].op, b->ev[i].op);
		assert_int_equal(a->ev[i].fn, b->ev[i].fn);
	}
}

/* Stream @n bytes at @data with @threads workers into @c; returns the most staged. */
static size_t stream_with(const uint8_t *data, size_t n, const char *threads,
			  struct collected *c)
{
	struct hs_diag diag = HS_DIAG_INIT("stream");
	struct hs_trace_sink sink = {.events = collect, .ctx = c};
	struct hs_trace t;
	size_t staged;

	memset(c, 0, sizeof(*c));
	setenv("HEAPSCOPE_READ_THREADS", threads, 1);
	assert_int_equal(hs_trace_stream_mem(data, n, "stream", &t, &sink, &diag), 0);
	unsetenv("HEAPSCOPE_READ_THREADS");
	staged = t.stream_staged_max;
	hs_trace_release(&t);
	return staged;
}

/*
 * Frame @b's payload as a compact EVENTS chunk (4.0), compressed: what
 * the collector's writer makes (hs_chunk_compact() before zstd).
 */
static void tb_chunk_compact(struct tb *b)
{
	static struct hs_compact_enc enc;
	static uint8_t scratch[HS_CC_SCRATCH(sizeof(b->payload))];
	static uint8_t packed[2 * sizeof(b->payload) + HS_CC_HEADER_MAX];
	uint8_t h[HS_CHUNK_HEADER_SIZE], *z;
	size_t n, zn;

	n = hs_chunk_compact(b->payload, b->plen, &enc, scratch, packed, sizeof(packed));
	assert_true(n > 0);
	zn = compress(packed, n, 1, &z);
	hs_tw_chunk_header(h, HS_CHUNK_EVENTS,
			   HS_CHUNK_ZSTD | HS_CHUNK_COMPACT | HS_CHUNK_CLASSES, (uint32_t)zn,
			   (uint32_t)n, b->seq, z);
	tb_put(b, h, sizeof(h));
	tb_put(b, z, zn);
	free(z);
	b->chunk_events[b->seq] = b->events;
	b->chunk_end[b->seq++] = b->len;
	b->plen = 0;
	b->events = 0;
}

/*
 * 12 EVENTS chunks with the footer's index, two small ones first (the
 * pool begins at the third): with @threads > 1 several threads' spans
 * that go back in time, stacks defined among the events, a columnar
 * payload every other chunk and a compact one every fourth (chunks 2, 6,
 * 10: their frees refer back to their allocations); PER iterations of an
 * allocation and a free per chunk.
 */
#define STREAM_CHUNKS 12
#define STREAM_PER 6000
static void build_stream(struct tb *b, unsigned threads)
{
	static struct hs_chunk_index idx[STREAM_CHUNKS];
	uint64_t counts[HS_FC__COUNT] = {0}, tick = 100;
	unsigned c, i, th;
	uint8_t *p;

	tb_init(b);
	for (c = 0; c < STREAM_CHUNKS; c++) {
		unsigned per = c < 2 ? 10 : STREAM_PER;

		p = tb_p(b);
		if (c == 0)
			p = put_process(p);
		p = put_node(p, c + 1, c, 0x401000 + c);
		idx[c].first_ticks = tick > 50 ? tick - 50 : 0;
		for (th = 0; th < threads; th++) {
			/* each thread a little behind the one before */
			uint64_t t0 = tick - 10 * th;

			p = put_span(p, 100 + th, t0, 0x10000 * (th + 1));
			for (i = 0; i < per / threads; i++) {
				p = put_alloc(b, p, HS_TAG_MALLOC, 1, 32, 16 + i % 100,
					      i % 7 ? c + 1 : 0);
				p = put_free(b, p, 1, -32);
			}
		}
		tick += 2 * (per / threads) + 20;
		tb_end(b, p);
		idx[c].offset = b->len;
		idx[c].last_ticks = tick;
		if (c % 4 == 2)
			tb_chunk_compact(b);
		else
			tb_chunk(b, HS_CHUNK_EVENTS, 1 | (c % 2 ? TB_COLUMNS : 0));
	}
	p = tb_p(b);
	p = put_end(p, tick + 1, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, idx, STREAM_CHUNKS);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_END, 1);
}

static void stream_with_workers_is_the_stream_alone(void **state)
{
	struct collected alone, pool;
	size_t staged_alone, staged_pool;
	unsigned threads;
	struct tb b;

	(void)state;
	for (threads = 1; threads <= 3; threads++) {
		build_stream(&b, threads);
		staged_alone = stream_with(b.buf, b.len, "0", &alone);
		/* two workers only decompress (HS_PREFETCH_DECODE_MIN) */
		stream_with(b.buf, b.len, "2", &pool);
		assert_int_equal(alone.n, pool.n);
		assert_same_events(&alone, &pool);
		free(pool.ev);
		staged_pool = stream_with(b.buf, b.len, "3", &pool);
		assert_int_equal(alone.n, pool.n);
		assert_true(alone.n >= (size_t)(STREAM_CHUNKS - 2) * STREAM_PER * 2 / 3);
		assert_same_events(&alone, &pool);
		/*
		 * Alone, a chunk's events wait for the next chunk; decoded
		 * ahead, those older than the rest of the chunk go on while
		 * it is read (one thread: in order; several: what the file
		 * has out of order)
		 */
		assert_true(staged_alone >= STREAM_PER * 2 / 3);
		if (threads == 1)
			assert_true(staged_pool < STREAM_PER);
		assert_true(staged_pool <= staged_alone);
		free(alone.ev);
		free(pool.ev);
		free(b.buf);
	}
}

/* --- a thread's chunk far behind the others' (issue 14) ------------------ */

#define LATE_PAIRS 8192	 /* allocations and frees per chunk of thread A */
#define LATE_CHUNKS 16	 /* thread A's chunks */
#define LATE_AT 12	 /* thread B's chunk comes after A's chunk LATE_AT */
#define LATE_B_PAIRS 4000 /* thread B's, every LATE_B_DT ticks ... */
#define LATE_B_DT 26	 /* ... on a tick of one of A's events */
#define LATE_EVENTS (2 * ((size_t)LATE_CHUNKS * LATE_PAIRS + LATE_B_PAIRS))

/*
 * Thread A writes a chunk of 2 * LATE_PAIRS events, one per tick, after
 * another; thread B's one chunk, whose events go from A's chunk @from
 * (build_late(): the second) over the next 13, each on the tick of one
 * of A's, comes in the file after A's chunk LATE_AT: more than
 * STREAM_STAGE_CAP of A's events wait for it. The footer's index has
 * each chunk's lowest time.
 */
static void build_late_from(struct tb *b, unsigned from)
{
	static struct hs_chunk_index idx[LATE_CHUNKS + 2];
	static uint8_t raw[1 << 20];
	uint64_t counts[HS_FC__COUNT] = {0}, tick = 1000;
	uint64_t b_first = tick + (uint64_t)from * 2 * LATE_PAIRS + 100;
	unsigned c, i, n = 0, seq = 0;
	uint8_t *p;

	tb_init(b);
	for (c = 0; c < LATE_CHUNKS; c++) {
		p = raw;
		if (c == 0) {
			p = put_process(p);
			p = put_node(p, 1, 0, 0x401000);
		}
		idx[n].offset = b->len;
		idx[n].first_ticks = tick;
		p = put_span(p, 100, tick, 0x10000000);
		for (i = 0; i < LATE_PAIRS; i++) {
			p = hs_enc_alloc(p, HS_TAG_MALLOC, i ? 1 : 0, 32, 16 + i % 300,
					 i % 3 ? 1 : 0, 0);
			p = hs_enc_free(p, HS_TAG_FREE, 1, 0);
		}
		tick += 2 * LATE_PAIRS - 1;
		idx[n++].last_ticks = tick;
		tick++;
		assert_true((size_t)(p - raw) < sizeof(raw));
		put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), seq++,
			  (size_t)(p - raw));
		if (c != LATE_AT)
			continue;
		p = raw;
		idx[n].offset = b->len;
		idx[n].first_ticks = b_first;
		p = put_span(p, 200, b_first, 0x90000000);
		for (i = 0; i < LATE_B_PAIRS; i++) {
			p = hs_enc_alloc(p, HS_TAG_MALLOC, i ? LATE_B_DT : 0, 64, 48, 1, 0);
			p = hs_enc_free(p, HS_TAG_FREE, LATE_B_DT, 0);
		}
		idx[n++].last_ticks = b_first + (2 * LATE_B_PAIRS - 1) * LATE_B_DT;
		put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), seq++,
			  (size_t)(p - raw));
	}
	p = put_end(raw, tick + 1, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, idx, n);
	put_chunk(b, HS_CHUNK_END, raw, (size_t)(p - raw), seq, (size_t)(p - raw));
}

static void build_late(struct tb *b)
{
	build_late_from(b, 1);
}

/*
 * Stream @b one thread at a time into @got through @events (collect(),
 * or a slower one) and check it hands over @b loaded, @nr_events events
 * event for event, and then what the pool decoding ahead hands over.
 * The stream's counters stay in @t for the caller to check and release;
 * @got's events are the caller's to free.
 */
static void stream_alone_is_loaded(const struct tb *b, const char *name, size_t nr_events,
				   events_fn *events, struct hs_trace *t,
				   struct collected *got)
{
	struct hs_diag diag = HS_DIAG_INIT("stream");
	struct hs_trace_sink sink = {.events = events, .ctx = got};
	struct collected pool;
	struct hs_trace loaded;
	struct hs_trace_event e;
	size_t i;

	/* the loaded trace: its events in time order, ties in file order */
	assert_int_equal(hs_trace_load_mem(b->buf, b->len, name, &loaded, &diag), 0);
	assert_int_equal(loaded.nr_events, nr_events);

	memset(got, 0, sizeof(*got));
	setenv("HEAPSCOPE_READ_THREADS", "0", 1);
	assert_int_equal(hs_trace_stream_mem(b->buf, b->len, name, t, &sink, &diag), 0);
	unsetenv("HEAPSCOPE_READ_THREADS");
	assert_int_equal(got->n, loaded.nr_events);
	for (i = 0; i < got->n; i++) {
		hs_trace_event_get(&loaded, i, &e);
		assert_int_equal(got->ev[i].time, e.time);
		assert_int_equal(got->ev[i].addr, e.addr);
		assert_int_equal(got->ev[i].size, e.size);
		assert_int_equal(got->ev[i].node, e.node);
		assert_int_equal(got->ev[i].thread, e.thread);
		assert_int_equal(got->ev[i].op, e.op);
		assert_int_equal(got->ev[i].fn, e.fn);
	}
	hs_trace_release(&loaded);

	/* the same with the pool decoding ahead */
	stream_with(b->buf, b->len, "3", &pool);
	assert_int_equal(pool.n, got->n);
	assert_same_events(got, &pool);
	free(pool.ev);
}

static void late_chunk_waits_in_the_file(void **state)
{
	struct collected got;
	struct hs_trace t;
	size_t i, ties_before = 0, ties_after = 0;
	struct tb b;

	(void)state;
	build_late(&b);
	stream_alone_is_loaded(&b, "late", LATE_EVENTS, collect, &t, &got);
	/* A's chunks waited in the file, not in memory */
	assert_true(t.stream_deferred >= 2);
	assert_true(t.stream_staged_max <= STREAM_STAGE_CAP + 3 * 2 * LATE_PAIRS);
	hs_trace_release(&t);

	/* B's events on a tick of A's: after those of A's chunks before
	 * B's, before those of A's chunks after it */
	for (i = 1; i < got.n; i++) {
		if (got.ev[i].time != got.ev[i - 1].time)
			continue;
		if (got.ev[i].thread != got.ev[0].thread)
			ties_before++;
		else
			ties_after++;
	}
	assert_true(ties_before > 0 && ties_after > 0);
	free(got.ev);
	free(b.buf);
}

/* --- batches lent from the stage (issue 14) ----------------------------- */

#define LEND_CHUNKS 24 /* one thread's chunks of LATE_PAIRS pairs */

/* One thread, LEND_CHUNKS chunks in order, the footer's index. */
static void build_one_thread(struct tb *b)
{
	static struct hs_chunk_index idx[LEND_CHUNKS];
	static uint8_t raw[1 << 20];
	uint64_t counts[HS_FC__COUNT] = {0}, tick = 1000;
	unsigned c, i;
	uint8_t *p;

	tb_init(b);
	for (c = 0; c < LEND_CHUNKS; c++) {
		p = raw;
		if (c == 0) {
			p = put_process(p);
			p = put_node(p, 1, 0, 0x401000);
		}
		idx[c].offset = b->len;
		idx[c].first_ticks = tick;
		p = put_span(p, 100, tick, 0x10000000);
		for (i = 0; i < LATE_PAIRS; i++) {
			/* (two events on a tick now and then) */
			p = hs_enc_alloc(p, HS_TAG_MALLOC, i && i % 5 ? 1 : 0, 32,
					 16 + i % 300, i % 3 ? 1 : 0, 0);
			p = hs_enc_free(p, HS_TAG_FREE, 1, 0);
		}
		tick += 2 * LATE_PAIRS - 1;
		idx[c].last_ticks = tick;
		tick++;
		assert_true((size_t)(p - raw) < sizeof(raw));
		put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), c,
			  (size_t)(p - raw));
	}
	p = put_end(raw, tick + 1, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, idx, LEND_CHUNKS);
	put_chunk(b, HS_CHUNK_END, raw, (size_t)(p - raw), c, (size_t)(p - raw));
}

/* collect(), slowly now and then: the reading side runs out of buffers */
static int collect_slowly(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct collected *c = ctx;

	if (c->n / BATCH_EVENTS % 16 == 0)
		usleep(2000);
	return collect(ctx, ev, n);
}

static void stream_lends_the_stage(void **state)
{
	size_t nr_events = 2 * (size_t)LEND_CHUNKS * LATE_PAIRS;
	struct collected got;
	struct hs_trace t;
	struct tb b;

	(void)state;
	/* more events than the stage buffers hold: each is taken again */
	assert_true(nr_events > 2 * STAGE_BUFS * STREAM_FLOOR);
	build_one_thread(&b);
	stream_alone_is_loaded(&b, "lend", nr_events, collect_slowly, &t, &got);
	/* every batch was lent (nothing waits long: the stage stays small) */
	assert_true(t.stream_lent > 0);
	assert_true(t.stream_lent >= nr_events / BATCH_EVENTS);
	hs_trace_release(&t);
	free(got.ev);
	free(b.buf);
}

/*
 * Lent batches, then copies: A's first chunks are streamed as they come
 * (lent from the stage), then more than STAGE_LEND_MAX of A's events wait
 * for B's late chunk, so the stage must grow past what it lends from:
 * the reading side waits for every lent batch to come back before it
 * moves the waiting events and frees the other stage buffers (the
 * caller's side is slow, so batches are out at that moment), and copies
 * from then on. The events are the loaded trace's either way.
 */
#define SWITCH_FROM 4 /* B's events begin in A's fifth chunk */

/* collect(), slowly for A's events before B's (the lent batches): they
 * are still out when the stage grows past STAGE_LEND_MAX */
static int collect_lent_slowly(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct collected *c = ctx;

	if (c->n < (size_t)SWITCH_FROM * 2 * LATE_PAIRS)
		usleep(3000);
	return collect(ctx, ev, n);
}

static void stream_switches_from_lent_to_copied(void **state)
{
	struct collected got;
	struct hs_trace t;
	struct tb b;

	(void)state;
	/* what waits for B: A's chunks from SWITCH_FROM to LATE_AT */
	assert_true((size_t)(LATE_AT - SWITCH_FROM + 1) * 2 * LATE_PAIRS > STAGE_LEND_MAX);
	build_late_from(&b, SWITCH_FROM);
	stream_alone_is_loaded(&b, "switch", LATE_EVENTS, collect_lent_slowly, &t, &got);
	/* A's first chunks lent, then the stage past STAGE_LEND_MAX: copies */
	assert_true(t.stream_staged_max > STAGE_LEND_MAX);
	assert_true(t.stream_lent >= (size_t)SWITCH_FROM * 2 * LATE_PAIRS / BATCH_EVENTS / 2);
	assert_true(t.stream_copied > 0);
	assert_true(t.stream_copied >= (size_t)(LATE_CHUNKS - LATE_AT) * 2 * LATE_PAIRS /
					 BATCH_EVENTS);
	hs_trace_release(&t);
	free(got.ev);
	free(b.buf);
}

/* collect(), slowly for the lent batches as above, then a little for
 * every batch: the reading side, faster, fills what may be in flight */
static int collect_slowly_throughout(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct collected *c = ctx;

	usleep(c->n < (size_t)SWITCH_FROM * 2 * LATE_PAIRS ? 3000 : 300);
	return collect(ctx, ev, n);
}

/*
 * Once a stage too large to lend from has turned lending off, the copied
 * batches in flight hold at most STREAM_COPY_IN_FLIGHT events (one event
 * per tick here), beside the stage: not STREAM_IN_FLIGHT's 64 batches.
 */
static void stream_copies_fewer_in_flight(void **state)
{
	struct collected got;
	struct hs_trace t;
	struct tb b;

	(void)state;
	/* (what is copied after the switch is more than either bound) */
	assert_true((size_t)(LATE_CHUNKS - SWITCH_FROM) * 2 * LATE_PAIRS >
		    STREAM_IN_FLIGHT);
	build_late_from(&b, SWITCH_FROM);
	stream_alone_is_loaded(&b, "copies", LATE_EVENTS, collect_slowly_throughout, &t,
			       &got);
	assert_true(t.stream_lent > 0 && t.stream_copied > 0);
	/* the reading side got ahead, up to the bound and no further */
	assert_true(t.stream_copy_in_flight > STREAM_COPY_IN_FLIGHT / 2);
	assert_true(t.stream_copy_in_flight <= STREAM_COPY_IN_FLIGHT);
	hs_trace_release(&t);
	free(got.ev);
	free(b.buf);
}

/* --- large ticks lent (issue 14, pystats, pyrss) ------------------------- */

#define BIG_TICKS 96	   /* ticks, more than NR_BATCHES */
#define BIG_TICK_PAIRS 3000 /* allocations and frees at each */
#define BIG_PER_CHUNK 8	   /* ticks a chunk */
#define BIG_EVENTS ((size_t)2 * BIG_TICKS * BIG_TICK_PAIRS)

/*
 * One thread, BIG_TICKS ticks of 2 * BIG_TICK_PAIRS events each (more
 * than BATCH_KEEP), and no chunk index: batches are copies, but for
 * large ticks.
 */
static void build_big_ticks(struct tb *b)
{
	static uint8_t raw[1 << 20];
	uint64_t counts[HS_FC__COUNT] = {0}, tick = 1000;
	unsigned c, k, i, seq = 0;
	uint8_t *p;

	tb_init(b);
	for (c = 0; c < BIG_TICKS / BIG_PER_CHUNK; c++) {
		p = raw;
		if (c == 0)
			p = put_process(p);
		p = put_span(p, 100, tick, 0x10000000);
		for (k = 0; k < BIG_PER_CHUNK; k++, tick += 7)
			for (i = 0; i < BIG_TICK_PAIRS; i++) {
				p = hs_enc_alloc(p, HS_TAG_MALLOC, i || !k ? 0 : 7, 32,
						 16 + i % 300, 0, 0);
				p = hs_enc_free(p, HS_TAG_FREE, 0, 0);
			}
		assert_true((size_t)(p - raw) < sizeof(raw));
		put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), seq++,
			  (size_t)(p - raw));
	}
	p = put_end(raw, tick + 1, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, NULL, 0);
	put_chunk(b, HS_CHUNK_END, raw, (size_t)(p - raw), seq, (size_t)(p - raw));
}

/* collect(), slowly: the reading side waits for room at each batch */
static int collect_each_slowly(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	usleep(2000);
	return collect(ctx, ev, n);
}

/*
 * A large tick's batch is lent from the stage even where batches are
 * copies (no copy of megabytes beside the stage), the stage's events
 * moving only once it is back (the slow sink makes the reading side
 * wait for it), and the events are still the loaded trace's.
 */
static void stream_lends_large_ticks(void **state)
{
	struct collected got;
	struct hs_trace t;
	struct tb b;

	(void)state;
	assert_true(2 * BIG_TICK_PAIRS > BATCH_KEEP);
	build_big_ticks(&b);
	stream_alone_is_loaded(&b, "big", BIG_EVENTS, collect_each_slowly, &t, &got);
	/* (every batch is a whole tick: none is copied) */
	assert_int_equal(t.stream_lent, BIG_TICKS);
	assert_int_equal(t.stream_copied, 0);
	hs_trace_release(&t);
	free(got.ev);
	free(b.buf);
}

/* --- a cut-off trace whose one thread's time went back once ------------- */

#define BACK_CHUNKS 12	  /* EVENTS chunks, no END and no index */
#define BACK_PAIRS 15000 /* allocation and free pairs a chunk */

/*
 * Thread 100 alone, one event a tick; its second chunk starts 10 ticks
 * before the first ended, then time only goes on. Cut off: no END chunk,
 * so no chunk index, and the events after the step back are a run that
 * only the stream's bound ends.
 */
static void build_back_once(struct tb *b)
{
	static uint8_t raw[1 << 20];
	uint64_t tick = 1000;
	unsigned c, i;
	uint8_t *p;

	tb_init(b);
	for (c = 0; c < BACK_CHUNKS; c++) {
		p = raw;
		if (c == 0)
			p = put_process(p);
		if (c == 1)
			tick -= 10;
		p = put_span(p, 100, tick, 0x10000000);
		for (i = 0; i < BACK_PAIRS; i++) {
			p = hs_enc_alloc(p, HS_TAG_MALLOC, 1, 32, 16 + i % 300, 0, 0);
			p = hs_enc_free(p, HS_TAG_FREE, 1, 0);
		}
		tick += 2 * BACK_PAIRS;
		assert_true((size_t)(p - raw) < sizeof(raw));
		put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), c,
			  (size_t)(p - raw));
	}
}

/*
 * A cut-off trace's run of late events is merged in pieces of at most
 * two windows, not gathered to the end of the trace (a one-thread
 * program's cut-off trace took memory for all its events), and the
 * events are the loaded trace's, in its order. The stream rebuilds the
 * chunk index of a trace without a footer; the bound of a run without
 * an index (run_cap) stays for a trace whose index cannot be rebuilt.
 */
static void cut_off_run_is_bounded(void **state)
{
	struct collected got;
	struct hs_trace t;
	struct tb b;

	(void)state;
	assert_true((size_t)(BACK_CHUNKS - 1) * BACK_PAIRS * 2 > 2 * STREAM_WINDOW);
	build_back_once(&b);
	stream_alone_is_loaded(&b, "back", (size_t)BACK_CHUNKS * BACK_PAIRS * 2, collect, &t,
			       &got);
	assert_true(t.stream_index_rebuilt);
	assert_true(t.stream_run_max > 0);
	assert_true(t.stream_run_max <= 2 * STREAM_WINDOW);
	hs_trace_release(&t);
	free(got.ev);
	free(b.buf);
}

/* --- batches of one thread's events, then ties (issue 14, statspar) ----- */

#define ONE_CHUNKS 4		/* thread A's chunks alone */
#define ONE_TIE_ADDR 0x70000000 /* the block the tick's threads share */

/*
 * Thread A (tid 100) alone for ONE_CHUNKS chunks of LATE_PAIRS pairs, one
 * event per tick, then a chunk in which A allocates ONE_TIE_ADDR at tick
 * @tie - 1, and at tick @tie thread 2 frees it and allocates it again,
 * thread 3 allocates and frees it (written so). The footer's index has
 * each chunk's lowest time, so A's batches go on before 2 and 3 appear.
 */
static void build_one_then_ties(struct tb *b, uint64_t *tie)
{
	static struct hs_chunk_index idx[ONE_CHUNKS + 1];
	static uint8_t raw[1 << 20];
	uint64_t counts[HS_FC__COUNT] = {0}, tick = 1000;
	unsigned c, i;
	uint8_t *p;

	tb_init(b);
	for (c = 0; c < ONE_CHUNKS; c++) {
		p = raw;
		if (c == 0)
			p = put_process(p);
		idx[c].offset = b->len;
		idx[c].first_ticks = tick;
		p = put_span(p, 100, tick, 0x10000000);
		for (i = 0; i < LATE_PAIRS; i++) {
			p = hs_enc_alloc(p, HS_TAG_MALLOC, i ? 1 : 0, 32, 16 + i % 300, 0,
					 0);
			p = hs_enc_free(p, HS_TAG_FREE, 1, 0);
		}
		tick += 2 * LATE_PAIRS - 1;
		idx[c].last_ticks = tick;
		tick++;
		put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), c,
			  (size_t)(p - raw));
	}
	*tie = tick + 10;
	idx[c].offset = b->len;
	idx[c].first_ticks = *tie - 1;
	idx[c].last_ticks = *tie;
	p = put_span(raw, 100, *tie - 1, ONE_TIE_ADDR);
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, 0, 24, 0, 0);
	p = put_span(p, 2, *tie, ONE_TIE_ADDR);
	p = hs_enc_free(p, HS_TAG_FREE, 0, 0);
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, 0, 32, 0, 0);
	p = put_span(p, 3, *tie, ONE_TIE_ADDR);
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, 0, 48, 0, 0);
	p = hs_enc_free(p, HS_TAG_FREE, 0, 0);
	put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), c, (size_t)(p - raw));
	p = put_end(raw, *tie + 1, HS_END_EXIT, 0);
	p = hs_tw_footer(p, counts, idx, ONE_CHUNKS + 1);
	put_chunk(b, HS_CHUNK_END, raw, (size_t)(p - raw), c + 1, (size_t)(p - raw));
}

/* A sink that keeps the tick @tie's events and whether the shared block is live. */
struct tie_sink {
	uint64_t tie;
	int live;
	uint32_t thread[8];
	char op[8];
	size_t n;
	size_t batches; /* events() calls before the tick */
};

static int tie_sink_events(void *ctx, const struct hs_trace_event *ev, size_t n)
{
	struct tie_sink *o = ctx;
	size_t i;

	for (i = 0; i < n; i++) {
		if (ev[i].addr != ONE_TIE_ADDR)
			continue;
		o->live = ev[i].op == HS_OP_ALLOC;
		if ((uint64_t)ev[i].time != o->tie)
			continue;
		assert_true(o->n < 8);
		o->thread[o->n] = ev[i].thread;
		o->op[o->n++] = ev[i].op == HS_OP_FREE ? 'f' : 'a';
	}
	if (!o->n)
		o->batches++;
	return 0;
}

static int tie_sink_live(void *ctx, uint64_t addr)
{
	struct tie_sink *o = ctx;

	return addr == ONE_TIE_ADDR && o->live;
}

/*
 * The caller's side gives a batch of one thread's events to the sink
 * whole (no ties to order); once other threads' events come, a tick
 * they share is ordered as ever: thread 2's free,
 * thread 3's allocation and free, thread 2's allocation (in file order
 * thread 2 would allocate a live block). With and without the pool.
 */
static void one_thread_batches_then_ties(void **state)
{
	static const char *const threads[] = {"0", "3"};
	struct hs_diag diag = HS_DIAG_INIT("one");
	struct tie_sink o;
	struct hs_trace_sink sink = {
	    .events = tie_sink_events, .live = tie_sink_live, .ctx = &o};
	struct hs_trace t;
	struct tb b;
	uint64_t tie;
	char got[32];
	size_t i, k, len;

	(void)state;
	build_one_then_ties(&b, &tie);
	for (k = 0; k < 2; k++) {
		memset(&o, 0, sizeof(o));
		o.tie = tie;
		setenv("HEAPSCOPE_READ_THREADS", threads[k], 1);
		assert_int_equal(hs_trace_stream_mem(b.buf, b.len, "one", &t, &sink, &diag),
				 0);
		unsetenv("HEAPSCOPE_READ_THREADS");
		/* thread A's events went on in batches before the tick */
		assert_true(o.batches >= (size_t)ONE_CHUNKS * 2 * LATE_PAIRS / BATCH_EVENTS / 2);
		assert_int_equal(o.n, 4);
		for (i = 0, len = 0; i < o.n; i++)
			len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%llu%c",
						i ? " " : "",
						(unsigned long long)t.threads[o.thread[i]].tid,
						o.op[i]);
		assert_string_equal(got, "2f 3a 3f 2a");
		hs_trace_release(&t);
	}
	free(b.buf);
}

/* --- declared sizes the data does not back (issue 19, item 8) ---------- */

/*
 * 16 EVENTS chunks of a span and a malloc (some 40 bytes of zstd each),
 * each declaring 16 MiB raw: what took 843 MB.
 */
static void build_declared(struct tb *b)
{
	uint8_t raw[64], *p;
	uint32_t c;

	tb_init(b);
	for (c = 0; c < 16; c++) {
		p = hs_enc_span(raw, 1, c, 0x1000);
		p = hs_enc_alloc(p, HS_TAG_MALLOC, 1, 0, 16, 0, 0);
		put_chunk(b, HS_CHUNK_EVENTS, raw, (size_t)(p - raw), c, HS_CHUNK_MAX);
	}
}

/* Load @b with @threads workers: the corrupt first chunk is named. */
static int load_declared(const struct tb *b, const char *threads)
{
	struct loaded l;

	load_with(b->buf, b->len, threads, &l);
	if (l.err != -EINVAL)
		return 1;
	return strstr(l.msg, "offset 16: corrupt trace: payload does not decompress") ? 0
										      : 2;
}

/* Address space now, from /proc/self/status (VmSize, bytes); 0 if unknown. */
static size_t vm_size(void)
{
	char line[256];
	size_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static void declared_sizes_take_no_memory(void **state)
{
	struct rlimit lim;
	struct tb b;
	pid_t pid;
	int status;
	size_t vm;

	(void)state;
	build_declared(&b);
	/*
	 * Read alone with 8 MiB of address space to spare (each chunk used
	 * to take its declared 16 MiB), in a child, before this process
	 * allocated and freed large buffers that malloc would keep for the
	 * child to reuse. A sanitizer build reserves its own address space,
	 * so the limit is for the plain build only.
	 */
	vm = vm_size();
	if (!UNDER_ASAN && vm) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			lim.rlim_cur = lim.rlim_max = vm + ((size_t)8 << 20);
			if (setrlimit(RLIMIT_AS, &lim))
				_exit(3);
			_exit(load_declared(&b, "0"));
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	/* and the message is the same with workers */
	assert_int_equal(load_declared(&b, "0"), 0);
	assert_int_equal(load_declared(&b, "2"), 0);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    /* first: it measures the address space this process uses */
	    cmocka_unit_test(declared_sizes_take_no_memory),
	    cmocka_unit_test(inflate_grows_with_what_zstd_makes),
	    cmocka_unit_test(workers_read_what_the_reader_reads),
	    cmocka_unit_test(chunk_events_are_what_the_records_say),
	    cmocka_unit_test(stream_with_workers_is_the_stream_alone),
	    cmocka_unit_test(late_chunk_waits_in_the_file),
	    cmocka_unit_test(stream_lends_the_stage),
	    cmocka_unit_test(stream_switches_from_lent_to_copied),
	    cmocka_unit_test(stream_copies_fewer_in_flight),
	    cmocka_unit_test(stream_lends_large_ticks),
	    cmocka_unit_test(cut_off_run_is_bounded),
	    cmocka_unit_test(one_thread_batches_then_ties),
	};
	return cmocka_run_group_tests_name("trace_prefetch", tests, NULL, NULL);
}
