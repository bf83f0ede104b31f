/*
 * trace_repack - a finished trace rewritten into fewer, bigger EVENTS
 * chunks (see trace_repack.h; docs/trace-format.md, "Repacked traces").
 *
 * One pass over the file, mapped read-only: each EVENTS chunk is checked,
 * decompressed and put back into its records (hs_chunk_unpack()), the
 * records are appended to the chunk being built, and a chunk that would
 * grow past the limit is encoded compact and compressed first. The END
 * chunk is rewritten with the new chunk index, the SYMBOLS chunks copied
 * with their new sequence numbers. This module owns the temporary file
 * until it renames it over the trace or removes it.
 */
#include "format/trace_repack.h"
#include "format/trace_compact.h"
#include "format/trace_format.h"
#include "format/trace_record.h"
#include "format/trace_writer.h"
#include "common/alloc.h"
#include "common/fileio.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

/*
 * zstd's level for a repacked chunk. Level 3 against the collector's 1:
 * a big chunk's repeats lie further apart than a small one's, and this is
 * one pass after the program, not the writer thread's budget.
 */
#define REPACK_ZSTD_LEVEL 3
/* A trial of heap sizes whole against split (as the writer's trial):
 * every this many chunks, from the second */
#define REPACK_TRIAL_EVERY 8

/* One chunk of the input, whole and checked. */
struct in_chunk {
	uint64_t offset;
	struct hs_chunk_header h;
};

/* The chunk being built and what encodes it. */
struct repack {
	int fd;		  /* the temporary file */
	uint64_t written; /* its size so far */
	uint32_t seq;	  /* the next chunk's sequence number */
	unsigned nr_out;  /* chunks written (fault injection counts them) */
	unsigned fault_after;
	uint8_t *records; /* the records of the chunk being built */
	size_t nr_records, cap_records;
	uint64_t first_ticks, last_ticks;
	int has_records_mark; /* one of its chunks was marked */
	int open;	      /* it holds chunks */
	/* the new chunk index */
	struct hs_chunk_index *index;
	uint8_t *marks;
	size_t nr_index, alloc_index;
	/* the encoder */
	struct hs_compact_enc *enc;
	uint8_t *scratch, *compact, *zbuf[3]; /* compact whole, split; plain */
	size_t compact_cap, zcap;
	ZSTD_CCtx *cctx;
	int plain; /* the last trial found plain chunks smallest */
};

static int write_all(struct repack *r, const void *p, size_t n)
{
	int err = hs_write_all(r->fd, p, n);

	if (!err)
		r->written += n;
	return err;
}

/* Write one chunk of @kind: its header (sequence number r->seq) and payload. */
static int write_chunk(struct repack *r, unsigned kind, unsigned flags, const uint8_t *p,
		       size_t stored, size_t raw)
{
	uint8_t h[HS_CHUNK_HEADER_SIZE];
	int err;

	if (r->fault_after && r->nr_out >= r->fault_after)
		return -EIO;
	hs_tw_chunk_header(h, kind, flags, (uint32_t)stored, (uint32_t)raw, r->seq++, p);
	err = write_all(r, h, sizeof(h));
	if (!err)
		err = write_all(r, p, stored);
	r->nr_out++;
	return err;
}

/* The compact payload of the records at hand with sizes whole or split
 * (@split), compressed into @out: its size (0: none), *@raw its raw size. */
static size_t encode(struct repack *r, int split, uint8_t *out, size_t *raw)
{
	size_t c;

	r->enc->split_sizes = split;
	c = hs_chunk_compact_5_0(r->records, r->nr_records, r->enc, r->scratch,
				 r->compact, r->compact_cap);
	*raw = c;
	return c ? hs_tw_zstd_compact(r->cctx, REPACK_ZSTD_LEVEL, out, r->zcap,
				      r->compact, c, HS_CC__COUNT)
		 : 0;
}

static int add_index(struct repack *r, uint64_t offset)
{
	if (r->nr_index == r->alloc_index) {
		size_t n = r->alloc_index ? 2 * r->alloc_index : 64;
		struct hs_chunk_index *ix = hs_realloc(r->index, n * sizeof(*ix));
		uint8_t *m;

		if (!ix)
			return -ENOMEM;
		r->index = ix;
		m = hs_realloc(r->marks, n);
		if (!m)
			return -ENOMEM;
		r->marks = m;
		r->alloc_index = n;
	}
	r->index[r->nr_index].offset = offset;
	r->index[r->nr_index].first_ticks = r->first_ticks;
	r->index[r->nr_index].last_ticks = r->last_ticks;
	r->marks[r->nr_index++] = (uint8_t)r->has_records_mark;
	return 0;
}

/*
 * The chunk being built, compressed: compact with heap sizes whole or
 * split, or plain (its records as they are: a Python program's chunks,
 * whose records repeat as a whole, can come out smaller so), as the last
 * trial found smallest. A trial (every REPACK_TRIAL_EVERY chunks from the
 * second: the first holds the program's start) compresses the chunk
 * every way and keeps the smallest. Returns the payload (in one of
 * r->zbuf) with its *@stored and *@raw sizes and chunk *@flags, or NULL
 * when zstd failed.
 */
static const uint8_t *encode_chunk(struct repack *r, int trial, size_t *stored,
				   size_t *raw, unsigned *flags)
{
	const unsigned compact_flags =
	    HS_CHUNK_ZSTD | HS_CHUNK_COMPACT | HS_CHUNK_CLASSES | HS_CHUNK_PREDICT;
	size_t z[3] = {0, 0, 0}, c[3] = {0, 0, 0};
	int best = -1, i, split = r->enc->split_sizes;

	if (trial || !r->plain) {
		z[0] = encode(r, split, r->zbuf[0], &c[0]);
		if (trial)
			z[1] = encode(r, !split, r->zbuf[1], &c[1]);
	}
	if (trial || r->plain || !z[0]) {
		z[2] = ZSTD_compressCCtx(r->cctx, r->zbuf[2], r->zcap, r->records,
					 r->nr_records, REPACK_ZSTD_LEVEL);
		if (ZSTD_isError(z[2]))
			z[2] = 0;
		c[2] = r->nr_records;
	}
	for (i = 0; i < 3; i++)
		if (z[i] && (best < 0 || z[i] < z[best]))
			best = i;
	if (trial) {
		/* the rule for the next chunks */
		r->enc->split_sizes = z[1] && (!z[0] || z[1] < z[0]) ? !split : split;
		r->plain = best == 2;
	}
	if (best < 0 || z[best] > HS_CHUNK_MAX || c[best] > HS_CHUNK_MAX)
		return NULL; /* (no zstd frame of 1.5 MiB of records is that big) */
	*stored = z[best];
	*raw = c[best];
	*flags = best == 2 ? HS_CHUNK_ZSTD : compact_flags;
	return r->zbuf[best];
}

/* Write the chunk being built. */
static int flush(struct repack *r)
{
	const uint8_t *p;
	size_t z, raw;
	unsigned flags;
	int err;

	if (!r->open)
		return 0;
	p = encode_chunk(r, r->nr_index % REPACK_TRIAL_EVERY == 1, &z, &raw, &flags);
	if (!p)
		return -EIO;
	err = add_index(r, r->written);
	if (!err)
		err = write_chunk(r, HS_CHUNK_EVENTS, flags, p, z, raw);
	r->open = 0;
	r->nr_records = 0;
	r->has_records_mark = 0;
	return err;
}

/* Append the records of one input chunk (@mark: the footer marked it). */
static int append(struct repack *r, size_t limit, const uint8_t *rec, size_t n,
		  const struct hs_chunk_index *e, int mark)
{
	int err;

	/* records before a chunk's first SPAN are thread 0's: they start a
	 * chunk of their own, where that still holds */
	if (r->open && (r->nr_records + n > limit || !n || rec[0] != HS_TAG_SPAN)) {
		err = flush(r);
		if (err)
			return err;
	}
	if (r->nr_records + n > r->cap_records) {
		size_t cap = r->nr_records + n;
		uint8_t *b = hs_realloc(r->records, cap);

		if (!b)
			return -ENOMEM;
		r->records = b;
		r->cap_records = cap;
	}
	memcpy(r->records + r->nr_records, rec, n);
	r->nr_records += n;
	if (!r->open) {
		r->first_ticks = e->first_ticks;
		r->last_ticks = e->last_ticks;
	}
	if (e->first_ticks < r->first_ticks)
		r->first_ticks = e->first_ticks;
	if (e->last_ticks > r->last_ticks)
		r->last_ticks = e->last_ticks;
	r->has_records_mark |= mark;
	r->open = 1;
	return 0;
}

static void repack_release(struct repack *r)
{
	hs_free(r->records);
	hs_free(r->index);
	hs_free(r->marks);
	hs_free(r->enc);
	hs_free(r->scratch);
	hs_free(r->compact);
	for (int i = 0; i < 3; i++)
		hs_free(r->zbuf[i]);
	ZSTD_freeCCtx(r->cctx);
}

/* The payload of chunk @c of the file at @map, decompressed into *@buf
 * (grown as needed) unless stored: 0 with *@out set, or -1. */
static int chunk_payload(ZSTD_DCtx *dctx, const uint8_t *map, const struct in_chunk *c,
			 uint8_t **buf, size_t *cap, const uint8_t **out)
{
	const uint8_t *p = map + c->offset + HS_CHUNK_HEADER_SIZE;
	size_t z;

	if (!(c->h.flags & HS_CHUNK_ZSTD)) {
		*out = p;
		return 0;
	}
	if (c->h.raw > *cap) {
		uint8_t *b = hs_realloc(*buf, c->h.raw);

		if (!b)
			return -1;
		*buf = b;
		*cap = c->h.raw;
	}
	z = ZSTD_decompressDCtx(dctx, *buf, c->h.raw, p, c->h.stored);
	if (ZSTD_isError(z) || z != c->h.raw)
		return -1;
	*out = *buf;
	return 0;
}

/* The parsed FOOTER of the END chunk. */
struct footer {
	uint64_t counts[HS_FC__COUNT];
	struct hs_chunk_index *index;
	uint8_t *marks; /* per index entry, when the footer has marks */
	uint64_t nr_index;
	int has_marks;
};

static int parse_footer(const uint8_t *body, size_t n, struct footer *f)
{
	const uint8_t *q = body, *end = body + n;
	uint64_t i, nm, at = 0;
	int k;

	if (hs_footer_counts(&q, end, f->counts) ||
	    hs_footer_index_len(&q, end, &f->nr_index) || f->nr_index > n)
		return -1;
	f->index = hs_calloc(f->nr_index + 1, sizeof(*f->index));
	f->marks = hs_calloc(f->nr_index + 1, 1);
	if (!f->index || !f->marks)
		return -1;
	for (i = 0; i < f->nr_index; i++)
		if (hs_footer_index_next(&q, end, &f->index[i]))
			return -1;
	k = hs_footer_marks_len(&q, end, &nm);
	if (k < 0)
		return -1;
	f->has_marks = k == 0;
	for (i = 0; f->has_marks && i < nm; i++) {
		if (hs_footer_mark_next(&q, end, i, &at) || at >= f->nr_index)
			return -1;
		f->marks[at] = 1;
	}
	return q == end ? 0 : -1;
}

/*
 * The END chunk's records at [@p, @p + @n) with its FOOTER replaced by
 * one of @r's index, into *@out (allocated): its length, or 0 when a
 * record is not one an END chunk holds (a FOOTER, an END, a SPAN or
 * another sized record), *@f the old footer.
 */
static size_t end_records(const struct repack *r, const uint8_t *p, size_t n,
			  struct footer *f, uint8_t **out)
{
	const uint8_t *q = p, *end = p + n;
	uint8_t *o, *w;
	int seen = 0;

	o = hs_malloc(n + hs_tw_footer_size(r->nr_index));
	if (!o)
		return 0;
	w = o;
	while (q < end) {
		const uint8_t *start = q, *f0;
		unsigned tag = *q++;
		uint64_t len, v;

		if (tag == HS_TAG_SPAN) {
			if (hs_get_varint(&q, end, &v) || hs_get_varint(&q, end, &v) ||
			    hs_get_varint(&q, end, &v))
				goto bad;
		} else if (tag >= HS_TAG_SIZED_FIRST && tag <= HS_TAG_SIZED_LAST) {
			if (hs_get_varint(&q, end, &len) || len > (uint64_t)(end - q))
				goto bad;
			f0 = q;
			q += len;
			if (tag == HS_TAG_FOOTER) {
				if (seen++ || parse_footer(f0, (size_t)len, f))
					goto bad;
				w = hs_tw_footer_marked(w, f->counts, r->index,
							r->nr_index,
							f->has_marks ? r->marks : NULL);
				continue;
			}
		} else {
			goto bad;
		}
		memcpy(w, start, (size_t)(q - start));
		w += q - start;
	}
	if (!seen)
		goto bad;
	*out = o;
	return (size_t)(w - o);
bad:
	hs_free(o);
	return 0;
}

/* The chunks of the file at @map (@size bytes), whole and checked, into
 * *@out: their number, or 0 with *@why set when the file is not one to
 * repack. */
static size_t list_chunks(const uint8_t *map, uint64_t size, struct in_chunk **out,
			  const char **why)
{
	struct in_chunk *c = NULL;
	size_t nr = 0, alloc = 0, ends = 0;
	uint64_t off = HS_FILE_HEADER_SIZE;

	*why = "not a whole trace of this format version";
	if (size < HS_FILE_HEADER_SIZE ||
	    memcmp(map, HS_TRACE_MAGIC, HS_TRACE_MAGIC_LEN) ||
	    hs_get_le16(map + 8) != HS_TRACE_MAJOR)
		return 0;
	while (off < size) {
		struct hs_chunk_header h;

		if (size - off < HS_CHUNK_HEADER_SIZE ||
		    hs_chunk_header_parse(map + off, &h) || h.stored > HS_CHUNK_MAX ||
		    h.raw > HS_CHUNK_MAX ||
		    size - off - HS_CHUNK_HEADER_SIZE < h.stored ||
		    hs_chunk_check(map + off, map + off + HS_CHUNK_HEADER_SIZE,
				   h.stored) != h.check)
			goto no;
		/* EVENTS chunks, one END chunk, then SYMBOLS chunks */
		if ((h.kind == HS_CHUNK_EVENTS && ends) ||
		    (h.kind == HS_CHUNK_END && ends++) ||
		    (h.kind == HS_CHUNK_SYMBOLS && !ends) ||
		    (h.kind != HS_CHUNK_EVENTS && h.kind != HS_CHUNK_END &&
		     h.kind != HS_CHUNK_SYMBOLS))
			goto no;
		if (nr == alloc) {
			struct in_chunk *n2;

			alloc = alloc ? 2 * alloc : 256;
			n2 = hs_realloc(c, alloc * sizeof(*c));
			if (!n2)
				goto no;
			c = n2;
		}
		c[nr].offset = off;
		c[nr++].h = h;
		off += HS_CHUNK_HEADER_SIZE + h.stored;
	}
	if (!ends)
		goto no;
	*out = c;
	*why = NULL;
	return nr;
no:
	hs_free(c);
	return 0;
}

static int setup(struct repack *r, size_t limit)
{
	/* an input chunk larger than @limit is encoded alone: room for
	 * whatever the encoder takes */
	r->enc = hs_calloc(1, sizeof(*r->enc));
	r->scratch = hs_malloc(HS_CC_SCRATCH(HS_CC_RECORDS_MAX));
	/* a compact payload takes at most about twice its records (two
	 * references an event), and a chunk's records at most @limit unless
	 * one input chunk held more (encoded plain, then, or compact when it
	 * fits) */
	r->compact_cap = 2 * limit + HS_CC_HEADER_MAX;
	if (r->compact_cap > HS_CHUNK_MAX)
		r->compact_cap = HS_CHUNK_MAX;
	r->compact = hs_malloc(r->compact_cap);
	r->zcap = ZSTD_compressBound(HS_CHUNK_MAX);
	for (int i = 0; i < 3; i++) {
		r->zbuf[i] = hs_malloc(r->zcap);
		if (!r->zbuf[i])
			return -ENOMEM;
	}
	r->cctx = ZSTD_createCCtx();
	if (!r->enc || !r->scratch || !r->compact || !r->cctx)
		return -ENOMEM;
	r->enc->split_sizes = 1;
	return 0;
}

/*
 * What joining gains, measured on a sample: the EVENTS chunks from the
 * middle of the trace on that fit one repacked chunk, encoded as one.
 * Returns the bytes saved in 1/1000 of theirs (negative: it grew), or
 * INT32_MIN when no two chunks join or the sample cannot be read.
 */
static int probe_gain(struct repack *r, ZSTD_DCtx *dctx, struct hs_chunk_unpack *u,
		      const uint8_t *map, const struct in_chunk *ch, size_t nr_events,
		      const struct footer *f, size_t limit, uint8_t **buf, size_t *bufcap)
{
	size_t i, joined = 0, z, raw;
	uint64_t in = 0;
	unsigned flags;

	for (i = nr_events / 2; i < nr_events; i++) {
		const uint8_t *p, *rec;
		const char *why;
		size_t n;

		if (chunk_payload(dctx, map, &ch[i], buf, bufcap, &p) ||
		    hs_chunk_unpack(u, ch[i].h.flags, p, ch[i].h.raw, &rec, &n, &why))
			return INT32_MIN;
		if (joined && (r->nr_records + n > limit || !n || rec[0] != HS_TAG_SPAN))
			break;
		if (append(r, limit, rec, n, &f->index[i], 0))
			return INT32_MIN;
		in += HS_CHUNK_HEADER_SIZE + ch[i].h.stored;
		joined++;
	}
	if (joined < 2 || !encode_chunk(r, 1, &z, &raw, &flags))
		return INT32_MIN;
	r->open = 0;
	r->nr_records = 0;
	r->has_records_mark = 0;
	r->enc->split_sizes = 1;
	r->plain = 0;
	return (int)(1000 - (int64_t)((HS_CHUNK_HEADER_SIZE + z) * 1000 / in));
}

int hs_trace_repack(const char *path, const struct hs_repack_opts *opts,
		    struct hs_repack_stats *st)
{
	static const struct hs_repack_opts defaults = {0};
	struct hs_repack_stats dummy;
	struct repack r = {.fd = -1};
	struct footer f = {0};
	struct in_chunk *ch = NULL;
	struct hs_chunk_unpack u = {0};
	ZSTD_DCtx *dctx = NULL;
	struct stat sb, sb2;
	uint8_t *map = MAP_FAILED, *buf = NULL, *endrec = NULL;
	size_t nr = 0, i, bufcap = 0, limit, nr_events = 0, ie = 0;
	char *tmp = NULL;
	int fd = -1, err = 0;

	if (!opts)
		opts = &defaults;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	st->probe_gain_permille = INT32_MIN;
	limit = opts->chunk_records && opts->chunk_records < HS_REPACK_RECORDS_DEFAULT
		    ? opts->chunk_records
		    : HS_REPACK_RECORDS_DEFAULT;
	r.fault_after = opts->fault_after_chunks;
	/* not opened at all when no regular file (a FIFO would block) */
	if (!lstat(path, &sb) && !S_ISREG(sb.st_mode)) {
		st->skipped = S_ISLNK(sb.st_mode)
				  ? "it is a symbolic link (repack the file it names)"
				  : "it is not a regular file";
		goto out;
	}
	/* the rewriters' lock on the trace, held up to the rename: whoever
	 * holds it owns PATH.repack too */
	fd = hs_open_locked(path, O_RDONLY, 0);
	if (fd == -EWOULDBLOCK) {
		fd = -1;
		st->skipped = "another heapscope is rewriting it";
		goto out;
	}
	if (fd < 0) {
		err = fd;
		fd = -1;
		goto out;
	}
	if (fstat(fd, &sb)) {
		err = -errno;
		goto out;
	}
	/* the rename would put a regular file in place of a symbolic link,
	 * and leave the trace's other hard links with the old file */
	if (!hs_path_is_fd(path, fd, 0)) {
		st->skipped = "it is a symbolic link (repack the file it names)";
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		st->skipped = "it is not a regular file";
		goto out;
	}
	if (sb.st_nlink != 1) {
		st->skipped = "it has other hard links";
		goto out;
	}
	st->bytes_in = st->bytes_out = (uint64_t)sb.st_size;
	if (sb.st_size < HS_FILE_HEADER_SIZE) {
		st->skipped = "not a whole trace of this format version";
		goto out;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	nr = list_chunks(map, (uint64_t)sb.st_size, &ch, &st->skipped);
	if (!nr)
		goto out;
	for (i = 0; i < nr && ch[i].h.kind == HS_CHUNK_EVENTS; i++) {
		st->records_in += ch[i].h.raw;
		st->stored_in += ch[i].h.stored;
	}
	nr_events = i;
	st->chunks_in = st->chunks_out = nr_events;
	if (nr_events < 2) {
		st->skipped = "one chunk of events";
		goto out;
	}
	if (opts->skip_stored_mean &&
	    st->stored_in >= opts->skip_stored_mean * nr_events) {
		st->skipped = "its chunks are big already";
		goto out;
	}
	dctx = ZSTD_createDCtx();
	if (!dctx || setup(&r, limit)) {
		err = -ENOMEM;
		goto out;
	}
	/* the old footer first: its index says each chunk's times and marks */
	{
		const struct in_chunk *e = &ch[nr_events];
		const uint8_t *p;
		uint8_t *scratch_out = NULL;
		struct footer tmpf = {0};
		struct repack none = {0};
		size_t n;

		if (chunk_payload(dctx, map, e, &buf, &bufcap, &p)) {
			st->skipped = "its end chunk does not decompress";
			goto out;
		}
		n = end_records(&none, p, e->h.raw, &tmpf, &scratch_out);
		hs_free(scratch_out);
		f = tmpf;
		if (!n || f.nr_index != nr_events) {
			st->skipped = "its footer does not index its chunks";
			goto out;
		}
		for (i = 0; i < nr_events; i++)
			if (f.index[i].offset != ch[i].offset) {
				st->skipped = "its footer does not index its chunks";
				goto out;
			}
	}
	if (opts->probe) {
		int gain = probe_gain(&r, dctx, &u, map, ch, nr_events, &f, limit, &buf,
				      &bufcap);
		unsigned need = st->records_in > opts->large_records
				    ? opts->large_min_gain_permille
				    : opts->min_gain_permille;

		st->probe_gain_permille = gain;
		if (gain == INT32_MIN) {
			st->skipped = "no two of its chunks join into one";
			goto out;
		}
		if (gain < (int)need) {
			st->skipped =
			    "a sample of its chunks came out too little smaller joined";
			goto out;
		}
	}
	if (asprintf(&tmp, "%s.repack", path) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	/* a file left by a rewrite that was killed is replaced, never
	 * followed (a link there is removed, not written through); no other
	 * rewrite writes it while the lock is held */
	if (unlink(tmp) && errno != ENOENT) {
		err = -errno;
		goto out;
	}
	r.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r.fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_all(&r, map, HS_FILE_HEADER_SIZE);
	for (ie = 0; !err && ie < nr_events; ie++) {
		const uint8_t *p, *rec;
		const char *why = NULL;
		size_t n;
		int k;

		if (chunk_payload(dctx, map, &ch[ie], &buf, &bufcap, &p)) {
			err = -EIO;
			break;
		}
		k = hs_chunk_unpack(&u, ch[ie].h.flags, p, ch[ie].h.raw, &rec, &n, &why);
		if (k) {
			err = k == -ENOMEM ? -ENOMEM : -EIO;
			break;
		}
		err =
		    append(&r, limit, rec, n, &f.index[ie], !f.has_marks || f.marks[ie]);
	}
	if (!err)
		err = flush(&r);
	if (!err) {
		/* the END chunk with the new index, compressed as it was */
		const struct in_chunk *e = &ch[nr_events];
		const uint8_t *p;
		struct footer again = {0};
		size_t n = 0, z;

		if (chunk_payload(dctx, map, e, &buf, &bufcap, &p))
			err = -EIO;
		else
			n = end_records(&r, p, e->h.raw, &again, &endrec);
		hs_free(again.index);
		hs_free(again.marks);
		if (!err && !n)
			err = -EIO;
		if (!err && (e->h.flags & HS_CHUNK_ZSTD)) {
			z = ZSTD_compressCCtx(r.cctx, r.zbuf[0], r.zcap, endrec, n, 1);
			if (ZSTD_isError(z))
				err = -EIO;
			else
				err = write_chunk(&r, HS_CHUNK_END, HS_CHUNK_ZSTD,
						  r.zbuf[0], z, n);
		} else if (!err) {
			err = write_chunk(&r, HS_CHUNK_END, 0, endrec, n, n);
		}
	}
	/* the symbol section as it is, numbered on */
	for (i = nr_events + 1; !err && i < nr; i++)
		err = write_chunk(&r, ch[i].h.kind, ch[i].h.flags,
				  map + ch[i].offset + HS_CHUNK_HEADER_SIZE,
				  ch[i].h.stored, ch[i].h.raw);
	if (err)
		goto out;
	st->chunks_out = r.nr_index;
	if (r.written * 1000 >
	    (uint64_t)sb.st_size *
		(1000 -
		 (opts->min_gain_permille < 1000 ? opts->min_gain_permille : 999))) {
		st->skipped = "the rewrite came out no smaller";
		st->chunks_out = st->chunks_in;
		goto out;
	}
	if (fchmod(r.fd, sb.st_mode & 07777) || fsync(r.fd)) {
		err = -errno;
		goto out;
	}
	/* the trace still the one read (nothing appended to it meanwhile) */
	if (fstat(fd, &sb2) || sb2.st_size != sb.st_size ||
	    sb2.st_mtim.tv_sec != sb.st_mtim.tv_sec ||
	    sb2.st_mtim.tv_nsec != sb.st_mtim.tv_nsec) {
		st->skipped = "the trace changed while it was rewritten";
		goto out;
	}
	if (close(r.fd)) {
		r.fd = -1;
		err = -errno;
		goto out;
	}
	r.fd = -1;
	/* and the path still names it (not a file renamed over it by a
	 * rewrite that held the lock before this one took it) */
	if (!hs_path_is_fd(path, fd, 0) || sb2.st_nlink != 1) {
		st->skipped = "the trace was replaced while it was rewritten";
		st->chunks_out = st->chunks_in;
		goto out;
	}
	if (rename(tmp, path)) {
		err = -errno;
		goto out;
	}
	st->bytes_out = r.written;
	hs_free(tmp);
	tmp = NULL;
out:
	if (r.fd >= 0)
		close(r.fd);
	if (tmp) {
		unlink(tmp);
		hs_free(tmp);
	}
	if (err)
		st->chunks_out = st->chunks_in;
	if (map != MAP_FAILED)
		munmap(map, (size_t)sb.st_size);
	if (fd >= 0)
		close(fd);
	ZSTD_freeDCtx(dctx);
	hs_chunk_unpack_release(&u);
	repack_release(&r);
	hs_free(f.index);
	hs_free(f.marks);
	hs_free(ch);
	hs_free(buf);
	hs_free(endrec);
	return err;
}
