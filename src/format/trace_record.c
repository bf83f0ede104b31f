/*
 * trace_record - the record codec's out-of-line part: tag names and the
 * decoder of every record (sized ones here, fixed ones inline in
 * trace_record.h). See trace_record.h and docs/trace-format.md.
 */
#include "format/trace_record.h"
#include <string.h>

static const char *const tag_names[] = {
    [HS_TAG_SPAN] = "span",
    [HS_TAG_NODE] = "node",
    [HS_TAG_MALLOC] = "malloc",
    [HS_TAG_CALLOC] = "calloc",
    [HS_TAG_REALLOC] = "realloc",
    [HS_TAG_REALLOCARRAY] = "reallocarray",
    [HS_TAG_POSIX_MEMALIGN] = "posix_memalign",
    [HS_TAG_ALIGNED_ALLOC] = "aligned_alloc",
    [HS_TAG_MEMALIGN] = "memalign",
    [HS_TAG_VALLOC] = "valloc",
    [HS_TAG_PVALLOC] = "pvalloc",
    [HS_TAG_FREE] = "free",
    [HS_TAG_REALLOC_FREE] = "realloc-free",
    [HS_TAG_FREE_TEMPORARY] = "free-temporary",
    [HS_TAG_MMAP] = "mmap",
    [HS_TAG_MUNMAP] = "munmap",
    [HS_TAG_MREMAP] = "mremap",
    [HS_TAG_PROCESS] = "process",
    [HS_TAG_CLOCK] = "clock",
    [HS_TAG_RSS] = "rss",
    [HS_TAG_MODULE] = "module",
    [HS_TAG_MODULE_UNLOAD] = "module-unload",
    [HS_TAG_THREAD_START] = "thread-start",
    [HS_TAG_THREAD_NAME] = "thread-name",
    [HS_TAG_THREAD_EXIT] = "thread-exit",
    [HS_TAG_FORK] = "fork",
    [HS_TAG_EXEC] = "exec",
    [HS_TAG_END] = "end",
    [HS_TAG_FOOTER] = "footer",
    [HS_TAG_SYM_STRING] = "sym-string",
    [HS_TAG_SYM_ADDR] = "sym-addr",
    [HS_TAG_SAMPLE] = "sample",
    [HS_TAG_SAMPLING] = "sampling",
    [HS_TAG_SAMPLING_END] = "sampling-end",
};

const char *hs_tag_name(unsigned tag)
{
	if (tag >= sizeof(tag_names) / sizeof(tag_names[0]))
		return NULL;
	return tag_names[tag];
}

/* Read a varint or fail the record. */
#define GET(v)                                                                           \
	do {                                                                             \
		if (hs_get_varint(&q, end, &(v)))                                        \
			goto bad_varint;                                                 \
	} while (0)

static int get_string(const uint8_t **q, const uint8_t *end, const uint8_t **s, size_t *n)
{
	uint64_t len;

	if (hs_get_varint(q, end, &len) || len > HS_STRING_MAX ||
	    len > (uint64_t)(end - *q))
		return -1;
	*s = *q;
	*n = (size_t)len;
	*q += len;
	return 0;
}

static int decode_sized(const uint8_t *q, const uint8_t *end, struct hs_rec *rec,
			const char **why)
{
	uint64_t v;

	switch (rec->tag) {
	case HS_TAG_CLOCK:
	case HS_TAG_RSS:
		GET(rec->ticks);
		GET(rec->value);
		break;
	case HS_TAG_MODULE:
		GET(rec->ticks);
		GET(rec->id);
		GET(rec->bias);
		GET(rec->start);
		GET(rec->end);
		if (get_string(&q, end, &rec->str, &rec->str_len) ||
		    get_string(&q, end, &rec->bytes, &rec->bytes_len)) {
			*why = "bad string in module record";
			return -1;
		}
		if (rec->end < rec->start) {
			*why = "module record ends before it starts";
			return -1;
		}
		break;
	case HS_TAG_MODULE_UNLOAD:
		GET(rec->ticks);
		GET(rec->id);
		if (q < end)
			GET(rec->parent); /* the next node id */
		break;
	case HS_TAG_THREAD_NAME:
		GET(rec->ticks);
		GET(rec->id);
		if (get_string(&q, end, &rec->str, &rec->str_len)) {
			*why = "bad string";
			return -1;
		}
		break;
	case HS_TAG_THREAD_START:
	case HS_TAG_EXEC:
		GET(rec->ticks);
		if (get_string(&q, end, &rec->str, &rec->str_len)) {
			*why = "bad string";
			return -1;
		}
		break;
	case HS_TAG_THREAD_EXIT:
		GET(rec->ticks);
		break;
	case HS_TAG_FORK:
		GET(rec->ticks);
		GET(rec->id);
		GET(rec->parent);
		break;
	case HS_TAG_END:
		GET(rec->ticks);
		GET(rec->value);
		GET(rec->detail);
		break;
	case HS_TAG_SAMPLE:
		GET(rec->ticks);
		GET(rec->id);
		GET(rec->value);
		GET(rec->size);
		GET(rec->stack);
		break;
	case HS_TAG_SAMPLING:
		GET(rec->ticks);
		GET(rec->value);
		GET(rec->detail);
		GET(rec->id);
		GET(rec->flags);
		break;
	case HS_TAG_SAMPLING_END:
		GET(rec->ticks);
		GET(rec->value);
		GET(rec->detail);
		GET(rec->size);
		GET(rec->old_size);
		break;
	default:
		/* PROCESS, FOOTER and unknown records: body only. */
		(void)v;
		break;
	}
	return 0;
bad_varint:
	*why = "bad varint in record body";
	return -1;
}

int hs_rec_decode(const uint8_t **p, const uint8_t *end, struct hs_rec_state *st,
		  struct hs_rec *rec, const char **why)
{
	const uint8_t *q = *p;
	uint64_t len;
	int ret;

	memset(rec, 0, sizeof(*rec));
	if (q >= end) {
		*why = "record past the end of the payload";
		return -1;
	}
	if (*q < HS_TAG_SIZED_FIRST || *q > HS_TAG_SIZED_LAST) {
		ret = hs_rec_decode_fixed(p, end, st, rec, why);
		if (ret == 0)
			*why = "unknown record tag";
		return ret == 1 ? 0 : -1;
	}
	rec->tag = *q++;
	rec->tid = st->tid;
	if (hs_get_varint(&q, end, &len) || len > (uint64_t)(end - q)) {
		*why = "sized record runs past the end of the payload";
		return -1;
	}
	rec->body = q;
	rec->body_len = (size_t)len;
	if (decode_sized(q, q + len, rec, why))
		return -1;
	*p = q + len;
	return 0;
}

/* --- columnar EVENTS chunks ------------------------------------------------ */

/*
 * Copy a record that is not an event (SPAN, NODE, a sized record) from
 * *@p (before @end) to *@dst; 0, or -1 when it is none of those or is
 * malformed.
 */
static int copy_other(uint8_t **dst, const uint8_t **p, const uint8_t *end)
{
	const uint8_t *q = *p, *after;
	unsigned tag = *q;
	uint64_t len;

	*(*dst)++ = *q++;
	if (tag == HS_TAG_SPAN || tag == HS_TAG_NODE) {
		if (hs__copy_varint(dst, &q, end) || hs__copy_varint(dst, &q, end) ||
		    hs__copy_varint(dst, &q, end))
			return -1;
	} else if (tag >= HS_TAG_SIZED_FIRST && tag <= HS_TAG_SIZED_LAST) {
		after = q;
		if (hs_get_varint(&after, end, &len) || len > (uint64_t)(end - after) ||
		    hs__copy_varint(dst, &q, end))
			return -1;
		memcpy(*dst, q, (size_t)len);
		*dst += len;
		q += len;
	} else {
		return -1;
	}
	*p = q;
	return 0;
}

/*
 * Copy one event's fields, after its tag, between the record sequence and
 * the streams: FIELD(stream) copies the next field, for @tag's layout
 * (docs/trace-format.md, "Columnar chunks"). The streams are local pointers (the compiler
 * keeps them in registers), hence the macro. Jumps to @fail on a field that does not fit;
 * does nothing for a tag that is not an event.
 */
#define EVENT_FIELDS(tag, FIELD, T, A, S, K, O)                                          \
	switch (tag) {                                                                   \
	case HS_TAG_MALLOC:                                                              \
	case HS_TAG_CALLOC:                                                              \
	case HS_TAG_VALLOC:                                                              \
	case HS_TAG_PVALLOC:                                                             \
		FIELD(T);                                                                \
		FIELD(A);                                                                \
		FIELD(S);                                                                \
		FIELD(K);                                                                \
		break;                                                                   \
	case HS_TAG_REALLOC:                                                             \
	case HS_TAG_REALLOCARRAY:                                                        \
		FIELD(T);                                                                \
		FIELD(A);                                                                \
		FIELD(S);                                                                \
		FIELD(K);                                                                \
		FIELD(A);                                                                \
		FIELD(O);                                                                \
		break;                                                                   \
	case HS_TAG_POSIX_MEMALIGN:                                                      \
	case HS_TAG_ALIGNED_ALLOC:                                                       \
	case HS_TAG_MEMALIGN:                                                            \
		FIELD(T);                                                                \
		FIELD(A);                                                                \
		FIELD(S);                                                                \
		FIELD(K);                                                                \
		FIELD(O);                                                                \
		break;                                                                   \
	case HS_TAG_FREE:                                                                \
	case HS_TAG_REALLOC_FREE:                                                        \
	case HS_TAG_FREE_TEMPORARY:                                                      \
		FIELD(T);                                                                \
		FIELD(A);                                                                \
		break;                                                                   \
	case HS_TAG_MMAP:                                                                \
		FIELD(T);                                                                \
		FIELD(A);                                                                \
		FIELD(S);                                                                \
		FIELD(O);                                                                \
		FIELD(O);                                                                \
		FIELD(K);                                                                \
		break;                                                                   \
	case HS_TAG_MUNMAP:                                                              \
		FIELD(T);                                                                \
		FIELD(A);                                                                \
		FIELD(S);                                                                \
		break;                                                                   \
	case HS_TAG_MREMAP:                                                              \
		FIELD(T);                                                                \
		FIELD(A);                                                                \
		FIELD(S);                                                                \
		FIELD(K);                                                                \
		FIELD(A);                                                                \
		FIELD(S);                                                                \
		break;                                                                   \
	default:                                                                         \
		break;                                                                   \
	}

/*
 * Bit i set: byte i of the 64 at @p ends a varint (its high bit is clear).
 * Each 8 bytes' high bits are gathered into a byte by one multiplication.
 */
static inline uint64_t varint_ends(const uint8_t *p)
{
	uint64_t m = 0, v;
	unsigned i;

	for (i = 0; i < 8; i++) {
		memcpy(&v, p + 8 * i, 8);
		v = (~v & 0x8080808080808080ull) >> 7;
		m |= ((v * 0x0102040810204080ull) >> 56) << (8 * i);
	}
	return m;
}

/*
 * The end of a columnar or compact chunk: the lengths of @count streams,
 * then those streams and the records' one after them (@base[i] to
 * @end[i], i = 0 .. @count) at @q. Returns the end of what it wrote.
 */
static uint8_t *put_columns(uint8_t *q, uint8_t *const *base, uint8_t *const *end,
			    int count)
{
	int i;

	for (i = 0; i < count; i++)
		q = hs_put_varint(q, (uint64_t)(end[i] - base[i]));
	for (i = 0; i <= count; i++) {
		memcpy(q, base[i], (size_t)(end[i] - base[i]));
		q += end[i] - base[i];
	}
	return q;
}

/* Bytes a window of varint_ends() needs: 64, and 16 for the last copy. */
#define WINDOW (64 + 16)

size_t hs_chunk_split(const uint8_t *in, size_t n, uint8_t *scratch, uint8_t *out)
{
	uint8_t *base[HS_CS__COUNT + 1], *at[HS_CS__COUNT + 1], *q = out;
	uint8_t *t, *a, *sz, *k, *o, *r;
	const uint8_t *p = in, *end = in + n, *wb;
	uint64_t ends, rest;
	unsigned i, off, len, start, last;

	for (i = 0; i <= HS_CS__COUNT; i++)
		base[i] = scratch + i * (n + HS_CS_SLACK);
	t = base[HS_CS_TIME];
	a = base[HS_CS_ADDR];
	sz = base[HS_CS_SIZE];
	k = base[HS_CS_STACK];
	o = base[HS_CS_OTHER];
	r = base[HS_CS_RECORDS];
	/*
	 * The fast part: the input is read as 64-byte windows at wb, whose
	 * varint ends are a bit mask, so that finding a field's length is a
	 * count of zeros, not a load that waits for the last field's; a
	 * field is copied 8 or 16 bytes at once.
	 */
#define TO_STREAM_FAST(x)                                                                \
	do {                                                                             \
		if (__builtin_expect(!rest, 0)) {                                        \
			/* the field runs past the window: one where it starts */        \
			wb += off + start;                                               \
			off = start = 0;                                                 \
			if (end - wb < WINDOW) {                                         \
				/* near the end: this field alone */                     \
				p = wb;                                                  \
				if (hs__copy_varint(&(x), &p, end))                      \
					return 0;                                        \
				wb = p;                                                  \
				ends = 0;                                                \
				break;                                                   \
			}                                                                \
			ends = rest = varint_ends(wb);                                   \
			if (!rest)                                                       \
				return 0; /* longer than a varint */                     \
		}                                                                        \
		last = (unsigned)__builtin_ctzll(rest);                                  \
		len = last + 1 - start;                                                  \
		if (len > HS_VARINT_MAX)                                                 \
			return 0;                                                        \
		memcpy((x), wb + off + start, 8);                                        \
		if (len > 8)                                                             \
			memcpy((x) + 8, wb + off + start + 8, 8);                        \
		(x) += len;                                                              \
		start = last + 1;                                                        \
		rest &= rest - 1;                                                        \
	} while (0)
	wb = p;
	off = 0;
	ends = 0;
	while (end - (wb + off) >= WINDOW) {
		unsigned tag;

		if (off >= 48) {
			wb += off;
			off = 0;
			ends = varint_ends(wb);
		} else if (!off) {
			ends = varint_ends(wb);
		}
		tag = wb[off];
		if (!hs__tag_is_event(tag)) {
			p = wb + off;
			if (copy_other(&r, &p, end))
				return 0;
			wb = p;
			off = 0;
			continue;
		}
		*r++ = (uint8_t)tag;
		off++;
		/*
		 * The fields' ends are the next set bits of rest: each is a
		 * count of zeros, and the next rest clears one bit, so no
		 * field waits for the one before.
		 */
		rest = ends >> off;
		start = 0;
		EVENT_FIELDS(tag, TO_STREAM_FAST, t, a, sz, k, o)
		off += start;
	}
	/* the last bytes, a field at a time */
	p = wb + off;
#undef TO_STREAM_FAST
#define TO_STREAM(x)                                                                     \
	if (hs__copy_varint(&(x), &p, end))                                              \
	return 0
	while (p < end) {
		unsigned tag = *p;

		if (!hs__tag_is_event(tag)) {
			if (copy_other(&r, &p, end))
				return 0;
			continue;
		}
		*r++ = *p++;
		EVENT_FIELDS(tag, TO_STREAM, t, a, sz, k, o)
	}
#undef TO_STREAM
	at[HS_CS_TIME] = t;
	at[HS_CS_ADDR] = a;
	at[HS_CS_SIZE] = sz;
	at[HS_CS_STACK] = k;
	at[HS_CS_OTHER] = o;
	at[HS_CS_RECORDS] = r;
	q = put_columns(q, base, at, HS_CS__COUNT);
	return (size_t)(q - out);
}

int hs_chunk_join(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *out_len,
		  const char **why)
{
	const uint8_t *q = in, *end = in + n, *s[HS_CS__COUNT + 1], *e[HS_CS__COUNT + 1];
	const uint8_t *t, *a, *sz, *k, *o, *r;
	uint64_t len[HS_CS__COUNT];
	uint8_t *d = out;
	unsigned i;

	/* every byte written is one read from a stream: @n is enough */
	if (cap < n + HS_CS_SLACK) {
		*why = "no room for the columnar chunk's records";
		return -1;
	}
	for (i = 0; i < HS_CS__COUNT; i++) {
		if (hs_get_varint(&q, end, &len[i])) {
			*why = "bad column lengths";
			return -1;
		}
	}
	for (i = 0; i < HS_CS__COUNT; i++) {
		if (len[i] > (uint64_t)(end - q)) {
			*why = "a column runs past the end of the payload";
			return -1;
		}
		s[i] = q;
		q += len[i];
		e[i] = q;
	}
	t = s[HS_CS_TIME];
	a = s[HS_CS_ADDR];
	sz = s[HS_CS_SIZE];
	k = s[HS_CS_STACK];
	o = s[HS_CS_OTHER];
	r = q;
#define FROM_STREAM(x)                                                                   \
	if (hs__copy_varint(&d, &(x), x##_end))                                          \
	goto short_column
	{
		const uint8_t *t_end = e[HS_CS_TIME], *a_end = e[HS_CS_ADDR],
			      *sz_end = e[HS_CS_SIZE], *k_end = e[HS_CS_STACK],
			      *o_end = e[HS_CS_OTHER];

		while (r < end) {
			unsigned tag = *r;

			if (!hs__tag_is_event(tag)) {
				if (copy_other(&d, &r, end)) {
					*why = "unknown or malformed record in a "
					       "columnar chunk";
					return -1;
				}
				continue;
			}
			*d++ = *r++;
			EVENT_FIELDS(tag, FROM_STREAM, t, a, sz, k, o)
		}
		if (t != t_end || a != a_end || sz != sz_end || k != k_end ||
		    o != o_end) {
			*why = "a column holds more than its events";
			return -1;
		}
	}
#undef FROM_STREAM
	*out_len = (size_t)(d - out);
	return 0;
short_column:
	*why = "an event's field runs past the end of its column";
	return -1;
}

/* --- compact EVENTS chunks: the encoder ---------------------------------- */

/*
 * hs_get_varint() for the encoder's hot fields (times, address deltas,
 * sizes: 1 to 4 bytes): with 10 bytes to read, the first three bytes are
 * taken unrolled, without the loop's bounds and overflow checks on each
 * byte (half its instructions on rand_loop's 2- and 3-byte fields).
 * Longer varints and the end of the buffer go to hs_get_varint(): the
 * same values, the same errors.
 */
static inline int cc_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v;

	if (__builtin_expect(end - q >= HS_VARINT_MAX, 1)) {
		v = q[0];
		if (v < 0x80) {
			*p = q + 1;
			*out = v;
			return 0;
		}
		v = (v & 0x7f) | (uint64_t)q[1] << 7;
		if (q[1] < 0x80) {
			*p = q + 2;
			*out = v;
			return 0;
		}
		v = (v & 0x3fff) | (uint64_t)q[2] << 14;
		if (q[2] < 0x80) {
			*p = q + 3;
			*out = v;
			return 0;
		}
	}
	return hs_get_varint(p, end, out);
}

static inline int cc_get_svarint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	uint64_t v;

	if (cc_get_varint(p, end, &v))
		return -1;
	*out = hs_unzigzag(v);
	return 0;
}

/* Forget every thread and address: a new chunk (or a wrapped generation). */
static void cc_new_chunk(struct hs_compact_enc *enc)
{
	if (++enc->gen >= HS_CC_GEN_LIMIT) {
		memset(enc->threads, 0, sizeof(enc->threads));
		memset(enc->addrs, 0, sizeof(enc->addrs));
		enc->gen = 1;
	}
	enc->nr_threads = 0;
	enc->nr_addrs = 0;
}

static inline uint64_t cc_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* The owner part of a mark: the chunk's generation and thread @t's slot. */
static inline uint64_t cc_owner(const struct hs_compact_enc *enc,
				const struct hs_cc_thread *t)
{
	return (uint64_t)enc->gen << 12 | (uint64_t)(t - enc->threads);
}

/* The slot of thread @tid in this chunk, or NULL when the table is full. */
static struct hs_cc_thread *cc_thread(struct hs_compact_enc *enc, uint64_t tid)
{
	uint32_t i = (uint32_t)cc_hash(tid) & (HS_CC_THREADS - 1);

	for (;; i = (i + 1) & (HS_CC_THREADS - 1)) {
		struct hs_cc_thread *t = &enc->threads[i];

		if (t->gen != enc->gen) {
			if (enc->nr_threads >= HS_CC_THREADS / 2)
				return NULL;
			t->row = enc->nr_threads++;
			t->gen = enc->gen;
			t->owner = cc_owner(enc, t);
			t->home_salt = (uint64_t)(t - enc->threads) << 44;
			t->tid = tid;
			t->allocs = t->frees = 0;
			t->predict = 0;
			memset(enc->class_frees[t->row], 0, sizeof(enc->class_frees[0]));
			return t;
		}
		if (t->tid == tid)
			return t;
	}
}

/* A mark's parts (struct hs_cc_addr). */
#define CC_NUM_MASK ((1ull << HS_CC_NUM_BITS) - 1)
#define CC_CLASS_SHIFT (2 * HS_CC_NUM_BITS)
#define CC_CLASS_MASK ((1ull << HS_CC_CLASS_BITS) - 1)
#define CC_OWNER_SHIFT (CC_CLASS_SHIFT + HS_CC_CLASS_BITS)

static inline uint32_t cc_allocated(const struct hs_cc_addr *a)
{
	return (uint32_t)(a->mark >> HS_CC_NUM_BITS & CC_NUM_MASK);
}

static inline uint32_t cc_freed(const struct hs_cc_addr *a)
{
	return (uint32_t)(a->mark & CC_NUM_MASK);
}

static inline void cc_set_allocated(struct hs_cc_addr *a, uint32_t num)
{
	uint64_t keep = a->mark & ~(CC_NUM_MASK << HS_CC_NUM_BITS);

	a->mark = keep | (uint64_t)num << HS_CC_NUM_BITS;
}

static inline void cc_set_freed(struct hs_cc_addr *a, uint32_t num)
{
	a->mark = (a->mark & ~CC_NUM_MASK) | num;
}

/* The size class of the latest allocation at @a (4.0 payloads). */
static inline unsigned cc_class(const struct hs_cc_addr *a)
{
	return (unsigned)(a->mark >> CC_CLASS_SHIFT & CC_CLASS_MASK);
}

/*
 * A free (4.0) at @a: of its allocation's class where it names it (@ref
 * not 0), else of no class; numbered among the thread's frees of that
 * class (@class_frees).
 */
static inline void cc_set_free(struct hs_cc_addr *a, uint32_t *class_frees, uint64_t ref)
{
	unsigned cls = ref ? cc_class(a) : HS_CC_UNCLASSED;

	a->mark = (a->mark >> CC_OWNER_SHIFT << CC_OWNER_SHIFT) |
		  (a->mark & CC_NUM_MASK << HS_CC_NUM_BITS) |
		  (uint64_t)cls << CC_CLASS_SHIFT | ++class_frees[cls];
}

/* A new allocation at @a: its number and class, and no free since. */
static inline void cc_set_block(struct hs_cc_addr *a, uint32_t num, unsigned cls)
{
	a->mark = (a->mark >> CC_OWNER_SHIFT << CC_OWNER_SHIFT) |
		  (uint64_t)cls << CC_CLASS_SHIFT | (uint64_t)num << HS_CC_NUM_BITS;
}

/*
 * Where the search for @addr starts, for the thread whose slot gives
 * @salt (its hs_cc_thread.home_salt: the slot shifted left 44). Addresses that
 * a program uses one after the other are near each other: the low bits (a
 * 2 KiB span of addresses, 32 bytes a slot: glibc's blocks start 32 bytes
 * apart or more, so that two do not share a slot) pick a slot within a
 * 64-slot block of the table, so that they share cache lines, and a hash
 * of the rest with the slot picks the block. Not the chunk's generation:
 * an address then has the same home chunk after chunk, and the lines a
 * program's heap maps to stay in the cache (the lookup missed it on most
 * events of rand_loop when its home moved with every chunk).
 */
static inline uint32_t cc_home(uint64_t addr, uint64_t salt)
{
	uint64_t h = ((addr >> 11) ^ salt) * 0x9e3779b97f4a7c15ull;

	return ((uint32_t)(h >> 40) << 6 | (uint32_t)(addr >> 5 & 63)) &
	       (HS_CC_TABLE - 1);
}

/*
 * The entry of @addr in thread @t's history: the one that holds it, or a
 * new one (NULL: not there, and no room to add it).
 */
static struct hs_cc_addr *cc_addr(struct hs_compact_enc *enc, struct hs_cc_thread *t,
				  uint64_t addr)
{
	uint64_t owner = t->owner;
	uint32_t i = cc_home(addr, t->home_salt);

	for (;; i = (i + 1) & (HS_CC_TABLE - 1)) {
		struct hs_cc_addr *a = &enc->addrs[i];

		if (a->mark >> (CC_OWNER_SHIFT + 12) != enc->gen) {
			if (enc->nr_addrs >= HS_CC_TABLE / 2)
				return NULL;
			enc->nr_addrs++;
			a->addr = addr;
			a->mark = owner << CC_OWNER_SHIFT;
			return a;
		}
		if (a->addr == addr && a->mark >> CC_OWNER_SHIFT == owner)
			return a;
	}
}

/*
 * How far back, in the thread's allocations (or frees) of this chunk, the
 * one stamped @mark is, @now having been made: 1 for the latest; 0 for
 * none (@mark 0: not made in this chunk).
 */
static inline uint64_t cc_back(uint32_t now, uint32_t mark)
{
	return mark ? (uint64_t)(now - (mark - 1)) : 0;
}

/*
 * The encoder of both compact payloads: @classes (a constant where it is
 * inlined) selects 4.0's, whose allocations refer to the frees of their
 * size class and whose heap sizes are split in two streams.
 */
static inline __attribute__((always_inline)) size_t
compact(const uint8_t *in, size_t n, struct hs_compact_enc *enc, uint8_t *scratch,
	uint8_t *out, size_t cap, const int classes, const int predict)
{
	const unsigned count = predict	 ? HS_CC__COUNT
			       : classes ? HS_CC_COUNT_4_0
					 : HS_CC_COUNT_3_0;
	const int split = classes && enc->split_sizes;
	uint8_t *base[HS_CC__COUNT + 1], *s[HS_CC__COUNT + 1], *q = out;
	const uint8_t *p = in, *end = in + n;
	struct hs_cc_thread *thread = NULL;
	uint32_t *class_frees = NULL; /* the thread's frees per size class */
	uint64_t last = 0, total = 0;
	uint64_t node_id = 0, node_addr = 0; /* the last NODE's (5.0) */
	/* a fixed stride where the caller gives one: each stream then
	 * writes the same pages chunk after chunk */
	size_t room =
	    enc->scratch_room >= n + HS_CS_SLACK ? enc->scratch_room : n + HS_CS_SLACK;
	unsigned i;

	cc_new_chunk(enc);
	for (i = 0; i <= count; i++) {
		/* the references may take more than the records (2 per event);
		 * base[count] is the RECORD stream */
		base[i] = scratch + (i + (i > HS_CC_REF)) * room;
		s[i] = base[i];
	}
	if (n > HS_CC_RECORDS_MAX)
		return 0; /* more allocations or frees than a mark counts */
	thread = cc_thread(enc, 0);
	class_frees = enc->class_frees[thread->row];
	/* Copy the next field to stream x; decode an address delta into d. */
#define CC_COPY(x)                                                                       \
	do {                                                                             \
		if (hs__copy_varint(&s[x], &p, end))                                     \
			return 0;                                                        \
	} while (0)
#define CC_DELTA(d)                                                                      \
	do {                                                                             \
		next = p;                                                                \
		if (cc_get_svarint(&next, end, &(d)))                                    \
			return 0;                                                        \
	} while (0)
	/*
	 * Write reference r, then the address delta only where r is 0. In a
	 * 4.0 payload (a free's or an old block's r) its low 7 bits go to
	 * a stream of their own: Huffman codes them, near uniform, apart
	 * from the rest.
	 */
#define CC_REF_OR_ADDR(r)                                                                \
	do {                                                                             \
		if (classes) {                                                           \
			s[HS_CC_REF] = hs_put_varint(s[HS_CC_REF], (r) >> 7);            \
			*s[HS_CC_REF_LOW]++ = (uint8_t)((r)&127);                        \
		} else {                                                                 \
			s[HS_CC_REF] = hs_put_varint(s[HS_CC_REF], (r));                 \
		}                                                                        \
		if (r)                                                                   \
			p = next;                                                        \
		else                                                                     \
			CC_COPY(HS_CC_ADDR);                                             \
	} while (0)
	while (p < end) {
		unsigned tag = *p, cls = 0;
		const uint8_t *next; /* after the address delta */
		struct hs_cc_addr *entry, *old_entry;
		uint64_t addr, ref, size = 0;
		int64_t d;

		if (!hs__tag_is_event(tag)) {
			if (tag == HS_TAG_SPAN) {
				const uint8_t *f = p + 1;
				uint64_t tid, ticks;

				if (hs_get_varint(&f, end, &tid) ||
				    hs_get_varint(&f, end, &ticks) ||
				    hs_get_varint(&f, end, &last))
					return 0;
				thread = cc_thread(enc, tid);
				if (thread)
					class_frees = enc->class_frees[thread->row];
			} else if (tag == HS_TAG_NODE && predict) {
				/* 5.0: the tag alone, its fields as deltas */
				const uint8_t *f = p + 1;
				uint64_t id, parent, at;
				uint8_t shortest[3 * HS_VARINT_MAX], *e = shortest;

				if (hs_get_varint(&f, end, &id) ||
				    hs_get_varint(&f, end, &parent) ||
				    hs_get_varint(&f, end, &at))
					return 0;
				/* the reader writes the fields back shortest */
				e = hs_put_varint(e, id);
				e = hs_put_varint(e, parent);
				e = hs_put_varint(e, at);
				if (e - shortest != f - (p + 1))
					return 0;
				*s[count]++ = HS_TAG_NODE;
				s[HS_CC_NODE_ID] = hs_put_svarint(
				    s[HS_CC_NODE_ID], (int64_t)(id - node_id - 1));
				s[HS_CC_NODE_PARENT] = hs_put_svarint(
				    s[HS_CC_NODE_PARENT], (int64_t)(id - parent));
				s[HS_CC_NODE_ADDR] = hs_put_svarint(
				    s[HS_CC_NODE_ADDR], (int64_t)(at - node_addr));
				node_id = id;
				node_addr = at;
				p = f;
				continue;
			}
			if (copy_other(&s[count], &p, end))
				return 0;
			continue;
		}
		*s[count]++ = *p++;
		CC_COPY(HS_CC_TIME);
		CC_DELTA(d);
		addr = last + (uint64_t)d;
		switch (tag) {
		case HS_TAG_FREE:
		case HS_TAG_REALLOC_FREE:
		case HS_TAG_FREE_TEMPORARY:
			entry = thread ? cc_addr(enc, thread, addr) : NULL;
			ref = entry ? cc_back(thread->allocs, cc_allocated(entry)) : 0;
			CC_REF_OR_ADDR(ref);
			if (classes) {
				/* a free is of its allocation's class, when it
				 * names it; a literal one is of none */
				if (entry)
					cc_set_free(entry, class_frees, ref);
				else if (thread)
					class_frees[HS_CC_UNCLASSED]++;
			} else {
				if (thread && entry)
					cc_set_freed(entry, thread->frees + 1);
				if (thread)
					thread->frees++;
			}
			break;
		case HS_TAG_MMAP:
		case HS_TAG_MUNMAP:
		case HS_TAG_MREMAP:
			CC_COPY(HS_CC_ADDR);
			CC_COPY(HS_CC_SIZE);
			if (tag == HS_TAG_MMAP) {
				CC_COPY(HS_CC_OTHER);
				CC_COPY(HS_CC_OTHER);
				CC_COPY(HS_CC_STACK);
			} else if (tag == HS_TAG_MREMAP) {
				CC_COPY(HS_CC_STACK);
				CC_COPY(HS_CC_ADDR);
				CC_COPY(HS_CC_SIZE);
			}
			break;
		default: /* the allocations */
			entry = thread ? cc_addr(enc, thread, addr) : NULL;
			if (classes) {
				/* the size (after the address) picks the class */
				const uint8_t *f = next;
				uint64_t high;

				if (cc_get_varint(&f, end, &size))
					return 0;
				high = hs_cc_size_high(size);
				cls = hs_cc_class(high);
				/* a free of its class, else one of no class */
				ref = entry && cc_class(entry) == cls
					  ? cc_back(class_frees[cls], cc_freed(entry))
					  : 0;
				s[HS_CC_REF_ALLOC] =
				    hs_put_varint(s[HS_CC_REF_ALLOC], ref);
				if (!ref && entry && cc_freed(entry)) {
					/* a free of another class, or of none */
					unsigned other = cc_class(entry);

					*s[HS_CC_REF_CLASS]++ = (uint8_t)(other + 1);
					s[HS_CC_REF_OTHER] = hs_put_varint(
					    s[HS_CC_REF_OTHER],
					    cc_back(class_frees[other], cc_freed(entry)));
				} else if (!ref && predict) {
					/*
					 * 5.0: from where the thread's last
					 * new block ended when that is
					 * shorter (or exact), else as 4.0;
					 * the reader writes the delta back
					 * shortest
					 */
					uint8_t shortest[HS_VARINT_MAX];
					int64_t dp;

					if (!thread)
						return 0;
					dp = (int64_t)(addr - thread->predict);
					if (!dp ||
					    hs_put_svarint(shortest, dp) - shortest <
						next - p) {
						if (next - p !=
						    hs_put_svarint(shortest, d) -
							shortest)
							return 0;
						*s[HS_CC_REF_CLASS]++ = HS_CC_REF_NEW;
						s[HS_CC_ADDR_NEW] =
						    hs_put_svarint(s[HS_CC_ADDR_NEW], dp);
						p = next;
					} else {
						*s[HS_CC_REF_CLASS]++ = 0;
						CC_COPY(HS_CC_ADDR);
					}
					thread->predict = hs_cc_predict(addr, size);
				} else if (!ref) {
					*s[HS_CC_REF_CLASS]++ = 0;
					CC_COPY(HS_CC_ADDR);
				}
				if (split) {
					uint8_t shortest[HS_VARINT_MAX];

					/* the reader writes the size back shortest */
					if (f - next !=
					    hs_put_varint(shortest, size) - shortest)
						return 0;
					p = f;
					s[HS_CC_SIZE] =
					    hs_put_varint(s[HS_CC_SIZE], high);
					*s[HS_CC_SIZE_LOW]++ = (uint8_t)((size + 7) & 15);
				} else {
					/* the bytes parsed above, as they are */
					memcpy(s[HS_CC_SIZE], next, (size_t)(f - next));
					s[HS_CC_SIZE] += f - next;
					p = f;
				}
			} else {
				ref = entry ? cc_back(thread->frees, cc_freed(entry)) : 0;
				CC_REF_OR_ADDR(ref);
				CC_COPY(HS_CC_SIZE);
			}
			CC_COPY(HS_CC_STACK);
			if (hs_tag_is_realloc(tag)) {
				uint64_t old;

				CC_DELTA(d);
				old = addr + (uint64_t)d;
				/* an in-place realloc's 0 is the shorter */
				old_entry =
				    thread && old ? cc_addr(enc, thread, old) : NULL;
				ref = d && old_entry ? cc_back(thread->allocs,
							       cc_allocated(old_entry))
						     : 0;
				CC_REF_OR_ADDR(ref);
				CC_COPY(HS_CC_OTHER);
				if (classes) {
					if (old_entry)
						cc_set_free(old_entry, class_frees, ref);
					else if (thread && old)
						class_frees[HS_CC_UNCLASSED]++;
				} else {
					if (old_entry)
						cc_set_freed(old_entry,
							     thread->frees + 1);
					if (thread && old)
						thread->frees++;
				}
			} else if (hs_tag_has_align(tag)) {
				CC_COPY(HS_CC_OTHER);
			}
			if (entry) {
				if (classes)
					cc_set_block(entry, thread->allocs + 1, cls);
				else
					cc_set_allocated(entry, thread->allocs + 1);
			}
			if (thread)
				thread->allocs++;
			break;
		}
		last = addr;
	}
#undef CC_COPY
#undef CC_DELTA
#undef CC_REF_OR_ADDR
	for (i = 0; i <= count; i++)
		total += (uint64_t)(s[i] - base[i]);
	if (total + HS_CC_HEADER_MAX > cap)
		return 0;
	q = hs_put_varint(q, n);
	q = put_columns(q, base, s, (int)count);
	return (size_t)(q - out);
}

size_t hs_chunk_compact_5_0(const uint8_t *in, size_t n, struct hs_compact_enc *enc,
			    uint8_t *scratch, uint8_t *out, size_t cap)
{
	return compact(in, n, enc, scratch, out, cap, 1, 1);
}

size_t hs_chunk_compact(const uint8_t *in, size_t n, struct hs_compact_enc *enc,
			uint8_t *scratch, uint8_t *out, size_t cap)
{
	return compact(in, n, enc, scratch, out, cap, 1, 0);
}

size_t hs_chunk_compact_3_0(const uint8_t *in, size_t n, struct hs_compact_enc *enc,
			    uint8_t *scratch, uint8_t *out, size_t cap)
{
	return compact(in, n, enc, scratch, out, cap, 0, 0);
}
