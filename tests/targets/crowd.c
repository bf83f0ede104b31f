/*
 * crowd - many threads alive at once, each making a known number of
 * allocations, for runs where address space is tight (t3012):
 *
 *   crowd THREADS PER_THREAD [fill]
 *
 * Each thread has a 64 KiB stack, so that the program's threads fit where
 * the collector's per-thread states may not. With "fill" (under ulimit
 * -v), the program first grows its heap for all the allocations to come
 * (one arena, kept) and runs one thread that makes one allocation; then,
 * before it creates each thread, it takes all the address space it can but
 * 128 KiB: room for such a stack and not for a collector's state. A thread
 * makes half its
 * allocations (1234 bytes each, kept), waits until every thread is
 * created, then makes the other half. The last line says how many
 * threads were created and how many of their allocations succeeded:
 *
 *   crowd THREADS_CREATED ALLOCATIONS
 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "target.h"

#define CROWD_SIZE 1234
#define CROWD_MAX 256

static long per_thread;
static atomic_int go;
static atomic_long made;
static void *volatile sink;

SITE void *site_crowd(void)
{
	void *p = malloc(CROWD_SIZE);

	sink = p;
	return p;
}

static void allocate(long n)
{
	for (long i = 0; i < n; i++)
		if (site_crowd())
			atomic_fetch_add(&made, 1);
}

SITE void *crowd_worker(void *arg)
{
	struct timespec ts = {0, 1000000};

	(void)arg;
	allocate(per_thread / 2);
	while (!atomic_load(&go))
		nanosleep(&ts, NULL);
	allocate(per_thread - per_thread / 2);
	return NULL;
}

/* A thread that takes the path the crowd will, so that the collector has
 * read the unwind tables it needs before there is no room for them. */
SITE void *warm_up(void *arg)
{
	(void)arg;
	allocate(1);
	return NULL;
}

/* Reservations of at least the gap's size, the latest last. */
static struct {
	void *at;
	size_t size;
} big[256];
static int nbig;

/* Reserve address space (never touched) until none is left. */
static void fill_all(size_t gap)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	size_t step;
	void *p;

	for (step = (size_t)1 << 30; step >= 4096; step /= 2)
		while ((p = mmap(NULL, step, PROT_NONE, flags, -1, 0)) != MAP_FAILED)
			if (step >= gap && nbig < 256) {
				big[nbig].at = p;
				big[nbig++].size = step;
			}
}

/* Reserve address space (never touched) until none is left but @gap bytes. */
static void fill(size_t gap)
{
	void *room;

	fill_all(gap);
	if (nbig) {
		nbig--;
		munmap(big[nbig].at, big[nbig].size);
	}
	room = mmap(NULL, gap, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	fill_all(gap);
	if (room != MAP_FAILED)
		munmap(room, gap);
}

int main(int argc, char **argv)
{
	pthread_t th[CROWD_MAX];
	pthread_attr_t attr;
	int want, n = 0, i;

	if (argc != 3 && (argc != 4 || strcmp(argv[3], "fill")))
		return 2;
	want = atoi(argv[1]);
	per_thread = atol(argv[2]);
	if (want < 1 || want > CROWD_MAX || per_thread < 0)
		return 2;
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 64 << 10))
		return 3;
	if (argc == 4) {
		mallopt(M_ARENA_MAX, 1);
		mallopt(M_MMAP_THRESHOLD, 32 << 20);
		mallopt(M_TRIM_THRESHOLD, 1 << 30);
		sink = malloc((size_t)want * (size_t)per_thread * (CROWD_SIZE + 64) + (1 << 20));
		free(sink);
		if (pthread_create(&th[0], &attr, warm_up, NULL) || pthread_join(th[0], NULL))
			return 3;
	}
	for (i = 0; i < want; i++) {
		if (argc == 4)
			fill(128 << 10);
		if (!pthread_create(&th[n], &attr, crowd_worker, NULL))
			n++;
	}
	atomic_store(&go, 1);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("crowd %d %ld\n", n, atomic_load(&made));
	return 0;
}
