/*
 * thread - per-thread states: registration on a thread's first event, the
 * single-producer ring its hooks append to, thread exit and reuse.
 *
 * A state is mmap'd once and never unmapped: after its thread exited and
 * the writer drained its ring, the writer marks it free and the next new
 * thread takes it over. The ring's head and tail only grow, across owners,
 * and so does the encoding state (last ticks, last address), which keeps
 * the writer's decoding state valid without any reset handshake.
 *
 * A state is one mapping: a guard page, the thread's signal stack, the
 * struct and its ring (about half a MiB). A thread the program creates
 * with pthread_create gets its state there, before its stack is mapped
 * (hs_thread_promise(), cpu_threads.c), so that when address space runs
 * short it is the program's thread creation that fails, not a running
 * thread's registration; HS_SPARE_STATES free states are mapped at start
 * for threads made otherwise. A thread whose state cannot be mapped all
 * the same has its events counted as lost (hs_thread_lost()), for the
 * footer.
 */
#include "collector/collector.h"
#include "format/trace_writer.h"
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread struct hs_tls hs_tls __attribute__((tls_model("initial-exec")));
_Atomic(struct hs_thread *) hs_threads;
static pthread_key_t exit_key;
static int key_ok;

static void *map_zero(size_t n)
{
	void *p = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return (long)p < 0 && (long)p > -4096 ? NULL : p;
}

static size_t state_size(void)
{
	return (sizeof(struct hs_thread) + hs_page_size - 1) & ~(hs_page_size - 1);
}

/*
 * Map a new state and add it to the registry as free. The layout is
 * [guard page][signal stack][struct][ring]: the guard page stops a
 * signal stack overflow before the memory below it. 0 or -1.
 */
static int add_spare(void)
{
	size_t n = hs_page_size + HS_ALTSTACK + state_size() + HS_RING_SIZE;
	struct hs_thread *t, *head;
	uint8_t *p = map_zero(n);

	if (!p)
		return -1;
	syscall(SYS_mprotect, p, hs_page_size, PROT_NONE);
	t = (struct hs_thread *)(p + hs_page_size + HS_ALTSTACK);
	t->altstack = p + hs_page_size;
	t->ring = (uint8_t *)t + state_size();
	atomic_store(&t->state, HS_T_FREE);
	head = atomic_load(&hs_threads);
	do
		t->next = head;
	while (!atomic_compare_exchange_weak(&hs_threads, &head, t));
	return 0;
}

/*
 * Make the states of exited threads whose rings were drained free again.
 * Returns how many; *@pending (if not NULL) gets how many exited states
 * are left, waiting for the writer's drain or their thread's end.
 */
static unsigned reap(unsigned *pending)
{
	struct hs_thread *t;
	unsigned freed = 0, left = 0;

	for (t = atomic_load(&hs_threads); t; t = t->next) {
		int expect = HS_T_EXITED;

		if (atomic_load(&t->state) != HS_T_EXITED)
			continue;
		if (atomic_load(&t->head) != atomic_load(&t->tail) ||
		    syscall(SYS_tgkill, hs_pid, t->tid, 0) == 0 || errno != ESRCH) {
			left++;
			continue;
		}
		freed += atomic_compare_exchange_strong(&t->state, &expect, HS_T_FREE);
	}
	if (pending)
		*pending = left;
	return freed;
}

/* A free state, now in @state (HS_T_LIVE or HS_T_PROMISED); or NULL. */
static struct hs_thread *take_free(int state)
{
	struct hs_thread *t;

	for (t = atomic_load(&hs_threads); t; t = t->next) {
		int expect = HS_T_FREE;

		if (atomic_load_explicit(&t->state, memory_order_relaxed) == HS_T_FREE &&
		    atomic_compare_exchange_strong(&t->state, &expect, state))
			return t;
	}
	return NULL;
}

/*
 * A state for the calling thread: a free one, an exited thread's, or a
 * new one. When none can be mapped but exited threads' states wait for
 * the writer's drain, this waits for it (at most about 20 ms, once per
 * thread): glibc reuses an exited thread's stack at once, so address
 * space that let the thread be created may not let its state be mapped.
 * NULL if there is none.
 */
static struct hs_thread *claim_state(void)
{
	static __thread int waited __attribute__((tls_model("initial-exec")));
	struct hs_thread *t;
	unsigned pending, waits = 0;

	for (;;) {
		t = take_free(HS_T_LIVE);
		if (t)
			return t;
		if (reap(&pending))
			continue;
		/* another thread may take it first: look again */
		if (!add_spare())
			continue;
		if (!pending || waited || waits++ >= 20 || !atomic_load(&hs_writer_alive))
			break;
		hs_writer_wake();
		{
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
		}
	}
	waited = 1;
	return NULL;
}

void hs_thread_reserve(void)
{
	const struct hs_thread *t;
	unsigned nfree = 0;
	int e = errno;

	for (t = atomic_load(&hs_threads); t; t = t->next)
		nfree +=
		    atomic_load_explicit(&t->state, memory_order_relaxed) == HS_T_FREE;
	if (nfree < HS_SPARE_STATES)
		nfree += reap(NULL);
	while (nfree < HS_SPARE_STATES && !add_spare())
		nfree++;
	errno = e;
}

struct hs_thread *hs_thread_promise(void)
{
	struct hs_thread *t;
	int e = errno;

	do {
		t = take_free(HS_T_PROMISED);
	} while (!t && (reap(NULL) || !add_spare()));
	errno = e;
	return t;
}

void hs_thread_unpromise(struct hs_thread *t)
{
	atomic_store(&t->state, HS_T_FREE);
}

void hs_thread_lost(void)
{
	static _Atomic int told;

	atomic_fetch_add_explicit(&hs_count_lost, 1, memory_order_relaxed);
	if (!atomic_exchange(&told, 1))
		hs_msg("cannot map the state of thread %d (out of address space?): "
		       "its events are counted as lost in the trace",
		       (int)syscall(SYS_gettid));
}

static void stack_bounds(struct hs_thread *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	t->stack_lo = 0;
	t->stack_hi = UINTPTR_MAX;
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &addr, &size)) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

/*
 * Give the thread a signal stack if it has none (the state's), so that
 * the fatal-signal handler (preload.c, SA_ONSTACK) can finish the trace
 * after a stack overflow.
 */
static void signal_stack(struct hs_thread *t)
{
	stack_t cur, ss;

	if (sigaltstack(NULL, &cur) || !(cur.ss_flags & SS_DISABLE))
		return;
	ss.ss_sp = t->altstack;
	ss.ss_size = HS_ALTSTACK;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
}

/* Make live state @t the calling thread's and record its start. */
static void register_state(struct hs_thread *t)
{
	char name[17] = "";
	uint8_t body[40], *q;

	t->tid = (pid_t)syscall(SYS_gettid);
	t->self = pthread_self();
	t->prev_depth = 0;
	t->seen_gen = atomic_load(&hs_gen);
	memset(t->rules, 0, sizeof(t->rules));
	t->memo_epoch++;
	t->walks[0].valid = t->walks[1].valid = 0;
	memset(t->nodes, 0, sizeof(t->nodes));
	stack_bounds(t);
	signal_stack(t);
	hs_sampler_seed(t);
	hs_tls.t = t;
	if (key_ok)
		pthread_setspecific(exit_key, t);
	syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
	q = hs_enc_thread_start_body(body, hs_now_ticks(), name, strnlen(name, 16));
	hs_emit_sized(t, HS_TAG_THREAD_START, body, (size_t)(q - body));
}

struct hs_thread *hs_thread_get(void)
{
	struct hs_thread *t = hs_tls.t;
	int e;

	if (HS_LIKELY(t))
		return t;
	e = errno;
	t = claim_state();
	if (t)
		register_state(t);
	errno = e;
	return t;
}

void hs_thread_adopt(struct hs_thread *t)
{
	int e = errno;

	if (hs_tls.t || !atomic_load(&hs_on)) {
		hs_thread_unpromise(t);
		return;
	}
	atomic_store(&t->state, HS_T_LIVE);
	register_state(t);
	errno = e;
}

/* Wait until @n bytes fit after @head; 0 if the writer is gone. */
static int wait_room(struct hs_thread *t, uint64_t head, size_t n)
{
	unsigned spins;
	int e = errno;

	for (spins = 0;; spins++) {
		t->cached_tail = atomic_load_explicit(&t->tail, memory_order_acquire);
		if (head + n - t->cached_tail <= HS_RING_SIZE)
			break;
		if (!atomic_load(&hs_writer_alive)) {
			errno = e;
			return 0;
		}
		if (spins == 20 && getpid() != hs_pid) {
			/* a child forked without the atfork handlers: no writer here */
			atomic_store(&hs_on, 0);
			errno = e;
			return 0;
		}
		hs_writer_wake();
		if (spins < 20) {
			sched_yield();
		} else {
			struct timespec ts = {0, 50000};

			nanosleep(&ts, NULL);
		}
	}
	errno = e;
	return 1;
}

int hs_ring_write(struct hs_thread *t, const uint8_t *rec, size_t n, uint64_t ticks,
		  uint64_t addr)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	size_t off, first;

	if (head + n - t->cached_tail > HS_RING_SIZE) {
		t->cached_tail = atomic_load_explicit(&t->tail, memory_order_acquire);
		if (head + n - t->cached_tail > HS_RING_SIZE && !wait_room(t, head, n)) {
			t->lost++;
			return -1;
		}
	}
	off = head & (HS_RING_SIZE - 1);
	first = HS_RING_SIZE - off;
	if (n <= first) {
		memcpy(t->ring + off, rec, n);
	} else {
		memcpy(t->ring + off, rec, first);
		memcpy(t->ring, rec + first, n - first);
	}
	hs_publish(t, head + n, ticks, addr);
	return 0;
}

void hs_ring_check_fill(struct hs_thread *t, uint64_t head)
{
	t->cached_tail = atomic_load_explicit(&t->tail, memory_order_acquire);
	if (head - t->cached_tail > HS_RING_SIZE / 2) {
		int e = errno;

		hs_writer_wake();
		errno = e;
	}
}

void hs_emit_sized(struct hs_thread *t, unsigned tag, const uint8_t *body, size_t n)
{
	uint8_t rec[1 + HS_VARINT_MAX + 1400];
	uint8_t *end;

	if (n > 1400)
		return;
	end = hs_tw_sized_prefix(rec, tag, n);
	memcpy(end, body, n);
	if (tag != HS_TAG_SAMPLE)
		hs_ring_mark(t, (size_t)(end - rec) + n);
	hs_ring_put(t, rec, (size_t)(end - rec) + n);
	if (tag == HS_TAG_THREAD_START)
		atomic_fetch_add(&hs_count_threads, 1);
	else if (tag == HS_TAG_MODULE)
		atomic_fetch_add(&hs_count_modules, 1);
}

static void thread_exit(void *arg)
{
	struct hs_thread *t = arg;

	if (atomic_load(&hs_on) && !hs_tls.guard) {
		uint8_t body[HS_VARINT_MAX], *q;

		hs_tls.guard = 1;
		q = hs_enc_thread_exit_body(body, hs_now_ticks());
		hs_emit_sized(t, HS_TAG_THREAD_EXIT, body, (size_t)(q - body));
		hs_tls.guard = 0;
	}
	if (t->tid == hs_pid)
		atomic_store(&hs_main_exited, 1);
	atomic_store(&t->state, HS_T_EXITED);
}

int hs_thread_init(void)
{
	if (pthread_key_create(&exit_key, thread_exit))
		return -1;
	key_ok = 1;
	return 0;
}

void hs_thread_reap(void)
{
	int e = errno;

	reap(NULL);
	errno = e;
}

void hs_thread_after_fork(void)
{
	struct hs_thread *t, *me = hs_tls.t;

	for (t = atomic_load(&hs_threads); t; t = t->next) {
		/* the parent's pending events are not the child's */
		atomic_store(&t->tail, atomic_load(&t->head));
		t->w_ticks = atomic_load(&t->st_ticks);
		t->w_addr = atomic_load(&t->st_addr);
		t->cached_tail = atomic_load(&t->tail);
		t->n_alloc = t->n_free = t->n_realloc = t->bytes = 0;
		t->n_mmap = t->n_munmap = t->n_mremap = t->lost = 0;
		if (t != me)
			atomic_store(&t->state, HS_T_FREE);
	}
	if (me) {
		me->tid = (pid_t)syscall(SYS_gettid);
		me->prev_depth = 0;
		me->memo_epoch++;
		me->walks[0].valid = me->walks[1].valid = 0;
		memset(me->nodes, 0, sizeof(me->nodes));
		stack_bounds(me);
		if (key_ok)
			pthread_setspecific(exit_key, me);
	}
}

void hs_thread_name(pthread_t th, const char *name)
{
	struct hs_thread *me = hs_thread_get(), *t;
	uint8_t body[48], *q;
	pid_t tid = 0;

	if (!me)
		return;
	if (!pthread_equal(th, pthread_self())) {
		for (t = atomic_load(&hs_threads); t; t = t->next)
			if (atomic_load(&t->state) == HS_T_LIVE &&
			    pthread_equal(t->self, th))
				tid = t->tid;
		if (!tid)
			return;
	}
	q = hs_enc_thread_name_body(body, hs_now_ticks(), (uint64_t)tid, name,
				    strnlen(name, 16));
	hs_emit_sized(me, HS_TAG_THREAD_NAME, body, (size_t)(q - body));
}
