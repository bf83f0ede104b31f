/*
 * rand_loop - a malloc-bound loop with random sizes and a random free
 * order, the workload of issue 14: THREADS threads each keep LIVE blocks
 * and ITERATIONS times free a block chosen at random and allocate one of
 * 16..527 bytes in its place.
 *
 *   rand_loop THREADS ITERATIONS [LIVE]     (LIVE=4096)
 *
 * Each iteration is one free and one malloc: 2 events per iteration, plus
 * LIVE allocations and frees around the loop. The random numbers come
 * from a xorshift generator seeded per thread, so runs repeat exactly.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static long iterations = 1000000;
static size_t live = 4096;

static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static void *work(void *arg)
{
	uint64_t state = 0x9e3779b97f4a7c15ull + (uint64_t)(uintptr_t)arg;
	void **keep = calloc(live, sizeof(*keep));
	long i;
	size_t k;

	if (!keep)
		return NULL;
	for (k = 0; k < live; k++)
		keep[k] = malloc(16 + next_random(&state) % 512);
	for (i = 0; i < iterations; i++) {
		uint64_t r = next_random(&state);
		size_t slot = (size_t)(r % live);

		free(keep[slot]);
		keep[slot] = malloc(16 + (size_t)((r >> 32) % 512));
	}
	for (k = 0; k < live; k++)
		free(keep[k]);
	free(keep);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1, i;
	pthread_t th[64];

	if (argc > 2)
		iterations = atol(argv[2]);
	if (argc > 3)
		live = (size_t)atol(argv[3]);
	if (threads < 1 || threads > 64 || iterations < 0 || !live) {
		fprintf(stderr, "usage: rand_loop THREADS ITERATIONS [LIVE]\n");
		return 2;
	}
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, work, (void *)(intptr_t)(i + 1));
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
