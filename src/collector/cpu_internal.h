#ifndef HS_COLLECTOR_CPU_INTERNAL_H
#define HS_COLLECTOR_CPU_INTERNAL_H
/*
 * cpu_internal - what the files of CPU and wall-clock sampling share
 * (heapscope run --cpu, --wall; docs/cpu.md). Not for the rest of the
 * collector: collector.h has the module's API (hs_cpu_start() and co).
 *
 * The files, by job, and who runs their code:
 *   cpu.c          the life cycle: start, stop, fork, the choice of the
 *                  sampling signal, each thread's CPU clock (perf event or
 *                  POSIX timer); the program's threads and the collector's
 *                  start-up run it.
 *   cpu_handler.c  the signal handler and all it calls: runs inside the
 *                  signal, on any thread, anywhere in the program (a heap
 *                  hook included). No lock, no allocation, only
 *                  async-signal-safe calls; scripts/check-signal-safe.py
 *                  holds the list of what it may call and `meson test
 *                  signal_safety` fails on any other.
 *   cpu_threads.c  the program's threads: registration, the
 *                  pthread_create hook, and the signal-mask interposers
 *                  that keep the sampling signal deliverable.
 *   cpu_sampler.c  the sampler thread: drains the handlers' raw samples
 *                  into NODE and SAMPLE records, learns and publishes the
 *                  handlers' unwind rules.
 *   cpu_wall.c     --wall: the sampler's ticks, each thread's state from
 *                  /proc/self/task/TID/syscall, the walk of blocked
 *                  stacks, and the requests that make running threads
 *                  take their own sample.
 *
 * Shared state is defined in the file named beside it below; the comment
 * says who writes it. Thread entries (struct cpu_thread) are mmap'd and
 * never unmapped: the handler may read one at any time.
 */
#include "collector/collector.h"
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RAW_SLOTS 64	      /* raw samples a thread can hold */
#define MISS_SLOTS 256	      /* addresses without a rule, per thread */
#define MAX_FRAME (64u << 20) /* no frame is larger than this */
#define RAW_DEPTH 256	      /* frames of a raw sample */

struct raw {
	uint64_t ticks, dur;
	uint64_t ready; /* wall CPU_TIME: waiting for a CPU before it (ns) */
	uint32_t kind, n;
	int complete;
	uintptr_t ips[RAW_DEPTH];
};

/* A thread's state at a wall-clock tick, from /proc/self/task/TID/syscall. */
enum { WS_NONE = 0, WS_RUN, WS_BLOCKED };

struct cpu_thread {
	struct cpu_thread *next; /* registry; never unlinked */
	_Atomic int state;	 /* HS_T_* */
	_Atomic int ready;	 /* tid and clocks are set (wall ticks look) */
	pid_t tid;
	int timer;		      /* kernel timer id, -1: none */
	_Atomic int perf_fd;	      /* the perf event instead, -1: none */
	_Atomic uint64_t perf_origin; /* CPU ns when @perf_fd was enabled: its count
				       * is the CPU time since (cpu_handler.c) */
	uint64_t cpu_prev;	      /* handler: CPU ns at the previous CPU sample */
	uint64_t dropped;	      /* handler: samples the full ring lost */
	int in_collector;	      /* handler: the signal came inside the collector */
	/* wall: the sampler's view */
	uint64_t wall_ref;  /* CPU ns at the previous tick */
	uint64_t wall_prev; /* ns of the previous tick */
	int sys_fd;	    /* its /proc syscall file; -1: not open, -2: unreadable */
	int wstate;	    /* WS_* at the previous tick */
	int blocked_valid;  /* blocked_node is this episode's stack */
	uint32_t blocked_node;
	int open;		     /* a BLOCKED_TIME sample being extended: */
	uint32_t open_node;	     /* its stack, */
	uint64_t open_end, open_dur; /* end and duration (ns) */
	unsigned req_epoch;	     /* sig_epoch when the request was sent */
	_Atomic int wall_fd;	     /* its trigger (sig_lock): a perf event, -1: none, */
	int wall_timer;		     /* else a POSIX timer; -2: refused */
	/* wall requests, sampler -> handler */
	_Atomic int req; /* 0: none, else kind + 1 */
	_Atomic uint64_t req_ticks, req_dur, req_ready;
	_Atomic uint64_t handler_cpu; /* CPU ns when the last request was done */
	uintptr_t stack_lo, stack_hi; /* bounds of the thread's stack */
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

static inline void *map_zero(size_t n)
{
	void *p = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return (long)p < 0 && (long)p > -4096 ? NULL : p;
}

/* The CPU clock of thread @tid of this process (the kernel's encoding). */
static inline clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6);
}

/* Clock @c in ns, 0 if it cannot be read (async-signal-safe). */
static inline uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- cpu.c: the life cycle ---------------------------------------------- */

extern _Atomic(struct cpu_thread *) hs__cpu_registry HS_HIDDEN;
extern _Atomic int hs__cpu_sampling HS_HIDDEN;	   /* 1 while samples are taken */
extern _Atomic int hs__cpu_signo HS_HIDDEN;	   /* the sampling signal, 0: none */
extern pthread_mutex_t hs__cpu_reg_lock HS_HIDDEN; /* timers */
/*
 * Taken by the sampler around each wall request it sends and by a move of
 * sampling to another signal, so that no request goes out with a number
 * the program is being given. Order: hs__cpu_reg_lock, then this.
 */
extern pthread_mutex_t hs__cpu_sig_lock HS_HIDDEN;
extern _Atomic unsigned hs__cpu_sig_epoch HS_HIDDEN; /* moves so far (under sig_lock) */
/* The si_value of the collector's own signals: CPU timers, wall requests. */
extern void *hs__cpu_sig_cookie HS_HIDDEN, *hs__cpu_wall_cookie HS_HIDDEN;
/* The program set SIG_IGN for the sampling signal (under hs__cpu_reg_lock). */
extern _Atomic int hs__cpu_prog_ign HS_HIDDEN;
extern pthread_key_t hs__cpu_exit_key HS_HIDDEN; /* runs hs__cpu_thread_end() */
extern int hs__cpu_key_ok HS_HIDDEN;
extern _Atomic int hs__cpu_sampler_run HS_HIDDEN; /* the sampler thread goes on */
extern _Atomic int hs__cpu_perf_ok HS_HIDDEN;	  /* 0 once perf_event_open was refused */

/* Thread @c's CPU-time clock on signal @sig: a perf event, else a POSIX timer. */
int hs__cpu_set_timer(struct cpu_thread *c, int sig) HS_HIDDEN;
void hs__cpu_drop_timer(struct cpu_thread *c) HS_HIDDEN;

/* --- cpu_handler.c: runs inside the sampling signal ----------------------- */

/*
 * Written by the sampler thread only (cpu_sampler.c publishes them),
 * searched by handlers without locks.
 */
extern _Atomic(struct sig_table *) hs__cpu_sig_big HS_HIDDEN,
    hs__cpu_sig_recent HS_HIDDEN;
/* how walks went: by rules, by libunwind; compared and differing (unwind=check) */
extern _Atomic uint64_t hs__cpu_n_fast HS_HIDDEN, hs__cpu_n_slow HS_HIDDEN;
extern _Atomic uint64_t hs__cpu_n_checked HS_HIDDEN, hs__cpu_n_differ HS_HIDDEN;
/* walks that could not use libunwind (another handler had it, or the
 * signal came inside the collector): cut where the rules stopped */
extern _Atomic uint64_t hs__cpu_n_unwinder_busy HS_HIDDEN;
/* why walks went to libunwind: no rule at the leaf, deeper; a rule the
 * walk cannot use; a register out of the stack */
extern _Atomic uint64_t hs__cpu_n_miss_leaf HS_HIDDEN, hs__cpu_n_miss_deep HS_HIDDEN;
extern _Atomic uint64_t hs__cpu_n_no_rule HS_HIDDEN, hs__cpu_n_bounds HS_HIDDEN;

/* The handler of the sampling signal (SA_SIGINFO). */
void hs__cpu_on_signal(int sig, siginfo_t *si, void *uc) HS_HIDDEN;
/* The tables handlers search now. */
struct sig_view hs__cpu_view_now(void) HS_HIDDEN;
/* The rule of code address @a in @v, or NULL. */
const struct sig_rule *hs__cpu_view_find(struct sig_view v, uintptr_t a) HS_HIDDEN;

/* --- cpu_threads.c: the program's threads ------------------------------- */

/* The calling thread's entry, NULL if it is not sampled. */
extern __thread struct cpu_thread *hs__cpu_self __attribute__((tls_model("initial-exec")))
HS_HIDDEN;
/*
 * The signals this thread's program asked to block, as far as it told us
 * (sigprocmask, pthread_sigmask; inherited by the threads it creates). The
 * collector leaves the sampling signal unblocked whatever the program
 * asks: a signal of the program's on it while the program has it in this
 * mask is not the program's to die of, it meant it to wait. Whichever
 * signal sampling moves to, the program's wish for it is here.
 */
extern __thread sigset_t hs__cpu_prog_mask __attribute__((tls_model("initial-exec")))
HS_HIDDEN;
extern int (*hs__cpu_real_pthread_create)(pthread_t *, const pthread_attr_t *,
					  void *(*)(void *), void *) HS_HIDDEN;
/* Register the calling thread (guard set by the caller). */
void hs__cpu_thread_begin(void) HS_HIDDEN;
/* The exit_key destructor: thread @arg (a struct cpu_thread) exits. */
void hs__cpu_thread_end(void *arg) HS_HIDDEN;

/* --- cpu_sampler.c: the sampler thread ---------------------------------- */

/* Map the sampler's batch and the handlers' rule tables, publish them empty. */
int hs__cpu_sampler_alloc(void) HS_HIDDEN;
/* In a followed fork child: counts and batch start afresh. */
void hs__cpu_sampler_reset(void) HS_HIDDEN;
void *hs__cpu_sampler_main(void *arg) HS_HIDDEN;
/* Queue a SAMPLE record (sorted by time with the rest of its batch). */
void hs__cpu_add_out(struct hs_thread *t, uint64_t ticks, uint64_t dur, pid_t tid,
		     unsigned kind, uint32_t node) HS_HIDDEN;
/* The rule of code address @a for the sampler's own walks, learned if new. */
int hs__cpu_sampler_rule(struct hs_thread *t, uintptr_t a, struct sig_rule *r) HS_HIDDEN;

/* --- cpu_wall.c: --wall -------------------------------------------------- */

extern uint64_t hs__cpu_n_signals HS_HIDDEN; /* wall requests sent (sampler thread) */

/* Map the copy of blocked stacks; 0 or -1. */
int hs__cpu_wall_alloc(void) HS_HIDDEN;
/* In the sampler thread, before its first tick of @period ns. */
void hs__cpu_wall_begin(uint64_t period) HS_HIDDEN;
/* One tick: 1 if a thread ran or is not known to be blocked, 0 if not, -1 if off. */
int hs__cpu_wall_tick(struct hs_thread *t) HS_HIDDEN;
/* "/proc/self/task/TID/@leaf" into @path (64 bytes; @leaf short), without stdio. */
void hs__cpu_task_file(char *path, pid_t tid, const char *leaf) HS_HIDDEN;
void hs__cpu_flush_open(struct hs_thread *t, struct cpu_thread *c) HS_HIDDEN;
void hs__cpu_add_blocked(struct hs_thread *t, struct cpu_thread *c, uint64_t end,
			 uint64_t dur, uint32_t node) HS_HIDDEN;
/* Close thread @c's wall trigger (hs__cpu_sig_lock held). */
void hs__cpu_trigger_close(struct cpu_thread *c) HS_HIDDEN;
/* Thread @c is done with: open period written, files closed (sig_lock held). */
void hs__cpu_wall_release(struct hs_thread *t, struct cpu_thread *c) HS_HIDDEN;
#endif
