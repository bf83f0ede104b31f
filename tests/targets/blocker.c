/*
 * blocker - threads that block for a known time, for the thread-time view
 * (tests/integration/t7000-thread-time-perf.bats) and the wall source
 * (t7101-run-wall.bats).
 *
 *   blocker pipe MS    thread "reader" blocks in read() on a pipe while
 *                      thread "writer" spins for MS ms, then writes one
 *                      byte (waking the reader)
 *   blocker mutex MS   thread "holder" locks a mutex; thread "waiter"
 *                      blocks in pthread_mutex_lock() while the holder
 *                      spins for MS ms, then unlocks it
 *   blocker seq MS     thread "seq" blocks in read() on a pipe in
 *                      seq_read(), then at once in pthread_mutex_lock() in
 *                      seq_lock(); thread "waker" holds the mutex, sleeps
 *                      MS ms, writes the byte, sleeps MS ms more and
 *                      unlocks (two waits back to back, each about MS ms,
 *                      with no CPU time between them)
 *   blocker stale MS   the main thread, in stale_main(), calls leave_frames()
 *                      20 deep, then blocks in read() on a pipe in
 *                      stale_reader(), whose uninitialised buffer holds
 *                      the frames leave_frames() left (saved frame pointers
 *                      and return addresses that look like its own);
 *                      thread "writer" sleeps MS ms and writes the byte
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

/* Sleep @ms milliseconds of wall-clock time. */
FN void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
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

FN void seq_read(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		abort();
}

FN void seq_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

FN void *seq_waiter(void *arg)
{
	double t0, t1, t2;

	(void)arg;
	pthread_setname_np(pthread_self(), "seq");
	while (!atomic_load(&locked))
		;
	t0 = now_ms();
	atomic_store(&about_to_block, 1);
	seq_read();
	t1 = now_ms();
	seq_lock();
	t2 = now_ms();
	printf("blocked seq_read %.3f\nblocked seq_lock %.3f\n", t1 - t0, t2 - t1);
	return NULL;
}

FN void *seq_waker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "waker");
	pthread_mutex_lock(&lock);
	atomic_store(&locked, 1);
	wait_for_blocker();
	sleep_ms(hold_ms);
	if (write(fds[1], "x", 1) != 1)
		abort();
	sleep_ms(hold_ms);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static volatile int sink;

FN void leave_frames(int n)
{
	if (n > 0)
		leave_frames(n - 1);
	sink++;
}

FN void stale_reader(void)
{
	char buf[4096];		/* not initialised: the old frames stay */

	if (read(fds[0], buf, 1) != 1)
		abort();
}

FN void stale_main(void)
{
	double t0;

	leave_frames(20);
	t0 = now_ms();
	stale_reader();
	printf("blocked stale_reader %.3f\n", now_ms() - t0);
}

FN void *stale_writer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	sleep_ms(hold_ms);
	if (write(fds[1], "x", 1) != 1)
		abort();
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*a)(void *), *(*b)(void *);
	pthread_t ta, tb;

	if (argc != 3 || (strcmp(argv[1], "pipe") && strcmp(argv[1], "mutex") &&
			  strcmp(argv[1], "seq") && strcmp(argv[1], "stale"))) {
		fprintf(stderr, "usage: blocker pipe|mutex|seq|stale MS\n");
		return 2;
	}
	hold_ms = atol(argv[2]);
	if (strcmp(argv[1], "mutex") && pipe(fds))
		return 1;
	if (!strcmp(argv[1], "stale")) {
		if (pthread_create(&ta, NULL, stale_writer, NULL))
			return 1;
		stale_main();
		pthread_join(ta, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "pipe")) {
		a = pipe_reader;
		b = pipe_writer;
	} else if (!strcmp(argv[1], "seq")) {
		a = seq_waker;
		b = seq_waiter;
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
