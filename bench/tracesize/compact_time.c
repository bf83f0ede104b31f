/*
 * compact_time - the CPU of the collector's compact encoder (issue 14,
 * bench/README.md, "Format 4.0: the encoder's CPU").
 *
 *   compact_time FILE [PASSES]      (PASSES=9)
 *
 * Reads FILE's EVENTS chunks (their records, as the writer had them),
 * then encodes every chunk with hs_chunk_compact_5_0() (heap sizes split)
 * and compresses each payload with zstd -1, PASSES times over. Prints
 * the encoder's seconds (the minimum over the passes of the thread's CPU
 * time, so that a shared machine's noise drops out), those of zstd
 * beside them, and the payloads' bytes, which an encoder that is only
 * faster must leave as they are. zstd runs between the encodings, as on
 * the writer thread, so the encoder's tables see the cache they would.
 * Last, what a table of the live blocks' allocation numbers, kept by the
 * writer across chunks, would add to it (bench/README.md, "Frees that
 * name their block across chunks"): a pass that decodes the records and
 * puts every allocation in such a table and takes every free out of it,
 * less a pass that only decodes them (the minimum of each over the
 * passes; the same table for all threads); the same with a table whose
 * slots follow the addresses (near_table).
 * Owns the chunks it copied; reads the file with the trace reader.
 */
#include "common/alloc.h"
#include "common/diag.h"
#include "common/u64map.h"
#include "format/trace_reader.h"
#include "format/trace_record.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#define LEVEL 1 /* the writer's zstd level */
#define OUT_CAP (2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX)

struct records {
	uint8_t *p;
	size_t n;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Copy FILE's EVENTS chunks' records into *@out (*@count of them). */
static int load(const char *path, struct records **out, size_t *count)
{
	struct hs_trace_reader r;
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct records *v = NULL;
	size_t n = 0, cap = 0;
	char msg[600];
	int ret;

	if (hs_trace_reader_open(&r, path, &diag)) {
		fprintf(stderr, "compact_time: %s\n",
			hs_diag_format(&diag, msg, sizeof(msg)));
		return -1;
	}
	while ((ret = hs__reader_next_chunk(&r, &diag)) == 1) {
		if (r.chunk.kind != HS_CHUNK_EVENTS)
			continue;
		if (n == cap) {
			struct records *g = hs_grow(v, sizeof(*v), n + 1, &cap);

			if (!g) {
				ret = -1;
				break;
			}
			v = g;
		}
		v[n].n = (size_t)(r.end - r.p);
		v[n].p = hs_malloc(v[n].n ? v[n].n : 1);
		if (!v[n].p) {
			ret = -1;
			break;
		}
		memcpy(v[n].p, r.p, v[n].n);
		n++;
	}
	if (ret < 0)
		fprintf(stderr, "compact_time: %s\n",
			diag.set ? hs_diag_format(&diag, msg, sizeof(msg))
				 : "out of memory");
	hs_trace_reader_close(&r);
	*out = v;
	*count = n;
	return ret < 0 ? -1 : 0;
}

static int is_free(unsigned tag)
{
	return tag == HS_TAG_FREE || tag == HS_TAG_REALLOC_FREE ||
	       tag == HS_TAG_FREE_TEMPORARY;
}

/*
 * The same table with its slots where the addresses are (the encoder's
 * cc_home(): 64 slots of 32 bytes of addresses share a block of the
 * table, a hash of the rest picks the block), so that blocks made one
 * after the other share cache lines; linear probing, deletion by
 * shifting back, grown at half full. Address 0 is never a heap block.
 */
struct near_table {
	struct near_slot {
		uint64_t addr, number;
	} *slot;
	size_t cap, nr; /* cap: a power of 2, at least 64 */
};

static size_t near_home(const struct near_table *t, uint64_t addr)
{
	uint64_t h = (addr >> 11) * 0x9e3779b97f4a7c15ull;

	return ((size_t)(h >> 32) << 6 | (size_t)(addr >> 5 & 63)) & (t->cap - 1);
}

static int near_grow(struct near_table *t);

static int near_put(struct near_table *t, uint64_t addr, uint64_t number)
{
	size_t i;

	if (2 * (t->nr + 1) > t->cap && near_grow(t))
		return -1;
	for (i = near_home(t, addr); t->slot[i].addr && t->slot[i].addr != addr;
	     i = (i + 1) & (t->cap - 1))
		;
	t->nr += !t->slot[i].addr;
	t->slot[i].addr = addr;
	t->slot[i].number = number;
	return 0;
}

static int near_grow(struct near_table *t)
{
	struct near_table g = { hs_calloc(t->cap ? 2 * t->cap : 1 << 16, sizeof(*g.slot)),
				t->cap ? 2 * t->cap : 1 << 16, 0 };
	size_t i;

	if (!g.slot)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->slot[i].addr && near_put(&g, t->slot[i].addr, t->slot[i].number))
			return -1;
	hs_free(t->slot);
	*t = g;
	return 0;
}

static void near_del(struct near_table *t, uint64_t addr)
{
	size_t mask = t->cap - 1, i, j, home;

	if (!t->cap)
		return;
	for (i = near_home(t, addr); t->slot[i].addr != addr; i = (i + 1) & mask)
		if (!t->slot[i].addr)
			return;
	/* shift back the entries whose search passed over slot i */
	for (j = (i + 1) & mask; t->slot[j].addr; j = (j + 1) & mask) {
		home = near_home(t, t->slot[j].addr);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i].addr = 0;
	t->nr--;
}

/*
 * Decode the records of @c; with @table, keep in it every live block's
 * address -> its allocation number (*@number counts them). The heap
 * events seen, or -1 (malformed, or no memory).
 */
static long long table_pass(const struct records *c, struct hs_u64map *table,
			    struct near_table *near, uint64_t *number)
{
	struct hs_rec_state st = { 0 };
	struct hs_rec rec;
	const uint8_t *p = c->p, *end = c->p + c->n;
	const char *why;
	long long events = 0;

	while (p < end) {
		if (hs_rec_decode(&p, end, &st, &rec, &why))
			return -1;
		if (rec.tag < HS_TAG_MALLOC || rec.tag > HS_TAG_FREE_TEMPORARY)
			continue;
		events++;
		if (near) {
			if (is_free(rec.tag)) {
				near_del(near, rec.addr);
				continue;
			}
			if (hs_tag_is_realloc(rec.tag) && rec.old_addr)
				near_del(near, rec.old_addr);
			if (rec.addr && near_put(near, rec.addr, ++*number))
				return -1;
			continue;
		}
		if (!table)
			continue;
		if (is_free(rec.tag)) {
			hs_u64map_del(table, rec.addr, NULL);
			continue;
		}
		if (hs_tag_is_realloc(rec.tag) && rec.old_addr)
			hs_u64map_del(table, rec.old_addr, NULL);
		if (hs_u64map_put(table, rec.addr, ++*number, NULL) < 0)
			return -1;
	}
	return events;
}

int main(int argc, char **argv)
{
	struct hs_compact_enc *enc = hs_calloc(1, sizeof(*enc));
	uint8_t *scratch = hs_malloc(HS_CC_SCRATCH(HS_CHUNK_MAX));
	uint8_t *packed = hs_malloc(OUT_CAP);
	size_t z_cap = ZSTD_compressBound(OUT_CAP), count = 0, i;
	uint8_t *z = hs_malloc(z_cap);
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct records *chunks = NULL;
	double best_enc = 1e30, best_z = 1e30, best_dec = 1e30, best_tab = 1e30,
	       best_near = 1e30;
	struct hs_u64map table;
	struct near_table near = { 0 };
	long long events = 0;
	uint64_t bytes = 0, zbytes = 0, records = 0;
	int passes = argc > 2 ? atoi(argv[2]) : 9, pass;

	if (argc < 2 || passes < 1) {
		fprintf(stderr, "usage: compact_time FILE [PASSES]\n");
		return 2;
	}
	if (!enc || !scratch || !packed || !z || !cctx) {
		fprintf(stderr, "compact_time: out of memory\n");
		return 1;
	}
	if (load(argv[1], &chunks, &count))
		return 1;
	enc->split_sizes = 1;
	for (pass = 0; pass < passes; pass++) {
		double t_enc = 0, t_z = 0, t0, t1;

		bytes = zbytes = records = 0;
		for (i = 0; i < count; i++) {
			size_t c, zc;

			t0 = now_s();
			c = hs_chunk_compact_5_0(chunks[i].p, chunks[i].n, enc, scratch,
						 packed, OUT_CAP);
			t1 = now_s();
			t_enc += t1 - t0;
			records += chunks[i].n;
			if (!c)
				continue;
			zc = ZSTD_compressCCtx(cctx, z, z_cap, packed, c, LEVEL);
			t_z += now_s() - t1;
			bytes += c;
			zbytes += ZSTD_isError(zc) ? c : zc;
		}
		if (t_enc < best_enc)
			best_enc = t_enc;
		if (t_z < best_z)
			best_z = t_z;
	}
	hs_u64map_init(&table);
	for (pass = 0; pass < passes; pass++) {
		uint64_t number = 0;
		double t_dec, t_tab, t_near, t0;
		long long e = 0;

		hs_u64map_clear(&table);
		t0 = now_s();
		for (i = 0, events = 0; i < count; i++) {
			if ((e = table_pass(&chunks[i], NULL, NULL, NULL)) < 0)
				break;
			events += e;
		}
		t_dec = now_s() - t0;
		t0 = now_s();
		for (i = 0; i < count && e >= 0; i++)
			e = table_pass(&chunks[i], &table, NULL, &number);
		t_tab = now_s() - t0;
		near.nr = 0;
		if (near.slot)
			memset(near.slot, 0, near.cap * sizeof(*near.slot));
		t0 = now_s();
		for (i = 0; i < count && e >= 0; i++)
			e = table_pass(&chunks[i], NULL, &near, &number);
		t_near = now_s() - t0;
		if (t_near < best_near)
			best_near = t_near;
		if (e < 0) {
			fprintf(stderr, "compact_time: a malformed record, or no memory\n");
			return 1;
		}
		if (t_dec < best_dec)
			best_dec = t_dec;
		if (t_tab < best_tab)
			best_tab = t_tab;
	}
	printf("%s: %zu chunks, %llu bytes of records: encoder %.4f s, zstd %.4f s "
	       "(minimum of %d passes); compact %llu bytes, zstd %llu\n",
	       argv[1], count, (unsigned long long)records, best_enc, best_z, passes,
	       (unsigned long long)bytes, (unsigned long long)zbytes);
	printf("  a table of the live blocks across chunks: %.4f s over %lld heap events "
	       "(%.1f ns an event; decoding alone %.4f s, with the table %.4f s), %.1f MiB\n",
	       best_tab - best_dec, events,
	       events ? 1e9 * (best_tab - best_dec) / (double)events : 0.0, best_dec, best_tab,
	       hs_u64map_memory(&table) / 1048576.0);
	printf("  the same, its slots where the addresses are: %.4f s (%.1f ns an event), "
	       "%.1f MiB\n",
	       best_near - best_dec,
	       events ? 1e9 * (best_near - best_dec) / (double)events : 0.0,
	       near.cap * sizeof(*near.slot) / 1048576.0);
	hs_free(near.slot);
	hs_u64map_release(&table);
	for (i = 0; i < count; i++)
		hs_free(chunks[i].p);
	hs_free(chunks);
	ZSTD_freeCCtx(cctx);
	hs_free(z);
	hs_free(packed);
	hs_free(scratch);
	hs_free(enc);
	return 0;
}
