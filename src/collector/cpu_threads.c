/*
 * cpu_threads - the program's threads as CPU and wall sampling sees them
 * (cpu_internal.h has the map of the cpu_*.c files).
 *
 * Every thread of the program gets a struct cpu_thread: at start-up for
 * the main thread, and for later threads from the pthread_create hook
 * here, which runs the new thread's start routine through a trampoline
 * that registers it first (and starts its CPU clock). Entries are mmap'd
 * and never unmapped; an exited thread's entry is reused once the sampler
 * drained it.
 *
 * The program never blocks or waits for the sampling signal: the
 * interposed sigprocmask(), pthread_sigmask(), sigwait() and co. take it
 * out of the sets the program passes and remember what the program asked
 * for in hs__cpu_prog_mask, which the handler honours.
 */
#include "collector/cpu_internal.h"
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

__thread struct cpu_thread *hs__cpu_self __attribute__((tls_model("initial-exec")));
__thread sigset_t hs__cpu_prog_mask __attribute__((tls_model("initial-exec")));
int (*hs__cpu_real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				   void *);

static struct cpu_thread *claim(void)
{
	struct cpu_thread *c;

	for (c = atomic_load(&hs__cpu_registry); c; c = c->next) {
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
	c->next = atomic_load(&hs__cpu_registry);
	while (!atomic_compare_exchange_weak(&hs__cpu_registry, &c->next, c))
		;
	return c;
}

/* Register the calling thread (guard set by the caller). */
void hs__cpu_thread_begin(void)
{
	struct hs_thread *t;
	struct cpu_thread *c;
	int e = errno;

	if (hs__cpu_self || !atomic_load(&hs__cpu_sampling))
		return;
	t = hs_thread_get(); /* its THREAD_START record and name */
	c = claim();
	if (!c)
		goto out;
	c->stack_lo = t ? t->stack_lo : 0;
	c->stack_hi = t ? t->stack_hi : 0; /* unknown: every walk by libunwind */
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
	if (hs__cpu_key_ok)
		pthread_setspecific(hs__cpu_exit_key, c);
	hs__cpu_self = c;
	atomic_store(&c->ready, 1);
	if (hs_cfg.cpu_hz) {
		pthread_mutex_lock(&hs__cpu_reg_lock);
		if (atomic_load(&hs__cpu_signo) && atomic_load(&hs__cpu_sampling))
			hs__cpu_set_timer(c, atomic_load(&hs__cpu_signo));
		pthread_mutex_unlock(&hs__cpu_reg_lock);
	}
out:
	errno = e;
}

void hs__cpu_thread_end(void *arg)
{
	struct cpu_thread *c = arg;

	atomic_store(&c->ready, 0);
	pthread_mutex_lock(&hs__cpu_reg_lock);
	hs__cpu_drop_timer(c);
	pthread_mutex_unlock(&hs__cpu_reg_lock);
	hs__cpu_self = NULL;
	atomic_store(&c->state, HS_T_EXITED);
}

struct start {
	void *(*fn)(void *);
	void *arg;
	sigset_t mask;		 /* the creator's prog_mask (its mask is inherited) */
	struct hs_thread *state; /* promised to the thread (thread.c), or NULL */
};

static void *trampoline(void *p)
{
	struct start s = *(struct start *)p;

	hs_real.free(p);
	hs__cpu_prog_mask = s.mask;
	hs_tls.guard = 1;
	if (s.state)
		hs_thread_adopt(s.state);
	hs__cpu_thread_begin();
	hs_tls.guard = 0;
	return s.fn(s.arg);
}

/*
 * Threads the program creates go through the trampoline above while the
 * collector traces: they are sampled from their first instruction, and
 * the state a new thread records its events in is mapped here, before
 * its stack (hs_thread_promise()), so that when address space runs out
 * it is the creation that fails, not the thread's events. Threads created
 * while the guard is set (the collector's own writer and sampler) are
 * not.
 */
HS_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	struct start *s;
	int r;

	if (!hs__cpu_real_pthread_create) {
		int g = hs_tls.guard;

		hs_tls.guard = 1;
		hs__cpu_real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
		hs_tls.guard = g;
		if (!hs__cpu_real_pthread_create)
			return EAGAIN;
	}
	hs_resolve_real();
	if (!atomic_load(&hs_on) || hs_tls.guard || !hs_real.malloc)
		return hs__cpu_real_pthread_create(th, attr, fn, arg);
	s = hs_real.malloc(sizeof(*s));
	if (!s)
		return hs__cpu_real_pthread_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->mask = hs__cpu_prog_mask;
	s->state = hs_thread_promise();
	r = hs__cpu_real_pthread_create(th, attr, trampoline, s);
	if (r) {
		if (s->state)
			hs_thread_unpromise(s->state);
		hs_real.free(s);
	}
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
	int s = atomic_load(&hs__cpu_signo);

	if (!set || !s || hs_tls.guard || !sigismember(set, s))
		return set;
	*copy = *set;
	sigdelset(copy, s);
	return copy;
}

#define REAL(name)                                                                       \
	static __typeof__(name) *real_##name;                                            \
	if (!real_##name) {                                                              \
		int g_ = hs_tls.guard;                                                   \
		hs_tls.guard = 1;                                                        \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);               \
		hs_tls.guard = g_;                                                       \
		if (!real_##name) {                                                      \
			errno = ENOSYS;                                                  \
			return -1;                                                       \
		}                                                                        \
	}

/* What the program asked for, into prog_mask. */
static void note_mask(int how, const sigset_t *set)
{
	sigset_t keep;

	if (!set || hs_tls.guard)
		return;
	if (how == SIG_SETMASK) {
		hs__cpu_prog_mask = *set;
	} else if (how == SIG_BLOCK) {
		sigorset(&hs__cpu_prog_mask, &hs__cpu_prog_mask, set);
	} else if (how == SIG_UNBLOCK) {
		/* keep = prog_mask without set's members */
		sigfillset(&keep);
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(set, sig) == 1)
				sigdelset(&keep, sig);
		sigandset(&hs__cpu_prog_mask, &hs__cpu_prog_mask, &keep);
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
	return real_pthread_sigmask(how, how == SIG_UNBLOCK ? set : strip(set, &copy),
				    old);
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

HS_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info,
			   const struct timespec *ts)
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
