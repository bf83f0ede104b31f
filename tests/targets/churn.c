/*
 * churn - rounds of short-lived threads, each allocating and freeing a
 * block of one size over and over: a new thread gets the blocks a
 * finished one freed, so several threads use one address within one
 * tick of the collector's clock and readers must put their events in
 * order.
 *   churn [ROUNDS [THREADS [PAIRS]]]   (default 50 rounds of 8 threads,
 *                                       100 allocations each)
 */
#include <pthread.h>
#include <stdlib.h>
#include "target.h"

static void *volatile sink;
static long pairs = 100;

SITE void *site_churn(size_t n) { void *p = malloc(n); sink = p; return p; }

SITE void *worker(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < pairs; i++)
		free(site_churn(32));
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 50;
	long threads = argc > 2 ? atol(argv[2]) : 8;
	pthread_t th[64];
	long r, i;

	if (argc > 3)
		pairs = atol(argv[3]);
	if (threads < 1 || threads > 64)
		return 2;
	SYM(main);
	SYM(worker);
	SYM(site_churn);
	fflush(stdout);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < threads; i++)
			if (pthread_create(&th[i], NULL, worker, NULL))
				return 1;
		for (i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
	}
	printf("expect alloc malloc 32 %ld worker;site_churn\n", rounds * threads * pairs);
	printf("expect free malloc 32 %ld worker;site_churn\n", rounds * threads * pairs);
	return 0;
}
