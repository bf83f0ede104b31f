/*
 * fdkeep: the keeper thread and its descriptor table of its own (what
 * the program does to its numbers does not reach it; it holds no file of
 * the program's), its calls, and the fallback without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "collector/fdkeep.h"

#define PROGRAM_TOP 1024 /* the numbers the tests' "program" takes */

/* What a call ran with: its thread and a descriptor it opened or used. */
struct probe {
	const char *path;
	int fd;
	pid_t tid;
	struct stat sb;
	int fstat_ret;
};

static int open_path(void *arg)
{
	struct probe *p = arg;

	p->tid = (pid_t)syscall(SYS_gettid);
	p->fd = open(p->path, O_RDWR | O_CLOEXEC);
	return p->fd < 0 ? -1 : 0;
}

static int stat_fd(void *arg)
{
	struct probe *p = arg;

	p->tid = (pid_t)syscall(SYS_gettid);
	p->fstat_ret = fstat(p->fd, &p->sb);
	return p->fstat_ret;
}

static int write_fd(void *arg)
{
	struct probe *p = arg;

	return write(p->fd, "kept", 4) == 4 ? 0 : -1;
}

static int close_fd(void *arg)
{
	struct probe *p = arg;

	return (int)syscall(SYS_close, p->fd);
}

static int fail_enoent(void *arg)
{
	(void)arg;
	errno = ENOENT;
	return -7;
}

/* Each test's keeper, stopped after it even when the test fails. */
static int keeper_setup(void **state)
{
	static struct hs_fdkeep k;

	k = (struct hs_fdkeep)HS_FDKEEP_INIT;
	*state = &k;
	return 0;
}

static int keeper_teardown(void **state)
{
	hs_fdkeep_stop(*state);
	return 0;
}

static void make_temp(char *path, size_t size)
{
	int fd;

	snprintf(path, size, "/tmp/hs_fdkeep_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

static void without_a_keeper_calls_run_on_the_caller(void **state)
{
	struct hs_fdkeep *k = *state;
	struct probe p = {.fd = 0};

	assert_false(hs_fdkeep_private(k));
	assert_int_equal(hs_fdkeep_call(k, stat_fd, &p), 0);
	assert_int_equal(p.tid, (pid_t)syscall(SYS_gettid));
	assert_int_equal(hs_fdkeep_call(k, fail_enoent, NULL), -7);
	assert_int_equal(errno, ENOENT);
}

static void calls_run_on_the_keeper_with_their_errno(void **state)
{
	struct hs_fdkeep *k = *state;
	struct probe p = {.fd = 0};

	if (hs_fdkeep_start(k))
		skip(); /* unshare() refused here (seccomp) */
	assert_true(hs_fdkeep_private(k));
	assert_int_not_equal(hs_fdkeep_tid(k), 0);
	assert_int_not_equal(hs_fdkeep_tid(k), (pid_t)syscall(SYS_gettid));
	/* starting again is a no-op */
	assert_int_equal(hs_fdkeep_start(k), 0);
	errno = 0;
	assert_int_equal(hs_fdkeep_call(k, fail_enoent, NULL), -7);
	assert_int_equal(errno, ENOENT);
	/* fd 0 of this thread's table is not in the keeper's: it closed
	 * every copy unshare() made */
	assert_int_equal(hs_fdkeep_call(k, stat_fd, &p), -1);
	assert_int_equal(p.tid, hs_fdkeep_tid(k));
	hs_fdkeep_stop(k);
	assert_false(hs_fdkeep_private(k));
}

/*
 * The bug the keeper is for: the program closes every number with the
 * raw system call, then gives each a file of its own with dup2(). The
 * keeper's descriptor is the same file throughout, and writes reach it.
 */
static void the_programs_closes_and_dup2s_do_not_reach_it(void **state)
{
	struct hs_fdkeep *k = *state;
	char path[64], buf[8] = "";
	struct probe p;
	struct stat file;
	int null, fd, fails = 0;

	make_temp(path, sizeof(path));
	assert_int_equal(stat(path, &file), 0);
	if (hs_fdkeep_start(k)) {
		unlink(path);
		skip();
	}
	p.path = path;
	assert_int_equal(hs_fdkeep_call(k, open_path, &p), 0);
	null = open("/dev/null", O_WRONLY);
	assert_true(null >= 0);
	for (fd = 3; fd < PROGRAM_TOP; fd++) {
		if (fd == null)
			continue;
		syscall(SYS_close, fd);
		/* no EBUSY: the keeper installs nothing in this table */
		if (dup2(null, fd) != fd)
			fails++;
	}
	assert_int_equal(fails, 0);
	assert_int_equal(hs_fdkeep_call(k, stat_fd, &p), 0);
	assert_int_equal(p.sb.st_ino, file.st_ino);
	assert_int_equal(p.sb.st_dev, file.st_dev);
	assert_int_equal(hs_fdkeep_call(k, write_fd, &p), 0);
	/* and every number is the program's to close */
	for (fd = 3; fd < PROGRAM_TOP; fd++)
		if (close(fd))
			fails++;
	assert_int_equal(fails, 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "kept", 4);
	close(fd);
	assert_int_equal(hs_fdkeep_call(k, close_fd, &p), 0);
	hs_fdkeep_stop(k);
	unlink(path);
}

/*
 * The keeper holds no file of the program's (a pipe's reader sees its end
 * when the program closes the writing end), and what it opened closes
 * with it (hs_fdkeep_stop()).
 */
static void it_holds_only_its_own_files(void **state)
{
	struct hs_fdkeep *k = *state;
	char name[64], c;
	struct probe p;
	int pipe_fds[2];

	assert_int_equal(pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC), 0);
	if (hs_fdkeep_start(k)) {
		close(pipe_fds[0]);
		close(pipe_fds[1]);
		skip();
	}
	/* the keeper opens the pipe for itself (a new descriptor of its own) */
	snprintf(name, sizeof(name), "/proc/%d/fd/%d", (int)getpid(), pipe_fds[1]);
	p.path = name;
	assert_int_equal(hs_fdkeep_call(k, open_path, &p), 0);
	close(pipe_fds[1]);
	/* its own copy keeps the pipe open */
	assert_int_equal(read(pipe_fds[0], &c, 1), -1);
	assert_int_equal(errno, EAGAIN);
	hs_fdkeep_stop(k);
	/* gone with it: end of file */
	assert_int_equal(read(pipe_fds[0], &c, 1), 0);
	close(pipe_fds[0]);

	/* and the copy of the program's table it started with is closed */
	assert_int_equal(pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC), 0);
	assert_int_equal(hs_fdkeep_start(k), 0);
	close(pipe_fds[1]);
	assert_int_equal(read(pipe_fds[0], &c, 1), 0);
	close(pipe_fds[0]);
	hs_fdkeep_stop(k);
}

/* After fork(), the child has no keeper: calls run on its own thread. */
static void a_forked_child_forgets_it(void **state)
{
	struct hs_fdkeep *k = *state;
	struct probe p = {.fd = 0};
	int status;
	pid_t child;

	if (hs_fdkeep_start(k))
		skip();
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		hs_fdkeep_forget(k);
		_exit(hs_fdkeep_private(k) || hs_fdkeep_call(k, stat_fd, &p) ||
			      p.tid != (pid_t)syscall(SYS_gettid)
			  ? 1
			  : 0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	hs_fdkeep_stop(k);
}

static int kept_fd = -1;

static int keep_one(long fd)
{
	return fd == kept_fd;
}

/* closefrom()'s fallback: the listed numbers from the lowest up, but the kept */
static void close_listed_spares_the_kept_and_the_lower(void **state)
{
	int fd[4], i;

	(void)state;
	for (i = 0; i < 4; i++) {
		fd[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		assert_true(fd[i] >= 0);
	}
	kept_fd = fd[2];
	assert_int_equal(hs_fd_close_listed("/proc/self/fd", fd[1], keep_one), 0);
	assert_int_not_equal(fcntl(fd[0], F_GETFD), -1);
	assert_int_equal(fcntl(fd[1], F_GETFD), -1);
	assert_int_not_equal(fcntl(fd[2], F_GETFD), -1);
	assert_int_equal(fcntl(fd[3], F_GETFD), -1);
	close(fd[0]);
	close(fd[2]);
	assert_int_equal(hs_fd_close_listed("/proc/self/no-such-dir", 0, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(without_a_keeper_calls_run_on_the_caller,
					    keeper_setup, keeper_teardown),
	    cmocka_unit_test_setup_teardown(calls_run_on_the_keeper_with_their_errno,
					    keeper_setup, keeper_teardown),
	    cmocka_unit_test_setup_teardown(the_programs_closes_and_dup2s_do_not_reach_it,
					    keeper_setup, keeper_teardown),
	    cmocka_unit_test_setup_teardown(it_holds_only_its_own_files, keeper_setup,
					    keeper_teardown),
	    cmocka_unit_test_setup_teardown(a_forked_child_forgets_it, keeper_setup,
					    keeper_teardown),
	    cmocka_unit_test(close_listed_spares_the_kept_and_the_lower),
	};
	return cmocka_run_group_tests_name("fdkeep", tests, NULL, NULL);
}
