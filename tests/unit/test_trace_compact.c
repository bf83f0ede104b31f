/*
 * Tests of compact EVENTS chunks (5.0, 4.0 and 3.0's): hs_chunk_compact_5_0(),
 * hs_chunk_compact() and hs_chunk_compact_3_0() in format/trace_record.h write them,
 * hs_chunk_unpack() in format/trace_compact.h reads them back. Records
 * round-trip byte for byte, with heap sizes whole or split; addresses
 * refer back to the thread's allocations and frees (an allocation's, in
 * 4.0, to the frees of its size class), so that a program that repeats
 * itself at new addresses writes the same bytes again; a golden payload
 * pins the 4.0 layout; a cut or damaged payload, and references a
 * hostile file makes up, are refused with a message, never read or
 * written out of bounds (the ASan build checks that); the reader reads
 * a compact trace as the plain one, and 3.0's compact chunks beside
 * 4.0's. 5.0's (a new block's address from the thread's prediction,
 * NODE records in streams) round-trip, survive damage, and read as the
 * plain trace; a stream's reader gets their MALLOC, CALLOC and FREE
 * records as events (hs_chunk_unpack_events()) and the rest as records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zstd.h>
#include "format/trace_compact.h"
#include "format/trace_prefetch.h"
#include "format/trace_reader.h"
#include "format/trace_record.h"
#include "format/trace_writer.h"

#define RECORDS_MAX (1 << 16)

static struct hs_compact_enc enc; /* 4 MiB: static, zeroed once */
static uint8_t scratch[HS_CC_SCRATCH(RECORDS_MAX)];
static uint8_t packed[2 * RECORDS_MAX + HS_CC_HEADER_MAX];

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Records of three threads taking turns in spans: allocations, frees of
 * what the thread allocated (or of an address it never did), reallocs
 * in place, moved and from NULL, aligned allocations, temporary frees,
 * the mmap family, NODE and sized records between them. Addresses come
 * from a small pool, so that they repeat and the encoder refers back.
 * Returns the records' length.
 */
static size_t many_records(uint8_t *buf, size_t room, uint64_t seed)
{
	uint64_t x = seed, live[3][64] = { { 0 } }, last = 0, node = 1;
	uint8_t *p = buf;
	unsigned tid = 0, i;

	while ((size_t)(p - buf) < room - 128) {
		uint64_t r = next_random(&x), addr, old;
		uint64_t *slot = &live[tid][r % 64];
		int64_t dt = (int64_t)(r >> 60);

		switch (r >> 8 & 15) {
		case 0:
			tid = (unsigned)(r >> 16) % 3;
			last = 0x10000 * (tid + 1);
			p = hs_enc_span(p, tid + 100, r >> 40, last);
			continue;
		case 1:
			p = hs_enc_node(p, node, node - 1, r >> 20);
			node++;
			continue;
		case 2: {
			uint8_t body[32], *q = hs_enc_clock_body(body, r >> 30, r >> 40);

			p = hs_tw_sized(p, HS_TAG_RSS, body, (size_t)(q - body));
			continue;
		}
		case 3:
			p = hs_enc_mmap(p, dt, (int64_t)((r >> 12) - last), 4096, 3, 0x22, 7);
			last = r >> 12;
			continue;
		case 4:
			p = hs_enc_munmap(p, dt, 0x1000, 4096);
			last += 0x1000;
			continue;
		case 5:
			p = hs_enc_mremap(p, dt, -0x2000, 8192, 7, 0x2000, 4096);
			last -= 0x2000;
			continue;
		case 6:
		case 7:
		case 8:
			if (!*slot)
				break;
			addr = *slot;
			*slot = 0;
			p = hs_enc_free(p, (r >> 20 & 3) == 0 ? HS_TAG_FREE_TEMPORARY
				      : (r >> 20 & 3) == 1  ? HS_TAG_REALLOC_FREE
							    : HS_TAG_FREE,
					dt, (int64_t)(addr - last));
			last = addr;
			continue;
		case 9:
			/* a realloc: in place, moved, or of NULL */
			old = *slot;
			addr = (r >> 20 & 1) && old ? old : 0x100000 + (r >> 24) % 512 * 16;
			p = hs_enc_realloc(p, HS_TAG_REALLOC, dt, (int64_t)(addr - last),
					   r >> 40, 3, (int64_t)(old - addr), r >> 50);
			*slot = addr;
			last = addr;
			continue;
		case 10:
			/* an address the thread never allocated */
			addr = 0x900000 + (r >> 24) % 4096 * 16;
			p = hs_enc_free(p, HS_TAG_FREE, dt, (int64_t)(addr - last));
			last = addr;
			continue;
		default:
			break;
		}
		/* an allocation, where the pool's slot is free */
		for (i = 0; i < 64 && *slot; i++)
			slot = &live[tid][(r + i) % 64];
		if (*slot)
			continue;
		addr = 0x100000 + (r >> 24) % 512 * 16;
		p = hs_enc_alloc(p, (r >> 4 & 3) ? HS_TAG_MALLOC : HS_TAG_MEMALIGN, dt,
				 (int64_t)(addr - last), r >> 50, r >> 58, (r >> 4 & 3) ? 0 : 64);
		*slot = addr;
		last = addr;
	}
	return (size_t)(p - buf);
}

/* The stream lengths of compact payload @c of @flags: how many bytes each holds. */
static void stream_lengths_of(const uint8_t *c, size_t n, unsigned flags,
			      uint64_t len[HS_CC__COUNT + 1])
{
	const uint8_t *q = c;
	unsigned i;

	memset(len, 0, (HS_CC__COUNT + 1) * sizeof(*len));
	for (i = 0; i <= HS_CC_STREAMS(flags); i++)
		assert_int_equal(hs_get_varint(&q, c + n, &len[i]), 0);
}

/* The same, of a 4.0 payload. */
static void stream_lengths(const uint8_t *c, size_t n, uint64_t len[HS_CC__COUNT + 1])
{
	stream_lengths_of(c, n, HS_CHUNK_COMPACT | HS_CHUNK_CLASSES, len);
}

/*
 * Where stream @stream begins in payload @c (@n bytes) of @flags, whose
 * lengths stream_lengths_of() gave in @len: past the header of lengths
 * (each one read) and the streams before it.
 */
static const uint8_t *stream_at(const uint8_t *c, size_t n, unsigned flags,
				const uint64_t len[HS_CC__COUNT + 1], unsigned stream)
{
	const uint8_t *q = c;
	uint64_t v;
	unsigned i;

	for (i = 0; i <= HS_CC_STREAMS(flags); i++)
		assert_int_equal(hs_get_varint(&q, c + n, &v), 0);
	for (i = 0; i < stream; i++)
		q += len[1 + i];
	return q;
}

/* The compact payloads of a test: 3.0's, 4.0's with sizes whole and split. */
enum mode { MODE_3_0, MODE_WHOLE, MODE_SPLIT, MODE__COUNT };

/* Encode @n bytes of records at @in the way of @mode; its chunk flags in *@flags. */
static size_t compact_as(enum mode mode, const uint8_t *in, size_t n, uint8_t *out,
			 size_t cap, unsigned *flags)
{
	*flags = HS_CHUNK_COMPACT | (mode == MODE_3_0 ? 0 : HS_CHUNK_CLASSES);
	enc.split_sizes = mode == MODE_SPLIT;
	if (mode == MODE_3_0)
		return hs_chunk_compact_3_0(in, n, &enc, scratch, out, cap);
	return hs_chunk_compact(in, n, &enc, scratch, out, cap);
}

/* Compact and unpack: the same bytes; the references were used. */
static void compact_round_trip(void **state)
{
	static uint8_t in[RECORDS_MAX];
	struct hs_chunk_unpack u = { 0 };
	const uint8_t *out;
	const char *why = NULL;
	uint64_t len[HS_CC__COUNT + 1], seed;
	size_t n = 0, c, got;
	unsigned flags;
	int mode;

	(void)state;
	for (mode = 0; mode < MODE__COUNT; mode++) {
		for (seed = 1; seed <= 4; seed++) {
			n = many_records(in, sizeof(in), seed * 0x9e3779b97f4a7c15ull);
			c = compact_as(mode, in, n, packed, sizeof(packed), &flags);
			assert_true(c > 0);
			stream_lengths_of(packed, c, flags, len);
			assert_int_equal(len[0], n);
			/* a free refers to its allocation: fewer literal addresses
			 * than the events that have one (about two thirds of them);
			 * 4.0 writes the allocations' references apart */
			assert_true(len[1 + HS_CC_REF] + len[1 + HS_CC_REF_ALLOC] > n / 16);
			/* split sizes have their low bits, whole ones none */
			assert_int_equal(len[1 + HS_CC_SIZE_LOW] > 0, mode == MODE_SPLIT);
			assert_int_equal(
			    hs_chunk_unpack(&u, flags, packed, c, &out, &got, &why), 0);
			assert_int_equal(got, n);
			assert_memory_equal(out, in, n);
		}
		/* nothing: an empty payload */
		c = compact_as(mode, in, 0, packed, sizeof(packed), &flags);
		assert_int_equal(c, HS_CC_STREAMS(flags) + 1);
		assert_int_equal(hs_chunk_unpack(&u, flags, packed, c, &out, &got, &why), 0);
		assert_int_equal(got, 0);
	}
	enc.split_sizes = 0;
	/* a plain payload is handed out as it is */
	assert_int_equal(hs_chunk_unpack(&u, 0, in, n, &out, &got, &why), 0);
	assert_ptr_equal(out, in);
	assert_int_equal(got, n);
	hs_chunk_unpack_release(&u);
}

/*
 * The encoder's tables are kept from chunk to chunk, stamped with the
 * chunk's generation, and cleared when the generations wrap: the same
 * records give the same payload in every chunk, before and after.
 */
static void tables_outlive_their_generations(void **state)
{
	static uint8_t in[RECORDS_MAX], first[sizeof(packed)];
	size_t n, c0, c;
	unsigned i;

	(void)state;
	n = many_records(in, sizeof(in), 77);
	c0 = hs_chunk_compact(in, n, &enc, scratch, first, sizeof(first));
	assert_true(c0 > 0);
	for (i = 0; i < HS_CC_GEN_LIMIT + 3; i++) {
		c = hs_chunk_compact(in, n, &enc, scratch, packed, sizeof(packed));
		assert_int_equal(c, c0);
		assert_memory_equal(packed, first, c0);
	}
}

/*
 * More addresses in a chunk than the address table keeps: the ones past
 * it are written as they are (no reference), and the chunk still reads
 * back byte for byte.
 */
static void a_full_table_writes_literals(void **state)
{
	size_t blocks = HS_CC_TABLE / 2 + 1000, room = blocks * 16 + 64, n, c, got, i;
	uint8_t *in = malloc(room), *cscratch = malloc(HS_CC_SCRATCH(room)),
		*out = malloc(2 * room + HS_CC_HEADER_MAX), *p;
	uint64_t last = 0, len[HS_CC__COUNT + 1], addr;
	struct hs_chunk_unpack u = { 0 };
	const uint8_t *back;
	const char *why = NULL;

	(void)state;
	assert_non_null(in);
	assert_non_null(cscratch);
	assert_non_null(out);
	p = hs_enc_span(in, 9, 0, 0);
	/* blocks 64 bytes apart, so that 16 share a span of the table */
	for (i = 0; i < blocks; i++) {
		addr = 0x40000000 + 64 * (uint64_t)i;
		p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, (int64_t)(addr - last), 48, 3, 0);
		last = addr;
	}
	for (i = 0; i < blocks; i++) {
		addr = 0x40000000 + 64 * (uint64_t)i;
		p = hs_enc_free(p, HS_TAG_FREE, 0, (int64_t)(addr - last));
		last = addr;
	}
	n = (size_t)(p - in);
	c = hs_chunk_compact(in, n, &enc, cscratch, out, 2 * room + HS_CC_HEADER_MAX);
	assert_true(c > 0);
	stream_lengths(out, c, len);
	/* every allocation is literal (5 bytes for the first, 2 for each
	 * +64 after it); the frees of the blocks the table kept refer back,
	 * the last 1000 are literal (+64, 2 bytes each) */
	assert_int_equal(len[1 + HS_CC_ADDR], 5 + 2 * (blocks - 1) + 2 * 1000);
	assert_int_equal(hs_chunk_unpack(&u, HS_CHUNK_COMPACT | HS_CHUNK_CLASSES, out, c,
					 &back, &got, &why),
			 0);
	assert_int_equal(got, n);
	assert_memory_equal(back, in, n);
	hs_chunk_unpack_release(&u);
	free(in);
	free(cscratch);
	free(out);
}

/*
 * A loop that allocates and frees the same way on every turn at
 * addresses that differ (what a program's heap does): it frees the last
 * turn's blocks in a fixed order, gets four of them back and four new
 * ones anywhere. The compact chunk repeats itself where the columnar one
 * does not, so zstd makes it much smaller.
 */
static void repeating_program_repeats_its_bytes(void **state)
{
	static uint8_t in[RECORDS_MAX], cols[RECORDS_MAX + HS_CS_HEADER_MAX],
		cscratch[(HS_CS__COUNT + 1) * (RECORDS_MAX + HS_CS_SLACK)],
		z[ZSTD_COMPRESSBOUND(2 * RECORDS_MAX)];
	uint64_t x = 42, last = 0, blocks[8] = { 0 }, freed[8];
	size_t n, c, k, zc, zk;
	uint8_t *p = in;
	unsigned i;

	(void)state;
	p = hs_enc_span(p, 7, 0, 0);
	while ((size_t)(p - in) < sizeof(in) - 512) {
		for (i = 0; i < 8 && blocks[0]; i++) {
			freed[i] = blocks[(i * 3) % 8];
			p = hs_enc_free(p, HS_TAG_FREE, 0, (int64_t)(freed[i] - last));
			last = freed[i];
		}
		for (i = 0; i < 8; i++) {
			blocks[i] = i < 4 && blocks[0] ? freed[7 - i]
						       : 0x10000000 + 16 * (next_random(&x) >> 44);
			p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, (int64_t)(blocks[i] - last),
					 32 + i, 5 + i, 0);
			last = blocks[i];
		}
	}
	n = (size_t)(p - in);
	k = hs_chunk_split(in, n, cscratch, cols);
	c = hs_chunk_compact(in, n, &enc, scratch, packed, sizeof(packed));
	assert_true(k > 0 && c > 0);
	zk = ZSTD_compress(z, sizeof(z), cols, k, 1);
	zc = ZSTD_compress(z, sizeof(z), packed, c, 1);
	assert_false(ZSTD_isError(zk) || ZSTD_isError(zc));
	print_message("columns %zu bytes, compact %zu bytes (of %zu)\n", zk, zc, n);
	assert_true(zc < zk / 2);
}

/*
 * The 4.0 layout, pinned: eight events of thread 0 and the payload they
 * make, sizes whole and split. A free names its allocation (REF and
 * REF_LOW: the high bits and the low 7); an allocation the latest free
 * of its size class ((size + 7) / 16, REF_ALLOC), else, where that is
 * 0, the class (+ 1) and place of another free (REF_CLASS, REF_OTHER),
 * 64 being the frees of no class, else its address.
 */
static void golden_payload(void **state)
{
	static const uint8_t whole[] = {
		0x25,				     /* the records' length */
		8, 6, 3, 5, 5, 0, 0, 5, 4, 2, 3,     /* stream lengths */
		0, 0, 0, 0, 0, 0, 0, 0,		     /* TIME */
		0x80, 0x40, 0x40, 0xc0, 0xff, 0x01,  /* ADDRESS: +0x1000 +0x20 +0x3fe0 */
		0, 0, 0,			     /* REF: the frees', high bits */
		24, 100, 30, 104, 16,		     /* SIZE */
		1, 2, 1, 2, 3,			     /* STACK */
		0, 0, 0, 1, 0,			     /* REF_ALLOC */
		0, 0, 2, 64,			     /* REF_CLASS */
		1, 1,				     /* REF_OTHER */
		2, 1, 0,			     /* REF_LOW: the frees', low bits */
		3, 3, 0x0c, 0x0c, 3, 3, 0x0c, 3,     /* RECORD */
	};
	static const uint8_t split[] = {
		0x25, 8, 6, 3, 5, 5, 0, 5, 5, 4, 2, 3,
		0, 0, 0, 0, 0, 0, 0, 0,
		0x80, 0x40, 0x40, 0xc0, 0xff, 0x01,
		0, 0, 0,
		1, 6, 2, 6, 1,			     /* SIZE: (size + 7) / 16 */
		1, 2, 1, 2, 3,
		15, 11, 5, 15, 7,		     /* SIZE_LOW: (size + 7) % 16 */
		0, 0, 0, 1, 0,
		0, 0, 2, 64,
		1, 1,
		2, 1, 0,
		3, 3, 0x0c, 0x0c, 3, 3, 0x0c, 3,
	};
	uint8_t in[64], *p = in;
	struct hs_chunk_unpack u = { 0 };
	const uint8_t *out;
	const char *why = NULL;
	size_t n, c, got;
	unsigned flags;

	(void)state;
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, 0x1000, 24, 1, 0); /* 0x1000, class 1 */
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, 0x20, 100, 2, 0);	 /* 0x1020, class 6 */
	p = hs_enc_free(p, HS_TAG_FREE, 0, -0x20);		 /* 0x1000: REF 2 */
	p = hs_enc_free(p, HS_TAG_FREE, 0, 0x20);		 /* 0x1020: REF 1 */
	/* 0x1000 again, class 2: the free of class 1 before it */
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, -0x20, 30, 1, 0);
	/* 0x1020 again, class 6: the latest free of class 6 */
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, 0x20, 104, 2, 0);
	p = hs_enc_free(p, HS_TAG_FREE, 0, 0x3fe0);		/* 0x5000: literal */
	p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, 0, 16, 3, 0);	/* 0x5000: of no class */
	n = (size_t)(p - in);
	assert_int_equal(n, 0x25);
	c = compact_as(MODE_WHOLE, in, n, packed, sizeof(packed), &flags);
	assert_int_equal(c, sizeof(whole));
	assert_memory_equal(packed, whole, sizeof(whole));
	c = compact_as(MODE_SPLIT, in, n, packed, sizeof(packed), &flags);
	assert_int_equal(c, sizeof(split));
	assert_memory_equal(packed, split, sizeof(split));
	enc.split_sizes = 0;
	assert_int_equal(hs_chunk_unpack(&u, flags, whole, sizeof(whole), &out, &got, &why), 0);
	assert_int_equal(got, n);
	assert_memory_equal(out, in, n);
	assert_int_equal(hs_chunk_unpack(&u, flags, split, sizeof(split), &out, &got, &why), 0);
	assert_int_equal(got, n);
	assert_memory_equal(out, in, n);
	hs_chunk_unpack_release(&u);
}

/*
 * A program that frees blocks of many sizes and gets each back for a
 * request of its size class (what glibc's bins do): every allocation
 * after the first round refers to a free of its class 1 back, where
 * 3.0's references, counting every free, go as far back as there are
 * classes.
 */
#define ROUNDS 100 /* of 80 events, about 6 bytes each: in fits them */
static void allocations_refer_within_their_class(void **state)
{
	static uint8_t in[RECORDS_MAX];
	struct hs_chunk_unpack u = { 0 };
	uint64_t len[HS_CC__COUNT + 1], last = 0, addr[40], x = 5;
	const uint8_t *out, *q;
	const char *why = NULL;
	uint8_t *p = in;
	size_t n, c, got, i, round;
	unsigned flags;

	(void)state;
	for (i = 0; i < 40; i++) {
		addr[i] = 0x200000 + 0x400 * i;
		p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, (int64_t)(addr[i] - last), 16 * i + 9,
				 1, 0);
		last = addr[i];
	}
	for (round = 0; round < ROUNDS; round++) {
		/* free one block of each class in a random order, then take
		 * each back, in another order, with a size of its class */
		size_t order[40];

		for (i = 0; i < 40; i++)
			order[i] = i;
		for (i = 39; i > 0; i--) {
			size_t j = next_random(&x) % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < 40; i++) {
			p = hs_enc_free(p, HS_TAG_FREE, 0, (int64_t)(addr[order[i]] - last));
			last = addr[order[i]];
		}
		for (i = 0; i < 40; i++) {
			size_t k = order[(i * 7) % 40];

			p = hs_enc_alloc(p, HS_TAG_MALLOC, 0, (int64_t)(addr[k] - last),
					 16 * k + 9 + next_random(&x) % 16, 1, 0);
			last = addr[k];
		}
	}
	n = (size_t)(p - in);
	c = compact_as(MODE_WHOLE, in, n, packed, sizeof(packed), &flags);
	assert_true(c > 0);
	stream_lengths(packed, c, len);
	/* no literal address past the first 40; each allocation's REF is 1
	 * byte, never 0 */
	assert_int_equal(len[1 + HS_CC_REF_CLASS], 40);
	assert_int_equal(len[1 + HS_CC_REF_OTHER], 0);
	/* the REF_ALLOC stream: the first 40 allocations' 0, then every
	 * other's 1 */
	q = stream_at(packed, c, flags, len, HS_CC_REF_ALLOC);
	assert_int_equal(len[1 + HS_CC_REF_ALLOC], 40 + ROUNDS * 40);
	for (i = 0; i < 40 + ROUNDS * 40; i++)
		assert_int_equal(q[i], i >= 40);
	/* the frees' references, 1 to 40 back, are their low bits alone */
	assert_int_equal(len[1 + HS_CC_REF], ROUNDS * 40);
	assert_int_equal(len[1 + HS_CC_REF_LOW], ROUNDS * 40);
	assert_int_equal(hs_chunk_unpack(&u, flags, packed, c, &out, &got, &why), 0);
	assert_int_equal(got, n);
	assert_memory_equal(out, in, n);
	hs_chunk_unpack_release(&u);
}

/*
 * The damage a compact payload @payload of @c bytes read with @flags
 * survives: each cut of it is refused with a reason (its streams or
 * records run short), each flipped bit (in @copy, room for @c bytes) is
 * refused or read within HS_CHUNK_MAX records; never read out of bounds
 * (ASan).
 */
static void cuts_refused_flips_bounded(struct hs_chunk_unpack *u, unsigned flags,
				       const uint8_t *payload, size_t c, uint8_t *copy)
{
	const uint8_t *out;
	const char *why;
	size_t k, got, refused = 0;
	unsigned bit;

	for (k = 0; k < c; k++) {
		/* a copy of exactly k bytes, so that ASan sees a read past it */
		uint8_t *cut = malloc(k ? k : 1);

		assert_non_null(cut);
		memcpy(cut, payload, k);
		why = NULL;
		if (hs_chunk_unpack(u, flags, cut, k, &out, &got, &why)) {
			assert_non_null(why);
			refused++;
		}
		free(cut);
	}
	assert_int_equal(refused, c);
	memcpy(copy, payload, c);
	for (k = 0; k < c; k++)
		for (bit = 0; bit < 8; bit++) {
			copy[k] ^= (uint8_t)(1u << bit);
			if (!hs_chunk_unpack(u, flags, copy, c, &out, &got, &why))
				assert_true(got <= HS_CHUNK_MAX);
			copy[k] ^= (uint8_t)(1u << bit);
		}
}

/*
 * Every cut and every flipped bit of a compact payload: unpacked or
 * refused, never past its input or the room it takes (ASan).
 */
static void compact_survives_damage(void **state)
{
	static uint8_t in[4096], copy[sizeof(packed)];
	struct hs_chunk_unpack u = { 0 };
	const uint8_t *out;
	const char *why;
	size_t n, c, got;
	unsigned flags;
	int mode;

	(void)state;
	for (mode = 0; mode < MODE__COUNT; mode++) {
		n = many_records(in, sizeof(in), 7);
		c = compact_as(mode, in, n, packed, sizeof(packed), &flags);
		assert_true(c > 0);
		cuts_refused_flips_bounded(&u, flags, packed, c, copy);
		/* and read the other way (3.0's as 4.0's and back): the same */
		flags ^= HS_CHUNK_CLASSES;
		if (!hs_chunk_unpack(&u, flags, packed, c, &out, &got, &why))
			assert_true(got <= HS_CHUNK_MAX);
	}
	enc.split_sizes = 0;
	hs_chunk_unpack_release(&u);
}

/* Unpack hand-made payload @p (@n bytes) of @flags; expect a refusal naming @what. */
static void refused_as(unsigned flags, const char *p, size_t n, const char *what)
{
	struct hs_chunk_unpack u = { 0 };
	const uint8_t *out;
	const char *why = NULL;
	size_t got;

	assert_int_equal(hs_chunk_unpack(&u, flags, (const uint8_t *)p, n, &out, &got, &why),
			 -1);
	assert_non_null(why);
	if (!strstr(why, what))
		fail_msg("'%s' does not say '%s'", why, what);
	hs_chunk_unpack_release(&u);
}

#define REFUSED(lit, what) refused_as(HS_CHUNK_COMPACT, lit, sizeof(lit) - 1, what)
#define REFUSED_4_0(lit, what)                                                           \
	refused_as(HS_CHUNK_COMPACT | HS_CHUNK_CLASSES, lit, sizeof(lit) - 1, what)

/*
 * References a hostile file makes up: before the thread's first
 * allocation, to another thread's history, from a thread's free history
 * that is empty; lengths that lie.
 */
static void hostile_references_are_refused(void **state)
{
	(void)state;
	/*
	 * records 3 bytes (FREE dt da); streams: time 1, address 0, refs 1,
	 * sizes 0, stacks 0, other 0; the time 0, the ref 1; the record
	 * stream: the FREE tag. No allocation came before it.
	 */
	REFUSED("\x03\x01\x00\x01\x00\x00\x00" "\x00" "\x01" "\x0c", "refers back");
	/* the same free after a malloc of thread 0 but in a span of thread 5 */
	REFUSED("\x0c\x02\x01\x02\x01\x01\x00"
		"\x00\x00" "\x02" "\x00\x01" "\x10" "\x01"
		"\x03" "\x01\x05\x00\x00" "\x0c",
		"refers back");
	/* a malloc that names the free before it, when there was none */
	REFUSED("\x05\x01\x00\x01\x01\x01\x00" "\x00" "\x01" "\x10" "\x01" "\x03",
		"refers back");
	/* a reference as large as a varint goes */
	REFUSED("\x03\x01\x00\x0a\x00\x00\x00" "\x00"
		"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01" "\x0c",
		"refers back");
	/* records longer than a chunk */
	REFUSED("\x80\x80\x80\x10\x00\x00\x00\x00\x00\x00", "longer than a chunk");
	/* a malloc with a literal address: records of 5 bytes, said to be 4 or 6 */
	REFUSED("\x04\x01\x01\x01\x01\x01\x00" "\x00" "\x02" "\x00" "\x10" "\x01" "\x03",
		"longer than it says");
	REFUSED("\x06\x01\x01\x01\x01\x01\x00" "\x00" "\x02" "\x00" "\x10" "\x01" "\x03",
		"shorter than it says");
	/* a stream with bytes no event uses */
	REFUSED("\x05\x02\x01\x01\x01\x01\x00" "\x00\x00" "\x02" "\x00" "\x10" "\x01"
		"\x03",
		"more than its events");
	/* a tag that is no record */
	REFUSED("\x01\x00\x00\x00\x00\x00\x00" "\x0f", "unknown or malformed");
	/*
	 * 4.0: records 5 bytes (MALLOC dt da size stack); streams: time,
	 * address, refs, sizes, stacks, other, size low bits, allocation
	 * refs, ref classes, other refs, refs' low bits. A malloc that names
	 * the latest free of its class when there was none.
	 */
	REFUSED_4_0("\x05\x01\x00\x00\x01\x01\x00\x00\x01\x00\x00\x00"
		    "\x00" "\x10" "\x01" "\x01" "\x03",
		    "refers back");
	/* a class past the last (64: no class) */
	REFUSED_4_0("\x05\x01\x00\x00\x01\x01\x00\x00\x01\x01\x00\x00"
		    "\x00" "\x10" "\x01" "\x00" "\x41" "\x03",
		    "size class that does not exist");
	/* the latest free of no class, when there was none */
	REFUSED_4_0("\x05\x01\x00\x00\x01\x01\x00\x00\x01\x01\x01\x00"
		    "\x00" "\x10" "\x01" "\x00" "\x40" "\x01" "\x03",
		    "refers back");
	/* a class named, then no reference into it */
	REFUSED_4_0("\x05\x01\x00\x00\x01\x01\x00\x00\x01\x01\x01\x00"
		    "\x00" "\x10" "\x01" "\x00" "\x02" "\x00" "\x03",
		    "refers back");
	/* a literal free (of no class) is not of the malloc's class */
	REFUSED_4_0("\x08\x02\x01\x01\x01\x01\x00\x00\x01\x00\x00\x01"
		    "\x00\x00" "\x20" "\x00" "\x10" "\x01" "\x01" "\x00" "\x0c\x03",
		    "refers back");
	/* split sizes whose low bits are more than 4 bits */
	REFUSED_4_0("\x05\x01\x01\x00\x01\x01\x00\x01\x01\x01\x00\x00"
		    "\x00" "\x00" "\x01" "\x01" "\x10" "\x00" "\x00" "\x03",
		    "more than 4 bits");
	/* a free's low bits that are more than 7 bits */
	REFUSED_4_0("\x03\x01\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02"
		    "\x00" "\x00" "\x80\x01" "\x0c",
		    "refers back");
	/* a 3.0 payload read as 4.0: its record stream is taken for streams */
	REFUSED_4_0("\x03\x01\x01\x01\x00\x00\x00" "\x00" "\x00" "\x00" "\x0c",
		    "");
}

/*
 * Read the trace files @a (plain) and @b (named @bname) side by side:
 * the same records, field by field, and the same end. Returns how many
 * records each held.
 */
static size_t same_records(const uint8_t *a, size_t la, const uint8_t *b, size_t lb,
			   const char *bname)
{
	struct hs_trace_reader r[2];
	struct hs_diag diag[2] = { HS_DIAG_INIT("plain"), HS_DIAG_INIT(bname) };
	const uint8_t *files[2] = { a, b };
	size_t lens[2] = { la, lb }, k;
	struct hs_rec rec[2];
	int ret[2];
	unsigned f;

	for (f = 0; f < 2; f++)
		assert_int_equal(hs_trace_reader_open_mem(&r[f], files[f], lens[f], "t",
							  &diag[f]),
				 0);
	assert_int_equal(r[1].major, HS_TRACE_MAJOR);
	for (k = 0;; k++) {
		for (f = 0; f < 2; f++)
			ret[f] = hs_trace_reader_next(&r[f], &rec[f], &diag[f]);
		assert_int_equal(ret[0], ret[1]);
		if (ret[0] <= 0)
			break;
		assert_int_equal(rec[0].tag, rec[1].tag);
		assert_int_equal(rec[0].tid, rec[1].tid);
		assert_int_equal(rec[0].ticks, rec[1].ticks);
		assert_int_equal(rec[0].addr, rec[1].addr);
		assert_int_equal(rec[0].old_addr, rec[1].old_addr);
		assert_int_equal(rec[0].size, rec[1].size);
		assert_int_equal(rec[0].stack, rec[1].stack);
	}
	assert_int_equal(ret[0], 0);
	assert_int_equal(r[0].nr_events, r[1].nr_events);
	for (f = 0; f < 2; f++)
		hs_trace_reader_close(&r[f]);
	return k;
}

/* The reader: a trace of compact chunks reads as the same trace written plain. */
static void reader_reads_compact_chunks(void **state)
{
	static uint8_t in[RECORDS_MAX], z[ZSTD_COMPRESSBOUND(sizeof(packed))];
	uint8_t *files[2];
	size_t lens[2], k, bounds[3];
	unsigned f, chunk;

	(void)state;
	for (f = 0; f < 2; f++) {
		files[f] = malloc(HS_FILE_HEADER_SIZE + 3 * (HS_CHUNK_HEADER_SIZE + sizeof(z)));
		assert_non_null(files[f]);
		hs_tw_file_header(files[f]);
		lens[f] = HS_FILE_HEADER_SIZE;
		for (chunk = 0; chunk < 3; chunk++) {
			/* the second chunk is written as it is (not compressed) */
			size_t n = many_records(in, sizeof(in), 11 + chunk), c = n, s;
			const uint8_t *data = in;
			unsigned flags = 0;

			if (f) {
				/* 4.0's, sizes split in the last; 3.0's in the middle */
				c = compact_as(chunk == 1	? MODE_3_0
					       : chunk == 2 ? MODE_SPLIT
							    : MODE_WHOLE,
					       in, n, packed, sizeof(packed), &flags);
				assert_true(c > 0);
				data = packed;
			}
			s = c;
			if (chunk != 1) {
				s = ZSTD_compress(z, sizeof(z), data, c, 1);
				assert_false(ZSTD_isError(s));
				data = z;
				flags |= HS_CHUNK_ZSTD;
			}
			hs_tw_chunk_header(files[f] + lens[f], HS_CHUNK_EVENTS, flags,
					   (uint32_t)s, (uint32_t)c, chunk, data);
			memcpy(files[f] + lens[f] + HS_CHUNK_HEADER_SIZE, data, s);
			lens[f] += HS_CHUNK_HEADER_SIZE + s;
			bounds[chunk] = lens[f];
		}
	}
	k = same_records(files[0], lens[0], files[1], lens[1], "compact");
	assert_true(k > 1000);
	/* cut anywhere (every 61st byte): the chunks before the cut read, the
	 * file is cut off */
	for (k = HS_FILE_HEADER_SIZE; k < lens[1]; k += 61) {
		struct hs_trace_reader r;
		struct hs_diag diag = HS_DIAG_INIT("cut");
		struct hs_rec rec;
		int ret;

		assert_int_equal(hs_trace_reader_open_mem(&r, files[1], k, "t", &diag), 0);
		while ((ret = hs_trace_reader_next(&r, &rec, &diag)) > 0)
			;
		assert_int_equal(ret, 0);
		/* (a cut between chunks is a file without its END chunk) */
		assert_true(r.cut_off || k == HS_FILE_HEADER_SIZE || k == bounds[0] ||
			    k == bounds[1]);
		hs_trace_reader_close(&r);
	}
	/* a compact chunk in a file of version 2, a chunk with size classes
	 * in one of 3: refused, not misread */
	for (k = 2; k <= 3; k++) {
		struct hs_trace_reader r;
		struct hs_diag diag = HS_DIAG_INIT("v2");
		struct hs_rec rec;
		int ret;

		hs_put_le16(files[1] + 8, (uint16_t)k);
		assert_int_equal(hs_trace_reader_open_mem(&r, files[1], lens[1], "t", &diag), 0);
		while ((ret = hs_trace_reader_next(&r, &rec, &diag)) > 0)
			;
		assert_true(ret < 0);
		assert_non_null(strstr(diag.msg, "unknown chunk flags"));
		hs_trace_reader_close(&r);
	}
	for (f = 0; f < 2; f++)
		free(files[f]);
}

/* --- 5.0: new blocks' addresses predicted, NODE records in streams ------- */

#define FLAGS_5_0 (HS_CHUNK_COMPACT | HS_CHUNK_CLASSES | HS_CHUNK_PREDICT)

/* Where glibc puts the next block after one of @size bytes at @addr. */
static uint64_t next_block(uint64_t addr, uint64_t size)
{
	uint64_t block = (size + 8 + 15) & ~(uint64_t)15;

	return addr + (block < 32 ? 32 : block);
}

/* The length of the RECORD stream of payload @c (@n bytes, @flags, lengths @len). */
static size_t record_stream(const uint8_t *c, size_t n, unsigned flags, const uint64_t *len)
{
	const uint8_t *q = c;
	uint64_t v;
	size_t rest;
	unsigned i;

	for (i = 0; i <= HS_CC_STREAMS(flags); i++)
		assert_int_equal(hs_get_varint(&q, c + n, &v), 0);
	rest = n - (size_t)(q - c);
	for (i = 0; i < HS_CC_STREAMS(flags); i++)
		rest -= (size_t)len[1 + i];
	return rest;
}

/*
 * 5.0 payloads round-trip byte for byte (sizes whole and split, every
 * record kind, three threads), survive every cut and flipped bit, and a
 * NODE record's fields leave the record stream for the node streams.
 */
static void predicted_round_trip(void **state)
{
	static uint8_t in[RECORDS_MAX], copy[sizeof(packed)];
	struct hs_chunk_unpack u = { 0 };
	uint64_t len[HS_CC__COUNT + 1], len4[HS_CC__COUNT + 1], seed;
	const uint8_t *out;
	const char *why = NULL;
	size_t n, c, c4, got, rec4;
	int split;

	(void)state;
	for (split = 0; split < 2; split++) {
		enc.split_sizes = split;
		for (seed = 1; seed <= 4; seed++) {
			n = many_records(in, sizeof(in), seed * 0x9e3779b97f4a7c15ull);
			c4 = hs_chunk_compact(in, n, &enc, scratch, packed, sizeof(packed));
			assert_true(c4 > 0);
			stream_lengths(packed, c4, len4);
			rec4 = record_stream(packed, c4, HS_CHUNK_COMPACT | HS_CHUNK_CLASSES,
					     len4);
			c = hs_chunk_compact_5_0(in, n, &enc, scratch, packed, sizeof(packed));
			assert_true(c > 0);
			stream_lengths_of(packed, c, FLAGS_5_0, len);
			assert_int_equal(len[0], n);
			/* the nodes' fields: one byte of parent each (id - 1) */
			assert_true(len[1 + HS_CC_NODE_PARENT] > 0);
			assert_int_equal(len[1 + HS_CC_NODE_ID], len[1 + HS_CC_NODE_PARENT]);
			assert_true(len[1 + HS_CC_NODE_ADDR] >= len[1 + HS_CC_NODE_ID]);
			assert_true(len[1 + HS_CC_ADDR_NEW] > 0);
			/* the record stream keeps the NODE tags alone: shorter
			 * than 4.0's by more than a byte a node */
			assert_true(record_stream(packed, c, FLAGS_5_0, len) +
					len[1 + HS_CC_NODE_ID] <
				    rec4);
			assert_int_equal(hs_chunk_unpack(&u, FLAGS_5_0, packed, c, &out, &got,
							 &why),
					 0);
			assert_int_equal(got, n);
			assert_memory_equal(out, in, n);
		}
		/* damage: refused or read, never out of bounds (ASan) */
		n = many_records(in, 4096, 7);
		c = hs_chunk_compact_5_0(in, n, &enc, scratch, packed, sizeof(packed));
		assert_true(c > 0);
		cuts_refused_flips_bounded(&u, FLAGS_5_0, packed, c, copy);
		/* a 5.0 payload read as 4.0's, a 4.0 one as 5.0's: refused or read */
		if (!hs_chunk_unpack(&u, HS_CHUNK_COMPACT | HS_CHUNK_CLASSES, packed, c, &out,
				     &got, &why))
			assert_true(got <= HS_CHUNK_MAX);
		c = hs_chunk_compact(in, n, &enc, scratch, packed, sizeof(packed));
		if (!hs_chunk_unpack(&u, FLAGS_5_0, packed, c, &out, &got, &why))
			assert_true(got <= HS_CHUNK_MAX);
	}
	enc.split_sizes = 0;
	hs_chunk_unpack_release(&u);
}

/*
 * A thread that takes new blocks one after the other, as glibc carves
 * them from the top of its heap, with frees of blocks the chunk never
 * saw between them: each new block's address but the first is its
 * prediction, a 0 in ADDR_NEW.
 */
static void new_blocks_are_predicted(void **state)
{
	static uint8_t in[RECORDS_MAX];
	struct hs_chunk_unpack u = { 0 };
	uint64_t len[HS_CC__COUNT + 1], x = 9, last = 0, addr = 0x55d0a0c012a0, size;
	const uint8_t *q, *out;
	const char *why = NULL;
	uint8_t *p = in;
	size_t n, c, got, i;

	(void)state;
	p = hs_enc_span(p, 42, 0, 0);
	for (i = 0; i < 500; i++) {
		uint64_t old = 0x7f0000000000 + 16 * (next_random(&x) >> 40);

		size = next_random(&x) % 2000;
		p = hs_enc_alloc(p, i % 3 ? HS_TAG_MALLOC : HS_TAG_CALLOC, 1,
				 (int64_t)(addr - last), size, 1 + i % 5, 0);
		last = addr;
		addr = next_block(addr, size);
		p = hs_enc_free(p, HS_TAG_FREE, 0, (int64_t)(old - last));
		last = old;
	}
	n = (size_t)(p - in);
	c = hs_chunk_compact_5_0(in, n, &enc, scratch, packed, sizeof(packed));
	assert_true(c > 0);
	stream_lengths_of(packed, c, FLAGS_5_0, len);
	q = stream_at(packed, c, FLAGS_5_0, len, HS_CC_ADDR_NEW);
	/* the first is in ADDRESS (its prediction, 0, is no nearer than
	 * the span's address); then 499 zeros */
	for (i = 1; i < 500; i++)
		assert_int_equal(*q++, 0);
	assert_int_equal(len[1 + HS_CC_ADDR_NEW], 499);
	/* REF_CLASS: 0 (literal), then HS_CC_REF_NEW (in ADDR_NEW) */
	q = stream_at(packed, c, FLAGS_5_0, len, HS_CC_REF_CLASS);
	assert_int_equal(len[1 + HS_CC_REF_CLASS], 500);
	for (i = 0; i < 500; i++)
		assert_int_equal(q[i], i ? HS_CC_REF_NEW : 0);
	/* the frees' addresses stay in ADDRESS, with the first block's */
	assert_true(len[1 + HS_CC_ADDR] >= 7 + 500);
	assert_int_equal(hs_chunk_unpack(&u, FLAGS_5_0, packed, c, &out, &got, &why), 0);
	assert_int_equal(got, n);
	assert_memory_equal(out, in, n);
	hs_chunk_unpack_release(&u);
}

/*
 * A chain of NODE records (ids one after the other, each the child of
 * the one before, addresses 37 apart) is three runs of one number; a
 * record whose varints are not the shortest cannot be written back the
 * same, nor can an allocation's literal address: the encoder leaves the
 * chunk to be written plain.
 */
static void nodes_are_deltas(void **state)
{
	static uint8_t in[RECORDS_MAX];
	struct hs_chunk_unpack u = { 0 };
	uint64_t len[HS_CC__COUNT + 1], v;
	const uint8_t *q, *out;
	const char *why = NULL;
	uint8_t *p = in;
	size_t n, c, got, i;

	(void)state;
	for (i = 1; i <= 300; i++)
		p = hs_enc_node(p, i, i - 1, 0x401000 + 37 * i);
	n = (size_t)(p - in);
	c = hs_chunk_compact_5_0(in, n, &enc, scratch, packed, sizeof(packed));
	assert_true(c > 0);
	stream_lengths_of(packed, c, FLAGS_5_0, len);
	assert_int_equal(len[1 + HS_CC_NODE_ID], 300);
	assert_int_equal(len[1 + HS_CC_NODE_PARENT], 300);
	q = stream_at(packed, c, FLAGS_5_0, len, HS_CC_NODE_ID);
	for (i = 0; i < 300; i++)
		assert_int_equal(q[i], 0); /* id - (the last + 1) */
	q += 300;
	for (i = 0; i < 300; i++)
		assert_int_equal(q[i], 2); /* id - parent, 1, zigzagged */
	q += 300;
	assert_int_equal(hs_get_varint(&q, packed + c, &v), 0);
	assert_int_equal(v, 2 * (0x401000ull + 37));
	for (i = 1; i < 300; i++)
		assert_int_equal(q[i - 1], 74); /* +37, zigzagged */
	/* the record stream: 300 NODE tags */
	assert_int_equal(c - (size_t)(q + 299 - packed), 300);
	assert_int_equal(hs_chunk_unpack(&u, FLAGS_5_0, packed, c, &out, &got, &why), 0);
	assert_int_equal(got, n);
	assert_memory_equal(out, in, n);
	/* a NODE whose id is 0x81 0x00 (1, not the shortest) */
	memcpy(in, "\x02\x81\x00\x00\x05", 5);
	assert_int_equal(hs_chunk_compact_5_0(in, 5, &enc, scratch, packed, sizeof(packed)),
			 0);
	/* a malloc whose literal da is 0x80 0x00 (0) */
	memcpy(in, "\x03\x00\x80\x00\x10\x01", 6);
	assert_int_equal(hs_chunk_compact_5_0(in, 6, &enc, scratch, packed, sizeof(packed)),
			 0);
	/* which 4.0 writes, as it copies the bytes */
	assert_true(hs_chunk_compact(in, 6, &enc, scratch, packed, sizeof(packed)) > 0);
	hs_chunk_unpack_release(&u);
}

/*
 * 5.0 payloads a hostile file makes up: a REF_CLASS past HS_CC_REF_NEW, a
 * new block without its ADDR_NEW field, a NODE without its fields.
 */
static void hostile_5_0_payloads_are_refused(void **state)
{
	(void)state;
	/*
	 * records 5 bytes (MALLOC dt da size stack); streams: time,
	 * address, refs, sizes, stacks, other, size low bits, allocation
	 * refs, ref classes, other refs, refs' low bits, new addresses,
	 * node ids, parents, addresses
	 */
	refused_as(FLAGS_5_0,
		   "\x05\x01\x00\x00\x01\x01\x00\x00\x01\x01\x00\x00\x00\x00\x00\x00"
		   "\x00\x10\x01\x00\x42\x03",
		   22, "size class that does not exist");
	refused_as(FLAGS_5_0,
		   "\x05\x01\x00\x00\x01\x01\x00\x00\x01\x01\x00\x00\x00\x00\x00\x00"
		   "\x00\x10\x01\x00\x41\x03",
		   22, "runs past the end of its column");
	/* with its field, it reads */
	{
		struct hs_chunk_unpack u = { 0 };
		const uint8_t *out;
		const char *why = NULL;
		size_t got;

		assert_int_equal(
		    hs_chunk_unpack(&u, FLAGS_5_0,
				    (const uint8_t *)"\x05\x01\x00\x00\x01\x01\x00\x00"
						     "\x01\x01\x00\x00\x01\x00\x00\x00"
						     "\x00\x10\x01\x00\x41\x06\x03",
				    23, &out, &got, &why),
		    0);
		/* MALLOC dt 0, da +3 (0 + 3: the prediction's start), size 16, stack 1 */
		assert_int_equal(got, 5);
		assert_memory_equal(out, "\x03\x00\x06\x10\x01", 5);
		hs_chunk_unpack_release(&u);
	}
	/* a NODE tag whose streams are empty */
	refused_as(FLAGS_5_0,
		   "\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
		   "\x02",
		   17, "runs past the end of its column");
}

/*
 * The reader: a trace of 5.0 chunks reads as the same trace written
 * plain; the 5.0 flag in a file of version 4 is refused, not misread.
 */
static void reader_reads_predicted_chunks(void **state)
{
	static uint8_t in[RECORDS_MAX], z[ZSTD_COMPRESSBOUND(sizeof(packed))];
	static uint8_t files[2][HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + sizeof(z)];
	size_t lens[2], n, c, s;
	unsigned f, k = 0;

	(void)state;
	n = many_records(in, sizeof(in), 5);
	c = hs_chunk_compact_5_0(in, n, &enc, scratch, packed, sizeof(packed));
	assert_true(c > 0);
	s = ZSTD_compress(z, sizeof(z), packed, c, 1);
	assert_false(ZSTD_isError(s));
	for (f = 0; f < 2; f++) {
		hs_tw_file_header(files[f]);
		hs_tw_chunk_header(files[f] + HS_FILE_HEADER_SIZE, HS_CHUNK_EVENTS,
				   f ? HS_CHUNK_ZSTD | FLAGS_5_0 : 0, (uint32_t)(f ? s : n),
				   (uint32_t)(f ? c : n), 0, f ? z : in);
		memcpy(files[f] + HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE, f ? z : in,
		       f ? s : n);
		lens[f] = HS_FILE_HEADER_SIZE + HS_CHUNK_HEADER_SIZE + (f ? s : n);
	}
	k = (unsigned)same_records(files[0], lens[0], files[1], lens[1], "5.0");
	assert_true(k > 1000);
	{
		struct hs_trace_reader r;
		struct hs_diag diag = HS_DIAG_INIT("v4");
		struct hs_rec rec;
		int ret;

		hs_put_le16(files[1] + 8, 4);
		assert_int_equal(hs_trace_reader_open_mem(&r, files[1], lens[1], "t", &diag), 0);
		while ((ret = hs_trace_reader_next(&r, &rec, &diag)) > 0)
			;
		assert_true(ret < 0);
		assert_non_null(strstr(diag.msg, "unknown chunk flags"));
		hs_trace_reader_close(&r);
	}
}

/* --- a stream's reader: 5.0 payloads into events and records ----------- */

/*
 * One item of a payload as a stream's reader sees it: an event of a
 * MALLOC, CALLOC or FREE record, or another record, with the offset of
 * the record after it in the records hs_chunk_unpack() makes.
 */
struct item {
	uint8_t tag;
	uint64_t tid, ticks, addr, size, stack, id;
	size_t next; /* offset after it, as in the whole records (SIZE_MAX:
		      * not known, an event inside a piece) */
};

#define ITEMS_MAX (RECORDS_MAX / 2)

/* @rec as an item, the next record at @next */
static struct item item_of(const struct hs_rec *rec, size_t next)
{
	return (struct item){.tag = rec->tag,
			     .tid = rec->tid,
			     .ticks = rec->ticks,
			     .addr = rec->addr,
			     .size = rec->size,
			     .stack = rec->stack,
			     .id = rec->id,
			     .next = next};
}

/* The items of the records [@in, @in + @n) (hs_chunk_unpack()'s). */
static size_t items_of_records(const uint8_t *in, size_t n, struct item *it)
{
	const uint8_t *q = in;
	struct hs_rec_state st = {0};
	struct hs_rec rec;
	const char *why;
	size_t k = 0;

	while (q < in + n) {
		assert_true(k < ITEMS_MAX);
		assert_int_equal(hs_rec_decode(&q, in + n, &st, &rec, &why), 0);
		it[k++] = item_of(&rec, (size_t)(q - in));
	}
	return k;
}

/*
 * The items of hs_chunk_unpack_events()' records [@in, @in + @n) and
 * pieces @ce, walked as the stream's walk does: at each offset its
 * pieces first (the reader's state then the piece's), then a record
 * (@capped: that many events in pieces, and the rest records).
 */
static size_t items_of_pieces(const uint8_t *in, size_t n,
			      const struct hs__chunk_events *ce, size_t capped,
			      struct item *it)
{
	const uint8_t *q = in;
	struct hs_rec_state st = {0};
	struct hs_rec rec;
	const char *why;
	size_t k = 0, pc = 0, ev = 0, skipped = 0;

	for (;;) {
		size_t at = (size_t)(q - in);

		if (pc < ce->nr_pieces && ce->piece[pc].begin == at) {
			const struct hs__chunk_piece *p = &ce->piece[pc];
			size_t records = 0;

			/* pieces are empty stretches of the records */
			assert_int_equal(p->end, at);
			assert_true(ev < p->ev_end);
			for (; ev < p->ev_end; ev++, records++) {
				const struct hs_trace_event *x = &ce->ev[ev];

				assert_true(k < ITEMS_MAX);
				it[k] = (struct item){.tag = x->fn,
						      .tid = p->tid,
						      .ticks = (uint64_t)x->time,
						      .addr = x->addr,
						      .size = x->size,
						      .stack = x->node,
						      .next = SIZE_MAX};
				assert_int_equal(x->op, x->fn == HS_TAG_FREE
							    ? HS_OP_FREE
							    : HS_OP_ALLOC);
				k++;
			}
			assert_int_equal(records, p->records);
			/* the record after the piece is where the whole
			 * records have it */
			skipped = p->skipped;
			it[k - 1].next = at + skipped;
			st = p->st;
			pc++;
			continue;
		}
		if (q >= in + n)
			break;
		assert_true(k < ITEMS_MAX);
		assert_int_equal(hs_rec_decode(&q, in + n, &st, &rec, &why), 0);
		/* what has a piece never is a record (but past @capped) */
		assert_true((rec.tag != HS_TAG_MALLOC && rec.tag != HS_TAG_CALLOC &&
			     rec.tag != HS_TAG_FREE) ||
			    (capped && ev == capped));
		it[k++] = item_of(&rec, (size_t)(q - in) + skipped);
	}
	assert_int_equal(pc, ce->nr_pieces);
	assert_int_equal(ev, ce->nr_ev);
	return k;
}

static void items_equal(const struct item *a, const struct item *b, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		assert_int_equal(a[k].tag, b[k].tag);
		assert_int_equal(a[k].tid, b[k].tid);
		assert_int_equal(a[k].ticks, b[k].ticks);
		assert_int_equal(a[k].addr, b[k].addr);
		assert_int_equal(a[k].stack, b[k].stack);
		assert_int_equal(a[k].id, b[k].id);
		/* (inside a piece, where the records would be is not kept) */
		if (a[k].next != SIZE_MAX)
			assert_int_equal(a[k].next, b[k].next);
		/* (a free's size is the record's, 0) */
		assert_int_equal(a[k].size, b[k].size);
	}
}

/*
 * hs_chunk_unpack_events() gives a stream's reader what hs_chunk_unpack()
 * and the record decoder give: the same events of MALLOC, CALLOC and
 * FREE (in pieces, their records left out) and the same other records,
 * in the same order, with the same offsets in the whole records; each
 * piece's low is its lowest time; past @max_events the events are
 * records again; a damaged payload is refused exactly
 * when hs_chunk_unpack() refuses it, and a payload that is not 5.0's
 * has no pieces.
 */
static void unpack_events_matches_the_records(void **state)
{
	static uint8_t in[RECORDS_MAX], copy[sizeof(packed)];
	static struct item want[ITEMS_MAX], got_items[ITEMS_MAX];
	struct hs_chunk_unpack u = {0}, v = {0};
	struct hs__chunk_events ce = {0};
	const uint8_t *out, *out2;
	const char *why = NULL, *why2 = NULL;
	size_t n, c, got, got2, nw, ng, k, pieces = 0;
	unsigned bit;
	uint64_t seed;
	int split;

	(void)state;
	for (split = 0; split < 2; split++) {
		enc.split_sizes = split;
		for (seed = 1; seed <= 4; seed++) {
			n = many_records(in, sizeof(in), seed * 0x9e3779b97f4a7c15ull);
			c = hs_chunk_compact_5_0(in, n, &enc, scratch, packed,
						 sizeof(packed));
			assert_true(c > 0);
			assert_int_equal(hs_chunk_unpack_events(&u, FLAGS_5_0, packed, c,
								&out, &got, &ce,
								ITEMS_MAX, &why),
					 0);
			assert_true(got < n);
			assert_true(ce.nr_pieces > 1);
			pieces += ce.nr_pieces;
			nw = items_of_records(in, n, want);
			ng = items_of_pieces(out, got, &ce, 0, got_items);
			assert_int_equal(ng, nw);
			items_equal(got_items, want, nw);
			/* many_records() has reallocs and mmaps: not complete */
			assert_false(ce.complete);
			for (k = 0; k < ce.nr_pieces; k++) {
				size_t from = k ? ce.piece[k - 1].ev_end : 0, e;
				int64_t low = INT64_MAX;

				for (e = from; e < ce.piece[k].ev_end; e++)
					if (ce.ev[e].time < low)
						low = ce.ev[e].time;
				assert_int_equal(ce.piece[k].low, low);
			}
			/* past @max_events, the rest are records */
			assert_int_equal(hs_chunk_unpack_events(&u, FLAGS_5_0, packed, c,
								&out, &got, &ce, 10,
								&why),
					 0);
			assert_int_equal(ce.nr_ev, 10);
			ng = items_of_pieces(out, got, &ce, 10, got_items);
			assert_int_equal(ng, nw);
			items_equal(got_items, want, nw);
		}
	}
	enc.split_sizes = 0;
	assert_true(pieces > 8);
	/* damage: refused when hs_chunk_unpack() refuses, else the same */
	n = many_records(in, 2048, 11);
	c = hs_chunk_compact_5_0(in, n, &enc, scratch, packed, sizeof(packed));
	assert_true(c > 0);
	memcpy(copy, packed, c);
	for (k = 0; k < c; k++)
		for (bit = 0; bit < 8; bit++) {
			int a, b;

			copy[k] ^= (uint8_t)(1u << bit);
			a = hs_chunk_unpack(&v, FLAGS_5_0, copy, c, &out2, &got2, &why2);
			b = hs_chunk_unpack_events(&u, FLAGS_5_0, copy, c, &out, &got,
						   &ce, ITEMS_MAX, &why);
			assert_int_equal(a, b);
			if (a)
				assert_string_equal(why, why2);
			copy[k] ^= (uint8_t)(1u << bit);
		}
	for (k = 0; k < c; k++) {
		/* every cut: refused as hs_chunk_unpack() refuses it */
		assert_int_not_equal(hs_chunk_unpack_events(&u, FLAGS_5_0, packed, k,
							    &out, &got, &ce, ITEMS_MAX,
							    &why),
				     0);
	}
	/* a 4.0 payload: its records, no pieces */
	c = hs_chunk_compact(in, n, &enc, scratch, packed, sizeof(packed));
	assert_int_equal(hs_chunk_unpack_events(&u, HS_CHUNK_COMPACT | HS_CHUNK_CLASSES,
						packed, c, &out, &got, &ce, ITEMS_MAX,
						&why),
			 0);
	assert_int_equal(got, n);
	assert_memory_equal(out, in, n);
	assert_int_equal(ce.nr_pieces, 0);
	hs__chunk_events_release(&ce);
	hs_chunk_unpack_release(&u);
	hs_chunk_unpack_release(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(compact_round_trip),
	    cmocka_unit_test(tables_outlive_their_generations),
	    cmocka_unit_test(a_full_table_writes_literals),
	    cmocka_unit_test(repeating_program_repeats_its_bytes),
	    cmocka_unit_test(golden_payload),
	    cmocka_unit_test(allocations_refer_within_their_class),
	    cmocka_unit_test(compact_survives_damage),
	    cmocka_unit_test(hostile_references_are_refused),
	    cmocka_unit_test(reader_reads_compact_chunks),
	    cmocka_unit_test(predicted_round_trip),
	    cmocka_unit_test(new_blocks_are_predicted),
	    cmocka_unit_test(nodes_are_deltas),
	    cmocka_unit_test(hostile_5_0_payloads_are_refused),
	    cmocka_unit_test(reader_reads_predicted_chunks),
	    cmocka_unit_test(unpack_events_matches_the_records),
	};
	return cmocka_run_group_tests_name("trace_compact", tests, NULL, NULL);
}
