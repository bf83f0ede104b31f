#ifndef HS_FORMAT_TRACE_COMPACT_H
#define HS_FORMAT_TRACE_COMPACT_H
#include <stddef.h>
#include <stdint.h>
#include "common/log.h"

/*
 * trace_compact - the reader's side of an EVENTS chunk's payload: a
 * columnar payload (2.x, hs_chunk_join()) or a compact one (3.x and 4.x,
 * whose heap addresses refer back to the thread's allocations and frees
 * in the chunk, since 4.0 an allocation's to the frees of its size class,
 * since 5.0 a new block's from where the thread's last one ended;
 * hs_chunk_compact() in trace_record.h writes them) is put back
 * into the record sequence that a plain chunk holds, which the record
 * decoder reads as usual.
 *
 * One struct hs_chunk_unpack per reader (or per worker that decodes
 * chunks): it owns the records it hands out (valid until its next
 * call) and the threads' address histories, both kept from chunk to
 * chunk so that a steady stream of chunks allocates nothing. Decoding a
 * reference is an array lookup. Input is untrusted: a reference past the
 * start of the thread's history, a stream that runs short or is not used
 * up, or records longer than the payload says make the payload
 * malformed, never a read or write out of bounds.
 */

/* A 4.0 payload's size classes and no class (HS_CC_CLASSES + 1 of
 * trace_record.h) */
#define HS_CU_CLASSES 64

/* Addresses in chunk order. */
struct hs_cu_history {
	uint64_t *addr;
	size_t nr, alloc;
};

struct hs_cu_thread {
	uint64_t tid;
	uint64_t *allocs, *frees; /* addresses in chunk order */
	size_t nr_allocs, nr_frees, alloc_allocs, alloc_frees;
	/* a 4.0 payload's: each allocation's size class, beside allocs */
	uint8_t *alloc_class;
	size_t alloc_alloc_class;
	/* and its frees of each class, then those of no class */
	struct hs_cu_history class_frees[HS_CU_CLASSES];
	uint64_t predict; /* a 5.0 payload's: where its next new block is */
};

struct hs_chunk_unpack {
	uint8_t *out; /* the records handed out */
	size_t alloc_out;
	struct hs_cu_thread *threads; /* the chunk's threads, in order seen */
	size_t nr_threads, alloc_threads;
	size_t used_threads; /* structs set up so far (this chunk's or before) */
	uint32_t *slots;     /* tid hash: index in threads + 1, 0: empty */
	size_t nr_slots;     /* a power of 2, or 0 */
};

/*
 * The records of the EVENTS payload [@in, @in + @n) of a chunk with
 * @flags (HS_CHUNK_* of trace_format.h): the payload itself when
 * it is plain, else the records rebuilt in @u's buffer. Returns 0 with
 * *@out and *@out_len set; -1 with *@why set to a static message when the
 * payload is malformed; -ENOMEM.
 */
HS_MUST_CHECK
int hs_chunk_unpack(struct hs_chunk_unpack *u, unsigned flags, const uint8_t *in,
		    size_t n, const uint8_t **out, size_t *out_len, const char **why);

/*
 * hs_chunk_unpack() for a stream's reader (trace_walk.c) and the pool's
 * decoding (trace_prefetch.c): of a 5.0 compact payload, the MALLOC,
 * CALLOC and FREE records (the first @max_events of them: the rest stay
 * records) are not written but decoded into @ce's events, in
 * pieces (trace_prefetch.h) that are empty stretches of the records
 * handed out, each piece's @skipped the bytes left out up to its end;
 * @ce->complete when every event is in a piece. Any other payload is
 * hs_chunk_unpack()'s, with no pieces. The same returns and messages.
 */
struct hs__chunk_events;
HS_MUST_CHECK
int hs_chunk_unpack_events(struct hs_chunk_unpack *u, unsigned flags, const uint8_t *in,
			   size_t n, const uint8_t **out, size_t *out_len,
			   struct hs__chunk_events *ce, size_t max_events,
			   const char **why);

/* Free @u's buffers (it may be used again afterwards). */
void hs_chunk_unpack_release(struct hs_chunk_unpack *u);

#endif
