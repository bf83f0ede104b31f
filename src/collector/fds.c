/*
 * fds - the collector's own file descriptors (the trace file, /proc files,
 * perf events): moved above the numbers programs use, and kept from the
 * program's close(), close_range() and closefrom().
 *
 * Programs that daemonize or sandbox themselves close every descriptor
 * they did not open; the collector's must survive that, or tracing stops.
 * To the program, a protected descriptor looks closed already: close()
 * of one fails with EBADF, and the range calls skip them. Only the
 * collector releases them (hs_fd_close()).
 *
 * A bitmap of the protected numbers below HS_FD_MAX; numbers above it are
 * never protected (hs_fd_move_high() stays below it). A program can still
 * close one with the close system call itself, and get the number back
 * for a file of its own (dup2()): the collector's are close-on-exec and a
 * dup2()'d number is not, so a protected number without the flag is the
 * program's again (released()); the writer reopens its file (writer.c).
 * The writer's own files are not here at all when it has a descriptor
 * table of its own (fdkeep.c); these numbers are the fallback, and the
 * sampler's (perf events, /proc files).
 */
#include "collector/collector.h"
#include "collector/fdkeep.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HS_FD_MAX 65536

static _Atomic uint64_t own[HS_FD_MAX / 64];

static int owned(long fd)
{
	return fd >= 0 && fd < HS_FD_MAX &&
	       ((atomic_load_explicit(&own[fd / 64], memory_order_relaxed) >> (fd % 64)) &
		1);
}

static void mark(int fd, int on)
{
	if (fd < 0 || fd >= HS_FD_MAX)
		return;
	if (on)
		atomic_fetch_or(&own[fd / 64], (uint64_t)1 << (fd % 64));
	else
		atomic_fetch_and(&own[fd / 64], ~((uint64_t)1 << (fd % 64)));
}

/*
 * Whether protected @fd is no longer the collector's: closed behind the
 * hooks' back and reused by the program. Then it is protected no more.
 */
static int released(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0 || (flags & FD_CLOEXEC))
		return 0;
	mark(fd, 0);
	return 1;
}

static int real_close(int fd)
{
	hs_resolve_real();
	return hs_real.close ? hs_real.close(fd) : (int)syscall(SYS_close, fd);
}

int hs_fd_move_high(int fd)
{
	struct rlimit rl;
	long base = 512, top = HS_FD_MAX - 64;
	int nfd, flags;

	if (fd < 0)
		return fd;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		long lim = (long)rl.rlim_cur;

		base = lim / 2 > lim - 512 ? lim / 2 : lim - 512;
	}
	if (base > top)
		base = top;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
	if (nfd < 0 || nfd >= HS_FD_MAX) {
		if (nfd >= 0)
			real_close(nfd);
		mark(fd, 1); /* keep it where it is */
		return fd;
	}
	flags = fcntl(fd, F_GETFD);
	if (flags < 0 || !(flags & FD_CLOEXEC)) {
		/*
		 * @fd was a free number when it was opened: a program that
		 * closes numbers with the raw system call and dup2()s files of
		 * its own over them got it meanwhile. Not ours to close; and
		 * @nfd may be a copy of the program's file.
		 */
		real_close(nfd);
		errno = EBADF;
		return -1;
	}
	real_close(fd);
	mark(nfd, 1);
	return nfd;
}

int hs_fd_close(int fd)
{
	mark(fd, 0);
	return real_close(fd);
}

void hs_fd_forget(int fd)
{
	mark(fd, 0);
}

HS_EXPORT int close(int fd)
{
	if (HS_UNLIKELY(owned(fd)) && !released(fd)) {
		errno = EBADF;
		return -1;
	}
	return real_close(fd);
}

/* close_range() of the program: the parts of [first, last] that are not ours. */
HS_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	unsigned lo = first, fd;

	hs_resolve_real();
	if (!hs_real.close_range) {
		errno = ENOSYS;
		return -1;
	}
	for (fd = first; fd <= last && fd < HS_FD_MAX; fd++) {
		if (!owned(fd) || released((int)fd))
			continue;
		if (fd > lo && hs_real.close_range(lo, fd - 1, flags))
			return -1;
		lo = fd + 1;
	}
	if (lo > last || lo < first)
		return 0; /* nothing left (or lo wrapped past UINT_MAX) */
	return hs_real.close_range(lo, last, flags);
}

/* Whether closefrom() leaves @fd open: the collector's own, not released. */
static int collector_keeps(long fd)
{
	return owned(fd) && !released((int)fd);
}

/* closefrom(): close_range() above, or every open descriptor by hand. */
HS_EXPORT void closefrom(int lowfd)
{
	if (lowfd < 0)
		lowfd = 0;
	if (!close_range((unsigned)lowfd, ~0u, 0))
		return;
	hs_fd_close_listed("/proc/self/fd", lowfd, collector_keeps);
}
