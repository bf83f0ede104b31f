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
 * perf descriptors are moved high (like the trace file's). With --wall
 * the sampler thread ticks on CLOCK_MONOTONIC and asks threads for their
 * stack with tgkill().
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
 * The sampler thread (created with the guard set, like the writer) turns
 * raw samples into NODE and SAMPLE records: it interns the stacks in the
 * shared stack tree and writes the records into its own ring, which the
 * writer drains like any thread's.
 *
 * The signal is a real-time signal the program had left at SIG_DFL at
 * start-up, from SIGRTMAX down. If the program later installs a handler
 * for it, hs_cpu_sigaction() first moves sampling to another free number
 * (re-creating every thread's timer), so the program gets its signal;
 * if none is free, sampling stops.
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
#include <time.h>
#include <unistd.h>

#define RAW_SLOTS 64			/* raw samples a thread can hold */
#define MISS_SLOTS 256			/* addresses without a rule, per thread */
#define SIG_RULES (1u << 16)		/* the handlers' rule table: rules at most */
#define MAX_FRAME (64u << 20)		/* no frame is larger than this */
#define RAW_DEPTH 256			/* frames of a raw sample */
#define BATCH 1024			/* samples sorted and written at once */

struct raw {
	uint64_t ticks, dur;
	uint32_t kind, n;
	int complete;
	uintptr_t ips[RAW_DEPTH];
};

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
	int blocked_valid;		/* blocked_node is this episode's stack */
	uint32_t blocked_node;
	/* wall requests, sampler -> handler */
	_Atomic int req;		/* 0: none, else kind + 1 */
	_Atomic uint64_t req_ticks, req_dur;
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

/* A table: rules sorted by address, not overlapping. */
struct sig_table {
	size_t n;
	struct sig_rule r[SIG_RULES];
};

struct out_sample {
	uint64_t ticks, dur;
	pid_t tid;
	uint32_t kind, node;
};

static _Atomic(struct cpu_thread *) registry;
static __thread struct cpu_thread *cpu_self __attribute__((tls_model("initial-exec")));
static _Atomic int sampling;		/* 1 while samples are taken */
static _Atomic int signo;		/* the sampling signal, 0: none */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;	/* timers */
static pthread_key_t exit_key;
static int key_ok;
static pthread_t sampler;
static int sampler_ok;
static _Atomic int sampler_run;
static uint64_t n_cpu, n_wall, n_signals;	/* sampler thread */
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *,
				  void *(*)(void *), void *);
static struct sig_table *sig_tab[2];	/* written by the sampler thread only */
static _Atomic(struct sig_table *) sig_cur;	/* the one handlers search */
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

	if (hi > SIG_RULES)
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
static int walk_rules(struct cpu_thread *c, const struct sig_table *tb, uintptr_t key,
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
		r = sig_rule_find(tb, key - 1);
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
	const struct sig_table *tb = atomic_load_explicit(&sig_cur, memory_order_acquire);
	unw_word_t ip = 0, sp = 0, bp = 0;
	unw_cursor_t cur;
	int n;

	if (!tb)
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
	r = i > 0 && i <= n ? sig_rule_find(atomic_load(&sig_cur), ips[i - 1]) : NULL;
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
		 uint64_t dur)
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
			const struct sig_table *tb = atomic_load(&sig_cur);
			unsigned i;

			r->n = unwind_signal(uc, r->ips, max, &r->complete);
			atomic_fetch_add_explicit(&n_slow, 1, memory_order_relaxed);
			/* the sampler learns the rules of the whole stack */
			for (i = 1; tb && i < r->n; i++)
				if (!sig_rule_find(tb, r->ips[i]))
					note_miss(c, r->ips[i]);
		}
	}
	r->ticks = ticks;
	r->dur = dur;
	r->kind = kind;
	atomic_store_explicit(&c->head, h + 1, memory_order_release);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	struct cpu_thread *c = cpu_self;
	int e = errno, guard = hs_tls.guard;

	(void)sig;
	if (!c || !atomic_load_explicit(&sampling, memory_order_relaxed))
		goto out;
	/* libunwind may mmap (its memory pool): not an event of the program */
	hs_tls.guard = 1;
	if (si->si_code == SI_TIMER || si->si_code == POLL_IN || si->si_code == POLL_HUP) {
		uint64_t now = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		take(c, uc, HS_SAMPLE_CPU, hs_now_ns(), now - c->cpu_prev);
		c->cpu_prev = now;
	} else if (si->si_code == SI_TKILL && si->si_pid == hs_pid) {
		int k = atomic_exchange(&c->req, 0);

		if (k)
			take(c, uc, (unsigned)k - 1, atomic_load(&c->req_ticks),
			     atomic_exchange(&c->req_dur, 0));
		atomic_store(&c->handler_cpu, clock_ns(CLOCK_THREAD_CPUTIME_ID));
	}
	hs_tls.guard = guard;
out:
	errno = e;
}

/* --- timers and the signal ---------------------------------------------- */

static _Atomic int perf_ok = 1;		/* 0 once perf_event_open was refused */

/* Move @fd above the numbers a program normally uses; -1 if impossible. */
static int fd_high(int fd)
{
	struct rlimit rl;
	long base = 512;
	int nfd;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		base = (long)rl.rlim_cur / 2 > (long)rl.rlim_cur - 512 ?
			       (long)rl.rlim_cur / 2 : (long)rl.rlim_cur - 512;
	if (base > 100000)
		base = 100000;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
	close(fd);
	return nfd;
}

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
	fd = fd_high(fd);
	if (fd < 0)
		return -1;
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		close(fd);
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
		close(c->perf_fd);
	}
	c->perf_fd = -1;
}

/* A real-time signal left at SIG_DFL, other than @avoid; 0 if none. */
static int free_signal(int avoid)
{
	int s;

	for (s = SIGRTMAX; s >= SIGRTMIN; s--) {
		struct sigaction old;

		if (s == avoid || hs_real.sigaction(s, NULL, &old))
			continue;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			return s;
	}
	return 0;
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
	c->blocked_valid = 0;
	atomic_store(&c->req, 0);
	atomic_store(&c->req_dur, 0);
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
};

static void *trampoline(void *p)
{
	struct start s = *(struct start *)p;

	hs_real.free(p);
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

HS_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	REAL(sigprocmask);
	return real_sigprocmask(how, how == SIG_UNBLOCK ? set : strip(set, &copy), old);
}

HS_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

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

/* Whether code address @a has a rule, published or about to be. */
static int sig_rule_known(uintptr_t a)
{
	size_t i;

	if (sig_rule_find(atomic_load(&sig_cur), a))
		return 1;
	for (i = 0; i < nr_new; i++)
		if (new_rules[i].lo <= a && a < new_rules[i].hi)
			return 1;
	return 0;
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

/* Publish the current table merged with the new rules (or emptied). */
static void publish_rules(int empty)
{
	struct sig_table *cur = atomic_load(&sig_cur);
	struct sig_table *nt = cur == sig_tab[0] ? sig_tab[1] : sig_tab[0];
	size_t i = 0, j = 0, n = 0;

	if (!empty && !nr_new)
		return;
	qsort(new_rules, nr_new, sizeof(new_rules[0]), cmp_rule);
	while (!empty && (i < cur->n || j < nr_new) && n < SIG_RULES) {
		const struct sig_rule *x;

		if (j == nr_new || (i < cur->n && cur->r[i].lo <= new_rules[j].lo))
			x = &cur->r[i++];
		else
			x = &new_rules[j++];
		nt->r[n] = *x;
		if (n && x->lo < nt->r[n - 1].hi) {
			/* overlaps the one before: keep that, and the rest of this */
			if (x->hi <= nt->r[n - 1].hi)
				continue;
			nt->r[n].lo = nt->r[n - 1].hi;
		}
		n++;
	}
	nt->n = n;
	nr_new = 0;
	atomic_store_explicit(&sig_cur, nt, memory_order_release);
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

			add_out(t, r->ticks, r->dur, c->tid, r->kind, node);
			if (r->kind == HS_SAMPLE_WALL_BLOCKED) {
				c->blocked_node = node;
				c->blocked_valid = 1;
			}
		}
		atomic_store_explicit(&c->tail, tail, memory_order_release);
		if (atomic_load(&c->state) == HS_T_EXITED &&
		    atomic_load(&c->head) == tail) {
			int expect = HS_T_EXITED;

			atomic_compare_exchange_strong(&c->state, &expect, HS_T_FREE);
		}
	}
}

/*
 * One wall-clock tick: a thread whose CPU clock advanced is asked for its
 * stack (CPU_TIME); one that did not is BLOCKED_TIME, with the stack it
 * had when first seen blocked (asked for once per blocked episode).
 */
static void wall_tick(struct hs_thread *t, uint64_t now, uint64_t threshold)
{
	struct cpu_thread *c;
	int s = atomic_load(&signo);

	for (c = atomic_load(&registry); c; c = c->next) {
		uint64_t cpu, ref, hc, dur;
		int advanced;

		if (atomic_load(&c->state) != HS_T_LIVE || !atomic_load(&c->ready))
			continue;
		cpu = clock_ns(thread_clock(c->tid));
		if (!cpu)
			continue;
		dur = now > c->wall_prev ? now - c->wall_prev : 0;
		c->wall_prev = now;
		ref = c->wall_ref;
		hc = atomic_load(&c->handler_cpu);
		if (hc > ref)
			ref = hc;
		advanced = cpu > ref + threshold;
		c->wall_ref = cpu;
		if (atomic_load(&c->req)) {
			/* the last request is not served yet: it covers this tick too */
			atomic_fetch_add(&c->req_dur, dur);
			continue;
		}
		if (!advanced && c->blocked_valid) {
			add_out(t, now, dur, c->tid, HS_SAMPLE_WALL_BLOCKED, c->blocked_node);
			continue;
		}
		if (advanced)
			c->blocked_valid = 0;
		if (!s)
			continue;
		atomic_fetch_add(&c->req_dur, dur);
		atomic_store(&c->req_ticks, now);
		atomic_store(&c->req, (advanced ? HS_SAMPLE_WALL_CPU : HS_SAMPLE_WALL_BLOCKED) + 1);
		if (syscall(SYS_tgkill, hs_pid, c->tid, s) == 0)
			n_signals++;
		else
			atomic_store(&c->req, 0);
	}
}

static void *sampler_main(void *arg)
{
	struct hs_thread *t;
	uint64_t period, next, threshold, last_emit = 0;
	uint8_t body[5 * HS_VARINT_MAX], *q;
	uint64_t dropped = 0;
	struct cpu_thread *c;

	(void)arg;
	hs_tls.guard = 1;
	syscall(SYS_prctl, PR_SET_NAME, "heapscope", 0, 0, 0);
	t = hs_thread_get();
	if (!t)
		return NULL;
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

		next += period;
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
		if (hs_cfg.wall_hz && atomic_load(&sampling))
			wall_tick(t, now, threshold);
		if (now - last_emit >= 10000000u || batch->n > BATCH / 2) {
			emit_batch(t);
			last_emit = now;
		}
	}
	collect(t);
	emit_batch(t);
	for (c = atomic_load(&registry); c; c = c->next)
		dropped += c->dropped;
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
			close(c->perf_fd);	/* the parent's threads' events */
		c->perf_fd = -1;
		c->timer = -1;
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
	fork_self = me;
	if (me)
		atomic_store(&me->ready, 0);
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
	me->blocked_valid = 0;
	me->dropped = 0;
	atomic_store(&me->req, 0);
	atomic_store(&me->req_dur, 0);
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
	atomic_store(&sampler_run, 1);
	if (real_pthread_create(&sampler, NULL, sampler_main, NULL)) {
		atomic_store(&sampling, 0);
		drop_timer(me);
	} else {
		sampler_ok = 1;
	}
	hs_tls.guard = g;
}

int hs_cpu_start(void)
{
	int s;

	if (!hs_cfg.cpu_hz && !hs_cfg.wall_hz)
		return 0;
	batch = map_zero(sizeof(*batch));
	sig_tab[0] = map_zero(sizeof(struct sig_table));
	sig_tab[1] = map_zero(sizeof(struct sig_table));
	if (!batch || !sig_tab[0] || !sig_tab[1])
		return -1;
	atomic_store(&sig_cur, sig_tab[0]);
	sig_rules_gen = atomic_load(&hs_gen);
	if (hs_cfg.cpu_timer)
		atomic_store(&perf_ok, 0);
	if (!real_pthread_create)
		real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	s = free_signal(0);
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
	atomic_store(&sampler_run, 1);
	if (real_pthread_create(&sampler, NULL, sampler_main, NULL)) {
		hs_msg("cannot start the sampler thread; not sampling");
		atomic_store(&sampling, 0);
		return -1;
	}
	sampler_ok = 1;
	return 0;
}

void hs_cpu_stop(void)
{
	struct cpu_thread *c;

	if (!atomic_exchange(&sampling, 0))
		return;
	pthread_mutex_lock(&reg_lock);
	for (c = atomic_load(&registry); c; c = c->next)
		if (atomic_load(&c->state) == HS_T_LIVE)
			drop_timer(c);
	pthread_mutex_unlock(&reg_lock);
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
 * The program sets the disposition of the sampling signal: sampling moves
 * to another free signal first (or stops), then the program's action is
 * installed. A query shows the program the default action.
 */
int hs_cpu_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct cpu_thread *c;
	int s;

	if (!act) {
		if (old) {
			memset(old, 0, sizeof(*old));
			old->sa_handler = SIG_DFL;
			sigemptyset(&old->sa_mask);
		}
		return 0;
	}
	pthread_mutex_lock(&reg_lock);
	s = free_signal(sig);
	if (s && !install(s)) {
		atomic_store(&signo, s);
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
		hs_msg("the program took the sampling signal %d and no other is free; "
		       "sampling stopped", sig);
	}
	pthread_mutex_unlock(&reg_lock);
	if (hs_real.sigaction(sig, act, old))
		return -1;
	if (old) {
		memset(old, 0, sizeof(*old));
		old->sa_handler = SIG_DFL;
		sigemptyset(&old->sa_mask);
	}
	return 0;
}
