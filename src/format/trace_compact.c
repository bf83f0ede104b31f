/*
 * trace_compact - EVENTS payloads back into records: columnar ones
 * through hs_chunk_join(), compact ones here (docs/trace-format.md,
 * "Compact chunks"). See trace_compact.h.
 */
#include "format/trace_compact.h"
#include "format/trace_prefetch.h"
#include "format/trace_record.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(HS_CU_CLASSES == HS_CC_CLASSES + 1, "a 4.0 payload's size classes");

/* Room past the records that one event may write before it is checked
 * (a tag and six fields), and hs__copy_varint()'s slack. */
#define EVENT_ROOM (1 + 6 * HS_VARINT_MAX + HS_CS_SLACK)

/* The bytes of @v as a varint. */
static inline size_t varint_len(uint64_t v)
{
	return v < 0x80 ? 1 : (size_t)(63 - __builtin_clzll(v)) / 7 + 1;
}

/* Room for one more event in @ce; 0 or -ENOMEM. */
static inline int direct_room(struct hs__chunk_events *ce)
{
	if (__builtin_expect(ce->nr_ev == ce->alloc_ev, 0) &&
	    HS_GROW(ce->ev, ce->nr_ev + 1, ce->alloc_ev))
		return -ENOMEM;
	return 0;
}

/* The thread @tid in this chunk, added if new; NULL: out of memory. */
static struct hs_cu_thread *thread_of(struct hs_chunk_unpack *u, uint64_t tid)
{
	size_t mask, i, k;
	struct hs_cu_thread *t;

	if (2 * (u->nr_threads + 1) > u->nr_slots) {
		size_t n = u->nr_slots ? 2 * u->nr_slots : 16;
		uint32_t *s = hs_calloc(n, sizeof(*s));

		if (!s)
			return NULL;
		hs_free(u->slots);
		u->slots = s;
		u->nr_slots = n;
		for (k = 0; k < u->nr_threads; k++) {
			for (i = u->threads[k].tid * 0x9e3779b97f4a7c15ull >> 32 &
				 (n - 1);
			     s[i]; i = (i + 1) & (n - 1))
				;
			s[i] = (uint32_t)k + 1;
		}
	}
	mask = u->nr_slots - 1;
	for (i = tid * 0x9e3779b97f4a7c15ull >> 32 & mask; u->slots[i];
	     i = (i + 1) & mask)
		if (u->threads[u->slots[i] - 1].tid == tid)
			return &u->threads[u->slots[i] - 1];
	if (HS_GROW(u->threads, u->nr_threads + 1, u->alloc_threads))
		return NULL;
	t = &u->threads[u->nr_threads];
	if (u->nr_threads == u->used_threads) {
		/* not used before: no histories yet */
		memset(t, 0, sizeof(*t));
		u->used_threads++;
	}
	u->slots[i] = (uint32_t)++u->nr_threads;
	t->tid = tid;
	t->nr_allocs = t->nr_frees = 0;
	t->predict = 0;
	for (k = 0; k < HS_CU_CLASSES; k++)
		t->class_frees[k].nr = 0;
	return t;
}

/* Append @addr to a history; 0 or -ENOMEM. */
static inline int remember(uint64_t **arr, size_t *nr, size_t *alloc, uint64_t addr)
{
	if (__builtin_expect(*nr == *alloc, 0) && HS_GROW(*arr, *nr + 1, *alloc))
		return -ENOMEM;
	(*arr)[(*nr)++] = addr;
	return 0;
}

/* Append an allocation at @addr of size class @cls (4.0); 0 or -ENOMEM. */
static inline int remember_block(struct hs_cu_thread *t, uint64_t addr, unsigned cls)
{
	if (__builtin_expect(t->nr_allocs == t->alloc_alloc_class, 0) &&
	    HS_GROW(t->alloc_class, t->nr_allocs + 1, t->alloc_alloc_class))
		return -ENOMEM;
	t->alloc_class[t->nr_allocs] = (uint8_t)cls;
	return remember(&t->allocs, &t->nr_allocs, &t->alloc_allocs, addr);
}

/*
 * A free at @addr (4.0) that named the thread's allocation number
 * @block: a free of that allocation's class (SIZE_MAX: literal, of no
 * class); 0 or -ENOMEM.
 */
static inline int remember_free(struct hs_cu_thread *t, uint64_t addr, size_t block)
{
	struct hs_cu_history *h =
	    &t->class_frees[block == SIZE_MAX ? HS_CC_UNCLASSED : t->alloc_class[block]];

	return remember(&h->addr, &h->nr, &h->alloc, addr);
}

/* Forget the threads of the last chunk (their histories' memory is kept). */
static void new_chunk(struct hs_chunk_unpack *u)
{
	if (u->nr_threads)
		memset(u->slots, 0, u->nr_slots * sizeof(*u->slots));
	u->nr_threads = 0;
}

/*
 * The records of compact payload [@in, @in + @n) into u->out: 3.0's, or
 * with @classes 4.0's (allocations refer to the frees of their size
 * class; a heap size is its class and its low bits), with @predict too
 * 5.0's (a literal allocation's address from the thread's prediction,
 * NODE records in streams).
 */
static inline __attribute__((always_inline)) int
expand(struct hs_chunk_unpack *u, const uint8_t *in, size_t n, size_t *out_len,
       const char **why, const int classes, const int predict,
       struct hs__chunk_events *const ce, size_t max_events)
{
	const unsigned count = predict	 ? HS_CC__COUNT
			       : classes ? HS_CC_COUNT_4_0
					 : HS_CC_COUNT_3_0;
	const uint8_t *q = in, *end = in + n, *s[HS_CC__COUNT], *e[HS_CC__COUNT], *r;
	uint64_t len, total, last = 0, ref, addr, v, high, low, other, size = 0;
	uint64_t node_id = 0, node_addr = 0; /* the last NODE's (5.0) */
	int split;
	struct hs_cu_thread *t;
	uint8_t *d, *dend;
	unsigned i, cls;
	/*
	 * With @ce (hs_chunk_unpack_events()): the MALLOC, CALLOC and FREE
	 * records (@piece: this one) go to @ce as events, not written, the
	 * bytes they would take counted in @skip (so that lengths are
	 * checked as for the records), in pieces of one thread's events
	 * between the records written; @pc: the piece open (SIZE_MAX: none),
	 * @ticks: the records' time, @all: every event of the chunk is in a
	 * piece
	 */
	size_t skip = 0, pc = SIZE_MAX;
	uint64_t ticks = 0, stack = 0;
	int piece = 0, all = 1;

	if (hs_get_varint(&q, end, &total)) {
		*why = "bad length of a compact chunk's records";
		return -1;
	}
	if (total > HS_CHUNK_MAX) {
		*why = "a compact chunk's records are longer than a chunk";
		return -1;
	}
	for (i = 0; i < count; i++) {
		if (hs_get_varint(&q, end, &len)) {
			*why = "bad column lengths";
			return -1;
		}
		s[i] = (const uint8_t *)(uintptr_t)len; /* placed below */
	}
	for (i = 0; i < count; i++) {
		len = (uint64_t)(uintptr_t)s[i];
		if (len > (uint64_t)(end - q)) {
			*why = "a column runs past the end of the payload";
			return -1;
		}
		s[i] = q;
		q += len;
		e[i] = q;
	}
	r = q;
	/* a 4.0 payload's heap sizes are split where SIZE_LOW holds bytes */
	split = classes && s[HS_CC_SIZE_LOW] != e[HS_CC_SIZE_LOW];
	if (HS_GROW(u->out, (size_t)total + EVENT_ROOM, u->alloc_out))
		return -ENOMEM;
	new_chunk(u);
	d = u->out;
	dend = d + total;
	if (ce) {
		ce->nr_ev = 0;
		ce->nr_pieces = 0;
		ce->complete = 0;
	}
	if (!(t = thread_of(u, 0)))
		return -ENOMEM;
		/* the next field of stream x, copied as it is */
#define COPY(x)                                                                          \
	do {                                                                             \
		if (ce && piece) {                                                       \
			const uint8_t *from_ = s[x];                                     \
			if (hs_get_varint(&s[x], e[x], &v))                              \
				goto short_column;                                       \
			skip += (size_t)(s[x] - from_);                                  \
		} else if (hs__copy_varint(&d, &s[x], e[x])) {                           \
			goto short_column;                                               \
		}                                                                        \
	} while (0)
		/* the next field of stream x, copied, its value in v */
#define COPY_VALUE(x)                                                                    \
	do {                                                                             \
		const uint8_t *at_ = s[x];                                               \
		if (hs_get_varint(&at_, e[x], &v))                                       \
			goto short_column;                                               \
		if (ce && piece) {                                                       \
			skip += (size_t)(at_ - s[x]);                                    \
			s[x] = at_;                                                      \
		} else {                                                                 \
			COPY(x);                                                         \
		}                                                                        \
	} while (0)
		/* a field the record holds as varint @val, signed (PUT_S) or not */
#define PUT_U(val)                                                                       \
	do {                                                                             \
		if (ce && piece)                                                         \
			skip += varint_len(val);                                         \
		else                                                                     \
			d = hs_put_varint(d, (val));                                     \
	} while (0)
#define PUT_S(val) PUT_U(hs_zigzag(val))
#define GET(x, val)                                                                      \
	do {                                                                             \
		if (hs_get_varint(&s[x], e[x], &(val)))                                  \
			goto short_column;                                               \
	} while (0)
		/* a free's (or an old block's) reference: 4.0 keeps its low 7 bits apart
		 */
#define GET_REF(val)                                                                     \
	do {                                                                             \
		GET(HS_CC_REF, val);                                                     \
		if (classes) {                                                           \
			GET(HS_CC_REF_LOW, low);                                         \
			if ((val) > (UINT64_MAX >> 7) || low > 127)                      \
				goto bad_ref;                                            \
			(val) = (val) << 7 | low;                                        \
		}                                                                        \
	} while (0)
		/* the address @ref names: the literal one's delta from @base (ref 0),
		 * else entry @ref from the end of @hist (@n entries), written as
		 * its delta from @base */
#define ADDR_OF_REF(out, base, hist, n)                                                  \
	do {                                                                             \
		if (!ref) {                                                              \
			COPY_VALUE(HS_CC_ADDR);                                          \
			(out) = (base) + (uint64_t)hs_unzigzag(v);                       \
		} else if (ref <= (n)) {                                                 \
			(out) = (hist)[(n)-ref];                                         \
			PUT_S((int64_t)((out) - (base)));                                \
		} else {                                                                 \
			goto bad_ref;                                                    \
		}                                                                        \
	} while (0)
	while (r < end) {
		unsigned tag = *r;

		if (ce ? (size_t)(d - u->out) + skip > (size_t)total : d > dend)
			goto too_long;
		if (ce && hs__tag_is_event(tag)) {
			/* a piece's event when it is one of those, in time */
			const uint8_t *at = s[HS_CC_TIME];
			uint64_t now;

			if (hs_get_varint(&at, e[HS_CC_TIME], &v))
				goto short_column;
			now = ticks + (uint64_t)hs_unzigzag(v);
			piece = (tag == HS_TAG_MALLOC || tag == HS_TAG_FREE ||
				 tag == HS_TAG_CALLOC) &&
				now <= INT64_MAX && ce->nr_ev < max_events;
			ticks = now;
			if (!piece) {
				pc = SIZE_MAX;
				all = 0;
			}
		} else if (ce) {
			pc = SIZE_MAX; /* a record is written: the piece ends */
		}
		if (tag == HS_TAG_NODE && predict) {
			/* 5.0: the fields are deltas in streams of their own
			 * (u->out has room past the records for one) */
			uint64_t parent;

			GET(HS_CC_NODE_ID, v);
			node_id += (uint64_t)hs_unzigzag(v) + 1;
			GET(HS_CC_NODE_PARENT, parent);
			parent = node_id - (uint64_t)hs_unzigzag(parent);
			GET(HS_CC_NODE_ADDR, v);
			node_addr += (uint64_t)hs_unzigzag(v);
			*d++ = *r++;
			d = hs_put_varint(d, node_id);
			d = hs_put_varint(d, parent);
			d = hs_put_varint(d, node_addr);
			continue;
		}
		if (!hs__tag_is_event(tag)) {
			const uint8_t *f = r + 1;
			uint64_t tid, ticks_;

			if (tag == HS_TAG_SPAN || tag == HS_TAG_NODE) {
				if (hs_get_varint(&f, end, &tid) ||
				    hs_get_varint(&f, end, &ticks_) ||
				    hs_get_varint(&f, end, &v))
					goto bad_record;
				if (tag == HS_TAG_SPAN) {
					if (!(t = thread_of(u, tid)))
						return -ENOMEM;
					last = v;
					ticks = ticks_;
				}
			} else if (tag >= HS_TAG_SIZED_FIRST &&
				   tag <= HS_TAG_SIZED_LAST) {
				if (hs_get_varint(&f, end, &len) ||
				    len > (uint64_t)(end - f))
					goto bad_record;
				f += len;
			} else {
				goto bad_record;
			}
			if ((size_t)(f - r) > (size_t)(dend - d))
				goto too_long;
			memcpy(d, r, (size_t)(f - r));
			d += f - r;
			r = f;
			continue;
		}
		if (ce && piece) {
			skip++;
			r++;
		} else {
			*d++ = *r++;
		}
		COPY(HS_CC_TIME);
		switch (tag) {
		case HS_TAG_MMAP:
		case HS_TAG_MUNMAP:
		case HS_TAG_MREMAP:
			COPY_VALUE(HS_CC_ADDR);
			last += (uint64_t)hs_unzigzag(v);
			COPY(HS_CC_SIZE);
			if (tag == HS_TAG_MMAP) {
				COPY(HS_CC_OTHER);
				COPY(HS_CC_OTHER);
				COPY(HS_CC_STACK);
			} else if (tag == HS_TAG_MREMAP) {
				COPY(HS_CC_STACK);
				COPY(HS_CC_ADDR);
				COPY(HS_CC_SIZE);
			}
			continue;
		case HS_TAG_FREE:
		case HS_TAG_REALLOC_FREE:
		case HS_TAG_FREE_TEMPORARY:
			GET_REF(ref);
			ADDR_OF_REF(addr, last, t->allocs, t->nr_allocs);
			if (classes) {
				/* of its allocation's class; a literal one of none */
				if (remember_free(t, addr,
						  ref ? t->nr_allocs - ref : SIZE_MAX))
					return -ENOMEM;
			} else if (remember(&t->frees, &t->nr_frees, &t->alloc_frees,
					    addr)) {
				return -ENOMEM;
			}
			last = addr;
			goto event_done;
		default: /* the allocations */
			break;
		}
		if (classes) {
			/* the size first: its class says whose frees ref counts */
			struct hs_cu_history *h;

			if (split) {
				GET(HS_CC_SIZE, high);
				GET(HS_CC_SIZE_LOW, low);
				if (low > 15)
					goto bad_size;
				size = (high << 4) + low - 7;
			} else {
				/* copied as it is below, after the address */
				const uint8_t *at = s[HS_CC_SIZE];

				if (hs_get_varint(&at, e[HS_CC_SIZE], &size))
					goto short_column;
				high = hs_cc_size_high(size);
			}
			cls = hs_cc_class(high);
			h = &t->class_frees[cls];
			GET(HS_CC_REF_ALLOC, ref);
			if (!ref) {
				/* not of its class: of the class it names, else literal
				 */
				GET(HS_CC_REF_CLASS, other);
				if (other > HS_CU_CLASSES &&
				    !(predict && other == HS_CC_REF_NEW))
					goto bad_class;
				if (other && other != HS_CC_REF_NEW) {
					h = &t->class_frees[other - 1];
					GET(HS_CC_REF_OTHER, ref);
					if (!ref)
						goto bad_ref;
				}
			}
			if (!ref && other == HS_CC_REF_NEW) {
				/* 5.0: a new block, from the thread's prediction */
				GET(HS_CC_ADDR_NEW, v);
				addr = t->predict + (uint64_t)hs_unzigzag(v);
				PUT_S((int64_t)(addr - last));
			} else {
				ADDR_OF_REF(addr, last, h->addr, h->nr);
			}
			if (!ref && predict)
				t->predict =
				    hs_cc_predict(addr, size); /* a literal one */
			if (split)
				PUT_U(size);
			else
				COPY(HS_CC_SIZE);
		} else {
			GET(HS_CC_REF, ref);
			ADDR_OF_REF(addr, last, t->frees, t->nr_frees);
			COPY(HS_CC_SIZE);
		}
		if (ce) {
			COPY_VALUE(HS_CC_STACK);
			stack = v;
		} else {
			COPY(HS_CC_STACK);
		}
		if (hs_tag_is_realloc(tag)) {
			uint64_t old;

			GET_REF(ref);
			ADDR_OF_REF(old, addr, t->allocs, t->nr_allocs);
			COPY(HS_CC_OTHER);
			if (classes) {
				if (old &&
				    remember_free(t, old,
						  ref ? t->nr_allocs - ref : SIZE_MAX))
					return -ENOMEM;
			} else if (old && remember(&t->frees, &t->nr_frees,
						   &t->alloc_frees, old)) {
				return -ENOMEM;
			}
		} else if (hs_tag_has_align(tag)) {
			COPY(HS_CC_OTHER);
		}
		if (classes ? remember_block(t, addr, cls)
			    : remember(&t->allocs, &t->nr_allocs, &t->alloc_allocs, addr))
			return -ENOMEM;
		last = addr;
	event_done:
		if (ce && piece) {
			/* the event, in the open piece or a new one */
			struct hs_trace_event *x;
			struct hs__chunk_piece *p;

			piece = 0;
			if (pc == SIZE_MAX) {
				if (hs__chunk_piece_open(ce, (size_t)(d - u->out),
							 t->tid))
					return -ENOMEM;
				pc = ce->nr_pieces - 1;
				ce->piece[pc].sorted = 1;
			} else if (ticks < ce->piece[pc].st.ticks) {
				ce->piece[pc].sorted = 0;
			}
			if (direct_room(ce))
				return -ENOMEM;
			p = &ce->piece[pc];
			x = &ce->ev[ce->nr_ev++];
			x->time = (int64_t)ticks;
			x->addr = addr;
			x->thread = 0;
			x->fn = (uint8_t)tag;
			x->seq = 0;
			if (tag == HS_TAG_FREE) {
				x->size = 0;
				x->node = 0;
				x->op = HS_OP_FREE;
			} else {
				x->size = size;
				x->node = stack;
				x->op = HS_OP_ALLOC;
			}
			if (x->time < p->low)
				p->low = x->time;
			p->st.tid = t->tid;
			p->st.ticks = ticks;
			p->st.addr = last;
			p->ev_end = ce->nr_ev;
			p->records++;
			p->skipped = skip;
		}
	}
#undef COPY
#undef COPY_VALUE
#undef GET
#undef GET_REF
#undef ADDR_OF_REF
#undef PUT_U
#undef PUT_S
	if (ce)
		dend -= skip; /* (the bytes of the records not written) */
	if (d != dend) {
		*why = d > dend ? "a compact chunk's records are longer than it says"
				: "a compact chunk's records are shorter than it says";
		return -1;
	}
	for (i = 0; i < count; i++) {
		if (s[i] != e[i]) {
			*why = "a column holds more than its events";
			return -1;
		}
	}
	*out_len = (size_t)(d - u->out);
	if (ce && all && hs__chunk_events_rest(ce))
		return -ENOMEM;
	if (ce)
		ce->complete = all;
	return 0;
short_column:
	*why = "an event's field runs past the end of its column";
	return -1;
bad_ref:
	*why =
	    "an address refers back past the start of its thread's history in the chunk";
	return -1;
bad_size:
	*why = "a size's low bits are more than 4 bits";
	return -1;
bad_class:
	*why = "an address refers to a size class that does not exist";
	return -1;
bad_record:
	*why = "unknown or malformed record in a compact chunk";
	return -1;
too_long:
	*why = "a compact chunk's records are longer than it says";
	return -1;
}

int hs_chunk_unpack(struct hs_chunk_unpack *u, unsigned flags, const uint8_t *in,
		    size_t n, const uint8_t **out, size_t *out_len, const char **why)
{
	int err;

	if (flags & HS_CHUNK_COMPACT) {
		err = flags & HS_CHUNK_PREDICT
			  ? expand(u, in, n, out_len, why, 1, 1, NULL, 0)
		      : flags & HS_CHUNK_CLASSES
			  ? expand(u, in, n, out_len, why, 1, 0, NULL, 0)
			  : expand(u, in, n, out_len, why, 0, 0, NULL, 0);
		if (err)
			return err;
		*out = u->out;
		return 0;
	}
	if (flags & HS_CHUNK_COLUMNS) {
		if (HS_GROW(u->out, n + HS_CS_SLACK, u->alloc_out))
			return -ENOMEM;
		if (hs_chunk_join(in, n, u->out, u->alloc_out, out_len, why))
			return -1;
		*out = u->out;
		return 0;
	}
	*out = in;
	*out_len = n;
	return 0;
}

int hs_chunk_unpack_events(struct hs_chunk_unpack *u, unsigned flags, const uint8_t *in,
			   size_t n, const uint8_t **out, size_t *out_len,
			   struct hs__chunk_events *ce, size_t max_events,
			   const char **why)
{
	int err;

	if ((flags & (HS_CHUNK_COMPACT | HS_CHUNK_PREDICT)) !=
	    (HS_CHUNK_COMPACT | HS_CHUNK_PREDICT)) {
		ce->nr_ev = 0;
		ce->nr_pieces = 0;
		ce->complete = 0;
		return hs_chunk_unpack(u, flags, in, n, out, out_len, why);
	}
	err = expand(u, in, n, out_len, why, 1, 1, ce, max_events);
	if (err)
		return err;
	*out = u->out;
	return 0;
}

void hs_chunk_unpack_release(struct hs_chunk_unpack *u)
{
	size_t i;

	for (i = 0; i < u->used_threads; i++) {
		struct hs_cu_thread *t = &u->threads[i];
		size_t c;

		hs_free(t->allocs);
		hs_free(t->frees);
		hs_free(t->alloc_class);
		for (c = 0; c < HS_CU_CLASSES; c++)
			hs_free(t->class_frees[c].addr);
	}
	hs_free(u->threads);
	hs_free(u->slots);
	hs_free(u->out);
	memset(u, 0, sizeof(*u));
}
