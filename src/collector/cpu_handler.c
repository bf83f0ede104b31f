/*
 * cpu_handler - the sampling signal's handler and everything it calls
 * (heapscope run --cpu, --wall; cpu_internal.h has the map of the files).
 *
 * THE RULE OF THIS FILE: its code runs inside a signal, on any thread of
 * the program, at any instruction (inside malloc, inside a heap hook,
 * inside a lock the program or libc holds). So it takes no lock, never
 * allocates, and calls only async-signal-safe functions: atomics,
 * clock_gettime(), libunwind's local unwinding (which libunwind makes
 * signal-safe; its memory pool is mmap'd, with the guard set so that it is
 * not recorded), read(2) of the thread's perf event, the collector's
 * hs_now_ns() and hs_fatal_signal(), and
 * hs_msg() (a stack buffer and write(2); only with unwind=check). Nothing
 * else goes in this file: code for the sampler thread or the program's
 * threads lives beside it in cpu_*.c. scripts/check-signal-safe.py lists
 * the calls allowed here and refuses malloc, stdio, locks and any call
 * not on its list (`meson test signal_safety`).
 *
 * What the handler does: it unwinds from the signal's context into a slot
 * of the thread's own ring of raw samples (single producer: the handler;
 * single consumer: the sampler thread). A full ring drops the sample
 * (counted). The walk uses unwind rules (CFA = rsp or rbp + offset, where
 * rbp was saved), each for the range of code addresses its CFI row
 * covers, from a sorted table that only the sampler thread writes and
 * handlers search without locks: a frame costs a binary search and two
 * loads, each load checked against the thread's stack bounds. The sampler
 * publishes a new table by writing the other of two buffers and swapping
 * a pointer; a handler that stayed in a search across two publications
 * could read a wrong rule, which gives a wrong stack, never a crash. An
 * address without a rule yet is handed to the sampler (a lock-free ring
 * per thread) and that sample is walked by libunwind instead, as are
 * frames the rules cannot describe (signal frames, DWARF expressions).
 * The handler never touches the thread's heap-event ring, its stack
 * caches or any lock, so it may interrupt a heap hook anywhere.
 *
 * Signals the collector did not send, on the sampling signal, get what
 * the program set (foreign()).
 */
#define UNW_LOCAL_ONLY
#include "collector/cpu_internal.h"
#include <errno.h>
#include <libunwind.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

_Atomic(struct sig_table *) hs__cpu_sig_big, hs__cpu_sig_recent;
_Atomic uint64_t hs__cpu_n_fast, hs__cpu_n_slow, hs__cpu_n_checked, hs__cpu_n_differ;
_Atomic uint64_t hs__cpu_n_miss_leaf, hs__cpu_n_miss_deep;
_Atomic uint64_t hs__cpu_n_no_rule, hs__cpu_n_bounds;
_Atomic uint64_t hs__cpu_n_unwinder_busy;

/* Unwind from the interrupted context: exact leaf, then call sites. */
static unsigned unwind_signal(void *uc, uintptr_t *ips, unsigned max, int *complete)
{
	unw_cursor_t c;
	unsigned n = 0;
	int exact = 1;

	*complete = 0;
	if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	for (;;) {
		unw_word_t ip = 0;
		int r;

		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
			return n;
		if (!ip) {
			*complete = 1;
			return n;
		}
		if (n == max)
			return n;
		ips[n++] = exact ? ip : ip - 1;
		exact = unw_is_signal_frame(&c) > 0;
		r = unw_step(&c);
		if (r == 0) {
			*complete = 1;
			return n;
		}
		if (r < 0)
			return n;
	}
}

/* The rule whose range holds code address @a in @tb, or NULL. */
static const struct sig_rule *sig_rule_find(const struct sig_table *tb, uintptr_t a)
{
	size_t lo = 0, hi = tb->n, mid;

	if (hi > tb->cap)
		return NULL;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (tb->r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && a < tb->r[lo - 1].hi)
		return &tb->r[lo - 1];
	return NULL;
}

struct sig_view hs__cpu_view_now(void)
{
	struct sig_view v = {
	    atomic_load_explicit(&hs__cpu_sig_big, memory_order_acquire),
	    atomic_load_explicit(&hs__cpu_sig_recent, memory_order_acquire),
	};

	return v;
}

/* The rule of code address @a in @v, or NULL. */
const struct sig_rule *hs__cpu_view_find(struct sig_view v, uintptr_t a)
{
	const struct sig_rule *r;

	if (!v.big || !v.recent)
		return NULL;
	r = sig_rule_find(v.big, a);
	return r ? r : sig_rule_find(v.recent, a);
}

static void note_miss(struct cpu_thread *c, uintptr_t key)
{
	unsigned h = atomic_load_explicit(&c->miss_head, memory_order_relaxed);

	if (h - atomic_load_explicit(&c->miss_tail, memory_order_acquire) >= MISS_SLOTS)
		return;
	c->miss[h % MISS_SLOTS] = key;
	atomic_store_explicit(&c->miss_head, h + 1, memory_order_release);
}

static inline int in_stack(const struct cpu_thread *c, uintptr_t a)
{
	return a >= c->stack_lo && a <= c->stack_hi - sizeof(uintptr_t);
}

/*
 * libunwind in a handler takes its own lock and then the loader's
 * (dl_iterate_phdr). A thread interrupted while it holds the loader's
 * lock (in dl_iterate_phdr, dlopen, or the collector's own module scan)
 * would wait in its handler for libunwind's lock, whose holder, another
 * handler, waits for the loader's: both threads stop for good. So one
 * handler at a time may use libunwind, and none on a thread interrupted
 * inside the collector; the others keep what the rules walked, or the
 * leaf alone (an incomplete stack).
 */
static atomic_flag unwinder_busy = ATOMIC_FLAG_INIT;

static int unwinder_enter(const struct cpu_thread *c)
{
	if (c->in_collector ||
	    atomic_flag_test_and_set_explicit(&unwinder_busy, memory_order_acquire)) {
		atomic_fetch_add_explicit(&hs__cpu_n_unwinder_busy, 1,
					  memory_order_relaxed);
		return 0;
	}
	return 1;
}

static void unwinder_leave(void)
{
	atomic_flag_clear_explicit(&unwinder_busy, memory_order_release);
}

/*
 * Walk with the rules from the signal's registers: the exact leaf, then
 * call sites. Returns the depth, or -1 when the walk needs libunwind (an
 * address without a rule, which is noted for the sampler, or a frame the
 * rules do not describe).
 */
static int walk_rules(struct cpu_thread *c, struct sig_view tb, uintptr_t key,
		      uintptr_t sp, uintptr_t bp, uintptr_t *ips, unsigned n,
		      unsigned max, int *complete)
{
	uintptr_t cfa;

	if (!in_stack(c, sp)) {
		atomic_fetch_add_explicit(&hs__cpu_n_bounds, 1, memory_order_relaxed);
		return -1;
	}
	for (;;) {
		const struct sig_rule *r;

		if (n == max) {
			*complete = 0;
			return (int)n;
		}
		ips[n++] = key - 1;
		r = hs__cpu_view_find(tb, key - 1);
		if (!r) {
			note_miss(c, key - 1);
			atomic_fetch_add_explicit(n == 1 ? &hs__cpu_n_miss_leaf
							 : &hs__cpu_n_miss_deep,
						  1, memory_order_relaxed);
			return n == 1 ? -2 : -1;
		}
		switch (r->kind) {
		case HS_RULE_RSP:
			cfa = sp + (uintptr_t)r->cfa_off;
			break;
		case HS_RULE_RBP:
			cfa = bp + (uintptr_t)r->cfa_off;
			break;
		case HS_RULE_END:
			*complete = 1;
			return (int)n;
		case HS_RULE_STOP:
			*complete = 0;
			return (int)n;
		default:
			atomic_fetch_add_explicit(&hs__cpu_n_no_rule, 1,
						  memory_order_relaxed);
			return -1;
		}
		if (cfa <= sp || cfa - sp > MAX_FRAME || !in_stack(c, cfa - 8)) {
			atomic_fetch_add_explicit(&hs__cpu_n_bounds, 1,
						  memory_order_relaxed);
			return -1;
		}
		if (r->bp_off) {
			if (!in_stack(c, cfa + (uintptr_t)(intptr_t)r->bp_off)) {
				atomic_fetch_add_explicit(&hs__cpu_n_bounds, 1,
							  memory_order_relaxed);
				return -1;
			}
			bp = *(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)r->bp_off);
		}
		key = *(const uintptr_t *)(cfa - 8);
		sp = cfa;
		if (!key) {
			*complete = 1;
			return (int)n;
		}
	}
}

/*
 * Walk with the rules from the signal's registers: the exact leaf, then
 * call sites. A leaf without a rule yet (signals land anywhere in the
 * code, so that is the common miss) is stepped over by libunwind, the
 * rest walked with the rules again. Returns the depth, or -1 when the
 * walk needs libunwind (an address without a rule, noted for the sampler,
 * or a frame the rules do not describe).
 */
static int fast_walk(struct cpu_thread *c, void *ucv, uintptr_t *ips, unsigned max,
		     int *complete)
{
	const ucontext_t *uc = ucv;
	struct sig_view tb = hs__cpu_view_now();
	unw_word_t ip = 0, sp = 0, bp = 0;
	unw_cursor_t cur;
	int n;

	if (!tb.big || !tb.recent)
		return -1;
	n = walk_rules(c, tb, (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] + 1,
		       (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
		       (uintptr_t)uc->uc_mcontext.gregs[REG_RBP], ips, 0, max, complete);
	if (n != -2)
		return n;
	/* the leaf by libunwind: one step */
	if (!unwinder_enter(c))
		return -1;
	n = unw_init_local2(&cur, (unw_context_t *)ucv, UNW_INIT_SIGNAL_FRAME) < 0 ||
	    unw_is_signal_frame(&cur) > 0 || unw_step(&cur) <= 0 ||
	    unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 ||
	    unw_get_reg(&cur, UNW_REG_SP, &sp) < 0 ||
	    unw_get_reg(&cur, UNW_X86_64_RBP, &bp) < 0;
	unwinder_leave();
	if (n)
		return -1;
	if (!ip) {
		*complete = 1;
		return 1;
	}
	return walk_rules(c, tb, (uintptr_t)ip, (uintptr_t)sp, (uintptr_t)bp, ips, 1, max,
			  complete);
}

/*
 * With unwind=check: walk again with libunwind alone and compare. The
 * first differences are told with the rule of the frame whose caller
 * differs (the rule that went wrong, or libunwind).
 */
static void check_walk(void *uc, const uintptr_t *ips, unsigned n, unsigned max,
		       int complete)
{
	static const char *const base[] = {"?", "rsp", "rbp", "?", "?", "?"};
	uintptr_t other[RAW_DEPTH];
	const struct sig_rule *r;
	int c2;
	unsigned n2 = unwind_signal(uc, other, max, &c2), i;

	atomic_fetch_add(&hs__cpu_n_checked, 1);
	if (n2 == n && c2 == complete && !memcmp(ips, other, n * sizeof(*ips)))
		return;
	if (atomic_fetch_add(&hs__cpu_n_differ, 1) >= 5)
		return;
	for (i = 0; i < n && i < n2 && ips[i] == other[i]; i++)
		;
	hs_msg("sample unwind check: %u frames (complete %d) against libunwind's %u "
	       "(complete %d), first difference at frame %u: %#lx against %#lx",
	       n, complete, n2, c2, i, i < n ? (unsigned long)ips[i] : 0ul,
	       i < n2 ? (unsigned long)other[i] : 0ul);
	r = i > 0 && i <= n ? hs__cpu_view_find(hs__cpu_view_now(), ips[i - 1]) : NULL;
	if (!r || (r->kind != HS_RULE_RSP && r->kind != HS_RULE_RBP))
		return;
	if (r->bp_off)
		hs_msg("sample unwind check: frame %u (%#lx) used the rule of %#lx-%#lx: "
		       "CFA = %s%+d, rbp saved at CFA%+d",
		       i - 1, (unsigned long)ips[i - 1], (unsigned long)r->lo,
		       (unsigned long)r->hi, base[r->kind], (int)r->cfa_off,
		       (int)r->bp_off);
	else
		hs_msg("sample unwind check: frame %u (%#lx) used the rule of %#lx-%#lx: "
		       "CFA = %s%+d, rbp unchanged",
		       i - 1, (unsigned long)ips[i - 1], (unsigned long)r->lo,
		       (unsigned long)r->hi, base[r->kind], (int)r->cfa_off);
}

static void take(struct cpu_thread *c, void *uc, unsigned kind, uint64_t ticks,
		 uint64_t dur, uint64_t ready)
{
	uint64_t h = atomic_load_explicit(&c->head, memory_order_relaxed);
	unsigned max = hs_cfg.max_depth < RAW_DEPTH ? hs_cfg.max_depth : RAW_DEPTH;
	struct raw *r;

	if (h - atomic_load_explicit(&c->tail, memory_order_acquire) >= RAW_SLOTS) {
		c->dropped++;
		return;
	}
	r = &c->slots[h % RAW_SLOTS];
	r->n = 0;
	r->complete = 0;
	if (max) {
		int n = fast_walk(c, uc, r->ips, max, &r->complete);

		if (n < 0)
			n = -1;

		if (n >= 0) {
			r->n = (unsigned)n;
			atomic_fetch_add_explicit(&hs__cpu_n_fast, 1,
						  memory_order_relaxed);
			if (HS_UNLIKELY(hs_cfg.check_unwind))
				check_walk(uc, r->ips, r->n, max, r->complete);
		} else {
			struct sig_view tb = hs__cpu_view_now();
			unsigned i;

			if (unwinder_enter(c)) {
				r->n = unwind_signal(uc, r->ips, max, &r->complete);
				unwinder_leave();
			} else {
				/* the leaf alone */
				r->ips[0] = (uintptr_t)((const ucontext_t *)uc)
						->uc_mcontext.gregs[REG_RIP];
				r->n = 1;
			}
			atomic_fetch_add_explicit(&hs__cpu_n_slow, 1,
						  memory_order_relaxed);
			/* the sampler learns the rules of the whole stack */
			for (i = 1; tb.big && tb.recent && i < r->n; i++)
				if (!hs__cpu_view_find(tb, r->ips[i]))
					note_miss(c, r->ips[i]);
		}
	}
	r->ticks = ticks;
	r->dur = dur;
	r->ready = ready;
	r->kind = kind;
	atomic_store_explicit(&c->head, h + 1, memory_order_release);
}

/*
 * Whether the collector sent this signal: a perf event's (the codes of
 * F_SETSIG), or a POSIX timer's or the wall sampler's (sigqueue codes
 * with the collector's cookie). raise(), kill(), tgkill() and sigqueue()
 * by anyone else are not.
 */
static int ours(const siginfo_t *si)
{
	switch (si->si_code) {
	case POLL_IN:
	case POLL_OUT:
	case POLL_MSG:
	case POLL_ERR:
	case POLL_PRI:
	case POLL_HUP:
		return 1;
	case SI_TIMER:
		return si->si_value.sival_ptr == hs__cpu_sig_cookie ||
		       si->si_value.sival_ptr == hs__cpu_wall_cookie;
	case SI_QUEUE:
		return si->si_pid == hs_pid &&
		       si->si_value.sival_ptr == hs__cpu_sig_cookie;
	default:
		return 0;
	}
}

/*
 * A signal the collector did not send, on the sampling signal: what the
 * program set, SIG_IGN or SIG_DFL (for a real-time signal: the process
 * ends), with the trace finished first as for the other fatal signals.
 * While sampling is moving away from @sig the signal is the program's to
 * have, not ours to judge, and a thread whose program blocked the signal
 * meant it to wait (which the collector cannot give it, the sampling
 * signal is never blocked): it is left alone then.
 */
static void foreign(int sig)
{
	if (sig != atomic_load(&hs__cpu_signo) || atomic_load(&hs__cpu_prog_ign) ||
	    sigismember(&hs__cpu_prog_mask, sig))
		return;
	atomic_store(&hs__cpu_sampling, 0);
	hs_fatal_signal(sig);
}

/*
 * Thread @c's CPU time in ns, at a CPU sample whose signal is @si. A
 * sample of the perf event reads its count (the thread's CPU time since
 * @perf_origin), not clock_gettime(CLOCK_THREAD_CPUTIME_ID). Called a
 * thousand times a second on a loaded machine, that clock made the
 * kernel's tick-sampled CPU time of the process, which ITIMER_PROF
 * counts, fall to about half of what the process used: a program's own
 * SIGPROF profile came at half its rate (t7100's SIGPROF test, 7 to 16
 * signals instead of about 20; a program that only reads the clock in
 * such a handler does the same, one that reads a perf event does not).
 * Reading the thread's clock updates the scheduler's accounting of the
 * running thread (update_curr()), which can end its slice between two
 * ticks, so that the next tick charges another task; reading the event's
 * count does not touch the scheduler.
 */
static uint64_t thread_cpu_ns(const struct cpu_thread *c, const siginfo_t *si)
{
	/* set_perf() stores @perf_origin before @perf_fd (release) */
	int fd = atomic_load_explicit(&c->perf_fd, memory_order_acquire);
	uint64_t count;

	if (fd >= 0 && si->si_code > 0 && si->si_fd == fd &&
	    read(fd, &count, sizeof(count)) == (ssize_t)sizeof(count))
		return atomic_load_explicit(&c->perf_origin, memory_order_relaxed) +
		       count;
	return clock_ns(CLOCK_THREAD_CPUTIME_ID); /* a POSIX timer's */
}

void hs__cpu_on_signal(int sig, siginfo_t *si, void *uc)
{
	struct cpu_thread *c = hs__cpu_self;
	int e = errno, guard = hs_tls.guard;

	if (!ours(si)) {
		foreign(sig);
		goto out;
	}
	if (!c || !atomic_load_explicit(&hs__cpu_sampling, memory_order_relaxed))
		goto out;
	/* libunwind may mmap (its memory pool): not an event of the program */
	c->in_collector = guard;
	hs_tls.guard = 1;
	if (si->si_code != SI_QUEUE &&
	    !(si->si_code == SI_TIMER && si->si_value.sival_ptr == hs__cpu_wall_cookie) &&
	    !(si->si_code > 0 && si->si_fd == atomic_load(&c->wall_fd))) {
		uint64_t now = thread_cpu_ns(c, si);

		/* the two clocks differ by µs: never a negative time */
		take(c, uc, HS_SAMPLE_CPU, hs_now_ns(),
		     now > c->cpu_prev ? now - c->cpu_prev : 0, 0);
		c->cpu_prev = now;
	} else {
		int k = atomic_exchange(&c->req, 0);

		if (k)
			take(c, uc, (unsigned)k - 1, atomic_load(&c->req_ticks),
			     atomic_exchange(&c->req_dur, 0),
			     atomic_exchange(&c->req_ready, 0));
		atomic_store(&c->handler_cpu, clock_ns(CLOCK_THREAD_CPUTIME_ID));
	}
	hs_tls.guard = guard;
out:
	errno = e;
}
