/*
 * trace_writer - framing pieces of the trace format (see trace_writer.h).
 * No allocation, no global state: the collector links this file.
 */
#include "format/trace_writer.h"
#include "common/hash.h"
#include <string.h>

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

static size_t arg_len(const char *s)
{
	size_t n = strlen(s);

	return n > HS_ARG_MAX ? HS_ARG_MAX : n;
}

static int nr_args(const struct hs_process_info *info)
{
	return info->argc > HS_ARGC_MAX ? HS_ARGC_MAX : info->argc;
}

size_t hs_tw_process_size(const struct hs_process_info *info)
{
	size_t n = 16 * HS_VARINT_MAX;
	int i;

	n += strlen(info->exe) + strlen(info->comm) + strlen(info->cwd) +
	     3 * HS_VARINT_MAX;
	for (i = 0; i < nr_args(info); i++)
		n += arg_len(info->argv[i]) + HS_VARINT_MAX;
	return n;
}

uint8_t *hs_tw_process(uint8_t *out, const struct hs_process_info *info)
{
	/* The body goes after room for the tag and length, then moves. */
	uint8_t *body = out + 1 + HS_VARINT_MAX, *p = body;
	int i, argc = nr_args(info);

	p = hs_put_varint(p, info->pid);
	p = hs_put_varint(p, info->ppid);
	p = hs_put_varint(p, info->page_size);
	p = hs_put_varint(p, info->sample_bytes);
	p = hs_put_varint(p, info->max_depth);
	p = hs_put_varint(p, info->unwind);
	p = hs_put_varint(p, info->clock);
	p = hs_put_varint(p, info->start_realtime_ns);
	p = hs_put_varint(p, info->flags);
	p = hs_put_varint(p, info->parent_pid);
	p = hs_put_bytes(p, info->exe, strlen(info->exe));
	p = hs_put_bytes(p, info->comm, strlen(info->comm));
	p = hs_put_bytes(p, info->cwd, strlen(info->cwd));
	p = hs_put_varint(p, (uint64_t)argc);
	for (i = 0; i < argc; i++)
		p = hs_put_bytes(p, info->argv[i], arg_len(info->argv[i]));
	return hs_tw_sized(out, HS_TAG_PROCESS, body, (size_t)(p - body));
}

size_t hs_tw_footer_size(size_t n)
{
	return (1 + HS_VARINT_MAX) + (HS_FC__COUNT + 2 + 4 * n) * HS_VARINT_MAX;
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
	uint8_t *body = out + 1 + HS_VARINT_MAX, *p = body;
	size_t i, marked = 0, prev = 0;

	for (i = 0; i < HS_FC__COUNT; i++)
		p = hs_put_varint(p, counts[i]);
	p = hs_put_varint(p, n);
	for (i = 0; i < n; i++) {
		p = hs_put_varint(p, index[i].offset);
		p = hs_put_varint(p, index[i].first_ticks);
		p = hs_put_varint(p, index[i].last_ticks);
	}
	if (has_records) {
		/* since 1.4: the chunks that hold records other than events */
		for (i = 0; i < n; i++)
			marked += has_records[i] != 0;
		p = hs_put_varint(p, marked);
		for (i = 0; i < n; i++) {
			if (!has_records[i])
				continue;
			p = hs_put_varint(p, i - prev);
			prev = i;
		}
	}
	return hs_tw_sized(out, HS_TAG_FOOTER, body, (size_t)(p - body));
}
