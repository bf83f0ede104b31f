/*
 * dotnet_exit - `heapscope run --gcdump-at-exit` for a .NET program that
 * ends by itself: a heap snapshot after its Main returned, before the
 * runtime shuts down.
 *
 * The dotnet host (libhostpolicy, or an apphost's copy of it) runs Main
 * through coreclr_execute_assembly, then calls coreclr_shutdown_2 (older
 * hosts: coreclr_shutdown). Between the two the runtime is whole: its
 * diagnostic server still answers, and a heap-dump GC sees what the
 * program's statics and handles still hold. The host finds both functions
 * with dlsym() on libcoreclr's handle, so interposing them by name does
 * not reach them; the collector's dlsym() (dlsym.c) asks
 * hs_dotnet_exit_wrap() about every name it resolves, and for these two
 * hands out a wrapper that first tells run "Main returned" on the socket
 * run passed (HS_DOTNET_EXIT_ENV), waits for run's answer (run takes the
 * snapshot meanwhile), then calls the real function.
 *
 * Safety: nothing here allocates, and every failure (no variable, another
 * process's variable, a descriptor that is no longer run's socket, run
 * gone or silent) falls through to the real function; the wait is bounded
 * by HS_DOTNET_EXIT_WAIT_MS. Only the first shutdown call talks to run.
 *
 * Ownership: the socket is the program's inherited descriptor; the first
 * wrapper that runs closes it.
 */
#include "collector/dotnet_exit.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int shutdown_fn(void *host, unsigned int domain);
typedef int shutdown_2_fn(void *host, unsigned int domain, int *exit_code);

static shutdown_fn *_Atomic real_shutdown;
static shutdown_2_fn *_Atomic real_shutdown_2;
/* run's socket: -2 until the first lookup of a shutdown function, -1 none */
static _Atomic int exit_fd = -2;
/* what exit_fd was when claimed, to notice that the program reused it */
static dev_t exit_dev;
static ino_t exit_ino;

int hs_dotnet_exit_parse(const char *env, pid_t self)
{
	const char *p = env;
	long fd = 0, pid = 0;
	struct stat sb;

	if (!p || *p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9' && fd < 1L << 24)
		fd = fd * 10 + (*p++ - '0');
	if (*p++ != ':' || *p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9' && pid < 1L << 24)
		pid = pid * 10 + (*p++ - '0');
	if (*p || pid != (long)self || fd >= 1L << 24)
		return -1;
	if (fstat((int)fd, &sb) || !S_ISSOCK(sb.st_mode))
		return -1;
	return (int)fd;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int hs_dotnet_exit_tell(int fd, int timeout_ms)
{
	char word = 'M', answer;
	long deadline = now_ms() + timeout_ms;
	ssize_t n;

	do
		n = send(fd, &word, 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return -1;
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		long left = deadline - now_ms();
		int r;

		if (left <= 0)
			return -1;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		do
			n = recv(fd, &answer, 1, 0);
		while (n < 0 && errno == EINTR);
		return n == 1 ? 0 : -1;
	}
}

/* Main has returned: let run take its snapshot, once. */
static void main_returned(void)
{
	int fd = atomic_exchange(&exit_fd, -1);
	struct stat sb;

	if (fd < 0)
		return;
	if (!fstat(fd, &sb) && sb.st_dev == exit_dev && sb.st_ino == exit_ino) {
		hs_dotnet_exit_tell(fd, HS_DOTNET_EXIT_WAIT_MS);
		close(fd);
	}
}

static int shutdown_wrapper(void *host, unsigned int domain)
{
	main_returned();
	return atomic_load(&real_shutdown)(host, domain);
}

static int shutdown_2_wrapper(void *host, unsigned int domain, int *exit_code)
{
	main_returned();
	return atomic_load(&real_shutdown_2)(host, domain, exit_code);
}

/* Take run's socket from the environment, the first time (-1: none). */
static int claim_socket(void)
{
	int fd = atomic_load(&exit_fd), expected = -2;
	struct stat sb;

	if (fd != -2)
		return fd;
	fd = hs_dotnet_exit_parse(getenv(HS_DOTNET_EXIT_ENV), getpid());
	if (fd >= 0 && !fstat(fd, &sb)) {
		exit_dev = sb.st_dev;
		exit_ino = sb.st_ino;
		/* the program's own children have no use for it */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	} else {
		fd = -1;
	}
	if (!atomic_compare_exchange_strong(&exit_fd, &expected, fd))
		return expected;
	return fd;
}

void *hs_dotnet_exit_wrap(const char *name, void *real)
{
	if (!real || !name || strncmp(name, "coreclr_shutdown", 16))
		return real;
	if (!strcmp(name + 16, "_2")) {
		if (claim_socket() < 0)
			return real;
		atomic_store(&real_shutdown_2, (shutdown_2_fn *)real);
		return (void *)shutdown_2_wrapper;
	}
	if (!name[16]) {
		if (claim_socket() < 0)
			return real;
		atomic_store(&real_shutdown, (shutdown_fn *)real);
		return (void *)shutdown_wrapper;
	}
	return real;
}
