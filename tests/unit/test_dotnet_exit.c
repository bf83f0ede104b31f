/*
 * dotnet_exit: the collector's side of `run --gcdump-at-exit` (the
 * variable run passes, the word to run and its answer, the wrappers of
 * the .NET host's shutdown functions).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "collector/dotnet_exit.h"

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void env_of(char *buf, size_t size, int fd, long pid)
{
	snprintf(buf, size, "%d:%ld", fd, pid);
}

/* A child that plays run: reads the word, answers, then expects EOF. */
static pid_t fake_run(int fd, int programs_end, int answer)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char c = 0;

		close(programs_end);

		if (read(fd, &c, 1) != 1 || c != 'M')
			_exit(1);
		if (!answer)
			_exit(0);
		if (write(fd, "K", 1) != 1)
			_exit(2);
		/* one word per program: the next read sees the socket closed */
		_exit(read(fd, &c, 1) == 0 ? 0 : 3);
	}
	return pid;
}

static int exit_status(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void the_variable_names_a_socket_of_this_process(void **state)
{
	int sv[2], pipefd[2];
	char env[64];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pipe(pipefd), 0);
	env_of(env, sizeof(env), sv[1], (long)getpid());
	assert_int_equal(hs_dotnet_exit_parse(env, getpid()), sv[1]);
	/* a process the program started inherits the variable: not for it */
	assert_int_equal(hs_dotnet_exit_parse(env, getpid() + 1), -1);
	/* a descriptor that is no socket */
	env_of(env, sizeof(env), pipefd[0], (long)getpid());
	assert_int_equal(hs_dotnet_exit_parse(env, getpid()), -1);
	/* a closed one */
	close(pipefd[0]);
	assert_int_equal(hs_dotnet_exit_parse(env, getpid()), -1);
	assert_int_equal(hs_dotnet_exit_parse(NULL, getpid()), -1);
	assert_int_equal(hs_dotnet_exit_parse("", getpid()), -1);
	snprintf(env, sizeof(env), "%d", sv[1]);
	assert_int_equal(hs_dotnet_exit_parse(env, getpid()), -1);
	snprintf(env, sizeof(env), "%d:", sv[1]);
	assert_int_equal(hs_dotnet_exit_parse(env, getpid()), -1);
	snprintf(env, sizeof(env), "%d:%ldx", sv[1], (long)getpid());
	assert_int_equal(hs_dotnet_exit_parse(env, getpid()), -1);
	snprintf(env, sizeof(env), "x%d:%ld", sv[1], (long)getpid());
	assert_int_equal(hs_dotnet_exit_parse(env, getpid()), -1);
	assert_int_equal(hs_dotnet_exit_parse("99999999999999999999:1", 1), -1);
	close(pipefd[1]);
	close(sv[0]);
	close(sv[1]);
}

static void run_answers(void **state)
{
	int sv[2];
	pid_t run;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	run = fake_run(sv[0], sv[1], 1);
	close(sv[0]);
	assert_int_equal(hs_dotnet_exit_tell(sv[1], 10000), 0);
	close(sv[1]);
	assert_int_equal(exit_status(run), 0);
}

static void run_gone_returns_at_once_without_sigpipe(void **state)
{
	int sv[2];
	long t0;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[0]);
	t0 = now_ms();
	assert_int_equal(hs_dotnet_exit_tell(sv[1], 10000), -1);
	assert_true(now_ms() - t0 < 2000);
	close(sv[1]);
}

static void run_silent_is_waited_for_a_bounded_time(void **state)
{
	int sv[2];
	char c;
	long t0, took;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	t0 = now_ms();
	assert_int_equal(hs_dotnet_exit_tell(sv[1], 200), -1);
	took = now_ms() - t0;
	assert_true(took >= 190);
	assert_true(took < 5000);
	/* the word was sent */
	assert_int_equal(read(sv[0], &c, 1), 1);
	assert_int_equal(c, 'M');
	close(sv[0]);
	close(sv[1]);
}

static int calls, seen_domain, seen_code_ptr;
static void *seen_host;

static int fake_shutdown_2(void *host, unsigned int domain, int *exit_code)
{
	calls++;
	seen_host = host;
	seen_domain = (int)domain;
	seen_code_ptr = exit_code != NULL;
	if (exit_code)
		*exit_code = 42;
	return 7;
}

static int fake_shutdown(void *host, unsigned int domain)
{
	calls++;
	seen_host = host;
	seen_domain = (int)domain;
	return 8;
}

/*
 * The wrappers: only the shutdown functions are wrapped, the first call
 * tells run and waits for it, then calls the real function with the same
 * arguments; a later call goes straight through. (One test: the socket is
 * claimed once per process.)
 */
static void shutdown_waits_for_run_once_then_calls_the_real_function(void **state)
{
	int sv[2], code = 0;
	char env[64];
	pid_t run;
	void *w2, *w1;
	int (*s2)(void *, unsigned int, int *);
	int (*s1)(void *, unsigned int);

	(void)state;
	/* other names are never wrapped, and claim nothing */
	assert_ptr_equal(hs_dotnet_exit_wrap("coreclr_initialize", (void *)fake_shutdown),
			 (void *)fake_shutdown);
	assert_ptr_equal(hs_dotnet_exit_wrap("coreclr_shutdown_3", (void *)fake_shutdown),
			 (void *)fake_shutdown);
	assert_null(hs_dotnet_exit_wrap("coreclr_shutdown_2", NULL));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	env_of(env, sizeof(env), sv[1], (long)getpid());
	assert_int_equal(setenv(HS_DOTNET_EXIT_ENV, env, 1), 0);
	w2 = hs_dotnet_exit_wrap("coreclr_shutdown_2", (void *)fake_shutdown_2);
	w1 = hs_dotnet_exit_wrap("coreclr_shutdown", (void *)fake_shutdown);
	assert_ptr_not_equal(w2, (void *)fake_shutdown_2);
	assert_ptr_not_equal(w1, (void *)fake_shutdown);
	run = fake_run(sv[0], sv[1], 1);
	close(sv[0]);
	*(void **)&s2 = w2;
	*(void **)&s1 = w1;
	assert_int_equal(s2((void *)0x1234, 5, &code), 7);
	assert_int_equal(calls, 1);
	assert_ptr_equal(seen_host, (void *)0x1234);
	assert_int_equal(seen_domain, 5);
	assert_int_equal(code, 42);
	/* the wrapper closed the socket: run saw one word, then the end */
	assert_int_equal(exit_status(run), 0);
	assert_int_equal(s1((void *)0x99, 3), 8);
	assert_int_equal(calls, 2);
	assert_int_equal(seen_domain, 3);
	unsetenv(HS_DOTNET_EXIT_ENV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_variable_names_a_socket_of_this_process),
	    cmocka_unit_test(run_answers),
	    cmocka_unit_test(run_gone_returns_at_once_without_sigpipe),
	    cmocka_unit_test(run_silent_is_waited_for_a_bounded_time),
	    cmocka_unit_test(shutdown_waits_for_run_once_then_calls_the_real_function),
	};
	return cmocka_run_group_tests_name("dotnet_exit", tests, NULL, NULL);
}
