#ifndef HS_FORMAT_TRACE_RECORD_H
#define HS_FORMAT_TRACE_RECORD_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "format/trace_format.h"
#include "common/log.h"

/*
 * trace_record - the record codec: the one place where the layout of each
 * record of a chunk payload is written, to encode (hs_enc_*()) and to
 * decode (hs_rec_decode(), hs_rec_decode_fixed()), and where a record
 * becomes the heap events it stands for (hs_rec_events()).
 *
 * Shared by the collector (its hooks and writer thread encode), the
 * reader and the test builders, so nothing here allocates or keeps state:
 * encoders write into caller buffers and return the end of what they
 * wrote; decoded strings and byte arrays point into the payload (borrowed
 * for as long as the payload lives). The hot functions are inline.
 */

/* --- encoding ----------------------------------------------------------- */

/*
 * Fixed records: the tag, then varints. Events carry their time and
 * address as deltas from the span's state (@dt, @da: this event's ticks
 * and address minus the previous event's of the span). Room needed: 1 +
 * HS_VARINT_MAX per field.
 */
static inline uint8_t *hs_enc_span(uint8_t *p, uint64_t tid, uint64_t ticks,
				   uint64_t addr)
{
	*p++ = HS_TAG_SPAN;
	p = hs_put_varint(p, tid);
	p = hs_put_varint(p, ticks);
	return hs_put_varint(p, addr);
}

/* A stack node: @id (not 0) under @parent (0: a root), at code address @addr. */
static inline uint8_t *hs_enc_node(uint8_t *p, uint64_t id, uint64_t parent,
				   uint64_t addr)
{
	*p++ = HS_TAG_NODE;
	p = hs_put_varint(p, id);
	p = hs_put_varint(p, parent);
	return hs_put_varint(p, addr);
}

static inline uint8_t *hs__enc_event(uint8_t *p, unsigned tag, int64_t dt, int64_t da)
{
	*p++ = (uint8_t)tag;
	p = hs_put_svarint(p, dt);
	return hs_put_svarint(p, da);
}

/*
 * An allocation that is not a realloc (MALLOC ... PVALLOC): @size bytes on
 * stack node @stack (0: none); @align is written for the tags that have
 * one (hs_tag_has_align()).
 */
static inline uint8_t *hs_enc_alloc(uint8_t *p, unsigned tag, int64_t dt, int64_t da,
				    uint64_t size, uint64_t stack, uint64_t align)
{
	p = hs__enc_event(p, tag, dt, da);
	p = hs_put_varint(p, size);
	p = hs_put_varint(p, stack);
	return hs_tag_has_align(tag) ? hs_put_varint(p, align) : p;
}

/*
 * REALLOC or REALLOCARRAY: the new block, and the old one as @old_delta
 * (old address minus new; old address 0: the realloc freed nothing)
 * freed @lead ticks before the call returned.
 */
static inline uint8_t *hs_enc_realloc(uint8_t *p, unsigned tag, int64_t dt, int64_t da,
				      uint64_t size, uint64_t stack, int64_t old_delta,
				      uint64_t lead)
{
	p = hs__enc_event(p, tag, dt, da);
	p = hs_put_varint(p, size);
	p = hs_put_varint(p, stack);
	p = hs_put_svarint(p, old_delta);
	return hs_put_varint(p, lead);
}

/* FREE, REALLOC_FREE or FREE_TEMPORARY. */
static inline uint8_t *hs_enc_free(uint8_t *p, unsigned tag, int64_t dt, int64_t da)
{
	return hs__enc_event(p, tag, dt, da);
}

static inline uint8_t *hs_enc_mmap(uint8_t *p, int64_t dt, int64_t da, uint64_t len,
				   uint64_t prot, uint64_t flags, uint64_t stack)
{
	p = hs__enc_event(p, HS_TAG_MMAP, dt, da);
	p = hs_put_varint(p, len);
	p = hs_put_varint(p, prot);
	p = hs_put_varint(p, flags);
	return hs_put_varint(p, stack);
}

static inline uint8_t *hs_enc_munmap(uint8_t *p, int64_t dt, int64_t da, uint64_t len)
{
	p = hs__enc_event(p, HS_TAG_MUNMAP, dt, da);
	return hs_put_varint(p, len);
}

/* The new mapping, and the old one as @old_delta (old address minus new), @old_len. */
static inline uint8_t *hs_enc_mremap(uint8_t *p, int64_t dt, int64_t da, uint64_t len,
				     uint64_t stack, int64_t old_delta, uint64_t old_len)
{
	p = hs__enc_event(p, HS_TAG_MREMAP, dt, da);
	p = hs_put_varint(p, len);
	p = hs_put_varint(p, stack);
	p = hs_put_svarint(p, old_delta);
	return hs_put_varint(p, old_len);
}

/*
 * Bodies of sized records: the caller frames them (tag and length:
 * hs_tw_sized() or hs_tw_sized_prefix() of trace_writer.h). Times are
 * absolute ticks (ns for SAMPLING and SAMPLING_END). Strings are written
 * as given: the caller keeps them under HS_STRING_MAX and leaves room for
 * them.
 */

/* CLOCK (@value: ns at @ticks), RSS (@value: bytes) */
static inline uint8_t *hs_enc_clock_body(uint8_t *q, uint64_t ticks, uint64_t value)
{
	q = hs_put_varint(q, ticks);
	return hs_put_varint(q, value);
}

#define hs_enc_rss_body hs_enc_clock_body

static inline uint8_t *hs_enc_module_body(uint8_t *q, uint64_t ticks, uint64_t id,
					  uint64_t bias, uint64_t start, uint64_t end,
					  const void *path, size_t path_len,
					  const void *build_id, size_t build_id_len)
{
	q = hs_put_varint(q, ticks);
	q = hs_put_varint(q, id);
	q = hs_put_varint(q, bias);
	q = hs_put_varint(q, start);
	q = hs_put_varint(q, end);
	q = hs_put_bytes(q, path, path_len);
	return hs_put_bytes(q, build_id, build_id_len);
}

/* MODULE_UNLOAD of module @id; @next_node: the first node id after it. */
static inline uint8_t *hs_enc_module_unload_body(uint8_t *q, uint64_t ticks, uint64_t id,
						 uint64_t next_node)
{
	q = hs_put_varint(q, ticks);
	q = hs_put_varint(q, id);
	return hs_put_varint(q, next_node);
}

/* THREAD_START (the span's thread, named @name) and EXEC (@name: the path) */
static inline uint8_t *hs_enc_thread_start_body(uint8_t *q, uint64_t ticks,
						const void *name, size_t n)
{
	q = hs_put_varint(q, ticks);
	return hs_put_bytes(q, name, n);
}

#define hs_enc_exec_body hs_enc_thread_start_body

/* THREAD_NAME of thread @tid (0: the span's) */
static inline uint8_t *hs_enc_thread_name_body(uint8_t *q, uint64_t ticks, uint64_t tid,
					       const void *name, size_t n)
{
	q = hs_put_varint(q, ticks);
	q = hs_put_varint(q, tid);
	return hs_put_bytes(q, name, n);
}

static inline uint8_t *hs_enc_thread_exit_body(uint8_t *q, uint64_t ticks)
{
	return hs_put_varint(q, ticks);
}

/* FORK of child @pid; @followed: whether the child is traced too */
static inline uint8_t *hs_enc_fork_body(uint8_t *q, uint64_t ticks, uint64_t pid,
					uint64_t followed)
{
	q = hs_put_varint(q, ticks);
	q = hs_put_varint(q, pid);
	return hs_put_varint(q, followed);
}

/* END: @reason (enum hs_end_reason) and its @detail */
static inline uint8_t *hs_enc_end_body(uint8_t *q, uint64_t ticks, uint64_t reason,
				       uint64_t detail)
{
	q = hs_put_varint(q, ticks);
	q = hs_put_varint(q, reason);
	return hs_put_varint(q, detail);
}

/* SAMPLE of thread @tid: @kind (enum hs_sample_kind), @dur ns, on node @node */
static inline uint8_t *hs_enc_sample_body(uint8_t *q, uint64_t ticks, uint64_t tid,
					  uint64_t kind, uint64_t dur, uint64_t node)
{
	q = hs_put_varint(q, ticks);
	q = hs_put_varint(q, tid);
	q = hs_put_varint(q, kind);
	q = hs_put_varint(q, dur);
	return hs_put_varint(q, node);
}

/* SAMPLING: the rates (Hz), the signal and the flags */
static inline uint8_t *hs_enc_sampling_body(uint8_t *q, uint64_t ns, uint64_t cpu_hz,
					    uint64_t wall_hz, uint64_t signo,
					    uint64_t flags)
{
	q = hs_put_varint(q, ns);
	q = hs_put_varint(q, cpu_hz);
	q = hs_put_varint(q, wall_hz);
	q = hs_put_varint(q, signo);
	return hs_put_varint(q, flags);
}

/* SAMPLING_END: the samples taken, dropped, and the signals */
static inline uint8_t *hs_enc_sampling_end_body(uint8_t *q, uint64_t ns, uint64_t cpu,
						uint64_t wall, uint64_t dropped,
						uint64_t signals)
{
	q = hs_put_varint(q, ns);
	q = hs_put_varint(q, cpu);
	q = hs_put_varint(q, wall);
	q = hs_put_varint(q, dropped);
	return hs_put_varint(q, signals);
}

/* What the PROCESS record says. Strings are borrowed. */
struct hs_process_info {
	uint64_t pid, ppid, page_size, sample_bytes, max_depth;
	unsigned unwind; /* enum hs_unwind_mode */
	unsigned clock;	 /* enum hs_clock_kind */
	uint64_t start_realtime_ns;
	unsigned flags; /* enum hs_process_flags */
	uint64_t parent_pid;
	const char *exe, *comm, *cwd;
	int argc;
	const char *const *argv;
};

/* The PROCESS body's arguments: at most HS_ARGC_MAX, each cut at HS_ARG_MAX. */
static inline int hs__process_argc(const struct hs_process_info *info)
{
	return info->argc > HS_ARGC_MAX ? HS_ARGC_MAX : info->argc;
}

static inline size_t hs__process_arg_len(const char *s)
{
	size_t n = strlen(s);

	return n > HS_ARG_MAX ? HS_ARG_MAX : n;
}

/* Room hs_enc_process_body() needs for @info (an upper bound). */
static inline size_t hs_enc_process_body_size(const struct hs_process_info *info)
{
	size_t n = 16 * HS_VARINT_MAX;
	int i;

	n += strlen(info->exe) + strlen(info->comm) + strlen(info->cwd) +
	     3 * HS_VARINT_MAX;
	for (i = 0; i < hs__process_argc(info); i++)
		n += hs__process_arg_len(info->argv[i]) + HS_VARINT_MAX;
	return n;
}

/* PROCESS (hs_trace_info_decode() reads it) */
static inline uint8_t *hs_enc_process_body(uint8_t *q, const struct hs_process_info *info)
{
	int i, argc = hs__process_argc(info);

	q = hs_put_varint(q, info->pid);
	q = hs_put_varint(q, info->ppid);
	q = hs_put_varint(q, info->page_size);
	q = hs_put_varint(q, info->sample_bytes);
	q = hs_put_varint(q, info->max_depth);
	q = hs_put_varint(q, info->unwind);
	q = hs_put_varint(q, info->clock);
	q = hs_put_varint(q, info->start_realtime_ns);
	q = hs_put_varint(q, info->flags);
	q = hs_put_varint(q, info->parent_pid);
	q = hs_put_bytes(q, info->exe, strlen(info->exe));
	q = hs_put_bytes(q, info->comm, strlen(info->comm));
	q = hs_put_bytes(q, info->cwd, strlen(info->cwd));
	q = hs_put_varint(q, (uint64_t)argc);
	for (i = 0; i < argc; i++)
		q = hs_put_bytes(q, info->argv[i], hs__process_arg_len(info->argv[i]));
	return q;
}

/* One entry of the footer's chunk index (hs_enc_footer_body() writes them). */
struct hs_chunk_index {
	uint64_t offset, first_ticks, last_ticks;
};

/* Room hs_enc_footer_body() needs for @n index entries. */
static inline size_t hs_enc_footer_body_size(size_t n)
{
	return (HS_FC__COUNT + 2 + 4 * n) * HS_VARINT_MAX;
}

/*
 * FOOTER (hs_footer_counts(), hs_footer_index_*(), hs_footer_mark*()
 * read it): the counts, the chunk index of @n entries, and, with
 * @has_records (since 1.4), the marks of the entries whose chunk holds
 * records other than events.
 */
static inline uint8_t *hs_enc_footer_body(uint8_t *q, const uint64_t counts[HS_FC__COUNT],
					  const struct hs_chunk_index *index, size_t n,
					  const uint8_t *has_records)
{
	size_t i, marked = 0, prev = 0;

	for (i = 0; i < HS_FC__COUNT; i++)
		q = hs_put_varint(q, counts[i]);
	q = hs_put_varint(q, n);
	for (i = 0; i < n; i++) {
		q = hs_put_varint(q, index[i].offset);
		q = hs_put_varint(q, index[i].first_ticks);
		q = hs_put_varint(q, index[i].last_ticks);
	}
	if (!has_records)
		return q;
	for (i = 0; i < n; i++)
		marked += has_records[i] != 0;
	q = hs_put_varint(q, marked);
	for (i = 0; i < n; i++) {
		if (!has_records[i])
			continue;
		q = hs_put_varint(q, i - prev);
		prev = i;
	}
	return q;
}

/* --- decoding ------------------------------------------------------------- */

/* Decoding state of a chunk: the current span. Zero it at a chunk start. */
struct hs_rec_state {
	uint64_t tid;	/* 0 = the process */
	uint64_t ticks; /* last event's ticks */
	uint64_t addr;	/* last event's address */
};

/*
 * A decoded record. Only the fields of its tag are set (hs_rec_decode()
 * zeroes the others). For sized records, body/body_len is the whole
 * body; PROCESS and FOOTER bodies are decoded further by the reader.
 */
struct hs_rec {
	uint8_t tag;
	uint64_t tid;	      /* the span's thread */
	uint64_t ticks;	      /* absolute, for events and timed sized records */
	uint64_t addr;	      /* events: the (new) address */
	uint64_t size;	      /* allocations: size; MMAP/MUNMAP/MREMAP: (new) length */
	uint64_t stack;	      /* node id, 0 = none */
	uint64_t old_addr;    /* REALLOC*, MREMAP: the old address (0 = none) */
	uint64_t old_size;    /* MREMAP: the old length */
	uint64_t lead;	      /* REALLOC*: ticks from the call to its return */
	uint64_t align;	      /* aligned allocations */
	uint64_t prot, flags; /* MMAP */
	uint64_t id;	      /* NODE, MODULE, MODULE_UNLOAD id; FORK child pid;
			       * THREAD_NAME tid (0: the span's thread);
			       * SAMPLE tid; SAMPLING signal */
	uint64_t parent;      /* NODE parent; FORK followed; MODULE_UNLOAD next node */
	uint64_t bias, start, end; /* MODULE */
	uint64_t value;		   /* CLOCK ns; RSS bytes; END reason; SAMPLE kind;
				    * SAMPLING CPU Hz; SAMPLING_END CPU samples */
	uint64_t detail;	   /* END detail; SAMPLING wall Hz; SAMPLING_END
				    * wall samples */
	/* SAMPLE: size is the duration (ns); SAMPLING: flags are its flags;
	 * SAMPLING_END: size is the samples dropped, old_size the signals */
	const uint8_t *str; /* MODULE path, THREAD_* name, EXEC path */
	size_t str_len;
	const uint8_t *bytes; /* MODULE build id */
	size_t bytes_len;
	const uint8_t *body; /* sized records: the body */
	size_t body_len;
};

/*
 * Decode the fixed record (SPAN, NODE or an event record) at *@p, before
 * @end, with state @st. Sets the fields of its tag, and tag, tid, ticks,
 * addr, size, stack, old_addr, old_size, lead, id and value always (0
 * where the tag has none); other fields are left as they were. Returns 1 and advances
 * *@p and @st (SPAN resets it; events advance ticks and address); 0 when
 * the tag is not that of a fixed record (nothing read); -1 on malformed
 * input, with *@p and @st unchanged and *@why set to a static message.
 */
HS_MUST_CHECK
static inline __attribute__((always_inline)) int
hs_rec_decode_fixed(const uint8_t **p, const uint8_t *end, struct hs_rec_state *st,
		    struct hs_rec *rec, const char **why)
{
	const uint8_t *q = *p;
	uint64_t dt, da, sv = 0;
	unsigned tag;
	int has_old = 0;

	if (q >= end)
		return 0;
	tag = *q++;
	rec->tag = (uint8_t)tag;
	rec->tid = st->tid;
	rec->size = rec->stack = rec->old_addr = rec->old_size = rec->lead = 0;
	rec->id = rec->value = 0;
	switch (tag) {
	case HS_TAG_SPAN:
		if (hs_get_varint(&q, end, &rec->tid) ||
		    hs_get_varint(&q, end, &rec->ticks) ||
		    hs_get_varint(&q, end, &rec->addr))
			goto bad_varint;
		st->tid = rec->tid;
		st->ticks = rec->ticks;
		st->addr = rec->addr;
		*p = q;
		return 1;
	case HS_TAG_NODE:
		if (hs_get_varint(&q, end, &rec->id) ||
		    hs_get_varint(&q, end, &rec->parent) ||
		    hs_get_varint(&q, end, &rec->addr))
			goto bad_varint;
		if (!rec->id) {
			*why = "node id 0";
			return -1;
		}
		rec->ticks = 0;
		*p = q;
		return 1;
	case HS_TAG_MALLOC:
	case HS_TAG_CALLOC:
	case HS_TAG_VALLOC:
	case HS_TAG_PVALLOC:
	case HS_TAG_REALLOC:
	case HS_TAG_REALLOCARRAY:
	case HS_TAG_POSIX_MEMALIGN:
	case HS_TAG_ALIGNED_ALLOC:
	case HS_TAG_MEMALIGN:
		if (hs_get_varint(&q, end, &dt) || hs_get_varint(&q, end, &da) ||
		    hs_get_varint(&q, end, &rec->size) ||
		    hs_get_varint(&q, end, &rec->stack))
			goto bad_varint;
		if (hs_tag_is_realloc(tag)) {
			if (hs_get_varint(&q, end, &sv) ||
			    hs_get_varint(&q, end, &rec->lead))
				goto bad_varint;
			has_old = 1;
		} else if (hs_tag_has_align(tag)) {
			if (hs_get_varint(&q, end, &rec->align))
				goto bad_varint;
		}
		break;
	case HS_TAG_FREE:
	case HS_TAG_REALLOC_FREE:
	case HS_TAG_FREE_TEMPORARY:
		if (hs_get_varint(&q, end, &dt) || hs_get_varint(&q, end, &da))
			goto bad_varint;
		break;
	case HS_TAG_MMAP:
		if (hs_get_varint(&q, end, &dt) || hs_get_varint(&q, end, &da) ||
		    hs_get_varint(&q, end, &rec->size) ||
		    hs_get_varint(&q, end, &rec->prot) ||
		    hs_get_varint(&q, end, &rec->flags) ||
		    hs_get_varint(&q, end, &rec->stack))
			goto bad_varint;
		break;
	case HS_TAG_MUNMAP:
		if (hs_get_varint(&q, end, &dt) || hs_get_varint(&q, end, &da) ||
		    hs_get_varint(&q, end, &rec->size))
			goto bad_varint;
		break;
	case HS_TAG_MREMAP:
		if (hs_get_varint(&q, end, &dt) || hs_get_varint(&q, end, &da) ||
		    hs_get_varint(&q, end, &rec->size) ||
		    hs_get_varint(&q, end, &rec->stack) || hs_get_varint(&q, end, &sv) ||
		    hs_get_varint(&q, end, &rec->old_size))
			goto bad_varint;
		has_old = 1;
		break;
	default:
		return 0;
	}
	/* an event: the whole record is read, now the state moves */
	st->ticks += (uint64_t)hs_unzigzag(dt);
	st->addr += (uint64_t)hs_unzigzag(da);
	rec->ticks = st->ticks;
	rec->addr = st->addr;
	if (has_old)
		rec->old_addr = rec->addr + (uint64_t)hs_unzigzag(sv); /* old minus new */
	*p = q;
	return 1;
bad_varint:
	*why = "bad varint or record past the end of the payload";
	return -1;
}

/*
 * Decode the record at *@p (before @end) with state @st, which is updated
 * (SPAN resets it; events advance ticks and address). On success returns
 * 0 and advances *@p. On malformed input returns -1, leaves *@p at the
 * record start and sets *@why to a static message. Unknown sized records
 * decode with only tag and body set.
 */
HS_MUST_CHECK
int hs_rec_decode(const uint8_t **p, const uint8_t *end, struct hs_rec_state *st,
		  struct hs_rec *rec, const char **why);

/* Name of a tag for dumps and messages ("malloc", "free", ...), or NULL. */
const char *hs_tag_name(unsigned tag);

/* --- columnar EVENTS chunks (since 2.0) ---------------------------------- */

/* Whether @tag is a fixed event record (its fields go to the streams). */
static inline int hs__tag_is_event(unsigned tag)
{
	return (tag >= HS_TAG_MALLOC && tag <= HS_TAG_FREE_TEMPORARY) ||
	       (tag >= HS_TAG_MMAP && tag <= HS_TAG_MREMAP);
}

/*
 * Copy the varint at *@p (before @end) to *@dst, advancing both; 0 or -1.
 * With 8 bytes to read it copies them all at once (@dst has
 * HS_CS_SLACK bytes of room past what it keeps) and advances by the
 * varint's length.
 */
static inline int hs__copy_varint(uint8_t **dst, const uint8_t **p, const uint8_t *end)
{
	const uint8_t *q = *p;
	uint8_t *d = *dst;
	unsigned k = 0;

	if (__builtin_expect(end - q >= 8, 1)) {
		uint64_t v, stop;

		memcpy(&v, q, 8);
		stop = ~v & 0x8080808080808080ull; /* little-endian: byte i at bits 8i */
		if (__builtin_expect(stop != 0, 1)) {
			k = (unsigned)__builtin_ctzll(stop) / 8 + 1;
			memcpy(d, &v, 8);
			*p = q + k;
			*dst = d + k;
			return 0;
		}
	}
	for (;;) {
		uint8_t b;

		if (q >= end || k == HS_VARINT_MAX)
			return -1;
		b = *q++;
		*d++ = b;
		k++;
		if (!(b & 0x80))
			break;
	}
	*p = q;
	*dst = d;
	return 0;
}

/*
 * A columnar payload holds the same bytes as the record sequence it stands
 * for, sorted into streams: each field of a heap event goes to the stream
 * of its kind (times, addresses, sizes, stacks, the rest), everything
 * else (tags, SPAN, NODE, sized records) stays in the record stream. zstd
 * then sees like next to like: on random-size loops that makes the chunk
 * a quarter smaller. The layout (docs/trace-format.md, "Columnar
 * chunks"): five varint stream lengths (times, addresses, sizes, stacks,
 * other), those five streams, then the record stream up to the end.
 */
enum hs_chunk_stream {
	HS_CS_TIME,  /* dt */
	HS_CS_ADDR,  /* da, and realloc's and mremap's old − new */
	HS_CS_SIZE,  /* sizes and lengths */
	HS_CS_STACK, /* stack node ids */
	HS_CS_OTHER, /* alignment, lead, prot, flags */
	HS_CS__COUNT,
	HS_CS_RECORDS = HS_CS__COUNT, /* tags and the other records */
};

/* Room a columnar payload needs beyond the @n bytes of its records. */
#define HS_CS_HEADER_MAX (HS_CS__COUNT * HS_VARINT_MAX)
/* Room the codec may write past what it keeps (a varint copied 8 bytes at a time). */
#define HS_CS_SLACK 16

/*
 * Sort the records [@in, @in + @n) into a columnar payload at @out (room
 * for @n + HS_CS_HEADER_MAX; it may be @in: the records are all read
 * before it is written), using @scratch (room for 6 × (@n +
 * HS_CS_SLACK) bytes).
 * Returns the payload's length, or 0 when a record is not one this
 * version knows (a fixed tag it has no layout for) or is malformed: the
 * caller then writes the records as they are. Allocates nothing.
 */
size_t hs_chunk_split(const uint8_t *in, size_t n, uint8_t *scratch, uint8_t *out);

/*
 * Put the columnar payload [@in, @in + @n) back into its record sequence
 * at @out (room for @cap bytes; @n + HS_CS_SLACK is always enough:
 * less is refused). Returns 0 with
 * *@out_len set, or -1 with *@why set to a static message when the
 * payload is malformed (a stream length past the end, a field past its
 * stream, a stream not used up, an unknown tag). Allocates nothing.
 */
HS_MUST_CHECK
int hs_chunk_join(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *out_len,
		  const char **why);

/* --- compact EVENTS chunks (since 3.0; with size classes since 4.0) ------- */

/*
 * A compact payload is a columnar one whose heap addresses refer back to
 * the thread's history in the chunk: a free names the allocation k
 * allocations ago (of the same thread, in the same chunk) when that one
 * had its address, an allocation the free j frees ago. So a program that
 * repeats itself writes repeating numbers, where the addresses differed,
 * and zstd's matches do the rest; the chunk still decodes on its own.
 * Since 4.0 (chunk flag HS_CHUNK_CLASSES) an allocation's j counts only
 * the frees of blocks of its size class (hs_cc_class(): glibc's bins,
 * which hand a freed block back to a request of its class); where it
 * has none, two streams of their own name another class (or the frees
 * of no class: of blocks the chunk did not allocate) and j in it. A
 * heap allocation's size is whole, or split (the caller's choice) into
 * its class in the SIZE stream and the low 4 bits of size + 7 in the
 * SIZE_LOW stream. Since 5.0 (HS_CHUNK_PREDICT) an allocation whose
 * address is literal may write it as its distance from the thread's
 * prediction, the end of its last such block (glibc carves new blocks
 * one after the other), in a stream of its own, and a NODE record's
 * fields are deltas in three streams. The layout (docs/trace-format.md,
 * "Compact chunks"):
 * the length of the records it stands for, the varint stream lengths
 * (times, addresses, references, sizes, stacks, other; since 4.0 then
 * the sizes' low bits, the allocations' references, the other
 * references' classes and places, the frees' references' low bits;
 * since 5.0 then the new addresses, the nodes' ids, parents and
 * addresses), those
 * streams, then the record stream up to the end. The encoder is
 * here (it allocates nothing: the collector runs it); the decoder, which
 * keeps the histories, is trace_compact.h's.
 */
enum hs_compact_stream {
	HS_CC_TIME,	   /* dt */
	HS_CC_ADDR,	   /* da and old - new that are not references */
	HS_CC_REF,	   /* per heap address: 0 (literal), else how far back */
	HS_CC_SIZE,	   /* sizes and lengths; since 4.0 a heap size's class */
	HS_CC_STACK,	   /* stack node ids */
	HS_CC_OTHER,	   /* alignment, lead, prot, flags */
	HS_CC_SIZE_LOW,	   /* since 4.0: a heap size's low bits, a byte each */
	HS_CC_REF_ALLOC,   /* since 4.0: an allocation's reference (REF: the
			    * frees' and old blocks' alone) in its class */
	HS_CC_REF_CLASS,   /* since 4.0, where REF_ALLOC is 0: 0, its
			    * address is literal; else 1 + the class of the
			    * free it names (HS_CC_UNCLASSED: of no class);
			    * since 5.0 HS_CC_REF_NEW: in ADDR_NEW */
	HS_CC_REF_OTHER,   /* and then how far back among that class's frees */
	HS_CC_REF_LOW,	   /* since 4.0: the low 7 bits of a free's REF, a byte
			    * each (REF: the rest) */
	HS_CC_ADDR_NEW,	   /* since 5.0: a literal allocation's address as
			    * its distance from the thread's prediction */
	HS_CC_NODE_ID,	   /* since 5.0: a NODE's id - (the last one's + 1) */
	HS_CC_NODE_PARENT, /* since 5.0: its id - its parent */
	HS_CC_NODE_ADDR,   /* since 5.0: its address - the last NODE's */
	HS_CC__COUNT,
	HS_CC_RECORDS = HS_CC__COUNT, /* tags and the other records */
};

/* Streams of a 3.0 compact payload (no SIZE_LOW), of a 4.0 one (no
 * ADDR_NEW), and of one with @flags. */
#define HS_CC_COUNT_3_0 HS_CC_SIZE_LOW
#define HS_CC_COUNT_4_0 HS_CC_ADDR_NEW
#define HS_CC_STREAMS(flags)                                                             \
	((flags)&HS_CHUNK_PREDICT   ? HS_CC__COUNT                                       \
	 : (flags)&HS_CHUNK_CLASSES ? HS_CC_COUNT_4_0                                    \
				    : HS_CC_COUNT_3_0)

/* Room a compact payload's header takes (its lengths). */
#define HS_CC_HEADER_MAX ((HS_CC__COUNT + 1) * HS_VARINT_MAX)
/* Scratch hs_chunk_compact() needs for @n bytes of records. */
#define HS_CC_SCRATCH(n) ((HS_CC__COUNT + 2) * ((size_t)(n) + HS_CS_SLACK))
/* Threads of a chunk whose addresses the encoder refers to (a power of 2,
 * at most 4096; it keeps half of them) */
#define HS_CC_THREADS 4096
/* Address table entries (a power of 2; it fills half of them): 4 MiB */
#define HS_CC_TABLE (1u << 18)
/* Chunk generations before the tables are cleared (fits a mark's 8 bits) */
#define HS_CC_GEN_LIMIT 256u
/* Size classes an allocation's reference counts frees in (since 4.0):
 * (size + 7) / 16, the last one taking every larger size; then the frees
 * of no class (of a block the chunk did not allocate), HS_CC_UNCLASSED */
#define HS_CC_CLASSES 63
#define HS_CC_UNCLASSED HS_CC_CLASSES
/* A 5.0 REF_CLASS that says the address is in ADDR_NEW (one past no class) */
#define HS_CC_REF_NEW (HS_CC_UNCLASSED + 2)
#define HS_CC_CLASS_BITS 6
/* Bits of an allocation's or a free's number in a mark: records past
 * HS_CC_RECORDS_MAX bytes, which could count more, are not compacted */
#define HS_CC_NUM_BITS 19
#define HS_CC_RECORDS_MAX (3 * (((size_t)1 << HS_CC_NUM_BITS) - 2))

/* (size + 7) / 16 without overflow: what a 4.0 payload writes in SIZE. */
static inline uint64_t hs_cc_size_high(uint64_t size)
{
	return (size >> 4) + (((size & 15) + 7) >> 4);
}

/* The size class of a size's hs_cc_size_high() @high. */
static inline unsigned hs_cc_class(uint64_t high)
{
	return high < HS_CC_CLASSES - 1 ? (unsigned)high : HS_CC_CLASSES - 1;
}

/* A thread's allocations and frees so far in the chunk. */
struct hs_cc_thread {
	uint64_t tid;
	uint32_t gen; /* the chunk it was last used in */
	uint32_t allocs, frees;
	uint32_t row;	  /* its frees per size class: hs_compact_enc's row */
	uint64_t predict; /* since 5.0: where its next new block is likely */
	/* set with @gen: the owner part of its addresses' marks (the
	 * generation and this slot), and its slot as the address table's
	 * homes mix it in; kept here so that a lookup does not work them
	 * out again */
	uint64_t owner, home_salt;
};

/*
 * An address in a thread's history, 16 bytes so that four share a cache
 * line: @mark is the chunk's generation (8 bits), the thread's slot (12),
 * the size class of its latest allocation (HS_CC_CLASS_BITS; in a 4.0
 * payload HS_CC_UNCLASSED after a free of no class), then the numbers + 1
 * of its latest allocation and of its latest free (HS_CC_NUM_BITS each;
 * 0: none; in a 4.0 payload a free's number counts the frees of its
 * class, or of no class).
 */
struct hs_cc_addr {
	uint64_t addr;
	uint64_t mark;
};

/*
 * The encoder's tables, kept from chunk to chunk (stamped with the
 * chunk's generation, so that a chunk does not clear them; every
 * HS_CC_GEN_LIMIT chunks they are cleared). Zero it once before the
 * first use; about 4.6 MiB (the class rows are touched only for the
 * threads a chunk has).
 */
struct hs_compact_enc {
	/* the caller's choice: heap sizes as class and low bits (SIZE_LOW),
	 * which suits random sizes, else whole, which suits sizes that
	 * repeat in runs (zstd matches them) */
	int split_sizes;
	/*
	 * The caller's too: the records the scratch has room for (its
	 * HS_CC_SCRATCH(), less the slack), or 0. The streams' regions in
	 * the scratch are that far apart, not as far as each chunk's
	 * length: otherwise a stream's region starts elsewhere in every
	 * chunk of another length, and over many chunks the scratch's
	 * pages are all touched.
	 */
	size_t scratch_room;
	uint32_t gen, nr_threads, nr_addrs;
	struct hs_cc_thread threads[HS_CC_THREADS];
	struct hs_cc_addr addrs[HS_CC_TABLE];
	/* per thread of the chunk, in the order seen: frees per size class,
	 * then those of no class */
	uint32_t class_frees[HS_CC_THREADS / 2][HS_CC_CLASSES + 1];
};

/*
 * Encode the records [@in, @in + @n) as a 5.0 compact payload (chunk
 * flags HS_CHUNK_COMPACT | HS_CHUNK_CLASSES | HS_CHUNK_PREDICT), what the
 * collector writes, at @out (room
 * for @cap bytes; not @in), using @enc and @scratch (HS_CC_SCRATCH(@n)
 * bytes, or HS_CC_SCRATCH(enc->scratch_room - HS_CS_SLACK) when larger). Returns the
 * payload's length, or 0 when a record is not one this version knows (a fixed tag it has
 * no layout for), is malformed, or the payload does not fit @cap: the caller then writes
 * the records another way. Allocates nothing.
 */
size_t hs_chunk_compact_5_0(const uint8_t *in, size_t n, struct hs_compact_enc *enc,
			    uint8_t *scratch, uint8_t *out, size_t cap);

/*
 * The same as a 4.0 compact payload (HS_CHUNK_COMPACT | HS_CHUNK_CLASSES),
 * which the collector wrote before 5.0: for the tests of the readers of
 * 4.0 traces and for bench/tracesize, which compares the two.
 */
size_t hs_chunk_compact(const uint8_t *in, size_t n, struct hs_compact_enc *enc,
			uint8_t *scratch, uint8_t *out, size_t cap);

/*
 * The same as a 3.0 compact payload (chunk flag HS_CHUNK_COMPACT alone),
 * which the collector wrote before 4.0: for the tests of the readers of
 * 3.0 traces and for bench/tracesize, which compares the two.
 */
size_t hs_chunk_compact_3_0(const uint8_t *in, size_t n, struct hs_compact_enc *enc,
			    uint8_t *scratch, uint8_t *out, size_t cap);

/*
 * Where a 5.0 payload predicts a thread's next new block: just past the
 * block of @size bytes at @addr, as glibc carves blocks from the top of
 * its heap (a block of at least 32 bytes, the size and 8 bytes of header
 * rounded up to 16).
 */
static inline uint64_t hs_cc_predict(uint64_t addr, uint64_t size)
{
	uint64_t block = size > UINT64_MAX - 23 ? 0 : (size + 23) & ~(uint64_t)15;

	return addr + (block < 32 ? 32 : block);
}

/* --- the FOOTER body ------------------------------------------------------ */

/* The counts that begin a FOOTER body [*@q, @end): 0 and *@q past them, or -1. */
HS_MUST_CHECK
static inline int hs_footer_counts(const uint8_t **q, const uint8_t *end,
				   uint64_t counts[HS_FC__COUNT])
{
	unsigned i;

	for (i = 0; i < HS_FC__COUNT; i++)
		if (hs_get_varint(q, end, &counts[i]))
			return -1;
	return 0;
}

/* After the counts: the number of chunk index entries. 0 or -1. */
HS_MUST_CHECK
static inline int hs_footer_index_len(const uint8_t **q, const uint8_t *end, uint64_t *n)
{
	return hs_get_varint(q, end, n);
}

/* The next entry of the chunk index. 0 or -1. */
HS_MUST_CHECK
static inline int hs_footer_index_next(const uint8_t **q, const uint8_t *end,
				       struct hs_chunk_index *e)
{
	return hs_get_varint(q, end, &e->offset) ||
		       hs_get_varint(q, end, &e->first_ticks) ||
		       hs_get_varint(q, end, &e->last_ticks)
		   ? -1
		   : 0;
}

/*
 * Since 1.4, after the index: how many of its entries are marked as
 * chunks that hold records other than events (hs_tw_footer_marked()).
 * 0, 1 when the body ends before (a footer without the marks: every chunk
 * may hold some; *@n is 0), or -1.
 */
HS_MUST_CHECK
static inline int hs_footer_marks_len(const uint8_t **q, const uint8_t *end, uint64_t *n)
{
	*n = 0;
	if (*q == end)
		return 1;
	return hs_get_varint(q, end, n);
}

/*
 * The index entry of mark @i (0, 1, ... in order) into *@at, which holds
 * the previous one's (the marks are increasing, each written as its
 * distance from the one before). 0 or -1.
 */
HS_MUST_CHECK
static inline int hs_footer_mark_next(const uint8_t **q, const uint8_t *end, uint64_t i,
				      uint64_t *at)
{
	uint64_t k;

	if (hs_get_varint(q, end, &k) || (i && !k) || (i && k > UINT64_MAX - *at))
		return -1;
	*at = i ? *at + k : k;
	return 0;
}

/* --- from records to events ---------------------------------------------- */

/*
 * Event operations. HS_OP_SAMPLE is a CPU or wall-clock stack sample: its
 * address is its kind (enum hs_sample_kind), its size its duration in
 * ns, and its time the end of the interval it covers.
 */
enum hs_trace_op { HS_OP_ALLOC, HS_OP_FREE, HS_OP_MMAP, HS_OP_MUNMAP, HS_OP_SAMPLE };

/* One event of a record (hs_rec_events()). */
struct hs_rec_event {
	uint64_t ticks;
	uint64_t tid; /* the thread it happened in */
	uint64_t addr, size;
	uint64_t stack; /* node id, 0 = none */
	uint8_t op;	/* enum hs_trace_op */
};

/*
 * The events record @rec stands for, in the order they happened, into
 * @ev; returns how many (0 to 2). The rule every reader keeps: a realloc
 * that freed a block is a free (@lead ticks before it returned, of the
 * old address) and an allocation; an mremap is an munmap of the old
 * mapping and an mmap of the new one; a SAMPLE of a known kind is one
 * event of its own thread; records that are not events give none.
 * Reads only the fields hs_rec_decode_fixed() always sets, and for SAMPLE
 * those hs_rec_decode() sets.
 */
static inline __attribute__((always_inline)) unsigned
hs_rec_events(const struct hs_rec *rec, struct hs_rec_event ev[2])
{
	unsigned tag = rec->tag;

	/* the one event most records are; two-event records fill ev[1] too */
	ev[0] = (struct hs_rec_event){.ticks = rec->ticks,
				      .tid = rec->tid,
				      .addr = rec->addr,
				      .size = rec->size,
				      .stack = rec->stack,
				      .op = HS_OP_ALLOC};
	ev[1] = ev[0];
	switch (tag) {
	case HS_TAG_MALLOC:
	case HS_TAG_CALLOC:
	case HS_TAG_VALLOC:
	case HS_TAG_PVALLOC:
	case HS_TAG_POSIX_MEMALIGN:
	case HS_TAG_ALIGNED_ALLOC:
	case HS_TAG_MEMALIGN:
		return 1;
	case HS_TAG_REALLOC:
	case HS_TAG_REALLOCARRAY:
		if (!rec->old_addr)
			return 1;
		ev[0].ticks = rec->lead <= rec->ticks ? rec->ticks - rec->lead : 0;
		ev[0].addr = rec->old_addr;
		ev[0].size = 0;
		ev[0].stack = 0;
		ev[0].op = HS_OP_FREE;
		return 2;
	case HS_TAG_FREE:
	case HS_TAG_REALLOC_FREE:
	case HS_TAG_FREE_TEMPORARY:
		ev[0].size = 0;
		ev[0].stack = 0;
		ev[0].op = HS_OP_FREE;
		return 1;
	case HS_TAG_MMAP:
		ev[0].op = HS_OP_MMAP;
		return 1;
	case HS_TAG_MUNMAP:
		ev[0].stack = 0;
		ev[0].op = HS_OP_MUNMAP;
		return 1;
	case HS_TAG_MREMAP:
		ev[1].op = HS_OP_MMAP;
		ev[0].addr = rec->old_addr;
		ev[0].size = rec->old_size;
		ev[0].stack = 0;
		ev[0].op = HS_OP_MUNMAP;
		return 2;
	case HS_TAG_SAMPLE:
		if (rec->value > HS_SAMPLE_WALL_READY)
			return 0; /* a kind from a newer version */
		if (rec->id)
			ev[0].tid = rec->id;
		ev[0].addr = rec->value;
		ev[0].op = HS_OP_SAMPLE;
		return 1;
	default:
		return 0;
	}
}
#endif
