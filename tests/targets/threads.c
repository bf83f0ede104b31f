/*
 * threads - four named threads, each making a known number of allocations
 * of known sizes at its own call site; the main thread makes its own.
 *   threads [N]   N allocations per thread (default 1000)
 */
#include <pthread.h>
#include <stdlib.h>
#include "target.h"

static void *volatile sink;
static long per_thread = 1000;

SITE void *site_worker(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_main(size_t n) { void *p = malloc(n); sink = p; return p; }

SITE void *worker(void *arg)
{
	long id = (long)arg, i;
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", id);
	pthread_setname_np(pthread_self(), name);
	for (i = 0; i < per_thread; i++)
		free(site_worker((size_t)(16 * (id + 1))));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	long i;

	if (argc > 1)
		per_thread = atol(argv[1]);
	SYM(main);
	SYM(worker);
	SYM(site_worker);
	SYM(site_main);
	fflush(stdout);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (i = 0; i < 7; i++)
		free(site_main(5));
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 4; i++) {
		printf("expect alloc malloc %ld %ld worker;site_worker\n", 16 * (i + 1), per_thread);
		printf("expect free malloc %ld %ld worker;site_worker\n", 16 * (i + 1), per_thread);
	}
	printf("expect alloc malloc 5 7 main;site_main\n");
	printf("expect free malloc 5 7 main;site_main\n");
	return 0;
}
