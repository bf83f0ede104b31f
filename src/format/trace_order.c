/*
 * trace_order - a trace's events in time order, handed to a sink
 * (hs_trace_stream(); see trace_reader.h and trace_order.h): the reorder
 * window of the reading thread, the read-ahead of chunks by the footer's
 * index, and the caller's side that orders ties and feeds the sink.
 */
#include "format/trace_order.h"
#include "format/trace_prefetch.h"
#include "format/trace_walk.h"
#include "format/trace_writer.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Hand the oldest @n staged events, at most BATCH_EVENTS (and the rest
 * of their tick), over as a batch (the reading thread): lent, or a copy
 * in the next slot's buffer (@lend_off), unless it is a large tick's.
 */
int hs__order_publish(struct hs__order *s, size_t n)
{
	struct hs_trace_event *ev = s->stage + s->st_head;
	size_t avail = s->st_end - s->st_head;
	struct batch *b;
	int stop;

	if (n > avail)
		n = avail;
	if (n > BATCH_EVENTS)
		n = BATCH_EVENTS;
	if (!n)
		return 0;
	while (n < avail && ev[n].time == ev[n - 1].time)
		n++;
	pthread_mutex_lock(&s->mu);
	while ((s->head - s->tail >= NR_BATCHES ||
		(s->head > s->tail && s->in_flight + n > s->in_flight_max)) &&
	       !s->stop)
		pthread_cond_wait(&s->cv, &s->mu);
	stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	if (stop)
		return -ECANCELED;
	/* (the slot is free: the caller's side is done with it) */
	b = &s->b[s->head % NR_BATCHES];
	if (s->lend_off && n <= BATCH_KEEP) {
		if (n > b->alloc &&
		    HS_GROW(b->own, n > BATCH_EVENTS ? n : BATCH_EVENTS, b->alloc))
			return -ENOMEM;
		memcpy(b->own, ev, n * sizeof(*ev));
		b->ev = b->own;
		b->lent = 0;
		s->copied++;
	} else {
		/* (the stage keeps these events until the batch is back) */
		b->ev = ev;
		b->lent = s->stg_cur + 1;
		s->lent++;
	}
	b->n = n;
	b->one_thread = ev[0].time > s->mixed_to;
	s->st_head += n;
	s->published = 1;
	s->pub_time = ev[n - 1].time;
	pthread_mutex_lock(&s->mu);
	if (b->lent)
		s->stg[b->lent - 1].lent++;
	s->in_flight += n;
	if (s->in_flight_max == STREAM_COPY_IN_FLIGHT && s->in_flight > s->copy_in_flight)
		s->copy_in_flight = s->in_flight;
	s->head++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

void hs__order_switch(struct hs__order *s, uint32_t thread)
{
	int64_t high = INT64_MIN;
	size_t k;

	/* (the stage, the run and the waiting runs are each in time order) */
	if (s->st_end > s->st_head)
		high = s->stage[s->st_end - 1].time;
	if (s->run_n && s->run[s->run_n - 1].time > high)
		high = s->run[s->run_n - 1].time;
	for (k = 0; k < s->nseg; k++)
		if (s->seg[k].n && s->seg[k].ev[s->seg[k].n - 1].time > high)
			high = s->seg[k].ev[s->seg[k].n - 1].time;
	if (high > s->mixed_to)
		s->mixed_to = high;
	s->last_thread = thread;
}

/*
 * Wait (the reading thread) until no batch handed over points into any
 * stage buffer. 0, or -ECANCELED when the caller's side stopped.
 */
static int stage_wait_back(struct hs__order *s)
{
	int stop;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		unsigned k, lent = 0;

		for (k = 0; k < STAGE_BUFS; k++)
			lent |= s->stg[k].lent != 0;
		if (!lent || s->stop)
			break;
		pthread_cond_wait(&s->cv, &s->mu);
	}
	stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	return stop ? -ECANCELED : 0;
}

/*
 * The stage buffer that no batch points into, the current one first,
 * waiting for one when every buffer is lent. STAGE_BUFS when the caller's
 * side stopped.
 */
static unsigned stage_free_buf(struct hs__order *s)
{
	unsigned i = STAGE_BUFS, k;

	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		for (k = 0; k < STAGE_BUFS; k++) {
			unsigned at = (s->stg_cur + k) % STAGE_BUFS;

			if (!s->stg[at].lent) {
				i = at;
				break;
			}
		}
		if (i < STAGE_BUFS)
			break;
		pthread_cond_wait(&s->cv, &s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return i;
}

/*
 * Room for @n more staged events: the waiting events move to the front
 * of the staging buffer, which grows (to half as many again as the
 * events that need room, STREAM_SPARE: moving them to the front each
 * time would cost more) when they would fill more than three quarters of
 * it. While batches are lent (trace_order.h), they move to a stage
 * buffer no batch points into, the current one when its batches are
 * back; a stage that would grow past STAGE_LEND_MAX waits for them all
 * and lends no more. 0, -ENOMEM or -ECANCELED.
 */
int hs__order_room(struct hs__order *s, size_t n)
{
	size_t waiting = s->st_end - s->st_head, need = waiting + n;
	/* (with the index, what waits is what the file has out of order, or
	 * a chunk: no window's worth) */
	size_t floor = s->nidx ? STREAM_FLOOR : STREAM_WINDOW;
	size_t a =
	    need + need / STREAM_SPARE > floor ? need + need / STREAM_SPARE : floor;
	struct stage_buf *to;
	unsigned i;
	int err;

	if (s->st_end + n <= s->st_alloc)
		return 0;
	if (!s->lend_off && need > s->st_alloc - s->st_alloc / 4 && a > STAGE_LEND_MAX) {
		/* too large a stage to lend: copies from now on, one buffer */
		err = stage_wait_back(s);
		if (err)
			return err;
		for (i = 0; i < STAGE_BUFS; i++)
			if (i != s->stg_cur) {
				hs_free(s->stg[i].ev);
				s->stg[i].ev = NULL;
				s->stg[i].alloc = 0;
			}
		s->lend_off = 1;
		/* (the caller's side reads it too: it frees the copies) */
		pthread_mutex_lock(&s->mu);
		s->in_flight_max = STREAM_COPY_IN_FLIGHT;
		pthread_mutex_unlock(&s->mu);
	}
	/* (under @lend_off a large tick's batch points into the one buffer,
	 * whose events move: it comes back first) */
	if (s->lend_off && (err = stage_wait_back(s)))
		return err;
	i = s->lend_off ? s->stg_cur : stage_free_buf(s);
	if (i == STAGE_BUFS)
		return -ECANCELED;
	to = &s->stg[i];
	if (i == s->stg_cur) {
		/* (its batches are back: see stage_free_buf()) */
		if (s->st_head)
			memmove(s->stage, s->stage + s->st_head,
				waiting * sizeof(*s->stage));
	} else {
		/*
		 * (room for what waits and half as much again, its contents
		 * not kept: one that grew for a moment's many waiting events
		 * goes back to that size, as the others are)
		 */
		size_t want = a;

		if (to->alloc < want || to->alloc / 2 > want) {
			hs_free(to->ev);
			to->alloc = 0;
			to->ev = want > SIZE_MAX / sizeof(*to->ev)
				     ? NULL
				     : hs_malloc(want * sizeof(*to->ev));
			if (!to->ev)
				return -ENOMEM;
			to->alloc = want;
		}
		memcpy(to->ev, s->stage + s->st_head, waiting * sizeof(*s->stage));
		s->stg_cur = i;
		s->stage = to->ev;
		s->st_alloc = to->alloc;
	}
	s->st_head = 0;
	s->st_end = waiting;
	/* (to @a itself: growing by half the room, 399k -> 599k events,
	 * made `stats` of a long trace 8 MB more than of a short one whose
	 * most waiting events were as many) */
	if (need > s->st_alloc - s->st_alloc / 4) {
		struct hs_trace_event *p = a > SIZE_MAX / sizeof(*p)
					       ? NULL
					       : hs_realloc(s->stage, a * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->stage = p;
		s->st_alloc = a;
		to->ev = p;
		to->alloc = a;
	}
	return 0;
}

/*
 * Merge the @n events at @r (in time order) into the staged events, from
 * the back: only the staged events later than the first of @r move. On
 * equal times a run's events go after the staged ones, which were earlier
 * in the file; a @deferred chunk's go after those of the chunks before it
 * (their @seq is lower) and before the others, as in file order, and must
 * all be later than what was published (else -EAGAIN).
 */
static inline __attribute__((always_inline)) int
stage_merge(struct hs__order *s, const struct hs_trace_event *r, size_t n, int deferred)
{
	struct hs_trace_event *st;
	size_t i, j = n, k;
	int err;

	if (!n)
		return 0;
	if (deferred && s->published && r[0].time <= s->pub_time)
		return -EAGAIN;
	err = hs__order_room(s, n);
	if (err)
		return err;
	st = s->stage;
	i = s->st_end;
	k = i + j;
	while (j) {
		if (i > s->st_head &&
		    (st[i - 1].time > r[j - 1].time ||
		     (deferred && st[i - 1].time == r[j - 1].time &&
		      (int16_t)(uint16_t)(st[i - 1].seq - r[j - 1].seq) >= 0)))
			st[--k] = st[--i];
		else
			st[--k] = r[--j];
	}
	s->moves += s->st_end + n - k;
	s->st_end += n;
	return 0;
}

/* Merge the last waiting run into the one before it, or into the stage. */
static int merge_last(struct hs__order *s)
{
	struct order_seg *b = &s->seg[s->nseg - 1], *a;
	struct hs_trace_event *c;
	size_t i = 0, j = 0, k = 0;
	int err;

	if (s->nseg == 1) {
		err = stage_merge(s, b->ev, b->n, 0);
		if (err)
			return err;
	} else {
		a = b - 1;
		c = hs_malloc((a->n + b->n) * sizeof(*c));
		if (!c)
			return -ENOMEM;
		/* equal times: @a was earlier in the file */
		while (i < a->n && j < b->n)
			c[k++] = b->ev[j].time < a->ev[i].time ? b->ev[j++] : a->ev[i++];
		while (i < a->n)
			c[k++] = a->ev[i++];
		while (j < b->n)
			c[k++] = b->ev[j++];
		hs_free(a->ev);
		a->ev = c;
		a->n += b->n;
		s->moves += a->n;
	}
	s->seg_events -= s->nseg == 1 ? b->n : 0;
	hs_free(b->ev);
	s->nseg--;
	return 0;
}

int hs__order_push(struct hs__order *s)
{
	struct order_seg *g;
	int err;

	s->in_run = 0;
	if (!s->run_n)
		return 0;
	if (s->published && s->run[0].time <= s->pub_time)
		return -EAGAIN; /* later than the window: load it whole */
	if (s->run_n > s->run_max)
		s->run_max = s->run_n;
	if (HS_GROW(s->seg, s->nseg + 1, s->alloc_seg))
		return -ENOMEM;
	/* the run's buffer becomes the waiting run's */
	g = &s->seg[s->nseg++];
	g->ev = s->run;
	g->n = s->run_n;
	s->seg_events += s->run_n;
	s->run = NULL;
	s->run_n = s->run_alloc = 0;
	while (s->nseg) {
		size_t before =
		    s->nseg > 1 ? s->seg[s->nseg - 2].n : s->st_end - s->st_head;

		if (2 * s->seg[s->nseg - 1].n < before)
			break;
		err = merge_last(s);
		if (err)
			return err;
	}
	/* without the index, what waits stays about a window */
	if (!s->nidx && s->nseg &&
	    s->st_end - s->st_head + s->seg_events >= STREAM_WINDOW)
		return hs__order_flush(s);
	return 0;
}

int hs__order_flush(struct hs__order *s)
{
	int err = s->in_run ? hs__order_push(s) : 0;

	while (!err && s->nseg)
		err = merge_last(s);
	return err;
}

/* Of chunks @a and @b, the one that can hold the lower time (the first on a tie). */
static inline size_t lower_chunk(const struct hs__order *s, size_t a, size_t b)
{
	if (s->idx_first[b] < s->idx_first[a] ||
	    (s->idx_first[b] == s->idx_first[a] && b < a))
		return b;
	return a;
}

/* Chunk @i can hold nothing older than @v now. */
static void stream_set_first(struct hs__order *s, size_t i, int64_t v)
{
	size_t k = s->idx_leaves + i;

	s->idx_first[i] = v;
	for (k /= 2; k; k /= 2)
		s->idx_tree[k] =
		    lower_chunk(s, s->idx_tree[2 * k], s->idx_tree[2 * k + 1]);
}

/* The chunk from @i on that can hold the oldest events (nidx: none). */
static size_t stream_lowest(const struct hs__order *s, size_t i)
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
static int64_t stream_peek(struct hs__order *s, struct hs_trace_reader *r, size_t i)
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
	    hs__reader_read(r, off, HS_CHUNK_HEADER_SIZE, &s->peek_stored,
			    &s->alloc_peek_stored, &hdr) ||
	    hs_chunk_header_parse(hdr, &ch) || ch.kind != HS_CHUNK_EVENTS ||
	    ch.stored > HS_CHUNK_MAX || ch.raw > HS_CHUNK_MAX ||
	    r->size - off - HS_CHUNK_HEADER_SIZE < ch.stored ||
	    hs__reader_read(r, off + HS_CHUNK_HEADER_SIZE, ch.stored, &s->peek_stored,
			    &s->alloc_peek_stored, &q))
		return INT64_MIN;
	e = q + ch.stored;
	if (ch.flags & HS_CHUNK_ZSTD) {
		size_t got;

		if (hs__chunk_inflate(r->dctx, q, ch.stored, ch.raw, &s->peek_raw,
				      &s->alloc_peek_raw, &got))
			return INT64_MIN;
		q = s->peek_raw;
		e = q + ch.raw;
	}
	if (ch.flags & (HS_CHUNK_COLUMNS | HS_CHUNK_COMPACT)) {
		size_t n;

		if (hs_chunk_unpack(&s->peek_unpack, ch.flags, q, (size_t)(e - q), &q, &n,
				    &why))
			return INT64_MIN;
		e = q + n;
	}
	memset(&st, 0, sizeof(st));
	while (q < e) {
		struct hs_rec_event ev[2];
		unsigned n;

		if (hs_rec_decode(&q, e, &st, &rec, &why))
			return INT64_MIN;
		n = hs_rec_events(&rec, ev);
		low = hs__events_low(ev, n, low);
		if (low == INT64_MIN)
			return INT64_MIN;
	}
	return low;
}

/*
 * The buffers stream_peek() and defer_decode() read a chunk into, and
 * the decoder's address histories, given back: a peek is rare (a thread
 * idle for long), and what it held (python3's exit: 3.5 MB, the chunk's
 * records rebuilt and its histories) stayed in the reading thread's
 * arena beside the stage at the stream's highest point.
 */
static void peek_release(struct hs__order *s)
{
	hs_free(s->peek_stored);
	hs_free(s->peek_raw);
	s->peek_stored = s->peek_raw = NULL;
	s->alloc_peek_stored = s->alloc_peek_raw = 0;
	hs_chunk_unpack_release(&s->peek_unpack);
}

/* Hand over the staged events older than @low (the reading thread). */
static int order_below(struct hs__order *s, int64_t low)
{
	size_t lo, hi;
	int err;

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
		err = hs__order_publish(s, lo - s->st_head);
		if (err)
			return err;
	}
}

/*
 * Sort the @n events at @ev by time, keeping the order of equal times
 * (@tmp: room for @n, not kept): the runs a chunk's threads make, merged
 * pairwise until one is left.
 */
static void events_sort(struct hs_trace_event *ev, struct hs_trace_event *tmp, size_t n)
{
	struct hs_trace_event *src = ev, *dst = tmp, *sw;
	int sorted = 0;

	while (!sorted) {
		size_t a = 0;

		sorted = 1;
		while (a < n) {
			size_t b = a + 1, c, i, j, k = a;

			while (b < n && src[b].time >= src[b - 1].time)
				b++;
			for (c = b; c < n && (c == b || src[c].time >= src[c - 1].time);
			     c++)
				;
			if (c > b)
				sorted = 0;
			/* equal times: the first run was earlier in the chunk */
			for (i = a, j = b; i < b && j < c;)
				dst[k++] =
				    src[j].time < src[i].time ? src[j++] : src[i++];
			while (i < b)
				dst[k++] = src[i++];
			while (j < c)
				dst[k++] = src[j++];
			a = c;
		}
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != ev)
		memcpy(ev, src, n * sizeof(*ev));
}

/*
 * The events of deferred chunk @d, decoded again from the file @r reads
 * into s->redo (in file order), as the walk staged them: thread ids to
 * indexes, stack ids to node indexes (or ids, of nodes not defined).
 * 0, -EAGAIN (the chunk does not decode to the events the walk went
 * through) or -ENOMEM.
 */
static int defer_decode(struct hs__order *s, struct hs_trace_reader *r,
			const struct order_deferred *d)
{
	struct hs_chunk_header ch;
	struct hs_rec_state st;
	struct hs_rec rec;
	const uint8_t *hdr, *q, *e;
	const char *why;
	size_t n = 0;
	uint64_t tid = 0, th = 0, stack = 0, node = HS_TRACE_NONE;
	int have_tid = 0;

	if (HS_GROW(s->redo, d->events ? d->events : 1, s->alloc_redo))
		return -ENOMEM;
	if (hs__reader_read(r, d->offset, HS_CHUNK_HEADER_SIZE, &s->peek_stored,
			    &s->alloc_peek_stored, &hdr) ||
	    hs_chunk_header_parse(hdr, &ch) || ch.kind != HS_CHUNK_EVENTS ||
	    ch.stored > HS_CHUNK_MAX || ch.raw > HS_CHUNK_MAX ||
	    hs__reader_read(r, d->offset + HS_CHUNK_HEADER_SIZE, ch.stored,
			    &s->peek_stored, &s->alloc_peek_stored, &q))
		return -EAGAIN;
	e = q + ch.stored;
	if (ch.flags & HS_CHUNK_ZSTD) {
		size_t got;

		if (hs__chunk_inflate(r->dctx, q, ch.stored, ch.raw, &s->peek_raw,
				      &s->alloc_peek_raw, &got))
			return -EAGAIN;
		q = s->peek_raw;
		e = q + ch.raw;
	}
	if (ch.flags & (HS_CHUNK_COLUMNS | HS_CHUNK_COMPACT)) {
		size_t len;

		if (hs_chunk_unpack(&s->peek_unpack, ch.flags, q, (size_t)(e - q), &q,
				    &len, &why))
			return -EAGAIN;
		e = q + len;
	}
	memset(&st, 0, sizeof(st));
	while (q < e) {
		struct hs_rec_event ev[2];
		unsigned k, j;

		/* (the fixed records the walk's fast paths take, then the rest) */
		if (hs_rec_decode_fixed(&q, e, &st, &rec, &why) != 1 &&
		    hs_rec_decode(&q, e, &st, &rec, &why))
			return -EAGAIN;
		k = hs_rec_events(&rec, ev);
		for (j = 0; j < k; j++) {
			struct hs_trace_event *x = &s->redo[n];

			if (n == d->events)
				return -EAGAIN;
			/* (a span's thread, a run's stack: the last ones looked up) */
			if (!have_tid || ev[j].tid != tid) {
				if (!hs_u64map_get(s->tids, ev[j].tid, &th))
					return -EAGAIN;
				tid = ev[j].tid;
				have_tid = 1;
			}
			if (ev[j].stack != stack) {
				uint32_t k2 =
				    ev[j].stack
					? hs_trace_node_index(s->trace, ev[j].stack)
					: HS_TRACE_NONE;

				stack = ev[j].stack;
				node = !stack		     ? HS_TRACE_NONE
				       : k2 == HS_TRACE_NONE ? HS_TRACE_EV_NODE_ID | stack
							     : k2;
			}
			n++;
			x->node = node;
			x->time = (int64_t)ev[j].ticks;
			x->addr = ev[j].addr;
			x->size = ev[j].size;
			x->thread = (uint32_t)th;
			x->op = ev[j].op;
			x->fn = (uint8_t)rec.tag;
			x->seq = d->seq;
		}
	}
	return n == d->events ? 0 : -EAGAIN;
}

/* The current chunk's events, when they were deferred, are counted. */
static void defer_close(struct hs__order *s)
{
	if (!s->deferring)
		return;
	s->def[s->ndef - 1].events = s->defer_events;
	s->deferring = 0;
}

/* The lowest time the deferred chunks can hold (INT64_MAX: none). */
static void defer_low(struct hs__order *s)
{
	size_t i;

	s->def_low = INT64_MAX;
	for (i = 0; i < s->ndef; i++)
		if (s->def[i].low < s->def_low)
			s->def_low = s->def[i].low;
}

/*
 * Deferred chunk @i's events into the stage (the reading thread), after
 * the staged ones older than it can hold have gone on.
 */
static int defer_take(struct hs__order *s, struct hs_trace_reader *r, size_t i)
{
	struct order_deferred d = s->def[i];
	int err = order_below(s, d.low);

	if (!err)
		err = defer_decode(s, r, &d);
	/* (sorted through the stage's room for them, which the merge fills
	 * from its end once they are back in s->redo) */
	if (!err)
		err = hs__order_room(s, d.events);
	if (err)
		return err;
	events_sort(s->redo, s->stage + s->st_end, d.events);
	err = stage_merge(s, s->redo, d.events, 1);
	if (err)
		return err;
	/* (its events may be of any thread: those staged are mixed) */
	hs__order_switch(s, UINT32_MAX);
	memmove(s->def + i, s->def + i + 1, (s->ndef - i - 1) * sizeof(*s->def));
	s->ndef--;
	defer_low(s);
	return 0;
}

/* Every deferred chunk whose lowest time is at most @low, in the stage. */
static int defer_take_below(struct hs__order *s, struct hs_trace_reader *r, int64_t low)
{
	int err = 0;

	while (!err && s->ndef && s->def_low <= low) {
		size_t i = 0;

		while (s->def[i].low != s->def_low)
			i++;
		err = defer_take(s, r, i);
	}
	/* (a chunk's worth each: given back, they stay off the peak) */
	if (!s->ndef) {
		hs_free(s->redo);
		s->redo = NULL;
		s->alloc_redo = 0;
		peek_release(s);
	}
	return err;
}

/*
 * Every STREAM_SEQ_RENORM chunks: the staged events of chunks before the
 * oldest deferred one (or the current one) say so with that chunk's
 * ordinal less one, so that the ordinals compared stay within 2^15.
 */
static void order_renorm(struct hs__order *s)
{
	uint16_t ref = s->ndef ? s->def[0].seq : s->seq;
	size_t i;

	for (i = s->st_head; i < s->st_end; i++)
		if ((int16_t)(uint16_t)(s->stage[i].seq - ref) < 0)
			s->stage[i].seq = (uint16_t)(ref - 1);
}

int hs__order_undefer(struct hs__order *s, struct hs_trace_reader *r)
{
	int err;

	defer_close(s);
	/* the last chunk's runs join the stage first, as at every chunk:
	 * a deferred chunk merges into the stage, not into them */
	if ((s->in_run || s->nseg) && (err = hs__order_flush(s)))
		return err;
	return defer_take_below(s, r, INT64_MAX);
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
int hs__order_chunk(struct hs__order *s, struct hs_trace_reader *r, uint64_t offset)
{
	size_t lo = 0, hi = s->nidx, at;
	int64_t low;
	int err;

	if (s->st_end - s->st_head + s->run_n + s->seg_events > s->staged_max)
		s->staged_max = s->st_end - s->st_head + s->run_n + s->seg_events;
	defer_close(s);
	s->seq++;
	s->chunks++;
	if (!s->nidx)
		return 0;
	if ((s->in_run || s->nseg) && (err = hs__order_flush(s)))
		return err;
	s->run_thread = UINT32_MAX;
	if (s->chunks % STREAM_SEQ_RENORM == 0)
		order_renorm(s);
	/* (a deferred chunk waits at most STREAM_DEFER_SPAN chunks) */
	if (s->ndef && (uint16_t)(s->seq - s->def[0].seq) >= STREAM_DEFER_SPAN &&
	    (err = defer_take_below(s, r, INT64_MAX)))
		return err;
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
		if (!s->ndef)
			peek_release(s);
		if (v != INT64_MIN)
			stream_set_first(s, at, v);
	}
	low = s->idx_first[at];
	/* (what the chunks after this one can hold, for hs__order_early()) */
	s->next_low = lo < s->nidx && s->idx_off[lo] == offset
			  ? s->idx_first[stream_lowest(s, lo + 1)]
			  : INT64_MIN;
	/* the deferred chunks whose turn it is, then what goes before the rest */
	if (s->ndef && (err = defer_take_below(s, r, low)))
		return err;
	if (s->ndef && s->def_low < low)
		low = s->def_low;
	err = order_below(s, low);
	if (err)
		return err;
	/*
	 * Too many events wait for a chunk further on: this one's wait in
	 * the file instead (it is not the one they wait for)
	 */
	if (s->st_end - s->st_head >= STREAM_STAGE_CAP && lo < s->nidx &&
	    s->idx_off[lo] == offset && s->idx_first[lo] > low &&
	    (!s->ndef || (uint16_t)(s->seq - s->def[0].seq) < STREAM_DEFER_SPAN / 2)) {
		if (HS_GROW(s->def, s->ndef + 1, s->alloc_def))
			return -ENOMEM;
		if (!s->defer_scratch &&
		    !(s->defer_scratch =
			  hs_malloc(STREAM_DEFER_SCRATCH * sizeof(*s->defer_scratch))))
			return -ENOMEM;
		s->def[s->ndef++] = (struct order_deferred){
		    .offset = offset, .low = s->idx_first[lo], .seq = s->seq};
		defer_low(s);
		s->deferring = 1;
		s->defer_events = 0;
		s->deferred++;
	}
	return 0;
}

int hs__order_early(struct hs__order *s, int64_t rest)
{
	int64_t low = s->next_low < rest ? s->next_low : rest;
	int err;

	if (s->ndef && s->def_low < low)
		low = s->def_low;
	if (s->deferring || !s->nidx ||
	    s->st_end - s->st_head + s->run_n + s->seg_events < BATCH_EVENTS ||
	    (s->st_end > s->st_head && s->stage[s->st_head].time >= low))
		return 0;
	if ((s->in_run || s->nseg) && (err = hs__order_flush(s)))
		return err;
	return order_below(s, low);
}

/* @s without an index (none read yet, or a bad one). */
static void index_drop(struct hs__order *s)
{
	hs_free(s->idx_off);
	hs_free(s->idx_first);
	hs_free(s->idx_peeked);
	hs_free(s->idx_tree);
	s->idx_off = NULL;
	s->idx_first = NULL;
	s->idx_peeked = NULL;
	s->idx_tree = NULL;
	s->nidx = 0;
}

/* Room for an index of @n chunks in @s; -ENOMEM leaves @s without one. */
static int index_alloc(struct hs__order *s, uint64_t n)
{
	for (s->idx_leaves = 1; s->idx_leaves < n + 1; s->idx_leaves *= 2)
		;
	s->idx_off = hs_malloc((n + 1) * sizeof(uint64_t));
	s->idx_first = hs_malloc((n + 1) * sizeof(int64_t));
	s->idx_peeked = hs_calloc(n + 1, 1);
	s->idx_tree = hs_malloc(2 * s->idx_leaves * sizeof(size_t));
	if (s->idx_off && s->idx_first && s->idx_peeked && s->idx_tree)
		return 0;
	index_drop(s);
	return -ENOMEM;
}

/* The index's @n chunks' offsets and lowest times are in: its tree. */
static void index_build(struct hs__order *s, uint64_t n)
{
	size_t i;

	s->idx_first[n] = INT64_MAX;
	s->nidx = (size_t)n;
	for (i = 0; i < s->idx_leaves; i++)
		s->idx_tree[s->idx_leaves + i] = i < n ? i : n;
	for (i = s->idx_leaves; i-- > 1;)
		s->idx_tree[i] =
		    lower_chunk(s, s->idx_tree[2 * i], s->idx_tree[2 * i + 1]);
}

/*
 * The index of a trace without a footer (cut off: the program was
 * killed, the disk filled, the file was copied while written), rebuilt
 * from the whole chunks at its start: each EVENTS chunk's offset and the
 * real lowest time of its events, read from it (stream_peek()). Without
 * it the stream could keep only a window of events back, and a thread's
 * event written later than that (the collector drains its threads in
 * turns) made the caller load the whole trace: `stats` of a 10M-event
 * trace of two threads cut short took 508 MB against 48 MB whole. The
 * chunks are read twice, once here. A chunk that cannot be read says
 * INT64_MIN (the events wait until the walk reaches it); chunks past
 * where the chain of whole chunks breaks are not in the index, and an
 * event of theirs older than what went on stops the stream as before
 * (-EAGAIN: the caller loads the trace).
 */
static void index_rebuild(struct hs_trace_reader *r, struct hs__order *s)
{
	uint64_t off = HS_FILE_HEADER_SIZE, n = 0;
	struct hs_chunk_header ch;
	const uint8_t *hdr;
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		off = HS_FILE_HEADER_SIZE;
		i = 0;
		while (off <= r->size && r->size - off >= HS_CHUNK_HEADER_SIZE) {
			if (hs__reader_read_at(r, off, HS_CHUNK_HEADER_SIZE, &hdr) ||
			    hs_chunk_header_parse(hdr, &ch) || ch.stored > HS_CHUNK_MAX ||
			    ch.raw > HS_CHUNK_MAX ||
			    r->size - off - HS_CHUNK_HEADER_SIZE < ch.stored)
				break;
			if (ch.kind == HS_CHUNK_EVENTS) {
				if (pass)
					s->idx_off[i] = off;
				i++;
			}
			off += HS_CHUNK_HEADER_SIZE + ch.stored;
		}
		if (!pass) {
			n = i;
			if (!n || index_alloc(s, n))
				return;
		}
	}
	HS_BUG_ON(i != n);
	for (i = 0; i < n; i++) {
		s->idx_first[i] = stream_peek(s, r, i);
		s->idx_peeked[i] = 1;
	}
	peek_release(s);
	index_build(s, n);
	s->idx_rebuilt = 1;
}

/*
 * Read the footer's chunk index of the trace @r has open, if it has one
 * (its last END chunk holds it), into @s; without a footer, rebuild it
 * (index_rebuild()). Anything odd leaves @s without an index: the
 * stream then keeps a window of events back instead.
 */
static void hs__order_index(struct hs_trace_reader *r, struct hs__order *s)
{
	uint64_t counts[HS_FC__COUNT], n, i;
	const uint8_t *b, *be;
	uint8_t *raw;
	size_t len;

	if (hs__reader_footer(r, &raw, &b, &len)) {
		index_rebuild(r, s);
		return;
	}
	be = b + len;
	if (hs_footer_counts(&b, be, counts) || hs_footer_index_len(&b, be, &n) ||
	    n > (uint64_t)(be - b) / 3 || index_alloc(s, n))
		goto out;
	for (i = 0; i < n; i++) {
		struct hs_chunk_index ci;

		if (hs_footer_index_next(&b, be, &ci) ||
		    (i && ci.offset <= s->idx_off[i - 1])) {
			index_drop(s);
			goto out;
		}
		s->idx_off[i] = ci.offset;
		/* a chunk without events says UINT64_MAX */
		s->idx_first[i] =
		    ci.first_ticks > INT64_MAX ? INT64_MAX : (int64_t)ci.first_ticks;
	}
	index_build(s, n);
out:
	hs_free(raw);
}

/* Hand over every staged event (the end of the file). */
static int hs__order_drain(struct hs__order *s)
{
	int err = hs__order_flush(s);

	if (s->st_end - s->st_head > s->staged_max)
		s->staged_max = s->st_end - s->st_head;
	while (!err && s->st_end > s->st_head)
		err = hs__order_publish(s, BATCH_EVENTS);
	return err;
}

struct reading {
	struct hs_trace_reader r;
	struct hs_trace *t;
	struct hs__order *s;
	struct hs_diag *diag;
};

/* The reading thread: the whole trace, its events into batches. */
static void *stream_read(void *arg)
{
	struct reading *rd = arg;
	struct hs__order *s = rd->s;
	int err = hs__trace_walk(&rd->r, rd->t, 0, s, rd->diag);

	if (!err)
		err = hs__order_drain(s);
	pthread_mutex_lock(&s->mu);
	s->read_err = err;
	s->done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* The caller's side: one batch's groups through the sink. */
static int stream_consume(struct hs__order *s, struct batch *b)
{
	const struct hs_trace_sink *sink = s->sink;
	struct hs_trace_event *ev = b->ev;
	size_t n = b->n, start = 0, g = 0, i;
	int err = 0;

	if (!sink->live)
		return sink->events(sink->ctx, ev, n);
	/*
	 * A batch of one thread's events (hs__order_switch(): after the
	 * first events, every batch of a program with one thread at work):
	 * no tick has ties to order, and it goes to the sink whole, without
	 * a look at each event. It is at most BATCH_EVENTS and the rest of one tick,
	 * so the loop below would hand it whole too, after reading every
	 * event once more (a coarse clock's tick holds some 28,000 events:
	 * that read was 4% of `stats` of a 10M-event loop)
	 */
	if (b->one_thread)
		return sink->events(sink->ctx, ev, n);
	/*
	 * One thread's events only in this batch: no tick has ties to
	 * order, and a batch that fits a slice goes to the sink whole, as
	 * the loop below would hand it (which looked at every event for its
	 * tick: a twentieth of the caller's thread on a 10M-event loop)
	 */
	if (n && n <= STREAM_SLICE) {
		uint32_t thread = ev[0].thread, differ = 0;

		for (i = 1; i < n; i++)
			differ |= ev[i].thread ^ thread;
		if (!differ)
			return sink->events(sink->ctx, ev, n);
	}
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
			if (g > start &&
			    (err = sink->events(sink->ctx, ev + start, g - start)))
				return err;
			start = g;
			if (multi && (err = hs_order_ties(&s->ties, ev + g, i - g,
							  sink->live, sink->ctx)) < 0)
				return err;
			err = 0;
		}
		g = i;
	}
	return n > start ? sink->events(sink->ctx, ev + start, n - start) : 0;
}

static int stream(struct reading *rd, const struct hs_trace_sink *sink);

int hs_trace_stream(const char *path, struct hs_trace *t,
		    const struct hs_trace_sink *sink, struct hs_diag *diag)
{
	struct reading rd = {.t = t, .diag = diag};
	int err;

	memset(t, 0, sizeof(*t));
	err = hs_trace_reader_open(&rd.r, path, diag);
	return err ? err : stream(&rd, sink);
}

int hs_trace_stream_mem(const void *data, size_t n, const char *name, struct hs_trace *t,
			const struct hs_trace_sink *sink, struct hs_diag *diag)
{
	struct reading rd = {.t = t, .diag = diag};
	int err;

	memset(t, 0, sizeof(*t));
	err = hs_trace_reader_open_mem(&rd.r, data, n, name, diag);
	return err ? err : stream(&rd, sink);
}

/* hs_trace_stream() of the trace @rd->r has open (and closes). */
static int stream(struct reading *rd, const struct hs_trace_sink *sink)
{
	struct hs_trace *t = rd->t;
	struct hs__order s;
	pthread_t th;
	size_t i;
	int err = 0, rerr;

	memset(&s, 0, sizeof(s));
	s.sink = sink;
	s.run_thread = UINT32_MAX;
	s.last_thread = UINT32_MAX;
	s.mixed_to = INT64_MIN;
	s.in_flight_max = STREAM_IN_FLIGHT;
	rd->s = &s;
	hs__order_index(&rd->r, &s);
	/* (without the index the stage holds a window: copies, and a run
	 * ends at a bound) */
	s.lend_off = !s.nidx;
	s.run_cap = s.nidx ? 0 : 2 * STREAM_WINDOW;
	/* the pool decodes the events too, when it has the cores for it */
	rd->r.pf_decode = rd->r.pf_threads >= HS_PREFETCH_DECODE_MIN;
	/* else the reading thread decodes compact chunks into events itself */
	rd->r.unpack_events = 1;
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	if (pthread_create(&th, NULL, stream_read, rd)) {
		err = -EAGAIN; /* no thread: the caller loads the trace */
		goto out;
	}
	for (;;) {
		struct hs_trace_event *drop;
		struct batch *b;
		int failed, copy_cap;

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
		copy_cap = s.in_flight_max < STREAM_IN_FLIGHT;
		pthread_mutex_unlock(&s.mu);
		if (!err && !failed)
			err = stream_consume(&s, b);
		drop = NULL;
		if (b->alloc > BATCH_KEEP || copy_cap) {
			drop = b->own;
			b->own = NULL;
			b->alloc = 0;
		}
		pthread_mutex_lock(&s.mu);
		if (b->lent)
			s.stg[b->lent - 1].lent--;
		b->lent = 0;
		s.in_flight -= b->n;
		s.tail++;
		pthread_cond_broadcast(&s.cv);
		pthread_mutex_unlock(&s.mu);
		hs_free(drop);
	}
	pthread_join(th, NULL);
	rerr = s.read_err;
	if (!err && rerr != -ECANCELED)
		err = rerr;
	/* clock ticks that are not nanoseconds: the times were wrong */
	if (!err && t->info.clock != HS_CLOCK_NS && t->nr_clock)
		err = -EAGAIN;
	t->stream_staged_max = s.staged_max;
	t->stream_moves = s.moves;
	t->stream_deferred = s.deferred;
	t->stream_lent = s.lent;
	t->stream_copied = s.copied;
	t->stream_run_max = s.run_max;
	t->stream_index_rebuilt = s.idx_rebuilt;
	t->stream_copy_in_flight = s.copy_in_flight;
out:
	hs_trace_reader_close(&rd->r);
	for (i = 0; i < NR_BATCHES; i++)
		hs_free(s.b[i].own);
	/* (the stage is one of them) */
	for (i = 0; i < STAGE_BUFS; i++)
		hs_free(s.stg[i].ev);
	hs_free(s.run);
	for (i = 0; i < s.nseg; i++)
		hs_free(s.seg[i].ev);
	hs_free(s.seg);
	hs_free(s.def);
	hs_free(s.redo);
	hs_free(s.defer_scratch);
	hs_free(s.idx_off);
	hs_free(s.idx_first);
	hs_free(s.idx_peeked);
	hs_free(s.idx_tree);
	peek_release(&s);
	hs_tie_work_release(&s.ties);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	if (err)
		hs_trace_release(t);
	return err;
}
