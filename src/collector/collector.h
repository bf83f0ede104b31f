#ifndef HS_COLLECTOR_COLLECTOR_H
#define HS_COLLECTOR_COLLECTOR_H
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "format/trace_record.h"

/*
 * collector - the LD_PRELOAD library's internals, shared by its files.
 *
 * The hooks (hooks_*.c) run in the program's threads. Each thread has a
 * struct hs_thread (thread.c): a single-producer ring its hooks append
 * encoded records to, the decoding state the writer keeps for it, its
 * stack cache and unwind-rule cache. The writer thread (writer.c) drains
 * the rings, frames chunks, compresses them and writes the file.
 *
 * Memory: nothing here uses malloc while a hook runs. Per-thread states,
 * rings, the stack table and the writer's buffers are mmap'd. Code that
 * must call libraries that allocate (libdw, libunwind, pthread_create)
 * runs with the thread's recursion guard set, so those allocations go to
 * the real allocator untraced. The writer thread runs with its guard set
 * for its whole life and allocates nothing after start-up.
 */

#pragma GCC visibility push(hidden)

#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_HIDDEN __attribute__((visibility("hidden")))
#define HS_EXPORT __attribute__((visibility("default")))

#define HS_RING_SIZE (256u << 10) /* per-thread ring, power of two */
#define HS_RULE_CACHE 2048	  /* per-thread unwind rules, power of two */
#define HS_REC_MAX 64		  /* largest hot record */
#define HS_MEMO 64		  /* walks remembered per thread (pairs), power of two */
#define HS_NODE_CACHE 4096	  /* per-thread (parent, call site) -> node */
#define HS_MEMO_READS 96	  /* stack words a remembered walk may read */
#define HS_ALTSTACK (64u << 10)	  /* a thread's signal stack, if it has none */
#define HS_SPARE_STATES 2	  /* thread states mapped ahead of new threads */

/* --- configuration (from HEAPSCOPE_OPTIONS) ---------------------------- */

struct hs_config {
	uint64_t sample_bytes; /* 0: record every allocation */
	unsigned max_depth;
	unsigned unwind;  /* enum hs_unwind_mode */
	int check_unwind; /* compare every fast walk with libunwind's */
	int follow_fork, follow_exec;
	unsigned cpu_hz, wall_hz; /* stack sampling rates (cpu.c); 0: off */
	int cpu_timer;		  /* --cpu by POSIX timers, never perf events */
	int no_heap;		  /* record no heap events (samples only) */
	char dir[1024];		  /* where children's traces go ("" = cwd) */
};

extern struct hs_config hs_cfg HS_HIDDEN;

/* --- the real functions ------------------------------------------------ */

struct hs_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	void *(*mmap64)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	int (*dlclose)(void *);
	pid_t (*fork)(void);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	void (*_exit)(int) __attribute__((noreturn));
	void (*_Exit)(int) __attribute__((noreturn));
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	void (*(*signal)(int, void (*)(int)))(int);
	void (*(*sysv_signal)(int, void (*)(int)))(int);
	void (*(*sigset)(int, void (*)(int)))(int);
	int (*pthread_setname_np)(pthread_t, const char *);
	int (*prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
};

extern struct hs_real hs_real HS_HIDDEN;
extern _Atomic int hs_real_ready HS_HIDDEN; /* 1 once every field is set */
/* Resolve every real function (idempotent; safe before the constructor). */
void hs_resolve_real(void) HS_HIDDEN;

/* --- global state ------------------------------------------------------ */

/*
 * 1 while events are recorded, 2 while only samples are (--no-heap): the
 * heap hooks record when it is 1, the rest of the collector when not 0.
 */
extern _Atomic int hs_on HS_HIDDEN;
/* Bumped when a module is unloaded: stack and rule caches are stale. */
extern _Atomic uint64_t hs_gen HS_HIDDEN;
extern pid_t hs_pid HS_HIDDEN;	       /* the traced process */
extern uint64_t hs_start_ns HS_HIDDEN; /* CLOCK_MONOTONIC at start */
extern size_t hs_page_size HS_HIDDEN;

/*
 * The clock events are stamped with: nanoseconds since the start, updated
 * by the writer thread every millisecond (docs/trace-format.md "Time").
 * Reading it costs one load of a line that changes once a millisecond;
 * reading the CPU's clock for every event would cost more than the rest of
 * an event together.
 */
extern _Atomic uint64_t hs_coarse_ticks HS_HIDDEN;
/*
 * With --sample-bytes, events are few: they read the clock itself (ns),
 * and the writer needs to wake only every 10 ms.
 */
extern int hs_precise_clock HS_HIDDEN;
uint64_t hs_now_ns(void) HS_HIDDEN;

static inline uint64_t hs_now_ticks(void)
{
	if (HS_UNLIKELY(hs_precise_clock))
		return hs_now_ns();
	return atomic_load_explicit(&hs_coarse_ticks, memory_order_relaxed);
}

/* --- per-thread state (thread.c) --------------------------------------- */

/* A state's life: free, promised to a thread being created, live, exited. */
enum { HS_T_FREE = 0, HS_T_LIVE = 1, HS_T_EXITED = 2, HS_T_PROMISED = 3 };

/* One cached unwind rule, keyed by return address (unwind.c). */
struct hs_rule {
	uintptr_t ra;
	int32_t cfa_off;
	int16_t bp_off; /* 0: rbp unchanged; else rbp = *(cfa + bp_off) */
	uint8_t kind;	/* enum hs_rule_kind */
	uint8_t pad;
};

/*
 * A remembered stack walk: where it started, every stack word it read and
 * the node it gave. A walk is a function of its start and of those words,
 * so if they all still hold the same values the stack is the same and the
 * walk can be skipped (stacks.c). Checking costs one independent load per
 * word; walking costs a chain of dependent loads and lookups per frame.
 */
struct hs_memo {
	uintptr_t sp0, bp0, ra0;
	uint32_t node;
	uint32_t nreads;
	uint64_t epoch; /* valid while it is the thread's memo_epoch */
	int uses_bp0;	/* the walk used the caller's rbp (else any value) */
	uintptr_t addr[HS_MEMO_READS];
	uintptr_t val[HS_MEMO_READS];
};

/*
 * One stack walk as the unwinder saw it: for each frame (leaf first, up to
 * HS_SPLICE_DEPTH) the registers at that frame, and every stack word read.
 * The next walk of the thread that reaches a frame with the same registers
 * whose remaining words are unchanged takes the rest of its frames from
 * this one ("splicing"), so a deep stack that changes only near its leaf
 * costs a walk of the changed part and a check of the rest.
 */
#define HS_SPLICE_DEPTH 256
struct hs_walk {
	int valid;     /* a fast walk with all its frames here */
	int complete;  /* it reached the outermost frame */
	int truncated; /* it stopped at the depth cap */
	int overflow;  /* its reads did not all fit */
	unsigned n;    /* frames */
	unsigned nlog; /* stack words read */
	uintptr_t sp[HS_SPLICE_DEPTH], bp[HS_SPLICE_DEPTH], ra[HS_SPLICE_DEPTH];
	uint32_t logpos[HS_SPLICE_DEPTH]; /* reads before the frame's */
	uint8_t flags[HS_SPLICE_DEPTH];	  /* HS_WF_* */
	uintptr_t addr[2 * HS_SPLICE_DEPTH], val[2 * HS_SPLICE_DEPTH];
};

enum {
	HS_WF_RBP = 1,	   /* the frame's CFA is rbp-based */
	HS_WF_RESTORE = 2, /* the frame reloads rbp from the stack */
	HS_WF_NEED_BP = 4, /* the walk from here uses this frame's rbp */
};

struct hs_thread {
	/*
	 * Written by the producer at every record, read by the writer: the
	 * ring's head and the encoding state at the head, published together
	 * under the sequence counter @seq (odd while they change).
	 */
	_Atomic unsigned seq;
	_Atomic uint64_t head;
	_Atomic uint64_t st_ticks, st_addr; /* last event's ticks and address */
	char pad0[32];
	/* written by the writer */
	_Atomic uint64_t tail;
	uint64_t w_ticks, w_addr; /* the encoding state at the tail */
	char pad1[40];
	/* read by both, written rarely */
	struct hs_thread *next; /* registry list; never unlinked */
	_Atomic int state;	/* HS_T_* */
	pid_t tid;
	pthread_t self;
	uint8_t *ring;	/* HS_RING_SIZE bytes */
	void *altstack; /* HS_ALTSTACK bytes for fatal signals */
	/*
	 * The ring position after the last record that is not an event (a
	 * NODE, a MODULE, a THREAD_START...), stored by the producer before
	 * it publishes the record: the writer marks the chunks those records
	 * go to (hs_tw_footer_marked()).
	 */
	_Atomic uint64_t rec_end;
	char pad2[16];

	/* the producer's own */
	uint64_t cached_tail;
	uint64_t seen_gen;   /* hs_gen this thread's caches match */
	int64_t sample_left; /* Poisson sampler: bytes to the next sample */
	uintptr_t temp_last; /* sampler: the latest allocation if sampled and not
			      * followed by another one (a FREE_TEMPORARY if freed) */
	uint64_t rng;
	uintptr_t stack_lo, stack_hi; /* bounds of the thread's stack */
	unsigned prev_depth;	      /* the previous stack, root first */
	/*
	 * The memo's entries hold while their epoch is this one: forgetting
	 * them all (a new thread in a reused state, a module unloaded) is one
	 * increment, which touches none of their pages. Never 0 once the
	 * thread registered; an entry being filled has epoch 0.
	 */
	uint64_t memo_epoch;
	/* totals for the footer (summed by the writer at the end) */
	uint64_t n_alloc, n_free, n_realloc, n_mmap, n_munmap, n_mremap, bytes;
	uint64_t lost;		   /* records dropped (the writer was gone) */
	uint8_t spill[HS_REC_MAX]; /* a record that does not fit before the wrap */
	uintptr_t prev_key[HS_DEPTH_LIMIT + 1];
	uint32_t prev_node[HS_DEPTH_LIMIT + 1];
	struct hs_rule rules[HS_RULE_CACHE];
	uintptr_t scratch[HS_DEPTH_LIMIT]; /* the stack being unwound */
	uintptr_t check[HS_DEPTH_LIMIT];   /* libunwind's, with check_unwind */
	struct hs_memo memo[HS_MEMO];
	/* per pair of memo slots (2k, 2k + 1): which of the two was used
	 * last (0 or 1); a walk neither holds replaces the other */
	uint8_t memo_last[HS_MEMO / 2];
	struct hs_walk walks[2]; /* the last walk and the current one */
	unsigned cur_walk;
	struct {
		uintptr_t key;
		uint32_t parent, id;
	} nodes[HS_NODE_CACHE]; /* stacks.c: a cache of the stack table */
};

struct hs_tls {
	struct hs_thread *t;
	int guard;   /* inside a hook: pass through */
	int in_fork; /* inside the fork() hook (preload.c) */
};
extern __thread struct hs_tls hs_tls __attribute__((tls_model("initial-exec"))) HS_HIDDEN;

/* The registry: every thread state ever created (reused when free). */
extern _Atomic(struct hs_thread *) hs_threads HS_HIDDEN;

/* This thread's state, registering it on first use; NULL if impossible. */
struct hs_thread *hs_thread_get(void) HS_HIDDEN;
/*
 * Keep HS_SPARE_STATES free states mapped for threads to come (before a
 * pthread_create, at start): mmap only, no allocation; errno kept.
 */
void hs_thread_reserve(void) HS_HIDDEN;
/*
 * A state set aside for a thread about to be created (the pthread_create
 * hook, before the thread's stack takes the address space), or NULL. The
 * new thread takes it with hs_thread_adopt(), registering there (while
 * tracing; else the state is free again); if the creation failed, give
 * it back with hs_thread_unpromise(). mmap only, no allocation; errno kept.
 */
struct hs_thread *hs_thread_promise(void) HS_HIDDEN;
void hs_thread_adopt(struct hs_thread *t) HS_HIDDEN;
void hs_thread_unpromise(struct hs_thread *t) HS_HIDDEN;
/*
 * An event of this thread is dropped, as it has no state (hs_thread_get()
 * returned NULL): counted in hs_count_lost, said once on stderr.
 */
void hs_thread_lost(void) HS_HIDDEN;
/*
 * Append @n bytes (a whole record) to @t's ring; waits while it is full.
 * @ticks and @addr are the encoding state after the record. Returns 0, or
 * -1 if the record was dropped (the writer is gone).
 */
int hs_ring_write(struct hs_thread *t, const uint8_t *rec, size_t n, uint64_t ticks,
		  uint64_t addr) HS_HIDDEN;
/* The same for records that do not change the encoding state. */
static inline int hs_ring_put(struct hs_thread *t, const uint8_t *rec, size_t n)
{
	return hs_ring_write(t, rec, n,
			     atomic_load_explicit(&t->st_ticks, memory_order_relaxed),
			     atomic_load_explicit(&t->st_addr, memory_order_relaxed));
}
/*
 * The record of @n bytes about to be written to @t's ring is not an event
 * (@rec_end): called just before hs_ring_put(), whose publication orders
 * this store before the record's.
 */
static inline void hs_ring_mark(struct hs_thread *t, size_t n)
{
	atomic_store_explicit(&t->rec_end,
			      atomic_load_explicit(&t->head, memory_order_relaxed) + n,
			      memory_order_relaxed);
}
/* Wake the writer when the ring is more than half full (a quarter crossed). */
void hs_ring_check_fill(struct hs_thread *t, uint64_t head) HS_HIDDEN;

/* Publish @head with the encoding state after it (the seqlock). */
static inline void hs_publish(struct hs_thread *t, uint64_t head, uint64_t ticks,
			      uint64_t addr)
{
	unsigned s = atomic_load_explicit(&t->seq, memory_order_relaxed);
	uint64_t old = atomic_load_explicit(&t->head, memory_order_relaxed);

	atomic_store_explicit(&t->seq, s + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&t->st_ticks, ticks, memory_order_relaxed);
	atomic_store_explicit(&t->st_addr, addr, memory_order_relaxed);
	atomic_store_explicit(&t->head, head, memory_order_relaxed);
	atomic_store_explicit(&t->seq, s + 2, memory_order_release);
	if (HS_UNLIKELY((old ^ head) & ~(uint64_t)(HS_RING_SIZE / 4 - 1)))
		hs_ring_check_fill(t, head);
}

/*
 * Where to encode a hot record (at most HS_REC_MAX bytes): straight into
 * the ring when it fits before the wrap and the ring has room, else into
 * @t->spill. Finish with hs_rec_commit().
 */
static inline uint8_t *hs_rec_begin(struct hs_thread *t)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	size_t off = head & (HS_RING_SIZE - 1);

	if (HS_LIKELY(off <= HS_RING_SIZE - HS_REC_MAX &&
		      head + HS_REC_MAX - t->cached_tail <= HS_RING_SIZE))
		return t->ring + off;
	return t->spill;
}

static inline void hs_rec_commit(struct hs_thread *t, uint8_t *start, uint8_t *end,
				 uint64_t ticks, uint64_t addr)
{
	if (HS_UNLIKELY(start == t->spill)) {
		hs_ring_write(t, start, (size_t)(end - start), ticks, addr);
		return;
	}
	hs_publish(t,
		   atomic_load_explicit(&t->head, memory_order_relaxed) +
		       (uint64_t)(end - start),
		   ticks, addr);
}

/* Set up the key and fork handling; 0 or -1. */
int hs_thread_init(void) HS_HIDDEN;
/* After fork in a followed child: only the calling thread survives. */
void hs_thread_after_fork(void) HS_HIDDEN;
/* Writer side: threads that exited and drained are made reusable. */
void hs_thread_reap(void) HS_HIDDEN;
/* Record this thread's new name (or another live thread's). */
void hs_thread_name(pthread_t th, const char *name) HS_HIDDEN;

/* Encode a sized record for the calling thread into its ring. */
void hs_emit_sized(struct hs_thread *t, unsigned tag, const uint8_t *body,
		   size_t n) HS_HIDDEN;

/* --- writer (writer.c) ------------------------------------------------- */

/* Open the output and start the writer thread; 0 or -1 (message printed). */
int hs_writer_start(const char *path, int precreated, unsigned flags, uint64_t parent_pid,
		    int argc, char **argv) HS_HIDDEN;
/* Writer thread only: append a sized record of thread 0 to the chunk. */
void hs_writer_emit_sized(unsigned tag, const uint8_t *body, size_t n) HS_HIDDEN;
/* In a followed fork child: a new trace file and writer for this process. */
int hs_writer_start_child(pid_t parent) HS_HIDDEN;
/* Wake the writer (a ring is filling up). */
void hs_writer_wake(void) HS_HIDDEN;
/*
 * Drain everything, write END (@reason, @detail) and the footer, close the
 * file and stop the writer thread. From a signal handler: waits at most
 * about two seconds. Idempotent.
 */
void hs_writer_finish(unsigned reason, uint64_t detail, int from_signal) HS_HIDDEN;
/* Flush and write END before exec; hs_writer_resume() if exec failed. */
void hs_writer_pause_for_exec(void) HS_HIDDEN;
void hs_writer_resume(void) HS_HIDDEN;
/* 1 while the writer thread drains the rings. */
extern _Atomic int hs_writer_alive HS_HIDDEN;
extern pid_t hs_writer_tid HS_HIDDEN;
extern _Atomic pid_t hs_sampler_tid HS_HIDDEN; /* cpu_sampler.c's thread, 0: none */
/*
 * Set when the main thread called pthread_exit(): from then on the writer
 * ends the process with exit(0) once no thread of the program is left, as
 * glibc would (the collector's own threads keep glibc from seeing it).
 */
extern _Atomic int hs_main_exited HS_HIDDEN;
/* Forget the parent's writer in a fork child (no thread, close the file). */
void hs_writer_forget(void) HS_HIDDEN;

/* --- stacks (stacks.c, unwind.c) --------------------------------------- */

enum hs_rule_kind {
	HS_RULE_NONE = 0, /* empty cache slot */
	HS_RULE_RSP,	  /* cfa = rsp + off */
	HS_RULE_RBP,	  /* cfa = rbp + off */
	HS_RULE_END,	  /* outermost frame: the stack is complete */
	HS_RULE_SLOW,	  /* needs the general unwinder */
	HS_RULE_STOP,	  /* no module: the stack is incomplete here */
};

/*
 * Unwind the program's stack from the frame of an exported hook whose
 * frame address is @fp: call sites, leaf first, into @ips (room for
 * @max). Returns the depth; *@complete is 1 if the walk reached the
 * outermost frame. The walk is recorded in @w, and may splice the
 * thread's previous walk (the other of t->walks).
 */
unsigned hs_unwind(struct hs_thread *t, void *fp, uintptr_t *ips, unsigned max,
		   int *complete, struct hs_walk *w) HS_HIDDEN;
/* Forget cached rules (a module was unloaded). */
void hs_unwind_flush(struct hs_thread *t) HS_HIDDEN;
/*
 * The rule of the frame whose code address is @addr (a call site, or the
 * exact instruction of an interrupted frame) into @r, and addresses
 * [*@lo, *@hi) it holds for (from @addr to the end of its CFI row). Takes
 * hs_unwind_lock; @t's ring gets module records.
 */
void hs_unwind_rule_range(struct hs_thread *t, uintptr_t addr, struct hs_rule *r,
			  uintptr_t *lo, uintptr_t *hi) HS_HIDDEN;
/* With check_unwind: print how many walks differed from libunwind's. */
void hs_unwind_report(void) HS_HIDDEN;
void hs_unwind_global_flush(void) HS_HIDDEN;

/* Intern a stack (leaf first) and return its node id, emitting new nodes. */
uint32_t hs_stack_intern(struct hs_thread *t, const uintptr_t *ips, unsigned n,
			 int complete) HS_HIDDEN;
/* Bring @t's caches up to date with hs_gen. */
void hs_thread_check_gen(struct hs_thread *t) HS_HIDDEN;
/* Walk from @fp, intern, and remember the walk in @m. */
uint32_t hs_stack_walk(struct hs_thread *t, void *fp, struct hs_memo *m) HS_HIDDEN;
/*
 * With check_unwind, a remembered walk that holds: walk all the same (a
 * walk libunwind checks) and count a different node as a stack that
 * differs (hs_unwind_memo_checked()).
 */
uint32_t hs_stack_memo_check(struct hs_thread *t, void *fp, struct hs_memo *m) HS_HIDDEN;
void hs_unwind_memo_checked(uint32_t remembered, uint32_t walked) HS_HIDDEN;

/* Whether remembered walk @m is the stack of a hook whose caller has these registers. */
static inline int hs_memo_holds(const struct hs_thread *t, const struct hs_memo *m,
				uintptr_t ra0, uintptr_t sp0, uintptr_t bp0)
{
	unsigned i;

	if (m->epoch != t->memo_epoch || m->ra0 != ra0 || m->sp0 != sp0 ||
	    (m->uses_bp0 && m->bp0 != bp0))
		return 0;
	for (i = 0; i < m->nreads; i++)
		if (*(const uintptr_t *)m->addr[i] != m->val[i])
			return 0;
	return 1;
}

/* Memo slot @slot was used: it is its pair's last (t->memo_last). */
static inline void hs_memo_used(struct hs_thread *t, unsigned slot)
{
	if (t->memo_last[slot >> 1] != (slot & 1))
		t->memo_last[slot >> 1] = (uint8_t)(slot & 1);
}

/*
 * The node id of the stack of the hook whose frame is @fp (0 if the depth
 * is 0): a remembered walk if its stack words are unchanged, else a walk.
 * A start (return address and stack pointer) has a pair of memo slots, so
 * that two starts whose slot is the same by chance, or two stacks from one
 * start, do not push each other out at every call (python3: about 600k
 * walks more in some runs, by where the address space randomisation put
 * its stack and code, when a start had one slot).
 */
static inline uint32_t hs_stack_here(struct hs_thread *t, void *fp)
{
	const uintptr_t *f = fp;
	uintptr_t sp0 = (uintptr_t)fp + 16, bp0 = f[0], ra0 = f[1];
	struct hs_memo *m;
	unsigned slot;

	if (HS_UNLIKELY(t->seen_gen !=
			atomic_load_explicit(&hs_gen, memory_order_relaxed)))
		hs_thread_check_gen(t);
	/* two slots for a start (a pair): either may hold its walk */
	slot = (unsigned)(((ra0 ^ (sp0 >> 4)) * 0x9E3779B97F4A7C15ull) >>
			  (64 - __builtin_ctz(HS_MEMO)));
	m = &t->memo[slot];
	if (HS_LIKELY(hs_memo_holds(t, m, ra0, sp0, bp0)))
		goto hit;
	slot ^= 1;
	m = &t->memo[slot];
	if (hs_memo_holds(t, m, ra0, sp0, bp0))
		goto hit;
	/* the pair's slot used longer ago takes the new walk */
	slot = (slot & ~1u) | (t->memo_last[slot >> 1] ^ 1u);
	hs_memo_used(t, slot);
	return hs_stack_walk(t, fp, &t->memo[slot]);
hit:
	hs_memo_used(t, slot);
	if (HS_UNLIKELY(hs_cfg.check_unwind))
		return hs_stack_memo_check(t, fp, m);
	return m->node;
}
int hs_stacks_init(void) HS_HIDDEN;
/*
 * Start a new table after a module unload (ids go on growing); returns
 * the first id the new table will give.
 */
uint32_t hs_stacks_reset(void) HS_HIDDEN;
/* Start a new table with ids from 1 (a followed fork child's new trace). */
void hs_stacks_restart(void) HS_HIDDEN;

/* --- modules (modules.c) ----------------------------------------------- */

struct hs_module {
	uint64_t id;
	uintptr_t bias, start, end;
	int live;
	int emitted; /* a MODULE record was written for it */
	char path[1024];
	uint8_t build_id[64];
	unsigned build_id_len;
	/* CFI for the fast unwinder (unwind.c), under hs_unwind_lock */
	int cfi_tried;
	void *elf, *cfi;
};

/*
 * Scan the loaded modules and record loads and unloads in @t's ring.
 * Takes hs_unwind_lock; hs_modules_scan_locked() is for callers that hold
 * it. Unloads reset the stack table.
 */
void hs_modules_scan(struct hs_thread *t) HS_HIDDEN;
void hs_modules_scan_locked(struct hs_thread *t) HS_HIDDEN;
/* @addr is a new frame: rescan if no known module holds it. */
void hs_module_notice(struct hs_thread *t, uintptr_t addr) HS_HIDDEN;
/* Re-emit every live module (a followed fork child's new trace). */
void hs_modules_reemit(struct hs_thread *t) HS_HIDDEN;
/* The live module holding @addr, or NULL (caller holds hs_unwind_lock). */
struct hs_module *hs_module_find(uintptr_t addr) HS_HIDDEN;
extern pthread_mutex_t hs_unwind_lock HS_HIDDEN;

/* --- sampling (sampler.c) ---------------------------------------------- */

/* Whether an allocation of @size bytes is sampled (updates @t's counter). */
static inline int hs_sample(struct hs_thread *t, size_t size)
{
	extern int64_t hs_sample_next(struct hs_thread * t) HS_HIDDEN;

	t->sample_left -= (int64_t)size;
	if (HS_LIKELY(t->sample_left > 0))
		return 0;
	t->sample_left = hs_sample_next(t);
	return 1;
}
int hs_sampled_add(uintptr_t addr) HS_HIDDEN;
/* Remove @addr; 1 if it was a sampled block. Lock-free when absent. */
int hs_sampled_remove(uintptr_t addr) HS_HIDDEN;

/*
 * A filter in front of the sampled set: one bit per hash bucket of
 * addresses, set while the bucket holds a sampled live block (sampler.c
 * counts them under the set's lock). A free whose bit is clear was not
 * sampled: one load from a 16 KiB table instead of a look-up. With 2^17
 * buckets, a thousand live sampled blocks (512 MiB live at the default
 * rate) send under 1% of the other frees to the look-up.
 */
#define HS_FILTER_BITS 17
extern _Atomic uint64_t hs_sample_filter[(1u << HS_FILTER_BITS) / 64] HS_HIDDEN;

static inline size_t hs_filter_slot(uintptr_t a)
{
	return (size_t)(((uint64_t)a * 0x9E3779B97F4A7C15ull) >> (64 - HS_FILTER_BITS));
}

/* Whether @addr may be a sampled block (no false negatives). */
static inline int hs_maybe_sampled(uintptr_t a)
{
	size_t s = hs_filter_slot(a);

	return (atomic_load_explicit(&hs_sample_filter[s / 64], memory_order_relaxed) >>
		(s % 64)) &
	       1;
}
void hs_sampler_seed(struct hs_thread *t) HS_HIDDEN;
/* In a fork child: the set's lock may have been held by a vanished thread. */
void hs_sampler_after_fork(void) HS_HIDDEN;
/* 1 while the real functions are being looked up (use the bootstrap pool). */
int hs_resolving(void) HS_HIDDEN;

/* --- CPU and wall-clock sampling (cpu*.c) ------------------------------ */

/* Start sampling if configured (after the writer); 0 or -1 (message printed). */
int hs_cpu_start(void) HS_HIDDEN;
/* Stop sampling and write the last samples (before the writer finishes). */
void hs_cpu_stop(void) HS_HIDDEN;
/* In a followed fork child whose new trace has started: sample it too. */
void hs_cpu_follow_child(void) HS_HIDDEN;
/* Whether @sig is the sampling signal. */
int hs_cpu_owns(int sig) HS_HIDDEN;
/* sigaction() of the program on the sampling signal (see cpu.c). */
int hs_cpu_sigaction(int sig, const struct sigaction *act,
		     struct sigaction *old) HS_HIDDEN;

/* --- the collector's descriptors (fds.c) ------------------------------- */

/*
 * Move @fd (opened close-on-exec) above the numbers a program normally
 * uses and protect it from the program's close(): the new number, or @fd
 * itself (protected) if it cannot move, or -1 (EBADF) when the program
 * closed @fd with the raw system call or dup2()'d over it meanwhile.
 */
int hs_fd_move_high(int fd) HS_HIDDEN;
/* Close a descriptor of hs_fd_move_high()'s. */
int hs_fd_close(int fd) HS_HIDDEN;
/* Stop protecting @fd, a number that is no longer the collector's file. */
void hs_fd_forget(int fd) HS_HIDDEN;

/* --- lifecycle (preload.c) --------------------------------------------- */

/* Stop tracing for good: drain, footer, close. */
void hs_shutdown(unsigned reason, uint64_t detail) HS_HIDDEN;
/* Install handlers that flush on fatal signals (preload.c). */
void hs_signals_install(void) HS_HIDDEN;
/*
 * Signal @sig, in its handler, is to end the process: finish the trace
 * (in the traced process, not on the writer's thread), set @sig's action
 * to SIG_DFL and send it to this thread again, delivered when the handler
 * returns. Async-signal-safe.
 */
void hs_fatal_signal(int sig) HS_HIDDEN;

/* A message on stderr, "heapscope: ..." (no allocation; async-signal-safe). */
void hs_msg(const char *fmt, ...) HS_HIDDEN __attribute__((format(printf, 1, 2)));

/*
 * Footer counters kept outside the threads: nodes, modules, threads, and
 * events lost by threads that have no state (added to the threads' own).
 */
extern _Atomic uint64_t hs_count_nodes, hs_count_modules, hs_count_threads HS_HIDDEN;
extern _Atomic uint64_t hs_count_lost HS_HIDDEN;
#pragma GCC visibility pop
#endif
