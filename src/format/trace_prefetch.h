#ifndef HS_FORMAT_TRACE_PREFETCH_H
#define HS_FORMAT_TRACE_PREFETCH_H
#include <stddef.h>
#include <stdint.h>
#include "format/trace_format.h"
#include "format/trace_reader.h"
#include "common/log.h"

/*
 * trace_prefetch - a trace's chunks read, checked and decompressed ahead
 * of the reader, on worker threads (for format/ only: trace_reader.c).
 *
 * Chunks are independent zstd frames, so while the reader decodes one
 * chunk's records, the next ones are decompressed on the other cores.
 * The reader stays the one that decides: the pool only guesses where the
 * next chunks are (it follows their headers' sizes from where the reader
 * is) and does for each what the reader would (read its payload, compute
 * its check, decompress it when it is a compressed EVENTS, END or SYMBOLS
 * chunk). The reader takes the results in file order; a chunk the pool
 * did not guess is read by the reader itself, so what is read, and every
 * message, is the same with or without the pool.
 *
 * A stream (hs_trace_stream()) also wants the events decoded: with
 * @decode, a worker unpacks an EVENTS chunk's records, whatever their
 * kind (plain, columnar or compact: hs_chunk_unpack()), and decodes its
 * events (hs__chunk_events_decode()),
 * so that the reader's thread only resolves their threads and stacks and
 * puts them in time order. The chunk-level functions are the ones the
 * reader itself calls; what they make is the same on either thread.
 *
 * Memory: a window of chunks is in flight: PREFETCH_SLOTS_PER_THREAD per
 * worker when the workers also decode, one per worker and one more when
 * they only decompress, each with its own buffers, which grow as zstd produces
 * bytes (hs__chunk_inflate()): never to a declared size the data does not
 * back, and never past HS_CHUNK_MAX; decoded events are at most
 * HS_CHUNK_EVENTS_MAX per chunk (the rest of a larger chunk is decoded by
 * the reader; the worker reads its times only, for the pieces' rests). The pool owns its
 * slots; a chunk the reader took borrows from its slot until the reader's next take.
 */

/*
 * The events of an EVENTS chunk's records, decoded (a chunk's records
 * that make events, cut into pieces). A piece is a stretch of the
 * payload's records [begin, end) that are SPANs and event records of the
 * fixed kinds (hs_rec_decode_fixed()), all of one thread; what lies
 * between pieces (stack nodes, sized records, a malformed record, the
 * events after HS_CHUNK_EVENTS_MAX) is for the reader to decode. Every
 * event is a struct hs_trace_event whose @node is the record's stack id
 * (0: none), @fn its tag, @time its ticks; @thread is not set. The
 * reader's own unpacking of a 5.0 compact chunk (hs_chunk_unpack_events()
 * in trace_compact.h) makes pieces too, of the MALLOC, CALLOC and FREE
 * records it did not write: there @begin == @end.
 */
#define HS_CHUNK_EVENTS_MAX ((size_t)1 << 16)
struct hs__chunk_piece {
	size_t begin, end; /* payload offsets of its first record and after its last */
	struct hs_rec_state st; /* the decoder's state at @end */
	uint64_t tid;		/* the thread of its events */
	size_t ev_end;		/* its events end here in ev[] (they start where
				 * the piece before ends) */
	size_t records;		/* records in it, SPANs included */
	int64_t low;		/* the lowest time of its events (INT64_MAX: none;
				 * INT64_MIN: one is past INT64_MAX) */
	int64_t low_rest;	/* with @complete: the lowest time of every event
				 * after it in the chunk */
	size_t skipped;		/* bytes of records left out up to @end (the
				 * reader's own, hs_chunk_unpack_events();
				 * the pool's: 0) */
	int sorted;		/* its events' times never go down (the
				 * reader's own; the pool's: 0, not known) */
};

/* events of a piece between looks at what can go on (stretch_low) */
#define HS_CHUNK_STRETCH 4096

struct hs__chunk_events {
	struct hs_trace_event *ev;
	size_t nr_ev, alloc_ev;
	struct hs__chunk_piece *piece;
	size_t nr_pieces, alloc_pieces;
	int complete; /* every record of the chunk decoded (the rests are known) */
	/* with @complete, for each ev[k * HS_CHUNK_STRETCH]: the lowest time
	 * from it to the end of its piece */
	int64_t *stretch_low;
	size_t alloc_stretch;
};

/*
 * Decode the events of the @n bytes of records at @payload (an EVENTS
 * chunk's, unpacked) into @out (its arrays reused and grown; emptied
 * first), at most @max_events of them. 0 or -ENOMEM. A record that does
 * not decode ends the pieces there: the reader finds it and says what is
 * wrong.
 */
HS_MUST_CHECK
int hs__chunk_events_decode(const uint8_t *payload, size_t n, size_t max_events,
			    struct hs__chunk_events *out);
/*
 * With every event of the chunk in @ce's pieces: each piece's low_rest
 * (the lowest time after it; on entry, of the records after it) and each
 * stretch's low. 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs__chunk_events_rest(struct hs__chunk_events *ce);
/*
 * A new piece at the end of @ce's, empty, of thread @tid, starting at
 * @begin in the records: the one being filled. 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs__chunk_piece_open(struct hs__chunk_events *ce, size_t begin,
				       uint64_t tid);
/* Free @ce's arrays (the struct is the caller's). */
void hs__chunk_events_release(struct hs__chunk_events *ce);
/*
 * The lower of @low and the lowest time of @n events, INT64_MIN when one
 * is past INT64_MAX (the pool's pieces and the order's peek share it).
 */
int64_t hs__events_low(const struct hs_rec_event *ev, unsigned n, int64_t low);

/* What the pool did for the chunk at one offset (hs__prefetch_take()). */
struct hs__prefetched {
	const uint8_t *payload; /* the stored bytes (ch.stored of them) */
	uint32_t check;		/* hs_chunk_check() of header and payload */
	/* decompressed: 1 = @raw holds @got bytes, 0 = not tried (stored,
	 * an unknown kind, a check that does not match), -1 = the payload
	 * does not decompress to its header's raw size */
	int inflated;
	const uint8_t *raw;
	size_t got;
	/* with @decode: an EVENTS chunk's records, unpacked (NULL: not
	 * unpacked, the reader unpacks them), and the chunk's events
	 * (NULL: none) */
	const uint8_t *records;
	size_t records_len;
	const struct hs__chunk_events *events;
};

struct hs__prefetch;

/*
 * Decompress the @stored bytes at @src, which should make @raw bytes,
 * into *@buf (room *@alloc; grown as needed, to @raw at most: first to
 * what the input can plausibly hold, then fourfold while zstd says the
 * room is too small). 0 with *@got = @raw, -EINVAL when the input does
 * not decompress to exactly @raw bytes, or -ENOMEM. @dctx is a
 * ZSTD_DCtx.
 */
HS_MUST_CHECK
int hs__chunk_inflate(void *dctx, const uint8_t *src, size_t stored, size_t raw,
		      uint8_t **buf, size_t *alloc, size_t *got);

/*
 * The fewest workers with which a stream has them decode the events:
 * below that the stream's reading thread and the caller's thread already
 * keep two cores busy, and decoding ahead would only add the handing
 * over of each event (on 2 cores it took 20-40% more CPU time and no
 * less wall time than decoding on the reading thread).
 */
#define HS_PREFETCH_DECODE_MIN 3

/*
 * How many workers a reader starts: the HEAPSCOPE_READ_THREADS environment
 * variable (0: none, everything on the reader's thread), else the cores
 * online, at most 8. 0 on one core.
 */
unsigned hs__prefetch_threads(void);

/*
 * A pool of @threads workers over the input @fd (borrowed; pread() only)
 * or @mem (borrowed), @size bytes. The EVENTS chunks at the @nr_skip
 * increasing offsets @skip (borrowed) are not read: the reader steps over
 * them (hs_trace_reader_skip_events()). With @decode, EVENTS chunks are
 * unpacked and their events decoded too, by at most 3 workers (6 slots
 * of decoded events). Returns NULL when out of memory
 * or without threads (the reader then reads alone).
 */
struct hs__prefetch *hs__prefetch_new(int fd, const uint8_t *mem, uint64_t size,
				      const uint64_t *skip, size_t nr_skip,
				      unsigned threads, int decode);
/*
 * The reader wants the chunk at file offset @off, whose header is @hdr:
 * 1 with @out filled (borrowed until the next take or the free), 0 when
 * the pool has not got it (the reader reads it itself), or a negative
 * errno from reading it (-EIO, -ENOMEM). The chunk taken before is given
 * back, and the window is filled again from @off on.
 */
HS_MUST_CHECK
int hs__prefetch_take(struct hs__prefetch *pf, uint64_t off,
		      const uint8_t hdr[HS_CHUNK_HEADER_SIZE],
		      struct hs__prefetched *out);
/* Stop the workers and free everything (NULL is a no-op). */
void hs__prefetch_free(struct hs__prefetch *pf);
#endif
