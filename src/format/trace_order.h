#ifndef HS_FORMAT_TRACE_ORDER_H
#define HS_FORMAT_TRACE_ORDER_H
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "common/alloc.h"
#include "format/trace_reader.h"
#include "format/trace_ties.h"
#include "common/log.h"
#include "common/u64map.h"

/*
 * trace_order - the time-order sink of the walk (trace_order.c): the
 * events of hs_trace_stream(), staged and reordered on the reading
 * thread, handed to the caller's sink in time order on its own thread.
 * For format/ only: the walk (trace_walk.c) stages events through the
 * inline hs__order_event() and its fast loop fills the staging buffer
 * itself, so the state is here.
 *
 * Memory: the struct is the stream's (hs_trace_stream()); buffers come
 * from hs_malloc and are freed when the stream ends.
 */

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
 * go before (hs__order_chunk()); without it, the last STREAM_WINDOW. In the
 * staging array, a thread's events that come after later ones (a "run")
 * are gathered and merged into it in one pass, after the events of their
 * time already there, as in file order. A batch ends where the time
 * changes. An event older than what was handed over stops the stream
 * (-EAGAIN: the caller loads the trace whole).
 */
#define BATCH_EVENTS 2048
#define NR_BATCHES 64
#define STREAM_WINDOW ((size_t)1 << 17)
#define STREAM_SLICE 4096
/* with the chunk index: the chunks after the current one that are not
 * read ahead (hs__order_chunk()) */
#define STREAM_AHEAD 1
/* a staging buffer that grows has room for the events that need it and
 * 1/STREAM_SPARE as many again */
#define STREAM_SPARE 2
/* the least room the staging buffer of a trace with the index has */
#define STREAM_FLOOR (16 * BATCH_EVENTS)
/* the events handed over and not yet back, at most (unless one tick has
 * more): a coarse clock puts tens of thousands of events in one tick, and
 * NR_BATCHES batches of such ticks would hold megabytes each. A chunk's
 * events (about 90k) fit, so that the reading side decodes the next chunk
 * while the caller's side works through this one: at 16k, the two sides
 * took turns (`stats` of a 10M-event trace 1.45x the wall time) */
#define STREAM_IN_FLIGHT (64 * BATCH_EVENTS)
/* the same once a large stage turned lending off (hs__order_room()): its
 * staged events already hold megabytes, and batches in flight are copies
 * beside them, each buffer freed once the caller's side is done with it.
 * python3's exit (a stage of 110k events, then 62 copied batches): 4 MB
 * less at `stats`' highest point */
#define STREAM_COPY_IN_FLIGHT (16 * BATCH_EVENTS)
/* a batch of more than this (a large tick's) is lent from the stage even
 * under @lend_off, not copied: python3's exit, whose ticks hold up to
 * 180k events, had a copy of megabytes beside a stage as large */
#define BATCH_KEEP (2 * BATCH_EVENTS)

/*
 * Deferred chunks: when more than STREAM_STAGE_CAP events wait in the
 * staging buffer for a chunk further on that can hold older ones (a
 * thread whose buffer the collector drained late, while the others wrote
 * chunk after chunk), the events of the chunks read until then are not
 * staged: the walk goes through their records as always (stack nodes,
 * threads), and the chunk's place, lowest time and event count are kept
 * (struct order_deferred, a few dozen bytes). When the stream's time
 * reaches a deferred chunk's lowest time, its events are decoded again
 * from the file (hs__order_chunk()) and merged into the stage, after the
 * staged events of the same time from chunks before it and before those
 * from chunks after it (struct hs_trace_event's @seq), as in file order.
 * So what is kept back is at most about STREAM_STAGE_CAP events and a
 * chunk, however late a thread's events come; a trace whose threads'
 * chunks overlap less than that never re-decodes anything.
 */
#define STREAM_STAGE_CAP ((size_t)1 << 17)
/* chunks a deferred chunk may wait (struct hs_trace_event's @seq
 * compares chunk ordinals within 2^15; every STREAM_SEQ_RENORM chunks the
 * staged events' ordinals are brought up to date: order_renorm()) */
#define STREAM_DEFER_SPAN 16384u
#define STREAM_DEFER_SCRATCH 4096
#define STREAM_SEQ_RENORM 4096u

/*
 * A batch is up to BATCH_EVENTS staged events (more only when one tick
 * has more): lent (below), or a copy in a buffer of its own, which it
 * keeps for the next batch of its slot. A copied batch leaves the
 * staging buffer the reading side's alone, so it moves its waiting
 * events to its front and grows in place, and what the stream holds is
 * the staged events and STREAM_IN_FLIGHT handed over; a lent batch holds
 * its stage buffer until it comes back (hs__order_room() waits for it
 * before moving the events it points into).
 */
struct batch {
	struct hs_trace_event *ev; /* n events: in @own, or lent */
	size_t n;
	struct hs_trace_event *own; /* the slot's buffer (room for alloc) */
	size_t alloc;
	unsigned lent;	/* 1 + the stage buffer @ev points into, or 0 */
	int one_thread; /* its events are all of one thread */
};

/*
 * Lent batches: while the staging buffer is small (STAGE_LEND_MAX events
 * at most, a trace with the index whose threads' events are nearly in
 * order), a batch is not a copy but points into it, and the stage is one
 * of STAGE_BUFS buffers: when the current one is full, its waiting events
 * move to one that no batch points into any more (its @lent at 0), or
 * to its own front once its batches are back. The copy of every event
 * into a batch was a seventh of the reading thread on a 10M-event loop.
 * The STAGE_BUFS buffers of STREAM_FLOOR events or more hold about what
 * STREAM_IN_FLIGHT lets the caller's side have, so the reading side
 * seldom waits for one (six of them made `stats` of that loop 7 MB
 * larger than with copies, four as large; three, 2-3 MB less than four
 * on that loop and on python3, whose caller's side is the slower one
 * and kept all four full). A stage that must grow past
 * STAGE_LEND_MAX (threads whose events come out of order) waits for
 * every batch to come back, keeps only its current buffer, and batches
 * are copies from then on (@lend_off), as the earlier memory bound
 * wants, at most STREAM_COPY_IN_FLIGHT events of them in flight; a large
 * tick's batch (more than BATCH_KEEP events) is still lent, from the one
 * buffer, whose events move (to its front, or as it grows) only once it
 * is back (hs__order_room()).
 */
#define STAGE_BUFS 3
#define STAGE_LEND_MAX (4 * STREAM_FLOOR)
struct stage_buf {
	struct hs_trace_event *ev;
	size_t alloc;
	size_t lent; /* batches handed over that point into it (under @mu) */
};

struct hs__order {
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
	size_t in_flight; /* events in the batches handed over */
	int done, stop;
	/* the reorder window (the reading thread) */
	struct hs_trace_event *stage; /* waiting events, in order: [st_head, st_end) */
	size_t st_head, st_end, st_alloc;
	/* the stage is stg[stg_cur] (its ev and alloc kept equal to @stage
	 * and @st_alloc by hs__order_room()); the others are lent batches' */
	struct stage_buf stg[STAGE_BUFS];
	unsigned stg_cur;
	size_t lent;		    /* batches lent (for tests) */
	size_t copied;		    /* batches copied (for tests) */
	int lend_off;		    /* batches are copies (no index, or a large stage) */
	size_t in_flight_max;	    /* STREAM_IN_FLIGHT, or STREAM_COPY_IN_FLIGHT */
	size_t copy_in_flight;	    /* the most in flight under the latter (tests) */
	struct hs_trace_event *run; /* late events in order, until they merge */
	size_t run_n, run_alloc;
	/*
	 * Without an index (a cut-off trace whose index could not be
	 * rebuilt: index_rebuild()) nothing else ends a run of a thread
	 * whose time went back once: in a one-thread program the rest of
	 * the trace would gather in it (`stats` of a 10M-event loop cut
	 * short: 800 MB). A run that reaches @run_cap
	 * events waits to merge, as at a thread's switch, and a new one goes
	 * on; the merges are stable, so the order is the same. 0: no bound.
	 */
	size_t run_cap;
	size_t run_max;	     /* the most events in one run pushed (tests) */
	uint32_t run_thread; /* the thread whose events come now */
	int in_run;	     /* they go to @run, not to @stage */
	/*
	 * Batches of one thread's events, which have no ties to order: the
	 * caller's side need not look at each of their events
	 * (stream_consume()). @last_thread is the thread of the events
	 * staged last (UINT32_MAX: none, or not known); when another
	 * thread's come, the events staged so far are no later than the
	 * latest of them, and @mixed_to becomes that time (at least): a
	 * batch whose first event is later holds events staged since, of
	 * the one thread (hs__order_switch()). The walk's fast loops stage
	 * only the events of run_thread, which hs__order_event() sets.
	 */
	uint32_t last_thread;
	int64_t mixed_to;
	/*
	 * Runs that wait to be merged (hs__order_push()): in file order,
	 * each in time order and under half the size of the one before it
	 * (the stage before them all), so that an event is merged O(log n)
	 * times however often the file's time runs backwards.
	 */
	struct order_seg {
		struct hs_trace_event *ev;
		size_t n;
	} * seg;
	size_t nseg, alloc_seg, seg_events;
	size_t moves; /* events moved by merges */
	/*
	 * The footer's chunk index, when the trace has one: EVENTS chunks'
	 * offsets (increasing) and the lowest time each can hold (its first
	 * ticks, or what stream_peek() found; idx_first[nidx] is INT64_MAX),
	 * and a tree of the lowest of them (stream_lowest()); a cut-off
	 * trace's, rebuilt from its chunks (index_rebuild()). Events older
	 * than what the chunks still to come can hold go on; without an
	 * index, all but the last STREAM_WINDOW.
	 */
	uint64_t *idx_off;
	int64_t *idx_first;
	uint8_t *idx_peeked; /* stream_peek() read the chunk */
	size_t *idx_tree;    /* 2 * idx_leaves: chunks, the lowest first */
	size_t nidx, idx_leaves;
	int idx_rebuilt;		 /* no footer: index_rebuild() made it */
	uint8_t *peek_stored, *peek_raw; /* stream_peek()'s buffers */
	size_t alloc_peek_stored, alloc_peek_raw;
	struct hs_chunk_unpack peek_unpack;
	size_t peeks;		 /* chunks stream_peek() read */
	size_t staged_max;	 /* the most events kept back at a chunk's start */
	int64_t next_low;	 /* the lowest time the chunks after the current one
				  * can hold (INT64_MIN: not known) */
	int read_err;		 /* what reading returned */
	int published;		 /* some events were handed over ... */
	int64_t pub_time;	 /* ... the last of them at this time */
	struct hs_tie_work ties; /* the caller's side: hs_order_ties() */
	/*
	 * Deferred chunks (the reading thread), in file order: @seq is the
	 * current EVENTS chunk's ordinal (mod 2^16), @deferring says its
	 * events are not staged (@defer_events counts them).
	 */
	struct order_deferred {
		uint64_t offset; /* the chunk's file offset */
		int64_t low;	 /* the lowest time its events can have */
		size_t events;	 /* how many the walk went through */
		uint16_t seq;	 /* its ordinal */
	} * def;
	size_t ndef, alloc_def;
	int64_t def_low; /* the lowest @low of @def (INT64_MAX: none) */
	uint16_t seq;
	int deferring;
	size_t defer_events;
	/* where the walk's fast loops put a deferred chunk's events, which
	 * nobody reads (STREAM_DEFER_SCRATCH of them) */
	struct hs_trace_event *defer_scratch;
	size_t deferred; /* chunks deferred (for tests and benchmarks) */
	size_t chunks;	 /* EVENTS chunks seen */
	/* a deferred chunk's events, decoded again (hs__order_chunk()) */
	struct hs_trace_event *redo;
	size_t alloc_redo;
	/* set by the walk (trace_walk.c): thread id -> index, and the trace
	 * whose stack nodes the events refer to */
	const struct hs_u64map *tids;
	const struct hs_trace *trace;
};

HS_MUST_CHECK int hs__order_publish(struct hs__order *s, size_t n);
/*
 * The events of @thread are staged from now on, and those staged so far
 * may be of another (the reading thread): @mixed_to goes up to the
 * latest time staged.
 */
void hs__order_switch(struct hs__order *s, uint32_t thread);
HS_MUST_CHECK int hs__order_room(struct hs__order *s, size_t n);
/*
 * The run gathered so far waits to be merged (it becomes the last of the
 * runs), and runs merge while one is not under half the one before it.
 * 0, -EAGAIN (the run is older than what went on) or -ENOMEM.
 */
HS_MUST_CHECK int hs__order_push(struct hs__order *s);
/* Every waiting run merged into the stage: 0, -EAGAIN or -ENOMEM. */
HS_MUST_CHECK int hs__order_flush(struct hs__order *s);
/*
 * A chunk of the trace @r reads starts at @offset (the reading thread):
 * the staged events older than every event still to come go on.
 */
HS_MUST_CHECK int hs__order_chunk(struct hs__order *s, struct hs_trace_reader *r,
				  uint64_t offset);

/*
 * The end of the walk over the trace @r reads (the reading thread): the
 * deferred chunks' events are decoded again and staged, for
 * hs_trace_stream() to hand everything over. 0, -ECANCELED, -EAGAIN (a
 * chunk did not decode to the events the walk saw: the caller loads the
 * trace whole) or -ENOMEM.
 */
HS_MUST_CHECK int hs__order_undefer(struct hs__order *s, struct hs_trace_reader *r);

/*
 * In a chunk, the events still to come in it are no older than @rest
 * (the reading thread, from the pool's decoding: trace_prefetch.h): the
 * staged events older than those and than the chunks after it go on, so
 * that what is kept back is what the file has out of order, not a whole
 * chunk. 0, -ECANCELED (the caller's side stopped), -EAGAIN or -ENOMEM.
 */
HS_MUST_CHECK int hs__order_early(struct hs__order *s, int64_t rest);

/*
 * Stage one event of the walk (the reading thread): in order, or in the
 * run of a thread whose events come late. 0 or a negative errno
 * (-EAGAIN: older than what went on).
 */
HS_MUST_CHECK
static inline __attribute__((always_inline)) int
hs__order_event(struct hs__order *s, uint32_t thread, uint64_t ticks, enum hs_trace_op op,
		unsigned fn, uint64_t addr, uint64_t size, uint64_t node)
{
	struct hs_trace_event *e;
	int64_t time = (int64_t)ticks;
	int err;

	if (s->deferring) {
		/* (the chunk's events are decoded again in their turn) */
		s->defer_events++;
		return 0;
	}
	/*
	 * Another thread's events, or time going backwards: the run gathered
	 * so far waits to merge, and the events that come now are a run of
	 * their own when they go before the staged ones (or runs wait)
	 */
	if (thread != s->run_thread ||
	    (s->in_run ? s->run_n && time < s->run[s->run_n - 1].time
		       : s->st_end > s->st_head && time < s->stage[s->st_end - 1].time)) {
		if (s->in_run && (err = hs__order_push(s)))
			return err;
		if (thread != s->last_thread)
			hs__order_switch(s, thread);
		s->run_thread = thread;
		s->in_run = s->nseg || (s->st_end > s->st_head &&
					time < s->stage[s->st_end - 1].time);
	}
	/* a run at its bound waits to merge, as at a thread's switch */
	if (s->in_run && s->run_cap && s->run_n >= s->run_cap) {
		if ((err = hs__order_push(s)))
			return err;
		s->in_run = s->nseg || (s->st_end > s->st_head &&
					time < s->stage[s->st_end - 1].time);
	}
	if (s->in_run) {
		if (s->run_n == s->run_alloc &&
		    HS_GROW(s->run, s->run_n + 1, s->run_alloc))
			return -ENOMEM;
		e = &s->run[s->run_n++];
	} else {
		if (s->published && (int64_t)ticks <= s->pub_time)
			return -EAGAIN;
		if (s->st_end == s->st_alloc && (err = hs__order_room(s, 1)))
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
	e->seq = s->seq;
	if (s->nidx || s->st_end - s->st_head < STREAM_WINDOW + BATCH_EVENTS)
		return 0;
	return hs__order_publish(s, BATCH_EVENTS);
}

#endif
