#ifndef HS_COLLECTOR_FDKEEP_H
#define HS_COLLECTOR_FDKEEP_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * fdkeep - a thread with a file descriptor table of its own, in which the
 * collector keeps the files it writes and reads (fdkeep.c).
 *
 * A traced program may close every descriptor number, with close() or
 * with the close system call itself (which no hook sees), and then give
 * every number a file of its own with dup2(). In the program's table, a
 * collector's descriptor can be closed under it, replaced by the
 * program's file, or make the program's dup2() fail (EBUSY while the
 * collector's open() installs it). The keeper's table is not the
 * program's: the program cannot reach a descriptor there, and opening one
 * there takes no number from the program. Functions that use such
 * descriptors run on the keeper's thread, by hs_fdkeep_call().
 *
 * When the thread cannot have a table of its own (unshare() refused by a
 * seccomp filter, no thread), there is no keeper: hs_fdkeep_call() runs
 * the function on the caller's thread, in the program's table.
 *
 * Ownership: the caller owns struct hs_fdkeep (static in the collector).
 * Calls are not serialised: one thread at a time calls hs_fdkeep_call()
 * (the collector's writer, or the thread that starts it before it runs).
 * Allocates nothing after hs_fdkeep_start().
 */
enum hs_fdkeep_state {
	HS_FDKEEP_NONE,	    /* not started: calls run on the caller's thread */
	HS_FDKEEP_STARTING, /* the thread leaves the shared table */
	HS_FDKEEP_RUNNING,  /* calls run on the keeper, in its own table */
	HS_FDKEEP_REFUSED,  /* it could not have its own table: as NONE */
};

struct hs_fdkeep {
	pthread_t thread;
	_Atomic int state;	/* enum hs_fdkeep_state; a futex word */
	_Atomic uint32_t asked; /* calls asked (futex word) */
	_Atomic uint32_t done;	/* calls done (futex word) */
	_Atomic int stop;	/* hs_fdkeep_stop(): end the thread */
	_Atomic pid_t tid;	/* the keeper's thread id, 0 before it runs */
	int (*fn)(void *arg);	/* the call asked */
	void *arg;
	int ret, err; /* its value and errno */
};
#define HS_FDKEEP_INIT                                                                   \
	{                                                                                \
		.state = HS_FDKEEP_NONE                                                  \
	}

/*
 * Close, with raw system calls, every descriptor listed in @dir_path
 * (/proc/self/fd or /proc/thread-self/fd) from @lowfd up, but those
 * @keep (may be NULL) says to keep: closefrom() without close_range().
 * 0, or -1 when the list cannot be read.
 */
int hs_fd_close_listed(const char *dir_path, long lowfd, int (*keep)(long fd))
    __attribute__((visibility("hidden")));

/*
 * Start the keeper of @k, unless it runs or was refused: a thread with
 * every signal blocked that unshares its descriptor table and closes
 * every descriptor it copied (it holds no file of the program's). Waits
 * until it is ready. Returns 0 when it runs, else a negative errno (calls
 * then run on the caller's thread).
 */
int hs_fdkeep_start(struct hs_fdkeep *k) __attribute__((visibility("hidden")));
/*
 * Run @fn(@arg) in the keeper's descriptor table (on the caller's thread
 * when it does not run); returns @fn's value, with @fn's errno.
 */
int hs_fdkeep_call(struct hs_fdkeep *k, int (*fn)(void *arg), void *arg)
    __attribute__((visibility("hidden")));
/* Whether calls run in a table of the keeper's own (hs_fdkeep_start() gave 0). */
int hs_fdkeep_private(const struct hs_fdkeep *k) __attribute__((visibility("hidden")));
/* The keeper's thread id, or 0. */
pid_t hs_fdkeep_tid(const struct hs_fdkeep *k) __attribute__((visibility("hidden")));
/*
 * In a child after fork(): the keeper's thread was not copied, nor its
 * table. @k is back to not started; the descriptors it held are no
 * numbers of the child's.
 */
void hs_fdkeep_forget(struct hs_fdkeep *k) __attribute__((visibility("hidden")));
/*
 * End the keeper and wait for it: its table and every descriptor in it
 * are closed. @k is back to not started.
 */
void hs_fdkeep_stop(struct hs_fdkeep *k) __attribute__((visibility("hidden")));
#endif
