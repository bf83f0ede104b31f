/*
 * trace_reader - the streaming record reader and the in-memory trace
 * (see trace_reader.h and docs/trace-format.md).
 */
#include "format/trace_reader.h"
#include "format/trace_symbols.h"
#include "format/trace_writer.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* --- the record stream ----------------------------------------------- */

static int check_file_header(struct hs_trace_reader *r, const uint8_t *h,
			     struct hs_diag *diag)
{
	if (memcmp(h, HS_TRACE_MAGIC, HS_TRACE_MAGIC_LEN)) {
		hs_diag_set_offset(diag, 0, "not a heapscope trace (bad magic)");
		return -EINVAL;
	}
	r->major = hs_get_le16(h + 8);
	r->minor = hs_get_le16(h + 10);
	if (r->major != HS_TRACE_MAJOR) {
		hs_diag_set_offset(diag, 8, "trace format version %u.%u is not supported "
				   "(this heapscope reads %u.x)",
				   r->major, r->minor, HS_TRACE_MAJOR);
		return -EINVAL;
	}
	return 0;
}

static void reader_init(struct hs_trace_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

static int reader_start(struct hs_trace_reader *r, struct hs_diag *diag)
{
	uint8_t h[HS_FILE_HEADER_SIZE];
	int err;

	if (r->size < HS_FILE_HEADER_SIZE) {
		hs_diag_set_offset(diag, 0, "not a heapscope trace (%llu bytes, too short "
				   "for the file header)", (unsigned long long)r->size);
		return -EINVAL;
	}
	if (r->mem) {
		memcpy(h, r->mem, sizeof(h));
	} else {
		ssize_t n = pread(r->fd, h, sizeof(h), 0);

		if (n < 0)
			return -errno;
		if (n != (ssize_t)sizeof(h))
			return -EIO;
	}
	err = check_file_header(r, h, diag);
	if (err)
		return err;
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx)
		return -ENOMEM;
	r->offset = HS_FILE_HEADER_SIZE;
	r->data_end = r->offset;
	return 0;
}

int hs_trace_reader_open(struct hs_trace_reader *r, const char *path,
			 struct hs_diag *diag)
{
	struct stat sb;
	int err;

	reader_init(r);
	r->name = path;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	if (fstat(r->fd, &sb)) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(sb.st_mode)) {
		hs_diag_set(diag, 0, "not a regular file");
		err = -EINVAL;
		goto fail;
	}
	r->size = (uint64_t)sb.st_size;
	err = reader_start(r, diag);
	if (err)
		goto fail;
	return 0;
fail:
	hs_trace_reader_close(r);
	return err;
}

int hs_trace_reader_open_mem(struct hs_trace_reader *r, const void *data,
			     size_t n, const char *name, struct hs_diag *diag)
{
	int err;

	reader_init(r);
	r->name = name;
	r->mem = data;
	r->size = n;
	err = reader_start(r, diag);
	if (err)
		hs_trace_reader_close(r);
	return err;
}

void hs_trace_reader_close(struct hs_trace_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	hs_free(r->stored);
	hs_free(r->raw);
	r->stored = r->raw = NULL;
	ZSTD_freeDCtx(r->dctx);
	r->dctx = NULL;
}

/* Read @n bytes at @off into *@buf (grown as needed) or point into memory. */
static int read_buf(struct hs_trace_reader *r, uint64_t off, size_t n, uint8_t **buf,
		    size_t *alloc, const uint8_t **out)
{
	ssize_t got;
	size_t done = 0;

	if (r->mem) {
		*out = r->mem + off;
		return 0;
	}
	if (n > *alloc) {
		uint8_t *b = hs_realloc(*buf, n);

		if (!b)
			return -ENOMEM;
		*buf = b;
		*alloc = n;
	}
	while (done < n) {
		got = pread(r->fd, *buf + done, n - done, (off_t)(off + done));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			return -EIO;	/* the file shrank under us */
		done += (size_t)got;
	}
	*out = *buf;
	return 0;
}

static int read_at(struct hs_trace_reader *r, uint64_t off, size_t n,
		   const uint8_t **out)
{
	return read_buf(r, off, n, &r->stored, &r->alloc_stored, out);
}

static int corrupt(struct hs_trace_reader *r, struct hs_diag *diag, uint64_t off,
		   const char *what)
{
	hs_diag_set_offset(diag, off, "corrupt trace: %s (chunk %llu)", what,
			   (unsigned long long)r->nr_chunks);
	r->done = -EINVAL;
	return -EINVAL;
}

/*
 * Whether the chunk at r->offset (its header's first @n bytes at @hdr) is
 * in a symbol section: the chunk before it is, or its kind says so (even
 * if the rest of its header is damaged), or, cut before its kind, it
 * follows an END chunk (only a failed exec puts events there).
 */
static int in_symbols(const struct hs_trace_reader *r, const uint8_t *hdr, uint64_t n)
{
	if (r->prev_kind == HS_CHUNK_SYMBOLS)
		return 1;
	return n > 4 ? hdr[4] == HS_CHUNK_SYMBOLS : r->prev_kind == HS_CHUNK_END;
}

/*
 * The symbol section is damaged in the chunk at file offset @off: the
 * rest of the section is skipped (the first damage is the one told).
 */
static void sym_damaged(struct hs_trace_reader *r, uint64_t off, const char *what)
{
	if (!r->sym_damage.what) {
		r->sym_damage.what = what;
		r->sym_damage.offset = off;
	}
	r->sym_skip = 1;
	r->p = r->end;
}

/*
 * Load the next chunk; 1 = loaded, 0 = end of input, <0 = error. A
 * damaged chunk of a symbol section is skipped with the rest of the
 * section, or ends the input where the chunks cannot be followed.
 */
static int next_chunk(struct hs_trace_reader *r, struct hs_diag *diag)
{
	for (;;) {
		const uint8_t *hdr, *payload;
		uint64_t left = r->size - r->offset;
		struct hs_chunk_header *ch = &r->chunk;
		uint8_t h[HS_CHUNK_HEADER_SIZE];
		const char *bad = NULL;
		int err;

		if (left == 0)
			return 0;
		err = read_at(r, r->offset, left < sizeof(h) ? (size_t)left : sizeof(h), &hdr);
		if (err)
			return err;
		if (left < sizeof(h)) {
			if (in_symbols(r, hdr, left)) {
				sym_damaged(r, r->offset, "cut off");
				return 0;
			}
			r->cut_off = 1;
			r->cut_offset = r->offset;
			return 0;
		}
		if (hs_chunk_header_parse(hdr, ch))
			bad = "bad chunk magic";
		else if (ch->stored > HS_CHUNK_MAX || ch->raw > HS_CHUNK_MAX)
			bad = "chunk larger than 16 MiB";
		else if (!(ch->flags & HS_CHUNK_ZSTD) && ch->raw != ch->stored)
			bad = "stored chunk whose sizes differ";
		else if (ch->flags & ~HS_CHUNK_ZSTD)
			bad = "unknown chunk flags";
		else if (ch->seq != r->nr_chunks)
			bad = "chunk out of sequence";
		if (bad || left - sizeof(h) < ch->stored) {
			/* (where the next chunk is is not known) */
			if (in_symbols(r, hdr, sizeof(h))) {
				sym_damaged(r, r->offset, bad ? bad : "cut off");
				return 0;
			}
			if (bad)
				return corrupt(r, diag, r->offset, bad);
			r->cut_off = 1;
			r->cut_offset = r->offset;
			return 0;
		}
		memcpy(h, hdr, sizeof(h));
		err = read_at(r, r->offset + sizeof(h), ch->stored, &payload);
		if (err)
			return err;
		if (hs_chunk_check(h, payload, ch->stored) != ch->check) {
			bad = "chunk check does not match its content";
			if (!in_symbols(r, h, sizeof(h)))
				return corrupt(r, diag, r->offset, bad);
			ch->kind = HS_CHUNK_SYMBOLS;
		}
		r->chunk_offset = r->offset;
		r->offset += sizeof(h) + (uint64_t)ch->stored;
		r->nr_chunks++;
		if (ch->kind == HS_CHUNK_SYMBOLS && r->prev_kind != HS_CHUNK_SYMBOLS) {
			r->sym_sections++;
			memset(&r->sym_damage, 0, sizeof(r->sym_damage));
			r->sym_skip = 0;
		}
		r->prev_kind = ch->kind;
		if (ch->kind != HS_CHUNK_SYMBOLS) {
			r->data_end = r->offset;
			r->data_chunks = r->nr_chunks;
		}
		if (bad) {
			sym_damaged(r, r->chunk_offset, bad);
			continue;
		}
		if (ch->kind != HS_CHUNK_EVENTS && ch->kind != HS_CHUNK_END &&
		    ch->kind != HS_CHUNK_SYMBOLS)
			continue;	/* a kind from a newer minor version */
		if (ch->kind == HS_CHUNK_SYMBOLS && r->sym_skip)
			continue;
		if (ch->flags & HS_CHUNK_ZSTD) {
			size_t got;

			if (ch->raw > r->alloc_raw) {
				uint8_t *b = hs_realloc(r->raw, ch->raw ? ch->raw : 1);

				if (!b)
					return -ENOMEM;
				r->raw = b;
				r->alloc_raw = ch->raw;
			}
			got = ZSTD_decompressDCtx(r->dctx, r->raw, ch->raw, payload,
						  ch->stored);
			if (ZSTD_isError(got) || got != ch->raw) {
				bad = "payload does not decompress to its size";
				if (ch->kind == HS_CHUNK_SYMBOLS) {
					sym_damaged(r, r->chunk_offset, bad);
					continue;
				}
				r->nr_chunks--;
				return corrupt(r, diag, r->chunk_offset, bad);
			}
			payload = r->raw;
		}
		r->payload = payload;
		r->p = payload;
		r->end = payload + ch->raw;
		memset(&r->st, 0, sizeof(r->st));
		/* the trace is whole if its last chunk (before the symbols)
		 * is an END chunk */
		if (ch->kind != HS_CHUNK_SYMBOLS)
			r->end_seen = ch->kind == HS_CHUNK_END;
		return 1;
	}
}

/* How many events of a loaded trace record @rec makes (add_record()). */
static unsigned rec_events(const struct hs_rec *rec)
{
	if (rec->tag == HS_TAG_SAMPLE)
		return rec->value <= HS_SAMPLE_WALL_BLOCKED;
	if (rec->tag >= HS_TAG_SIZED_FIRST || rec->tag == HS_TAG_SPAN || rec->tag == HS_TAG_NODE)
		return 0;
	/* a realloc that freed a block, an mremap: a free and an allocation */
	return 1 + (rec->tag == HS_TAG_MREMAP ||
		    (hs_tag_is_realloc(rec->tag) && rec->old_addr));
}

int hs_trace_reader_next(struct hs_trace_reader *r, struct hs_rec *rec,
			 struct hs_diag *diag)
{
	const char *why;
	int ret;

	if (r->done)
		return r->done < 0 ? r->done : 0;
	for (;;) {
		while (r->p >= r->end) {
			ret = next_chunk(r, diag);
			if (ret <= 0) {
				r->done = ret < 0 ? ret : 1;
				return ret;
			}
		}
		if (hs_rec_decode(&r->p, r->end, &r->st, rec, &why)) {
			if (r->chunk.kind == HS_CHUNK_SYMBOLS) {
				sym_damaged(r, r->chunk_offset, why);
				continue;
			}
			hs_diag_set_offset(diag, r->chunk_offset,
					   "corrupt trace: chunk %llu, record at payload offset "
					   "%llu: %s", (unsigned long long)(r->nr_chunks - 1),
					   (unsigned long long)(r->p - r->payload), why);
			r->done = -EINVAL;
			return -EINVAL;
		}
		if (r->chunk.kind == HS_CHUNK_SYMBOLS && rec->tag < HS_TAG_SIZED_FIRST) {
			sym_damaged(r, r->chunk_offset, "a record that is not a symbol");
			continue;
		}
		r->nr_records++;
		r->nr_events += rec_events(rec);
		return 1;
	}
}

/* --- PROCESS ----------------------------------------------------------- */

static char *dup_string(const uint8_t **q, const uint8_t *end, int *err)
{
	uint64_t len;
	char *s;

	if (hs_get_varint(q, end, &len) || len > HS_STRING_MAX ||
	    len > (uint64_t)(end - *q)) {
		*err = -EINVAL;
		return NULL;
	}
	s = hs_strndup((const char *)*q, (size_t)len);
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	/* Embedded NULs would hide the rest; keep what is before them. */
	*q += len;
	return s;
}

void hs_trace_info_release(struct hs_trace_info *info)
{
	size_t i;

	hs_free(info->exe);
	hs_free(info->comm);
	hs_free(info->cwd);
	for (i = 0; i < info->argc; i++)
		hs_free(info->argv[i]);
	hs_free(info->argv);
	memset(info, 0, sizeof(*info));
}

int hs_trace_info_decode(const uint8_t *body, size_t n, struct hs_trace_info *info,
			 const char **why)
{
	const uint8_t *q = body, *end = body + n;
	uint64_t v[10], argc;
	size_t i;
	int err = 0;

	memset(info, 0, sizeof(*info));
	for (i = 0; i < 10; i++)
		if (hs_get_varint(&q, end, &v[i]))
			goto bad;
	info->pid = v[0];
	info->ppid = v[1];
	info->page_size = v[2];
	info->sample_bytes = v[3];
	info->max_depth = v[4];
	info->unwind = (unsigned)v[5];
	info->clock = (unsigned)v[6];
	info->start_realtime_ns = v[7];
	info->flags = (unsigned)v[8];
	info->parent_pid = v[9];
	if (v[5] > 2 || v[6] > 1) {
		*why = "unknown unwinder or clock in the process record";
		return -EINVAL;
	}
	info->exe = dup_string(&q, end, &err);
	if (!err)
		info->comm = dup_string(&q, end, &err);
	if (!err)
		info->cwd = dup_string(&q, end, &err);
	if (err)
		goto fail;
	if (hs_get_varint(&q, end, &argc) || argc > HS_ARGC_MAX ||
	    argc > (uint64_t)(end - q))
		goto bad;
	info->argv = hs_calloc(argc + 1, sizeof(char *));
	if (!info->argv) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < argc; i++) {
		info->argv[i] = dup_string(&q, end, &err);
		if (err)
			goto fail;
		info->argc = i + 1;
	}
	info->present = 1;
	return 0;
bad:
	err = -EINVAL;
fail:
	if (err == -EINVAL)
		*why = "malformed process record";
	hs_trace_info_release(info);
	return err;
}

/* --- the loaded trace ------------------------------------------------- */

static uint32_t *node_slot_find(const struct hs_trace *t, uint64_t id)
{
	size_t mask = t->nr_node_slot - 1;
	size_t i = hs_hash_u64(id) & mask;

	while (t->node_slot[i] && t->node_id[t->node_slot[i] - 1] != id)
		i = (i + 1) & mask;
	return &t->node_slot[i];
}

static uint32_t node_index(const struct hs_trace *t, uint64_t id)
{
	uint32_t s;

	if (!t->nr_node_slot)
		return HS_TRACE_NONE;
	s = *node_slot_find(t, id);
	return s ? s - 1 : HS_TRACE_NONE;
}

static int node_index_grow(struct hs_trace *t)
{
	size_t n = t->nr_node_slot ? 2 * t->nr_node_slot : 1024, i;
	uint32_t *old = t->node_slot;
	size_t old_n = t->nr_node_slot;

	t->node_slot = hs_calloc(n, sizeof(uint32_t));
	if (!t->node_slot) {
		t->node_slot = old;
		return -ENOMEM;
	}
	t->nr_node_slot = n;
	for (i = 0; i < old_n; i++)
		if (old[i])
			*node_slot_find(t, t->node_id[old[i] - 1]) = old[i];
	hs_free(old);
	return 0;
}

/* Reallocate one column of a set of parallel arrays to @cap items. */
static int grow_col(void **col, size_t cap, size_t elem)
{
	void *p = hs_realloc(*col, cap * elem);

	if (!p)
		return -ENOMEM;
	*col = p;
	return 0;
}

/* Add a node; a second definition of an id keeps the first. */
static int add_node(struct hs_trace *t, uint64_t id, uint64_t parent, uint64_t addr,
		    uint64_t ticks)
{
	uint32_t *slot;
	size_t n = t->nr_nodes;

	if (n >= UINT32_MAX - 2)
		return -E2BIG;
	if (2 * (n + 1) > t->nr_node_slot && node_index_grow(t))
		return -ENOMEM;
	slot = node_slot_find(t, id);
	if (*slot)
		return 0;
	if (n == t->alloc_nodes) {
		size_t cap = n ? n + n / 2 : 1024;

		if (grow_col((void **)&t->node_addr, cap, sizeof(uint64_t)) ||
		    grow_col((void **)&t->node_parent, cap, sizeof(uint32_t)) ||
		    grow_col((void **)&t->node_module, cap, sizeof(uint32_t)) ||
		    grow_col((void **)&t->node_id, cap, sizeof(uint64_t)) ||
		    grow_col((void **)&t->node_ticks, cap, sizeof(uint64_t)))
			return -ENOMEM;
		t->alloc_nodes = cap;
	}
	t->node_addr[n] = addr;
	t->node_id[n] = id;
	t->node_ticks[n] = ticks;
	/* parents are resolved from their ids once everything is read */
	t->node_parent[n] = HS_TRACE_NONE;
	t->node_module[n] = HS_TRACE_NONE;
	t->nr_nodes = n + 1;
	*slot = (uint32_t)(n + 1);
	return 0;
}

/* Thread index of @tid, added if new (a small hash keeps it O(1)). */
struct tid_map {
	uint64_t *key;
	uint32_t *val;
	size_t n, cap;
};

static int thread_index(struct hs_trace *t, struct tid_map *m, uint64_t tid,
			uint32_t *out)
{
	size_t i, mask;

	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64, j;
		uint64_t *k = hs_calloc(cap, sizeof(uint64_t));
		uint32_t *v = hs_calloc(cap, sizeof(uint32_t));

		if (!k || !v) {
			hs_free(k);
			hs_free(v);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->val[j])
				continue;
			i = hs_hash_u64(m->key[j]) & (cap - 1);
			while (v[i])
				i = (i + 1) & (cap - 1);
			k[i] = m->key[j];
			v[i] = m->val[j];
		}
		hs_free(m->key);
		hs_free(m->val);
		m->key = k;
		m->val = v;
		m->cap = cap;
	}
	mask = m->cap - 1;
	i = hs_hash_u64(tid) & mask;
	while (m->val[i] && m->key[i] != tid)
		i = (i + 1) & mask;
	if (m->val[i]) {
		*out = m->val[i] - 1;
		return 0;
	}
	if (t->nr_threads >= UINT32_MAX - 1 ||
	    HS_GROW(t->threads, t->nr_threads + 1, t->alloc_threads))
		return -ENOMEM;
	memset(&t->threads[t->nr_threads], 0, sizeof(t->threads[0]));
	t->threads[t->nr_threads].tid = tid;
	t->threads[t->nr_threads].start_ns = -1;
	t->threads[t->nr_threads].exit_ns = -1;
	m->key[i] = tid;
	m->val[i] = (uint32_t)++t->nr_threads;
	m->n++;
	*out = (uint32_t)(t->nr_threads - 1);
	return 0;
}

static int grow_events(struct hs_trace *t, size_t need)
{
	size_t cap = t->alloc_events;
	void *p;

	if (need <= cap)
		return 0;
	cap = t->alloc_events ? t->alloc_events + t->alloc_events / 2 : 1024;
	if (cap < need)
		cap = need;
#define GROW_COL(col)                                                   \
	do {                                                            \
		p = hs_realloc(t->col, cap * sizeof(*t->col));          \
		if (!p)                                                 \
			return -ENOMEM;                                 \
		t->col = p;                                             \
	} while (0)
	GROW_COL(time);
	GROW_COL(addr);
	GROW_COL(size);
	GROW_COL(stack);
	GROW_COL(thread);
	GROW_COL(op);
	GROW_COL(fn);
#undef GROW_COL
	t->alloc_events = cap;
	return 0;
}

/*
 * The loader's state. An event's stack is resolved to a node index when
 * its node is already known (the usual case: a 1-entry cache, then the id
 * index); an event whose node is defined later in the file keeps its id
 * in @pending until the end.
 */
struct pending {
	size_t ev;			/* event index */
	uint64_t id;			/* its node id */
};

struct stream;

struct load_state {
	struct tid_map tids;
	struct pending *pending;
	size_t nr_pending, alloc_pending;
	uint64_t last_ticks;
	unsigned sym_section;		/* the symbol section being read */
	unsigned flags;			/* enum hs_trace_load_flags */
	uint64_t cache_id;		/* the last node id resolved, 0 = none */
	uint32_t cache_index;
	uint64_t span_tid;		/* the thread of the current span ... */
	uint32_t span_thread;		/* ... and its index */
	int span_valid;
	uint64_t *parent_ids;		/* node index -> parent id */
	size_t alloc_parent_ids;
	struct stream *stream;		/* hs_trace_stream(): events go there */
};

static inline __attribute__((always_inline)) int
stream_event(struct stream *s, uint32_t thread, uint64_t ticks, enum hs_trace_op op,
	     unsigned fn, uint64_t addr, uint64_t size, uint64_t node);

/* The index of node @id (0: no stack), or HS_TRACE_PENDING while unknown. */
#define HS_TRACE_PENDING (UINT32_MAX - 2)
static uint32_t stack_index(const struct hs_trace *t, struct load_state *ls, uint64_t id)
{
	uint32_t k;

	if (!id)
		return HS_TRACE_NONE;
	if (id == ls->cache_id)
		return ls->cache_index;
	k = node_index(t, id);
	if (k == HS_TRACE_NONE)
		return HS_TRACE_PENDING;
	ls->cache_id = id;
	ls->cache_index = k;
	return k;
}

static inline __attribute__((always_inline)) int
add_event(struct hs_trace *t, struct load_state *ls, uint32_t thread,
		     uint64_t ticks, enum hs_trace_op op, unsigned fn, uint64_t addr,
		     uint64_t size, uint64_t stack)
{
	size_t n = t->nr_events;
	uint32_t k;

	if (ticks > ls->last_ticks)
		ls->last_ticks = ticks;
	if (ls->flags & HS_TRACE_NO_EVENTS)
		return 0;
	k = stack_index(t, ls, stack);
	if (ls->stream)
		return stream_event(ls->stream, thread, ticks, op, fn, addr, size,
				    k == HS_TRACE_PENDING ? HS_TRACE_EV_NODE_ID | stack : k);
	if (n == t->alloc_events && grow_events(t, n + 1))
		return -ENOMEM;
	if (k == HS_TRACE_PENDING) {
		if (HS_GROW(ls->pending, ls->nr_pending + 1, ls->alloc_pending))
			return -ENOMEM;
		ls->pending[ls->nr_pending].ev = n;
		ls->pending[ls->nr_pending++].id = stack;
	}
	t->time[n] = (int64_t)ticks;
	t->addr[n] = addr;
	t->size[n] = size;
	t->stack[n] = k;
	t->thread[n] = thread;
	t->op[n] = (uint8_t)op;
	t->fn[n] = (uint8_t)fn;
	t->nr_events = n + 1;
	return 0;
}

static char *dup_bytes(const uint8_t *s, size_t n)
{
	return hs_strndup((const char *)s, n);
}

static int add_record(struct hs_trace *t, struct load_state *ls,
		      const struct hs_rec *rec, const char **why)
{
	uint32_t th;
	int err;

	if (rec->tag == HS_TAG_NODE)
		return add_node(t, rec->id, rec->parent, rec->addr, ls->last_ticks);
	if (rec->tag == HS_TAG_PROCESS) {
		if (t->info.present)
			return 0;
		return hs_trace_info_decode(rec->body, rec->body_len, &t->info, why);
	}
	err = thread_index(t, &ls->tids, rec->tid, &th);
	if (err)
		return err;
	switch (rec->tag) {
	case HS_TAG_SPAN:
		return 0;
	case HS_TAG_MALLOC:
	case HS_TAG_CALLOC:
	case HS_TAG_POSIX_MEMALIGN:
	case HS_TAG_ALIGNED_ALLOC:
	case HS_TAG_MEMALIGN:
	case HS_TAG_VALLOC:
	case HS_TAG_PVALLOC:
	case HS_TAG_REALLOC:
	case HS_TAG_REALLOCARRAY:
		if (hs_tag_is_realloc(rec->tag) && rec->old_addr) {
			uint64_t at = rec->lead <= rec->ticks ? rec->ticks - rec->lead : 0;

			err = add_event(t, ls, th, at, HS_OP_FREE, rec->tag,
					rec->old_addr, 0, 0);
			if (err)
				return err;
		}
		t->threads[th].allocs++;
		t->threads[th].bytes += rec->size;
		return add_event(t, ls, th, rec->ticks, HS_OP_ALLOC, rec->tag, rec->addr,
				 rec->size, rec->stack);
	case HS_TAG_FREE:
	case HS_TAG_REALLOC_FREE:
		t->threads[th].frees++;
		return add_event(t, ls, th, rec->ticks, HS_OP_FREE, rec->tag, rec->addr,
				 0, 0);
	case HS_TAG_MMAP:
		return add_event(t, ls, th, rec->ticks, HS_OP_MMAP, rec->tag, rec->addr,
				 rec->size, rec->stack);
	case HS_TAG_MUNMAP:
		return add_event(t, ls, th, rec->ticks, HS_OP_MUNMAP, rec->tag,
				 rec->addr, rec->size, 0);
	case HS_TAG_MREMAP:
		err = add_event(t, ls, th, rec->ticks, HS_OP_MUNMAP, rec->tag,
				rec->old_addr, rec->old_size, 0);
		if (err)
			return err;
		return add_event(t, ls, th, rec->ticks, HS_OP_MMAP, rec->tag, rec->addr,
				 rec->size, rec->stack);
	case HS_TAG_CLOCK:
		if (t->nr_clock == t->alloc_clock) {
			size_t cap = t->alloc_clock ? 2 * t->alloc_clock : 64;

			if (grow_col((void **)&t->clock_ticks, cap, sizeof(uint64_t)) ||
			    grow_col((void **)&t->clock_ns, cap, sizeof(int64_t)))
				return -ENOMEM;
			t->alloc_clock = cap;
		}
		t->clock_ticks[t->nr_clock] = rec->ticks;
		t->clock_ns[t->nr_clock] = (int64_t)rec->value;
		t->nr_clock++;
		return 0;
	case HS_TAG_RSS:
		if (t->nr_rss == t->alloc_rss) {
			size_t cap = t->alloc_rss ? 2 * t->alloc_rss : 64;

			if (grow_col((void **)&t->rss_time, cap, sizeof(int64_t)) ||
			    grow_col((void **)&t->rss_bytes, cap, sizeof(uint64_t)))
				return -ENOMEM;
			t->alloc_rss = cap;
		}
		t->rss_time[t->nr_rss] = (int64_t)rec->ticks;
		t->rss_bytes[t->nr_rss] = rec->value;
		t->nr_rss++;
		if (rec->ticks > ls->last_ticks)
			ls->last_ticks = rec->ticks;
		return 0;
	case HS_TAG_MODULE: {
		struct hs_trace_module *m;

		if (HS_GROW(t->modules, t->nr_modules + 1, t->alloc_modules))
			return -ENOMEM;
		m = &t->modules[t->nr_modules];
		memset(m, 0, sizeof(*m));
		m->id = rec->id;
		m->bias = rec->bias;
		m->start = rec->start;
		m->end = rec->end;
		m->load_ticks = rec->ticks;
		m->unload_ticks = UINT64_MAX;
		m->unload_node = UINT64_MAX;
		m->path = dup_bytes(rec->str, rec->str_len);
		m->build_id = hs_malloc(rec->bytes_len ? rec->bytes_len : 1);
		if (!m->path || !m->build_id) {
			hs_free(m->path);
			hs_free(m->build_id);
			return -ENOMEM;
		}
		memcpy(m->build_id, rec->bytes, rec->bytes_len);
		m->build_id_len = rec->bytes_len;
		t->nr_modules++;
		return 0;
	}
	case HS_TAG_MODULE_UNLOAD: {
		size_t i;

		for (i = t->nr_modules; i-- > 0;)
			if (t->modules[i].id == rec->id &&
			    t->modules[i].unload_ticks == UINT64_MAX) {
				t->modules[i].unload_ticks = rec->ticks;
				if (rec->parent)
					t->modules[i].unload_node = rec->parent;
				break;
			}
		return 0;
	}
	case HS_TAG_THREAD_START:
	case HS_TAG_THREAD_NAME: {
		char *name;

		if (rec->tag == HS_TAG_THREAD_NAME && rec->id) {
			err = thread_index(t, &ls->tids, rec->id, &th);
			if (err)
				return err;
		}
		name = dup_bytes(rec->str, rec->str_len);
		if (!name)
			return -ENOMEM;
		hs_free(t->threads[th].name);
		t->threads[th].name = name;
		if (rec->tag == HS_TAG_THREAD_START)
			t->threads[th].start_ns = (int64_t)rec->ticks;
		return 0;
	}
	case HS_TAG_THREAD_EXIT:
		t->threads[th].exit_ns = (int64_t)rec->ticks;
		return 0;
	case HS_TAG_END:
		t->has_end = 1;
		t->end_reason = (unsigned)rec->value;
		t->end_detail = rec->detail;
		if (rec->ticks > ls->last_ticks)
			ls->last_ticks = rec->ticks;
		return 0;
	case HS_TAG_FOOTER: {
		const uint8_t *q = rec->body, *end = rec->body + rec->body_len;
		size_t i;

		for (i = 0; i < HS_FC__COUNT; i++)
			if (hs_get_varint(&q, end, &t->footer[i])) {
				*why = "malformed footer";
				return -EINVAL;
			}
		t->has_footer = 1;
		return 0;
	}
	case HS_TAG_SAMPLE:
		if (rec->value > HS_SAMPLE_WALL_READY)
			return 0;	/* a kind from a newer version */
		if (rec->id) {
			err = thread_index(t, &ls->tids, rec->id, &th);
			if (err)
				return err;
		}
		if (rec->value == HS_SAMPLE_CPU)
			t->sampling.cpu_samples++;
		else
			t->sampling.wall_samples++;
		return add_event(t, ls, th, rec->ticks, HS_OP_SAMPLE, rec->tag, rec->value,
				 rec->size, rec->stack);
	case HS_TAG_SAMPLING:
		t->sampling.present = 1;
		t->sampling.cpu_hz = rec->value;
		t->sampling.wall_hz = rec->detail;
		t->sampling.signal = rec->id;
		t->sampling.flags = rec->flags;
		return 0;
	case HS_TAG_SAMPLING_END:
		t->sampling.ended = 1;
		t->sampling.dropped = rec->size;
		t->sampling.signals = rec->old_size;
		return 0;
	default:
		return 0;	/* FORK, EXEC and unknown sized records */
	}
}

/* ticks -> ns with the CLOCK pairs (sorted by ticks). */
static int64_t ticks_to_ns(const struct hs_trace *t, uint64_t ticks)
{
	size_t lo = 0, hi = t->nr_clock, i;
	double rate;

	if (t->info.clock == HS_CLOCK_NS || t->nr_clock == 0)
		return (int64_t)ticks;
	/* last pair with clock_ticks <= ticks */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->clock_ticks[mid] <= ticks)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (t->nr_clock == 1)
		return t->clock_ns[0] + (int64_t)(ticks - t->clock_ticks[0]);
	i = lo == 0 ? 0 : lo - 1;
	if (i + 1 >= t->nr_clock)
		i = t->nr_clock - 2;
	if (t->clock_ticks[i + 1] == t->clock_ticks[i])
		return t->clock_ns[i];
	rate = (double)(t->clock_ns[i + 1] - t->clock_ns[i]) /
	       (double)(t->clock_ticks[i + 1] - t->clock_ticks[i]);
	return t->clock_ns[i] +
	       (int64_t)llround(((double)ticks - (double)t->clock_ticks[i]) * rate);
}

static int cmp_clock(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int sort_clock(struct hs_trace *t)
{
	uint64_t *pairs;
	size_t i, n = t->nr_clock;

	if (n < 2)
		return 0;
	pairs = hs_malloc(2 * n * sizeof(uint64_t));
	if (!pairs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		pairs[2 * i] = t->clock_ticks[i];
		pairs[2 * i + 1] = (uint64_t)t->clock_ns[i];
	}
	qsort(pairs, n, 2 * sizeof(uint64_t), cmp_clock);
	for (i = 0; i < n; i++) {
		t->clock_ticks[i] = pairs[2 * i];
		t->clock_ns[i] = (int64_t)pairs[2 * i + 1];
	}
	hs_free(pairs);
	return 0;
}

/* Stable merge sort of the event permutation @idx by time. */
static void merge_sort(uint32_t *idx, uint32_t *tmp, size_t n, const int64_t *time)
{
	size_t width, i;

	for (width = 1; width < n; width *= 2) {
		for (i = 0; i < n; i += 2 * width) {
			size_t lo = i, mid = i + width < n ? i + width : n;
			size_t hi = i + 2 * width < n ? i + 2 * width : n;
			size_t a = lo, b = mid, k = lo;

			if (mid >= hi || time[idx[mid - 1]] <= time[idx[mid]]) {
				memcpy(tmp + lo, idx + lo, (hi - lo) * sizeof(*idx));
				continue;
			}
			while (a < mid && b < hi)
				tmp[k++] = time[idx[b]] < time[idx[a]] ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[k++] = idx[a++];
			while (b < hi)
				tmp[k++] = idx[b++];
		}
		memcpy(idx, tmp, n * sizeof(*idx));
	}
}

#define PERMUTE(col, type)                                                \
	do {                                                              \
		type *dst = (type *)scratch;                              \
		for (i = 0; i < n; i++)                                   \
			dst[i] = t->col[idx[i]];                          \
		memcpy(t->col, dst, n * sizeof(type));                    \
	} while (0)

static int sort_events(struct hs_trace *t)
{
	size_t n = t->nr_events, i;
	uint32_t *idx, *tmp;
	void *scratch;

	for (i = 1; i < n; i++)
		if (t->time[i] < t->time[i - 1])
			break;
	if (i >= n)
		return 0;
	idx = hs_malloc(n * sizeof(uint32_t));
	tmp = hs_malloc(n * sizeof(uint32_t));
	scratch = hs_malloc(n * sizeof(uint64_t));
	if (!idx || !tmp || !scratch) {
		hs_free(idx);
		hs_free(tmp);
		hs_free(scratch);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	merge_sort(idx, tmp, n, t->time);
	PERMUTE(time, int64_t);
	PERMUTE(addr, uint64_t);
	PERMUTE(size, uint64_t);
	PERMUTE(stack, uint32_t);
	PERMUTE(thread, uint32_t);
	PERMUTE(op, uint8_t);
	PERMUTE(fn, uint8_t);
	hs_free(idx);
	hs_free(tmp);
	hs_free(scratch);
	return 0;
}

/* Whether module @i of @t was loaded before module @j (by time, then id, then file order). */
static int loaded_before(const struct hs_trace *t, size_t i, size_t j)
{
	const struct hs_trace_module *a = &t->modules[i], *b = &t->modules[j];

	if (a->load_ticks != b->load_ticks)
		return a->load_ticks < b->load_ticks;
	if (a->id != b->id)
		return a->id < b->id;
	return i < j;
}

/*
 * Whether module @m may hold node (@a, @id, defined at @tk): it holds the
 * address and was not unloaded before the node was defined (by node id
 * where the unload says, else by time).
 */
static int module_may_hold(const struct hs_trace_module *m, uint64_t a, uint64_t id,
			   uint64_t tk)
{
	if (a < m->start || a >= m->end)
		return 0;
	return m->unload_node != UINT64_MAX ? id < m->unload_node : m->unload_ticks >= tk;
}

/*
 * Module of each node. Among the modules that may hold it, the first
 * loaded whose unload names the next node (so it was unloaded after the
 * node was defined) rules out those loaded after it at those addresses:
 * they came after its unload, after the node. Of the others, the latest
 * loaded no later than the node; failing that, the earliest loaded after
 * it (a load noticed late).
 */
static void resolve_node_modules(struct hs_trace *t)
{
	size_t i, j;

	for (i = 0; i < t->nr_nodes; i++) {
		uint64_t a = t->node_addr[i], tk = t->node_ticks[i], id = t->node_id[i];
		uint32_t before = HS_TRACE_NONE, after = HS_TRACE_NONE, last = HS_TRACE_NONE;

		if (!a)
			continue;
		for (j = 0; j < t->nr_modules; j++)
			if (module_may_hold(&t->modules[j], a, id, tk) &&
			    t->modules[j].unload_node != UINT64_MAX &&
			    (last == HS_TRACE_NONE || loaded_before(t, j, last)))
				last = (uint32_t)j;
		for (j = 0; j < t->nr_modules; j++) {
			const struct hs_trace_module *m = &t->modules[j];

			if (!module_may_hold(m, a, id, tk) ||
			    (last != HS_TRACE_NONE && loaded_before(t, last, j)))
				continue;
			if (m->load_ticks <= tk) {
				if (before == HS_TRACE_NONE ||
				    m->load_ticks >= t->modules[before].load_ticks)
					before = (uint32_t)j;
			} else if (after == HS_TRACE_NONE ||
				   m->load_ticks < t->modules[after].load_ticks) {
				after = (uint32_t)j;
			}
		}
		t->node_module[i] = before != HS_TRACE_NONE ? before : after;
	}
}

/* --- an address -> size map (ties and stats) ---------------------------- */

struct addr_map {
	uint64_t *key;		/* 0 = empty (address 0 is never live) */
	uint64_t *val;
	size_t n, cap;
};

static size_t amap_find(const struct addr_map *m, uint64_t a)
{
	size_t mask = m->cap - 1, i = hs_hash_u64(a) & mask;

	while (m->key[i] && m->key[i] != a)
		i = (i + 1) & mask;
	return i;
}

static int amap_put(struct addr_map *m, uint64_t a, uint64_t v, uint64_t *old)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct addr_map g = { .cap = m->cap ? 2 * m->cap : 1024 };
		size_t j;

		g.key = hs_calloc(g.cap, sizeof(uint64_t));
		g.val = hs_calloc(g.cap, sizeof(uint64_t));
		if (!g.key || !g.val) {
			hs_free(g.key);
			hs_free(g.val);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++)
			if (m->key[j]) {
				i = amap_find(&g, m->key[j]);
				g.key[i] = m->key[j];
				g.val[i] = m->val[j];
			}
		g.n = m->n;
		hs_free(m->key);
		hs_free(m->val);
		*m = g;
	}
	i = amap_find(m, a);
	*old = m->key[i] ? m->val[i] : UINT64_MAX;
	if (!m->key[i])
		m->n++;
	m->key[i] = a;
	m->val[i] = v;
	return 0;
}

/* Remove @a; returns its value or UINT64_MAX. Backward-shift deletion. */
static uint64_t amap_del(struct addr_map *m, uint64_t a)
{
	size_t mask, i, j;
	uint64_t v;

	if (!m->cap)
		return UINT64_MAX;
	mask = m->cap - 1;
	i = amap_find(m, a);
	if (!m->key[i])
		return UINT64_MAX;
	v = m->val[i];
	m->n--;
	j = i;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!m->key[j])
			break;
		home = hs_hash_u64(m->key[j]) & mask;
		/* move j back to i if its home is not in (i, j] cyclically */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->key[i] = m->key[j];
			m->val[i] = m->val[j];
			i = j;
		}
	}
	m->key[i] = 0;
	return v;
}

static int amap_has(const struct addr_map *m, uint64_t a)
{
	return m->cap && m->key[amap_find(m, a)] == a;
}

static void amap_release(struct addr_map *m)
{
	hs_free(m->key);
	hs_free(m->val);
	m->key = m->val = NULL;
	m->n = m->cap = 0;
}

/* --- ordering events of equal time ------------------------------------- */

/*
 * The collector stamps events with a clock of limited resolution, so
 * events of different threads often share a time and their file order is
 * not their real order. Where that matters (one address freed and
 * allocated by several threads in one tick), the events of the address
 * are put in the order that alternates allocation and free, from whether
 * the block was live before the tick, keeping each thread's own order.
 * hs_trace_load() (fix_ties()) and the stream's caller side both do it
 * with order_ties().
 */

struct tie {
	uint64_t addr;
	size_t at;
};

static int cmp_tie(const void *a, const void *b)
{
	const struct tie *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* An address of a tick (order_ties()): the first thread, UINT32_MAX for several. */
struct seen {
	uint64_t addr;
	uint32_t thread, gen;
};

/*
 * order_ties()'s memory, kept from tick to tick and grown as needed
 * (hs_malloc; tie_work_release() frees it).
 */
struct tie_work {
	struct tie *ties;		/* a tick's events of shared addresses */
	size_t alloc_ties;
	struct seen *seen;		/* a tick's addresses */
	size_t alloc_seen;
	uint32_t seen_gen;		/* the entries of this tick: seen[].gen */
	/* one address's events (order_run()), room for @cap of them */
	struct hs_trace_event *run;	/* in file order */
	struct tie *by_thread;		/* (thread, index in run), sorted */
	size_t *group;			/* a thread's events: by_thread[group[g] ..
					 * group[g + 1]) */
	size_t *list;			/* groups by kind; the fallback: each
					 * group's next event in by_thread */
	size_t *heap;			/* the fallback's two heaps of groups */
	size_t *order;			/* the result: order[k] goes k-th */
	size_t cap;
};

static void tie_work_release(struct tie_work *w)
{
	hs_free(w->ties);
	hs_free(w->seen);
	hs_free(w->run);
	hs_free(w->by_thread);
	hs_free(w->group);
	hs_free(w->list);
	hs_free(w->heap);
	hs_free(w->order);
	memset(w, 0, sizeof(*w));
}

/* Room for a run of @r events. 0 or -ENOMEM (the room is then as it was). */
static int tie_work_room(struct tie_work *w, size_t r)
{
	size_t cap = w->cap ? 2 * w->cap : 64;

	if (r <= w->cap)
		return 0;
	if (cap < r)
		cap = r;
	if (grow_col((void **)&w->run, cap, sizeof(*w->run)) ||
	    grow_col((void **)&w->by_thread, cap, sizeof(*w->by_thread)) ||
	    grow_col((void **)&w->group, cap + 1, sizeof(size_t)) ||
	    grow_col((void **)&w->list, cap, sizeof(size_t)) ||
	    grow_col((void **)&w->heap, 2 * cap, sizeof(size_t)) ||
	    grow_col((void **)&w->order, cap, sizeof(size_t)))
		return -ENOMEM;
	w->cap = cap;
	return 0;
}

/* Whether the event at by_thread[@i] is a free. */
#define RUN_FREE(w, i) ((w)->run[(w)->by_thread[i].at].op == HS_OP_FREE)

/* Append group @g's events from its @from-th on to the order; the new length. */
static size_t run_emit(struct tie_work *w, size_t n, size_t g, size_t from)
{
	size_t i;

	for (i = w->group[g] + from; i < w->group[g + 1]; i++)
		w->order[n++] = w->by_thread[i].at;
	return n;
}

/*
 * Append the @nb groups @blocks (which keep the state), the @nn groups
 * @nest (which keep the other state) between the first two events of
 * the first of them; the new length.
 */
static size_t run_emit_all(struct tie_work *w, size_t n, const size_t *blocks, size_t nb,
			   const size_t *nest, size_t nn)
{
	size_t b, k;

	for (b = 0; b < nb; b++) {
		if (b || !nn) {
			n = run_emit(w, n, blocks[b], 0);
			continue;
		}
		w->order[n++] = w->by_thread[w->group[blocks[0]]].at;
		for (k = 0; k < nn; k++)
			n = run_emit(w, n, nest[k], 0);
		n = run_emit(w, n, blocks[0], 1);
	}
	return n;
}

/* The fallback's heaps: groups, the one whose next event is first in the file on top. */
#define HEAP_KEY(w, g) ((w)->by_thread[(w)->list[g]].at)

static void heap_push(struct tie_work *w, size_t *h, size_t *n, size_t g)
{
	size_t i = (*n)++;

	while (i && HEAP_KEY(w, h[(i - 1) / 2]) > HEAP_KEY(w, g)) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = g;
}

static size_t heap_pop(struct tie_work *w, size_t *h, size_t *n)
{
	size_t top = h[0], last = h[--*n], i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && HEAP_KEY(w, h[c + 1]) < HEAP_KEY(w, h[c]))
			c++;
		if (HEAP_KEY(w, last) <= HEAP_KEY(w, h[c]))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

/* A thread's events of the address, by their first and last operation. */
enum { RUN_AA, RUN_AF, RUN_FA, RUN_FF };

/*
 * The order of the @r events of one address in one tick, w->run[] in
 * file order, into w->order[] (order[k] is the event that goes k-th):
 * each thread's own events keep their order, and allocation and free
 * alternate from @live (the block was live before the tick).
 *
 * When each thread's events alternate, each thread's sequence goes whole,
 * by its first and last operation: from "free", the sequences that
 * allocate first and free last (AF: the state stays free), then one
 * AA (now live); from "live", the FA ones, then one FF (now free); and so
 * on. AF sequences with no "free" to go to (live before the tick and no
 * FF) go between the first two events of an FA one, and FA ones with no
 * "live" inside an AF one. That finds an order whenever one exists, in
 * time linear in @r after grouping by thread. When none does (events
 * lost, a double free), each step takes the thread whose next event
 * comes first in the file among those whose next event alternates, else
 * the first (greedy).
 */
static void order_run(struct tie_work *w, size_t r, int live)
{
	size_t ng = 0, nk[4] = { 0 }, first[4], fill[4] = { 0 }, i, g, n = 0;
	size_t *heap[2] = { w->heap, w->heap + r }, nh[2] = { 0, 0 };
	int alternate = 1;

	for (i = 0; i < r; i++) {
		w->by_thread[i].addr = w->run[i].thread;
		w->by_thread[i].at = i;
	}
	qsort(w->by_thread, r, sizeof(*w->by_thread), cmp_tie);
	for (i = 0; i < r; i++) {
		if (!i || w->by_thread[i].addr != w->by_thread[i - 1].addr)
			w->group[ng++] = i;
		else if (RUN_FREE(w, i) == RUN_FREE(w, i - 1))
			alternate = 0;
	}
	w->group[ng] = r;
	if (alternate) {
		const size_t *aa, *af, *fa, *ff;
		size_t iaa = 0, iff = 0;
		int state = live, af_left, fa_left;

		for (g = 0; g < ng; g++)
			nk[2 * RUN_FREE(w, w->group[g]) + RUN_FREE(w, w->group[g + 1] - 1)]++;
		for (first[0] = 0, i = 1; i < 4; i++)
			first[i] = first[i - 1] + nk[i - 1];
		for (g = 0; g < ng; g++) {
			int k = 2 * RUN_FREE(w, w->group[g]) + RUN_FREE(w, w->group[g + 1] - 1);

			w->list[first[k] + fill[k]++] = g;
		}
		aa = w->list + first[RUN_AA];
		af = w->list + first[RUN_AF];
		fa = w->list + first[RUN_FA];
		ff = w->list + first[RUN_FF];
		af_left = nk[RUN_AF] > 0;
		fa_left = nk[RUN_FA] > 0;
		for (;;) {
			if (!state) {
				if (af_left) {
					/* no AA to come: the FA ones go inside */
					int nest = fa_left && iaa == nk[RUN_AA];

					n = run_emit_all(w, n, af, nk[RUN_AF], fa,
							 nest ? nk[RUN_FA] : 0);
					fa_left &= !nest;
					af_left = 0;
				}
				if (iaa == nk[RUN_AA])
					break;
				n = run_emit(w, n, aa[iaa++], 0);
			} else {
				if (fa_left) {
					int nest = af_left && iff == nk[RUN_FF];

					n = run_emit_all(w, n, fa, nk[RUN_FA], af,
							 nest ? nk[RUN_AF] : 0);
					af_left &= !nest;
					fa_left = 0;
				}
				if (iff == nk[RUN_FF])
					break;
				n = run_emit(w, n, ff[iff++], 0);
			}
			state = !state;
		}
		if (n == r)
			return;
	}
	/* the greedy fallback: w->list[g] is group g's next event */
	for (g = 0; g < ng; g++) {
		w->list[g] = w->group[g];
		heap_push(w, heap[RUN_FREE(w, w->group[g])], &nh[RUN_FREE(w, w->group[g])], g);
	}
	for (n = 0; n < r; n++) {
		/* live: a free, else an allocation; failing that, the first */
		int h = nh[live] ? live : !live;

		g = heap_pop(w, heap[h], &nh[h]);
		w->order[n] = w->by_thread[w->list[g]].at;
		live = !RUN_FREE(w, w->list[g]);
		if (++w->list[g] < w->group[g + 1]) {
			int f = RUN_FREE(w, w->list[g]);

			heap_push(w, heap[f], &nh[f], g);
		}
	}
}

#undef RUN_FREE
#undef HEAP_KEY

static inline int is_heap_op(uint8_t op)
{
	return op == HS_OP_ALLOC || op == HS_OP_FREE;
}

/* A slot for address @a (a multiplicative hash: the table lives for one tick). */
static inline size_t seen_slot(uint64_t a, size_t mask)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 29) & mask;
}

/*
 * Order the @n events of one tick, @grp (in file order), where several
 * threads' events of one address share it (order_run()); @live says
 * whether the block at an address was live before the tick. Returns 1
 * when events moved, 0 when not, or -ENOMEM.
 */
static int order_ties(struct tie_work *w, struct hs_trace_event *grp, size_t n,
		      int (*live)(void *ctx, uint64_t addr), void *ctx)
{
	size_t i, k, nt = 0, cap = 16, mask;
	uint32_t gen;
	int shared = 0, moved = 0;

	/* the addresses several threads touch: a hash of the tick's
	 * addresses with the first thread seen and whether another came
	 * (entries of older ticks have another generation) */
	while (cap < 2 * n)
		cap *= 2;
	if (cap > w->alloc_seen) {
		hs_free(w->seen);
		w->seen = hs_calloc(cap, sizeof(*w->seen));
		w->alloc_seen = w->seen ? cap : 0;
		if (!w->seen)
			return -ENOMEM;
		w->seen_gen = 0;
	}
	if (++w->seen_gen == 0) {
		memset(w->seen, 0, w->alloc_seen * sizeof(*w->seen));
		w->seen_gen = 1;
	}
	gen = w->seen_gen;
	mask = w->alloc_seen - 1;
	for (i = 0; i < n; i++) {
		uint64_t a = grp[i].addr;

		if (!is_heap_op(grp[i].op) || !a)
			continue;
		k = seen_slot(a, mask);
		while (w->seen[k].gen == gen && w->seen[k].addr != a)
			k = (k + 1) & mask;
		if (w->seen[k].gen != gen) {
			w->seen[k].addr = a;
			w->seen[k].thread = grp[i].thread;
			w->seen[k].gen = gen;
		} else if (w->seen[k].thread != grp[i].thread) {
			w->seen[k].thread = UINT32_MAX;	/* several threads */
			shared = 1;
		}
	}
	/* nearly always: each thread has addresses of its own */
	for (i = 0; shared && i < n; i++) {
		uint64_t a = grp[i].addr;

		if (!is_heap_op(grp[i].op) || !a)
			continue;
		k = seen_slot(a, mask);
		while (w->seen[k].addr != a)
			k = (k + 1) & mask;
		if (w->seen[k].thread != UINT32_MAX)
			continue;
		if (HS_GROW(w->ties, nt + 1, w->alloc_ties))
			return -ENOMEM;
		w->ties[nt].addr = a;
		w->ties[nt++].at = i;
	}
	if (nt > 1)
		qsort(w->ties, nt, sizeof(*w->ties), cmp_tie);
	for (k = 0; k < nt;) {
		size_t e = k + 1, r;

		while (e < nt && w->ties[e].addr == w->ties[k].addr)
			e++;
		r = e - k;
		if (tie_work_room(w, r))
			return -ENOMEM;
		for (i = 0; i < r; i++)
			w->run[i] = grp[w->ties[k + i].at];
		order_run(w, r, !!live(ctx, w->ties[k].addr));
		for (i = 0; i < r; i++) {
			moved |= w->order[i] != i;
			grp[w->ties[k + i].at] = w->run[w->order[i]];
		}
		k = e;
	}
	return moved;
}

void hs_trace_event_get(const struct hs_trace *t, size_t i, struct hs_trace_event *e)
{
	e->time = t->time[i];
	e->addr = t->addr[i];
	e->size = t->size[i];
	e->node = t->stack[i];
	e->thread = t->thread[i];
	e->op = t->op[i];
	e->fn = t->fn[i];
}

/* The reverse of hs_trace_event_get(). */
static void event_put(struct hs_trace *t, size_t i, const struct hs_trace_event *e)
{
	t->time[i] = e->time;
	t->addr[i] = e->addr;
	t->size[i] = e->size;
	t->stack[i] = (uint32_t)e->node;
	t->thread[i] = e->thread;
	t->op[i] = e->op;
	t->fn[i] = e->fn;
}

static int amap_live(void *ctx, uint64_t a)
{
	return amap_has(ctx, a);
}

/* order_ties() over the ticks of a loaded trace with several threads' events. */
static int fix_ties(struct hs_trace *t)
{
	struct tie_work w;
	struct addr_map live = { 0 };
	struct hs_trace_event *grp = NULL;
	size_t alloc_grp = 0, i = 0, n = t->nr_events, k;
	uint64_t old;
	int err = 0;

	if (t->nr_threads < 2)
		return 0;
	memset(&w, 0, sizeof(w));
	while (i < n && !err) {
		size_t j = i + 1;
		int multi = 0;

		while (j < n && t->time[j] == t->time[i]) {
			multi |= t->thread[j] != t->thread[i];
			j++;
		}
		if (multi) {
			if (HS_GROW(grp, j - i, alloc_grp)) {
				err = -ENOMEM;
				break;
			}
			for (k = i; k < j; k++)
				hs_trace_event_get(t, k, &grp[k - i]);
			err = order_ties(&w, grp, j - i, amap_live, &live);
			if (err > 0)
				for (k = i; k < j; k++)
					event_put(t, k, &grp[k - i]);
			if (err > 0)
				err = 0;
		}
		for (k = i; k < j && !err; k++) {
			if (t->op[k] == HS_OP_ALLOC)
				err = amap_put(&live, t->addr[k], 1, &old);
			else if (t->op[k] == HS_OP_FREE)
				amap_del(&live, t->addr[k]);
		}
		i = j;
	}
	hs_free(grp);
	tie_work_release(&w);
	amap_release(&live);
	return err;
}

/* --- streaming ------------------------------------------------------------- */

/*
 * The events go from the reading thread to the caller's thread in
 * batches of whole groups (the events of one time), through a ring of
 * NR_BATCHES batches: reading and the sink's work overlap.
 *
 * The reorder window: threads' events reach the file in the order the
 * collector drained their buffers, so one thread's events may come after
 * later ones of another thread (each thread's own are in order). The
 * reading side keeps events back, in order, in a staging array: with the
 * footer's chunk index, those that an event of a chunk still to come may
 * go before (stream_chunk()); without it, the last STREAM_WINDOW. In the
 * staging array, a thread's events that come after later ones (a "run")
 * are gathered and merged into it in one pass, after the events of their
 * time already there, as in file order. A batch ends where the time
 * changes. An event older than what was handed over stops the stream
 * (-EAGAIN: the caller loads the trace whole).
 */
#define BATCH_EVENTS 2048
#define NR_BATCHES 8
#define STREAM_WINDOW ((size_t)1 << 17)
#define STREAM_SLICE 4096
/* with the chunk index: the chunks after the current one that are not
 * read ahead (stream_chunk()) */
#define STREAM_AHEAD 1
/* a staging buffer that grows or is taken anew has room for STREAM_ROOM
 * times the events that need it; all hold at most STREAM_BUDGET times */
#define STREAM_ROOM 2
#define STREAM_BUDGET 5

/*
 * A batch is a stretch of a staging buffer: the reading side stages
 * events in one buffer and hands them over where they are; it moves on to
 * another buffer when the current one is full while batches still use it.
 */
struct batch {
	struct hs_trace_event *ev;	/* n events */
	size_t n;
	unsigned buf;			/* in stream.buf[] */
};

struct evbuf {
	struct hs_trace_event *ev;
	size_t alloc;
	unsigned refs;			/* batches handed over from it (under mu) */
};

#define NR_BUFS (NR_BATCHES + 2)

struct stream {
	const struct hs_trace_sink *sink;
	/*
	 * The ring: batches [tail, head) are handed over, [head, head +
	 * held) are the reading side's (the last one being filled), the
	 * others free.
	 */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[NR_BATCHES];
	size_t head, tail;
	int done, stop;
	/* the reorder window (the reading thread) */
	struct evbuf buf[NR_BUFS];
	unsigned cur;			/* the buffer that stage and st_alloc are */
	struct hs_trace_event *stage;	/* waiting events, in order: [st_head, st_end) */
	size_t st_head, st_end, st_alloc;
	struct hs_trace_event *run;	/* a late thread's events, until they merge */
	size_t run_n, run_alloc;
	uint32_t run_thread;		/* the thread whose events come now */
	int in_run;			/* they go to @run, not to @stage */
	/*
	 * The footer's chunk index, when the trace has one: EVENTS chunks'
	 * offsets (increasing) and the lowest time each can hold (its first
	 * ticks, or what stream_peek() found; idx_first[nidx] is INT64_MAX),
	 * and a tree of the lowest of them (stream_lowest()). Events older
	 * than what the chunks still to come can hold go on; without an
	 * index, all but the last STREAM_WINDOW.
	 */
	uint64_t *idx_off;
	int64_t *idx_first;
	uint8_t *idx_peeked;		/* stream_peek() read the chunk */
	size_t *idx_tree;		/* 2 * idx_leaves: chunks, the lowest first */
	size_t nidx, idx_leaves;
	uint8_t *peek_stored, *peek_raw;	/* stream_peek()'s buffers */
	size_t alloc_peek_stored, alloc_peek_raw;
	size_t peeks;			/* chunks stream_peek() read */
	size_t staged_max;		/* the most events kept back at a chunk's start */
	int read_err;			/* what reading returned */
	int published;			/* some events were handed over ... */
	int64_t pub_time;		/* ... the last of them at this time */
	struct tie_work ties;		/* the caller's side: order_ties() */
};

/*
 * Hand the oldest @n staged events (and the rest of their tick) over as a
 * batch with its groups (the reading thread).
 */
static int stream_publish(struct stream *s, size_t n)
{
	struct hs_trace_event *ev = s->stage + s->st_head;
	size_t avail = s->st_end - s->st_head;
	struct batch *b;
	int stop;

	if (n > avail)
		n = avail;
	if (!n)
		return 0;
	while (n < avail && ev[n].time == ev[n - 1].time)
		n++;
	pthread_mutex_lock(&s->mu);
	while (s->head - s->tail >= NR_BATCHES && !s->stop)
		pthread_cond_wait(&s->cv, &s->mu);
	stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	if (stop)
		return -ECANCELED;
	b = &s->b[s->head % NR_BATCHES];
	b->ev = ev;
	b->n = n;
	b->buf = s->cur;
	s->st_head += n;
	s->published = 1;
	s->pub_time = ev[n - 1].time;
	pthread_mutex_lock(&s->mu);
	s->buf[s->cur].refs++;
	s->head++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/*
 * Room for @n more staged events: in place when no batch uses the buffer
 * (moving the waiting events to the front, or growing it), else the
 * waiting events move to a buffer no batch uses. The buffers hold at
 * most STREAM_BUDGET times the events that need room (with some for what
 * comes next): above that, the reading side waits for the caller's side
 * to hand batches back instead of taking more memory.
 */
static int stage_room(struct stream *s, size_t n)
{
	size_t waiting = s->st_end - s->st_head, need = waiting + n;
	size_t a = STREAM_ROOM * need > STREAM_WINDOW ? STREAM_ROOM * need : STREAM_WINDOW;
	size_t budget = STREAM_BUDGET * (need > STREAM_WINDOW ? need : STREAM_WINDOW);
	struct evbuf *to = NULL;
	unsigned i;

	if (s->st_end + n <= s->st_alloc)
		return 0;
	pthread_mutex_lock(&s->mu);
	while (s->buf[s->cur].refs) {
		size_t total = 0;

		/* a free buffer: the smallest one with room, else the largest */
		to = NULL;
		for (i = 0; i < NR_BUFS; i++) {
			struct evbuf *b = &s->buf[i];

			total += b->alloc;
			if (i == s->cur || b->refs)
				continue;
			if (!to || (b->alloc >= need ? to->alloc < need || b->alloc < to->alloc :
				    to->alloc < need && b->alloc > to->alloc))
				to = b;
		}
		/* (there is always one: NR_BATCHES batches and the current) */
		if (to && (to->alloc >= need || total - to->alloc + a <= budget))
			break;
		to = NULL;
		pthread_cond_wait(&s->cv, &s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	if (!to) {
		struct evbuf *c = &s->buf[s->cur];

		if (s->st_head)
			memmove(s->stage, s->stage + s->st_head, waiting * sizeof(*s->stage));
		if (need > s->st_alloc - s->st_alloc / 4) {
			/* (room for as many again: moving the waiting events
			 * to the front each time would cost more) */
			if (HS_GROW(c->ev, a, c->alloc)) {
				s->st_head = 0;
				s->st_end = waiting;
				return -ENOMEM;
			}
			s->stage = c->ev;
			s->st_alloc = c->alloc;
		}
	} else {
		if (to->alloc < need) {
			hs_free(to->ev);
			to->alloc = 0;
			to->ev = hs_malloc(a * sizeof(*to->ev));
			if (!to->ev)
				return -ENOMEM;
			to->alloc = a;
		}
		memcpy(to->ev, s->stage + s->st_head, waiting * sizeof(*s->stage));
		s->cur = (unsigned)(to - s->buf);
		s->stage = to->ev;
		s->st_alloc = to->alloc;
	}
	s->st_head = 0;
	s->st_end = waiting;
	return 0;
}

/*
 * Merge the gathered run into the staged events (the reading thread),
 * from the back: only the staged events later than the run's first move.
 */
static int stream_merge(struct stream *s)
{
	const struct hs_trace_event *r = s->run;
	struct hs_trace_event *st;
	size_t i, j, k;
	int err;

	s->in_run = 0;
	if (!s->run_n)
		return 0;
	if (s->published && r[0].time <= s->pub_time)
		return -EAGAIN;	/* later than the window: load it whole */
	err = stage_room(s, s->run_n);
	if (err)
		return err;
	st = s->stage;
	i = s->st_end;
	j = s->run_n;
	k = i + j;
	/* equal times: the staged events were earlier in the file */
	while (j) {
		if (i > s->st_head && st[i - 1].time > r[j - 1].time)
			st[--k] = st[--i];
		else
			st[--k] = r[--j];
	}
	s->st_end += s->run_n;
	s->run_n = 0;
	return 0;
}

static inline __attribute__((always_inline)) int
stream_event(struct stream *s, uint32_t thread, uint64_t ticks, enum hs_trace_op op,
	     unsigned fn, uint64_t addr, uint64_t size, uint64_t node)
{
	struct hs_trace_event *e;
	int err;

	if (thread != s->run_thread) {
		/* another thread's events: the late ones gathered so far merge */
		if (s->in_run && (err = stream_merge(s)))
			return err;
		s->run_thread = thread;
		s->in_run = s->st_end > s->st_head &&
			    (int64_t)ticks < s->stage[s->st_end - 1].time;
	}
	if (s->in_run) {
		if (s->run_n == s->run_alloc && HS_GROW(s->run, s->run_n + 1, s->run_alloc))
			return -ENOMEM;
		e = &s->run[s->run_n++];
	} else {
		if (s->published && (int64_t)ticks <= s->pub_time)
			return -EAGAIN;
		if (s->st_end == s->st_alloc && (err = stage_room(s, 1)))
			return err;
		e = &s->stage[s->st_end++];
	}
	e->time = (int64_t)ticks;
	e->addr = addr;
	e->size = size;
	e->node = node;
	e->thread = thread;
	e->op = (uint8_t)op;
	e->fn = (uint8_t)fn;
	if (s->nidx || s->st_end - s->st_head < STREAM_WINDOW + BATCH_EVENTS)
		return 0;
	return stream_publish(s, BATCH_EVENTS);
}

/* Of chunks @a and @b, the one that can hold the lower time (the first on a tie). */
static inline size_t lower_chunk(const struct stream *s, size_t a, size_t b)
{
	if (s->idx_first[b] < s->idx_first[a] || (s->idx_first[b] == s->idx_first[a] && b < a))
		return b;
	return a;
}

/* Chunk @i can hold nothing older than @v now. */
static void stream_set_first(struct stream *s, size_t i, int64_t v)
{
	size_t k = s->idx_leaves + i;

	s->idx_first[i] = v;
	for (k /= 2; k; k /= 2)
		s->idx_tree[k] = lower_chunk(s, s->idx_tree[2 * k], s->idx_tree[2 * k + 1]);
}

/* The chunk from @i on that can hold the oldest events (nidx: none). */
static size_t stream_lowest(const struct stream *s, size_t i)
{
	size_t l = s->idx_leaves + i, h = s->idx_leaves + s->nidx, best = s->nidx;

	for (; l < h; l /= 2, h /= 2) {
		if (l & 1)
			best = lower_chunk(s, best, s->idx_tree[l++]);
		if (h & 1)
			best = lower_chunk(s, best, s->idx_tree[--h]);
	}
	return best;
}

/*
 * The lowest time of the events chunk @i holds, read from the chunk
 * itself (the reading thread, while it reads an earlier chunk). Its first
 * ticks in the index are its threads' times before it, far too low when
 * one of them was idle for long. Returns INT64_MIN when it cannot tell:
 * the index's bound stays (reading the chunk in its turn reports what is
 * wrong with it).
 */
static int64_t stream_peek(struct stream *s, struct hs_trace_reader *r, size_t i)
{
	uint64_t off = s->idx_off[i];
	struct hs_chunk_header ch;
	struct hs_rec_state st;
	struct hs_rec rec;
	const uint8_t *hdr, *q, *e;
	const char *why;
	int64_t low = INT64_MAX;

	s->peeks++;
	if (off > r->size || r->size - off < HS_CHUNK_HEADER_SIZE ||
	    read_buf(r, off, HS_CHUNK_HEADER_SIZE, &s->peek_stored, &s->alloc_peek_stored,
		     &hdr) ||
	    hs_chunk_header_parse(hdr, &ch) || ch.kind != HS_CHUNK_EVENTS ||
	    ch.stored > HS_CHUNK_MAX || ch.raw > HS_CHUNK_MAX ||
	    r->size - off - HS_CHUNK_HEADER_SIZE < ch.stored ||
	    read_buf(r, off + HS_CHUNK_HEADER_SIZE, ch.stored, &s->peek_stored,
		     &s->alloc_peek_stored, &q))
		return INT64_MIN;
	e = q + ch.stored;
	if (ch.flags & HS_CHUNK_ZSTD) {
		if (HS_GROW(s->peek_raw, ch.raw ? ch.raw : 1, s->alloc_peek_raw))
			return INT64_MIN;
		if (ZSTD_decompress(s->peek_raw, ch.raw, q, ch.stored) != ch.raw)
			return INT64_MIN;
		q = s->peek_raw;
		e = q + ch.raw;
	}
	memset(&st, 0, sizeof(st));
	while (q < e) {
		uint64_t at;

		if (hs_rec_decode(&q, e, &st, &rec, &why))
			return INT64_MIN;
		if (rec.tag >= HS_TAG_MALLOC && rec.tag <= HS_TAG_MREMAP) {
			/* (a realloc's free goes before it: its lead) */
			at = hs_tag_is_realloc(rec.tag) && rec.lead <= rec.ticks ?
				rec.ticks - rec.lead : hs_tag_is_realloc(rec.tag) ? 0 : rec.ticks;
		} else if (rec.tag == HS_TAG_SAMPLE) {
			at = rec.ticks;
		} else {
			continue;
		}
		if (at > INT64_MAX)
			return INT64_MIN;
		if ((int64_t)at < low)
			low = (int64_t)at;
	}
	return low;
}

/*
 * A chunk of the trace @r reads starts at @offset (the reading thread):
 * with the index, the staged events older than every event still to come
 * go on. The chunk that can hold the oldest of them, when it is not one
 * of the next STREAM_AHEAD + 1, is read ahead for its real lowest time
 * (stream_peek()), once: a thread idle for long (a main thread that waits
 * for its workers and frees at exit) otherwise keeps every event back
 * until it writes again.
 */
static int stream_chunk(struct stream *s, struct hs_trace_reader *r, uint64_t offset)
{
	size_t lo = 0, hi = s->nidx, n, at;
	int64_t low;
	int err;

	if (s->st_end - s->st_head + s->run_n > s->staged_max)
		s->staged_max = s->st_end - s->st_head + s->run_n;
	if (!s->nidx)
		return 0;
	if (s->in_run && (err = stream_merge(s)))
		return err;
	s->run_thread = UINT32_MAX;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->idx_off[mid] < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (;;) {
		int64_t v;

		at = stream_lowest(s, lo);
		if (at == s->nidx || at <= lo + STREAM_AHEAD || s->idx_peeked[at])
			break;
		s->idx_peeked[at] = 1;
		v = stream_peek(s, r, at);
		if (v != INT64_MIN)
			stream_set_first(s, at, v);
	}
	low = s->idx_first[at];
	for (;;) {
		lo = s->st_head;
		hi = s->st_end;
		if (lo == hi || s->stage[lo].time >= low)
			return 0;
		/* the events before @low */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (s->stage[mid].time < low)
				lo = mid + 1;
			else
				hi = mid;
		}
		n = lo - s->st_head;
		err = stream_publish(s, n);
		if (err)
			return err;
	}
}

/*
 * Read the footer's chunk index of the trace @r has open, if it has one
 * (its last END chunk holds it), into @s. Anything odd leaves @s without
 * an index: the stream then keeps a window of events back instead.
 */
static void stream_index(struct hs_trace_reader *r, struct stream *s)
{
	uint64_t off = HS_FILE_HEADER_SIZE, end_off = 0, v, n, i;
	struct hs_chunk_header ch;
	struct hs_rec_state st;
	struct hs_rec rec;
	const uint8_t *hdr, *q, *e;
	uint8_t *raw = NULL;
	const char *why;

	while (r->size - off >= HS_CHUNK_HEADER_SIZE) {
		if (read_at(r, off, HS_CHUNK_HEADER_SIZE, &hdr) ||
		    hs_chunk_header_parse(hdr, &ch) || ch.stored > HS_CHUNK_MAX ||
		    ch.raw > HS_CHUNK_MAX || r->size - off - HS_CHUNK_HEADER_SIZE < ch.stored)
			break;
		if (ch.kind == HS_CHUNK_END)
			end_off = off;
		off += HS_CHUNK_HEADER_SIZE + ch.stored;
	}
	if (!end_off || read_at(r, end_off, HS_CHUNK_HEADER_SIZE, &hdr) ||
	    hs_chunk_header_parse(hdr, &ch))
		return;
	if (read_at(r, end_off + HS_CHUNK_HEADER_SIZE, ch.stored, &q))
		return;
	e = q + ch.stored;
	if (ch.flags & HS_CHUNK_ZSTD) {
		raw = hs_malloc(ch.raw ? ch.raw : 1);
		if (!raw || ZSTD_isError(ZSTD_decompress(raw, ch.raw, q, ch.stored)))
			goto out;
		q = raw;
		e = raw + ch.raw;
	}
	memset(&st, 0, sizeof(st));
	while (q < e && !hs_rec_decode(&q, e, &st, &rec, &why)) {
		const uint8_t *b, *be;

		if (rec.tag != HS_TAG_FOOTER || !rec.body)
			continue;
		b = rec.body;
		be = rec.body + rec.body_len;
		for (i = 0; i < HS_FC__COUNT; i++)
			if (hs_get_varint(&b, be, &v))
				goto out;
		if (hs_get_varint(&b, be, &n) || n > (uint64_t)(be - b) / 3)
			goto out;
		for (s->idx_leaves = 1; s->idx_leaves < n + 1; s->idx_leaves *= 2)
			;
		s->idx_off = hs_malloc((n + 1) * sizeof(uint64_t));
		s->idx_first = hs_malloc((n + 1) * sizeof(int64_t));
		s->idx_peeked = hs_calloc(n + 1, 1);
		s->idx_tree = hs_malloc(2 * s->idx_leaves * sizeof(size_t));
		if (!s->idx_off || !s->idx_first || !s->idx_peeked || !s->idx_tree)
			goto bad;
		for (i = 0; i < n; i++) {
			uint64_t first, last;

			if (hs_get_varint(&b, be, &s->idx_off[i]) ||
			    hs_get_varint(&b, be, &first) || hs_get_varint(&b, be, &last) ||
			    (i && s->idx_off[i] <= s->idx_off[i - 1]))
				goto bad;
			/* a chunk without events says UINT64_MAX */
			s->idx_first[i] = first > INT64_MAX ? INT64_MAX : (int64_t)first;
		}
		s->idx_first[n] = INT64_MAX;
		s->nidx = (size_t)n;
		for (i = 0; i < s->idx_leaves; i++)
			s->idx_tree[s->idx_leaves + i] = i < n ? i : n;
		for (i = s->idx_leaves; i-- > 1;)
			s->idx_tree[i] = lower_chunk(s, s->idx_tree[2 * i],
						     s->idx_tree[2 * i + 1]);
		goto out;
	}
	goto out;
bad:
	hs_free(s->idx_off);
	hs_free(s->idx_first);
	hs_free(s->idx_peeked);
	hs_free(s->idx_tree);
	s->idx_off = NULL;
	s->idx_first = NULL;
	s->idx_peeked = NULL;
	s->idx_tree = NULL;
	s->nidx = 0;
out:
	hs_free(raw);
}

/* Hand over every staged event (the end of the file). */
static int stream_drain(struct stream *s)
{
	int err = s->in_run ? stream_merge(s) : 0;

	if (s->st_end - s->st_head > s->staged_max)
		s->staged_max = s->st_end - s->st_head;
	while (!err && s->st_end > s->st_head)
		err = stream_publish(s, BATCH_EVENTS);
	return err;
}

static int finish(struct hs_trace *t, struct load_state *ls)
{
	size_t i, k;
	int err;
	uint32_t missing = HS_TRACE_NONE;

	err = sort_clock(t);
	if (err)
		return err;
	for (k = 0; k < ls->nr_pending; k++) {
		i = ls->pending[k].ev;
		t->stack[i] = node_index(t, ls->pending[k].id);
		if (t->stack[i] == HS_TRACE_NONE) {
			t->missing_nodes++;
			if (missing == HS_TRACE_NONE) {
				/* a BROKEN node (address 0) stands for the lost stack */
				err = add_node(t, UINT64_MAX, 0, 0, 0);
				if (err)
					return err;
				missing = node_index(t, UINT64_MAX);
			}
			t->stack[i] = missing;
		}
	}
	if (t->info.clock != HS_CLOCK_NS && t->nr_clock)
		for (i = 0; i < t->nr_events; i++)
			t->time[i] = ticks_to_ns(t, (uint64_t)t->time[i]);
	for (i = 0; i < t->nr_rss; i++)
		t->rss_time[i] = ticks_to_ns(t, (uint64_t)t->rss_time[i]);
	for (i = 0; i < t->nr_threads; i++) {
		if (t->threads[i].start_ns >= 0)
			t->threads[i].start_ns = ticks_to_ns(t, (uint64_t)t->threads[i].start_ns);
		if (t->threads[i].exit_ns >= 0)
			t->threads[i].exit_ns = ticks_to_ns(t, (uint64_t)t->threads[i].exit_ns);
	}
	t->duration_ns = ticks_to_ns(t, ls->last_ticks);
	resolve_node_modules(t);
	err = hs__trace_syms_resolve(t);
	if (err || ls->stream)
		return err;
	err = sort_events(t);
	if (err)
		return err;
	return fix_ties(t);
}

static void load_state_release(struct load_state *ls)
{
	hs_free(ls->tids.key);
	hs_free(ls->tids.val);
	hs_free(ls->pending);
	hs_free(ls->parent_ids);
}

/* The thread index of the current span (cached until the next SPAN). */
static inline int span_thread(struct hs_trace *t, struct load_state *ls, uint64_t tid,
			      uint32_t *th)
{
	int err;

	if (ls->span_valid && ls->span_tid == tid) {
		*th = ls->span_thread;
		return 0;
	}
	err = thread_index(t, &ls->tids, tid, th);
	if (!err) {
		ls->span_tid = tid;
		ls->span_thread = *th;
		ls->span_valid = 1;
	}
	return err;
}

/* Remember node @index's parent id (parents are resolved at the end). */
static int note_parent(struct hs_trace *t, struct load_state *ls, size_t before,
		       uint64_t parent)
{
	if (t->nr_nodes == before)
		return 0;
	if (HS_GROW(ls->parent_ids, t->nr_nodes, ls->alloc_parent_ids))
		return -ENOMEM;
	ls->parent_ids[before] = parent;
	return 0;
}

/* hs_get_varint() with the one-byte case first: most fields are small. */
static inline int get_u(const uint8_t **q, const uint8_t *end, uint64_t *v)
{
	if (*q < end && **q < 0x80) {
		*v = *(*q)++;
		return 0;
	}
	return hs_get_varint(q, end, v);
}

static inline int get_s(const uint8_t **q, const uint8_t *end, int64_t *v)
{
	uint64_t u;

	if (get_u(q, end, &u))
		return -1;
	*v = hs_unzigzag(u);
	return 0;
}

#define FGET(v)                                                           \
	do {                                                              \
		if (get_u(&q, end, &(v)))                                 \
			return 0;                                         \
	} while (0)
#define FGETS(v)                                                          \
	do {                                                              \
		if (get_s(&q, end, &(v)))                                 \
			return 0;                                         \
	} while (0)

/*
 * The common records (SPAN, NODE and the fixed event records), decoded
 * here directly, as hs_rec_decode() and add_record() would. Returns 1
 * when the record was handled, 0 when it is for the generic path (any
 * other record, or a malformed one, which the generic decoder then
 * reports), or a negative errno.
 */
static int fast_record(struct hs_trace_reader *r, struct hs_trace *t, struct load_state *ls)
{
	const uint8_t *q = r->p + 1, *end = r->end;
	struct hs_rec_state *st = &r->st;
	unsigned tag = *r->p;
	uint64_t size = 0, stack = 0, x, y = 0, ticks, addr, old = 0, lead = 0;
	int64_t dt, da, sv;
	uint32_t th;
	int err;

	switch (tag) {
	case HS_TAG_SPAN:
		FGET(x);
		FGET(ticks);
		FGET(addr);
		st->tid = x;
		st->ticks = ticks;
		st->addr = addr;
		goto done;
	case HS_TAG_NODE: {
		size_t before = t->nr_nodes;

		FGET(x);
		FGET(y);
		FGET(addr);
		if (!x)
			return 0;
		err = add_node(t, x, y, addr, ls->last_ticks);
		if (!err)
			err = note_parent(t, ls, before, y);
		if (err)
			return err;
		goto done;
	}
	case HS_TAG_MALLOC:
	case HS_TAG_CALLOC:
	case HS_TAG_VALLOC:
	case HS_TAG_PVALLOC:
	case HS_TAG_POSIX_MEMALIGN:
	case HS_TAG_ALIGNED_ALLOC:
	case HS_TAG_MEMALIGN:
	case HS_TAG_REALLOC:
	case HS_TAG_REALLOCARRAY:
		FGETS(dt);
		FGETS(da);
		FGET(size);
		FGET(stack);
		if (hs_tag_is_realloc(tag)) {
			FGETS(sv);
			FGET(lead);
			old = st->addr + (uint64_t)da + (uint64_t)sv;
		} else if (hs_tag_has_align(tag)) {
			FGET(x);
		}
		break;
	case HS_TAG_FREE:
	case HS_TAG_REALLOC_FREE:
		FGETS(dt);
		FGETS(da);
		break;
	case HS_TAG_MMAP:
		FGETS(dt);
		FGETS(da);
		FGET(size);
		FGET(x);
		FGET(y);
		FGET(stack);
		break;
	case HS_TAG_MUNMAP:
		FGETS(dt);
		FGETS(da);
		FGET(size);
		break;
	case HS_TAG_MREMAP:
		FGETS(dt);
		FGETS(da);
		FGET(size);
		FGET(stack);
		FGETS(sv);
		FGET(y);	/* the old length */
		old = st->addr + (uint64_t)da + (uint64_t)sv;
		break;
	default:
		return 0;
	}
	/* an event: the whole record decoded, now the state moves */
	st->ticks += (uint64_t)dt;
	st->addr += (uint64_t)da;
	ticks = st->ticks;
	addr = st->addr;
	r->nr_events += 1 + (tag == HS_TAG_MREMAP || (hs_tag_is_realloc(tag) && old));
	err = span_thread(t, ls, st->tid, &th);
	if (err)
		return err;
	switch (tag) {
	case HS_TAG_FREE:
	case HS_TAG_REALLOC_FREE:
		t->threads[th].frees++;
		err = add_event(t, ls, th, ticks, HS_OP_FREE, tag, addr, 0, 0);
		break;
	case HS_TAG_MMAP:
		err = add_event(t, ls, th, ticks, HS_OP_MMAP, tag, addr, size, stack);
		break;
	case HS_TAG_MUNMAP:
		err = add_event(t, ls, th, ticks, HS_OP_MUNMAP, tag, addr, size, 0);
		break;
	case HS_TAG_MREMAP:
		err = add_event(t, ls, th, ticks, HS_OP_MUNMAP, tag, old, y, 0);
		if (!err)
			err = add_event(t, ls, th, ticks, HS_OP_MMAP, tag, addr, size, stack);
		break;
	default:
		if (hs_tag_is_realloc(tag) && old) {
			uint64_t at = lead <= ticks ? ticks - lead : 0;

			err = add_event(t, ls, th, at, HS_OP_FREE, tag, old, 0, 0);
			if (err)
				return err;
		}
		t->threads[th].allocs++;
		t->threads[th].bytes += size;
		err = add_event(t, ls, th, ticks, HS_OP_ALLOC, tag, addr, size, stack);
		break;
	}
	if (err)
		return err;
done:
	r->p = q;
	r->nr_records++;
	return 1;
}

#undef FGET
#undef FGETS

/*
 * The stream's common case in one loop (the reading thread): the MALLOC,
 * CALLOC and FREE records of the thread whose events are being taken,
 * handled as fast_record() and stream_event() would, with their state in
 * locals. Stops before anything else (then fast_record() goes on from
 * there): another record, a stack not the last one seen, an event that
 * would be late, no more room. Returns 0.
 */
static int stream_run(struct hs_trace_reader *r, struct hs_trace *t, struct load_state *ls,
		      struct stream *s)
{
	const uint8_t *q = r->p, *end = r->end;
	uint64_t ticks = r->st.ticks, addr = r->st.addr, last = ls->last_ticks;
	uint64_t allocs = 0, frees = 0, bytes = 0;
	struct hs_trace_event *e, *first, *lim;
	int64_t pub = s->published && !s->in_run ? s->pub_time : INT64_MIN;
	uint32_t th = ls->span_thread;
	size_t room, n;

	if (!ls->span_valid || ls->span_tid != r->st.tid || th != s->run_thread ||
	    (ls->flags & HS_TRACE_NO_EVENTS))
		return 0;
	if (s->in_run) {
		first = s->run + s->run_n;
		room = s->run_alloc - s->run_n;
	} else {
		size_t waiting = s->st_end - s->st_head, max = STREAM_WINDOW + BATCH_EVENTS - 1;

		first = s->stage + s->st_end;
		room = s->st_alloc - s->st_end;
		/* without the index, the window's end is stream_event()'s */
		if (!s->nidx)
			room = waiting >= max ? 0 : room < max - waiting ? room : max - waiting;
	}
	for (e = first, lim = first + room; e < lim;) {
		const uint8_t *p = q + 1;
		unsigned tag;
		uint64_t dt, da, size = 0, stack = 0, node = HS_TRACE_NONE, at;

		if (q >= end)
			break;
		tag = *q;
		if (tag == HS_TAG_FREE) {
			if (get_u(&p, end, &dt) || get_u(&p, end, &da))
				break;
		} else if (tag == HS_TAG_MALLOC || tag == HS_TAG_CALLOC) {
			if (get_u(&p, end, &dt) || get_u(&p, end, &da) ||
			    get_u(&p, end, &size) || get_u(&p, end, &stack))
				break;
			if (stack && stack != ls->cache_id)
				break;
			if (stack)
				node = ls->cache_index;
		} else {
			break;
		}
		at = ticks + (uint64_t)hs_unzigzag(dt);
		if ((int64_t)at <= pub)
			break;	/* stream_event() says what to do */
		ticks = at;
		addr += (uint64_t)hs_unzigzag(da);
		if (ticks > last)
			last = ticks;
		e->time = (int64_t)ticks;
		e->addr = addr;
		e->size = size;
		e->node = node;
		e->thread = th;
		e->fn = (uint8_t)tag;
		if (tag == HS_TAG_FREE) {
			e->op = HS_OP_FREE;
			frees++;
		} else {
			e->op = HS_OP_ALLOC;
			allocs++;
			bytes += size;
		}
		e++;
		q = p;
	}
	n = (size_t)(e - first);
	if (!n)
		return 0;
	if (s->in_run)
		s->run_n += n;
	else
		s->st_end += n;
	r->p = q;
	r->st.ticks = ticks;
	r->st.addr = addr;
	r->nr_events += n;
	r->nr_records += n;
	ls->last_ticks = last;
	t->threads[th].allocs += allocs;
	t->threads[th].frees += frees;
	t->threads[th].bytes += bytes;
	return 0;
}

/*
 * A damaged file can give nodes parents that lead back to themselves (ids
 * are resolved after the whole file is read, so a parent may come later).
 * Every walk towards the root must end: the node where a walk meets its
 * own path loses its parent, BROKEN there like an undefined one. Each node
 * is walked once: mark[i] is 0 (not seen), the walk's number + 1 while the
 * walk that reached it is going on, UINT32_MAX once its way to the root is
 * known to end.
 */
static int break_cycles(struct hs_trace *t)
{
	uint32_t *mark;
	size_t i;

	if (!t->nr_nodes)
		return 0;
	mark = hs_calloc(t->nr_nodes, sizeof(*mark));
	if (!mark)
		return -ENOMEM;
	for (i = 0; i < t->nr_nodes; i++) {
		uint32_t walk = (uint32_t)i + 1, n = (uint32_t)i, up;

		while (!mark[n]) {
			mark[n] = walk;
			up = t->node_parent[n];
			if (up == HS_TRACE_NONE || up == HS_TRACE_MISSING)
				break;
			if (mark[up] == walk) {		/* back on this walk's path */
				t->node_parent[n] = HS_TRACE_MISSING;
				t->missing_nodes++;
				break;
			}
			n = up;
		}
		for (n = (uint32_t)i; mark[n] == walk; n = t->node_parent[n]) {
			mark[n] = UINT32_MAX;
			if (t->node_parent[n] == HS_TRACE_NONE ||
			    t->node_parent[n] == HS_TRACE_MISSING)
				break;
		}
	}
	hs_free(mark);
	return 0;
}

static int load(struct hs_trace_reader *r, struct hs_trace *t, unsigned flags,
		struct stream *stream, struct hs_diag *diag)
{
	struct load_state ls;
	struct hs_rec rec;
	size_t i;
	const char *why = NULL;
	int ret, err = 0;

	memset(&ls, 0, sizeof(ls));
	ls.flags = flags;
	ls.stream = stream;
	for (;;) {
		size_t before = t->nr_nodes;

		if (r->done)
			break;
		if (r->p >= r->end) {
			ret = next_chunk(r, diag);
			if (ret <= 0) {
				r->done = ret < 0 ? ret : 1;
				break;
			}
			ls.span_valid = 0;	/* the chunk starts in thread 0 */
			if (stream && r->chunk.kind == HS_CHUNK_EVENTS &&
			    (err = stream_chunk(stream, r, r->chunk_offset)))
				goto out;
			continue;
		}
		if (r->chunk.kind != HS_CHUNK_SYMBOLS) {
			if (stream) {
				stream_run(r, t, &ls, stream);
				if (r->p >= r->end)
					continue;
			}
			ret = fast_record(r, t, &ls);
			if (ret < 0) {
				err = ret;
				goto out;
			}
			if (ret)
				continue;
		}
		ret = hs_trace_reader_next(r, &rec, diag);
		if (ret != 1)
			break;
		if (rec.tag == HS_TAG_SYM_STRING || rec.tag == HS_TAG_SYM_ADDR) {
			/* the last symbol section counts */
			if (r->sym_sections != ls.sym_section) {
				hs__trace_syms_reset(&t->syms);
				ls.sym_section = r->sym_sections;
				t->syms.offset = r->chunk_offset;
			}
			err = hs__trace_syms_record(t, &rec, &why);
			if (err == -EINVAL) {
				sym_damaged(r, r->chunk_offset,
					    why ? why : "malformed symbol record");
				err = 0;
			}
		} else {
			err = add_record(t, &ls, &rec, &why);
		}
		if (err == -EINVAL) {
			hs_diag_set_offset(diag, r->chunk_offset,
					   "corrupt trace: chunk %llu: %s",
					   (unsigned long long)(r->nr_chunks - 1),
					   why ? why : "bad record");
			goto out;
		}
		if (!err && rec.tag == HS_TAG_NODE)
			err = note_parent(t, &ls, before, rec.parent);
		if (err)
			goto out;
	}
	if (r->done < 0) {
		err = r->done;
		goto out;
	}
	/* A parent id that was never defined: the stack is BROKEN there. */
	for (i = 0; i < t->nr_nodes; i++) {
		t->node_parent[i] = HS_TRACE_NONE;
		if (!ls.parent_ids[i])
			continue;
		t->node_parent[i] = node_index(t, ls.parent_ids[i]);
		if (t->node_parent[i] == HS_TRACE_NONE) {
			t->node_parent[i] = HS_TRACE_MISSING;
			t->missing_nodes++;
		}
	}
	err = break_cycles(t);
	if (err)
		goto out;
	t->nr_chunks = r->nr_chunks;
	t->nr_records = r->nr_records;
	t->file_size = r->size;
	t->cut_off = r->cut_off || !r->end_seen;
	t->cut_offset = r->cut_off ? r->cut_offset : r->size;
	t->data_end = r->data_end;
	t->data_chunks = r->data_chunks;
	/* a damaged symbol section: its names cannot be trusted */
	t->sym_damage = r->sym_damage;
	if (r->sym_damage.what)
		hs__trace_syms_reset(&t->syms);
	err = finish(t, &ls);
out:
	load_state_release(&ls);
	return err;
}

static void trace_init(struct hs_trace *t)
{
	memset(t, 0, sizeof(*t));
}

int hs_trace_load(const char *path, struct hs_trace *t, struct hs_diag *diag)
{
	return hs_trace_load_flags(path, t, 0, diag);
}

int hs_trace_load_flags(const char *path, struct hs_trace *t, unsigned flags,
			struct hs_diag *diag)
{
	struct hs_trace_reader r;
	int err;

	trace_init(t);
	err = hs_trace_reader_open(&r, path, diag);
	if (err)
		return err;
	err = load(&r, t, flags, NULL, diag);
	hs_trace_reader_close(&r);
	if (err)
		hs_trace_release(t);
	return err;
}

int hs_trace_load_mem(const void *data, size_t n, const char *name,
		      struct hs_trace *t, struct hs_diag *diag)
{
	struct hs_trace_reader r;
	int err;

	trace_init(t);
	err = hs_trace_reader_open_mem(&r, data, n, name, diag);
	if (err)
		return err;
	err = load(&r, t, 0, NULL, diag);
	hs_trace_reader_close(&r);
	if (err)
		hs_trace_release(t);
	return err;
}

struct reading {
	struct hs_trace_reader r;
	struct hs_trace *t;
	struct stream *s;
	struct hs_diag *diag;
};

/* The reading thread: the whole trace, its events into batches. */
static void *stream_read(void *arg)
{
	struct reading *rd = arg;
	struct stream *s = rd->s;
	int err = load(&rd->r, rd->t, 0, s, rd->diag);

	if (!err)
		err = stream_drain(s);
	pthread_mutex_lock(&s->mu);
	s->read_err = err;
	s->done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* The caller's side: one batch's groups through the sink. */
static int stream_consume(struct stream *s, struct batch *b)
{
	const struct hs_trace_sink *sink = s->sink;
	struct hs_trace_event *ev = b->ev;
	size_t n = b->n, start = 0, g = 0, i;
	int err = 0;

	if (!sink->live)
		return sink->events(sink->ctx, ev, n);
	/*
	 * A batch ends with a tick. The ticks with several threads' events
	 * have their ties ordered, when the events before them are in.
	 */
	while (g < n) {
		int64_t time = ev[g].time;
		uint32_t thread = ev[g].thread;
		int multi = 0;

		for (i = g + 1; i < n && ev[i].time == time; i++)
			multi |= ev[i].thread != thread;
		if (multi || g - start >= STREAM_SLICE) {
			/* (in slices, which the sink reads while they are in cache) */
			if (g > start && (err = sink->events(sink->ctx, ev + start, g - start)))
				return err;
			start = g;
			if (multi && (err = order_ties(&s->ties, ev + g, i - g, sink->live,
						       sink->ctx)) < 0)
				return err;
			err = 0;
		}
		g = i;
	}
	return n > start ? sink->events(sink->ctx, ev + start, n - start) : 0;
}

static int stream(struct reading *rd, const struct hs_trace_sink *sink);

int hs_trace_stream(const char *path, struct hs_trace *t, const struct hs_trace_sink *sink,
		    struct hs_diag *diag)
{
	struct reading rd = { .t = t, .diag = diag };
	int err;

	trace_init(t);
	err = hs_trace_reader_open(&rd.r, path, diag);
	return err ? err : stream(&rd, sink);
}

int hs_trace_stream_mem(const void *data, size_t n, const char *name, struct hs_trace *t,
			const struct hs_trace_sink *sink, struct hs_diag *diag)
{
	struct reading rd = { .t = t, .diag = diag };
	int err;

	trace_init(t);
	err = hs_trace_reader_open_mem(&rd.r, data, n, name, diag);
	return err ? err : stream(&rd, sink);
}

/* hs_trace_stream() of the trace @rd->r has open (and closes). */
static int stream(struct reading *rd, const struct hs_trace_sink *sink)
{
	struct hs_trace *t = rd->t;
	struct stream s;
	pthread_t th;
	size_t i;
	int err = 0, rerr;

	memset(&s, 0, sizeof(s));
	s.sink = sink;
	s.run_thread = UINT32_MAX;
	rd->s = &s;
	stream_index(&rd->r, &s);
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	if (pthread_create(&th, NULL, stream_read, rd)) {
		err = -EAGAIN;	/* no thread: the caller loads the trace */
		goto out;
	}
	for (;;) {
		struct batch *b;
		int failed;

		pthread_mutex_lock(&s.mu);
		while (s.tail == s.head && !s.done)
			pthread_cond_wait(&s.cv, &s.mu);
		if (s.tail == s.head || err) {
			/* nothing left, or an error: let the reading stop */
			s.stop = 1;
			pthread_cond_broadcast(&s.cv);
			if (s.tail == s.head) {
				pthread_mutex_unlock(&s.mu);
				break;
			}
		}
		b = &s.b[s.tail % NR_BATCHES];
		failed = s.done && s.read_err;
		pthread_mutex_unlock(&s.mu);
		if (!err && !failed)
			err = stream_consume(&s, b);
		pthread_mutex_lock(&s.mu);
		s.buf[b->buf].refs--;
		s.tail++;
		pthread_cond_broadcast(&s.cv);
		pthread_mutex_unlock(&s.mu);
	}
	pthread_join(th, NULL);
	rerr = s.read_err;
	if (!err && rerr != -ECANCELED)
		err = rerr;
	/* clock ticks that are not nanoseconds: the times were wrong */
	if (!err && t->info.clock != HS_CLOCK_NS && t->nr_clock)
		err = -EAGAIN;
	t->stream_staged_max = s.staged_max;
out:
	hs_trace_reader_close(&rd->r);
	for (i = 0; i < NR_BUFS; i++)
		hs_free(s.buf[i].ev);
	hs_free(s.run);
	hs_free(s.idx_off);
	hs_free(s.idx_first);
	hs_free(s.idx_peeked);
	hs_free(s.idx_tree);
	hs_free(s.peek_stored);
	hs_free(s.peek_raw);
	tie_work_release(&s.ties);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	if (err)
		hs_trace_release(t);
	return err;
}

uint32_t hs_trace_node_index(const struct hs_trace *t, uint64_t id)
{
	return node_index(t, id);
}

void hs_trace_release(struct hs_trace *t)
{
	size_t i;

	hs_trace_info_release(&t->info);
	hs_free(t->node_addr);
	hs_free(t->node_parent);
	hs_free(t->node_module);
	hs_free(t->node_id);
	hs_free(t->node_ticks);
	hs_free(t->node_slot);
	for (i = 0; i < t->nr_modules; i++) {
		hs_free(t->modules[i].path);
		hs_free(t->modules[i].build_id);
	}
	hs_free(t->modules);
	for (i = 0; i < t->nr_threads; i++)
		hs_free(t->threads[i].name);
	hs_free(t->threads);
	hs_free(t->time);
	hs_free(t->addr);
	hs_free(t->size);
	hs_free(t->stack);
	hs_free(t->thread);
	hs_free(t->op);
	hs_free(t->fn);
	hs_free(t->rss_time);
	hs_free(t->rss_bytes);
	hs_free(t->clock_ticks);
	hs_free(t->clock_ns);
	hs__trace_syms_release(&t->syms);
	memset(t, 0, sizeof(*t));
}

size_t hs_trace_stack(const struct hs_trace *t, uint32_t node, uint32_t *out,
		      size_t max)
{
	size_t n = 0;

	while (node < t->nr_nodes && n < max) {
		out[n++] = node;
		node = t->node_parent[node];
	}
	/* a parent that was referenced but never defined */
	if (node == HS_TRACE_MISSING && n < max)
		out[n++] = HS_TRACE_NONE;
	return n;
}

const char *hs_trace_frame_name(const struct hs_trace *t, uint32_t node,
				char *buf, size_t n)
{
	uint64_t a;
	uint32_t m;

	if (node >= t->nr_nodes || !t->node_addr[node]) {
		snprintf(buf, n, "BROKEN");
		return buf;
	}
	a = t->node_addr[node];
	m = t->node_module[node];
	if (m == HS_TRACE_NONE)
		snprintf(buf, n, "[unknown]!0x%llx", (unsigned long long)a);
	else
		snprintf(buf, n, "%s!0x%llx", t->modules[m].path,
			 (unsigned long long)(a - t->modules[m].bias));
	return buf;
}

double hs_trace_weight(const struct hs_trace *t, uint64_t size)
{
	double p;

	if (!t->info.sample_bytes)
		return 1.0;
	p = -expm1(-(double)size / (double)t->info.sample_bytes);
	return p > 0 ? 1.0 / p : 1.0;
}

int hs_trace_stats(const struct hs_trace *t, struct hs_trace_stats *s)
{
	struct addr_map m = { 0 };
	uint64_t live = 0, old;
	size_t i;
	int err = 0;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < t->nr_events; i++) {
		switch (t->op[i]) {
		case HS_OP_ALLOC:
			s->allocs++;
			if (hs_tag_is_realloc(t->fn[i]))
				s->reallocs++;
			s->bytes_allocated += t->size[i];
			err = amap_put(&m, t->addr[i], t->size[i], &old);
			if (err)
				goto out;
			if (old != UINT64_MAX)
				live -= old;	/* a free we never saw */
			live += t->size[i];
			if (live > s->peak_heap) {
				s->peak_heap = live;
				s->peak_time = t->time[i];
			}
			break;
		case HS_OP_FREE:
			s->frees++;
			old = amap_del(&m, t->addr[i]);
			if (old == UINT64_MAX)
				s->unmatched_frees++;
			else
				live -= old;
			break;
		case HS_OP_MMAP:
			s->mmaps++;
			break;
		case HS_OP_MUNMAP:
			s->munmaps++;
			break;
		}
	}
	s->leaked_bytes = live;
	s->leaked_blocks = m.n;
	for (i = 0; i < t->nr_rss; i++)
		if (t->rss_bytes[i] > s->peak_rss)
			s->peak_rss = t->rss_bytes[i];
out:
	hs_free(m.key);
	hs_free(m.val);
	return err;
}

/* --- one streaming pass -------------------------------------------------- */

struct scan_state {
	struct addr_map live;		/* address -> size */
	struct addr_map pending;	/* frees seen before their allocation */
	uint64_t bytes;			/* live bytes */
};

static int scan_alloc(struct scan_state *ss, struct hs_trace_stats *s, uint64_t a,
		      uint64_t size, uint64_t ticks)
{
	uint64_t old;
	int err;

	/* a free of this address met earlier in the file but later in time */
	if (ss->pending.n && amap_del(&ss->pending, a) != UINT64_MAX)
		return 0;
	err = amap_put(&ss->live, a, size, &old);
	if (err)
		return err;
	if (old != UINT64_MAX)
		ss->bytes -= old;
	ss->bytes += size;
	if (ss->bytes > s->peak_heap) {
		s->peak_heap = ss->bytes;
		s->peak_time = (int64_t)ticks;
	}
	return 0;
}

static int scan_free(struct scan_state *ss, uint64_t a)
{
	uint64_t old = amap_del(&ss->live, a);

	if (old != UINT64_MAX) {
		ss->bytes -= old;
		return 0;
	}
	return amap_put(&ss->pending, a, 1, &old);
}

int hs_trace_peek_sampling(const char *path, struct hs_trace_sampling *out,
			   struct hs_diag *diag)
{
	struct hs_trace_reader r;
	struct hs_rec rec;
	int ret, err;

	memset(out, 0, sizeof(*out));
	err = hs_trace_reader_open(&r, path, diag);
	if (err)
		return err;
	while ((ret = hs_trace_reader_next(&r, &rec, diag)) == 1) {
		if (rec.tag == HS_TAG_SAMPLING) {
			out->present = 1;
			out->cpu_hz = rec.value;
			out->wall_hz = rec.detail;
			out->signal = rec.id;
			out->flags = rec.flags;
			break;
		}
		if (r.nr_chunks > 8)
			break;	/* the collector writes it at start-up */
	}
	hs_trace_reader_close(&r);
	return ret < 0 ? ret : out->present;
}

int hs_trace_scan(const char *path, struct hs_trace_scan *out, struct hs_diag *diag)
{
	struct hs_trace_stats *s = &out->stats;
	struct scan_state ss;
	struct hs_trace_reader r;
	struct hs_rec rec;
	int ret, err;

	memset(out, 0, sizeof(*out));
	memset(&ss, 0, sizeof(ss));
	err = hs_trace_reader_open(&r, path, diag);
	if (err)
		return err;
	while ((ret = hs_trace_reader_next(&r, &rec, diag)) == 1) {
		unsigned tag = rec.tag;

		err = 0;
		if (hs_tag_is_alloc(tag)) {
			if (hs_tag_is_realloc(tag)) {
				s->reallocs++;
				if (rec.old_addr) {
					s->frees++;
					err = scan_free(&ss, rec.old_addr);
				}
			}
			s->allocs++;
			s->bytes_allocated += rec.size;
			if (!err)
				err = scan_alloc(&ss, s, rec.addr, rec.size, rec.ticks);
		} else if (tag == HS_TAG_FREE || tag == HS_TAG_REALLOC_FREE) {
			s->frees++;
			err = scan_free(&ss, rec.addr);
		} else if (tag == HS_TAG_MMAP) {
			s->mmaps++;
		} else if (tag == HS_TAG_MUNMAP) {
			s->munmaps++;
		} else if (tag == HS_TAG_MREMAP) {
			s->mmaps++;
			s->munmaps++;
		} else if (tag == HS_TAG_SAMPLE) {
			if (rec.value == HS_SAMPLE_CPU) {
				out->cpu_samples++;
				out->cpu_ns += rec.size;
			} else if (rec.value <= HS_SAMPLE_WALL_READY) {
				out->wall_samples++;
			}
		} else if (tag == HS_TAG_RSS) {
			if (rec.value > s->peak_rss)
				s->peak_rss = rec.value;
		} else if (tag == HS_TAG_PROCESS && !out->sample_bytes) {
			const uint8_t *q = rec.body, *end = rec.body + rec.body_len;
			uint64_t v[4];
			int i;

			for (i = 0; i < 4 && !hs_get_varint(&q, end, &v[i]); i++)
				;
			if (i == 4)
				out->sample_bytes = v[3];
		}
		if (err) {
			ret = err;
			break;
		}
	}
	if (ret < 0) {
		err = ret;
		if (err == -ENOMEM && !diag->set)
			hs_diag_set(diag, 0, "out of memory");
	} else {
		err = 0;
		s->leaked_bytes = ss.bytes;
		s->leaked_blocks = ss.live.n;
		s->unmatched_frees = ss.pending.n;
		out->events = r.nr_events;
		out->chunks = r.nr_chunks;
		out->cut_off = r.cut_off || !r.end_seen;
		out->cut_offset = r.cut_off ? r.cut_offset : r.size;
	}
	hs_trace_reader_close(&r);
	amap_release(&ss.live);
	amap_release(&ss.pending);
	return err;
}
