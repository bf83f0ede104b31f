/*
 * trace_streams - where a heap trace's bytes go (issue 14 item 4, bench/README.md,
 * "Trace bytes per event against heaptrack").
 *
 *   trace_streams FILE...
 *
 * For each EVENTS chunk of each FILE: the bytes the file spends on it;
 * its records encoded compact by this build's encoder (hs_chunk_compact_5_0(),
 * the collector's), compressed with zstd as the writer does (its
 * blocks ending where the streams do; -1, or -3 where -1 made the
 * payload 8 times smaller or more), heap sizes whole and split (the
 * better of the two per chunk; the streams are the split one's); the
 * same with the 4.0 encoder (hs_chunk_compact(), no predicted
 * addresses, NODE records whole; the better of whole and split sizes)
 * and the 3.0 one (hs_chunk_compact_3_0(), no size classes);
 * plain,
 * compressed the same way; the better of the two; and each stream of the
 * compact payload compressed alone, which says which field the bytes go
 * to. Then the share of the heap events whose address the compact
 * encoding writes literally for a reason no in-chunk reference can
 * remove: a free of a block allocated in an earlier chunk, an allocation
 * at an address never seen before. Figures are per heap event record (a
 * realloc counts once, the mmap family not at all). Every chunk's
 * compact payload is unpacked again (trace_compact.h) and compared with
 * the records it came from: a difference is an error.
 *
 * The chunk boundaries are the file's, so two encoders (this build's and
 * another's) compare on the same chunks, whatever the load of the machine
 * that recorded them was. Owns nothing beyond its run; reads the file
 * with the trace reader (format/trace_reader.h).
 */
#include "common/alloc.h"
#include "common/diag.h"
#include "common/u64map.h"
#include "format/trace_compact.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "format/trace_record.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define LEVEL 1 /* the writer's zstd level (and HS_ZSTD_LEVEL_REPEATS) */

static const char *const stream_names[HS_CC__COUNT + 1] = {
    [HS_CC_TIME] = "TIME",   [HS_CC_ADDR] = "ADDRESS", [HS_CC_REF] = "REF",
    [HS_CC_SIZE] = "SIZE",   [HS_CC_STACK] = "STACK",  [HS_CC_OTHER] = "OTHER",
    [HS_CC_SIZE_LOW] = "SIZE_LOW", [HS_CC_REF_ALLOC] = "REF_ALLC", [HS_CC_REF_CLASS] = "REF_CLAS",
    [HS_CC_REF_OTHER] = "REF_OTHR", [HS_CC_REF_LOW] = "REF_LOW",
    [HS_CC_ADDR_NEW] = "ADDR_NEW", [HS_CC_NODE_ID] = "NODE_ID",
    [HS_CC_NODE_PARENT] = "NODE_PAR", [HS_CC_NODE_ADDR] = "NODE_ADR",
    [HS_CC_RECORDS] = "RECORD",
};

struct totals {
	uint64_t chunks, compact_chunks, records;
	uint64_t file, compact, compact_whole, compact_split, compact_4_0, compact_3_0, plain,
	    best, raw;
	uint64_t stream[HS_CC__COUNT + 1];
	uint64_t old_frees, fresh_allocs;
};

struct tables {
	struct hs_compact_enc *enc;
	uint8_t *scratch, *packed, *z;
	size_t z_cap;
	ZSTD_CCtx *cctx;
	struct hs_chunk_unpack unpack;
	int zlevel; /* the next compact payload's, as the writer picks it */
	struct hs_u64map live, seen, here; /* across chunks; this chunk's allocations */
};

/* zstd -1 of @n bytes at @p: its size (0 for nothing). */
static uint64_t zsize(struct tables *t, const uint8_t *p, size_t n)
{
	size_t z;

	if (!n)
		return 0;
	z = ZSTD_compressCCtx(t->cctx, t->z, t->z_cap, p, n, LEVEL);
	return ZSTD_isError(z) ? n : z;
}

static int is_free(unsigned tag)
{
	return tag == HS_TAG_FREE || tag == HS_TAG_REALLOC_FREE ||
	       tag == HS_TAG_FREE_TEMPORARY;
}

/*
 * zstd at @level of the compact payload of @n bytes at @c and its @count
 * streams as the writer makes it (hs_tw_zstd_compact()). Its size, or @n
 * when it does not come out.
 */
static uint64_t zsize_compact_at(struct tables *t, const uint8_t *c, size_t n,
				 unsigned count, int level)
{
	size_t z = hs_tw_zstd_compact(t->cctx, level, t->z, t->z_cap, c, n, count);

	return z ? z : n;
}

static uint64_t zsize_compact(struct tables *t, const uint8_t *c, size_t n, unsigned count)
{
	return zsize_compact_at(t, c, n, count, LEVEL);
}

/*
 * The same at the level the 5.0 writer takes (collector/writer.c): the
 * one the previous compact payload's ratio chose, HS_ZSTD_LEVEL_REPEATS
 * after a payload zstd made HS_ZSTD_REPEATS_RATIO times smaller or more,
 * else LEVEL.
 */
static uint64_t zsize_compact_5_0(struct tables *t, const uint8_t *c, size_t n)
{
	uint64_t z = zsize_compact_at(t, c, n, HS_CC__COUNT, t->zlevel);

	t->zlevel = z * HS_ZSTD_REPEATS_RATIO <= n ? HS_ZSTD_LEVEL_REPEATS : LEVEL;
	return z;
}

/*
 * Count the chunk's heap event records and the literal addresses no
 * in-chunk reference can remove; 0 or -1 (a malformed record, or no
 * memory).
 */
static int classify(struct tables *t, const uint8_t *p, const uint8_t *end,
		    struct totals *tot)
{
	struct hs_rec_state st = { 0 };
	struct hs_rec rec;
	const char *why;
	uint64_t a;

	hs_u64map_clear(&t->here);
	while (p < end) {
		if (hs_rec_decode(&p, end, &st, &rec, &why)) {
			fprintf(stderr, "trace_streams: %s\n", why);
			return -1;
		}
		if (rec.tag < HS_TAG_MALLOC || rec.tag > HS_TAG_FREE_TEMPORARY)
			continue;
		tot->records++;
		if (is_free(rec.tag) || (hs_tag_is_realloc(rec.tag) && rec.old_addr)) {
			a = is_free(rec.tag) ? rec.addr : rec.old_addr;
			if (!hs_u64map_has(&t->here, a) && hs_u64map_has(&t->live, a))
				tot->old_frees++;
			hs_u64map_del(&t->live, a, NULL);
			hs_u64map_del(&t->here, a, NULL);
		}
		if (is_free(rec.tag))
			continue;
		if (!hs_u64map_has(&t->seen, rec.addr))
			tot->fresh_allocs++;
		if (hs_u64map_put(&t->seen, rec.addr, 1, NULL) < 0 ||
		    hs_u64map_put(&t->live, rec.addr, 1, NULL) < 0 ||
		    hs_u64map_put(&t->here, rec.addr, 1, NULL) < 0)
			return -1;
	}
	return 0;
}

/* One EVENTS chunk, header @h: its records [@p, @end). */
static int chunk(struct tables *t, const struct hs_chunk_header *h, const uint8_t *p,
		 const uint8_t *end, struct totals *tot)
{
	size_t n = (size_t)(end - p), c, c3, back_n;
	uint64_t plain, compact, whole, split4, len[HS_CC__COUNT + 1];
	const uint8_t *back;
	const char *why;
	const uint8_t *q, *qend;
	unsigned i;

	tot->chunks++;
	tot->compact_chunks += !!(h->flags & HS_CHUNK_COMPACT);
	tot->file += HS_CHUNK_HEADER_SIZE + h->stored;
	tot->raw += n;
	plain = HS_CHUNK_HEADER_SIZE + zsize(t, p, n);
	tot->plain += plain;
	c = hs_chunk_compact_5_0(p, n, t->enc, t->scratch, t->packed,
				 2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	if (!c) {
		/* a record the encoder has no layout for: plain only */
		tot->compact += plain;
		tot->compact_whole += plain;
		tot->compact_split += plain;
		tot->compact_3_0 += plain;
		tot->compact_4_0 += plain;
		tot->best += plain;
		return classify(t, p, end, tot);
	}
	/* the 3.0 encoder's, for comparison (its tables are the same) */
	c3 = hs_chunk_compact_3_0(p, n, t->enc, t->scratch, t->packed,
				  2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	tot->compact_3_0 +=
	    HS_CHUNK_HEADER_SIZE + (c3 ? zsize_compact(t, t->packed, c3, HS_CC_COUNT_3_0)
				       : plain);
	/* the 4.0 encoder's, sizes whole and split, the better of the two */
	t->enc->split_sizes = 0;
	c3 = hs_chunk_compact(p, n, t->enc, t->scratch, t->packed,
				  2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	whole = c3 ? zsize_compact(t, t->packed, c3, HS_CC_COUNT_4_0) : plain;
	t->enc->split_sizes = 1;
	c3 = hs_chunk_compact(p, n, t->enc, t->scratch, t->packed,
				  2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	split4 = c3 ? zsize_compact(t, t->packed, c3, HS_CC_COUNT_4_0) : plain;
	tot->compact_4_0 += HS_CHUNK_HEADER_SIZE + (whole < split4 ? whole : split4);
	/* sizes whole, then split (whose streams are shown) */
	t->enc->split_sizes = 0;
	c = hs_chunk_compact_5_0(p, n, t->enc, t->scratch, t->packed,
				 2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	whole = HS_CHUNK_HEADER_SIZE + zsize_compact_5_0(t, t->packed, c);
	t->enc->split_sizes = 1;
	c = hs_chunk_compact_5_0(p, n, t->enc, t->scratch, t->packed,
				 2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	compact = HS_CHUNK_HEADER_SIZE + zsize_compact_5_0(t, t->packed, c);
	tot->compact_whole += whole;
	tot->compact_split += compact;
	if (whole < compact)
		compact = whole;
	tot->compact += compact;
	tot->best += compact < plain ? compact : plain;
	/* read back, the records must be the same */
	if (hs_chunk_unpack(&t->unpack, HS_CHUNK_COMPACT | HS_CHUNK_CLASSES | HS_CHUNK_PREDICT,
			    t->packed, c, &back, &back_n, &why) ||
	    back_n != n || memcmp(back, p, n)) {
		fprintf(stderr, "trace_streams: chunk %u does not read back as it was\n",
			h->seq);
		return -1;
	}
	q = t->packed;
	qend = q + c;
	for (i = 0; i <= HS_CC__COUNT; i++)
		if (hs_get_varint(&q, qend, &len[i]))
			return -1;
	/* len[0] is the records' length; the streams follow, RECORD last */
	for (i = 0; i < HS_CC__COUNT; i++) {
		tot->stream[i] += zsize(t, q, (size_t)len[i + 1]);
		q += len[i + 1];
	}
	tot->stream[HS_CC_RECORDS] += zsize(t, q, (size_t)(qend - q));
	return classify(t, p, end, tot);
}

static void report(const char *path, const struct totals *tot)
{
	double r = tot->records ? (double)tot->records : 1;
	uint64_t sum = 0;
	unsigned i;

	printf("%s: %llu EVENTS chunks (%llu compact in the file), %llu heap event records\n",
	       path, (unsigned long long)tot->chunks, (unsigned long long)tot->compact_chunks,
	       (unsigned long long)tot->records);
	printf("  B/record: file %.3f; every chunk compact %.3f (sizes whole %.3f, split "
	       "%.3f; 4.0's compact %.3f, 3.0's %.3f), plain %.3f, the better of compact "
	       "and plain %.3f\n",
	       tot->file / r, tot->compact / r, tot->compact_whole / r,
	       tot->compact_split / r, tot->compact_4_0 / r, tot->compact_3_0 / r,
	       tot->plain / r, tot->best / r);
	printf("  chunks: %.1f KiB of records, %.0f heap events each on average\n",
	       tot->chunks ? tot->raw / 1024.0 / (double)tot->chunks : 0.0,
	       tot->chunks ? r / (double)tot->chunks : 0.0);
	for (i = 0; i <= HS_CC__COUNT; i++)
		sum += tot->stream[i];
	for (i = 0; i <= HS_CC__COUNT; i++)
		printf("  %-8s alone %.3f B/record (%4.1f%%)\n", stream_names[i],
		       tot->stream[i] / r, sum ? 100.0 * tot->stream[i] / sum : 0.0);
	printf("  literal: frees of blocks of earlier chunks %.1f%%, allocations at new "
	       "addresses %.1f%% of the records\n",
	       100.0 * tot->old_frees / r, 100.0 * tot->fresh_allocs / r);
}

static int one_file(struct tables *t, const char *path)
{
	struct hs_trace_reader r;
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct totals tot = { 0 };
	char msg[600];
	int ret;

	hs_u64map_clear(&t->live);
	hs_u64map_clear(&t->seen);
	if (hs_trace_reader_open(&r, path, &diag)) {
		fprintf(stderr, "trace_streams: %s\n", hs_diag_format(&diag, msg, sizeof(msg)));
		return -1;
	}
	while ((ret = hs__reader_next_chunk(&r, &diag)) == 1) {
		if (r.chunk.kind != HS_CHUNK_EVENTS)
			continue;
		if (chunk(t, &r.chunk, r.p, r.end, &tot)) {
			ret = -1;
			break;
		}
	}
	if (ret < 0)
		fprintf(stderr, "trace_streams: %s\n",
			diag.set ? hs_diag_format(&diag, msg, sizeof(msg))
				 : "cannot read a chunk (out of memory?)");
	else
		report(path, &tot);
	hs_trace_reader_close(&r);
	return ret < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct tables t = { .zlevel = LEVEL };
	int i, status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: trace_streams FILE...\n");
		return 2;
	}
	t.enc = hs_calloc(1, sizeof(*t.enc));
	t.scratch = hs_malloc(HS_CC_SCRATCH(HS_CHUNK_MAX));
	t.packed = hs_malloc(2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	t.z_cap = ZSTD_compressBound(2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	t.z = hs_malloc(t.z_cap);
	t.cctx = ZSTD_createCCtx();
	hs_u64map_init(&t.live);
	hs_u64map_init(&t.seen);
	hs_u64map_init(&t.here);
	if (!t.enc || !t.scratch || !t.packed || !t.z || !t.cctx) {
		fprintf(stderr, "trace_streams: out of memory\n");
		return 1;
	}
	for (i = 1; i < argc; i++)
		if (one_file(&t, argv[i]))
			status = 1;
	hs_u64map_release(&t.live);
	hs_u64map_release(&t.seen);
	hs_u64map_release(&t.here);
	hs_chunk_unpack_release(&t.unpack);
	ZSTD_freeCCtx(t.cctx);
	hs_free(t.z);
	hs_free(t.packed);
	hs_free(t.scratch);
	hs_free(t.enc);
	return status;
}
