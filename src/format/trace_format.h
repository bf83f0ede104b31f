#ifndef HS_FORMAT_TRACE_FORMAT_H
#define HS_FORMAT_TRACE_FORMAT_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * trace_format - the constants of the .heapscope trace format and the
 * varint codec both sides share (docs/trace-format.md is the reference).
 *
 * Everything here is inline, allocates nothing and touches no global
 * state, so the preload collector can use it inside malloc hooks.
 * Encoders write into caller buffers that must have room (HS_VARINT_MAX
 * bytes per varint); decoders never read past the end they are given.
 */

#define HS_TRACE_MAGIC "\x89HSTR\r\n\x1a"
#define HS_TRACE_MAGIC_LEN 8
/* 4.0: compact chunks by size class; 3.0: compact EVENTS chunks; 2.0: columnar */
#define HS_TRACE_MAJOR 5
#define HS_TRACE_MINOR 0
#define HS_TRACE_MAJOR_OLDEST 1 /* readers still read 1.x */
#define HS_FILE_HEADER_SIZE 16

#define HS_CHUNK_MAGIC "HSCK"
#define HS_CHUNK_HEADER_SIZE 24
#define HS_CHUNK_MAX (16u << 20) /* cap on stored and raw payload sizes */
#define HS_CHUNK_ZSTD 0x01	 /* chunk flag: payload is one zstd frame */
#define HS_CHUNK_COLUMNS 0x02	 /* since 2.0: an EVENTS payload in columns */
#define HS_CHUNK_COMPACT 0x04	 /* since 3.0: an EVENTS payload in compact columns */
#define HS_CHUNK_CLASSES 0x08	 /* since 4.0, with COMPACT: refers by size class */
/* since 5.0, with CLASSES: new blocks' addresses predicted, NODE records in streams */
#define HS_CHUNK_PREDICT 0x10

enum hs_chunk_kind {
	HS_CHUNK_EVENTS = 1,
	HS_CHUNK_END = 2,
	HS_CHUNK_SYMBOLS = 3, /* since 1.1: the symbol section */
};

#define HS_VARINT_MAX 10
#define HS_STRING_MAX (1u << 20) /* readers refuse longer strings */
#define HS_ARG_MAX 4096		 /* writers cut each argument here */
#define HS_ARGC_MAX 4096	 /* and keep at most this many */
#define HS_DEPTH_LIMIT 1024	 /* largest --max-depth */
#define HS_SYM_FRAMES_MAX 256	 /* frames (inline + 1) per symbolized address */

/* Record tags. 0x01-0x3f: fixed records; 0x40-0x7f: sized records. */
enum hs_tag {
	HS_TAG_SPAN = 0x01,
	HS_TAG_NODE = 0x02,
	HS_TAG_MALLOC = 0x03,
	HS_TAG_CALLOC = 0x04,
	HS_TAG_REALLOC = 0x05,
	HS_TAG_REALLOCARRAY = 0x06,
	HS_TAG_POSIX_MEMALIGN = 0x07,
	HS_TAG_ALIGNED_ALLOC = 0x08,
	HS_TAG_MEMALIGN = 0x09,
	HS_TAG_VALLOC = 0x0a,
	HS_TAG_PVALLOC = 0x0b,
	HS_TAG_FREE = 0x0c,
	HS_TAG_REALLOC_FREE = 0x0d,
	HS_TAG_FREE_TEMPORARY = 0x0e, /* since 1.5: a temporary block's free */
	HS_TAG_MMAP = 0x10,
	HS_TAG_MUNMAP = 0x11,
	HS_TAG_MREMAP = 0x12,

	HS_TAG_SIZED_FIRST = 0x40,
	HS_TAG_PROCESS = 0x40,
	HS_TAG_CLOCK = 0x41,
	HS_TAG_RSS = 0x42,
	HS_TAG_MODULE = 0x43,
	HS_TAG_MODULE_UNLOAD = 0x44,
	HS_TAG_THREAD_START = 0x45,
	HS_TAG_THREAD_NAME = 0x46,
	HS_TAG_THREAD_EXIT = 0x47,
	HS_TAG_FORK = 0x48,
	HS_TAG_EXEC = 0x49,
	HS_TAG_END = 0x4a,
	HS_TAG_FOOTER = 0x4b,
	HS_TAG_SYM_STRING = 0x4c, /* since 1.1, in SYMBOLS chunks */
	HS_TAG_SYM_ADDR = 0x4d,
	HS_TAG_SAMPLE = 0x4e,	    /* since 1.2: a CPU or wall-clock stack sample */
	HS_TAG_SAMPLING = 0x4f,	    /* since 1.2: sampling rates */
	HS_TAG_SAMPLING_END = 0x50, /* since 1.2: sampling totals */
	HS_TAG_SIZED_LAST = 0x7f,
};

static inline int hs_tag_is_alloc(unsigned tag)
{
	return tag >= HS_TAG_MALLOC && tag <= HS_TAG_PVALLOC;
}

static inline int hs_tag_is_realloc(unsigned tag)
{
	return tag == HS_TAG_REALLOC || tag == HS_TAG_REALLOCARRAY;
}

static inline int hs_tag_has_align(unsigned tag)
{
	return tag >= HS_TAG_POSIX_MEMALIGN && tag <= HS_TAG_MEMALIGN;
}

enum hs_unwind_mode { HS_UNWIND_LIBUNWIND = 0, HS_UNWIND_FP = 1, HS_UNWIND_SLOW = 2 };
enum hs_clock_kind { HS_CLOCK_NS = 0, HS_CLOCK_TSC = 1 };

/* PROCESS flags */
enum hs_process_flags {
	HS_PROC_FOLLOW_FORK = 1 << 0,
	HS_PROC_FOLLOW_EXEC = 1 << 1,
	HS_PROC_FORKED = 1 << 2,
	HS_PROC_EXECED = 1 << 3,
	HS_PROC_TEMPORARY_MARKS = 1 << 4, /* 1.5: FREE_TEMPORARY is written */
};

/* SAMPLE kinds */
enum hs_sample_kind {
	HS_SAMPLE_CPU = 0,	    /* a CPU-time timer fired */
	HS_SAMPLE_WALL_CPU = 1,	    /* wall tick, the thread was running */
	HS_SAMPLE_WALL_BLOCKED = 2, /* wall tick, the thread was blocked */
	HS_SAMPLE_WALL_READY = 3,   /* wall tick, it waited for a CPU (1.3) */
};

/* END reasons */
enum hs_end_reason {
	HS_END_EXIT = 0,
	HS_END_SIGNAL = 1,
	HS_END_EXEC = 2,
	HS_END__EXIT = 3,
	HS_END_STOPPED = 4,
};

/* Footer counters, in file order. */
enum hs_footer_count {
	HS_FC_ALLOCS,
	HS_FC_FREES,
	HS_FC_REALLOCS,
	HS_FC_MMAPS,
	HS_FC_MUNMAPS,
	HS_FC_MREMAPS,
	HS_FC_NODES,
	HS_FC_MODULES,
	HS_FC_THREADS,
	HS_FC_BYTES,
	HS_FC_LOST,
	HS_FC__COUNT
};

/* --- varints ---------------------------------------------------------- */

/* Append @v to @p; returns the byte after it. */
static inline uint8_t *hs_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t hs_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t hs_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint8_t *hs_put_svarint(uint8_t *p, int64_t v)
{
	return hs_put_varint(p, hs_zigzag(v));
}

/* Append a string or byte array: varint length, then the bytes. */
static inline uint8_t *hs_put_bytes(uint8_t *p, const void *s, size_t n)
{
	p = hs_put_varint(p, n);
	memcpy(p, s, n);
	return p + n;
}

/*
 * Decode a varint from [*@p, @end). Returns 0 and advances *@p, or -1 if
 * the varint runs past @end, is longer than 10 bytes or exceeds 64 bits
 * (*@p is then left unchanged).
 */
static inline int hs_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	unsigned shift = 0;

	if (q < end && *q < 0x80) { /* most fields fit one byte */
		*out = *q;
		*p = q + 1;
		return 0;
	}
	for (;;) {
		uint8_t b;

		if (q >= end || shift > 63)
			return -1;
		b = *q++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*p = q;
	*out = v;
	return 0;
}

static inline int hs_get_svarint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	uint64_t v;

	if (hs_get_varint(p, end, &v))
		return -1;
	*out = hs_unzigzag(v);
	return 0;
}

/* --- little-endian fixed fields --------------------------------------- */

static inline void hs_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void hs_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint16_t hs_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t hs_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The decoded fixed part of a chunk header. */
struct hs_chunk_header {
	uint8_t kind, flags;
	uint32_t stored, raw, seq, check;
};
#endif
