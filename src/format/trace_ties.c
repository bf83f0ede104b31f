/*
 * trace_ties - the order of events of several threads that share a clock
 * tick (see trace_ties.h).
 */
#include "format/trace_ties.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reallocate one column of a set of parallel arrays to @cap items. */
static int grow_col(void **col, size_t cap, size_t elem)
{
	void *p = hs_realloc(*col, cap * elem);

	if (!p)
		return -ENOMEM;
	*col = p;
	return 0;
}

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

void hs_tie_work_release(struct hs_tie_work *w)
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
static int tie_work_room(struct hs_tie_work *w, size_t r)
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
static size_t run_emit(struct hs_tie_work *w, size_t n, size_t g, size_t from)
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
static size_t run_emit_all(struct hs_tie_work *w, size_t n, const size_t *blocks,
			   size_t nb, const size_t *nest, size_t nn)
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

static void heap_push(struct hs_tie_work *w, size_t *h, size_t *n, size_t g)
{
	size_t i = (*n)++;

	while (i && HEAP_KEY(w, h[(i - 1) / 2]) > HEAP_KEY(w, g)) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = g;
}

static size_t heap_pop(struct hs_tie_work *w, size_t *h, size_t *n)
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
static void order_run(struct hs_tie_work *w, size_t r, int live)
{
	size_t ng = 0, nk[4] = {0}, first[4], fill[4] = {0}, i, g, n = 0;
	size_t *heap[2] = {w->heap, w->heap + r}, nh[2] = {0, 0};
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
			nk[2 * RUN_FREE(w, w->group[g]) +
			   RUN_FREE(w, w->group[g + 1] - 1)]++;
		for (first[0] = 0, i = 1; i < 4; i++)
			first[i] = first[i - 1] + nk[i - 1];
		for (g = 0; g < ng; g++) {
			int k = 2 * RUN_FREE(w, w->group[g]) +
				RUN_FREE(w, w->group[g + 1] - 1);

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
		heap_push(w, heap[RUN_FREE(w, w->group[g])],
			  &nh[RUN_FREE(w, w->group[g])], g);
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
 * A tick's table of more than TIE_FAR slots is past the core's first
 * cache: each event asks for the slot of the event TIE_AHEAD after it
 * (a coarse clock puts thousands of events in one tick, whose table's
 * random loads were most of hs_order_ties() on a 2-thread loop)
 */
#define TIE_AHEAD 24
#define TIE_FAR ((size_t)1 << 12)

/*
 * Order the @n events of one tick, @grp (in file order), where several
 * threads' events of one address share it (order_run()); @live says
 * whether the block at an address was live before the tick. Returns 1
 * when events moved, 0 when not, or -ENOMEM.
 */
int hs_order_ties(struct hs_tie_work *w, struct hs_trace_event *grp, size_t n,
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

		if (mask >= TIE_FAR && i + TIE_AHEAD < n)
			__builtin_prefetch(
			    &w->seen[seen_slot(grp[i + TIE_AHEAD].addr, mask)], 1);
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
			w->seen[k].thread = UINT32_MAX; /* several threads */
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
