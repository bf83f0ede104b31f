/*
 * cpu - CPU and wall-clock stack sampling (heapscope run --cpu, --wall;
 * docs/cpu.md, docs/trace-format.md "CPU and wall-clock samples"): its
 * life cycle. cpu_internal.h has the map of the other cpu_*.c files.
 *
 * Every thread of the program gets a struct cpu_thread (cpu_threads.c).
 * With --cpu each thread has a clock of its own CPU time, kernel time
 * included (so that a system call's time is sampled on the return to its
 * caller, not carried by the next sample in user space), that sends the
 * sampling signal to that thread: a perf event (the task-clock software
 * event, which the kernel allows with kernel time at
 * kernel.perf_event_paranoid <= 1 or CAP_PERFMON) whose overflows signal
 * the thread through the file descriptor's owner (so the rate is what was
 * asked for), else a POSIX timer on the thread's CPU clock (which the
 * kernel runs at its tick, CONFIG_HZ, often 250 Hz: a lower rate, but
 * each sample still weighs the CPU time it stands for). The perf
 * descriptors are moved high (like the trace file's).
 *
 * The handler of the signal (cpu_handler.c) takes the samples; the
 * sampler thread (cpu_sampler.c, created with the guard set and every
 * signal blocked, like the writer) turns them into records, and with
 * --wall also ticks on CLOCK_MONOTONIC (cpu_wall.c).
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
 * A fork child stops sampling (timers and the sampler thread are not
 * inherited); hs_cpu_follow_child() starts it again in a child the
 * collector follows.
 */
#include "collector/cpu_internal.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

_Atomic(struct cpu_thread *) hs__cpu_registry;
_Atomic int hs__cpu_sampling;
_Atomic int hs__cpu_signo;
pthread_mutex_t hs__cpu_reg_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t hs__cpu_sig_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic unsigned hs__cpu_sig_epoch;
void *hs__cpu_sig_cookie, *hs__cpu_wall_cookie;
/*
 * What the program set for the sampling signal without taking it: SIG_DFL
 * or SIG_IGN (under reg_lock), which a signal the collector did not send
 * gets; a handler makes sampling move to another signal.
 */
static struct sigaction prog_act;
_Atomic int hs__cpu_prog_ign;
pthread_key_t hs__cpu_exit_key;
int hs__cpu_key_ok;
static pthread_t sampler;
static int sampler_ok;
_Atomic int hs__cpu_sampler_run;

/* --- timers and the signal ---------------------------------------------- */

_Atomic int hs__cpu_perf_ok = 1; /* 0 once perf_event_open was refused */

/* A task-clock perf event of thread @c that signals it with @sig. */
static int set_perf(struct cpu_thread *c, int sig, uint64_t period)
{
	struct perf_event_attr a;
	struct f_owner_ex owner = {F_OWNER_TID, c->tid};
	int fd;

	if (!atomic_load(&hs__cpu_perf_ok))
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
		if (errno == EACCES || errno == EPERM || errno == ENOSYS ||
		    errno == ENOENT)
			atomic_store(&hs__cpu_perf_ok, 0);
		return -1;
	}
	fd = hs_fd_move_high(fd);
	if (fd < 0)
		return -1;
	/* before the first signal can come; the handler uses it with
	 * @perf_fd, set after */
	atomic_store_explicit(&c->perf_origin, clock_ns(thread_clock(c->tid)),
			      memory_order_relaxed);
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		hs_fd_close(fd);
		return -1;
	}
	/* another thread re-arms the timers while the handler may run */
	atomic_store_explicit(&c->perf_fd, fd, memory_order_release);
	return 0;
}

/* Thread @c's CPU-time clock: a perf event, else a POSIX timer. */
int hs__cpu_set_timer(struct cpu_thread *c, int sig)
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
	sev.sigev_value.sival_ptr = hs__cpu_sig_cookie;
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

void hs__cpu_drop_timer(struct cpu_thread *c)
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

		if (s == avoid || (blocked >> (s - 1) & 1) ||
		    hs_real.sigaction(s, NULL, &old))
			continue;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			return s;
	}
	return 0;
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

	for (c = atomic_load(&hs__cpu_registry); c; c = c->next) {
		char path[64], buf[4096], *p;
		ssize_t n;
		int fd;

		if (atomic_load(&c->state) != HS_T_LIVE)
			continue;
		hs__cpu_task_file(path, c->tid, "status");
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
	sa.sa_sigaction = hs__cpu_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return hs_real.sigaction(s, &sa, NULL);
}

/* --- life cycle ----------------------------------------------------------- */

static struct cpu_thread *fork_self; /* the thread that forked, in a child */

/*
 * In a fork child: timers are not inherited and the sampler thread is
 * gone, so sampling stops; hs_cpu_follow_child() starts it again in a
 * child the collector follows.
 */
static void after_fork_child(void)
{
	struct cpu_thread *c, *me = hs__cpu_self;

	atomic_store(&hs__cpu_sampling, 0);
	for (c = atomic_load(&hs__cpu_registry); c; c = c->next) {
		if (c->perf_fd >= 0)
			hs_fd_close(c->perf_fd); /* the parent's threads' events */
		if (c->sys_fd >= 0)
			hs_fd_close(c->sys_fd); /* and their /proc files */
		if (atomic_load(&c->wall_fd) >= 0)
			hs_fd_close(atomic_load(&c->wall_fd));
		c->perf_fd = -1;
		c->sys_fd = -1;
		atomic_store(&c->wall_fd, -1);
		c->wall_timer = -1; /* timers are not inherited */
		c->timer = -1;
		c->open = 0;
		atomic_store(&c->tail, atomic_load(&c->head));
		atomic_store(&c->miss_tail, atomic_load(&c->miss_head));
		if (c != me) {
			atomic_store(&c->ready, 0);
			atomic_store(&c->state, HS_T_FREE);
		}
	}
	atomic_store(&hs__cpu_sampler_run, 0);
	sampler_ok = 0;
	hs__cpu_self = NULL;
	pthread_mutex_init(&hs__cpu_reg_lock, NULL);
	pthread_mutex_init(&hs__cpu_sig_lock, NULL);
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
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the guard is set: as is */
	atomic_store(&hs__cpu_sampler_run, 1);
	err = hs__cpu_real_pthread_create(&sampler, NULL, hs__cpu_sampler_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		sampler_ok = 1;
	return err;
}

void hs_cpu_follow_child(void)
{
	struct cpu_thread *me = fork_self;
	int g = hs_tls.guard;

	if (!me || !hs__cpu_real_pthread_create)
		return;
	fork_self = NULL;
	hs_tls.guard = 1;
	hs__cpu_sampler_reset();
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
	hs__cpu_self = me;
	atomic_store(&hs__cpu_sampling, 1);
	if (hs_cfg.cpu_hz && atomic_load(&hs__cpu_signo))
		hs__cpu_set_timer(me, atomic_load(&hs__cpu_signo));
	atomic_store(&me->ready, 1);
	if (start_sampler()) {
		atomic_store(&hs__cpu_sampling, 0);
		hs__cpu_drop_timer(me);
	}
	hs_tls.guard = g;
}

int hs_cpu_start(void)
{
	int s;

	if (!hs_cfg.cpu_hz && !hs_cfg.wall_hz)
		return 0;
	if (hs__cpu_sampler_alloc() || (hs_cfg.wall_hz && hs__cpu_wall_alloc()))
		return -1;
	/* not guessable by the program, never NULL */
	hs__cpu_sig_cookie = (void *)(((uintptr_t)&hs__cpu_sig_cookie ^
				       (uintptr_t)hs_now_ns() * 0x9E3779B97F4A7C15ull) |
				      1);
	hs__cpu_wall_cookie = (void *)((uintptr_t)hs__cpu_sig_cookie + 2);
	if (hs_cfg.cpu_timer)
		atomic_store(&hs__cpu_perf_ok, 0);
	prog_act.sa_handler = SIG_DFL;
	sigemptyset(&prog_act.sa_mask);
	if (!hs__cpu_real_pthread_create)
		hs__cpu_real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	s = free_signal(0, 0);
	if (!s || install(s) || !hs__cpu_real_pthread_create) {
		hs_msg("no free real-time signal; not sampling");
		return -1;
	}
	atomic_store(&hs__cpu_signo, s);
	if (!pthread_key_create(&hs__cpu_exit_key, hs__cpu_thread_end))
		hs__cpu_key_ok = 1;
	pthread_atfork(NULL, NULL, after_fork_child);
	atomic_store(&hs__cpu_sampling, 1);
	hs__cpu_thread_begin();
	if (start_sampler()) {
		hs_msg("cannot start the sampler thread; not sampling");
		atomic_store(&hs__cpu_sampling, 0);
		return -1;
	}
	return 0;
}

void hs_cpu_stop(void)
{
	struct cpu_thread *c;
	int was = atomic_exchange(&hs__cpu_sampling, 0);

	if (!was && !sampler_ok)
		return;
	pthread_mutex_lock(&hs__cpu_reg_lock);
	for (c = atomic_load(&hs__cpu_registry); c; c = c->next)
		if (atomic_load(&c->state) == HS_T_LIVE)
			hs__cpu_drop_timer(c);
	pthread_mutex_unlock(&hs__cpu_reg_lock);
	/* also after sampling stopped early: the sampler writes SAMPLING_END */
	if (sampler_ok) {
		atomic_store(&hs__cpu_sampler_run, 0);
		pthread_join(sampler, NULL);
		sampler_ok = 0;
	}
	if (hs_cfg.check_unwind)
		hs_msg(
		    "sample unwind check: %llu walks by rules, %llu by libunwind (no "
		    "rule yet at the leaf %llu, deeper %llu; rule not usable %llu; out "
		    "of the stack %llu; libunwind busy %llu); %llu compared, %llu differ",
		    (unsigned long long)atomic_load(&hs__cpu_n_fast),
		    (unsigned long long)atomic_load(&hs__cpu_n_slow),
		    (unsigned long long)atomic_load(&hs__cpu_n_miss_leaf),
		    (unsigned long long)atomic_load(&hs__cpu_n_miss_deep),
		    (unsigned long long)atomic_load(&hs__cpu_n_no_rule),
		    (unsigned long long)atomic_load(&hs__cpu_n_bounds),
		    (unsigned long long)atomic_load(&hs__cpu_n_unwinder_busy),
		    (unsigned long long)atomic_load(&hs__cpu_n_checked),
		    (unsigned long long)atomic_load(&hs__cpu_n_differ));
}

int hs_cpu_owns(int sig)
{
	return sig > 0 && sig == atomic_load(&hs__cpu_signo);
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

	pthread_mutex_lock(&hs__cpu_reg_lock);
	prev = prog_act;
	if (!act || act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN) {
		if (act) {
			prog_act = *act;
			atomic_store(&hs__cpu_prog_ign, act->sa_handler == SIG_IGN);
		}
		pthread_mutex_unlock(&hs__cpu_reg_lock);
		if (old)
			*old = prev;
		return 0;
	}
	s = free_signal(sig, blocked_somewhere());
	pthread_mutex_lock(&hs__cpu_sig_lock);
	/* the wall triggers signal with @sig: gone, made again on the next request */
	for (c = atomic_load(&hs__cpu_registry); c; c = c->next)
		hs__cpu_trigger_close(c);
	if (s && !install(s)) {
		atomic_store(&hs__cpu_signo, s);
		atomic_fetch_add(&hs__cpu_sig_epoch, 1);
		if (atomic_load(&hs__cpu_sampling) && hs_cfg.cpu_hz)
			for (c = atomic_load(&hs__cpu_registry); c; c = c->next)
				if (atomic_load(&c->state) == HS_T_LIVE) {
					hs__cpu_drop_timer(c);
					hs__cpu_set_timer(c, s);
				}
	} else {
		atomic_store(&hs__cpu_signo, 0);
		for (c = atomic_load(&hs__cpu_registry); c; c = c->next)
			hs__cpu_drop_timer(c);
		atomic_store(&hs__cpu_sampling, 0);
		atomic_store(&hs__cpu_sampler_run, 0);
		hs_msg("the program took the sampling signal %d and no other is free; "
		       "sampling stopped",
		       sig);
	}
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	hs_real.sigaction(sig, &ign, NULL);
	pthread_mutex_unlock(&hs__cpu_sig_lock);
	memset(&prog_act, 0, sizeof(prog_act));
	prog_act.sa_handler = SIG_DFL;
	sigemptyset(&prog_act.sa_mask);
	atomic_store(&hs__cpu_prog_ign, 0);
	pthread_mutex_unlock(&hs__cpu_reg_lock);
	if (hs_real.sigaction(sig, act, NULL))
		return -1;
	if (old)
		*old = prev;
	return 0;
}
