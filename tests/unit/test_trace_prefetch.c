/*
 * Tests of format/trace_prefetch.c: decompression that grows with what
 * zstd makes rather than with what a header declares, and chunks read
 * ahead on worker threads giving exactly what the reader alone gives
 * (events, cut-off files, corrupt chunks and their messages).
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
	};
	return cmocka_run_group_tests_name("trace_prefetch", tests, NULL, NULL);
}
