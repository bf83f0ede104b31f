/*
 * trace_streams - where a heap trace's bytes go (issue 14 item 4, bench/README.md,
 * "Trace bytes per event against heaptrack").
 *
 *   trace_streams [--near N] FILE...
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
 * Then two estimates of formats not built (bench/README.md, "Frees that
 * name their block across chunks"): xref(), the frees of blocks a thread
 * allocated in earlier chunks named by the block's allocation number
 * instead of their address (with --near N, only those whose number is
 * less than N from the thread's last such free's); pairs(), the heap
 * allocations' sizes and stacks as the index of their (stack, size) pair
 * in the chunk or in the file.
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
	uint64_t old_frees, fresh_allocs, reused_old;
	/* the estimate of frees that name a block of an earlier chunk */
	uint64_t x_compact, x_back, x_delta, x_named, x_far, x_other_thread, x_realloc_old;
	uint64_t x_live_peak, x_table_peak; /* the writer's table: live blocks, bytes */
	uint64_t x_stream[HS_CC__COUNT + 1]; /* the rewritten chunks' streams, alone */
	/* design (b): heap allocations' size and stack, as two varint
	 * streams; as (stack, size) pair ids of the chunk (0 then the pair
	 * in two streams for a new one), and of the file */
	uint64_t p_plain, p_chunk, p_file;
};

struct tables {
	struct hs_compact_enc *enc;
	uint8_t *scratch, *packed, *z;
	size_t z_cap;
	ZSTD_CCtx *cctx;
	struct hs_chunk_unpack unpack;
	int zlevel; /* the next compact payload's, as the writer picks it */
	struct hs_u64map live, seen, here; /* across chunks; this chunk's allocations */
	struct hs_u64map freed_here;	   /* this chunk's frees */
	/* the estimate (xref()): across chunks, a live block's address ->
	 * its thread (high 24 bits) and the thread's allocation number
	 * (low 40); a thread -> its allocations so far, and the number of
	 * the last block it freed by number; this chunk's allocations */
	struct hs_u64map xlive, xcount, xlast, xhere;
	uint8_t *xrec, *xback, *xdelta; /* the records rewritten; the two numbers */
	int xlevel;			 /* zlevel of the rewritten chunks */
	uint64_t near; /* name only the frees whose delta is below it (0: all) */
	/* pairs(): (stack, size) -> id in the chunk, in the file */
	struct hs_u64map pchunk, pfile;
	uint8_t *ps[7]; /* sizes, stacks; chunk ids, new sizes, new stacks; file ids, ... */
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
	hs_u64map_clear(&t->freed_here);
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
			if (hs_u64map_put(&t->freed_here, a, 1, NULL) < 0)
				return -1;
		}
		if (is_free(rec.tag))
			continue;
		if (!hs_u64map_has(&t->seen, rec.addr))
			tot->fresh_allocs++;
		else if (!hs_u64map_has(&t->freed_here, rec.addr))
			tot->reused_old++;
		if (hs_u64map_put(&t->seen, rec.addr, 1, NULL) < 0 ||
		    hs_u64map_put(&t->live, rec.addr, 1, NULL) < 0 ||
		    hs_u64map_put(&t->here, rec.addr, 1, NULL) < 0)
			return -1;
	}
	return 0;
}

/*
 * Add each stream of the 5.0 compact payload of @c bytes at @packed,
 * compressed alone with zstd -1, to @stream. 0 or -1 (malformed).
 */
static int stream_sizes(struct tables *t, const uint8_t *packed, size_t c,
			uint64_t stream[HS_CC__COUNT + 1])
{
	const uint8_t *q = packed, *qend = packed + c;
	uint64_t len[HS_CC__COUNT + 1];
	unsigned i;

	for (i = 0; i <= HS_CC__COUNT; i++)
		if (hs_get_varint(&q, qend, &len[i]))
			return -1;
	/* len[0] is the records' length; the streams follow, RECORD last */
	for (i = 0; i < HS_CC__COUNT; i++) {
		if (len[i + 1] > (uint64_t)(qend - q))
			return -1;
		stream[i] += zsize(t, q, (size_t)len[i + 1]);
		q += len[i + 1];
	}
	stream[HS_CC_RECORDS] += zsize(t, q, (size_t)(qend - q));
	return 0;
}

#define XTID(v) ((v) >> 40)
#define XNUM(v) ((v) & ((UINT64_C(1) << 40) - 1))

/*
 * The estimate of design (a) of bench/README.md ("Frees that name their
 * block across chunks"): each FREE (REALLOC_FREE, FREE_TEMPORARY) of a
 * block that the same thread allocated in an earlier chunk is taken out
 * of the chunk's records (the records after it in its span written again
 * with their dt and da from the records left), the rest encoded compact
 * and compressed as chunk() does (the better of sizes whole and split);
 * what names those blocks instead is counted apart, two ways, each its
 * own stream compressed alone with zstd -1: the thread's allocations
 * since the block's (a varint, "back") and the block's allocation number
 * less the one of the thread's last block freed that way (an svarint,
 * "delta"). The taken frees' tags (one byte each in the RECORD stream,
 * which compresses to almost nothing) are not counted. The records
 * written again are decoded once more and must give the events kept
 * (their count and a sum of their times and addresses). 0 or -1.
 */
static int xref(struct tables *t, const uint8_t *p, const uint8_t *end, struct totals *tot)
{
	struct hs_rec_state st = { 0 }, w = { 0 };
	struct hs_rec rec;
	const uint8_t *s, *q;
	uint8_t *o = t->xrec, *back = t->xback, *delta = t->xdelta;
	uint64_t v, *count, *last, freed, field;
	const char *why;
	size_t c, n;
	uint64_t whole, split;
	int added, zl;
	int64_t d;
	uint64_t kept = 0, kept_sum = 0; /* the events written again, a sum of them */

	hs_u64map_clear(&t->xhere);
	while (p < end) {
		s = p;
		if (hs_rec_decode(&p, end, &st, &rec, &why)) {
			fprintf(stderr, "trace_streams: %s\n", why);
			return -1;
		}
		if (rec.tag == HS_TAG_SPAN) {
			w = st;
			memcpy(o, s, (size_t)(p - s));
			o += p - s;
			continue;
		}
		if (rec.tag < HS_TAG_MALLOC || rec.tag > HS_TAG_MREMAP) {
			memcpy(o, s, (size_t)(p - s));
			o += p - s;
			continue;
		}
		if (rec.tag <= HS_TAG_FREE_TEMPORARY) {
			count = hs_u64map_ref(&t->xcount, rec.tid, 0, &added);
			if (!count)
				return -1;
			if (is_free(rec.tag) && !hs_u64map_has(&t->xhere, rec.addr) &&
			    hs_u64map_get(&t->xlive, rec.addr, &v)) {
				last = hs_u64map_ref(&t->xlast, rec.tid, 0, &added);
				if (!last)
					return -1;
				d = (int64_t)(XNUM(v) - *last);
				if (XTID(v) == (rec.tid & 0xffffff))
					*last = XNUM(v); /* named or not: the reader knows it */
				if (XTID(v) == (rec.tid & 0xffffff) &&
				    (!t->near || (d < 0 ? -(uint64_t)d : (uint64_t)d) < t->near)) {
					back = hs_put_varint(back, *count - XNUM(v));
					delta = hs_put_svarint(delta, d);
					tot->x_named++;
					hs_u64map_del(&t->xlive, rec.addr, NULL);
					continue; /* taken out; w stays */
				}
				if (XTID(v) == (rec.tid & 0xffffff))
					tot->x_far++;
				else
					tot->x_other_thread++;
			}
			if (hs_tag_is_realloc(rec.tag) && rec.old_addr &&
			    !hs_u64map_has(&t->xhere, rec.old_addr) &&
			    hs_u64map_has(&t->xlive, rec.old_addr))
				tot->x_realloc_old++;
			if (is_free(rec.tag) || (hs_tag_is_realloc(rec.tag) && rec.old_addr)) {
				freed = is_free(rec.tag) ? rec.addr : rec.old_addr;
				hs_u64map_del(&t->xlive, freed, NULL);
				hs_u64map_del(&t->xhere, freed, NULL);
			}
			if (!is_free(rec.tag)) {
				(*count)++;
				if (hs_u64map_put(&t->xlive, rec.addr,
						  (rec.tid & 0xffffff) << 40 | XNUM(*count), NULL) < 0 ||
				    hs_u64map_put(&t->xhere, rec.addr, 1, NULL) < 0)
					return -1;
			}
		}
		/* the record again, its dt and da from the records left */
		q = s + 1;
		if (hs_get_varint(&q, p, &field) || hs_get_varint(&q, p, &field))
			return -1;
		*o++ = rec.tag;
		o = hs_put_svarint(o, (int64_t)(rec.ticks - w.ticks));
		o = hs_put_svarint(o, (int64_t)(rec.addr - w.addr));
		memcpy(o, q, (size_t)(p - q));
		o += p - q;
		w.ticks = rec.ticks;
		w.addr = rec.addr;
		kept++;
		kept_sum += rec.ticks ^ rec.addr * 31;
	}
	/* the records written again must decode to the events kept */
	memset(&st, 0, sizeof(st));
	for (q = t->xrec; q < o;) {
		if (hs_rec_decode(&q, o, &st, &rec, &why))
			return -1;
		if (rec.tag >= HS_TAG_MALLOC && rec.tag <= HS_TAG_MREMAP) {
			kept--;
			kept_sum -= rec.ticks ^ rec.addr * 31;
		}
	}
	if (kept || kept_sum) {
		fprintf(stderr, "trace_streams: the records without the named frees differ\n");
		return -1;
	}
	if (hs_u64map_count(&t->xlive) > tot->x_live_peak)
		tot->x_live_peak = hs_u64map_count(&t->xlive);
	if (hs_u64map_memory(&t->xlive) > tot->x_table_peak)
		tot->x_table_peak = hs_u64map_memory(&t->xlive);
	n = (size_t)(o - t->xrec);
	zl = t->zlevel;
	t->zlevel = t->xlevel;
	t->enc->split_sizes = 0;
	c = hs_chunk_compact_5_0(t->xrec, n, t->enc, t->scratch, t->packed,
				 2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	whole = c ? zsize_compact_5_0(t, t->packed, c) : zsize(t, t->xrec, n);
	t->enc->split_sizes = 1;
	c = hs_chunk_compact_5_0(t->xrec, n, t->enc, t->scratch, t->packed,
				 2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	split = c ? zsize_compact_5_0(t, t->packed, c) : zsize(t, t->xrec, n);
	if (c && stream_sizes(t, t->packed, c, tot->x_stream))
		return -1;
	t->xlevel = t->zlevel;
	t->zlevel = zl;
	tot->x_compact += HS_CHUNK_HEADER_SIZE + (whole < split ? whole : split);
	tot->x_back += zsize(t, t->xback, (size_t)(back - t->xback));
	tot->x_delta += zsize(t, t->xdelta, (size_t)(delta - t->xdelta));
	return 0;
}

/* A (stack, size) pair's key (0 never: the maps take it, but keep it apart). */
static uint64_t pair_key(uint64_t stack, uint64_t size)
{
	return (stack * UINT64_C(0x9E3779B97F4A7C15)) ^ (size + 1) ^ (size << 47);
}

/*
 * Design (b) of bench/README.md: what the heap allocations' sizes and
 * stacks cost written as now (two varint streams, each compressed alone
 * with zstd -1) against as the index of their (stack, size) pair, first
 * among the chunk's pairs (a new pair: 0, then its size and stack in
 * streams of their own), then among the file's so far (what heaptrack's
 * allocation infos are; chunks would no longer decode alone). The key is
 * a hash of the pair (a collision would only shorten the estimate). 0 or
 * -1.
 */
static int pairs(struct tables *t, const uint8_t *p, const uint8_t *end, struct totals *tot)
{
	struct hs_rec_state st = { 0 };
	struct hs_rec rec;
	uint8_t *o[7];
	const char *why;
	uint64_t *id;
	int added, i;

	for (i = 0; i < 7; i++)
		o[i] = t->ps[i];
	hs_u64map_clear(&t->pchunk);
	while (p < end) {
		if (hs_rec_decode(&p, end, &st, &rec, &why))
			return -1;
		if (rec.tag < HS_TAG_MALLOC || rec.tag > HS_TAG_FREE_TEMPORARY ||
		    is_free(rec.tag))
			continue;
		o[0] = hs_put_varint(o[0], rec.size);
		o[1] = hs_put_varint(o[1], rec.stack);
		id = hs_u64map_ref(&t->pchunk, pair_key(rec.stack, rec.size),
				   hs_u64map_count(&t->pchunk) + 1, &added);
		if (!id)
			return -1;
		o[2] = hs_put_varint(o[2], added ? 0 : *id);
		if (added) {
			o[3] = hs_put_varint(o[3], rec.size);
			o[4] = hs_put_varint(o[4], rec.stack);
		}
		id = hs_u64map_ref(&t->pfile, pair_key(rec.stack, rec.size),
				   hs_u64map_count(&t->pfile) + 1, &added);
		if (!id)
			return -1;
		o[5] = hs_put_varint(o[5], added ? 0 : *id);
		if (added) {
			o[6] = hs_put_varint(o[6], rec.size);
			o[6] = hs_put_varint(o[6], rec.stack);
		}
	}
	tot->p_plain += zsize(t, t->ps[0], (size_t)(o[0] - t->ps[0])) +
			zsize(t, t->ps[1], (size_t)(o[1] - t->ps[1]));
	tot->p_chunk += zsize(t, t->ps[2], (size_t)(o[2] - t->ps[2])) +
			zsize(t, t->ps[3], (size_t)(o[3] - t->ps[3])) +
			zsize(t, t->ps[4], (size_t)(o[4] - t->ps[4]));
	tot->p_file += zsize(t, t->ps[5], (size_t)(o[5] - t->ps[5])) +
		       zsize(t, t->ps[6], (size_t)(o[6] - t->ps[6]));
	return 0;
}

/* One EVENTS chunk, header @h: its records [@p, @end). */
static int chunk(struct tables *t, const struct hs_chunk_header *h, const uint8_t *p,
		 const uint8_t *end, struct totals *tot)
{
	size_t n = (size_t)(end - p), c, c3, back_n;
	uint64_t plain, compact, whole, split4;
	const uint8_t *back;
	const char *why;

	tot->chunks++;
	if (xref(t, p, end, tot) || pairs(t, p, end, tot))
		return -1;
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
	if (stream_sizes(t, t->packed, c, tot->stream))
		return -1;
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
	       "addresses %.1f%%, at addresses freed before the chunk only %.1f%% of the "
	       "records\n",
	       100.0 * tot->old_frees / r, 100.0 * tot->fresh_allocs / r,
	       100.0 * tot->reused_old / r);
	printf("  frees named across chunks (%.1f%% of the records; left literal: deltas "
	       "too far %.1f%%, other threads' %.1f%%, reallocs' old blocks %.1f%%): compact "
	       "%.3f B/record + back %.3f = %.3f, + delta %.3f = %.3f\n",
	       100.0 * tot->x_named / r, 100.0 * tot->x_far / r, 100.0 * tot->x_other_thread / r,
	       100.0 * tot->x_realloc_old / r, tot->x_compact / r, tot->x_back / r,
	       (tot->x_compact + tot->x_back) / r, tot->x_delta / r,
	       (tot->x_compact + tot->x_delta) / r);
	printf("  without the frees named, streams alone (B/record):");
	for (i = 0; i <= HS_CC__COUNT; i++)
		if (tot->x_stream[i] * 1000 >= tot->records)
			printf(" %s %.3f", stream_names[i], tot->x_stream[i] / r);
	printf("\n");
	printf("  live blocks at a chunk's end, at most %llu (a table of them: %.1f MiB)\n",
	       (unsigned long long)tot->x_live_peak, tot->x_table_peak / 1048576.0);
	printf("  allocations' sizes and stacks alone: as now %.3f B/record, as (stack, size) "
	       "ids of the chunk %.3f, of the file %.3f\n",
	       tot->p_plain / r, tot->p_chunk / r, tot->p_file / r);
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
	hs_u64map_clear(&t->xlive);
	hs_u64map_clear(&t->xcount);
	hs_u64map_clear(&t->xlast);
	hs_u64map_clear(&t->pfile);
	t->zlevel = t->xlevel = LEVEL;
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
	struct tables t = { .zlevel = LEVEL, .xlevel = LEVEL };
	int i, first, status = 0, no_memory = 0;

	for (i = 1; i + 1 < argc && !strcmp(argv[i], "--near"); i += 2)
		t.near = strtoull(argv[i + 1], NULL, 10);
	if (i >= argc) {
		fprintf(stderr, "usage: trace_streams [--near N] FILE...\n");
		return 2;
	}
	first = i;
	t.enc = hs_calloc(1, sizeof(*t.enc));
	t.scratch = hs_malloc(HS_CC_SCRATCH(HS_CHUNK_MAX));
	t.packed = hs_malloc(2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	t.z_cap = ZSTD_compressBound(2 * HS_CHUNK_MAX + HS_CC_HEADER_MAX);
	t.z = hs_malloc(t.z_cap);
	t.cctx = ZSTD_createCCtx();
	hs_u64map_init(&t.live);
	hs_u64map_init(&t.seen);
	hs_u64map_init(&t.here);
	hs_u64map_init(&t.freed_here);
	hs_u64map_init(&t.xlive);
	hs_u64map_init(&t.xcount);
	hs_u64map_init(&t.xlast);
	hs_u64map_init(&t.xhere);
	hs_u64map_init(&t.pchunk);
	hs_u64map_init(&t.pfile);
	for (i = 0; i < 7; i++)
		if (!(t.ps[i] = hs_malloc(2 * HS_CHUNK_MAX)))
			no_memory = 1;
	t.xrec = hs_malloc(2 * HS_CHUNK_MAX + 64);
	t.xback = hs_malloc(HS_CHUNK_MAX);
	t.xdelta = hs_malloc(2 * HS_CHUNK_MAX);
	if (!t.enc || !t.scratch || !t.packed || !t.z || !t.cctx || !t.xrec || !t.xback ||
	    !t.xdelta || no_memory) {
		fprintf(stderr, "trace_streams: out of memory\n");
		return 1;
	}
	for (i = first; i < argc; i++)
		if (one_file(&t, argv[i]))
			status = 1;
	hs_u64map_release(&t.live);
	hs_u64map_release(&t.seen);
	hs_u64map_release(&t.here);
	hs_u64map_release(&t.freed_here);
	hs_u64map_release(&t.xlive);
	hs_u64map_release(&t.xcount);
	hs_u64map_release(&t.xlast);
	hs_u64map_release(&t.xhere);
	hs_u64map_release(&t.pchunk);
	hs_u64map_release(&t.pfile);
	for (i = 0; i < 7; i++)
		hs_free(t.ps[i]);
	hs_free(t.xrec);
	hs_free(t.xback);
	hs_free(t.xdelta);
	hs_chunk_unpack_release(&t.unpack);
	ZSTD_freeCCtx(t.cctx);
	hs_free(t.z);
	hs_free(t.packed);
	hs_free(t.scratch);
	hs_free(t.enc);
	return status;
}
