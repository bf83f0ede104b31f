/*
 * cpu - CPU and wall-clock stack sampling (heapscope run --cpu, --wall;
 * docs/cpu.md, docs/trace-format.md "CPU and wall-clock samples").
 *
 * Every thread of the program gets a struct cpu_thread: at start-up for
 * the main thread, and for later threads from the pthread_create hook
 * here, which runs the new thread's start routine through a trampoline
 * that registers it first. With --cpu each thread has a clock of its own
 * CPU time, kernel time included (so that a system call's time is sampled
 * on the return to its caller, not carried by the next sample in user
 * space), that sends the sampling signal to that thread: a perf event
 * (the task-clock software event, which the kernel allows with kernel
 * time at kernel.perf_event_paranoid <= 1 or CAP_PERFMON) whose overflows
 * signal the thread through the file descriptor's owner (so the rate is
 * what was asked for), else a POSIX timer on the thread's CPU clock
 * (which the kernel runs at its tick, CONFIG_HZ, often 250 Hz: a lower
 * rate, but each sample still weighs the CPU time it stands for). The
 * perf descriptors are moved high (like the trace file's).
 *
 * With --wall the sampler thread ticks on CLOCK_MONOTONIC and reads each
 * thread's CPU clock and /proc/self/task/TID/syscall: the CPU it used is
 * CPU_TIME, the rest BLOCKED_TIME or READIED_TIME. A blocked thread is
 * never signalled (nanosleep, poll, ... would return EINTR): the sampler
 * walks its stack from the sp and pc /proc gives, once per blocked
 * episode. A running thread gets a trigger that signals it only while it
 * runs in user space (see wall_thread()).
 *
 * The signal handler is async-signal-safe: it takes no lock and allocates
 * nothing. It unwinds from the signal's context into a slot of the
 * thread's own ring of raw samples (single producer: the handler; single
 * consumer: the sampler thread). A full ring drops the sample (counted).
 * The walk uses unwind rules (unwind.c: CFA = rsp or rbp + offset, where
 * rbp was saved), each for the range of code addresses its CFI row covers
 * (so that the exact instructions signals interrupt share rules), from a
 * sorted table that only the sampler thread writes and handlers search
 * without locks: a frame costs a binary search and two loads, each load
 * checked against the thread's stack bounds. The sampler publishes a new
 * table by writing the other of two buffers and swapping a pointer; a
 * handler that stayed in a search across two publications could read a
 * wrong rule, which gives a wrong stack, never a crash. An address
 * without a rule yet is handed to the sampler (which computes it with
 * libdw), and that sample is walked by libunwind instead (local
 * unwinding, which libunwind makes signal-safe), as are frames the rules
 * cannot describe (signal frames, DWARF expressions).
 * The handler never touches the thread's heap-event ring, its stack
 * caches or any lock, so it may interrupt a heap hook anywhere.
 *
 * The sampler thread (created with the guard set and every signal
 * blocked, like the writer) turns raw samples into NODE and SAMPLE
 * records: it interns the stacks in the shared stack tree and writes the
 * records into its own ring, which the writer drains like any thread's.
 *
 * The signal is a real-time signal the program had left at SIG_DFL at
 * start-up, from SIGRTMAX down. The collector's own signals carry its
 * marks (perf's codes, a cookie in the value); any other gets what the
 * program set, SIG_DFL (the end of the program) or SIG_IGN. If the
 * program installs a handler, hs_cpu_sigaction() first moves sampling to
 * another free number (re-creating every thread's timer and trigger) and
 * discards what is pending on the old one, so the program gets its own
 * signals only; if none is free, sampling stops.
 *
 * Memory: thread entries are mmap'd and never unmapped; an exited
 * thread's entry is reused once the sampler drained it.
 */
#define UNW_LOCAL_ONLY
#include "collector/collector.h"
#include "format/trace_writer.h"
#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define RAW_SLOTS 64			/* raw samples a thread can hold */
#define MISS_SLOTS 256			/* addresses without a rule, per thread */
#define SIG_RULES (1u << 16)		/* the handlers' big rule table: rules at most */
#define RECENT_RULES (1u << 14)		/* their table of recent rules: at most */
#define RECENT_MAX (1u << 13)		/* ... before they go into the big one */
#define REBUILD_NS 1000000000u		/* ... or after this long (ns) */
#define MAX_FRAME (64u << 20)		/* no frame is larger than this */
#define RAW_DEPTH 256			/* frames of a raw sample */
#define BATCH 1024			/* samples sorted and written at once */

struct raw {
	uint64_t ticks, dur;
	uint64_t ready;			/* wall CPU_TIME: waiting for a CPU before it (ns) */
	uint32_t kind, n;
	int complete;
	uintptr_t ips[RAW_DEPTH];
};

/* A thread's state at a wall-clock tick, from /proc/self/task/TID/syscall. */
enum { WS_NONE = 0, WS_RUN, WS_BLOCKED };

struct cpu_thread {
	struct cpu_thread *next;	/* registry; never unlinked */
	_Atomic int state;		/* HS_T_* */
	_Atomic int ready;		/* tid and clocks are set (wall ticks look) */
	pid_t tid;
	int timer;			/* kernel timer id, -1: none */
	int perf_fd;			/* the perf event instead, -1: none */
	uint64_t cpu_prev;		/* handler: CPU ns at the previous CPU sample */
	uint64_t dropped;		/* handler: samples the full ring lost */
	/* wall: the sampler's view */
	uint64_t wall_ref;		/* CPU ns at the previous tick */
	uint64_t wall_prev;		/* ns of the previous tick */
	int sys_fd;			/* its /proc syscall file; -1: not open, -2: unreadable */
	int wstate;			/* WS_* at the previous tick */
	int blocked_valid;		/* blocked_node is this episode's stack */
	uint32_t blocked_node;
	int open;			/* a BLOCKED_TIME sample being extended: */
	uint32_t open_node;		/* its stack, */
	uint64_t open_end, open_dur;	/* end and duration (ns) */
	unsigned req_epoch;		/* sig_epoch when the request was sent */
	_Atomic int wall_fd;		/* its trigger (sig_lock): a perf event, -1: none, */
	int wall_timer;			/* else a POSIX timer; -2: refused */
	/* wall requests, sampler -> handler */
	_Atomic int req;		/* 0: none, else kind + 1 */
	_Atomic uint64_t req_ticks, req_dur, req_ready;
	_Atomic uint64_t handler_cpu;	/* CPU ns when the last request was done */
	uintptr_t stack_lo, stack_hi;	/* bounds of the thread's stack */
	/* addresses the handler found no rule for, handler -> sampler */
	_Atomic unsigned miss_head, miss_tail;
	uintptr_t miss[MISS_SLOTS];
	/* raw samples, handler -> sampler */
	_Atomic uint64_t head, tail;
	struct raw slots[RAW_SLOTS];
};

/* A rule of the handlers' table, for the code addresses [lo, hi). */
struct sig_rule {
	uintptr_t lo, hi;
	int32_t cfa_off;
	int16_t bp_off;
	uint8_t kind;
};

/* A table: rules sorted by address, not overlapping; room for @cap. */
struct sig_table {
	size_t n, cap;
	struct sig_rule r[];
};

/*
 * What the handlers search: the big table of the rules learned up to its
 * last rebuild, and a small one of those learned since. The sampler adds
 * rules to the small one at every tick (a copy of a small table) and
 * rebuilds the big one only when the small one has grown or a second has
 * passed, instead of copying every rule at every tick that learned one.
 */
struct sig_view {
	const struct sig_table *big, *recent;
};

struct out_sample {
	uint64_t ticks, dur;
	pid_t tid;
	uint32_t kind, node;
};

static _Atomic(struct cpu_thread *) registry;
static __thread struct cpu_thread *cpu_self __attribute__((tls_model("initial-exec")));
/*
 * The signals this thread's program asked to block, as far as it told us
 * (sigprocmask, pthread_sigmask; inherited by the threads it creates). The
 * collector leaves the sampling signal unblocked whatever the program
 * asks: a signal of the program's on it while the program has it in this
 * mask is not the program's to die of, it meant it to wait. Whichever
 * signal sampling moves to, the program's wish for it is here.
 */
static __thread sigset_t prog_mask __attribute__((tls_model("initial-exec")));
static _Atomic int sampling;		/* 1 while samples are taken */
static _Atomic int signo;		/* the sampling signal, 0: none */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;	/* timers */
/*
 * Taken by the sampler around each wall request it sends and by a move of
 * sampling to another signal, so that no request goes out with a number
 * the program is being given. Order: reg_lock, then sig_lock.
 */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned sig_epoch;	/* moves so far (changed under sig_lock) */
/* The si_value of the collector's own signals: CPU timers, wall requests. */
static void *sig_cookie, *wall_cookie;
/*
 * What the program set for the sampling signal without taking it: SIG_DFL
 * or SIG_IGN (under reg_lock), which a signal the collector did not send
 * gets; a handler makes sampling move to another signal.
 */
static struct sigaction prog_act;
static _Atomic int prog_ign;
static pthread_key_t exit_key;
static int key_ok;
static pthread_t sampler;
static int sampler_ok;
static _Atomic int sampler_run;
static uint64_t n_cpu, n_wall, n_signals;	/* sampler thread */
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *,
				  void *(*)(void *), void *);
/* written by the sampler thread only; each pair: the one handlers search
 * and the one the next publication writes */
static struct sig_table *big_tab[2], *recent_tab[2];
static _Atomic(struct sig_table *) sig_big, sig_recent;	/* handlers search these */
static uint64_t last_rebuild;		/* ns: the big table's last rebuild */
static uint64_t sig_rules_gen;
static _Atomic uint64_t n_fast, n_slow, n_checked, n_differ;
/* why walks went to libunwind: no rule at the leaf, deeper; a rule the
 * walk cannot use; a register out of the stack */
static _Atomic uint64_t n_miss_leaf, n_miss_deep, n_no_rule, n_bounds;

static void *map_zero(size_t n)
{
	void *p = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return (long)p < 0 && (long)p > -4096 ? NULL : p;
}

/* The CPU clock of thread @tid of this process (the kernel's encoding). */
static clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- the signal handler ----------------------------------------------------- */

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

static inline struct sig_view sig_view_now(void)
{
	struct sig_view v = {
		atomic_load_explicit(&sig_big, memory_order_acquire),
		atomic_load_explicit(&sig_recent, memory_order_acquire),
	};

	return v;
}

/* The rule of code address @a in @v, or NULL. */
static const struct sig_rule *sig_view_find(struct sig_view v, uintptr_t a)
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
 * Walk with the rules from the signal's registers: the exact leaf, then
 * call sites. Returns the depth, or -1 when the walk needs libunwind (an
 * address without a rule, which is noted for the sampler, or a frame the
 * rules do not describe).
 */
static int walk_rules(struct cpu_thread *c, struct sig_view tb, uintptr_t key,
		      uintptr_t sp, uintptr_t bp, uintptr_t *ips, unsigned n, unsigned max,
		      int *complete)
{
	uintptr_t cfa;

	if (!in_stack(c, sp)) {
		atomic_fetch_add_explicit(&n_bounds, 1, memory_order_relaxed);
		return -1;
	}
	for (;;) {
		const struct sig_rule *r;

		if (n == max) {
			*complete = 0;
			return (int)n;
		}
		ips[n++] = key - 1;
		r = sig_view_find(tb, key - 1);
		if (!r) {
			note_miss(c, key - 1);
			atomic_fetch_add_explicit(n == 1 ? &n_miss_leaf : &n_miss_deep, 1,
						  memory_order_relaxed);
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
			atomic_fetch_add_explicit(&n_no_rule, 1, memory_order_relaxed);
			return -1;
		}
		if (cfa <= sp || cfa - sp > MAX_FRAME || !in_stack(c, cfa - 8)) {
			atomic_fetch_add_explicit(&n_bounds, 1, memory_order_relaxed);
			return -1;
		}
		if (r->bp_off) {
			if (!in_stack(c, cfa + (uintptr_t)(intptr_t)r->bp_off)) {
				atomic_fetch_add_explicit(&n_bounds, 1, memory_order_relaxed);
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
	struct sig_view tb = sig_view_now();
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
	if (unw_init_local2(&cur, (unw_context_t *)ucv, UNW_INIT_SIGNAL_FRAME) < 0 ||
	    unw_is_signal_frame(&cur) > 0 || unw_step(&cur) <= 0 ||
	    unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || unw_get_reg(&cur, UNW_REG_SP, &sp) < 0 ||
	    unw_get_reg(&cur, UNW_X86_64_RBP, &bp) < 0)
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
	static const char *const base[] = { "?", "rsp", "rbp", "?", "?", "?" };
	uintptr_t other[RAW_DEPTH];
	const struct sig_rule *r;
	int c2;
	unsigned n2 = unwind_signal(uc, other, max, &c2), i;

	atomic_fetch_add(&n_checked, 1);
	if (n2 == n && c2 == complete && !memcmp(ips, other, n * sizeof(*ips)))
		return;
	if (atomic_fetch_add(&n_differ, 1) >= 5)
		return;
	for (i = 0; i < n && i < n2 && ips[i] == other[i]; i++)
		;
	hs_msg("sample unwind check: %u frames (complete %d) against libunwind's %u "
	       "(complete %d), first difference at frame %u: %#lx against %#lx",
	       n, complete, n2, c2, i, i < n ? (unsigned long)ips[i] : 0ul,
	       i < n2 ? (unsigned long)other[i] : 0ul);
	r = i > 0 && i <= n ? sig_view_find(sig_view_now(), ips[i - 1]) : NULL;
	if (!r || (r->kind != HS_RULE_RSP && r->kind != HS_RULE_RBP))
		return;
	if (r->bp_off)
		hs_msg("sample unwind check: frame %u (%#lx) used the rule of %#lx-%#lx: "
		       "CFA = %s%+d, rbp saved at CFA%+d", i - 1, (unsigned long)ips[i - 1],
		       (unsigned long)r->lo, (unsigned long)r->hi, base[r->kind],
		       (int)r->cfa_off, (int)r->bp_off);
	else
		hs_msg("sample unwind check: frame %u (%#lx) used the rule of %#lx-%#lx: "
		       "CFA = %s%+d, rbp unchanged", i - 1, (unsigned long)ips[i - 1],
		       (unsigned long)r->lo, (unsigned long)r->hi, base[r->kind],
		       (int)r->cfa_off);
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
			atomic_fetch_add_explicit(&n_fast, 1, memory_order_relaxed);
			if (HS_UNLIKELY(hs_cfg.check_unwind))
				check_walk(uc, r->ips, r->n, max, r->complete);
		} else {
			struct sig_view tb = sig_view_now();
			unsigned i;

			r->n = unwind_signal(uc, r->ips, max, &r->complete);
			atomic_fetch_add_explicit(&n_slow, 1, memory_order_relaxed);
			/* the sampler learns the rules of the whole stack */
			for (i = 1; tb.big && tb.recent && i < r->n; i++)
				if (!sig_view_find(tb, r->ips[i]))
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
	case POLL_IN: case POLL_OUT: case POLL_MSG: case POLL_ERR: case POLL_PRI:
	case POLL_HUP:
		return 1;
	case SI_TIMER:
		return si->si_value.sival_ptr == sig_cookie ||
		       si->si_value.sival_ptr == wall_cookie;
	case SI_QUEUE:
		return si->si_pid == hs_pid && si->si_value.sival_ptr == sig_cookie;
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
	if (sig != atomic_load(&signo) || atomic_load(&prog_ign) || sigismember(&prog_mask, sig))
		return;
	atomic_store(&sampling, 0);
	hs_fatal_signal(sig);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	struct cpu_thread *c = cpu_self;
	int e = errno, guard = hs_tls.guard;

	if (!ours(si)) {
		foreign(sig);
		goto out;
	}
	if (!c || !atomic_load_explicit(&sampling, memory_order_relaxed))
		goto out;
	/* libunwind may mmap (its memory pool): not an event of the program */
	hs_tls.guard = 1;
	if (si->si_code != SI_QUEUE &&
	    !(si->si_code == SI_TIMER && si->si_value.sival_ptr == wall_cookie) &&
	    !(si->si_code > 0 && si->si_fd == atomic_load(&c->wall_fd))) {
		uint64_t now = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		take(c, uc, HS_SAMPLE_CPU, hs_now_ns(), now - c->cpu_prev, 0);
		c->cpu_prev = now;
	} else {
		int k = atomic_exchange(&c->req, 0);

		if (k)
			take(c, uc, (unsigned)k - 1, atomic_load(&c->req_ticks),
			     atomic_exchange(&c->req_dur, 0), atomic_exchange(&c->req_ready, 0));
		atomic_store(&c->handler_cpu, clock_ns(CLOCK_THREAD_CPUTIME_ID));
	}
	hs_tls.guard = guard;
out:
	errno = e;
}

/* --- timers and the signal ---------------------------------------------- */

static _Atomic int perf_ok = 1;		/* 0 once perf_event_open was refused */

/* A task-clock perf event of thread @c that signals it with @sig. */
static int set_perf(struct cpu_thread *c, int sig, uint64_t period)
{
	struct perf_event_attr a;
	struct f_owner_ex owner = { F_OWNER_TID, c->tid };
	int fd;

	if (!atomic_load(&perf_ok))
		return -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period;
	a.wakeup_events = 1;
	/*
	 * Kernel time counts: the signal of a period that ends in a system call
	 * comes on the return to user space, on the stack of the call's caller.
	 * Leaving it out (what paranoid 2 allows) would not sample that time and
	 * give it to the next sample taken in user space, wherever that is.
	 */
	a.exclude_kernel = 0;
	a.exclude_hv = 1;
	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, c->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM || errno == ENOSYS || errno == ENOENT)
			atomic_store(&perf_ok, 0);
		return -1;
	}
	fd = hs_fd_move_high(fd);
	if (fd < 0)
		return -1;
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		hs_fd_close(fd);
		return -1;
	}
	c->perf_fd = fd;
	return 0;
}

/* Thread @c's CPU-time clock: a perf event, else a POSIX timer. */
static int set_timer(struct cpu_thread *c, int sig)
{
	struct sigevent sev;
	struct itimerspec its;
	uint64_t period = 1000000000u / hs_cfg.cpu_hz;
	int id, e = errno;

	if (!set_perf(c, sig, period)) {
		errno = e;
		return 0;
	}
	errno = e;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig;
	sev.sigev_value.sival_ptr = sig_cookie;
	sev._sigev_un._tid = c->tid;
	if (syscall(SYS_timer_create, thread_clock(c->tid), &sev, &id))
		return -1;
	its.it_interval.tv_sec = (time_t)(period / 1000000000u);
	its.it_interval.tv_nsec = (long)(period % 1000000000u);
	its.it_value = its.it_interval;
	if (syscall(SYS_timer_settime, id, 0, &its, NULL)) {
		syscall(SYS_timer_delete, id);
		errno = e;
		return -1;
	}
	c->timer = id;
	errno = e;
	return 0;
}

static void drop_timer(struct cpu_thread *c)
{
	if (c->timer >= 0)
		syscall(SYS_timer_delete, c->timer);
	c->timer = -1;
	if (c->perf_fd >= 0) {
		ioctl(c->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		hs_fd_close(c->perf_fd);
	}
	c->perf_fd = -1;
}

/*
 * A real-time signal left at SIG_DFL, other than @avoid and not in
 * @blocked (bit s - 1 for signal s); 0 if none.
 */
static int free_signal(int avoid, uint64_t blocked)
{
	int s;

	for (s = SIGRTMAX; s >= SIGRTMIN; s--) {
		struct sigaction old;

		if (s == avoid || (blocked >> (s - 1) & 1) || hs_real.sigaction(s, NULL, &old))
			continue;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			return s;
	}
	return 0;
}

/* "/proc/self/task/TID/@leaf" into @path (64 bytes; @leaf short), without stdio. */
static void task_file(char *path, pid_t tid, const char *leaf)
{
	static const char dir[] = "/proc/self/task/";
	char digits[12];
	unsigned v = (unsigned)tid, k = 0;
	size_t len = sizeof(dir) - 1;

	memcpy(path, dir, len);
	do
		digits[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < sizeof(digits));
	while (k)
		path[len++] = digits[--k];
	path[len++] = '/';
	memcpy(path + len, leaf, strlen(leaf) + 1);
}

/*
 * The signals some sampled thread blocks now (bit s - 1 for signal s), as
 * /proc tells: the sampling signal is left out of the masks the program
 * sets, but a signal sampling moves to may be in them already.
 */
static uint64_t blocked_somewhere(void)
{
	struct cpu_thread *c;
	uint64_t all = 0;

	for (c = atomic_load(&registry); c; c = c->next) {
		char path[64], buf[4096], *p;
		ssize_t n;
		int fd;

		if (atomic_load(&c->state) != HS_T_LIVE)
			continue;
		task_file(path, c->tid, "status");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		p = strstr(buf, "\nSigBlk:");
		if (p)
			all |= strtoull(p + 8, NULL, 16);
	}
	return all;
}

static int install(int s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return hs_real.sigaction(s, &sa, NULL);
}

/* --- threads ------------------------------------------------------------ */

static struct cpu_thread *claim(void)
{
	struct cpu_thread *c;

	for (c = atomic_load(&registry); c; c = c->next) {
		int expect = HS_T_FREE;

		if (atomic_load(&c->state) == HS_T_FREE &&
		    atomic_compare_exchange_strong(&c->state, &expect, HS_T_LIVE))
			return c;
	}
	c = map_zero(sizeof(*c));
	if (!c)
		return NULL;
	c->sys_fd = -1;
	atomic_store(&c->wall_fd, -1);
	c->wall_timer = -1;
	atomic_store(&c->state, HS_T_LIVE);
	c->next = atomic_load(&registry);
	while (!atomic_compare_exchange_weak(&registry, &c->next, c))
		;
	return c;
}

/* Register the calling thread (guard set by the caller). */
static void thread_begin(void)
{
	struct hs_thread *t;
	struct cpu_thread *c;
	int e = errno;

	if (cpu_self || !atomic_load(&sampling))
		return;
	t = hs_thread_get();	/* its THREAD_START record and name */
	c = claim();
	if (!c)
		goto out;
	c->stack_lo = t ? t->stack_lo : 0;
	c->stack_hi = t ? t->stack_hi : 0;	/* unknown: every walk by libunwind */
	atomic_store(&c->miss_tail, atomic_load(&c->miss_head));
	c->timer = -1;
	c->perf_fd = -1;
	c->tid = (pid_t)syscall(SYS_gettid);
	c->cpu_prev = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	c->wall_ref = c->cpu_prev;
	c->wall_prev = hs_now_ns();
	c->wstate = WS_NONE;
	c->blocked_valid = 0;
	c->open = 0;
	atomic_store(&c->req, 0);
	atomic_store(&c->req_dur, 0);
	atomic_store(&c->req_ready, 0);
	atomic_store(&c->handler_cpu, 0);
	c->dropped = 0;
	if (key_ok)
		pthread_setspecific(exit_key, c);
	cpu_self = c;
	atomic_store(&c->ready, 1);
	if (hs_cfg.cpu_hz) {
		pthread_mutex_lock(&reg_lock);
		if (atomic_load(&signo) && atomic_load(&sampling))
			set_timer(c, atomic_load(&signo));
		pthread_mutex_unlock(&reg_lock);
	}
out:
	errno = e;
}

static void thread_end(void *arg)
{
	struct cpu_thread *c = arg;

	atomic_store(&c->ready, 0);
	pthread_mutex_lock(&reg_lock);
	drop_timer(c);
	pthread_mutex_unlock(&reg_lock);
	cpu_self = NULL;
	atomic_store(&c->state, HS_T_EXITED);
}

struct start {
	void *(*fn)(void *);
	void *arg;
	sigset_t mask;		/* the creator's prog_mask (its mask is inherited) */
};

static void *trampoline(void *p)
{
	struct start s = *(struct start *)p;

	hs_real.free(p);
	prog_mask = s.mask;
	hs_tls.guard = 1;
	thread_begin();
	hs_tls.guard = 0;
	return s.fn(s.arg);
}

/*
 * Threads the program creates are sampled from their first instruction.
 * Threads created while the guard is set (the collector's own writer and
 * sampler) are not.
 */
HS_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	struct start *s;
	int r;

	if (!real_pthread_create) {
		int g = hs_tls.guard;

		hs_tls.guard = 1;
		real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
		hs_tls.guard = g;
		if (!real_pthread_create)
			return EAGAIN;
	}
	hs_resolve_real();
	if (!atomic_load(&sampling) || hs_tls.guard || !hs_real.malloc)
		return real_pthread_create(th, attr, fn, arg);
	s = hs_real.malloc(sizeof(*s));
	if (!s)
		return real_pthread_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->mask = prog_mask;
	r = real_pthread_create(th, attr, trampoline, s);
	if (r)
		hs_real.free(s);
	return r;
}

/* --- the program's signal masks ------------------------------------------ */

/*
 * The program never blocks or waits for the sampling signal: a thread that
 * blocks every signal is still sampled (and its signals do not pile up),
 * and a thread in sigwait() on every signal does not receive the wall
 * sampler's. The collector's own calls (the guard set: libunwind's locks,
 * the writer's start) keep their masks as they are.
 */
static const sigset_t *strip(const sigset_t *set, sigset_t *copy)
{
	int s = atomic_load(&signo);

	if (!set || !s || hs_tls.guard || !sigismember(set, s))
		return set;
	*copy = *set;
	sigdelset(copy, s);
	return copy;
}

#define REAL(name) static __typeof__(name) *real_##name;                    \
	if (!real_##name) {                                                 \
		int g_ = hs_tls.guard;                                      \
		hs_tls.guard = 1;                                           \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);  \
		hs_tls.guard = g_;                                          \
		if (!real_##name) {                                         \
			errno = ENOSYS;                                     \
			return -1;                                          \
		}                                                           \
	}

/* What the program asked for, into prog_mask. */
static void note_mask(int how, const sigset_t *set)
{
	sigset_t keep;

	if (!set || hs_tls.guard)
		return;
	if (how == SIG_SETMASK) {
		prog_mask = *set;
	} else if (how == SIG_BLOCK) {
		sigorset(&prog_mask, &prog_mask, set);
	} else if (how == SIG_UNBLOCK) {
		/* keep = prog_mask without set's members */
		sigfillset(&keep);
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(set, sig) == 1)
				sigdelset(&keep, sig);
		sigandset(&prog_mask, &prog_mask, &keep);
	}
}

HS_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	note_mask(how, set);
	REAL(sigprocmask);
	return real_sigprocmask(how, how == SIG_UNBLOCK ? set : strip(set, &copy), old);
}

HS_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	note_mask(how, set);
	REAL(pthread_sigmask);
	return real_pthread_sigmask(how, how == SIG_UNBLOCK ? set : strip(set, &copy), old);
}

HS_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	sigset_t copy;

	REAL(sigwait);
	return real_sigwait(strip(set, &copy), sig);
}

HS_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	sigset_t copy;

	REAL(sigwaitinfo);
	return real_sigwaitinfo(strip(set, &copy), info);
}

HS_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
	sigset_t copy;

	REAL(sigtimedwait);
	return real_sigtimedwait(strip(set, &copy), info, ts);
}

HS_EXPORT int signalfd(int fd, const sigset_t *set, int flags)
{
	sigset_t copy;

	REAL(signalfd);
	return real_signalfd(fd, strip(set, &copy), flags);
}
#undef REAL

/* --- the sampler thread ------------------------------------------------- */

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
		q = hs_put_varint(body, o->ticks);
		q = hs_put_varint(q, (uint64_t)o->tid);
		q = hs_put_varint(q, o->kind);
		q = hs_put_varint(q, o->dur);
		q = hs_put_varint(q, o->node);
		hs_emit_sized(t, HS_TAG_SAMPLE, body, (size_t)(q - body));
		if (o->kind == HS_SAMPLE_CPU)
			n_cpu++;
		else
			n_wall++;
	}
	batch->n = 0;
}

static void add_out(struct hs_thread *t, uint64_t ticks, uint64_t dur, pid_t tid,
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

#define LEARN_CAP 4096			/* rules learned per tick at most */
#define LEARN_ROWS 16			/* rows learned each way from a miss */
#define LEARN_SPAN 4096			/* ... within this many bytes */

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
	const struct sig_rule *x = sig_view_find(sig_view_now(), a);

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
		return;	/* no usable row: the handler goes to libunwind there */
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
		if (sig_rule_known(s->lo - 1) || !row_at(t, s->lo - 1, &x) || x.hi != s->lo)
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
static struct sig_table *other_table(struct sig_table *pair[2], const struct sig_table *cur)
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
	struct sig_table *big = atomic_load(&sig_big), *recent = atomic_load(&sig_recent);
	struct sig_table *rt = other_table(recent_tab, recent), *bt;
	uint64_t now;

	if (empty) {
		bt = other_table(big_tab, big);
		bt->n = 0;
		rt->n = 0;
		atomic_store_explicit(&sig_big, bt, memory_order_release);
		atomic_store_explicit(&sig_recent, rt, memory_order_release);
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
		atomic_store_explicit(&sig_recent, rt, memory_order_release);
		return;
	}
	bt = other_table(big_tab, big);
	merge_rules(bt, big->r, big->n, rt->r, rt->n);
	atomic_store_explicit(&sig_big, bt, memory_order_release);
	rt->n = 0;
	atomic_store_explicit(&sig_recent, rt, memory_order_release);
	last_rebuild = now;
}

/*
 * A BLOCKED_TIME sample is extended while its thread stays blocked on the
 * same stack, up to this long (ns): a thread blocked for a second makes
 * ten samples, not a thousand, and views lose nothing (a sample covers
 * its interval, which ranges and When prorate).
 */
#define MERGE_MAX 100000000u

/* Write thread @c's BLOCKED_TIME sample being extended, if any. */
static void flush_open(struct hs_thread *t, struct cpu_thread *c)
{
	if (c->open && c->open_dur)
		add_out(t, c->open_end, c->open_dur, c->tid, HS_SAMPLE_WALL_BLOCKED,
			c->open_node);
	c->open = 0;
}

/* @dur ns of BLOCKED_TIME of thread @c on stack @node, ending at @end. */
static void add_blocked(struct hs_thread *t, struct cpu_thread *c, uint64_t end,
			uint64_t dur, uint32_t node)
{
	if (!dur)
		return;
	if (c->open && c->open_node == node && c->open_end == end - dur &&
	    c->open_dur + dur <= MERGE_MAX) {
		c->open_end = end;
		c->open_dur += dur;
		return;
	}
	flush_open(t, c);
	c->open = 1;
	c->open_node = node;
	c->open_end = end;
	c->open_dur = dur;
}

static void trigger_close(struct cpu_thread *c);

/*
 * Thread @c is done with: its open period written, its /proc file and
 * trigger closed (sig_lock held).
 */
static void wall_release(struct hs_thread *t, struct cpu_thread *c)
{
	flush_open(t, c);
	if (c->sys_fd >= 0)
		hs_fd_close(c->sys_fd);
	c->sys_fd = -1;
	trigger_close(c);
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
	for (c = atomic_load(&registry); c; c = c->next) {
		unsigned mt = atomic_load_explicit(&c->miss_tail, memory_order_relaxed);
		unsigned mh = atomic_load_explicit(&c->miss_head, memory_order_acquire);

		for (; mt != mh; mt++)
			add_sig_rule(t, c->miss[mt % MISS_SLOTS]);
		atomic_store_explicit(&c->miss_tail, mt, memory_order_release);
	}
	publish_rules(0);
	for (c = atomic_load(&registry); c; c = c->next) {
		uint64_t tail = atomic_load_explicit(&c->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&c->head, memory_order_acquire);

		for (; tail != head; tail++) {
			struct raw *r = &c->slots[tail % RAW_SLOTS];
			uint32_t node = hs_stack_intern(t, r->ips, r->n, r->complete);

			if (r->kind == HS_SAMPLE_CPU) {
				add_out(t, r->ticks, r->dur, c->tid, r->kind, node);
				continue;
			}
			/* wall: waiting for a CPU, then running */
			if (r->ready)
				add_out(t, r->ticks - r->dur, r->ready, c->tid,
					HS_SAMPLE_WALL_READY, node);
			if (r->kind == HS_SAMPLE_WALL_BLOCKED) {
				/* without /proc: the stack of this blocked episode */
				add_blocked(t, c, r->ticks, r->dur, node);
				c->blocked_node = node;
				c->blocked_valid = 1;
			} else if (r->dur) {
				add_out(t, r->ticks, r->dur, c->tid, r->kind, node);
			}
		}
		atomic_store_explicit(&c->tail, tail, memory_order_release);
		if (atomic_load(&c->state) == HS_T_EXITED &&
		    atomic_load(&c->head) == tail) {
			int expect = HS_T_EXITED;

			pthread_mutex_lock(&sig_lock);
			wall_release(t, c);
			pthread_mutex_unlock(&sig_lock);
			atomic_compare_exchange_strong(&c->state, &expect, HS_T_FREE);
		}
	}
}

/* --- wall-clock ticks: where threads are blocked --------------------------- */

#define SNAP_MAX (256u << 10)		/* bytes of a blocked stack copied for a walk */
#define SCAN_MAX (64u << 10)		/* bytes above sp searched for a frame's rbp */
#define SCAN_KEEP 16			/* candidate frames kept by a search */

static uint8_t *snap_buf;		/* SNAP_MAX bytes (sampler thread) */
static int pvr_ok = 1;			/* process_vm_readv() works */
static uint64_t threshold;		/* without /proc: CPU ns that mean "ran" */
static uid_t my_uid;
static int wall_perf_ok = 1;		/* perf events may be the wall triggers */

/*
 * Copy @n bytes of this process at @a into @buf, page by page, so that a
 * page that cannot be read ends the copy instead of faulting: the bytes
 * copied, or -1 if process_vm_readv() cannot be used here.
 */
static ssize_t peek(void *buf, uintptr_t a, size_t n)
{
	struct iovec local = { buf, n }, remote[SNAP_MAX / 4096 + 2];
	uintptr_t p = a, end = a + n;
	unsigned k = 0;
	ssize_t r;

	if (!pvr_ok || end < a)
		return -1;
	while (p < end && k < sizeof(remote) / sizeof(remote[0])) {
		uintptr_t next = (p | 4095) + 1;

		if (next > end || next < p)
			next = end;
		remote[k].iov_base = (void *)p;
		remote[k].iov_len = next - p;
		k++;
		p = next;
	}
	local.iov_len = p - a;
	r = process_vm_readv(hs_pid, &local, 1, remote, k, 0);
	if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
		pvr_ok = 0;
		return -1;
	}
	return r < 0 ? 0 : r;
}

/* A copy of the top of a blocked thread's stack: [lo, hi) in snap_buf. */
struct snap {
	uintptr_t lo, hi;
};

static int snap_word(const struct snap *s, uintptr_t a, uintptr_t *v)
{
	if (a < s->lo || a >= s->hi || s->hi - a < sizeof(*v))
		return -1;
	memcpy(v, snap_buf + (a - s->lo), sizeof(*v));
	return 0;
}

/*
 * Copy thread @c's stack from @sp up (to its top or SNAP_MAX bytes).
 * Through process_vm_readv(), so that a thread that woke up and changed
 * or left its stack meanwhile gives a wrong stack, never a fault; without
 * it, by plain reads within the thread's stack bounds.
 */
static void take_snap(const struct cpu_thread *c, uintptr_t sp, struct snap *s)
{
	int bounded = c->stack_lo && c->stack_hi != UINTPTR_MAX && sp >= c->stack_lo &&
		      sp < c->stack_hi;
	uintptr_t hi = sp + SNAP_MAX < sp ? UINTPTR_MAX : sp + SNAP_MAX;
	ssize_t n;

	if (bounded && c->stack_hi < hi)
		hi = c->stack_hi;
	s->lo = s->hi = sp;
	n = peek(snap_buf, sp, hi - sp);
	if (n >= 0) {
		s->hi = sp + (uintptr_t)n;
	} else if (bounded) {
		memcpy(snap_buf, (const void *)sp, hi - sp);
		s->hi = hi;
	}
}

/*
 * The rule of code address @a for the sampler's own walks: from the
 * handlers' table, the rules to publish next, else learned now (and
 * published for the handlers too). 0 if no rule the walk can use.
 */
static int sampler_rule(struct hs_thread *t, uintptr_t a, struct sig_rule *r)
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
 * The start of the function that holds code address @pc, from its FDE
 * (libunwind finds it through the module's .eh_frame_hdr); 0 if unknown.
 */
static uintptr_t func_entry(uintptr_t pc)
{
	unw_proc_info_t pi;

	memset(&pi, 0, sizeof(pi));
	if (unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t)pc, &pi, NULL) < 0)
		return 0;
	return (uintptr_t)pi.start_ip;
}

/* Where a PLT entry at @a jumps to (its GOT slot), else @a. */
static uintptr_t plt_target(uintptr_t a)
{
	uint8_t b[16];
	unsigned p = 0;
	int32_t rel;
	uintptr_t v;

	if (peek(b, a, sizeof(b)) != (ssize_t)sizeof(b))
		return a;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		p = 4;			/* endbr64 */
	if (b[p] == 0xf2)
		p++;			/* bnd */
	if (b[p] != 0xff || b[p + 1] != 0x25)
		return a;		/* not jmp *GOT(%rip) */
	memcpy(&rel, b + p + 2, 4);
	if (peek(&v, a + p + 6 + (uintptr_t)(intptr_t)rel, sizeof(v)) != (ssize_t)sizeof(v))
		return a;
	return v;
}

/* Bytes of a ModRM operand from @m on (@avail bytes there); 99 if cut. */
static unsigned modrm_len(const uint8_t *m, unsigned avail)
{
	unsigned mod = m[0] >> 6, rm = m[0] & 7, len = 1;

	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return 99;
		len++;
		if (mod == 0 && (m[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4;		/* rip-relative */
	}
	return len + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

static int is_prefix(uint8_t b)
{
	return (b >= 0x40 && b <= 0x4f) || b == 0x3e || b == 0xf2 || b == 0x64 ||
	       b == 0x65 || b == 0x67;
}

/*
 * Whether @ra is a return address: in a module, just after a call
 * instruction. 1 for a direct call (its target, through a PLT entry, in
 * *@target), 2 for an indirect one, 0 if not.
 */
static int call_before(uintptr_t ra, uintptr_t *target)
{
	uint8_t b[8];
	unsigned st, p;
	int32_t rel;
	int in;

	pthread_mutex_lock(&hs_unwind_lock);
	in = ra > 8 && hs_module_find(ra - 1) != NULL;
	pthread_mutex_unlock(&hs_unwind_lock);
	if (!in || peek(b, ra - 8, 8) != 8)
		return 0;
	for (st = 0; st < 7; st++) {
		for (p = st; p < 7 && is_prefix(b[p]); p++)
			;
		if (p < 7 && b[p] == 0xff && ((b[p + 1] >> 3) & 7) == 2 &&
		    p + 1 + modrm_len(b + p + 1, 7 - p) == 8)
			return 2;
	}
	if (b[3] != 0xe8)
		return 0;
	memcpy(&rel, b + 4, 4);
	*target = plt_target(ra + (uintptr_t)(intptr_t)rel);
	return 1;
}

/* A walk of a blocked thread's stack by the sampler. */
struct bwalk {
	struct hs_thread *t;
	struct snap s;
	uintptr_t *ips;
	unsigned max;
};

enum { BW_BROKEN, BW_COMPLETE, BW_TRUNCATED };

static int bw_scan(struct bwalk *w, uintptr_t key, uintptr_t sp, const struct sig_rule *r,
		   unsigned *n);

/*
 * Walk with the rules from code address @key - 1 (a call site, or the
 * exact pc + 1), @sp and, if @bp_known, @bp, appending frames to w->ips
 * from *@n on. Every stack word comes from the copy, so a stack that
 * changed meanwhile gives a wrong or broken walk, never a fault. rbp is
 * not known at first (/proc gives sp and pc only): the walk goes on while
 * no frame needs it (CFAs from rsp; a frame that saved rbp restores it),
 * and with @scan a frame whose CFA is rbp-based searches for it.
 */
static int bw_walk(struct bwalk *w, uintptr_t key, uintptr_t sp, uintptr_t bp,
		   int bp_known, unsigned *n, int scan)
{
	for (;;) {
		struct sig_rule r;
		uintptr_t cfa, ra;

		if (*n == w->max)
			return BW_TRUNCATED;
		w->ips[(*n)++] = key - 1;
		if (!sampler_rule(w->t, key - 1, &r))
			return BW_BROKEN;
		if (r.kind == HS_RULE_END)
			return BW_COMPLETE;
		if (r.kind == HS_RULE_RBP && !bp_known)
			return scan ? bw_scan(w, key, sp, &r, n) : BW_BROKEN;
		cfa = (r.kind == HS_RULE_RSP ? sp : bp) + (uintptr_t)(intptr_t)r.cfa_off;
		if (cfa <= sp || cfa - sp > MAX_FRAME || snap_word(&w->s, cfa - 8, &ra))
			return BW_BROKEN;
		if (r.bp_off) {
			if (snap_word(&w->s, cfa + (uintptr_t)(intptr_t)r.bp_off, &bp))
				return BW_BROKEN;
			bp_known = 1;
		}
		if (!ra)
			return BW_COMPLETE;
		key = ra;
		sp = cfa;
	}
}

/*
 * The frame at code address @key - 1, at @sp, has its CFA at rbp + off
 * and rbp is not known: find the frame's saved rbp and return address
 * above @sp. A candidate rbp R (CFA = R + off) must hold, at CFA - 8, a
 * return address just after a call instruction; a direct call must call
 * the function @key is in, so that a pair an earlier call left in an
 * uninitialised local does not pass. Direct calls are tried first, then
 * indirect ones, each nearest to sp first, and a candidate is taken when
 * the walk from it with the rules completes. Else the stack ends here.
 */
static int bw_scan(struct bwalk *w, uintptr_t key, uintptr_t sp, const struct sig_rule *r,
		   unsigned *n)
{
	struct {
		uintptr_t at;
		int direct;
	} cand[SCAN_KEEP];
	uintptr_t entry = func_entry(key - 1), a;
	unsigned nc = 0, i, depth = *n;
	int pass;

	for (a = (sp + 7) & ~(uintptr_t)7; a - sp < SCAN_MAX && nc < SCAN_KEEP; a += 8) {
		uintptr_t ra, target = 0;
		int call;

		if (snap_word(&w->s, a + (uintptr_t)(intptr_t)r->cfa_off - 8, &ra))
			break;
		if (ra < 4096)
			continue;
		call = call_before(ra, &target);
		if (!call || (call == 1 && entry && target != entry))
			continue;
		cand[nc].at = a;
		cand[nc].direct = call == 1 && entry;
		nc++;
	}
	for (pass = 1; pass >= 0; pass--)
		for (i = 0; i < nc; i++) {
			uintptr_t cfa = cand[i].at + (uintptr_t)(intptr_t)r->cfa_off;
			uintptr_t bp = cand[i].at, ra;
			int res;

			if (cand[i].direct != pass || snap_word(&w->s, cfa - 8, &ra) ||
			    (r->bp_off &&
			     snap_word(&w->s, cfa + (uintptr_t)(intptr_t)r->bp_off, &bp)))
				continue;
			*n = depth;
			res = bw_walk(w, ra, cfa, bp, 1, n, 0);
			if (res != BW_BROKEN)
				return res;
		}
	*n = depth;
	return BW_BROKEN;
}

/* Where a thread is, from /proc/self/task/TID/syscall. */
struct sys_state {
	int running;			/* running or waiting for a CPU */
	long nr;			/* else the system call (-1: in a fault) */
	uintptr_t sp, pc;		/* and its user registers */
};

/*
 * "running", or "NR ARG1..ARG6 SP PC" (a system call), or "-1 SP PC" (a
 * fault): NR in decimal, the rest in hexadecimal. 0, or -1 if it is not
 * that.
 */
static int parse_syscall(const char *b, size_t n, struct sys_state *st)
{
	const char *p = b, *end = b + n;
	uint64_t v[9];
	unsigned k = 0;
	int neg = 0;

	if (n >= 7 && !memcmp(b, "running", 7)) {
		st->running = 1;
		return 0;
	}
	st->running = 0;
	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	while (k < 9) {
		int hex = k > 0, digits = 0;

		if (hex) {
			if (p == end || *p != ' ')
				break;
			p++;
			if (end - p < 2 || p[0] != '0' || p[1] != 'x')
				return -1;
			p += 2;
		}
		for (v[k] = 0; p < end; p++, digits++) {
			unsigned d;

			if (*p >= '0' && *p <= '9')
				d = (unsigned)(*p - '0');
			else if (hex && *p >= 'a' && *p <= 'f')
				d = (unsigned)(*p - 'a' + 10);
			else
				break;
			v[k] = v[k] * (hex ? 16 : 10) + d;
		}
		if (!digits)
			return -1;
		k++;
	}
	if (k != 3 && k != 9)
		return -1;
	st->nr = neg ? -(long)v[0] : (long)v[0];
	st->sp = (uintptr_t)v[k - 2];
	st->pc = (uintptr_t)v[k - 1];
	return 0;
}

/*
 * Thread @c's state into @st: 0; -1 when /proc does not tell (the
 * descriptor cannot be opened: sampling falls back to signals); -2 for
 * nothing this tick (the thread is gone, or the descriptor was closed by
 * the program and is opened again next time).
 */
static int read_state(struct cpu_thread *c, struct sys_state *st)
{
	char b[256];
	ssize_t n;

	if (c->sys_fd == -1) {
		char path[64];
		int fd;

		task_file(path, c->tid, "syscall");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		c->sys_fd = fd < 0 ? -2 : hs_fd_move_high(fd);
		if (c->sys_fd < 0)
			c->sys_fd = -2;
	}
	if (c->sys_fd < 0)
		return -1;
	n = pread(c->sys_fd, b, sizeof(b), 0);
	if (n > 0 && !parse_syscall(b, (size_t)n, st))
		return 0;
	if (n < 0 && errno == EBADF) {
		/* not our file any more: the number may be the program's now */
		hs_fd_forget(c->sys_fd);
		c->sys_fd = -1;
		return -2;
	}
	if (n < 0)
		return -2;	/* the thread is gone (ESRCH), or try again */
	/* a text this kernel writes that we cannot read: signals from now on */
	hs_fd_close(c->sys_fd);
	c->sys_fd = -2;
	return -1;
}

/* The stack of blocked thread @c, walked by the sampler from /proc's sp and pc. */
static uint32_t walk_blocked(struct hs_thread *t, struct cpu_thread *c,
			     const struct sys_state *st)
{
	uintptr_t ips[RAW_DEPTH];
	struct bwalk w;
	unsigned n = 0;
	int res;

	ips[0] = st->pc;
	if (st->pc < 4096)
		return hs_stack_intern(t, ips, 0, 0);
	w.t = t;
	w.ips = ips;
	w.max = hs_cfg.max_depth < RAW_DEPTH ? hs_cfg.max_depth : RAW_DEPTH;
	if (!w.max)
		return hs_stack_intern(t, ips, 0, 0);
	take_snap(c, st->sp, &w.s);
	res = bw_walk(&w, st->pc + 1, st->sp, 0, 0, &n, 1);
	return hs_stack_intern(t, ips, n, res == BW_COMPLETE);
}

/*
 * The wall sampler's trigger of thread @c for signal @s, created on first
 * use (sig_lock held): a perf event of its user-space CPU time, else a
 * POSIX timer on its CPU clock. Either signals the thread only while it
 * runs in user space (a perf event excluding the kernel samples there
 * only; a CPU-clock timer fires on the return to user space), so a
 * system call is never interrupted. 0, or -1 if neither can be had.
 */
static int trigger_open(struct cpu_thread *c, int s)
{
	if (c->wall_fd == -1 && wall_perf_ok) {
		struct perf_event_attr a;
		struct f_owner_ex owner = { F_OWNER_TID, c->tid };
		int fd;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = 100000;	/* 100 us of its time, taken in user space */
		a.wakeup_events = 1;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.disabled = 1;
		fd = (int)syscall(SYS_perf_event_open, &a, c->tid, -1, -1,
				  PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS ||
			       errno == ENOENT))
			wall_perf_ok = 0;
		if (fd >= 0)
			fd = hs_fd_move_high(fd);
		if (fd >= 0 && (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, s) ||
				fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK))) {
			hs_fd_close(fd);
			fd = -1;
		}
		atomic_store(&c->wall_fd, fd < 0 ? -2 : fd);
	}
	if (atomic_load(&c->wall_fd) >= 0)
		return 0;
	if (c->wall_timer == -1) {
		struct sigevent sev;
		int id;

		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = s;
		sev.sigev_value.sival_ptr = wall_cookie;
		sev._sigev_un._tid = c->tid;
		c->wall_timer = syscall(SYS_timer_create, thread_clock(c->tid), &sev, &id) ?
					-2 : id;
	}
	return c->wall_timer >= 0 ? 0 : -1;
}

/* Arm thread @c's trigger for one signal (sig_lock held); 0 or -1. */
static int trigger_arm(struct cpu_thread *c)
{
	struct itimerspec its = { { 0, 0 }, { 0, 1 } };
	int fd = atomic_load(&c->wall_fd);

	if (fd >= 0)
		return ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) ? -1 : 0;
	if (c->wall_timer >= 0)
		return syscall(SYS_timer_settime, c->wall_timer, 0, &its, NULL) ? -1 : 0;
	return -1;
}

/* Disarm thread @c's trigger (sig_lock held). */
static void trigger_disarm(struct cpu_thread *c)
{
	struct itimerspec zero;
	int fd = atomic_load(&c->wall_fd);

	memset(&zero, 0, sizeof(zero));
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (c->wall_timer >= 0)
		syscall(SYS_timer_settime, c->wall_timer, 0, &zero, NULL);
}

/* Close thread @c's trigger (sig_lock held): it exited, or the signal moves. */
static void trigger_close(struct cpu_thread *c)
{
	int fd = atomic_exchange(&c->wall_fd, -1);

	if (fd >= 0)
		hs_fd_close(fd);
	if (c->wall_timer >= 0)
		syscall(SYS_timer_delete, c->wall_timer);
	c->wall_timer = -1;
}

/*
 * Ask thread @c for its stack: its handler takes a wall sample of @dur
 * ns of @kind, after @ready ns of waiting for a CPU, ending at @now. A
 * running thread's trigger is armed; a thread that may be blocked (only
 * without /proc) is sent the signal (sigqueue codes and the collector's
 * cookie). Under sig_lock, so that nothing goes out with a number that
 * sampling is moving away from.
 */
static void request(struct cpu_thread *c, uint64_t now, uint64_t dur, uint64_t ready,
		    unsigned kind, int running)
{
	siginfo_t si;
	int s, sent;

	pthread_mutex_lock(&sig_lock);
	s = atomic_load(&signo);
	if (s && atomic_load(&sampling)) {
		atomic_fetch_add(&c->req_dur, dur);
		atomic_fetch_add(&c->req_ready, ready);
		atomic_store(&c->req_ticks, now);
		c->req_epoch = atomic_load(&sig_epoch);
		atomic_store(&c->req, (int)kind + 1);
		if (running && !trigger_open(c, s)) {
			sent = !trigger_arm(c);
		} else {
			memset(&si, 0, sizeof(si));
			si.si_signo = s;
			si.si_code = SI_QUEUE;
			si.si_pid = hs_pid;
			si.si_uid = my_uid;
			si.si_value.sival_ptr = sig_cookie;
			sent = !syscall(SYS_rt_tgsigqueueinfo, hs_pid, c->tid, s, &si);
		}
		if (sent) {
			n_signals++;
		} else if (atomic_exchange(&c->req, 0)) {
			atomic_store(&c->req_dur, 0);
			atomic_store(&c->req_ready, 0);
		}
	}
	pthread_mutex_unlock(&sig_lock);
}

/*
 * Take back thread @c's request that was not served (it blocked before
 * its trigger fired, or sampling moved to another signal): 1 with its
 * CPU and ready ns in *@dur and *@ready, 0 if the handler has it.
 */
static int cancel(struct cpu_thread *c, uint64_t *dur, uint64_t *ready)
{
	pthread_mutex_lock(&sig_lock);
	trigger_disarm(c);
	pthread_mutex_unlock(&sig_lock);
	if (!atomic_exchange(&c->req, 0))
		return 0;
	*dur = atomic_exchange(&c->req_dur, 0);
	*ready = atomic_exchange(&c->req_ready, 0);
	return 1;
}

/*
 * One wall-clock tick of thread @c, @dur ns since its previous one, in
 * which it used @used ns of CPU (its clock went from @ref to @cpu).
 *
 * With /proc (the thread's system call state): the CPU it used is
 * CPU_TIME; the rest of the tick is BLOCKED_TIME if it was blocked at
 * either end of the tick, else READIED_TIME (it was runnable and waited
 * for a CPU). A running thread is asked for its stack by its trigger; a
 * blocked one is never signalled (a signal would make nanosleep, poll,
 * select, ... return early with EINTR): the sampler walks its stack from
 * the sp and pc /proc gives, once per blocked episode (a thread whose CPU
 * clock did not move has not left its system call).
 */
static void wall_thread(struct hs_thread *t, struct cpu_thread *c, uint64_t now,
			uint64_t dur, uint64_t used, uint64_t cpu, uint64_t ref)
{
	struct sys_state st;
	uint64_t rdur, rready;
	uint32_t node;
	int r;

	if (c->wstate == WS_BLOCKED && !used) {
		add_blocked(t, c, now, dur, c->blocked_node);
		return;
	}
	r = read_state(c, &st);
	if (r == -2)
		return;
	if (r == -1) {
		/*
		 * Without /proc: the thread is asked for its stack when its CPU
		 * clock advanced (CPU_TIME), or once per blocked episode, by a
		 * signal (which may interrupt a system call).
		 */
		uint64_t hc = atomic_load(&c->handler_cpu);
		int advanced;

		if (atomic_load(&c->req)) {
			if (c->req_epoch == atomic_load(&sig_epoch)) {
				atomic_fetch_add(&c->req_dur, dur);
				atomic_store(&c->req_ticks, now);
				return;
			}
			if (cancel(c, &rdur, &rready))
				dur += rdur;
		}
		if (hc > ref)
			ref = hc;
		advanced = cpu > ref + threshold;
		if (!advanced && c->blocked_valid) {
			add_blocked(t, c, now, dur, c->blocked_node);
			return;
		}
		if (advanced) {
			c->blocked_valid = 0;
			flush_open(t, c);
		}
		request(c, now, dur, 0, advanced ? HS_SAMPLE_WALL_CPU : HS_SAMPLE_WALL_BLOCKED,
			0);
		return;
	}
	if (st.running) {
		uint64_t ready = dur - used;

		if (atomic_load(&c->req)) {
			if (c->req_epoch == atomic_load(&sig_epoch)) {
				/* not served yet (it had no CPU, or no user time) */
				atomic_fetch_add(&c->req_dur, used);
				atomic_fetch_add(&c->req_ready, ready);
				atomic_store(&c->req_ticks, now);
				return;
			}
			if (cancel(c, &rdur, &rready)) {
				used += rdur;
				ready += rready;
			}
		}
		if (c->wstate == WS_BLOCKED) {
			/* it woke up in this tick: blocked until it ran */
			add_blocked(t, c, now - used, ready, c->blocked_node);
			ready = 0;
		}
		flush_open(t, c);
		c->wstate = WS_RUN;
		request(c, now, used, ready, HS_SAMPLE_WALL_CPU, 1);
		return;
	}
	node = walk_blocked(t, c, &st);
	rdur = rready = 0;
	if (atomic_load(&c->req))
		cancel(c, &rdur, &rready);
	if (used || rdur || rready) {
		/* it ran (or waited to), then blocked: on the stack it blocked on */
		flush_open(t, c);
		if (rready)
			add_out(t, now - (dur - used) - used - rdur, rready, c->tid,
				HS_SAMPLE_WALL_READY, node);
		if (used + rdur)
			add_out(t, now - (dur - used), used + rdur, c->tid, HS_SAMPLE_WALL_CPU,
				node);
	}
	add_blocked(t, c, now, dur - used, node);
	c->wstate = WS_BLOCKED;
	c->blocked_node = node;
}

/*
 * One wall-clock tick: every live thread's time since its previous one.
 * Returns whether a thread ran or is not known to be blocked.
 */
static int wall_tick(struct hs_thread *t)
{
	struct cpu_thread *c;
	int busy = 0;

	for (c = atomic_load(&registry); c; c = c->next) {
		uint64_t cpu, now, dur, used, ref;

		if (atomic_load(&c->state) != HS_T_LIVE || !atomic_load(&c->ready))
			continue;
		cpu = clock_ns(thread_clock(c->tid));
		if (!cpu)
			continue;
		now = hs_now_ns();
		dur = now > c->wall_prev ? now - c->wall_prev : 0;
		ref = c->wall_ref;
		used = cpu > ref ? cpu - ref : 0;
		if (used > dur)
			used = dur;
		c->wall_prev = now;
		c->wall_ref = cpu;
		wall_thread(t, c, now, dur, used, cpu, ref);
		busy |= used || c->wstate != WS_BLOCKED;
	}
	return busy;
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

static void *sampler_main(void *arg)
{
	struct hs_thread *t;
	uint64_t period, next, last_emit = 0;
	unsigned idle = 0;		/* ticks are period << idle apart */
	uint8_t body[5 * HS_VARINT_MAX], *q;
	uint64_t dropped = 0;
	struct cpu_thread *c;

	(void)arg;
	hs_tls.guard = 1;
	syscall(SYS_prctl, PR_SET_NAME, "heapscope", 0, 0, 0);
	atomic_store(&hs_sampler_tid, (pid_t)syscall(SYS_gettid));
	t = hs_thread_get();
	if (!t)
		return NULL;
	my_uid = getuid();
	q = hs_put_varint(body, hs_now_ns());
	q = hs_put_varint(q, hs_cfg.cpu_hz);
	q = hs_put_varint(q, hs_cfg.wall_hz);
	q = hs_put_varint(q, (uint64_t)atomic_load(&signo));
	q = hs_put_varint(q, (hs_cfg.no_heap ? 1u : 0u) |
			     (hs_cfg.cpu_hz && !atomic_load(&perf_ok) ? 2u : 0u));
	hs_emit_sized(t, HS_TAG_SAMPLING, body, (size_t)(q - body));
	period = hs_cfg.wall_hz ? 1000000000u / hs_cfg.wall_hz : 10000000u;
	threshold = period / 20;
	next = hs_now_ns();
	while (atomic_load(&sampler_run)) {
		struct timespec ts;
		uint64_t now, abs;

		next += idle < IDLE_SHIFT ? period << idle : period << IDLE_SHIFT;
		now = hs_now_ns();
		if (next + 10 * period < now)
			next = now;	/* far behind: do not catch up */
		abs = next + hs_start_ns;
		ts.tv_sec = (time_t)(abs / 1000000000u);
		ts.tv_nsec = (long)(abs % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		now = hs_now_ns();
		collect(t);
		if (hs_cfg.wall_hz && snap_buf && atomic_load(&sampling)) {
			if (wall_tick(t))
				idle = 0;
			else if (idle < IDLE_SHIFT && period << (idle + 1) <= IDLE_MAX)
				idle++;
		}
		if (now - last_emit >= 10000000u || batch->n > BATCH / 2) {
			emit_batch(t);
			last_emit = now;
		}
	}
	collect(t);
	pthread_mutex_lock(&sig_lock);
	for (c = atomic_load(&registry); c; c = c->next) {
		wall_release(t, c);
		dropped += c->dropped;
	}
	pthread_mutex_unlock(&sig_lock);
	emit_batch(t);
	q = hs_put_varint(body, hs_now_ns());
	q = hs_put_varint(q, n_cpu);
	q = hs_put_varint(q, n_wall);
	q = hs_put_varint(q, dropped);
	q = hs_put_varint(q, n_signals);
	hs_emit_sized(t, HS_TAG_SAMPLING_END, body, (size_t)(q - body));
	return NULL;
}

/* --- life cycle ----------------------------------------------------------- */

static struct cpu_thread *fork_self;	/* the thread that forked, in a child */

/*
 * In a fork child: timers are not inherited and the sampler thread is
 * gone, so sampling stops; hs_cpu_follow_child() starts it again in a
 * child the collector follows.
 */
static void after_fork_child(void)
{
	struct cpu_thread *c, *me = cpu_self;

	atomic_store(&sampling, 0);
	for (c = atomic_load(&registry); c; c = c->next) {
		if (c->perf_fd >= 0)
			hs_fd_close(c->perf_fd);	/* the parent's threads' events */
		if (c->sys_fd >= 0)
			hs_fd_close(c->sys_fd);	/* and their /proc files */
		if (atomic_load(&c->wall_fd) >= 0)
			hs_fd_close(atomic_load(&c->wall_fd));
		c->perf_fd = -1;
		c->sys_fd = -1;
		atomic_store(&c->wall_fd, -1);
		c->wall_timer = -1;		/* timers are not inherited */
		c->timer = -1;
		c->open = 0;
		atomic_store(&c->tail, atomic_load(&c->head));
		atomic_store(&c->miss_tail, atomic_load(&c->miss_head));
		if (c != me) {
			atomic_store(&c->ready, 0);
			atomic_store(&c->state, HS_T_FREE);
		}
	}
	atomic_store(&sampler_run, 0);
	sampler_ok = 0;
	cpu_self = NULL;
	pthread_mutex_init(&reg_lock, NULL);
	pthread_mutex_init(&sig_lock, NULL);
	fork_self = me;
	if (me)
		atomic_store(&me->ready, 0);
}

/*
 * Start the sampler thread with every signal blocked: the program's
 * signals are for its own threads. 0, or the error of pthread_create.
 */
static int start_sampler(void)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* the guard is set: as is */
	atomic_store(&sampler_run, 1);
	err = real_pthread_create(&sampler, NULL, sampler_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		sampler_ok = 1;
	return err;
}

void hs_cpu_follow_child(void)
{
	struct cpu_thread *me = fork_self;
	int g = hs_tls.guard;

	if (!me || !real_pthread_create)
		return;
	fork_self = NULL;
	hs_tls.guard = 1;
	n_cpu = n_wall = n_signals = 0;
	batch->n = 0;
	batch->last_ticks = 0;
	me->tid = (pid_t)syscall(SYS_gettid);
	me->cpu_prev = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	me->wall_ref = me->cpu_prev;
	me->wall_prev = hs_now_ns();
	me->wstate = WS_NONE;
	me->blocked_valid = 0;
	me->dropped = 0;
	atomic_store(&me->req, 0);
	atomic_store(&me->req_dur, 0);
	atomic_store(&me->req_ready, 0);
	atomic_store(&me->handler_cpu, 0);
	if (hs_tls.t) {
		me->stack_lo = hs_tls.t->stack_lo;
		me->stack_hi = hs_tls.t->stack_hi;
	}
	cpu_self = me;
	atomic_store(&sampling, 1);
	if (hs_cfg.cpu_hz && atomic_load(&signo))
		set_timer(me, atomic_load(&signo));
	atomic_store(&me->ready, 1);
	if (start_sampler()) {
		atomic_store(&sampling, 0);
		drop_timer(me);
	}
	hs_tls.guard = g;
}

int hs_cpu_start(void)
{
	int s, i;

	if (!hs_cfg.cpu_hz && !hs_cfg.wall_hz)
		return 0;
	batch = map_zero(sizeof(*batch));
	for (i = 0; i < 2; i++) {
		big_tab[i] = map_zero(sizeof(struct sig_table) + SIG_RULES * sizeof(struct sig_rule));
		recent_tab[i] = map_zero(sizeof(struct sig_table) +
					 RECENT_RULES * sizeof(struct sig_rule));
		if (!big_tab[i] || !recent_tab[i])
			return -1;
		big_tab[i]->cap = SIG_RULES;
		recent_tab[i]->cap = RECENT_RULES;
	}
	if (hs_cfg.wall_hz)
		snap_buf = map_zero(SNAP_MAX);
	if (!batch || (hs_cfg.wall_hz && !snap_buf))
		return -1;
	atomic_store(&sig_big, big_tab[0]);
	atomic_store(&sig_recent, recent_tab[0]);
	last_rebuild = hs_now_ns();
	sig_rules_gen = atomic_load(&hs_gen);
	/* not guessable by the program, never NULL */
	sig_cookie = (void *)(((uintptr_t)&sig_cookie ^
			       (uintptr_t)hs_now_ns() * 0x9E3779B97F4A7C15ull) | 1);
	wall_cookie = (void *)((uintptr_t)sig_cookie + 2);
	if (hs_cfg.cpu_timer)
		atomic_store(&perf_ok, 0);
	prog_act.sa_handler = SIG_DFL;
	sigemptyset(&prog_act.sa_mask);
	if (!real_pthread_create)
		real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	s = free_signal(0, 0);
	if (!s || install(s) || !real_pthread_create) {
		hs_msg("no free real-time signal; not sampling");
		return -1;
	}
	atomic_store(&signo, s);
	if (!pthread_key_create(&exit_key, thread_end))
		key_ok = 1;
	pthread_atfork(NULL, NULL, after_fork_child);
	atomic_store(&sampling, 1);
	thread_begin();
	if (start_sampler()) {
		hs_msg("cannot start the sampler thread; not sampling");
		atomic_store(&sampling, 0);
		return -1;
	}
	return 0;
}

void hs_cpu_stop(void)
{
	struct cpu_thread *c;
	int was = atomic_exchange(&sampling, 0);

	if (!was && !sampler_ok)
		return;
	pthread_mutex_lock(&reg_lock);
	for (c = atomic_load(&registry); c; c = c->next)
		if (atomic_load(&c->state) == HS_T_LIVE)
			drop_timer(c);
	pthread_mutex_unlock(&reg_lock);
	/* also after sampling stopped early: the sampler writes SAMPLING_END */
	if (sampler_ok) {
		atomic_store(&sampler_run, 0);
		pthread_join(sampler, NULL);
		sampler_ok = 0;
	}
	if (hs_cfg.check_unwind)
		hs_msg("sample unwind check: %llu walks by rules, %llu by libunwind (no "
		       "rule yet at the leaf %llu, deeper %llu; rule not usable %llu; out "
		       "of the stack %llu); %llu compared, %llu differ",
		       (unsigned long long)atomic_load(&n_fast),
		       (unsigned long long)atomic_load(&n_slow),
		       (unsigned long long)atomic_load(&n_miss_leaf),
		       (unsigned long long)atomic_load(&n_miss_deep),
		       (unsigned long long)atomic_load(&n_no_rule),
		       (unsigned long long)atomic_load(&n_bounds),
		       (unsigned long long)atomic_load(&n_checked),
		       (unsigned long long)atomic_load(&n_differ));
}

int hs_cpu_owns(int sig)
{
	return sig > 0 && sig == atomic_load(&signo);
}

/*
 * The program sets the disposition of the sampling signal @sig (or asks
 * for it). SIG_DFL and SIG_IGN are kept for the program: sampling goes on,
 * and signals the collector did not send get them (on_signal()). A handler
 * makes sampling move to another free signal first (or stop if none is
 * free); the signals of ours still pending on @sig are discarded (setting
 * SIG_IGN does that), so the program's handler gets only its own; then
 * the program's action is installed. The program is shown its own
 * settings, never the collector's.
 */
int hs_cpu_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev, ign;
	struct cpu_thread *c;
	int s;

	pthread_mutex_lock(&reg_lock);
	prev = prog_act;
	if (!act || act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN) {
		if (act) {
			prog_act = *act;
			atomic_store(&prog_ign, act->sa_handler == SIG_IGN);
		}
		pthread_mutex_unlock(&reg_lock);
		if (old)
			*old = prev;
		return 0;
	}
	s = free_signal(sig, blocked_somewhere());
	pthread_mutex_lock(&sig_lock);
	/* the wall triggers signal with @sig: gone, made again on the next request */
	for (c = atomic_load(&registry); c; c = c->next)
		trigger_close(c);
	if (s && !install(s)) {
		atomic_store(&signo, s);
		atomic_fetch_add(&sig_epoch, 1);
		if (atomic_load(&sampling) && hs_cfg.cpu_hz)
			for (c = atomic_load(&registry); c; c = c->next)
				if (atomic_load(&c->state) == HS_T_LIVE) {
					drop_timer(c);
					set_timer(c, s);
				}
	} else {
		atomic_store(&signo, 0);
		for (c = atomic_load(&registry); c; c = c->next)
			drop_timer(c);
		atomic_store(&sampling, 0);
		atomic_store(&sampler_run, 0);
		hs_msg("the program took the sampling signal %d and no other is free; "
		       "sampling stopped", sig);
	}
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	hs_real.sigaction(sig, &ign, NULL);
	pthread_mutex_unlock(&sig_lock);
	memset(&prog_act, 0, sizeof(prog_act));
	prog_act.sa_handler = SIG_DFL;
	sigemptyset(&prog_act.sa_mask);
	atomic_store(&prog_ign, 0);
	pthread_mutex_unlock(&reg_lock);
	if (hs_real.sigaction(sig, act, NULL))
		return -1;
	if (old)
		*old = prev;
	return 0;
}
