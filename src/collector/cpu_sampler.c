/*
 * cpu_sampler - the sampler thread of CPU and wall-clock sampling
 * (cpu_internal.h has the map of the cpu_*.c files).
 *
 * The thread (created by cpu.c with the guard set and every signal
 * blocked, like the writer) wakes at the wall rate, or every 10 ms, and:
 *   - learns the unwind rules of the addresses handlers found none for
 *     and publishes them for the handlers (two tables, the big one and
 *     one of recent rules, each double-buffered: a table is written only
 *     while handlers search the other of its pair);
 *   - drains every thread's ring of raw samples: it interns the stacks in
 *     the shared stack tree and writes NODE and SAMPLE records into its
 *     own ring, which the writer drains like any thread's (a batch sorted
 *     by time);
 *   - with --wall, runs a tick of cpu_wall.c;
 * and at the end writes SAMPLING_END with the counts.
 *
 * Everything here runs on the sampler thread only, except
 * hs__cpu_sampler_alloc() and hs__cpu_sampler_reset() (start-up and a
 * followed fork child, before the thread starts).
 */
#include "collector/cpu_internal.h"
#include "format/trace_writer.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define SIG_RULES (1u << 16)	/* the handlers' big rule table: rules at most */
#define RECENT_RULES (1u << 14) /* their table of recent rules: at most */
#define RECENT_MAX (1u << 13)	/* ... before they go into the big one */
#define REBUILD_NS 1000000000u	/* ... or after this long (ns) */
#define BATCH 1024		/* samples sorted and written at once */

struct out_sample {
	uint64_t ticks, dur;
	pid_t tid;
	uint32_t kind, node;
};

static uint64_t n_cpu, n_wall; /* samples written */
/* written by the sampler thread only; each pair: the one handlers search
 * and the one the next publication writes */
static struct sig_table *big_tab[2], *recent_tab[2];
static uint64_t last_rebuild; /* ns: the big table's last rebuild */
static uint64_t sig_rules_gen;

struct batch {
	struct out_sample s[BATCH];
	size_t n;
	uint64_t last_ticks;
};

static struct batch *batch;

static void emit_batch(struct hs_thread *t)
{
	size_t i, j;

	/* insertion sort by time: batches are small and nearly sorted */
	for (i = 1; i < batch->n; i++) {
		struct out_sample x = batch->s[i];

		for (j = i; j > 0 && batch->s[j - 1].ticks > x.ticks; j--)
			batch->s[j] = batch->s[j - 1];
		batch->s[j] = x;
	}
	for (i = 0; i < batch->n; i++) {
		struct out_sample *o = &batch->s[i];
		uint8_t body[5 * HS_VARINT_MAX], *q;

		if (o->ticks < batch->last_ticks)
			o->ticks = batch->last_ticks;
		batch->last_ticks = o->ticks;
		q = hs_enc_sample_body(body, o->ticks, (uint64_t)o->tid, o->kind, o->dur,
				       o->node);
		hs_emit_sized(t, HS_TAG_SAMPLE, body, (size_t)(q - body));
		if (o->kind == HS_SAMPLE_CPU)
			n_cpu++;
		else
			n_wall++;
	}
	batch->n = 0;
}

void hs__cpu_add_out(struct hs_thread *t, uint64_t ticks, uint64_t dur, pid_t tid,
		     unsigned kind, uint32_t node)
{
	struct out_sample *o;

	if (batch->n == BATCH)
		emit_batch(t);
	o = &batch->s[batch->n++];
	o->ticks = ticks;
	o->dur = dur;
	o->tid = tid;
	o->kind = kind;
	o->node = node;
}

#define LEARN_CAP 4096	/* rules learned per tick at most */
#define LEARN_ROWS 16	/* rows learned each way from a miss */
#define LEARN_SPAN 4096 /* ... within this many bytes */

static struct sig_rule new_rules[LEARN_CAP];
static size_t nr_new;

/* The rules learned this tick that hold @a, or NULL. */
static const struct sig_rule *new_rule_find(uintptr_t a)
{
	size_t i;

	for (i = nr_new; i-- > 0;)
		if (new_rules[i].lo <= a && a < new_rules[i].hi)
			return &new_rules[i];
	return NULL;
}

/* The rule of code address @a, published or about to be, or NULL. */
static const struct sig_rule *known_rule(uintptr_t a)
{
	const struct sig_rule *x = hs__cpu_view_find(hs__cpu_view_now(), a);

	return x ? x : new_rule_find(a);
}

static int sig_rule_known(uintptr_t a)
{
	return known_rule(a) != NULL;
}

static int same_rule(const struct sig_rule *x, const struct sig_rule *y)
{
	return x->kind == y->kind && x->cfa_off == y->cfa_off && x->bp_off == y->bp_off;
}

/* The rule of the CFI row at code address @a into @s; 0 if it has none. */
static int row_at(struct hs_thread *t, uintptr_t a, struct sig_rule *s)
{
	struct hs_rule r;

	hs_unwind_rule_range(t, a, &r, &s->lo, &s->hi);
	s->cfa_off = r.cfa_off;
	s->bp_off = r.bp_off;
	s->kind = r.kind;
	return s->lo < s->hi && s->lo <= a && a < s->hi &&
	       (r.kind == HS_RULE_RSP || r.kind == HS_RULE_RBP || r.kind == HS_RULE_END);
}

/*
 * Learn the rules around code address @a for the handlers' next table:
 * its CFI row, then the rows before and after it (up to LEARN_ROWS each
 * way, within LEARN_SPAN bytes, stopping at code without CFI or at a
 * known rule), so that the other instructions and call sites of the
 * function need no miss of their own. Adjacent rows with the same rule
 * become one range (a shorter table to search).
 */
static void add_sig_rule(struct hs_thread *t, uintptr_t a)
{
	struct sig_rule *s, x;
	size_t first;
	unsigned k;

	if (nr_new == LEARN_CAP || sig_rule_known(a))
		return;
	first = nr_new;
	s = &new_rules[nr_new++];
	if (!row_at(t, a, s))
		return; /* no usable row: the handler goes to libunwind there */
	/* the rows after it */
	for (k = 0; k < LEARN_ROWS && s->hi < a + LEARN_SPAN; k++) {
		if (sig_rule_known(s->hi) || !row_at(t, s->hi, &x) || x.lo != s->hi)
			break;
		if (same_rule(&x, s)) {
			s->hi = x.hi;
		} else if (nr_new < LEARN_CAP) {
			s = &new_rules[nr_new++];
			*s = x;
		} else {
			break;
		}
	}
	/* the rows before it */
	s = &new_rules[first];
	for (k = 0; k < LEARN_ROWS && s->lo + LEARN_SPAN > a; k++) {
		if (sig_rule_known(s->lo - 1) || !row_at(t, s->lo - 1, &x) ||
		    x.hi != s->lo)
			break;
		if (same_rule(&x, s)) {
			s->lo = x.lo;
		} else if (nr_new < LEARN_CAP) {
			s = &new_rules[nr_new++];
			*s = x;
		} else {
			break;
		}
	}
}

static int cmp_rule(const void *a, const void *b)
{
	const struct sig_rule *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Merge the sorted rules @a[@na] and @b[@nb] into @dst (at most its cap);
 * where two overlap, the first keeps its range and the other what lies
 * beyond it.
 */
static void merge_rules(struct sig_table *dst, const struct sig_rule *a, size_t na,
			const struct sig_rule *b, size_t nb)
{
	size_t i = 0, j = 0, n = 0;

	while ((i < na || j < nb) && n < dst->cap) {
		const struct sig_rule *x;

		if (j == nb || (i < na && a[i].lo <= b[j].lo))
			x = &a[i++];
		else
			x = &b[j++];
		dst->r[n] = *x;
		if (n && x->lo < dst->r[n - 1].hi) {
			/* overlaps the one before: keep that, and the rest of this */
			if (x->hi <= dst->r[n - 1].hi)
				continue;
			dst->r[n].lo = dst->r[n - 1].hi;
		}
		n++;
	}
	dst->n = n;
}

/* The table of @pair that handlers do not search (@cur is the other). */
static struct sig_table *other_table(struct sig_table *pair[2],
				     const struct sig_table *cur)
{
	return cur == pair[0] ? pair[1] : pair[0];
}

/*
 * Publish the new rules (new_rules[nr_new]) for the handlers, or with
 * @empty forget every rule. The new rules join the recent table; when it
 * has grown past RECENT_MAX or REBUILD_NS have passed, it joins the big
 * table, published first, then an empty recent one. A table is written
 * only while handlers search the other of its pair.
 */
static void publish_rules(int empty)
{
	struct sig_table *big = atomic_load(&hs__cpu_sig_big);
	struct sig_table *recent = atomic_load(&hs__cpu_sig_recent);
	struct sig_table *rt = other_table(recent_tab, recent), *bt;
	uint64_t now;

	if (empty) {
		bt = other_table(big_tab, big);
		bt->n = 0;
		rt->n = 0;
		atomic_store_explicit(&hs__cpu_sig_big, bt, memory_order_release);
		atomic_store_explicit(&hs__cpu_sig_recent, rt, memory_order_release);
		nr_new = 0;
		return;
	}
	if (!nr_new)
		return;
	qsort(new_rules, nr_new, sizeof(new_rules[0]), cmp_rule);
	merge_rules(rt, recent->r, recent->n, new_rules, nr_new);
	nr_new = 0;
	now = hs_now_ns();
	if (rt->n <= RECENT_MAX && now - last_rebuild < REBUILD_NS) {
		atomic_store_explicit(&hs__cpu_sig_recent, rt, memory_order_release);
		return;
	}
	bt = other_table(big_tab, big);
	merge_rules(bt, big->r, big->n, rt->r, rt->n);
	atomic_store_explicit(&hs__cpu_sig_big, bt, memory_order_release);
	rt->n = 0;
	atomic_store_explicit(&hs__cpu_sig_recent, rt, memory_order_release);
	last_rebuild = now;
}

/* Move the raw samples of every thread into the batch. */
static void collect(struct hs_thread *t)
{
	struct cpu_thread *c;
	uint64_t g = atomic_load(&hs_gen);

	hs_thread_check_gen(t);
	if (g != sig_rules_gen) {
		/* a module went away: its rules with it */
		sig_rules_gen = g;
		publish_rules(1);
	}
	for (c = atomic_load(&hs__cpu_registry); c; c = c->next) {
		unsigned mt = atomic_load_explicit(&c->miss_tail, memory_order_relaxed);
		unsigned mh = atomic_load_explicit(&c->miss_head, memory_order_acquire);

		for (; mt != mh; mt++)
			add_sig_rule(t, c->miss[mt % MISS_SLOTS]);
		atomic_store_explicit(&c->miss_tail, mt, memory_order_release);
	}
	publish_rules(0);
	for (c = atomic_load(&hs__cpu_registry); c; c = c->next) {
		uint64_t tail = atomic_load_explicit(&c->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&c->head, memory_order_acquire);

		for (; tail != head; tail++) {
			struct raw *r = &c->slots[tail % RAW_SLOTS];
			uint32_t node = hs_stack_intern(t, r->ips, r->n, r->complete);

			if (r->kind == HS_SAMPLE_CPU) {
				hs__cpu_add_out(t, r->ticks, r->dur, c->tid, r->kind,
						node);
				continue;
			}
			/* wall: waiting for a CPU, then running */
			if (r->ready)
				hs__cpu_add_out(t, r->ticks - r->dur, r->ready, c->tid,
						HS_SAMPLE_WALL_READY, node);
			if (r->kind == HS_SAMPLE_WALL_BLOCKED) {
				/* without /proc: the stack of this blocked episode */
				hs__cpu_add_blocked(t, c, r->ticks, r->dur, node);
				c->blocked_node = node;
				c->blocked_valid = 1;
			} else if (r->dur) {
				hs__cpu_add_out(t, r->ticks, r->dur, c->tid, r->kind,
						node);
			}
		}
		atomic_store_explicit(&c->tail, tail, memory_order_release);
		if (atomic_load(&c->state) == HS_T_EXITED &&
		    atomic_load(&c->head) == tail) {
			int expect = HS_T_EXITED;

			pthread_mutex_lock(&hs__cpu_sig_lock);
			hs__cpu_wall_release(t, c);
			pthread_mutex_unlock(&hs__cpu_sig_lock);
			atomic_compare_exchange_strong(&c->state, &expect, HS_T_FREE);
		}
	}
}

/*
 * The rule of code address @a for the sampler's own walks: from the
 * handlers' table, the rules to publish next, else learned now (and
 * published for the handlers too). 0 if no rule the walk can use.
 */
int hs__cpu_sampler_rule(struct hs_thread *t, uintptr_t a, struct sig_rule *r)
{
	const struct sig_rule *x = known_rule(a);

	if (!x) {
		add_sig_rule(t, a);
		x = new_rule_find(a);
	}
	if (x)
		*r = *x;
	else if (!row_at(t, a, r))
		return 0;
	return r->kind == HS_RULE_RSP || r->kind == HS_RULE_RBP || r->kind == HS_RULE_END;
}

/*
 * While every thread stays blocked where it was, wall ticks space out,
 * doubling up to IDLE_MAX ns apart (an idle program costs a few wake-ups
 * a second, not a thousand); the first tick that sees a thread run goes
 * back to the rate. Samples still cover all the time: a tick's samples
 * last from the previous tick.
 */
#define IDLE_MAX 16000000u
#define IDLE_SHIFT 8

void *hs__cpu_sampler_main(void *arg)
{
	struct hs_thread *t;
	uint64_t period, next, last_emit = 0;
	unsigned idle = 0; /* ticks are period << idle apart */
	uint8_t body[5 * HS_VARINT_MAX], *q;
	uint64_t dropped = 0, flags;
	struct cpu_thread *c;

	(void)arg;
	hs_tls.guard = 1;
	syscall(SYS_prctl, PR_SET_NAME, "heapscope", 0, 0, 0);
	atomic_store(&hs_sampler_tid, (pid_t)syscall(SYS_gettid));
	t = hs_thread_get();
	if (!t)
		return NULL;
	flags = (hs_cfg.no_heap ? 1u : 0u) |
		(hs_cfg.cpu_hz && !atomic_load(&hs__cpu_perf_ok) ? 2u : 0u);
	q = hs_enc_sampling_body(body, hs_now_ns(), hs_cfg.cpu_hz, hs_cfg.wall_hz,
				 (uint64_t)atomic_load(&hs__cpu_signo), flags);
	hs_emit_sized(t, HS_TAG_SAMPLING, body, (size_t)(q - body));
	period = hs_cfg.wall_hz ? 1000000000u / hs_cfg.wall_hz : 10000000u;
	hs__cpu_wall_begin(period);
	next = hs_now_ns();
	while (atomic_load(&hs__cpu_sampler_run)) {
		struct timespec ts;
		uint64_t now, abs;

		next += idle < IDLE_SHIFT ? period << idle : period << IDLE_SHIFT;
		now = hs_now_ns();
		if (next + 10 * period < now)
			next = now; /* far behind: do not catch up */
		abs = next + hs_start_ns;
		ts.tv_sec = (time_t)(abs / 1000000000u);
		ts.tv_nsec = (long)(abs % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
		       EINTR)
			;
		now = hs_now_ns();
		collect(t);
		if (hs_cfg.wall_hz && atomic_load(&hs__cpu_sampling)) {
			int busy = hs__cpu_wall_tick(t);

			if (busy > 0)
				idle = 0;
			else if (!busy && idle < IDLE_SHIFT &&
				 period << (idle + 1) <= IDLE_MAX)
				idle++;
		}
		if (now - last_emit >= 10000000u || batch->n > BATCH / 2) {
			emit_batch(t);
			last_emit = now;
		}
	}
	collect(t);
	pthread_mutex_lock(&hs__cpu_sig_lock);
	for (c = atomic_load(&hs__cpu_registry); c; c = c->next) {
		hs__cpu_wall_release(t, c);
		dropped += c->dropped;
	}
	pthread_mutex_unlock(&hs__cpu_sig_lock);
	emit_batch(t);
	q = hs_enc_sampling_end_body(body, hs_now_ns(), n_cpu, n_wall, dropped,
				     hs__cpu_n_signals);
	hs_emit_sized(t, HS_TAG_SAMPLING_END, body, (size_t)(q - body));
	return NULL;
}

int hs__cpu_sampler_alloc(void)
{
	int i;

	batch = map_zero(sizeof(*batch));
	for (i = 0; i < 2; i++) {
		big_tab[i] = map_zero(sizeof(struct sig_table) +
				      SIG_RULES * sizeof(struct sig_rule));
		recent_tab[i] = map_zero(sizeof(struct sig_table) +
					 RECENT_RULES * sizeof(struct sig_rule));
		if (!big_tab[i] || !recent_tab[i])
			return -1;
		big_tab[i]->cap = SIG_RULES;
		recent_tab[i]->cap = RECENT_RULES;
	}
	if (!batch)
		return -1;
	atomic_store(&hs__cpu_sig_big, big_tab[0]);
	atomic_store(&hs__cpu_sig_recent, recent_tab[0]);
	last_rebuild = hs_now_ns();
	sig_rules_gen = atomic_load(&hs_gen);
	return 0;
}

void hs__cpu_sampler_reset(void)
{
	n_cpu = n_wall = hs__cpu_n_signals = 0;
	batch->n = 0;
	batch->last_ticks = 0;
}
