/*
 * stress - THREADS threads each make COUNT malloc/free pairs of sizes
 * 1 + (i % 1000), one call site: stress [THREADS [COUNT [IDLE_MS]]]
 * (4, 1000000, 0), the threads started after IDLE_MS ms of sleep.
 * Prints the expected allocation count and bytes of each thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include "target.h"

static void *volatile sink;
static long count = 1000000;

SITE void *site_stress(size_t n) { void *p = malloc(n); sink = p; return p; }

SITE void *worker(void *arg)
{
	void *keep[32] = { 0 };
	long i;

	(void)arg;
	for (i = 0; i < count; i++) {
		free(keep[i & 31]);
		keep[i & 31] = site_stress((size_t)(1 + i % 1000));
	}
	for (i = 0; i < 32; i++)
		free(keep[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4, i;
	pthread_t th[64];
	unsigned long long bytes = 0;
	long k;

	if (argc > 2)
		count = atol(argv[2]);
	if (threads < 1 || threads > 64)
		return 2;
	if (argc > 3)
		usleep((useconds_t)atol(argv[3]) * 1000);
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	for (k = 0; k < count; k++)
		bytes += (unsigned long long)(1 + k % 1000);
	printf("per thread: allocs=%ld frees=%ld bytes=%llu\n", count, count, bytes);
	return 0;
}
