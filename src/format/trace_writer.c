/*
 * trace_writer - framing pieces of the trace format (see trace_writer.h).
 * No allocation, no global state: the collector links this file.
 */
#include "format/trace_writer.h"
#include "common/hash.h"
#include <assert.h>
#include <string.h>
#include <zstd.h>

void hs_tw_file_header(uint8_t out[HS_FILE_HEADER_SIZE])
{
	memcpy(out, HS_TRACE_MAGIC, HS_TRACE_MAGIC_LEN);
	hs_put_le16(out + 8, HS_TRACE_MAJOR);
	hs_put_le16(out + 10, HS_TRACE_MINOR);
	hs_put_le32(out + 12, 0);
}

uint32_t hs_chunk_check(const uint8_t header[HS_CHUNK_HEADER_SIZE],
			const uint8_t *payload, size_t n)
{
	XXH3_state_t st;

	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, header, 20);
	if (n)
		XXH3_64bits_update(&st, payload, n);
	return (uint32_t)XXH3_64bits_digest(&st);
}

void hs_tw_chunk_header(uint8_t out[HS_CHUNK_HEADER_SIZE], enum hs_chunk_kind kind,
			unsigned flags, uint32_t stored, uint32_t raw, uint32_t seq,
			const uint8_t *payload)
{
	memcpy(out, HS_CHUNK_MAGIC, 4);
	out[4] = (uint8_t)kind;
	out[5] = (uint8_t)flags;
	hs_put_le16(out + 6, 0);
	hs_put_le32(out + 8, stored);
	hs_put_le32(out + 12, raw);
	hs_put_le32(out + 16, seq);
	hs_put_le32(out + 20, hs_chunk_check(out, payload, stored));
}

int hs_chunk_header_parse(const uint8_t in[HS_CHUNK_HEADER_SIZE],
			  struct hs_chunk_header *h)
{
	if (memcmp(in, HS_CHUNK_MAGIC, 4))
		return -1;
	h->kind = in[4];
	h->flags = in[5];
	h->stored = hs_get_le32(in + 8);
	h->raw = hs_get_le32(in + 12);
	h->seq = hs_get_le32(in + 16);
	h->check = hs_get_le32(in + 20);
	return 0;
}

uint8_t *hs_tw_sized(uint8_t *out, unsigned tag, const uint8_t *body, size_t n)
{
	uint8_t prefix[1 + HS_VARINT_MAX];
	size_t np = (size_t)(hs_put_varint(prefix + 1, n) - prefix);

	prefix[0] = (uint8_t)tag;
	memmove(out + np, body, n);
	memcpy(out, prefix, np);
	return out + np + n;
}

size_t hs_tw_process_size(const struct hs_process_info *info)
{
	return 1 + HS_VARINT_MAX + hs_enc_process_body_size(info);
}

uint8_t *hs_tw_process(uint8_t *out, const struct hs_process_info *info)
{
	/* The body goes after room for the tag and length, then moves. */
	uint8_t *body = out + 1 + HS_VARINT_MAX;

	return hs_tw_sized(out, HS_TAG_PROCESS, body,
			   (size_t)(hs_enc_process_body(body, info) - body));
}

size_t hs_tw_footer_size(size_t n)
{
	return 1 + HS_VARINT_MAX + hs_enc_footer_body_size(n);
}

uint8_t *hs_tw_footer(uint8_t *out, const uint64_t counts[HS_FC__COUNT],
		      const struct hs_chunk_index *index, size_t n)
{
	return hs_tw_footer_marked(out, counts, index, n, NULL);
}

uint8_t *hs_tw_footer_marked(uint8_t *out, const uint64_t counts[HS_FC__COUNT],
			     const struct hs_chunk_index *index, size_t n,
			     const uint8_t *has_records)
{
	uint8_t *body = out + 1 + HS_VARINT_MAX;

	return hs_tw_sized(
	    out, HS_TAG_FOOTER, body,
	    (size_t)(hs_enc_footer_body(body, counts, index, n, has_records) - body));
}

size_t hs_tw_zstd_compact(struct ZSTD_CCtx_s *cctx, int level, uint8_t *out, size_t cap,
			  const uint8_t *c, size_t n, unsigned streams)
{
	ZSTD_outBuffer ob = {out, cap, 0};
	const uint8_t *q = c, *end = c + n;
	size_t part[HS_CC__COUNT + 2], at = 0, left;
	uint64_t len;
	unsigned i;

	/* the lengths (the records', then each stream's), then the streams */
	assert(streams <= HS_CC__COUNT);
	if (hs_get_varint(&q, end, &len))
		return 0;
	for (i = 0; i < streams; i++) {
		if (hs_get_varint(&q, end, &len))
			return 0;
		part[i + 1] = (size_t)len;
	}
	part[0] = (size_t)(q - c);
	for (i = 1; i <= streams; i++) {
		if (part[i] > (size_t)(end - q))
			return 0;
		q += part[i];
	}
	part[streams + 1] = (size_t)(end - q); /* the RECORD stream */
	if (ZSTD_isError(ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, n)))
		return 0;
	for (i = 0; i < HS_CC__COUNT + 2; i++) {
		ZSTD_inBuffer ib = {c + at, part[i], 0};
		ZSTD_EndDirective how =
		    i + 1 == HS_CC__COUNT + 2 ? ZSTD_e_end : ZSTD_e_flush;

		do {
			left = ZSTD_compressStream2(cctx, &ob, &ib, how);
			if (ZSTD_isError(left) || (left && ob.pos == ob.size))
				return 0;
		} while (left || ib.pos < ib.size);
		at += part[i];
	}
	return ob.pos;
}
