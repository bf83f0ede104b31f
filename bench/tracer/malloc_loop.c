/*
 * malloc_loop - a malloc-bound loop: THREADS threads each free and
 * allocate ITERATIONS blocks of 16..271 bytes, keeping 64 live.
 *
 *   malloc_loop THREADS ITERATIONS
 *
 * Each iteration is one free and one malloc: 2 events per iteration.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long iterations = 1000000;

static void *work(void *arg)
{
	void *keep[64] = { 0 };
	long i;

	(void)arg;
	for (i = 0; i < iterations; i++) {
		free(keep[i & 63]);
		keep[i & 63] = malloc(16 + (size_t)(i & 255));
	}
	for (i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1, i;
	pthread_t th[64];

	if (argc > 2)
		iterations = atol(argv[2]);
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "usage: malloc_loop THREADS ITERATIONS\n");
		return 2;
	}
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, work, NULL);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
