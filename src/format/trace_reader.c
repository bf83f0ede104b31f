/*
 * trace_reader - the record stream: the file header, chunks (framing,
 * checks, decompression, a damaged symbol section skipped) and the
 * records of their payloads, in file order (see trace_reader.h and
 * docs/trace-format.md).
 */
#include "format/trace_reader.h"
#include "format/trace_prefetch.h"
#include "format/trace_writer.h"
#include "common/alloc.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* a stream's reader: the most events of a 5.0 chunk it decodes into
 * pieces itself (hs_chunk_unpack_events(); the rest stay records), 40
 * bytes each: more than a chunk of the collector's holds */
#define READER_EVENTS_MAX ((size_t)1 << 17)

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
	if (r->major < HS_TRACE_MAJOR_OLDEST || r->major > HS_TRACE_MAJOR) {
		hs_diag_set_offset(diag, 8,
				   "trace format version %u.%u is not supported "
				   "(this heapscope reads %u.x to %u.x; a newer "
				   "heapscope reads it)",
				   r->major, r->minor, HS_TRACE_MAJOR_OLDEST,
				   HS_TRACE_MAJOR);
		return -EINVAL;
	}
	return 0;
}

static void reader_init(struct hs_trace_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->pf_threads = hs__prefetch_threads();
}

static int reader_start(struct hs_trace_reader *r, struct hs_diag *diag)
{
	uint8_t h[HS_FILE_HEADER_SIZE];
	int err;

	if (r->size < HS_FILE_HEADER_SIZE) {
		hs_diag_set_offset(diag, 0,
				   "not a heapscope trace (%llu bytes, too short "
				   "for the file header)",
				   (unsigned long long)r->size);
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

int hs_trace_reader_open_mem(struct hs_trace_reader *r, const void *data, size_t n,
			     const char *name, struct hs_diag *diag)
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
	/* (the workers read the file: they stop first) */
	hs__prefetch_free(r->pf);
	r->pf = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	hs_free(r->stored);
	hs_free(r->raw);
	hs_chunk_unpack_release(&r->unpack);
	if (r->own_events) {
		hs__chunk_events_release(r->own_events);
		hs_free(r->own_events);
		r->own_events = NULL;
	}
	r->pre = NULL;
	r->stored = r->raw = NULL;
	ZSTD_freeDCtx(r->dctx);
	r->dctx = NULL;
	hs_free(r->skip_off);
	r->skip_off = NULL;
	r->nr_skip = r->skip_at = 0;
}

/* Read @n bytes at @off into *@buf (grown as needed) or point into memory. */
int hs__reader_read(struct hs_trace_reader *r, uint64_t off, size_t n, uint8_t **buf,
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
			return -EIO; /* the file shrank under us */
		done += (size_t)got;
	}
	*out = *buf;
	return 0;
}

int hs__reader_read_at(struct hs_trace_reader *r, uint64_t off, size_t n,
		       const uint8_t **out)
{
	return hs__reader_read(r, off, n, &r->stored, &r->alloc_stored, out);
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

void hs__reader_chunk_chain(struct hs_trace_reader *r, struct hs_chunk_chain *c)
{
	uint64_t off = HS_FILE_HEADER_SIZE;
	struct hs_chunk_header ch;
	const uint8_t *hdr;

	memset(c, 0, sizeof(*c));
	/* one header per chunk: a trace of 10M events has a few hundred */
	while (r->size - off >= HS_CHUNK_HEADER_SIZE) {
		if (hs__reader_read_at(r, off, HS_CHUNK_HEADER_SIZE, &hdr) ||
		    hs_chunk_header_parse(hdr, &ch) || ch.stored > HS_CHUNK_MAX ||
		    ch.raw > HS_CHUNK_MAX ||
		    r->size - off - HS_CHUNK_HEADER_SIZE < ch.stored)
			break;
		if (ch.kind == HS_CHUNK_END)
			c->end_off = off;
		if (ch.kind == HS_CHUNK_SYMBOLS)
			c->symbols = 1;
		c->last_kind = ch.kind;
		off += HS_CHUNK_HEADER_SIZE + ch.stored;
	}
	c->reached = off;
}

/*
 * The first record tagged @tag (with a body when @need_body) in the last
 * END chunk of the file @r reads: 0 with it in *@rec (its bytes in *@raw,
 * the caller's to hs_free(), or in the reader's buffers until its next
 * read), or -1: none, unreadable or out of memory.
 */
static int end_chunk_record(struct hs_trace_reader *r, unsigned tag, int need_body,
			    uint8_t **raw, struct hs_rec *rec)
{
	struct hs_chunk_chain chain;
	struct hs_chunk_header ch;
	struct hs_rec_state st;
	const uint8_t *hdr, *q, *e;
	const char *why;
	uint64_t end_off;

	*raw = NULL;
	hs__reader_chunk_chain(r, &chain);
	end_off = chain.end_off;
	if (!end_off || hs__reader_read_at(r, end_off, HS_CHUNK_HEADER_SIZE, &hdr) ||
	    hs_chunk_header_parse(hdr, &ch))
		return -1;
	if (hs__reader_read_at(r, end_off + HS_CHUNK_HEADER_SIZE, ch.stored, &q))
		return -1;
	e = q + ch.stored;
	if (ch.flags & HS_CHUNK_ZSTD) {
		size_t alloc = 0, got;

		if (hs__chunk_inflate(r->dctx, q, ch.stored, ch.raw, raw, &alloc, &got)) {
			hs_free(*raw);
			*raw = NULL;
			return -1;
		}
		q = *raw;
		e = *raw + ch.raw;
	}
	memset(&st, 0, sizeof(st));
	while (q < e && !hs_rec_decode(&q, e, &st, rec, &why)) {
		if (rec->tag == tag && (rec->body || !need_body))
			return 0;
	}
	hs_free(*raw);
	*raw = NULL;
	return -1;
}

int hs__reader_footer(struct hs_trace_reader *r, uint8_t **raw, const uint8_t **body,
		      size_t *len)
{
	struct hs_rec rec;

	if (end_chunk_record(r, HS_TAG_FOOTER, 1, raw, &rec))
		return -1;
	*body = rec.body;
	*len = rec.body_len;
	return 0;
}

int hs_trace_peek_end(const char *path, unsigned *reason)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_trace_reader r;
	struct hs_rec rec;
	uint8_t *raw;
	int found;

	if (hs_trace_reader_open(&r, path, &diag))
		return 0;
	found = !end_chunk_record(&r, HS_TAG_END, 0, &raw, &rec);
	if (found)
		*reason = (unsigned)rec.value;
	hs_free(raw);
	hs_trace_reader_close(&r);
	return found;
}

int hs_trace_reader_skip_events(struct hs_trace_reader *r)
{
	uint64_t counts[HS_FC__COUNT], n, marked, at = 0, i, k;
	const uint8_t *q, *end;
	uint8_t *raw, *keep = NULL;
	size_t len;
	int ret = 0;

	if (hs__reader_footer(r, &raw, &q, &len))
		return 0;
	end = q + len;
	if (hs_footer_counts(&q, end, counts) || hs_footer_index_len(&q, end, &n) ||
	    n > (uint64_t)(end - q) / 3)
		goto out;
	r->skip_off = hs_malloc((n ? n : 1) * sizeof(*r->skip_off));
	keep = hs_calloc(n ? n : 1, 1);
	if (!r->skip_off || !keep) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct hs_chunk_index ci;

		if (hs_footer_index_next(&q, end, &ci) ||
		    (i && ci.offset <= r->skip_off[i - 1]))
			goto out;
		r->skip_off[i] = ci.offset;
	}
	/* the 1.4 marks: without them, every chunk is read */
	if (hs_footer_marks_len(&q, end, &marked) || marked > n)
		goto out;
	for (i = 0; i < marked; i++) {
		if (hs_footer_mark_next(&q, end, i, &at) || at >= n)
			goto out;
		keep[at] = 1;
	}
	for (i = k = 0; i < n; i++)
		if (!keep[i])
			r->skip_off[k++] = r->skip_off[i];
	r->nr_skip = (size_t)k;
	r->skip_at = 0;
	ret = (int)(k > INT32_MAX ? INT32_MAX : k);
out:
	if (ret <= 0) {
		hs_free(r->skip_off);
		r->skip_off = NULL;
		r->nr_skip = 0;
	}
	hs_free(keep);
	hs_free(raw);
	return ret;
}

int hs__reader_resume_after_data(struct hs_trace_reader *r, uint64_t data_end,
				 uint64_t data_chunks)
{
	if (r->size < data_end)
		return -EINVAL;
	r->pf_threads = 0; /* a few chunks */
	r->offset = r->data_end = data_end;
	r->nr_chunks = r->data_chunks = data_chunks;
	r->prev_kind = HS_CHUNK_END;
	return 0;
}

/*
 * The symbol section is damaged in the chunk at file offset @off: the
 * rest of the section is skipped (the first damage is the one told).
 */
void hs__reader_sym_damaged(struct hs_trace_reader *r, uint64_t off, const char *what)
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
int hs__reader_next_chunk(struct hs_trace_reader *r, struct hs_diag *diag)
{
	r->pre = NULL;
	for (;;) {
		const uint8_t *hdr, *payload;
		uint64_t left = r->size - r->offset;
		struct hs_chunk_header *ch = &r->chunk;
		uint8_t h[HS_CHUNK_HEADER_SIZE];
		struct hs__prefetched got;
		const struct hs__chunk_events *direct = NULL;
		const char *bad = NULL;
		size_t raw_len;
		uint32_t check;
		int err, pre;

		if (left == 0)
			return 0;
		err = hs__reader_read_at(
		    r, r->offset, left < sizeof(h) ? (size_t)left : sizeof(h), &hdr);
		if (err)
			return err;
		if (left < sizeof(h)) {
			if (in_symbols(r, hdr, left)) {
				hs__reader_sym_damaged(r, r->offset, "cut off");
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
		else if ((ch->flags &
			  ~(HS_CHUNK_ZSTD | HS_CHUNK_COLUMNS | HS_CHUNK_COMPACT |
			    HS_CHUNK_CLASSES | HS_CHUNK_PREDICT)) ||
			 ((ch->flags & HS_CHUNK_COLUMNS) &&
			  (r->major < 2 || ch->kind != HS_CHUNK_EVENTS)) ||
			 ((ch->flags & HS_CHUNK_COMPACT) &&
			  (r->major < 3 || ch->kind != HS_CHUNK_EVENTS ||
			   (ch->flags & HS_CHUNK_COLUMNS))) ||
			 ((ch->flags & HS_CHUNK_CLASSES) &&
			  (r->major < 4 || !(ch->flags & HS_CHUNK_COMPACT))) ||
			 ((ch->flags & HS_CHUNK_PREDICT) &&
			  (r->major < 5 || !(ch->flags & HS_CHUNK_CLASSES))))
			bad = "unknown chunk flags";
		else if (ch->seq != r->nr_chunks)
			bad = "chunk out of sequence";
		if (bad || left - sizeof(h) < ch->stored) {
			/* (where the next chunk is is not known) */
			if (in_symbols(r, hdr, sizeof(h))) {
				hs__reader_sym_damaged(r, r->offset,
						       bad ? bad : "cut off");
				return 0;
			}
			if (bad)
				return corrupt(r, diag, r->offset, bad);
			r->cut_off = 1;
			r->cut_offset = r->offset;
			return 0;
		}
		/* a chunk of events only, for a reader that wants none */
		while (r->skip_at < r->nr_skip && r->skip_off[r->skip_at] < r->offset)
			r->skip_at++;
		if (r->skip_at < r->nr_skip && r->skip_off[r->skip_at] == r->offset &&
		    ch->kind == HS_CHUNK_EVENTS) {
			r->chunk_offset = r->offset;
			r->offset += sizeof(h) + (uint64_t)ch->stored;
			r->nr_chunks++;
			r->prev_kind = ch->kind;
			r->data_end = r->offset;
			r->data_chunks = r->nr_chunks;
			r->end_seen = 0;
			r->skipped++;
			continue;
		}
		memcpy(h, hdr, sizeof(h));
		/* from the third chunk on, the next ones are read ahead */
		if (!r->pf && r->pf_threads && r->nr_chunks >= 2) {
			r->pf = hs__prefetch_new(r->fd, r->mem, r->size, r->skip_off,
						 r->nr_skip, r->pf_threads, r->pf_decode);
			if (!r->pf)
				r->pf_threads = 0;
		}
		pre = 0;
		if (r->pf) {
			pre = hs__prefetch_take(r->pf, r->offset, h, &got);
			if (pre < 0)
				return pre;
		}
		if (pre) {
			payload = got.payload;
			check = got.check;
		} else {
			err = hs__reader_read_at(r, r->offset + sizeof(h), ch->stored,
						 &payload);
			if (err)
				return err;
			check = hs_chunk_check(h, payload, ch->stored);
		}
		if (check != ch->check) {
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
			hs__reader_sym_damaged(r, r->chunk_offset, bad);
			continue;
		}
		if (ch->kind != HS_CHUNK_EVENTS && ch->kind != HS_CHUNK_END &&
		    ch->kind != HS_CHUNK_SYMBOLS)
			continue; /* a kind from a newer minor version */
		if (ch->kind == HS_CHUNK_SYMBOLS && r->sym_skip)
			continue;
		if (ch->flags & HS_CHUNK_ZSTD) {
			if (pre && got.inflated) {
				err = got.inflated > 0 ? 0 : -EINVAL;
			} else {
				err = hs__chunk_inflate(r->dctx, payload, ch->stored,
							ch->raw, &r->raw, &r->alloc_raw,
							&got.got);
				got.raw = r->raw;
			}
			if (err == -ENOMEM)
				return err;
			if (err) {
				bad = "payload does not decompress to its size";
				if (ch->kind == HS_CHUNK_SYMBOLS) {
					hs__reader_sym_damaged(r, r->chunk_offset, bad);
					continue;
				}
				r->nr_chunks--;
				return corrupt(r, diag, r->chunk_offset, bad);
			}
			payload = got.raw;
		}
		raw_len = ch->raw;
		if (pre && got.records) {
			payload = got.records; /* (unpacked by the pool) */
			raw_len = got.records_len;
		} else if (r->unpack_events && ch->kind == HS_CHUNK_EVENTS &&
			   (ch->flags & HS_CHUNK_COMPACT)) {
			const char *why;

			if (!r->own_events &&
			    !(r->own_events = hs_calloc(1, sizeof(*r->own_events))))
				return -ENOMEM;
			err = hs_chunk_unpack_events(
			    &r->unpack, ch->flags, payload, ch->raw, &payload, &raw_len,
			    r->own_events, READER_EVENTS_MAX, &why);
			if (err == -ENOMEM)
				return err;
			if (err) {
				r->nr_chunks--;
				return corrupt(r, diag, r->chunk_offset, why);
			}
			if (r->own_events->nr_pieces)
				direct = r->own_events;
		} else if (ch->flags & (HS_CHUNK_COLUMNS | HS_CHUNK_COMPACT)) {
			const char *why;

			err = hs_chunk_unpack(&r->unpack, ch->flags, payload, ch->raw,
					      &payload, &raw_len, &why);
			if (err == -ENOMEM)
				return err;
			if (err) {
				r->nr_chunks--;
				return corrupt(r, diag, r->chunk_offset, why);
			}
		}
		r->pre = pre && ch->kind == HS_CHUNK_EVENTS && got.events ? got.events
									  : direct;
		r->payload = payload;
		r->p = payload;
		r->end = payload + raw_len;
		memset(&r->st, 0, sizeof(r->st));
		/* the trace is whole if its last chunk (before the symbols)
		 * is an END chunk */
		if (ch->kind != HS_CHUNK_SYMBOLS)
			r->end_seen = ch->kind == HS_CHUNK_END;
		return 1;
	}
}

/*
 * Where the reader is in the current chunk's records, as they are in the
 * file: past the bytes of the records that hs_chunk_unpack_events() left
 * out before it.
 */
static size_t payload_offset(const struct hs_trace_reader *r)
{
	size_t at = (size_t)(r->p - r->payload), skipped = 0, k;

	for (k = 0; r->pre && k < r->pre->nr_pieces && r->pre->piece[k].end <= at; k++)
		skipped = r->pre->piece[k].skipped;
	return at + skipped;
}

int hs_trace_reader_next(struct hs_trace_reader *r, struct hs_rec *rec,
			 struct hs_diag *diag)
{
	struct hs_rec_event ev[2];
	const char *why;
	int ret;

	if (r->done)
		return r->done < 0 ? r->done : 0;
	for (;;) {
		while (r->p >= r->end) {
			ret = hs__reader_next_chunk(r, diag);
			if (ret <= 0) {
				r->done = ret < 0 ? ret : 1;
				return ret;
			}
		}
		if (hs_rec_decode(&r->p, r->end, &r->st, rec, &why)) {
			if (r->chunk.kind == HS_CHUNK_SYMBOLS) {
				hs__reader_sym_damaged(r, r->chunk_offset, why);
				continue;
			}
			hs_diag_set_offset(
			    diag, r->chunk_offset,
			    "corrupt trace: chunk %llu, record at payload offset "
			    "%llu: %s",
			    (unsigned long long)(r->nr_chunks - 1),
			    (unsigned long long)payload_offset(r), why);
			r->done = -EINVAL;
			return -EINVAL;
		}
		if (r->chunk.kind == HS_CHUNK_SYMBOLS && rec->tag < HS_TAG_SIZED_FIRST) {
			hs__reader_sym_damaged(r, r->chunk_offset,
					       "a record that is not a symbol");
			continue;
		}
		r->nr_records++;
		r->nr_events += hs_rec_events(rec, ev);
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

int hs_trace_peek_sampling(const char *path, struct hs_trace_sampling *out,
			   struct hs_diag *diag)
{
	struct hs_trace_reader r;
	struct hs_rec rec;
	int ret, err, skipping = 0;

	memset(out, 0, sizeof(*out));
	err = hs_trace_reader_open(&r, path, diag);
	if (err)
		return err;
	/*
	 * The sampler thread writes SAMPLING when it first runs, into its
	 * ring like any thread's records: the chunk it lands in depends on
	 * when the writer drains that ring (a busy program fills a chunk in
	 * a few ms), so it is looked for in the first nine chunks as before.
	 * But SAMPLING is no event, so its chunk is marked in the footer
	 * (1.4): once the first chunk is read (the footer is not looked
	 * for when SAMPLING is there, as it usually is), the chunks of
	 * events only are stepped over unread (they still count as
	 * chunks). A trace without the marks is read whole.
	 */
	while ((ret = hs_trace_reader_next(&r, &rec, diag)) == 1) {
		/* the records looked at are those of chunks 0-7 and the first
		 * of chunk 8: what reading every chunk from the start sees */
		if (r.nr_chunks > 9)
			break;
		if (rec.tag == HS_TAG_SAMPLING) {
			out->present = 1;
			out->cpu_hz = rec.value;
			out->wall_hz = rec.detail;
			out->signal = rec.id;
			out->flags = rec.flags;
			break;
		}
		if (r.nr_chunks > 8)
			break;
		if (!skipping && r.p >= r.end) {
			skipping = 1;
			ret = hs_trace_reader_skip_events(&r);
			if (ret < 0)
				break;
		}
	}
	hs_trace_reader_close(&r);
	return ret < 0 ? ret : out->present;
}
