/*
 * test_workers - the server's worker pool (server/workers.c): jobs run in
 * the order they came, a job that blocks does not hold the others, and
 * stopping drops what has not started and waits for what has.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "server/workers.h"

/* A job that records when it ran, and may wait for a gate to open. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open;
	int order[16]; /* job ids in the order they ran */
	int nr_order, dropped;
};

struct test_job {
	struct hs_job job; /* first: the job's address is the struct's */
	struct gate *g;
	int id, blocks, ran;
};

static void job_run(struct hs_job *j)
{
	struct test_job *t = (struct test_job *)j;
	struct gate *g = t->g;

	pthread_mutex_lock(&g->lock);
	g->order[g->nr_order++] = t->id;
	pthread_cond_broadcast(&g->cond); /* it started */
	while (t->blocks && !g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	t->ran = 1;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

static void job_drop(struct hs_job *j)
{
	struct test_job *t = (struct test_job *)j;

	pthread_mutex_lock(&t->g->lock);
	t->g->dropped++;
	pthread_cond_broadcast(&t->g->cond);
	pthread_mutex_unlock(&t->g->lock);
}

static void gate_init(struct gate *g)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
}

static void gate_release(struct gate *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

static void job_init(struct test_job *t, struct gate *g, int id, int blocks)
{
	memset(t, 0, sizeof(*t));
	t->job.run = job_run;
	t->job.drop = job_drop;
	t->g = g;
	t->id = id;
	t->blocks = blocks;
}

/* Wait until job @t ran. */
static void wait_ran(struct gate *g, const struct test_job *t)
{
	pthread_mutex_lock(&g->lock);
	while (!t->ran)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void bad_sizes_are_refused(void **state)
{
	struct hs_workers *w = (void *)1;

	(void)state;
	assert_int_equal(hs_workers_start(&w, 0), -EINVAL);
	assert_null(w);
	assert_int_equal(hs_workers_start(&w, 65), -EINVAL);
	hs_workers_stop(NULL);
}

/* With one worker, jobs run one after another in the order they came. */
static void one_worker_keeps_the_order(void **state)
{
	struct hs_workers *w;
	struct test_job t[5];
	struct gate g;
	int i;

	(void)state;
	gate_init(&g);
	assert_int_equal(hs_workers_start(&w, 1), 0);
	for (i = 0; i < 5; i++) {
		job_init(&t[i], &g, i, 0);
		hs_workers_submit(w, &t[i].job);
	}
	wait_ran(&g, &t[4]);
	hs_workers_stop(w);
	assert_int_equal(g.nr_order, 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(g.order[i], i);
	assert_int_equal(g.dropped, 0);
	gate_release(&g);
}

/* A job that blocks holds one worker; a later job runs on another. */
static void a_slow_job_does_not_hold_a_fast_one(void **state)
{
	struct hs_workers *w;
	struct test_job slow, fast;
	unsigned queued, running;
	struct gate g;

	(void)state;
	gate_init(&g);
	assert_int_equal(hs_workers_start(&w, 2), 0);
	job_init(&slow, &g, 1, 1);
	job_init(&fast, &g, 2, 0);
	hs_workers_submit(w, &slow.job);
	hs_workers_submit(w, &fast.job);
	wait_ran(&g, &fast); /* hangs (and times out) if the slow one held it */
	hs_workers_load(w, &queued, &running);
	assert_int_equal(queued, 0);
	assert_true(running >= 1); /* the slow one, and maybe the fast one ending */
	assert_false(slow.ran);
	pthread_mutex_lock(&g.lock);
	g.open = 1;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
	hs_workers_stop(w);
	assert_true(slow.ran);
	gate_release(&g);
}

static void *stop_thread(void *arg)
{
	hs_workers_stop(arg);
	return NULL;
}

/* Stopping drops the queued jobs and waits for the running one. */
static void stop_drops_what_has_not_started(void **state)
{
	struct hs_workers *w;
	struct test_job busy, later[3];
	unsigned queued = 1, running;
	struct gate g;
	pthread_t stopper;
	int i;

	(void)state;
	gate_init(&g);
	assert_int_equal(hs_workers_start(&w, 1), 0);
	job_init(&busy, &g, 0, 1);
	hs_workers_submit(w, &busy.job);
	for (i = 0; i < 3; i++) {
		job_init(&later[i], &g, i + 1, 0);
		hs_workers_submit(w, &later[i].job);
	}
	pthread_mutex_lock(&g.lock);
	while (!g.nr_order)
		pthread_cond_wait(&g.cond, &g.lock);
	pthread_mutex_unlock(&g.lock);
	/* the busy job holds the only worker: stop cannot finish before it */
	assert_int_equal(pthread_create(&stopper, NULL, stop_thread, w), 0);
	pthread_mutex_lock(&g.lock);
	while (g.dropped < 3)
		pthread_cond_wait(&g.cond, &g.lock);
	pthread_mutex_unlock(&g.lock);
	hs_workers_load(w, &queued, &running);
	assert_int_equal(queued, 0);
	assert_int_equal(running, 1);
	pthread_mutex_lock(&g.lock);
	g.open = 1;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
	pthread_join(stopper, NULL);
	assert_true(busy.ran);
	assert_int_equal(g.nr_order, 1);
	for (i = 0; i < 3; i++)
		assert_false(later[i].ran);
	gate_release(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_sizes_are_refused),
		cmocka_unit_test(one_worker_keeps_the_order),
		cmocka_unit_test(a_slow_job_does_not_hold_a_fast_one),
		cmocka_unit_test(stop_drops_what_has_not_started),
	};
	return cmocka_run_group_tests_name("workers", tests, NULL, NULL);
}
