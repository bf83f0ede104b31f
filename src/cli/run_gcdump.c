/*
 * run_gcdump - `heapscope run --gcdump-on SIG` and `--gcdump-at-exit`:
 * heap snapshots of the .NET program that run runs.
 *
 * A snapshot needs a live runtime: the heap-dump GC runs in the program
 * and reports the heap as events. So it is taken while the program runs,
 * by `heapscope gcdump PID -o BASE.N.gcdump` started as a child of run
 * (its own session on the runtime's default diagnostic socket, beside
 * run's --dotnet session), and run waits for it:
 *   --gcdump-on SIG  each time heapscope receives SIG;
 *   --gcdump-at-exit when heapscope is asked to end the run (SIGTERM or
 *                    SIGHUP to heapscope, which run otherwise forwards to
 *                    the program at once): the snapshot first, then the
 *                    signal goes to the program.
 *                    And when the program's Main returns: the collector
 *                    in the program (dotnet_exit.c) holds the .NET host's
 *                    call to coreclr_shutdown_2 and says so on a socket
 *                    pair run made (exit_sock), run takes the snapshot
 *                    and answers, then the runtime shuts down. Once the
 *                    runtime is shutting down its diagnostic server is
 *                    gone, so a program that ends otherwise
 *                    (Environment.Exit, a crash) gets none (disarm says
 *                    so).
 *
 * A runtime describes each type once while its provider stays enabled,
 * and run's own session keeps it enabled: the snapshots share a file of
 * the types received so far (gcdump --types), so that the second names
 * its objects' types as the first did.
 *
 * The signal handlers only set flags (async-signal-safe); the work is done
 * by cli_run_gcdump_poll() in run's wait loop. Ownership: struct
 * cli_run_gcdump holds the previous handlers from arm to disarm, and run's
 * end of the socket pair from prepare to disarm.
 */
#include "cli/run_gcdump.h"
#include "cli/cli.h"
#include "collector/dotnet_exit.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t asked;	 /* SIG came this many times */
static volatile sig_atomic_t end_signal; /* a held SIGTERM or SIGHUP */

static void on_snapshot_signal(int sig)
{
	(void)sig;
	asked++;
}

static void on_end_signal(int sig)
{
	end_signal = sig;
}

/* Signals run keeps for itself, and those no handler can catch. */
static int reserved(int sig)
{
	return sig == SIGINT || sig == SIGQUIT || sig == SIGTERM || sig == SIGHUP ||
	       sig == SIGCHLD || sig == SIGKILL || sig == SIGSTOP || sig == SIGPIPE ||
	       sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
}

int cli_run_gcdump_signal(const char *cmd, const char *arg, int *signo)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {
	    {"USR1", SIGUSR1},	 {"USR2", SIGUSR2}, {"ALRM", SIGALRM},
	    {"WINCH", SIGWINCH}, {"URG", SIGURG},   {"PWR", SIGPWR},
	};
	const char *name = arg;
	char *end;
	long n;
	size_t i;

	if (!strncasecmp(name, "SIG", 3))
		name += 3;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(name, names[i].name)) {
			*signo = names[i].sig;
			return 0;
		}
	errno = 0;
	n = strtol(arg, &end, 10);
	if (!errno && end != arg && !*end && n > 0 && n < NSIG && !reserved((int)n)) {
		*signo = (int)n;
		return 0;
	}
	return cli_usage_error(cmd,
			       "--gcdump-on takes a signal such as SIGUSR2, USR1 or "
			       "a number (not INT, QUIT, TERM, HUP, CHLD: run uses "
			       "those), not '%s'",
			       arg);
}

void cli_run_gcdump_prepare(struct cli_run_gcdump *g)
{
	g->exit_sock[0] = g->exit_sock[1] = -1;
	if (g->at_exit &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g->exit_sock)) {
		g->exit_sock[0] = g->exit_sock[1] = -1;
		fprintf(stderr,
			"heapscope: no heap snapshot when Main returns: socketpair: %s\n",
			strerror(errno));
	}
}

void cli_run_gcdump_child(const struct cli_run_gcdump *g)
{
	char env[64];
	int fd;

	unsetenv(HS_DOTNET_EXIT_ENV);
	if (g->exit_sock[1] < 0)
		return;
	/* dup() leaves out close-on-exec: the program keeps this one */
	fd = dup(g->exit_sock[1]);
	if (fd < 0)
		return;
	snprintf(env, sizeof(env), "%d:%ld", fd, (long)getpid());
	setenv(HS_DOTNET_EXIT_ENV, env, 1);
}

void cli_run_gcdump_forked(struct cli_run_gcdump *g)
{
	if (g->exit_sock[1] >= 0)
		close(g->exit_sock[1]);
	g->exit_sock[1] = -1;
}

void cli_run_gcdump_arm(struct cli_run_gcdump *g, pid_t pid, const char *trace)
{
	struct sigaction sa;
	size_t len = strlen(trace);

	g->pid = pid;
	if (len > 10 && !strcmp(trace + len - 10, ".heapscope"))
		snprintf(g->base, sizeof(g->base), "%.*s", (int)(len - 10), trace);
	else if (len)
		snprintf(g->base, sizeof(g->base), "%s", trace);
	else
		snprintf(g->base, sizeof(g->base), "dotnet.%ld", (long)pid);
	asked = 0;
	end_signal = 0;
	g->types[0] = '\0';
	if (g->signo || g->at_exit) {
		const char *tmp = getenv("TMPDIR");
		int fd;

		if (!tmp || !*tmp)
			tmp = "/tmp";
		if ((size_t)snprintf(g->types, sizeof(g->types),
				     "%s/heapscope-types.XXXXXX",
				     tmp) >= sizeof(g->types) ||
		    (fd = mkstemp(g->types)) < 0)
			g->types[0] = '\0'; /* snapshots after the first may lack names */
		else
			close(fd);
	}
	memset(&sa, 0, sizeof(sa));
	/* no SA_RESTART: the signal interrupts run's waitpid() */
	if (g->signo) {
		sa.sa_handler = on_snapshot_signal;
		sigaction(g->signo, &sa, &g->old_on);
	}
	if (g->at_exit) {
		sa.sa_handler = on_end_signal;
		sigaction(SIGTERM, &sa, &g->old_term);
		sigaction(SIGHUP, &sa, &g->old_hup);
	}
	g->armed = g->signo || g->at_exit;
}

/* Run `heapscope gcdump` on the program and wait for it. */
static void take_snapshot(struct cli_run_gcdump *g, const char *why)
{
	char file[PATH_MAX + 32], pid[24];
	pid_t child;
	int st;

	snprintf(file, sizeof(file), "%s.%u.gcdump", g->base, g->taken + 1);
	snprintf(pid, sizeof(pid), "%ld", (long)g->pid);
	if (!g->quiet)
		fprintf(stderr, "heapscope: %s: taking a heap snapshot into %s\n", why,
			file);
	fflush(stderr);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "heapscope: cannot take a heap snapshot: fork: %s\n",
			strerror(errno));
		return;
	}
	if (child == 0) {
		const char *args[10];
		int n = 0;

		args[n++] = "heapscope";
		args[n++] = "gcdump";
		args[n++] = "-o";
		args[n++] = file;
		if (g->types[0]) {
			args[n++] = "--types";
			args[n++] = g->types;
		}
		if (g->quiet)
			args[n++] = "-q";
		args[n++] = pid;
		args[n] = NULL;
		execv("/proc/self/exe", (char **)args);
		fprintf(stderr, "heapscope: cannot take a heap snapshot: %s\n",
			strerror(errno));
		_exit(127);
	}
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		g->taken++;
}

/*
 * The program's word on the socket: its Main returned (snapshot, then
 * answer), or the socket's end (the program is gone).
 */
static void read_exit_word(struct cli_run_gcdump *g)
{
	char word;
	ssize_t n = recv(g->exit_sock[0], &word, 1, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n == 1) {
		take_snapshot(g, "the program's Main returned");
		/* the program waits for this before its runtime shuts down */
		if (send(g->exit_sock[0], "K", 1, MSG_NOSIGNAL) != 1)
			fprintf(stderr, "heapscope: cannot answer the program: %s\n",
				strerror(errno));
	}
	close(g->exit_sock[0]);
	g->exit_sock[0] = -1;
}

void cli_run_gcdump_poll(struct cli_run_gcdump *g)
{
	if (!g->armed)
		return;
	if (g->exit_sock[0] >= 0) {
		struct pollfd pfd = {.fd = g->exit_sock[0], .events = POLLIN};

		if (poll(&pfd, 1, 0) > 0)
			read_exit_word(g);
	}
	while (asked > 0) {
		asked--;
		take_snapshot(g, strsignal(g->signo));
	}
	if (end_signal) {
		int sig = end_signal;

		take_snapshot(g, sig == SIGTERM ? "ending the run (SIGTERM)"
						: "ending the run (SIGHUP)");
		end_signal = 0;
		kill(g->pid, sig);
	}
}

pid_t cli_run_gcdump_waitpid(struct cli_run_gcdump *g, pid_t pid, int *status)
{
	if (!g->armed)
		return waitpid(pid, status, 0);
	/*
	 * Poll, so that a signal that comes just before waitpid() would block
	 * waits at most a tick (a signal interrupts the sleep at once).
	 */
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r != 0)
			return r;
		cli_run_gcdump_poll(g);
		if (g->exit_sock[0] >= 0) {
			/* the program's word wakes this at once */
			struct pollfd pfd = {.fd = g->exit_sock[0], .events = POLLIN};

			poll(&pfd, 1, 100);
		} else {
			usleep(100 * 1000);
		}
		cli_run_gcdump_poll(g);
	}
}

void cli_run_gcdump_disarm(struct cli_run_gcdump *g)
{
	if (g->exit_sock[0] >= 0)
		close(g->exit_sock[0]);
	g->exit_sock[0] = -1;
	if (!g->armed)
		return;
	if (g->signo)
		sigaction(g->signo, &g->old_on, NULL);
	if (g->at_exit) {
		sigaction(SIGTERM, &g->old_term, NULL);
		sigaction(SIGHUP, &g->old_hup, NULL);
	}
	g->armed = 0;
	if (g->types[0])
		unlink(g->types);
	g->types[0] = '\0';
	if (g->at_exit && !g->taken)
		fprintf(stderr,
			"heapscope: no heap snapshot at exit: the program ended "
			"without its Main returning to the .NET host (Environment.Exit, "
			"a signal or a crash), and a runtime that is shutting down "
			"takes none (use --gcdump-on SIG before the end)\n");
}
