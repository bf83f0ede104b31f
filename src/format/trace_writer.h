#ifndef HS_FORMAT_TRACE_WRITER_H
#define HS_FORMAT_TRACE_WRITER_H
#include <stddef.h>
#include <stdint.h>
#include "format/trace_format.h"
#include "format/trace_record.h"
#include "common/log.h"

/*
 * trace_writer - the pieces that frame a .heapscope file: the file
 * header, chunk headers with their check, sized records, and the PROCESS
 * and FOOTER records framed around their bodies (whose layout is
 * trace_record.h's). Used by the collector's writer thread and by tests.
 *
 * Nothing here allocates or keeps state: every function writes into a
 * caller buffer and says how much it wrote, so the collector can use it
 * with memory it mapped itself.
 */

/*
 * The collector's zstd level for a compact payload (collector/writer.c):
 * HS_ZSTD_LEVEL_REPEATS after a compact payload that zstd made
 * HS_ZSTD_REPEATS_RATIO times smaller or more (a run of repeats, which
 * takes it little time: the higher level finds more of them, sqlite3 12%
 * smaller, python3 6%), else the writer's level 1. bench/tracesize
 * follows the same rule.
 */
#define HS_ZSTD_LEVEL_REPEATS 3
#define HS_ZSTD_REPEATS_RATIO 8

/* Write the 16-byte file header into @out. */
void hs_tw_file_header(uint8_t out[HS_FILE_HEADER_SIZE]);

/*
 * The chunk check: low 32 bits of XXH3-64 over the first 20 header bytes
 * followed by the @n stored payload bytes at @payload.
 */
uint32_t hs_chunk_check(const uint8_t header[HS_CHUNK_HEADER_SIZE],
			const uint8_t *payload, size_t n);

/*
 * Write a chunk header for @stored payload bytes at @payload (already
 * compressed if @flags says so) that decompress to @raw bytes.
 */
void hs_tw_chunk_header(uint8_t out[HS_CHUNK_HEADER_SIZE], enum hs_chunk_kind kind,
			unsigned flags, uint32_t stored, uint32_t raw, uint32_t seq,
			const uint8_t *payload);

/* Parse a chunk header (no validation beyond the magic): 0 or -1. */
HS_MUST_CHECK
int hs_chunk_header_parse(const uint8_t in[HS_CHUNK_HEADER_SIZE],
			  struct hs_chunk_header *h);

/*
 * Frame a sized record: write tag, varint length and the @n body bytes at
 * @body to @out (room for n + 1 + HS_VARINT_MAX). @body may lie inside
 * @out after the room for the prefix (it is moved). Returns the end.
 */
uint8_t *hs_tw_sized(uint8_t *out, unsigned tag, const uint8_t *body, size_t n);

/* Write a sized record's tag and body length @n; returns where the body goes. */
static inline uint8_t *hs_tw_sized_prefix(uint8_t *out, unsigned tag, size_t n)
{
	*out = (uint8_t)tag;
	return hs_put_varint(out + 1, n);
}

/*
 * Bytes needed by hs_tw_process() for @info (an upper bound). Arguments
 * past HS_ARGC_MAX and bytes past HS_ARG_MAX in each are not counted.
 */
size_t hs_tw_process_size(const struct hs_process_info *info);
/* Write a whole PROCESS record (tag, length, body) to @out; returns the end. */
uint8_t *hs_tw_process(uint8_t *out, const struct hs_process_info *info);

/* Upper bound of hs_tw_footer()'s output for @n index entries. */
size_t hs_tw_footer_size(size_t n);
/* Write a whole FOOTER record to @out, without the 1.4 marks; returns the end. */
uint8_t *hs_tw_footer(uint8_t *out, const uint64_t counts[HS_FC__COUNT],
		      const struct hs_chunk_index *index, size_t n);
/*
 * The same with the marks of 1.4: @has_records[i] is nonzero when the
 * chunk of index entry i holds records other than events (SPAN, the heap
 * events, RSS and SAMPLE), so that a reader that wants only the stack
 * tree and the modules skips the others unread.
 */
uint8_t *hs_tw_footer_marked(uint8_t *out, const uint64_t counts[HS_FC__COUNT],
			     const struct hs_chunk_index *index, size_t n,
			     const uint8_t *has_records);

struct ZSTD_CCtx_s;
/*
 * zstd at @level, with @cctx, of the compact payload of @n bytes at @c
 * and its @streams streams (HS_CC_STREAMS() of its chunk's flags) into
 * @out (@cap bytes): one frame, as ZSTD_compressCCtx() makes, whose
 * blocks end where the payload's streams do, so that each stream's
 * literals are coded with a table of their own (over the same chunks:
 * cc1 5% smaller, rand_loop 1.3%, python3 0.7%; zstd takes a fifth
 * longer). Returns its size, or 0 (a payload that is not one, or no
 * room: the caller writes the chunk another way). Allocates nothing
 * beyond what @cctx was sized for; the collector's writer and
 * trace_repack share it.
 */
size_t hs_tw_zstd_compact(struct ZSTD_CCtx_s *cctx, int level, uint8_t *out, size_t cap,
			  const uint8_t *c, size_t n, unsigned streams);
#endif
