/*
 * spinner - CPU-bound programs with known behaviour, for the CPU and
 * wall-clock samplers (tests/integration/t71*-run-cpu*.bats).
 *
 *   spinner share MS   the main thread spends 75% of its work in hot_work()
 *                      and 25% in cold_work() (the same loop, 3 times as
 *                      long), for MS ms of its CPU time
 *   spinner rounds N   the same work as share, a fixed amount: N rounds of
 *                      hot_work() and cold_work() (for benchmarks)
 *   spinner late MS    the main thread spins about 30 ms, then starts
 *                      thread "late", which spins MS ms of its own CPU
 *                      time in late_spin(), and joins it
 *   spinner prof MS    the program profiles itself: setitimer(ITIMER_PROF)
 *                      every 20 ms with a SIGPROF handler that counts, and
 *                      spins until the process used MS ms of CPU; prints
 *                      "prof SIGNALS CPU_MS"
 *   spinner rtsig MS [HOW]
 *                      the program takes SIGRTMAX for itself: it prints what
 *                      sigaction() said the disposition was ("before
 *                      default" when SIG_DFL), installs a handler with HOW
 *                      (sigaction, the default, or signal, bsd_signal,
 *                      sysv_signal, sigset), then spins MS ms of CPU raising
 *                      SIGRTMAX every ms of CPU in rt_spin(); prints "rtsig
 *                      RECEIVED SENT"
 *   spinner rtall MS   the same with a handler on every real-time signal
 *   spinner raise MS   spins MS ms of CPU, then raise(SIGRTMAX) with
 *                      SIGRTMAX left at SIG_DFL: the process dies of it
 *                      (prints "survived" if not)
 *   spinner pending MS thread "masked" blocks every signal with the raw
 *                      system call (so that signals sent to it wait) and
 *                      spins MS ms of CPU; then the main thread installs a
 *                      handler for SIGRTMAX and the masked thread unblocks;
 *                      prints "pending RECEIVED" (what reached the handler:
 *                      nothing, the program sent none)
 *   spinner stray MS   the main thread blocks every signal (pthread_sigmask),
 *                      installs a handler for SIGRTMAX, spins MS ms of CPU
 *                      and sends itself every other real-time signal, which
 *                      wait as it blocks them; prints "stray RECEIVED"
 *   spinner sys MS     user_part() and sys_part() take turns, 3 ms of CPU
 *                      each, for MS ms: user_part() computes, sys_part()
 *                      makes system calls (getppid); prints "sys USER_MS
 *                      SYS_MS", the CPU time each took
 *   spinner pinned MS  the process is pinned to one CPU; the main thread
 *                      spins MS ms of CPU in pinned_spin() while thread
 *                      "rival" spins MS ms in rival_spin(): each waits for
 *                      the CPU about as long as it runs
 *
 *   spinner sigwait MS the main thread blocks every signal and waits for
 *                      them all in sigwait(); thread "masked" (every
 *                      signal blocked too) spins MS ms of CPU in
 *                      masked_spin(), then sends SIGUSR1 to the main
 *                      thread, which prints "got SIGNAL" for the first
 *                      signal sigwait() gave it
 *
 *   spinner fork MS    forks; the child spins MS ms of CPU in child_spin()
 *                      and exits, the parent waits for it
 *
 * Spinning is measured in CPU time (CLOCK_THREAD_CPUTIME_ID, or the
 * process's for prof), so a loaded machine stretches the wall time only.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#define FN __attribute__((noinline, noclone, used))

static volatile unsigned long sink;
static volatile sig_atomic_t prof_count, rt_count;

static double cpu_ms(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Spin until clock @c advanced by @ms milliseconds. */
FN void spin_cpu(clockid_t c, double ms)
{
	double end = cpu_ms(c) + ms;
	unsigned long i;

	while (cpu_ms(c) < end)
		for (i = 0; i < 1000; i++)
			sink = sink * 6364136223846793005ul + 1;
}

static long arg_ms;

FN void work(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink = sink * 6364136223846793005ul + 1442695040888963407ul;
}

FN void hot_work(void)
{
	work(300000);
}

FN void cold_work(void)
{
	work(100000);
}

FN void late_spin(void)
{
	spin_cpu(CLOCK_THREAD_CPUTIME_ID, (double)arg_ms);
}

static void *late_main(void *arg)
{
	(void)arg;
	late_spin();
	return NULL;
}

static pthread_t main_thread;

FN void masked_spin(void)
{
	spin_cpu(CLOCK_THREAD_CPUTIME_ID, (double)arg_ms);
}

static void *masked_main(void *arg)
{
	(void)arg;
	masked_spin();
	pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

FN void child_spin(void)
{
	spin_cpu(CLOCK_THREAD_CPUTIME_ID, (double)arg_ms);
}

static void on_prof(int sig)
{
	(void)sig;
	prof_count++;
}

static void on_rt(int sig)
{
	(void)sig;
	rt_count++;
}

/* SysV handlers are reset when they run: the handler installs itself again. */
static void on_rt_sysv(int sig)
{
	(void)sig;
	rt_count++;
	sysv_signal(SIGRTMAX, on_rt_sysv);
}

void (*bsd_signal(int sig, void (*handler)(int)))(int);	/* not in <signal.h> */

/* Install on_rt for signal @sig with @how; 0 or -1. */
static int take_signal(int sig, const char *how)
{
	struct sigaction sa;

	if (!strcmp(how, "signal"))
		return signal(sig, on_rt) == SIG_ERR ? -1 : 0;
	if (!strcmp(how, "bsd_signal"))
		return bsd_signal(sig, on_rt) == SIG_ERR ? -1 : 0;
	if (!strcmp(how, "sysv_signal"))
		return sysv_signal(sig, on_rt_sysv) == SIG_ERR ? -1 : 0;
	if (!strcmp(how, "sigset")) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
		return sigset(sig, on_rt) == SIG_ERR ? -1 : 0;
#pragma GCC diagnostic pop
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rt;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

FN void user_part(double ms)
{
	spin_cpu(CLOCK_THREAD_CPUTIME_ID, ms);
}

FN void sys_part(double ms)
{
	double end = cpu_ms(CLOCK_THREAD_CPUTIME_ID) + ms;
	int i;

	while (cpu_ms(CLOCK_THREAD_CPUTIME_ID) < end)
		for (i = 0; i < 20; i++)
			syscall(SYS_getppid);
}

FN void pinned_spin(void)
{
	spin_cpu(CLOCK_THREAD_CPUTIME_ID, (double)arg_ms);
}

FN void rival_spin(void)
{
	spin_cpu(CLOCK_THREAD_CPUTIME_ID, (double)arg_ms);
}

static void *rival_main(void *arg)
{
	(void)arg;
	rival_spin();
	return NULL;
}

static atomic_int spun, installed;

FN void pending_spin(void)
{
	spin_cpu(CLOCK_THREAD_CPUTIME_ID, (double)arg_ms);
}

static void *pending_main(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	/* the raw call: the collector does not see this mask */
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, _NSIG / 8);
	pending_spin();
	atomic_store(&spun, 1);
	while (!atomic_load(&installed))
		;
	sigemptyset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, _NSIG / 8);
	return NULL;
}

FN void rt_spin(long ms, int *sent)
{
	long i;

	for (i = 0; i < ms; i++) {
		spin_cpu(CLOCK_THREAD_CPUTIME_ID, 1);
		raise(SIGRTMAX);
		(*sent)++;
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && !strcmp(argv[1], "rtsig"))) {
		fprintf(stderr, "usage: spinner share|rounds|late|prof|rtsig|rtall|raise|pending|stray|"
			"sys|pinned|sigwait|fork MS\n");
		return 2;
	}
	arg_ms = atol(argv[2]);
	if (!strcmp(argv[1], "share")) {
		double end = cpu_ms(CLOCK_THREAD_CPUTIME_ID) + (double)arg_ms;

		while (cpu_ms(CLOCK_THREAD_CPUTIME_ID) < end) {
			hot_work();
			cold_work();
		}
		return 0;
	}
	if (!strcmp(argv[1], "sigwait")) {
		sigset_t all;
		pthread_t th;
		int sig = 0;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
		main_thread = pthread_self();
		if (pthread_create(&th, NULL, masked_main, NULL))
			return 1;
		pthread_setname_np(th, "masked");
		if (sigwait(&all, &sig))
			return 1;
		printf("got %d\n", sig);
		pthread_join(th, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "fork")) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return 1;
		if (pid == 0) {
			child_spin();
			exit(0);
		}
		waitpid(pid, &st, 0);
		return 0;
	}
	if (!strcmp(argv[1], "rounds")) {
		for (; arg_ms > 0; arg_ms--) {
			hot_work();
			cold_work();
		}
		return 0;
	}
	if (!strcmp(argv[1], "late")) {
		pthread_t th;

		spin_cpu(CLOCK_THREAD_CPUTIME_ID, 30);
		if (pthread_create(&th, NULL, late_main, NULL))
			return 1;
		pthread_setname_np(th, "late");
		pthread_join(th, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "prof")) {
		struct sigaction sa;
		struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
		double t0;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_prof;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &it, NULL))
			return 1;
		t0 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
		spin_cpu(CLOCK_PROCESS_CPUTIME_ID, (double)arg_ms);
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_PROF, &it, NULL);
		printf("prof %d %.0f\n", (int)prof_count, cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - t0);
		return 0;
	}
	if (!strcmp(argv[1], "rtsig") || !strcmp(argv[1], "rtall")) {
		struct sigaction old;
		int sent = 0, s;

		if (sigaction(SIGRTMAX, NULL, &old))
			return 1;
		printf("before %s\n", !(old.sa_flags & SA_SIGINFO) &&
		       old.sa_handler == SIG_DFL ? "default" : "other");
		s = !strcmp(argv[1], "rtall") ? SIGRTMIN : SIGRTMAX;
		for (; s <= SIGRTMAX; s++)
			if (take_signal(s, argc == 4 ? argv[3] : "sigaction"))
				return 1;
		rt_spin(arg_ms, &sent);
		printf("rtsig %d %d\n", (int)rt_count, sent);
		return 0;
	}
	if (!strcmp(argv[1], "raise")) {
		spin_cpu(CLOCK_THREAD_CPUTIME_ID, (double)arg_ms);
		raise(SIGRTMAX);
		printf("survived\n");
		return 0;
	}
	if (!strcmp(argv[1], "pending")) {
		pthread_t th;

		if (pthread_create(&th, NULL, pending_main, NULL))
			return 1;
		pthread_setname_np(th, "masked");
		while (!atomic_load(&spun))
			usleep(1000);
		if (take_signal(SIGRTMAX, "sigaction"))
			return 1;
		atomic_store(&installed, 1);
		pthread_join(th, NULL);
		printf("pending %d\n", (int)rt_count);
		return 0;
	}
	if (!strcmp(argv[1], "stray")) {
		sigset_t all;
		int s;

		sigfillset(&all);
		if (pthread_sigmask(SIG_BLOCK, &all, NULL) || take_signal(SIGRTMAX, "sigaction"))
			return 1;
		spin_cpu(CLOCK_THREAD_CPUTIME_ID, (double)arg_ms);
		for (s = SIGRTMIN; s < SIGRTMAX; s++)
			if (pthread_kill(pthread_self(), s))
				return 1;
		printf("stray %d\n", (int)rt_count);
		return 0;
	}
	if (!strcmp(argv[1], "sys")) {
		double u = 0, k = 0, t;
		long i;

		for (i = 0; i < arg_ms / 6; i++) {
			t = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
			user_part(3);
			u += cpu_ms(CLOCK_THREAD_CPUTIME_ID) - t;
			t = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
			sys_part(3);
			k += cpu_ms(CLOCK_THREAD_CPUTIME_ID) - t;
		}
		printf("sys %.1f %.1f\n", u, k);
		return 0;
	}
	if (!strcmp(argv[1], "pinned")) {
		cpu_set_t one;
		pthread_t th;
		int cpu = sched_getcpu();

		CPU_ZERO(&one);
		CPU_SET(cpu < 0 ? 0 : cpu, &one);
		/* threads created from now on inherit it */
		if (sched_setaffinity(0, sizeof(one), &one))
			return 1;
		if (pthread_create(&th, NULL, rival_main, NULL))
			return 1;
		pthread_setname_np(th, "rival");
		pinned_spin();
		pthread_join(th, NULL);
		return 0;
	}
	fprintf(stderr, "usage: spinner share|rounds|late|prof|rtsig|rtall|raise|pending|stray|sys|"
		"pinned|sigwait|fork MS\n");
	return 2;
}
