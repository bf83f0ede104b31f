/*
 * fdkeep - the keeper: a thread with a descriptor table of its own, where
 * the collector's writer keeps the trace file and /proc/self/statm, out
 * of the traced program's reach (fdkeep.h says why).
 *
 * The keeper sleeps on a futex until a call is asked, runs it, and wakes
 * the caller: two futex words count the calls asked and done. Nothing
 * here goes through the collector's hooks (raw system calls only), so the
 * unit test runs it without the collector.
 */
#include "collector/fdkeep.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#define KEEPER_STACK (128u << 10) /* its calls are a few system calls deep */

static void futex_wait(void *word, uint32_t expect)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expect, NULL, NULL, 0);
}

static void futex_wake(void *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int hs_fd_close_listed(const char *dir_path, long lowfd, int (*keep)(long fd))
{
	char buf[2048];
	long n;
	int dir;

	dir = (int)syscall(SYS_openat, AT_FDCWD, dir_path,
			   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	/* closing entries while reading the directory skips none: each
	 * getdents64() goes on from the last number read */
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n) {
			const struct dirent64 *d = (const void *)(buf + off);
			long fd = strtol(d->d_name, NULL, 10);

			off += d->d_reclen;
			if (d->d_name[0] >= '0' && d->d_name[0] <= '9' && fd >= lowfd &&
			    fd != dir && !(keep && keep(fd)))
				syscall(SYS_close, (int)fd);
		}
	}
	syscall(SYS_close, dir);
	return n < 0 ? -1 : 0;
}

/*
 * Close every descriptor of the calling thread's table (the copies of the
 * program's that unshare() made, or the keeper's own when it stops):
 * close_range(), or one by one on a kernel without it (before 5.9).
 * 0 or -1.
 */
static int close_copies(void)
{
	if (!syscall(SYS_close_range, 0u, ~0u, 0))
		return 0;
	return hs_fd_close_listed("/proc/thread-self/fd", 0, NULL);
}

static void *keeper_main(void *arg)
{
	struct hs_fdkeep *k = arg;

	atomic_store(&k->tid, (pid_t)syscall(SYS_gettid));
	syscall(SYS_prctl, PR_SET_NAME, "heapscope-fd", 0, 0, 0);
	if (syscall(SYS_unshare, CLONE_FILES) || close_copies()) {
		/* a table with the program's files in it would keep them open
		 * (a pipe's reader would not see its end): give it up */
		atomic_store(&k->state, HS_FDKEEP_REFUSED);
		futex_wake((void *)&k->state);
		return NULL;
	}
	atomic_store(&k->state, HS_FDKEEP_RUNNING);
	futex_wake((void *)&k->state);
	for (;;) {
		uint32_t asked = atomic_load(&k->asked);

		if (asked == atomic_load(&k->done)) {
			futex_wait((void *)&k->asked, asked);
			continue;
		}
		if (atomic_load(&k->stop))
			break;
		errno = 0;
		k->ret = k->fn(k->arg);
		k->err = errno;
		atomic_store(&k->done, asked);
		futex_wake((void *)&k->done);
	}
	/* the table goes with the thread, but after pthread_join() may have
	 * returned (the kernel wakes the joiner first): close it now */
	close_copies();
	return NULL;
}

int hs_fdkeep_start(struct hs_fdkeep *k)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int state = atomic_load(&k->state), err;

	if (state == HS_FDKEEP_RUNNING)
		return 0;
	if (state == HS_FDKEEP_REFUSED)
		return -EPERM;
	atomic_store(&k->asked, 0);
	atomic_store(&k->done, 0);
	atomic_store(&k->stop, 0);
	atomic_store(&k->tid, 0);
	atomic_store(&k->state, HS_FDKEEP_STARTING);
	if ((err = pthread_attr_init(&attr))) {
		atomic_store(&k->state, HS_FDKEEP_NONE);
		return -err;
	}
	pthread_attr_setstacksize(&attr, KEEPER_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&k->thread, &attr, keeper_main, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		atomic_store(&k->state, HS_FDKEEP_NONE);
		return -err;
	}
	while ((state = atomic_load(&k->state)) == HS_FDKEEP_STARTING)
		futex_wait((void *)&k->state, HS_FDKEEP_STARTING);
	if (state != HS_FDKEEP_RUNNING) {
		pthread_join(k->thread, NULL);
		atomic_store(&k->tid, 0);
		return -EPERM;
	}
	return 0;
}

int hs_fdkeep_call(struct hs_fdkeep *k, int (*fn)(void *arg), void *arg)
{
	uint32_t asked, done;

	if (atomic_load(&k->state) != HS_FDKEEP_RUNNING)
		return fn(arg);
	k->fn = fn;
	k->arg = arg;
	asked = atomic_fetch_add(&k->asked, 1) + 1;
	futex_wake((void *)&k->asked);
	while ((done = atomic_load(&k->done)) != asked)
		futex_wait((void *)&k->done, done);
	errno = k->err;
	return k->ret;
}

int hs_fdkeep_private(const struct hs_fdkeep *k)
{
	return atomic_load(&k->state) == HS_FDKEEP_RUNNING;
}

pid_t hs_fdkeep_tid(const struct hs_fdkeep *k)
{
	return atomic_load(&k->tid);
}

void hs_fdkeep_forget(struct hs_fdkeep *k)
{
	atomic_store(&k->state, HS_FDKEEP_NONE);
	atomic_store(&k->tid, 0);
}

void hs_fdkeep_stop(struct hs_fdkeep *k)
{
	if (atomic_load(&k->state) != HS_FDKEEP_RUNNING)
		return;
	/* the last call asked: stop */
	atomic_store(&k->stop, 1);
	atomic_fetch_add(&k->asked, 1);
	futex_wake((void *)&k->asked);
	pthread_join(k->thread, NULL);
	hs_fdkeep_forget(k);
}
