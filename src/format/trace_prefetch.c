/*
 * trace_prefetch - chunks read, checked, decompressed and (for a stream)
 * decoded ahead of the reader on worker threads (see trace_prefetch.h): a
 * ring of slots that the reader fills in file order and the workers work
 * through, and the decoding of one chunk's events.
 */
#include "format/trace_prefetch.h"
#include "format/trace_compact.h"
#include "format/trace_writer.h"
#include "common/alloc.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#define PREFETCH_MAX_THREADS 8
/*
 * Workers that also decode: the reading thread stages a decoded event in
 * a fraction of the time a worker takes to decode it, so a few keep it
 * busy, and each slot holds up to HS_CHUNK_EVENTS_MAX decoded events
 */
#define PREFETCH_DECODE_THREADS 3
/*
 * chunks in flight per worker that decodes: one it works on, one waiting.
 * Workers that only decompress need one each and the reader's: a chunk
 * decompresses in a fraction of the time the reader takes over it, and
 * each slot keeps a chunk's stored and raw bytes (a megabyte and more)
 */
#define PREFETCH_SLOTS_PER_THREAD 2
/* the first room for a chunk's raw bytes: this many times its stored ones */
#define INFLATE_FIRST_RATIO 8
#define INFLATE_FIRST_MIN ((size_t)64 << 10)

int hs__chunk_inflate(void *dctx, const uint8_t *src, size_t stored, size_t raw,
		      uint8_t **buf, size_t *alloc, size_t *got)
{
	size_t room = *alloc, want, ret;

	want = stored > raw / INFLATE_FIRST_RATIO ? raw : stored * INFLATE_FIRST_RATIO;
	if (want < INFLATE_FIRST_MIN)
		want = raw < INFLATE_FIRST_MIN ? raw : INFLATE_FIRST_MIN;
	if (room > raw)
		room = raw;
	for (;;) {
		if (room < want || !*buf) {
			uint8_t *b = hs_realloc(*buf, want ? want : 1);

			if (!b)
				return -ENOMEM;
			*buf = b;
			*alloc = want;
			room = want;
		}
		ret = ZSTD_decompressDCtx(dctx, *buf, room, src, stored);
		if (!ZSTD_isError(ret))
			break;
		if (ZSTD_getErrorCode(ret) != ZSTD_error_dstSize_tooSmall || room >= raw)
			return -EINVAL;
		/* zstd made more than the room: grow, by what it really makes */
		want = room > raw / 4 ? raw : room * 4;
	}
	if (ret != raw)
		return -EINVAL;
	*got = ret;
	return 0;
}

int hs__chunk_piece_open(struct hs__chunk_events *ce, size_t begin, uint64_t tid)
{
	struct hs__chunk_piece *pc;

	if (HS_GROW(ce->piece, ce->nr_pieces + 1, ce->alloc_pieces))
		return -ENOMEM;
	pc = &ce->piece[ce->nr_pieces++];
	memset(pc, 0, sizeof(*pc));
	pc->begin = pc->end = begin;
	pc->tid = tid;
	pc->ev_end = ce->nr_ev;
	pc->low = pc->low_rest = INT64_MAX;
	return 0;
}

int64_t hs__events_low(const struct hs_rec_event *ev, unsigned n, int64_t low)
{
	unsigned k;

	for (k = 0; k < n; k++) {
		if (ev[k].ticks > INT64_MAX)
			return INT64_MIN;
		if ((int64_t)ev[k].ticks < low)
			low = (int64_t)ev[k].ticks;
	}
	return low;
}

/*
 * Each piece's low_rest: the lowest time of the events after it in the
 * chunk, its own events' and those of the records between pieces (held
 * in the piece before them as low_rest while decoding); and each
 * stretch's low: the lowest time from its first event to the end of its
 * piece. 0 or -ENOMEM.
 */
int hs__chunk_events_rest(struct hs__chunk_events *ce)
{
	size_t k, from = 0, g;
	int64_t acc = INT64_MAX;

	for (k = ce->nr_pieces; k-- > 0;) {
		struct hs__chunk_piece *pc = &ce->piece[k];

		if (pc->low_rest < acc)
			acc = pc->low_rest;
		pc->low_rest = acc;
		if (pc->low < acc)
			acc = pc->low;
	}
	if (HS_GROW(ce->stretch_low, ce->nr_ev / HS_CHUNK_STRETCH + 1, ce->alloc_stretch))
		return -ENOMEM;
	for (k = 0; k < ce->nr_pieces; from = ce->piece[k++].ev_end) {
		if (ce->piece[k].sorted) {
			/* (the lowest from an event on is its own time) */
			for (g = (from + HS_CHUNK_STRETCH - 1) / HS_CHUNK_STRETCH *
				 HS_CHUNK_STRETCH;
			     g < ce->piece[k].ev_end; g += HS_CHUNK_STRETCH)
				ce->stretch_low[g / HS_CHUNK_STRETCH] = ce->ev[g].time;
			continue;
		}
		acc = INT64_MAX;
		for (g = ce->piece[k].ev_end; g-- > from;) {
			if (ce->ev[g].time < acc)
				acc = ce->ev[g].time;
			if (g % HS_CHUNK_STRETCH == 0)
				ce->stretch_low[g / HS_CHUNK_STRETCH] = acc;
		}
	}
	return 0;
}

int hs__chunk_events_decode(const uint8_t *payload, size_t n, size_t max_events,
			    struct hs__chunk_events *out)
{
	const uint8_t *q = payload, *end = payload + n;
	struct hs_rec_state st;
	struct hs__chunk_piece *pc = NULL; /* the piece being filled */
	struct hs_rec_event ev[2];
	struct hs_rec rec;
	const char *why;

	out->nr_ev = 0;
	out->nr_pieces = 0;
	out->complete = 0;
	memset(&st, 0, sizeof(st));
	if (HS_GROW(out->ev, max_events < 1024 ? max_events : 1024, out->alloc_ev))
		return -ENOMEM;
	while (q < end && out->nr_ev + 2 <= max_events) {
		const uint8_t *p = q;
		struct hs_rec_state next = st;
		unsigned k, got;
		int ret;

		/* the common records in a loop of their own: one event each */
		if (pc &&
		    (*q == HS_TAG_MALLOC || *q == HS_TAG_FREE || *q == HS_TAG_CALLOC)) {
			struct hs_trace_event *e = out->ev + out->nr_ev,
					      *lim = out->ev + (out->alloc_ev < max_events
								    ? out->alloc_ev
								    : max_events);
			int64_t low = pc->low;
			size_t recs = 0;

			for (; e < lim; e++, recs++) {
				if (p >= end ||
				    (*p != HS_TAG_MALLOC && *p != HS_TAG_FREE &&
				     *p != HS_TAG_CALLOC))
					break;
				if (hs_rec_decode_fixed(&p, end, &next, &rec, &why) !=
					1 ||
				    rec.ticks > INT64_MAX) {
					p = q;
					next = st;
					break;
				}
				q = p;
				st = next;
				/* hs_rec_events()' one event of these records, made
				 * here (its copy to a second event stalls this loop;
				 * test_trace_prefetch checks that both agree) */
				e->time = (int64_t)rec.ticks;
				e->addr = rec.addr;
				if (rec.tag == HS_TAG_FREE) {
					e->size = 0;
					e->node = 0;
					e->op = HS_OP_FREE;
				} else {
					e->size = rec.size;
					e->node = rec.stack;
					e->op = HS_OP_ALLOC;
				}
				e->thread = 0;
				e->fn = rec.tag;
				if (e->time < low)
					low = e->time;
			}
			if (recs) {
				out->nr_ev = (size_t)(e - out->ev);
				pc->low = low;
				pc->end = (size_t)(q - payload);
				pc->st = st;
				pc->ev_end = out->nr_ev;
				pc->records += recs;
				if (out->nr_ev == out->alloc_ev &&
				    out->nr_ev + 2 <= max_events &&
				    HS_GROW(out->ev, out->nr_ev + 2, out->alloc_ev))
					return -ENOMEM;
				continue;
			}
		}
		ret = hs_rec_decode_fixed(&p, end, &next, &rec, &why);
		if (ret < 0)
			break; /* (the reader says what is wrong with it) */
		if (ret == 0) {
			/* a sized record: the reader's; the pieces go on after it */
			pc = NULL;
			if (hs_rec_decode(&q, end, &st, &rec, &why))
				break;
			got = hs_rec_events(&rec, ev);
			if (got && !out->nr_pieces)
				continue; /* (before every piece: no piece's rest) */
			if (got)
				out->piece[out->nr_pieces - 1].low_rest = hs__events_low(
				    ev, got, out->piece[out->nr_pieces - 1].low_rest);
			continue;
		}
		got = rec.tag == HS_TAG_SPAN ? 0 : hs_rec_events(&rec, ev);
		if (rec.tag != HS_TAG_SPAN && !got) {
			pc = NULL; /* a stack node: the reader's too */
			q = p;
			st = next;
			continue;
		}
		/* a SPAN begins a piece of its thread's events */
		if (!pc || rec.tag == HS_TAG_SPAN) {
			if (hs__chunk_piece_open(out, (size_t)(q - payload), next.tid))
				return -ENOMEM;
			pc = &out->piece[out->nr_pieces - 1];
		}
		if (out->nr_ev + got > out->alloc_ev &&
		    HS_GROW(out->ev, out->nr_ev + got, out->alloc_ev))
			return -ENOMEM;
		for (k = 0; k < got; k++) {
			struct hs_trace_event *e = &out->ev[out->nr_ev++];

			e->time = (int64_t)ev[k].ticks;
			e->addr = ev[k].addr;
			e->size = ev[k].size;
			e->node = ev[k].stack;
			e->thread = 0;
			e->op = ev[k].op;
			e->fn = rec.tag;
		}
		pc->low = hs__events_low(ev, got, pc->low);
		q = p;
		st = next;
		pc->end = (size_t)(q - payload);
		pc->st = st;
		pc->ev_end = out->nr_ev;
		pc->records++;
	}
	/*
	 * Past @max_events the records are the reader's, but their times
	 * still bound what the pieces' rests can go before: read on
	 */
	while (q < end && out->nr_pieces) {
		unsigned got;

		if (hs_rec_decode(&q, end, &st, &rec, &why))
			break;
		got = hs_rec_events(&rec, ev);
		if (got)
			out->piece[out->nr_pieces - 1].low_rest = hs__events_low(
			    ev, got, out->piece[out->nr_pieces - 1].low_rest);
	}
	/* the rests are known when every event of the chunk is */
	out->complete = q == end;
	return out->complete ? hs__chunk_events_rest(out) : 0;
}

void hs__chunk_events_release(struct hs__chunk_events *ce)
{
	hs_free(ce->ev);
	hs_free(ce->piece);
	hs_free(ce->stretch_low);
	memset(ce, 0, sizeof(*ce));
}

unsigned hs__prefetch_threads(void)
{
	const char *env = getenv("HEAPSCOPE_READ_THREADS");
	long n;

	if (env && *env) {
		char *end;

		n = strtol(env, &end, 10);
		if (*end || n < 0)
			n = 0;
	} else {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n <= 1)
			n = 0;
	}
	return n > PREFETCH_MAX_THREADS ? PREFETCH_MAX_THREADS : (unsigned)n;
}

enum slot_state { SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };

struct slot {
	uint64_t off; /* file offset of the chunk header */
	uint8_t hdr[HS_CHUNK_HEADER_SIZE];
	struct hs_chunk_header ch;
	enum slot_state state;
	uint8_t *stored, *raw; /* owned buffers */
	size_t alloc_stored, alloc_raw;
	struct hs_chunk_unpack unpack;	/* with pf->decode: the records */
	struct hs__chunk_events events; /* with pf->decode */
	int err;			/* reading the payload failed: -errno */
	struct hs__prefetched res;
};

struct hs__prefetch {
	int fd;
	const uint8_t *mem;
	uint64_t size;
	const uint64_t *skip;
	size_t nr_skip, skip_at;
	int decode; /* EVENTS chunks are unpacked and decoded too */

	pthread_mutex_t mu;
	pthread_cond_t work, done;
	/*
	 * The ring, in file order: slots [tail, next) are being worked on or
	 * done, [next, head) wait for a worker. The one before tail is the
	 * reader's (taken) until its next take.
	 */
	struct slot *slot;
	size_t nr_slots, head, next, tail;
	int taken;
	int stop;
	uint64_t scan_off; /* where the next chunk to queue should be */
	int scan_end;	   /* no chunk can be told there */
	pthread_t *th;
	unsigned nr_threads;
};

/* Read @n bytes at @off into the slot's buffer, or point into memory. */
static int slot_read(struct hs__prefetch *pf, struct slot *s, uint64_t off, size_t n,
		     const uint8_t **out)
{
	size_t done = 0;

	if (pf->mem) {
		*out = pf->mem + off;
		return 0;
	}
	if (HS_GROW(s->stored, n ? n : 1, s->alloc_stored))
		return -ENOMEM;
	while (done < n) {
		ssize_t got =
		    pread(pf->fd, s->stored + done, n - done, (off_t)(off + done));

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			return -EIO;
		done += (size_t)got;
	}
	*out = s->stored;
	return 0;
}

/*
 * The records of an EVENTS chunk's @n raw bytes at @raw unpacked
 * (hs_chunk_unpack(), the reader's decoder: a plain chunk's are @raw
 * itself, a columnar or compact one's are rebuilt in the slot's
 * buffer) and its events decoded, as the reader would (a worker). A
 * chunk that does not unpack is left to the reader, which says why. 0 or
 * -ENOMEM.
 */
static int slot_decode(struct slot *s, const uint8_t *raw, size_t n)
{
	const uint8_t *records;
	const char *why;
	size_t len;
	int err;

	if ((s->ch.flags & (HS_CHUNK_COMPACT | HS_CHUNK_PREDICT)) ==
	    (HS_CHUNK_COMPACT | HS_CHUNK_PREDICT)) {
		/* (a 5.0 chunk's events straight from its streams) */
		err = hs_chunk_unpack_events(&s->unpack, s->ch.flags, raw, n, &records,
					     &len, &s->events, HS_CHUNK_EVENTS_MAX, &why);
		if (err)
			return err == -ENOMEM ? err : 0;
		s->res.records = records;
		s->res.records_len = len;
		s->res.events = &s->events;
		return 0;
	}
	err = hs_chunk_unpack(&s->unpack, s->ch.flags, raw, n, &records, &len, &why);
	if (err)
		return err == -ENOMEM ? err : 0;
	s->res.records = records;
	s->res.records_len = len;
	if (hs__chunk_events_decode(records, len, HS_CHUNK_EVENTS_MAX, &s->events))
		return -ENOMEM;
	s->res.events = &s->events;
	return 0;
}

/* What the reader would do with the chunk of slot @s (a worker). */
static void slot_work(struct hs__prefetch *pf, struct slot *s, void *dctx)
{
	const struct hs_chunk_header *ch = &s->ch;
	int err;

	memset(&s->res, 0, sizeof(s->res));
	s->err =
	    slot_read(pf, s, s->off + HS_CHUNK_HEADER_SIZE, ch->stored, &s->res.payload);
	if (s->err)
		return;
	s->res.check = hs_chunk_check(s->hdr, s->res.payload, ch->stored);
	if (s->res.check == ch->check && !(ch->flags & HS_CHUNK_ZSTD) && pf->decode &&
	    ch->kind == HS_CHUNK_EVENTS && ch->raw == ch->stored) {
		s->err = slot_decode(s, s->res.payload, ch->stored);
		return;
	}
	if (s->res.check != ch->check || !(ch->flags & HS_CHUNK_ZSTD) ||
	    (ch->kind != HS_CHUNK_EVENTS && ch->kind != HS_CHUNK_END &&
	     ch->kind != HS_CHUNK_SYMBOLS))
		return;
	err = hs__chunk_inflate(dctx, s->res.payload, ch->stored, ch->raw, &s->raw,
				&s->alloc_raw, &s->res.got);
	if (err == -ENOMEM) {
		s->err = err;
		return;
	}
	s->res.inflated = err ? -1 : 1;
	s->res.raw = s->raw;
	if (!err && pf->decode && ch->kind == HS_CHUNK_EVENTS)
		s->err = slot_decode(s, s->raw, s->res.got);
}

static void *worker(void *arg)
{
	struct hs__prefetch *pf = arg;
	void *dctx = ZSTD_createDCtx();

	pthread_mutex_lock(&pf->mu);
	for (;;) {
		struct slot *s;

		while (pf->next == pf->head && !pf->stop)
			pthread_cond_wait(&pf->work, &pf->mu);
		if (pf->stop)
			break;
		s = &pf->slot[pf->next++ % pf->nr_slots];
		s->state = SLOT_BUSY;
		pthread_mutex_unlock(&pf->mu);
		if (dctx) {
			slot_work(pf, s, dctx);
		} else {
			memset(&s->res, 0, sizeof(s->res));
			s->err = -ENOMEM;
		}
		pthread_mutex_lock(&pf->mu);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&pf->done);
	}
	pthread_mutex_unlock(&pf->mu);
	ZSTD_freeDCtx(dctx);
	return NULL;
}

struct hs__prefetch *hs__prefetch_new(int fd, const uint8_t *mem, uint64_t size,
				      const uint64_t *skip, size_t nr_skip,
				      unsigned threads, int decode)
{
	struct hs__prefetch *pf;

	if (!threads)
		return NULL;
	if (threads > PREFETCH_MAX_THREADS)
		threads = PREFETCH_MAX_THREADS;
	if (decode && threads > PREFETCH_DECODE_THREADS)
		threads = PREFETCH_DECODE_THREADS;
	pf = hs_calloc(1, sizeof(*pf));
	if (!pf)
		return NULL;
	pf->fd = fd;
	pf->mem = mem;
	pf->size = size;
	pf->skip = skip;
	pf->nr_skip = nr_skip;
	pf->decode = decode;
	pf->nr_slots =
	    decode ? (size_t)threads * PREFETCH_SLOTS_PER_THREAD : threads + 1u;
	pf->slot = hs_calloc(pf->nr_slots, sizeof(*pf->slot));
	pf->th = hs_calloc(threads, sizeof(*pf->th));
	if (!pf->slot || !pf->th) {
		hs__prefetch_free(pf);
		return NULL;
	}
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->work, NULL);
	pthread_cond_init(&pf->done, NULL);
	while (pf->nr_threads < threads &&
	       !pthread_create(&pf->th[pf->nr_threads], NULL, worker, pf))
		pf->nr_threads++;
	if (!pf->nr_threads) {
		hs__prefetch_free(pf);
		return NULL;
	}
	return pf;
}

/* Drop the chunks no worker has begun, and wait for the others (under mu). */
static void cancel_window(struct hs__prefetch *pf)
{
	size_t i;

	pf->head = pf->next;
	for (i = pf->tail; i < pf->head; i++)
		while (pf->slot[i % pf->nr_slots].state != SLOT_DONE)
			pthread_cond_wait(&pf->done, &pf->mu);
	pf->tail = pf->head;
}

/*
 * Queue the chunks that follow from pf->scan_off while there is room (the
 * reader's thread, under mu): each header says where the next one is.
 * Scanning ends where a header cannot be followed (the reader then finds
 * out why, reading alone).
 */
static void fill_window(struct hs__prefetch *pf)
{
	while (!pf->scan_end && pf->head - pf->tail + (size_t)pf->taken < pf->nr_slots) {
		uint64_t off = pf->scan_off;
		struct slot *s = &pf->slot[pf->head % pf->nr_slots];
		const uint8_t *hdr;

		if (pf->size < off || pf->size - off < HS_CHUNK_HEADER_SIZE ||
		    slot_read(pf, s, off, HS_CHUNK_HEADER_SIZE, &hdr) ||
		    hs_chunk_header_parse(hdr, &s->ch) || s->ch.stored > HS_CHUNK_MAX ||
		    s->ch.raw > HS_CHUNK_MAX ||
		    pf->size - off - HS_CHUNK_HEADER_SIZE < s->ch.stored) {
			pf->scan_end = 1;
			break;
		}
		pf->scan_off = off + HS_CHUNK_HEADER_SIZE + s->ch.stored;
		while (pf->skip_at < pf->nr_skip && pf->skip[pf->skip_at] < off)
			pf->skip_at++;
		if (pf->skip_at < pf->nr_skip && pf->skip[pf->skip_at] == off &&
		    s->ch.kind == HS_CHUNK_EVENTS)
			continue; /* the reader steps over it */
		memcpy(s->hdr, hdr, HS_CHUNK_HEADER_SIZE);
		s->off = off;
		s->state = SLOT_QUEUED;
		pf->head++;
		pthread_cond_signal(&pf->work);
	}
}

int hs__prefetch_take(struct hs__prefetch *pf, uint64_t off,
		      const uint8_t hdr[HS_CHUNK_HEADER_SIZE], struct hs__prefetched *out)
{
	struct slot *s;
	int ret = 0;

	pthread_mutex_lock(&pf->mu);
	pf->taken = 0;
	/* a chunk that is not the next one queued: the guesses were wrong */
	if (pf->tail < pf->head && pf->slot[pf->tail % pf->nr_slots].off != off)
		cancel_window(pf);
	if (pf->tail == pf->head) {
		pf->scan_off = off;
		pf->scan_end = 0;
	}
	fill_window(pf);
	s = &pf->slot[pf->tail % pf->nr_slots];
	if (pf->tail < pf->head && s->off == off &&
	    !memcmp(s->hdr, hdr, HS_CHUNK_HEADER_SIZE)) {
		while (s->state != SLOT_DONE)
			pthread_cond_wait(&pf->done, &pf->mu);
		pf->tail++;
		pf->taken = 1;
		ret = s->err ? s->err : 1;
		*out = s->res;
		/* (the slot is free again: the window is one smaller until then) */
	}
	pthread_mutex_unlock(&pf->mu);
	return ret;
}

void hs__prefetch_free(struct hs__prefetch *pf)
{
	size_t i;
	unsigned k;

	if (!pf)
		return;
	if (pf->nr_threads) {
		pthread_mutex_lock(&pf->mu);
		cancel_window(pf);
		pf->stop = 1;
		pthread_cond_broadcast(&pf->work);
		pthread_mutex_unlock(&pf->mu);
		for (k = 0; k < pf->nr_threads; k++)
			pthread_join(pf->th[k], NULL);
		pthread_cond_destroy(&pf->work);
		pthread_cond_destroy(&pf->done);
		pthread_mutex_destroy(&pf->mu);
	}
	for (i = 0; pf->slot && i < pf->nr_slots; i++) {
		hs_free(pf->slot[i].stored);
		hs_free(pf->slot[i].raw);
		hs_chunk_unpack_release(&pf->slot[i].unpack);
		hs__chunk_events_release(&pf->slot[i].events);
	}
	hs_free(pf->slot);
	hs_free(pf->th);
	hs_free(pf);
}
