#ifndef HS_SERVER_WORKERS_H
#define HS_SERVER_WORKERS_H
#include "common/log.h"

/*
 * workers - a fixed pool of threads that run jobs in the order they were
 * submitted: the server's way of answering several requests at once, so
 * that a slow one (Stats, a first source switch) never holds a fast one
 * that arrives after it (server.h).
 *
 * A job is embedded in the caller's struct (recover it with
 * HS_CONTAINER_OF-style arithmetic); run() is called on a worker thread,
 * drop() instead when the pool stops before the job started.
 *
 * Ownership and threads: the pool owns its threads and its queue (under
 * its lock); it borrows each job from hs_workers_submit() until run() or
 * drop() has been called for it, after which it never touches it again.
 * hs_workers_submit() may be called from any thread; hs_workers_stop()
 * from one, once, and not from a job.
 */

struct hs_job {
	struct hs_job *next; /* the pool's queue */
	void (*run)(struct hs_job *j);
	void (*drop)(struct hs_job *j); /* may be NULL */
};

struct hs_workers;

/*
 * Start @n threads (1 to 64). Returns 0 and the pool in *@out, -EINVAL,
 * -ENOMEM or the error of pthread_create() (no thread is left running).
 */
HS_MUST_CHECK int hs_workers_start(struct hs_workers **out, unsigned n);
/* Queue @j (borrowed until its run() or drop()); a free worker runs it. */
void hs_workers_submit(struct hs_workers *w, struct hs_job *j);
/* Jobs queued and not started yet, and jobs running. */
void hs_workers_load(struct hs_workers *w, unsigned *queued, unsigned *running);
/*
 * Drop the jobs not started (their drop()), wait for the running ones,
 * join the threads and free @w. NULL-safe.
 */
void hs_workers_stop(struct hs_workers *w);
#endif
