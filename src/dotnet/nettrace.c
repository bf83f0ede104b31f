/*
 * nettrace - EventPipe's NetTrace V4/V5 stream, read object by object.
 *
 * The stream: "Nettrace", the FastSerialization header, then objects
 * (BeginPrivateObject 5, a type object naming the kind, the payload,
 * EndObject 6) until a NullReference tag 1. The Trace object comes first;
 * then blocks, each an int32 size, zero padding to a 4-byte file offset and
 * the content. Event and metadata blocks hold event blobs, usually with
 * compressed headers (a flag byte, then LEB128 fields relative to the
 * previous blob of the block). Stack blocks give stack ids their IPs;
 * sequence point blocks end a region: the stack ids restart after them,
 * and every event before one is older than every event after it.
 */
#include "dotnet/nettrace.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TAG_NULL 1
#define TAG_BEGIN_OBJECT 5
#define TAG_END_OBJECT 6

#define FLAG_METADATA_ID 0x01
#define FLAG_CAPTURE_THREAD_AND_SEQUENCE 0x02
#define FLAG_THREAD_ID 0x04
#define FLAG_STACK_ID 0x08
#define FLAG_ACTIVITY_ID 0x10
#define FLAG_RELATED_ACTIVITY_ID 0x20
#define FLAG_SORTED 0x40
#define FLAG_DATA_LENGTH 0x80

/* An event kept until its region is handed over. */
struct kept_event {
	int64_t timestamp;
	uint64_t order; /* file order, for ties */
	uint64_t thread_id, capture_thread_id;
	uint64_t offset;
	uint64_t payload; /* offset into region_bytes */
	uint32_t meta_id, stack_id, sequence, processor, payload_size;
};

/* The header state of a block's compressed blobs. */
struct blob_state {
	uint32_t meta_id, sequence, processor, stack_id, payload_size;
	uint64_t capture_thread_id, thread_id;
	int64_t timestamp;
};

/* The last sequence number seen of one capture thread. */
struct seq_slot {
	uint64_t thread;
	uint32_t last;
	int used;
};

struct reader {
	FILE *f;			   /* borrowed */
	const struct hs_nettrace_ops *ops; /* borrowed */
	struct hs_diag *diag;
	struct hs_nettrace_stats st;
	uint64_t pos; /* bytes consumed */
	int have_header;
	struct hs_nettrace_header hdr;

	unsigned char *block; /* the current block's content */
	size_t block_alloc;

	struct hs_nettrace_meta **meta; /* id -> record, NULL if undefined */
	size_t nr_meta, alloc_meta;

	uint64_t *ips; /* the region's stacks, concatenated */
	size_t nr_ips, alloc_ips;
	uint64_t *stack_start; /* id -> first IP + 1; 0 = undefined */
	uint32_t *stack_len;   /* id -> depth */
	size_t nr_stack_ids, alloc_stack_start, alloc_stack_len;

	struct seq_slot *seq; /* capture thread -> last sequence */
	size_t nr_seq, nr_seq_slots;

	struct kept_event *kept; /* the region's events */
	size_t nr_kept, alloc_kept;
	unsigned char *region_bytes; /* their payloads */
	size_t nr_region_bytes, alloc_region_bytes;
	uint64_t order;
};

static int corrupt(struct reader *r, uint64_t offset, const char *what)
{
	hs_diag_set_offset(r->diag, offset, "%s", what);
	return -EINVAL;
}

static int no_memory(struct reader *r)
{
	hs_diag_set_offset(r->diag, r->pos, "out of memory");
	return -ENOMEM;
}

/* ---- decoding ---- */

int hs_nettrace_varint(const unsigned char **p, const unsigned char *end,
		       unsigned max_bytes, uint64_t *out)
{
	const unsigned char *s = *p;
	uint64_t v = 0;
	unsigned i;

	HS_BUG_ON(s > end || !out);
	for (i = 0; i < max_bytes; i++) {
		if (s + i >= end)
			return -EINVAL;
		v |= (uint64_t)(s[i] & 0x7f) << (7 * i);
		if (!(s[i] & 0x80)) {
			*p = s + i + 1;
			*out = v;
			return 0;
		}
	}
	return -EINVAL;
}

static int put_utf8(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int hs_nettrace_utf16(const unsigned char **p, const unsigned char *end, char **out)
{
	const unsigned char *s = *p, *nul;
	size_t units, i, n = 0;
	char *u;

	HS_BUG_ON(s > end || !out);
	for (nul = s; nul + 1 < end; nul += 2)
		if (!nul[0] && !nul[1])
			break;
	if (nul + 1 >= end)
		return -EINVAL;
	units = (size_t)(nul - s) / 2;
	u = hs_malloc(units * 3 +
		      1); /* a unit, or a pair of them, is at most 3 or 4 bytes */
	if (!u)
		return -ENOMEM;
	for (i = 0; i < units; i++) {
		unsigned long c = (unsigned long)s[2 * i] | (unsigned long)s[2 * i + 1]
								<< 8;

		if (c >= 0xd800 && c < 0xdc00 && i + 1 < units) {
			unsigned long lo = (unsigned long)s[2 * i + 2] |
					   (unsigned long)s[2 * i + 3] << 8;

			if (lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				i++;
			} else {
				c = 0xfffd;
			}
		} else if (c >= 0xd800 && c < 0xe000) {
			c = 0xfffd;
		} else if (c == 0) {
			c = 0xfffd;
		}
		n += (size_t)put_utf8(u + n, c);
	}
	u[n] = '\0';
	*out = u;
	*p = nul + 2;
	return 0;
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

int hs_nettrace_sniff(const unsigned char *head, size_t n)
{
	return n >= 8 && !memcmp(head, "Nettrace", 8);
}

/* ---- reading the stream ---- */

/*
 * Read @n bytes into @buf. Returns 0, 1 when the stream ends first (the
 * bytes that were there are consumed), or -EIO.
 */
static int read_bytes(struct reader *r, void *buf, size_t n)
{
	size_t got = n ? fread(buf, 1, n, r->f) : 0;

	r->pos += got;
	if (got == n)
		return 0;
	if (ferror(r->f)) {
		hs_diag_set_offset(r->diag, r->pos, "read error");
		return -EIO;
	}
	return 1;
}

static int read_u32(struct reader *r, uint32_t *v)
{
	unsigned char b[4];
	int err = read_bytes(r, b, 4);

	if (!err)
		*v = get32(b);
	return err;
}

static int expect_tag(struct reader *r, int tag, const char *what)
{
	unsigned char b;
	int err = read_bytes(r, &b, 1);

	if (err)
		return err;
	if (b != tag)
		return corrupt(r, r->pos - 1, what);
	return 0;
}

/* ---- metadata ---- */

static void meta_free(struct hs_nettrace_meta *m)
{
	if (!m)
		return;
	hs_free(m->provider);
	hs_free(m->event_name);
	hs_free(m);
}

/* A metadata record's payload, at file offset @offset. */
static int add_metadata(struct reader *r, const unsigned char *p,
			const unsigned char *end, uint64_t offset)
{
	struct hs_nettrace_meta *m;
	uint32_t id;
	int err;

	if (end - p < 4)
		return corrupt(r, offset, "metadata record too short");
	id = get32(p);
	p += 4;
	if (!id || id >= HS_NETTRACE_MAX_META)
		return corrupt(r, offset, "metadata id out of range");
	m = hs_calloc(1, sizeof(*m));
	if (!m)
		return no_memory(r);
	m->id = id;
	err = hs_nettrace_utf16(&p, end, &m->provider);
	if (!err && end - p < 4)
		err = -EINVAL;
	if (!err) {
		m->event_id = get32(p);
		p += 4;
		err = hs_nettrace_utf16(&p, end, &m->event_name);
	}
	if (!err && end - p < 16)
		err = -EINVAL;
	if (err) {
		meta_free(m);
		return err == -ENOMEM ? no_memory(r)
				      : corrupt(r, offset, "metadata record cut short");
	}
	m->keywords = get64(p);
	m->version = get32(p + 8);
	m->level = get32(p + 12);
	p += 16;
	if (end - p >= 4)
		m->nr_fields = get32(p);
	if (id >= r->nr_meta) {
		if (HS_GROW(r->meta, (size_t)id + 1, r->alloc_meta)) {
			meta_free(m);
			return no_memory(r);
		}
		memset(r->meta + r->nr_meta, 0,
		       ((size_t)id + 1 - r->nr_meta) * sizeof(*r->meta));
		r->nr_meta = (size_t)id + 1;
	}
	meta_free(r->meta[id]); /* a redefinition replaces the old one */
	r->meta[id] = m;
	r->st.nr_metadata++;
	return 0;
}

/* ---- the region: events kept until a sequence point ---- */

static int cmp_kept(const void *a, const void *b)
{
	const struct kept_event *x = a, *y = b;

	if (x->timestamp != y->timestamp)
		return x->timestamp < y->timestamp ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Hand the kept events over in time order, then forget them. */
static int flush_region(struct reader *r)
{
	size_t i;
	int err = 0;

	if (r->nr_kept > 1)
		qsort(r->kept, r->nr_kept, sizeof(*r->kept), cmp_kept);
	for (i = 0; i < r->nr_kept && !err; i++) {
		const struct kept_event *k = &r->kept[i];
		struct hs_nettrace_event ev;

		if (k->meta_id >= r->nr_meta || !r->meta[k->meta_id]) {
			r->st.nr_unknown_meta++;
			continue;
		}
		memset(&ev, 0, sizeof(ev));
		ev.meta = r->meta[k->meta_id];
		ev.thread_id = k->thread_id;
		ev.capture_thread_id = k->capture_thread_id;
		ev.sequence = k->sequence;
		ev.processor = k->processor;
		ev.timestamp = k->timestamp;
		ev.payload = r->region_bytes + k->payload;
		ev.payload_size = k->payload_size;
		ev.offset = k->offset;
		if (k->stack_id && k->stack_id < r->nr_stack_ids &&
		    r->stack_start[k->stack_id]) {
			ev.stack = r->ips + r->stack_start[k->stack_id] - 1;
			ev.stack_depth = r->stack_len[k->stack_id];
		}
		r->st.nr_events++;
		if (r->ops->event)
			err = r->ops->event(r->ops->ctx, &ev);
	}
	r->nr_kept = 0;
	r->nr_region_bytes = 0;
	return err;
}

static void clear_stacks(struct reader *r)
{
	if (r->nr_stack_ids)
		memset(r->stack_start, 0, r->nr_stack_ids * sizeof(*r->stack_start));
	r->nr_stack_ids = 0;
	r->nr_ips = 0;
}

static int keep_event(struct reader *r, const struct blob_state *s,
		      const unsigned char *payload, uint64_t offset)
{
	struct kept_event *k;
	int err;

	if (r->nr_region_bytes + s->payload_size > HS_NETTRACE_MAX_REGION ||
	    r->nr_kept >= HS_NETTRACE_MAX_REGION / sizeof(*k)) {
		err = flush_region(r); /* stacks stay: the region goes on */
		if (err)
			return err;
	}
	if (HS_GROW(r->kept, r->nr_kept + 1, r->alloc_kept) ||
	    HS_GROW(r->region_bytes, r->nr_region_bytes + s->payload_size + 1,
		    r->alloc_region_bytes))
		return no_memory(r);
	k = &r->kept[r->nr_kept++];
	k->timestamp = s->timestamp;
	k->order = r->order++;
	k->thread_id = s->thread_id;
	k->capture_thread_id = s->capture_thread_id;
	k->offset = offset;
	k->payload = r->nr_region_bytes;
	k->meta_id = s->meta_id;
	k->stack_id = s->stack_id;
	k->sequence = s->sequence;
	k->processor = s->processor;
	k->payload_size = s->payload_size;
	memcpy(r->region_bytes + r->nr_region_bytes, payload, s->payload_size);
	r->nr_region_bytes += s->payload_size;
	return 0;
}

/* ---- lost events: gaps in each capture thread's sequence numbers ---- */

static struct seq_slot *seq_find(struct reader *r, uint64_t thread)
{
	size_t i, mask;

	if (2 * (r->nr_seq + 1) > r->nr_seq_slots) {
		size_t n = r->nr_seq_slots ? r->nr_seq_slots * 2 : 64;
		struct seq_slot *s;

		if (r->nr_seq >= HS_NETTRACE_MAX_META)
			return NULL; /* a cap like the metadata's: stop counting */
		s = hs_calloc(n, sizeof(*s));
		if (!s)
			return NULL;
		for (i = 0; i < r->nr_seq_slots; i++) {
			size_t j;

			if (!r->seq[i].used)
				continue;
			for (j = hs_hash_u64(r->seq[i].thread) & (n - 1); s[j].used;
			     j = (j + 1) & (n - 1))
				;
			s[j] = r->seq[i];
		}
		hs_free(r->seq);
		r->seq = s;
		r->nr_seq_slots = n;
	}
	mask = r->nr_seq_slots - 1;
	for (i = hs_hash_u64(thread) & mask; r->seq[i].used; i = (i + 1) & mask)
		if (r->seq[i].thread == thread)
			return &r->seq[i];
	r->seq[i].used = 1;
	r->seq[i].thread = thread;
	r->seq[i].last = 0;
	r->nr_seq++;
	return &r->seq[i];
}

/*
 * Event @sequence of capture thread @thread: a gap after its previous one
 * is events dropped (a restart at 1 is a new thread with the same id).
 */
static void seq_event(struct reader *r, uint64_t thread, uint32_t sequence)
{
	struct seq_slot *s = seq_find(r, thread);
	uint32_t gap;

	if (!s)
		return;
	gap = sequence - s->last - 1;
	if (s->last && sequence != 1 && gap < 0x80000000u)
		r->st.nr_lost += gap;
	s->last = sequence;
}

/* A sequence point's lower bound @sequence for @thread: beyond the last seen is lost. */
static void seq_point(struct reader *r, uint64_t thread, uint32_t sequence)
{
	struct seq_slot *s = seq_find(r, thread);
	uint32_t gap;

	if (!s)
		return;
	gap = sequence - s->last;
	if (gap && gap < 0x80000000u) {
		r->st.nr_lost += gap;
		s->last = sequence;
	}
}

/* ---- blocks ---- */

/* The blobs of an event or metadata block at file offset @base. */
static int read_blobs(struct reader *r, const unsigned char *c, size_t size,
		      uint64_t base, int metadata)
{
	const unsigned char *p, *end = c + size;
	struct blob_state s;
	unsigned header_size, flags;
	int err;

	if (size < 20)
		return corrupt(r, base, "block header cut short");
	header_size = get16(c);
	flags = get16(c + 2);
	if (header_size < 20 || header_size > size)
		return corrupt(r, base, "bad block header size");
	memset(&s, 0, sizeof(s));
	for (p = c + header_size; p < end;) {
		uint64_t offset = base + (uint64_t)(p - c), v;
		const unsigned char *payload;

		if (flags & 1) {
			unsigned bf = *p++;

			err = 0;
			if (bf & FLAG_METADATA_ID) {
				err = hs_nettrace_varint(&p, end, 5, &v);
				s.meta_id = (uint32_t)v;
			}
			if (!err && (bf & FLAG_CAPTURE_THREAD_AND_SEQUENCE)) {
				err = hs_nettrace_varint(&p, end, 5, &v);
				s.sequence += (uint32_t)v;
				if (!err)
					err = hs_nettrace_varint(&p, end, 10,
								 &s.capture_thread_id);
				if (!err) {
					err = hs_nettrace_varint(&p, end, 5, &v);
					s.processor = (uint32_t)v;
				}
			}
			if (s.meta_id)
				s.sequence++;
			if (!err && (bf & FLAG_THREAD_ID))
				err = hs_nettrace_varint(&p, end, 10, &s.thread_id);
			if (!err && (bf & FLAG_STACK_ID)) {
				err = hs_nettrace_varint(&p, end, 5, &v);
				s.stack_id = (uint32_t)v;
			}
			if (!err) {
				err = hs_nettrace_varint(&p, end, 10, &v);
				s.timestamp = (int64_t)((uint64_t)s.timestamp + v);
			}
			if (!err && (bf & FLAG_ACTIVITY_ID))
				err = end - p < 16 ? -EINVAL : (p += 16, 0);
			if (!err && (bf & FLAG_RELATED_ACTIVITY_ID))
				err = end - p < 16 ? -EINVAL : (p += 16, 0);
			if (!err && (bf & FLAG_DATA_LENGTH)) {
				err = hs_nettrace_varint(&p, end, 5, &v);
				s.payload_size = (uint32_t)v;
			}
			if (err)
				return corrupt(r, offset, "bad compressed event header");
		} else {
			uint32_t event_size;

			if (end - p < 80)
				return corrupt(r, offset, "event header cut short");
			event_size = get32(p);
			s.meta_id = get32(p + 4) & 0x7fffffff;
			s.sequence = get32(p + 8);
			s.thread_id = get64(p + 12);
			s.capture_thread_id = get64(p + 20);
			s.processor = get32(p + 28);
			s.stack_id = get32(p + 32);
			s.timestamp = (int64_t)get64(p + 36);
			s.payload_size = get32(p + 76);
			if (event_size < 76 || (uint64_t)(end - p) - 4 < event_size ||
			    s.payload_size > event_size - 76)
				return corrupt(r, offset, "bad event size");
			p += 80;
		}
		if ((uint64_t)(end - p) < s.payload_size)
			return corrupt(r, offset, "event payload runs past its block");
		payload = p;
		p += s.payload_size;
		if (!(flags & 1)) /* uncompressed blobs are 4-byte aligned in the file */
			while (((uint64_t)(p - c) + base) & 3 && p < end)
				p++;
		if (metadata) {
			err = add_metadata(r, payload, payload + s.payload_size, offset);
		} else if (!s.meta_id) {
			err = corrupt(r, offset, "event without metadata id");
		} else {
			seq_event(r, s.capture_thread_id, s.sequence);
			err = keep_event(r, &s, payload, offset);
		}
		if (err)
			return err;
	}
	return 0;
}

static int read_stack_block(struct reader *r, const unsigned char *c, size_t size,
			    uint64_t base)
{
	const unsigned char *p = c + 8, *end = c + size;
	uint32_t first, count, i, ptr = r->hdr.pointer_size;

	if (size < 8)
		return corrupt(r, base, "stack block cut short");
	first = get32(c);
	count = get32(c + 4);
	if ((uint64_t)first + count > HS_NETTRACE_MAX_STACKS)
		return corrupt(r, base, "stack id out of range");
	for (i = 0; i < count; i++) {
		uint64_t offset = base + (uint64_t)(p - c);
		uint32_t bytes, id = first + i, n, k;

		if (end - p < 4)
			return corrupt(r, offset, "stack cut short");
		bytes = get32(p);
		p += 4;
		if (bytes > (uint64_t)(end - p) || bytes % ptr)
			return corrupt(r, offset, "bad stack size");
		n = bytes / ptr;
		if (id >= r->nr_stack_ids) {
			if (HS_GROW(r->stack_start, (size_t)id + 1,
				    r->alloc_stack_start) ||
			    HS_GROW(r->stack_len, (size_t)id + 1, r->alloc_stack_len))
				return no_memory(r);
			memset(r->stack_start + r->nr_stack_ids, 0,
			       ((size_t)id + 1 - r->nr_stack_ids) *
				   sizeof(*r->stack_start));
			r->nr_stack_ids = (size_t)id + 1;
		}
		if (HS_GROW(r->ips, r->nr_ips + n + 1, r->alloc_ips))
			return no_memory(r);
		for (k = 0; k < n; k++, p += ptr)
			r->ips[r->nr_ips + k] = ptr == 8 ? get64(p) : get32(p);
		r->stack_start[id] = r->nr_ips + 1;
		r->stack_len[id] = n;
		r->nr_ips += n;
		r->st.nr_stacks++;
	}
	if (p != end)
		return corrupt(r, base + (uint64_t)(p - c),
			       "stack block has bytes after its stacks");
	return 0;
}

static int read_sequence_point(struct reader *r, const unsigned char *c, size_t size,
			       uint64_t base)
{
	uint32_t threads, i;
	int err;

	if (size < 12)
		return corrupt(r, base, "sequence point cut short");
	threads = get32(c + 8);
	if ((uint64_t)threads * 12 != size - 12)
		return corrupt(r, base,
			       "sequence point size does not match its thread count");
	for (i = 0; i < threads; i++)
		seq_point(r, get64(c + 12 + 12 * (size_t)i),
			  get32(c + 20 + 12 * (size_t)i));
	err = flush_region(r);
	clear_stacks(r);
	r->st.nr_sequence_points++;
	return err;
}

enum object_kind { OBJ_TRACE, OBJ_EVENTS, OBJ_METADATA, OBJ_STACKS, OBJ_SEQUENCE_POINT };

static const struct {
	const char *name;
	enum object_kind kind;
	int min_version; /* the oldest version whose layout this reader knows */
	int max_version; /* the newest version this reader can read */
} object_kinds[] = {
    {"Trace", OBJ_TRACE, 4, 5},
    {"EventBlock", OBJ_EVENTS, 2, 2},
    {"MetadataBlock", OBJ_METADATA, 2, 2},
    {"StackBlock", OBJ_STACKS, 2, 2},
    {"SPBlock", OBJ_SEQUENCE_POINT, 2, 2},
};

/* The type object after BeginPrivateObject: which kind, which version. */
static int read_type(struct reader *r, enum object_kind *kind, int *version)
{
	uint64_t at = r->pos;
	uint32_t ver, min_ver, len;
	char name[32];
	size_t i;
	int err;

	if ((err = expect_tag(r, TAG_BEGIN_OBJECT, "expected a type object")) ||
	    (err = expect_tag(r, TAG_NULL, "expected a type object")) ||
	    (err = read_u32(r, &ver)) || (err = read_u32(r, &min_ver)) ||
	    (err = read_u32(r, &len)))
		return err;
	if (len == 0 || len >= sizeof(name))
		return corrupt(r, at, "bad object type name");
	if ((err = read_bytes(r, name, len)))
		return err;
	name[len] = '\0';
	if ((err = expect_tag(r, TAG_END_OBJECT, "type object not ended")))
		return err;
	for (i = 0; i < sizeof(object_kinds) / sizeof(object_kinds[0]); i++) {
		if (strcmp(name, object_kinds[i].name))
			continue;
		if ((int)min_ver > object_kinds[i].max_version ||
		    (int)ver < object_kinds[i].min_version) {
			hs_diag_set_offset(r->diag, at,
					   "%s version %u (readers from %u) "
					   "is not supported",
					   name, ver, min_ver);
			return -EINVAL;
		}
		*kind = object_kinds[i].kind;
		*version = (int)ver;
		return 0;
	}
	return corrupt(r, at, "unknown object type");
}

static int read_trace(struct reader *r, int version, uint64_t at)
{
	unsigned char b[48];
	int i, err;

	if (r->have_header)
		return corrupt(r, at, "a second Trace object");
	if ((err = read_bytes(r, b, sizeof(b))))
		return err;
	r->hdr.trace_version = version;
	for (i = 0; i < 8; i++)
		r->hdr.sync_time[i] = get16(b + 2 * i);
	r->hdr.sync_qpc = (int64_t)get64(b + 16);
	r->hdr.qpc_freq = (int64_t)get64(b + 24);
	r->hdr.pointer_size = get32(b + 32);
	r->hdr.pid = get32(b + 36);
	r->hdr.nr_cpus = get32(b + 40);
	r->hdr.sampling_ns = get32(b + 44);
	if (r->hdr.pointer_size != 4 && r->hdr.pointer_size != 8)
		return corrupt(r, at, "pointer size is neither 4 nor 8");
	if (r->hdr.qpc_freq <= 0)
		return corrupt(r, at, "timestamp frequency is not positive");
	r->have_header = 1;
	return r->ops->header ? r->ops->header(r->ops->ctx, &r->hdr) : 0;
}

static int read_block(struct reader *r, enum object_kind kind, uint64_t at)
{
	unsigned char pad[3];
	uint32_t size;
	uint64_t base;
	int err;

	if (!r->have_header)
		return corrupt(r, at, "a block before the Trace object");
	if ((err = read_u32(r, &size)))
		return err;
	if (size > HS_NETTRACE_MAX_BLOCK) {
		hs_diag_set_offset(r->diag, r->pos - 4,
				   "block of %u bytes is over the %u "
				   "byte limit",
				   size, HS_NETTRACE_MAX_BLOCK);
		return -E2BIG;
	}
	if (r->pos & 3) {
		size_t n = 4 - (r->pos & 3);

		if ((err = read_bytes(r, pad, n)))
			return err;
		if (pad[0] || (n > 1 && pad[1]) || (n > 2 && pad[2]))
			return corrupt(r, r->pos - n, "block padding is not zero");
	}
	base = r->pos;
	if (HS_GROW(r->block, (size_t)size + 1, r->block_alloc))
		return no_memory(r);
	if ((err = read_bytes(r, r->block, size)))
		return err;
	switch (kind) {
	case OBJ_EVENTS:
		return read_blobs(r, r->block, size, base, 0);
	case OBJ_METADATA:
		return read_blobs(r, r->block, size, base, 1);
	case OBJ_STACKS:
		return read_stack_block(r, r->block, size, base);
	default:
		return read_sequence_point(r, r->block, size, base);
	}
}

static int read_stream(struct reader *r)
{
	static const char magic[] = "Nettrace\x14\0\0\0!FastSerialization.1";
	unsigned char head[sizeof(magic) - 1];
	int err;

	err = read_bytes(r, head, sizeof(head));
	if (err < 0)
		return err;
	if (r->pos >= 16 && !memcmp(head, "Nettrace", 8) && !get32(head + 8)) {
		/* V6 and later: a reserved 0, then the major and minor versions */
		hs_diag_set_offset(r->diag, 12,
				   "NetTrace version %u is not supported "
				   "(versions 4 and 5 are)",
				   get32(head + 12));
		return -EINVAL;
	}
	if (err || memcmp(head, magic, sizeof(head))) {
		if (err && r->pos >= 8 && !memcmp(head, magic, (size_t)r->pos))
			return 1; /* the header, cut off */
		return corrupt(r, 0,
			       "not a nettrace stream (no \"Nettrace\" "
			       "FastSerialization header)");
	}
	for (;;) {
		uint64_t at = r->pos;
		enum object_kind kind;
		unsigned char tag;
		int version;

		r->st.truncated_object = at;
		err = read_bytes(r, &tag, 1);
		if (err == 1) { /* ends at an object boundary: accepted */
			r->st.complete = 1;
			return 0;
		}
		if (err)
			return err;
		if (tag == TAG_NULL) {
			r->st.complete = 1;
			return 0;
		}
		if (tag != TAG_BEGIN_OBJECT)
			return corrupt(r, at, "expected an object");
		if ((err = read_type(r, &kind, &version)))
			return err;
		if (kind == OBJ_TRACE)
			err = read_trace(r, version, at);
		else
			err = read_block(r, kind, at);
		if (!err)
			err = expect_tag(r, TAG_END_OBJECT, "object not ended");
		if (err)
			return err;
	}
}

int hs_nettrace_read(FILE *f, const struct hs_nettrace_ops *ops,
		     struct hs_nettrace_stats *stats, struct hs_diag *diag)
{
	struct reader r;
	size_t i;
	int err, flush_err;

	HS_BUG_ON(!f || !ops);
	memset(&r, 0, sizeof(r));
	r.f = f;
	r.ops = ops;
	r.diag = diag;
	err = read_stream(&r);
	if (err == 1) { /* cut off: keep what was read */
		r.st.truncated = 1;
		r.st.truncated_at = r.pos;
		err = 0;
	}
	if (err >= 0) {
		flush_err = flush_region(&r);
		if (flush_err)
			err = flush_err;
	}
	r.st.bytes = r.pos;
	if (stats)
		*stats = r.st;
	for (i = 0; i < r.nr_meta; i++)
		meta_free(r.meta[i]);
	hs_free(r.meta);
	hs_free(r.block);
	hs_free(r.ips);
	hs_free(r.stack_start);
	hs_free(r.stack_len);
	hs_free(r.seq);
	hs_free(r.kept);
	hs_free(r.region_bytes);
	return err;
}
