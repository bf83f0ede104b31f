#ifndef HS_FORMAT_TRACE_RECORD_H
#define HS_FORMAT_TRACE_RECORD_H
#include <stddef.h>
#include <stdint.h>
#include "format/trace_format.h"

/*
 * trace_record - decode one record of a chunk payload into plain numbers.
 *
 * Shared by the reader and by the collector's writer thread (which walks
 * what threads wrote to keep each thread's decoding state and the event
 * totals), so it allocates nothing: strings and byte arrays in the result
 * point into the payload (borrowed for as long as the payload lives).
 */

/* Decoding state of a chunk: the current span. Zero it at a chunk start. */
struct hs_rec_state {
	uint64_t tid;		/* 0 = the process */
	uint64_t ticks;		/* last event's ticks */
	uint64_t addr;		/* last event's address */
};

/*
 * A decoded record. Only the fields of its tag are set (the others are
 * zero). For sized records, body/body_len is the whole body; PROCESS and
 * FOOTER bodies are decoded further by the reader.
 */
struct hs_rec {
	uint8_t tag;
	uint64_t tid;		/* the span's thread */
	uint64_t ticks;		/* absolute, for events and timed sized records */
	uint64_t addr;		/* events: the (new) address */
	uint64_t size;		/* allocations: size; MMAP/MUNMAP/MREMAP: (new) length */
	uint64_t stack;		/* node id, 0 = none */
	uint64_t old_addr;	/* REALLOC*, MREMAP: the old address (0 = none) */
	uint64_t old_size;	/* MREMAP: the old length */
	uint64_t lead;		/* REALLOC*: ticks from the call to its return */
	uint64_t align;		/* aligned allocations */
	uint64_t prot, flags;	/* MMAP */
	uint64_t id;		/* NODE, MODULE, MODULE_UNLOAD id; FORK child pid;
				 * THREAD_NAME tid (0: the span's thread);
				 * SAMPLE tid; SAMPLING signal */
	uint64_t parent;	/* NODE parent; FORK followed; MODULE_UNLOAD next node */
	uint64_t bias, start, end; /* MODULE */
	uint64_t value;		/* CLOCK ns; RSS bytes; END reason; SAMPLE kind;
				 * SAMPLING CPU Hz; SAMPLING_END CPU samples */
	uint64_t detail;	/* END detail; SAMPLING wall Hz; SAMPLING_END
				 * wall samples */
	/* SAMPLE: size is the duration (ns); SAMPLING: flags are its flags;
	 * SAMPLING_END: size is the samples dropped, old_size the signals */
	const uint8_t *str;	/* MODULE path, THREAD_* name, EXEC path */
	size_t str_len;
	const uint8_t *bytes;	/* MODULE build id */
	size_t bytes_len;
	const uint8_t *body;	/* sized records: the body */
	size_t body_len;
};

/*
 * Decode the record at *@p (before @end) with state @st, which is updated
 * (SPAN resets it; events advance ticks and address). On success returns
 * 0 and advances *@p. On malformed input returns -1, leaves *@p at the
 * record start and sets *@why to a static message. Unknown sized records
 * decode with only tag and body set.
 */
int hs_rec_decode(const uint8_t **p, const uint8_t *end,
		  struct hs_rec_state *st, struct hs_rec *rec, const char **why);

/* Name of a tag for dumps and messages ("malloc", "free", ...), or NULL. */
const char *hs_tag_name(unsigned tag);
#endif
