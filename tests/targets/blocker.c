/*
 * blocker - threads that block for a known time, for the thread-time view
 * (tests/integration/t7000-thread-time-perf.bats).
 *
 *   blocker pipe MS    thread "reader" blocks in read() on a pipe while
 *                      thread "writer" spins for MS ms, then writes one
 *                      byte (waking the reader)
 *   blocker mutex MS   thread "holder" locks a mutex; thread "waiter"
 *                      blocks in pthread_mutex_lock() while the holder
 *                      spins for MS ms, then unlocks it
 *
 * The blocking thread announces that it is about to block, and the other
 * thread starts its MS ms only then, so the blocked time is MS ms plus the
 * time it takes to be woken (and minus the few microseconds between the
 * announcement and the block). The program prints "blocked NAME MS" with
 * the time the blocking call took, measured around it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FN __attribute__((noinline, noclone, used))

static long hold_ms;
static atomic_int about_to_block;
static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int locked;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Burn CPU for @ms milliseconds of wall-clock time. */
FN void spin_ms(long ms)
{
	double end = now_ms() + (double)ms;
	volatile unsigned long x = 0;

	while (now_ms() < end)
		x++;
}

/* Wait (spinning) until the other thread says it is about to block. */
FN void wait_for_blocker(void)
{
	while (!atomic_load(&about_to_block))
		;
}

FN void *pipe_reader(void *arg)
{
	double t0;
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	t0 = now_ms();
	atomic_store(&about_to_block, 1);
	if (read(fds[0], &c, 1) != 1)
		abort();
	printf("blocked pipe_reader %.3f\n", now_ms() - t0);
	return NULL;
}

FN void *pipe_writer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	wait_for_blocker();
	spin_ms(hold_ms);
	if (write(fds[1], "x", 1) != 1)
		abort();
	return NULL;
}

FN void *mutex_waiter(void *arg)
{
	double t0;

	(void)arg;
	pthread_setname_np(pthread_self(), "waiter");
	while (!atomic_load(&locked))
		;
	t0 = now_ms();
	atomic_store(&about_to_block, 1);
	pthread_mutex_lock(&lock);
	printf("blocked mutex_waiter %.3f\n", now_ms() - t0);
	pthread_mutex_unlock(&lock);
	return NULL;
}

FN void *mutex_holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "holder");
	pthread_mutex_lock(&lock);
	atomic_store(&locked, 1);
	wait_for_blocker();
	spin_ms(hold_ms);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*a)(void *), *(*b)(void *);
	pthread_t ta, tb;

	if (argc != 3 || (strcmp(argv[1], "pipe") && strcmp(argv[1], "mutex"))) {
		fprintf(stderr, "usage: blocker pipe|mutex MS\n");
		return 2;
	}
	hold_ms = atol(argv[2]);
	if (!strcmp(argv[1], "pipe")) {
		if (pipe(fds))
			return 1;
		a = pipe_reader;
		b = pipe_writer;
	} else {
		a = mutex_holder;
		b = mutex_waiter;
	}
	if (pthread_create(&ta, NULL, a, NULL) || pthread_create(&tb, NULL, b, NULL))
		return 1;
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	return 0;
}
