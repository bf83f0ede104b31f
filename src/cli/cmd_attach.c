/*
 * cmd_attach - `heapscope attach PID`: record a running .NET process's
 * runtime events (the GC allocation ticks, GC lifecycle, JIT and loader
 * events, the SampleProfiler) through its diagnostic socket into a
 * .nettrace file, until Ctrl-C or --duration.
 *
 * The session is asked for on one connection, which then carries the
 * stream; StopTracing goes on a second one, after which the first carries
 * the rundown (the names of the methods) and ends. The output file is
 * created here, never over an existing file, and kept whatever happens
 * after the first byte: a process that goes away leaves what it sent.
 */
#include "cli/cli.h"
#include "cli/dotnet_session.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUNDOWN_TIMEOUT_MS 60000 /* for the rundown, after StopTracing */

struct attach_opts {
	const char *out;
	double duration; /* seconds; 0: until Ctrl-C */
	struct cli_string_list providers;
	int quiet;
};

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct cli_option attach_options[] = {
    OPT_STRING('o', "output", struct attach_opts, out, "FILE",
	       "the .nettrace file (default: COMM.PID.nettrace in\n"
	       "the current directory); an existing file is never\n"
	       "overwritten"),
    OPT_DOUBLE(0, "duration", struct attach_opts, duration, "S",
	       "stop after S seconds (default: at Ctrl-C)"),
    OPT_STRING_LIST(0, "providers", struct attach_opts, providers, "LIST",
		    "more providers, in dotnet-trace's syntax:\n"
		    "Provider[:keywords[:level[:key=value;...]]],...\n"
		    "(keywords in hex, default all; level 0-5 or a\n"
		    "name, default verbose); a provider heapscope\n"
		    "records by default is replaced by one of the\n"
		    "same name"),
    OPT_FLAG('q', "quiet", struct attach_opts, quiet,
	     "say nothing unless something fails"),
    OPT_END(),
};

const struct cli_syntax cli_attach_syntax = {
    .cmd = "attach",
    .usage = "usage: heapscope attach [-o FILE] [--duration S] [--providers LIST]... "
	     "[-q] PID\n",
    .intro = "Record the runtime events of the running .NET process PID through its\n"
	     "diagnostic socket, as dotnet-trace does, into a .nettrace file: the GC's\n"
	     "allocation ticks (the gc-alloc source), its collections (gcstats), the\n"
	     "JIT's method names, exceptions and contention with their stacks, and the\n"
	     "SampleProfiler (thread-time). It needs no root, only the process's user.\n"
	     "Recording stops at Ctrl-C or after --duration; the rundown that names\n"
	     "the methods follows, then the file is complete (docs/dotnet.md).\n",
    .options = attach_options,
    .help_column = 24,
};

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o = {0};
	struct hs_dipc_providers providers;
	struct hs_dipc_collect req;
	struct hs_dipc_reply reply;
	struct sigaction sa, old_int, old_term;
	char comm[32], out[PATH_MAX], why[256], *end;
	uint64_t session = 0, bytes = 0;
	double deadline = 0;
	int n, status, fd, ofd, r, stopped = 0, gone = 0, stop_fd = -1;
	long pid;

	n = cli_parse_options(&cli_attach_syntax, &o, argc, argv, &status);
	if (n < 0)
		goto release;
	status = HS_EXIT_USAGE;
	if (n != 1) {
		cli_usage_error("attach",
				n ? "one PID only" : "which process? give its PID");
		goto release;
	}
	errno = 0;
	pid = strtol(argv[0], &end, 10);
	if (errno || *end || end == argv[0] || pid <= 0 || pid > INT_MAX) {
		cli_usage_error("attach", "'%s' is not a process id", argv[0]);
		goto release;
	}
	if (o.duration < 0) {
		cli_usage_error("attach",
				"--duration is a number of seconds, not negative");
		goto release;
	}
	status = cli_dotnet_providers("attach", &o.providers, &providers);
	if (status)
		goto release;
	status = HS_EXIT_FAIL;
	cli_dotnet_comm((pid_t)pid, comm, sizeof(comm));
	fd = cli_dotnet_connect((pid_t)pid, comm);
	if (fd < 0)
		goto release_providers;
	cli_dotnet_request(&providers, &req);
	r = hs_dipc_collect(fd, &req, &session, &reply, CLI_DOTNET_REPLY_TIMEOUT_MS);
	if (r) {
		close(fd);
		cli_fail("process %ld refused the EventPipe session: %s", pid,
			 cli_dotnet_strerror(r, &reply, why, sizeof(why)));
		goto release_providers;
	}
	if (o.out)
		snprintf(out, sizeof(out), "%s", o.out);
	else
		snprintf(out, sizeof(out), "%s.%ld.nettrace", comm, pid);
	ofd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (ofd < 0) {
		int e = errno;

		r = cli_dotnet_send_stop((pid_t)pid, session);
		if (r >= 0)
			close(r);
		close(fd);
		if (e == EEXIST)
			cli_fail("'%s' exists; not overwriting it", out);
		else
			cli_fail("cannot create '%s': %s", out, strerror(e));
		goto release_providers;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = request_stop;
	stop_requested = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (!o.quiet)
		fprintf(stderr, "heapscope: recording process %ld (%s) into %s; %s\n",
			pid, comm, out,
			o.duration > 0 ? "waiting for --duration" : "Ctrl-C stops");
	if (o.duration > 0)
		deadline = now_s() + o.duration;
	for (;;) {
		struct pollfd pfd[2] = {
		    {.fd = fd, .events = POLLIN},
		    {.fd = stop_fd, .events = POLLIN},
		};

		r = poll(pfd, stop_fd >= 0 ? 2 : 1, 200);
		if (r < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (r > 0 && stop_fd >= 0 && pfd[1].revents) {
			cli_dotnet_read_stop_reply(stop_fd, o.quiet);
			stop_fd = -1;
		}
		if (r > 0 && pfd[0].revents) {
			r = hs_dipc_pump(fd, ofd, 0, &bytes);
			if (r == 0 || (r < 0 && r != -ETIMEDOUT))
				break;
		}
		if (!stopped && (stop_requested || (deadline && now_s() >= deadline))) {
			stopped = 1;
			stop_fd = cli_dotnet_send_stop((pid_t)pid, session);
			if (stop_fd < 0) {
				gone = 1;
				r = 0;
				break;
			}
			deadline = now_s() + RUNDOWN_TIMEOUT_MS / 1000.0;
		} else if (stopped && now_s() >= deadline) {
			if (!o.quiet)
				fprintf(stderr,
					"heapscope: the rundown did not end within %d s; "
					"keeping what came\n",
					RUNDOWN_TIMEOUT_MS / 1000);
			r = 0;
			break;
		}
	}
	if (stop_fd >= 0)
		close(stop_fd);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	close(fd);
	if (close(ofd) || r < 0) {
		if (r < 0 && r != -ETIMEDOUT)
			cli_fail("writing '%s': %s", out, strerror(-r));
		else
			cli_fail("writing '%s': %s", out, strerror(errno));
		goto release_providers;
	}
	if (!stopped || gone) {
		/* the stream ended before we asked: the process went away */
		fprintf(stderr,
			"heapscope: process %ld went away during the recording; kept "
			"the %" PRIu64 " bytes it sent in %s\n",
			pid, bytes, out);
		status = bytes ? HS_EXIT_OK : HS_EXIT_FAIL;
		if (!bytes)
			unlink(out);
		goto release_providers;
	}
	if (!o.quiet)
		fprintf(stderr,
			"heapscope: %" PRIu64 " bytes written to %s; look at it with: "
			"heapscope report %s\n",
			bytes, out, out);
	status = HS_EXIT_OK;
release_providers:
	hs_dipc_providers_release(&providers);
release:
	cli_string_list_release(&o.providers);
	return status;
}
