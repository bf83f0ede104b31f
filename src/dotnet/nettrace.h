#ifndef HS_DOTNET_NETTRACE_H
#define HS_DOTNET_NETTRACE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "common/diag.h"
#include "common/log.h"

/*
 * nettrace - a streaming reader of EventPipe's NetTrace format, versions 4
 * and 5 (what the .NET runtime writes for dotnet-trace and for
 * DOTNET_EnableEventPipe): the FastSerialization objects, the event,
 * metadata, stack and sequence point blocks, compressed event headers.
 * docs/dotnet.md says where the format is specified and what it leaves
 * out.
 *
 * The reader hands each event to a callback with its metadata, payload and
 * stack (managed frames, leaf first). Events are ordered per thread only
 * in the file; the reader keeps the events between two sequence points
 * and hands them over sorted by timestamp (ties in file order), so a
 * consumer sees one time-ordered stream. Memory is bounded: one block, the
 * events and stacks of one sequence point region (capped: past the cap the
 * region is handed over early), and the metadata.
 *
 * Ownership: everything an event points to (metadata, payload, stack) is
 * borrowed for the duration of the callback only.
 */

/* The Trace object: what applies to the whole trace. */
struct hs_nettrace_header {
	int trace_version;     /* the Trace object's version: 4 or 5 */
	uint16_t sync_time[8]; /* SYSTEMTIME: year, month, dow, day, h, m, s, ms */
	int64_t sync_qpc;      /* the timestamp of sync_time */
	int64_t qpc_freq;      /* timestamp units per second (1e9 on Linux) */
	uint32_t pointer_size; /* 4 or 8 */
	uint32_t pid;
	uint32_t nr_cpus;
	uint32_t sampling_ns; /* the expected CPU sampling interval */
};

/* What a metadata record says about one kind of event. */
struct hs_nettrace_meta {
	uint32_t id;
	char *provider; /* UTF-8, owned by the reader */
	uint32_t event_id;
	char *event_name; /* UTF-8, "" for the runtime's own events */
	uint64_t keywords;
	uint32_t version;
	uint32_t level;
	uint32_t nr_fields; /* V1 field count; fields are not decoded */
};

struct hs_nettrace_event {
	const struct hs_nettrace_meta *meta;
	uint64_t thread_id;	    /* the thread the event is about */
	uint64_t capture_thread_id; /* the thread that wrote it */
	uint32_t sequence;
	uint32_t processor;
	int64_t timestamp; /* in header.qpc_freq units */
	const unsigned char *payload;
	uint32_t payload_size;
	const uint64_t *stack; /* IPs, leaf first; NULL when none */
	uint32_t stack_depth;
	uint64_t offset; /* of the event blob in the file */
};

/*
 * The consumer. Each callback returns 0 to go on, or a negative errno that
 * stops the reading and is returned by hs_nettrace_read(). NULL callbacks
 * are skipped.
 */
struct hs_nettrace_ops {
	void *ctx;
	int (*header)(void *ctx, const struct hs_nettrace_header *h);
	int (*event)(void *ctx, const struct hs_nettrace_event *ev);
};

/* What a read found besides the events. */
struct hs_nettrace_stats {
	uint64_t bytes; /* bytes read */
	uint64_t nr_events, nr_metadata, nr_stacks, nr_sequence_points;
	uint64_t nr_lost;	  /* events the sequence numbers say were dropped */
	uint64_t nr_unknown_meta; /* events whose metadata id was never defined */
	int complete;  /* the stream ended with its end tag or at an object boundary */
	int truncated; /* cut off: the file ends inside an object */
	uint64_t truncated_at;	   /* the offset where the data stops */
	uint64_t truncated_object; /* the offset of the object it stops in */
};

/* Caps on what the input can make the reader hold. */
#define HS_NETTRACE_MAX_BLOCK (64u << 20)   /* bytes of one block */
#define HS_NETTRACE_MAX_REGION (256u << 20) /* bytes of events kept for sorting */
#define HS_NETTRACE_MAX_STACKS (16u << 20)  /* stack ids of one region */
#define HS_NETTRACE_MAX_META (1u << 20)	    /* metadata ids */

/*
 * Read the nettrace stream @f (borrowed; only read, never seeked) from its
 * first byte, calling @ops. Returns 0 when the stream was read to its end
 * or was cut off (then @stats->truncated says where: the events of whole
 * blocks before that point were delivered); -EINVAL for input that is not
 * a nettrace stream or is corrupt, with @diag naming the offset; -EIO,
 * -ENOMEM, -E2BIG (a cap), or a callback's error. @stats may be NULL.
 */
HS_MUST_CHECK
int hs_nettrace_read(FILE *f, const struct hs_nettrace_ops *ops,
		     struct hs_nettrace_stats *stats, struct hs_diag *diag);

/* Whether the @n bytes at @head start a nettrace stream ("Nettrace"). */
int hs_nettrace_sniff(const unsigned char *head, size_t n);

/*
 * Decoding helpers, exposed for the payload decoders and the tests.
 * hs_nettrace_varint(): the LEB128 unsigned integer at *@p (before @end),
 * at most @max_bytes long (5 for 32 bits, 10 for 64); advances *@p.
 * Returns 0, or -EINVAL when it runs past @end or over @max_bytes.
 */
HS_MUST_CHECK
int hs_nettrace_varint(const unsigned char **p, const unsigned char *end,
		       unsigned max_bytes, uint64_t *out);
/*
 * The NUL-terminated UTF-16LE string at *@p (before @end) as UTF-8 into a
 * new string (*@out, free with hs_free()); advances *@p past the NUL.
 * Unpaired surrogates become U+FFFD. Returns 0, -EINVAL (no NUL before
 * @end) or -ENOMEM.
 */
HS_MUST_CHECK int hs_nettrace_utf16(const unsigned char **p, const unsigned char *end,
				    char **out);
#endif
