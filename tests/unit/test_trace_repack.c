/*
 * Tests of trace_repack: a trace of many small chunks (plain, zstd and
 * compact, two threads whose frees reach blocks of earlier chunks) is
 * rewritten into fewer chunks, and a reader gets the same records from
 * it, record for record; an interrupted rewrite (a fault injected, a
 * temporary file left behind) leaves the original whole; what is not
 * to be repacked is left as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "common/fileio.h"
#include "format/trace_reader.h"
#include "format/trace_record.h"
#include "format/trace_repack.h"
#include "format/trace_writer.h"
#include "trace_builder.h"

#define CHUNKS 40
#define EVENTS_PER_CHUNK 300
#define LIVE_MAX 4096

/* A trace being written: the file's bytes and the footer's index. */
struct gen {
	uint8_t *buf;
	size_t len, cap;
	uint32_t seq;
	struct hs_chunk_index ix[CHUNKS + 1];
	uint8_t marks[CHUNKS + 1];
	size_t nix;
	uint64_t counts[HS_FC__COUNT];
};

static void gen_put(struct gen *g, const void *p, size_t n)
{
	if (g->len + n > g->cap) {
		g->cap = (g->len + n) * 2;
		g->buf = realloc(g->buf, g->cap);
		assert_non_null(g->buf);
	}
	memcpy(g->buf + g->len, p, n);
	g->len += n;
}

/* A chunk of the records [@rec, @rec + @n): @how 0 plain, 1 zstd, 2
 * compact and zstd. */
static void gen_chunk(struct gen *g, unsigned kind, const uint8_t *rec, size_t n, int how)
{
	static struct hs_compact_enc enc;
	uint8_t h[HS_CHUNK_HEADER_SIZE];
	size_t cap = ZSTD_compressBound(2 * n + HS_CC_HEADER_MAX);
	uint8_t *z = malloc(cap), *c = malloc(2 * n + HS_CC_HEADER_MAX);
	uint8_t *scratch = malloc(HS_CC_SCRATCH(n));
	const uint8_t *data = rec;
	size_t stored = n, raw = n;
	unsigned flags = 0;

	assert_non_null(z);
	assert_non_null(c);
	assert_non_null(scratch);
	if (how == 2) {
		raw = hs_chunk_compact_5_0(rec, n, &enc, scratch, c,
					   2 * n + HS_CC_HEADER_MAX);
		assert_true(raw > 0);
		data = c;
		flags |= HS_CHUNK_COMPACT | HS_CHUNK_CLASSES | HS_CHUNK_PREDICT;
	}
	stored = raw;
	if (how) {
		stored = ZSTD_compress(z, cap, data, raw, 1);
		assert_false(ZSTD_isError(stored));
		data = z;
		flags |= HS_CHUNK_ZSTD;
	}
	hs_tw_chunk_header(h, kind, flags, (uint32_t)stored, (uint32_t)raw, g->seq++,
			   data);
	gen_put(g, h, sizeof(h));
	gen_put(g, data, stored);
	free(z);
	free(c);
	free(scratch);
}

/* A thread of the program: its time, its last address, its live blocks. */
struct thr {
	uint64_t tid, ticks, addr, bump;
	uint64_t live[LIVE_MAX];
	size_t nr_live;
};

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* One event of @t into @p: an allocation (a freed address again, or a
 * new one) or a free of a live block, maybe one of an earlier chunk. */
static uint8_t *one_event(struct gen *g, struct thr *t, uint8_t *p, uint64_t freed[],
			  size_t *nr_freed)
{
	uint64_t dt = 1 + rnd() % 50, addr, size;

	t->ticks += dt;
	if (t->nr_live < 8 || (t->nr_live < LIVE_MAX && rnd() % 2)) {
		size = 16 + rnd() % 200;
		if (*nr_freed && rnd() % 3) {
			addr = freed[--*nr_freed];
		} else {
			addr = t->bump;
			t->bump += (size + 23) & ~15ull;
		}
		p = hs_enc_alloc(p, rnd() % 7 ? HS_TAG_MALLOC : HS_TAG_CALLOC,
				 (int64_t)dt, (int64_t)(addr - t->addr), size,
				 1 + rnd() % 3, 0);
		t->live[t->nr_live++] = addr;
		g->counts[HS_FC_ALLOCS]++;
		g->counts[HS_FC_BYTES] += size;
	} else {
		size_t i = rnd() % t->nr_live;

		addr = t->live[i];
		t->live[i] = t->live[--t->nr_live];
		p = hs_enc_free(p, HS_TAG_FREE, (int64_t)dt, (int64_t)(addr - t->addr));
		if (*nr_freed < LIVE_MAX)
			freed[(*nr_freed)++] = addr;
		g->counts[HS_FC_FREES]++;
	}
	t->addr = addr;
	return p;
}

/* Write a trace of CHUNKS small EVENTS chunks of two threads, an END
 * chunk with its footer, to @path. */
static void write_trace(const char *path)
{
	static struct thr th[2];
	static uint64_t freed[2][LIVE_MAX];
	size_t nr_freed[2] = {0, 0};
	struct gen g = {0};
	uint8_t hdr[HS_FILE_HEADER_SIZE];
	uint8_t *rec = malloc(1 << 20), *p, body[64];
	FILE *f;
	int c, k, i;

	assert_non_null(rec);
	rnd_state = 88172645463325252ull;
	memset(th, 0, sizeof(th));
	th[0].tid = 10;
	th[0].bump = 0x555500001000ull;
	th[1].tid = 11;
	th[1].bump = 0x7f0000001000ull;
	hs_tw_file_header(hdr);
	gen_put(&g, hdr, sizeof(hdr));
	for (c = 0; c < CHUNKS; c++) {
		uint64_t first = UINT64_MAX, last = 0;

		p = rec;
		if (c == 0)
			p = put_process(p);
		for (k = 0; k < 2; k++) {
			struct thr *t = &th[(c + k) % 2];

			p = hs_enc_span(p, t->tid, t->ticks, t->addr);
			if (c == 0 && k == 0) {
				p = hs_enc_node(p, 1, 0, 0x401000);
				p = hs_enc_node(p, 2, 1, 0x401100);
				p = hs_enc_node(p, 3, 1, 0x401200);
				g.counts[HS_FC_NODES] = 3;
			}
			if (c % 7 == 3 && k == 1)
				p = put_sized2(p, HS_TAG_RSS, t->ticks, 1u << 20);
			if (t->ticks + 1 < first)
				first = t->ticks + 1;
			for (i = 0; i < EVENTS_PER_CHUNK / 2; i++)
				p = one_event(&g, t, p, freed[t - th], &nr_freed[t - th]);
			if (t->ticks > last)
				last = t->ticks;
		}
		g.ix[g.nix].offset = g.len;
		g.ix[g.nix].first_ticks = first;
		g.ix[g.nix].last_ticks = last;
		g.marks[g.nix++] = c == 0;
		gen_chunk(&g, HS_CHUNK_EVENTS, rec, (size_t)(p - rec),
			  c % 3 == 0 ? 0 : c % 3);
	}
	g.counts[HS_FC_THREADS] = 2;
	p = hs_tw_sized(rec, HS_TAG_END, body,
			(size_t)(hs_enc_end_body(body, th[0].ticks + 10, 0, 0) - body));
	p = hs_tw_footer_marked(p, g.counts, g.ix, g.nix, g.marks);
	gen_chunk(&g, HS_CHUNK_END, rec, (size_t)(p - rec), 1);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(g.buf, 1, g.len, f), g.len);
	assert_int_equal(fclose(f), 0);
	free(g.buf);
	free(rec);
}

/* Every record a reader gets from @path but the FOOTER, as bytes. */
static size_t records_of(const char *path, uint8_t **out, uint64_t *chunks)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_trace_reader r;
	struct hs_rec rec;
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int ret;

	assert_int_equal(hs_trace_reader_open(&r, path, &diag), 0);
	while ((ret = hs_trace_reader_next(&r, &rec, &diag)) == 1) {
		uint64_t v[] = {rec.tag,  rec.tid,   rec.ticks,	   rec.addr,
				rec.size, rec.stack, rec.old_addr, rec.old_size,
				rec.lead, rec.id,    rec.value,	   rec.body_len};
		size_t need = sizeof(v) + (rec.body ? rec.body_len : 0);

		if (rec.tag == HS_TAG_FOOTER)
			continue;
		if (len + need > cap) {
			cap = (len + need) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		memcpy(buf + len, v, sizeof(v));
		len += sizeof(v);
		if (rec.body && rec.body_len) {
			memcpy(buf + len, rec.body, rec.body_len);
			len += rec.body_len;
		}
	}
	assert_int_equal(ret, 0);
	assert_false(r.cut_off);
	*chunks = r.nr_chunks;
	hs_trace_reader_close(&r);
	*out = buf;
	return len;
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > 0);
	rewind(f);
	b = malloc((size_t)size);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	*n = (size_t)size;
	return b;
}

static void tmp_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/hs_repack_%d_%s.heapscope",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), name);
}

/* Repacked with @chunk_records per chunk, the reader gets the same records. */
static void same_records(size_t chunk_records, uint64_t want_min, uint64_t want_max)
{
	char path[512], tmp[600];
	struct hs_repack_opts o = {.chunk_records = chunk_records};
	struct hs_repack_stats st;
	uint8_t *before, *after;
	size_t nb, na;
	uint64_t cb, ca;
	struct stat sb;

	tmp_path(path, sizeof(path), "same");
	write_trace(path);
	nb = records_of(path, &before, &cb);
	assert_int_equal(cb, CHUNKS + 1);
	assert_int_equal(hs_trace_repack(path, &o, &st), 0);
	assert_null(st.skipped);
	assert_int_equal(st.chunks_in, CHUNKS);
	assert_in_range(st.chunks_out, want_min, want_max);
	assert_true(st.bytes_out < st.bytes_in);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal((uint64_t)sb.st_size, st.bytes_out);
	na = records_of(path, &after, &ca);
	assert_int_equal(ca, st.chunks_out + 1);
	assert_int_equal(na, nb);
	assert_memory_equal(before, after, nb);
	snprintf(tmp, sizeof(tmp), "%s.repack", path);
	assert_int_not_equal(access(tmp, F_OK), 0);
	/* once more: one chunk of events is left as it is */
	if (want_max == 1) {
		assert_int_equal(hs_trace_repack(path, NULL, &st), 0);
		assert_non_null(st.skipped);
	}
	free(before);
	free(after);
	unlink(path);
}

static void test_repack_one_chunk(void **state)
{
	(void)state;
	same_records(0, 1, 1);
}

static void test_repack_several_chunks(void **state)
{
	(void)state;
	/* records of 4 to 7 bytes a record, 300 a chunk: a few input chunks
	 * per output chunk */
	same_records(6000, 5, CHUNKS / 2);
}

/* A fault in the middle of the rewrite: the trace is byte for byte as it
 * was, and the temporary file is gone. */
static void test_repack_fault_leaves_original(void **state)
{
	char path[512], tmp[600];
	struct hs_repack_opts o = {.chunk_records = 4000, .fault_after_chunks = 3};
	struct hs_repack_stats st;
	uint8_t *before, *after, *ra, *rb;
	size_t nb, na, nra, nrb;
	uint64_t ca, cb;

	(void)state;
	tmp_path(path, sizeof(path), "fault");
	write_trace(path);
	before = read_file(path, &nb);
	assert_int_equal(hs_trace_repack(path, &o, &st), -EIO);
	after = read_file(path, &na);
	assert_int_equal(na, nb);
	assert_memory_equal(before, after, nb);
	snprintf(tmp, sizeof(tmp), "%s.repack", path);
	assert_int_not_equal(access(tmp, F_OK), 0);
	/* and it still reads whole */
	nrb = records_of(path, &rb, &cb);
	assert_int_equal(cb, CHUNKS + 1);
	/* a stale temporary file (a rewrite killed) is replaced */
	{
		FILE *f = fopen(tmp, "wb");

		assert_non_null(f);
		fputs("a rewrite cut short", f);
		fclose(f);
	}
	assert_int_equal(hs_trace_repack(path, NULL, &st), 0);
	assert_null(st.skipped);
	assert_int_not_equal(access(tmp, F_OK), 0);
	nra = records_of(path, &ra, &ca);
	assert_int_equal(ca, 2);
	assert_int_equal(nra, nrb);
	assert_memory_equal(ra, rb, nrb);
	free(ra);
	free(rb);
	free(before);
	free(after);
	unlink(path);
}

/* While another process holds the rewriters' lock on the trace (a repack
 * or a symbolize under way), the trace and that rewrite's temporary file
 * are left alone. */
static void test_repack_skips_locked(void **state)
{
	char path[512], tmp[600];
	struct hs_repack_stats st;
	uint8_t *before, *after, *t;
	size_t nb, na, nt;
	int lock;

	(void)state;
	tmp_path(path, sizeof(path), "locked");
	write_trace(path);
	before = read_file(path, &nb);
	snprintf(tmp, sizeof(tmp), "%s.repack", path);
	{
		FILE *f = fopen(tmp, "wb");

		assert_non_null(f);
		fputs("the other rewrite's half", f);
		fclose(f);
	}
	lock = hs_open_locked(path, O_RDONLY, 1);
	assert_true(lock >= 0);
	assert_int_equal(hs_trace_repack(path, NULL, &st), 0);
	assert_string_equal(st.skipped, "another heapscope is rewriting it");
	after = read_file(path, &na);
	assert_int_equal(na, nb);
	assert_memory_equal(before, after, nb);
	free(after);
	t = read_file(tmp, &nt);
	assert_int_equal(nt, strlen("the other rewrite's half"));
	assert_memory_equal(t, "the other rewrite's half", nt);
	free(t);
	/* the lock let go: rewritten, and the stale file replaced */
	close(lock);
	assert_int_equal(hs_trace_repack(path, NULL, &st), 0);
	assert_null(st.skipped);
	assert_int_not_equal(access(tmp, F_OK), 0);
	free(before);
	unlink(path);
}

/* A cut-off trace (no END chunk, or one cut inside a chunk) is left as it is. */
static void test_repack_skips_cut_off(void **state)
{
	char path[512];
	struct hs_repack_stats st;
	uint8_t *b, *after;
	size_t n, na;
	FILE *f;

	(void)state;
	tmp_path(path, sizeof(path), "cut");
	write_trace(path);
	b = read_file(path, &n);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n - 7, f), n - 7);
	fclose(f);
	assert_int_equal(hs_trace_repack(path, NULL, &st), 0);
	assert_non_null(st.skipped);
	after = read_file(path, &na);
	assert_int_equal(na, n - 7);
	assert_memory_equal(after, b, na);
	free(after);
	/* the whole trace again: a sample that gains too little is skipped,
	 * one that gains enough is not, and chunks too big to join are */
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
	{
		struct hs_repack_opts o = {.probe = 1, .min_gain_permille = 999};

		assert_int_equal(hs_trace_repack(path, &o, &st), 0);
		assert_non_null(st.skipped);
		assert_in_range(st.probe_gain_permille, 1, 998);
		after = read_file(path, &na);
		assert_int_equal(na, n);
		assert_memory_equal(after, b, n);
		free(after);
		o.chunk_records = 100;
		o.min_gain_permille = 0;
		assert_int_equal(hs_trace_repack(path, &o, &st), 0);
		assert_string_equal(st.skipped, "no two of its chunks join into one");
		o.chunk_records = 0;
		o.large_records = 1000;
		o.large_min_gain_permille = 999;
		assert_int_equal(hs_trace_repack(path, &o, &st), 0);
		assert_non_null(st.skipped);
		o.large_min_gain_permille = 1;
		o.skip_stored_mean = st.stored_in / CHUNKS;
		assert_int_equal(hs_trace_repack(path, &o, &st), 0);
		assert_string_equal(st.skipped, "its chunks are big already");
		o.skip_stored_mean += 1;
		assert_int_equal(hs_trace_repack(path, &o, &st), 0);
		assert_null(st.skipped);
		assert_int_equal(st.chunks_out, 1);
	}
	free(b);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_repack_one_chunk),
	    cmocka_unit_test(test_repack_several_chunks),
	    cmocka_unit_test(test_repack_fault_leaves_original),
	    cmocka_unit_test(test_repack_skips_cut_off),
	    cmocka_unit_test(test_repack_skips_locked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
