/*
 * workers - a fixed pool of threads over one FIFO queue (see workers.h).
 * @lock covers the queue, the counters and @stopping; @more wakes a
 * worker when a job comes or the pool stops.
 */
#include "server/workers.h"
#include "common/alloc.h"
#include <errno.h>
#include <pthread.h>
#include <string.h>

#define MAX_WORKERS 64

struct hs_workers {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct hs_job *head, *tail; /* queued, oldest first */
	unsigned queued, running;
	int stopping;
	pthread_t thread[MAX_WORKERS];
	unsigned nr_threads;
};

static void *worker(void *arg)
{
	struct hs_workers *w = arg;
	struct hs_job *j;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->more, &w->lock);
		if (w->stopping)
			break;
		j = w->head;
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		w->queued--;
		w->running++;
		pthread_mutex_unlock(&w->lock);
		j->next = NULL;
		j->run(j); /* @j is the caller's again from here */
		pthread_mutex_lock(&w->lock);
		w->running--;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void free_pool(struct hs_workers *w)
{
	pthread_cond_destroy(&w->more);
	pthread_mutex_destroy(&w->lock);
	hs_free(w);
}

int hs_workers_start(struct hs_workers **out, unsigned n)
{
	struct hs_workers *w;
	int err = 0;

	*out = NULL;
	if (!n || n > MAX_WORKERS)
		return -EINVAL;
	w = hs_calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->more, NULL);
	while (w->nr_threads < n && !err) {
		err = pthread_create(&w->thread[w->nr_threads], NULL, worker, w);
		if (!err)
			w->nr_threads++;
	}
	if (err) {
		hs_workers_stop(w);
		return -err;
	}
	*out = w;
	return 0;
}

void hs_workers_submit(struct hs_workers *w, struct hs_job *j)
{
	HS_BUG_ON(!j->run);
	j->next = NULL;
	pthread_mutex_lock(&w->lock);
	HS_BUG_ON(w->stopping);
	*(w->tail ? &w->tail->next : &w->head) = j;
	w->tail = j;
	w->queued++;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
}

void hs_workers_load(struct hs_workers *w, unsigned *queued, unsigned *running)
{
	pthread_mutex_lock(&w->lock);
	*queued = w->queued;
	*running = w->running;
	pthread_mutex_unlock(&w->lock);
}

void hs_workers_stop(struct hs_workers *w)
{
	struct hs_job *j, *next;
	unsigned i;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	j = w->head;
	w->head = w->tail = NULL;
	w->queued = 0;
	pthread_cond_broadcast(&w->more);
	pthread_mutex_unlock(&w->lock);
	for (; j; j = next) {
		next = j->next;
		j->next = NULL;
		if (j->drop)
			j->drop(j);
	}
	/* a running job finishes first: its worker sees @stopping after it */
	for (i = 0; i < w->nr_threads; i++)
		pthread_join(w->thread[i], NULL);
	HS_BUG_ON(w->running);
	free_pool(w);
}
