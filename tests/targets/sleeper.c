/*
 * sleeper - a program that waits in the system calls a signal would cut
 * short (nanosleep, poll, select, epoll_wait, sigtimedwait: they return
 * EINTR after a handler ran, SA_RESTART or not), for the wall sampler
 * (tests/integration/t7101-run-wall.bats), which must not signal blocked
 * threads.
 *
 *   sleeper waits      each call once, main thread (thread "other" sleeps
 *                      in usleep() meanwhile); then 100 rounds of 200 us
 *                      of CPU and usleep(3 ms). Prints "NAME RET ERRNO MS"
 *                      for each call (MS: how long it took; ERRNO 0 when
 *                      it returned 0), "other RET ERRNO MS" and "rounds
 *                      EINTR MS" (how many usleeps returned EINTR)
 *   sleeper idle MS    sleeps MS ms; prints "idle CPU_MS", the CPU time of
 *                      the whole process
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define FN __attribute__((noinline, noclone, used))

static double ms_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void said(const char *name, long ret, int err, double t0)
{
	printf("%s %ld %d %.1f\n", name, ret, ret < 0 ? err : 0,
	       ms_of(CLOCK_MONOTONIC) - t0);
}

static void *other_main(void *arg)
{
	double t0 = ms_of(CLOCK_MONOTONIC);
	int r;

	(void)arg;
	r = usleep(300000);
	said("other", r, errno, t0);
	return NULL;
}

/* 100 rounds of 200 us of CPU and a 3 ms sleep: how many sleeps were cut */
FN int rounds(void)
{
	volatile unsigned long sink = 0;
	int i, cut = 0;

	for (i = 0; i < 100; i++) {
		double end = ms_of(CLOCK_THREAD_CPUTIME_ID) + 0.2;

		while (ms_of(CLOCK_THREAD_CPUTIME_ID) < end)
			sink++;
		if (usleep(3000) && errno == EINTR)
			cut++;
	}
	return cut;
}

static int waits(void)
{
	struct timespec ts = { 0, 200000000 };
	struct timeval tv = { 0, 200000 };
	struct epoll_event ev;
	pthread_t th;
	sigset_t set;
	double t0;
	long r;
	int ep;

	if (pthread_create(&th, NULL, other_main, NULL))
		return 1;
	pthread_setname_np(th, "other");
	t0 = ms_of(CLOCK_MONOTONIC);
	r = sleep(1);
	said("sleep", r, errno, t0);
	t0 = ms_of(CLOCK_MONOTONIC);
	r = usleep(200000);
	said("usleep", r, errno, t0);
	t0 = ms_of(CLOCK_MONOTONIC);
	r = nanosleep(&ts, NULL);
	said("nanosleep", r, errno, t0);
	t0 = ms_of(CLOCK_MONOTONIC);
	r = poll(NULL, 0, 200);
	said("poll", r, errno, t0);
	t0 = ms_of(CLOCK_MONOTONIC);
	r = select(0, NULL, NULL, NULL, &tv);
	said("select", r, errno, t0);
	ep = epoll_create1(0);
	t0 = ms_of(CLOCK_MONOTONIC);
	r = epoll_wait(ep, &ev, 1, 200);
	said("epoll_wait", r, errno, t0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	t0 = ms_of(CLOCK_MONOTONIC);
	r = sigtimedwait(&set, NULL, &ts);
	/* a timeout is EAGAIN */
	said("sigtimedwait", r < 0 && errno == EAGAIN ? 0 : r, errno, t0);
	pthread_join(th, NULL);
	t0 = ms_of(CLOCK_MONOTONIC);
	r = rounds();
	printf("rounds %ld %.1f\n", r, ms_of(CLOCK_MONOTONIC) - t0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "waits"))
		return waits();
	if (argc == 3 && !strcmp(argv[1], "idle")) {
		long ms = atol(argv[2]);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

		while (nanosleep(&ts, &ts))
			;
		printf("idle %.1f\n", ms_of(CLOCK_PROCESS_CPUTIME_ID));
		return 0;
	}
	fprintf(stderr, "usage: sleeper waits | sleeper idle MS\n");
	return 2;
}
