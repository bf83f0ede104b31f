/*
 * run_dotnet - `heapscope run --dotnet`: record the runtime's events of
 * the .NET program that `run` starts, through a diagnostic port of our
 * own, beside the native heap trace.
 *
 * heapscope listens on a Unix socket in a private temporary directory and
 * starts the program with DOTNET_DiagnosticPorts=SOCKET,suspend,connect.
 * The runtime then connects before it runs any managed code, advertises
 * itself ("ADVR_V1") and waits. One command goes on each connection, and
 * the runtime connects again after each: the first gets CollectTracing2
 * and then carries the .nettrace stream, the second gets ResumeRuntime.
 * A recorder thread does all of it and copies the stream into
 * NAME.PID.nettrace until it ends, which it does when the program exits:
 * the runtime stops the session at shutdown and writes the rundown (the
 * names of the methods compiled before the session) first.
 *
 * The first runtime to connect is recorded (the program's, unless CMD is
 * a script that starts .NET processes). Other .NET processes inherit the
 * variable and connect too; they are resumed at once and not recorded.
 *
 * Ownership: struct cli_dotnet_run owns the socket, its directory, the
 * output file and the thread, from cli_dotnet_run_listen() to
 * cli_dotnet_run_finish().
 */
#include "cli/run_dotnet.h"
#include "cli/cli.h"
#include "cli/dotnet_session.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REPLY_TIMEOUT_MS 10000
#define DRAIN_TIMEOUT_MS 30000 /* for the stream's end after the program exited */

/* Whether @path's first 8 MB hold the @nlen bytes at @needle. */
static int file_holds(const char *path, const unsigned char *needle, size_t nlen)
{
	size_t have = 0;
	unsigned char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	long total = 0;

	if (fd < 0)
		return 0;
	while (!found && total < 8L << 20) {
		ssize_t k = read(fd, buf + have, sizeof(buf) - have);

		if (k <= 0)
			break;
		total += k;
		have += (size_t)k;
		found = memmem(buf, have, needle, nlen) != NULL;
		/* keep the tail, in case the needle straddles two reads */
		if (have > nlen) {
			memmove(buf, buf + have - nlen, nlen);
			have = nlen;
		}
	}
	close(fd);
	return found;
}

/*
 * Every apphost, single-file bundle or not, holds the .NET host's bundle
 * marker: 8 bytes (where a bundle's header starts; 0 when there is none)
 * then these 32 signature bytes. A mention of libhostfxr.so is not
 * enough: any native program may name it (heapscope's own file did, and
 * took itself for an apphost). The signature is kept as text and decoded
 * when needed, so that heapscope's file does not hold the bytes it looks
 * for.
 */
#define APPHOST_SIGNATURE_LEN 32
static const char apphost_signature_hex[2 * APPHOST_SIGNATURE_LEN + 1] =
    "8b1202b96a612038727b930214d7a03213f5b9e6efae3318ee3b2dce24b36aae";

/* Whether @path holds the apphost's bundle signature. */
static int has_apphost_signature(const char *path)
{
	unsigned char sig[APPHOST_SIGNATURE_LEN];
	char pair[3] = "";
	size_t i;

	for (i = 0; i < sizeof(sig); i++) {
		memcpy(pair, apphost_signature_hex + 2 * i, 2);
		sig[i] = (unsigned char)strtoul(pair, NULL, 16);
	}
	return file_holds(path, sig, sizeof(sig));
}

/* @cmd as run by execvp(): a path, found in $PATH when it has no '/'. */
static int resolve(const char *cmd, char *out, size_t n)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(cmd, '/'))
		return (size_t)snprintf(out, n, "%s", cmd) < n ? 0 : -1;
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if ((size_t)snprintf(out, n, "%.*s/%s", (int)(end - p),
				     end == p ? "." : p, cmd) < n &&
		    !access(out, X_OK))
			return 0;
	}
	return -1;
}

int cli_dotnet_program(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	char path[4096], config[4200];

	base = base ? base + 1 : cmd;
	if (!strcmp(base, "dotnet"))
		return 1;
	if (resolve(cmd, path, sizeof(path)))
		return 0;
	/* an apphost: beside APP.runtimeconfig.json, or by its bundle marker */
	snprintf(config, sizeof(config), "%s.runtimeconfig.json", path);
	if (!access(config, R_OK))
		return 1;
	return has_apphost_signature(path);
}

int cli_dotnet_run_listen(struct cli_dotnet_run *r, const struct hs_dipc_collect *req)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	memset(r, 0, sizeof(*r));
	r->lfd = r->ofd = -1;
	r->req = req;
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(r->dir, sizeof(r->dir), "%s/heapscope-dotnet.XXXXXX", tmp) >=
		sizeof(r->dir) ||
	    !mkdtemp(r->dir)) {
		r->dir[0] = '\0';
		return cli_fail(
		    "cannot make a directory for the diagnostic port in %s: %s", tmp,
		    strerror(errno));
	}
	if ((size_t)snprintf(r->sock, sizeof(r->sock), "%s/port", r->dir) >=
	    sizeof(r->sock)) {
		rmdir(r->dir);
		r->dir[0] = '\0';
		return cli_fail("the directory %s is too long a path for a socket", tmp);
	}
	fd = hs_dipc_listen(r->sock);
	if (fd < 0) {
		rmdir(r->dir);
		r->dir[0] = '\0';
		return cli_fail("cannot listen on %s: %s", r->sock, strerror(-fd));
	}
	r->lfd = fd;
	snprintf(r->env, sizeof(r->env), "%s,suspend,connect", r->sock);
	return 0;
}

/* Resume a runtime that advertised on @fd and close it. */
static void resume_and_close(struct cli_dotnet_run *r, int fd, int ours)
{
	struct hs_dipc_reply reply;
	int e = hs_dipc_resume(fd, &reply, REPLY_TIMEOUT_MS);

	close(fd);
	if (e && ours)
		cli_dotnet_strerror(e, &reply, r->error, sizeof(r->error));
}

static int exited(struct cli_dotnet_run *r)
{
	return __atomic_load_n(&r->program_exited, __ATOMIC_ACQUIRE);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Handle one advertisement on the listening socket. The first runtime to
 * connect is the one recorded: the program itself, or the first .NET
 * process a script run as CMD starts. Its first connection starts the
 * session, its second resumes it; other processes are resumed; its later
 * connections wait, unanswered, until the next one replaces them (the
 * runtime keeps one connection pending).
 */
static void on_connect(struct cli_dotnet_run *r)
{
	struct hs_dipc_advert adv;
	struct hs_dipc_reply reply;
	int fd = hs_dipc_accept_advert(r->lfd, &adv, REPLY_TIMEOUT_MS), e;

	if (fd < 0)
		return;
	/* the program, or the first runtime it starts (a script that runs dotnet) */
	if (!r->recorded_pid)
		r->recorded_pid = adv.pid;
	if (adv.pid != r->recorded_pid) {
		resume_and_close(r, fd, 0);
		return;
	}
	if (r->ofd >= 0 && r->stream_fd < 0 && !r->refused && !r->resumed) {
		e = hs_dipc_collect(fd, r->req, &r->session, &reply, REPLY_TIMEOUT_MS);
		if (e) {
			/* no recording, but the program must run: resume it next */
			cli_dotnet_strerror(e, &reply, r->error, sizeof(r->error));
			close(fd);
			r->refused = 1;
			return;
		}
		r->stream_fd = fd;
		return;
	}
	if (!r->resumed) {
		resume_and_close(r, fd, 1);
		r->resumed = 1;
		return;
	}
	if (r->spare_fd >= 0)
		close(r->spare_fd);
	r->spare_fd = fd;
}

static void *recorder(void *arg)
{
	struct cli_dotnet_run *r = arg;
	double drain_until = 0;

	for (;;) {
		struct pollfd pfd[2] = {
		    {.fd = r->lfd, .events = POLLIN},
		    {.fd = r->stream_fd, .events = POLLIN},
		};
		int k;

		if (exited(r)) {
			if (r->stream_fd < 0)
				break; /* it never connected, or refused */
			if (!drain_until)
				drain_until = now_ms() + DRAIN_TIMEOUT_MS;
			else if (now_ms() > drain_until) {
				r->cut = 1;
				break;
			}
		}
		k = poll(pfd, r->stream_fd >= 0 ? 2 : 1, 200);
		if (k < 0 && errno != EINTR)
			break;
		if (k <= 0)
			continue;
		if (pfd[0].revents)
			on_connect(r);
		if (r->stream_fd >= 0 && pfd[1].revents) {
			k = hs_dipc_pump(r->stream_fd, r->ofd, 0, &r->bytes);
			if (k == 0)
				break; /* the session ended */
			if (k < 0 && k != -ETIMEDOUT) {
				snprintf(r->error, sizeof(r->error),
					 "writing the trace: %s", strerror(-k));
				break;
			}
		}
	}
	return NULL;
}

int cli_dotnet_run_start(struct cli_dotnet_run *r, pid_t pid, const char *heap_trace)
{
	r->pid = pid;
	r->stream_fd = r->spare_fd = -1;
	cli_dotnet_trace_name(heap_trace, r->out, sizeof(r->out));
	r->ofd = open(r->out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (r->ofd < 0) {
		/* the thread still resumes the program, which waits for it */
		fprintf(stderr,
			"heapscope: cannot create '%s' (%s): the .NET events are not "
			"recorded\n",
			r->out, errno == EEXIST ? "it exists" : strerror(errno));
		r->out[0] = '\0';
	}
	if (pthread_create(&r->thread, NULL, recorder, r)) {
		/* resume the waiting program here, unrecorded */
		if (r->ofd >= 0) {
			close(r->ofd);
			unlink(r->out);
			r->out[0] = '\0';
			r->ofd = -1;
		}
		fprintf(stderr,
			"heapscope: cannot start the .NET recorder thread: the .NET "
			"events are not recorded\n");
		on_connect(r);
		return -1;
	}
	r->started = 1;
	return r->ofd >= 0 ? 0 : -1;
}

int cli_dotnet_run_finish(struct cli_dotnet_run *r, int quiet)
{
	int ok = 0;

	__atomic_store_n(&r->program_exited, 1, __ATOMIC_RELEASE);
	if (r->started)
		pthread_join(r->thread, NULL);
	if (r->stream_fd >= 0)
		close(r->stream_fd);
	if (r->spare_fd >= 0)
		close(r->spare_fd);
	if (r->lfd >= 0)
		close(r->lfd);
	if (r->dir[0]) {
		unlink(r->sock);
		rmdir(r->dir);
	}
	if (r->ofd >= 0)
		close(r->ofd);
	if (!r->out[0])
		return 0;
	if (!r->bytes) {
		unlink(r->out);
		if (r->refused)
			fprintf(stderr,
				"heapscope: the .NET runtime refused the EventPipe "
				"session: %s\n",
				r->error);
		else if (!r->session)
			fprintf(stderr,
				"heapscope: the program never connected to the "
				"diagnostic port, so no .NET events were recorded (not a "
				".NET "
				"program, or one run with DOTNET_EnableDiagnostics=0)\n");
		else
			fprintf(stderr,
				"heapscope: the .NET runtime sent no events%s%s\n",
				r->error[0] ? ": " : "", r->error);
		r->out[0] = '\0';
		return 0;
	}
	if (r->error[0])
		fprintf(stderr, "heapscope: .NET events: %s\n", r->error);
	if (r->cut)
		fprintf(stderr,
			"heapscope: the .NET event stream did not end within %d s "
			"of the program's exit; %s keeps what came\n",
			DRAIN_TIMEOUT_MS / 1000, r->out);
	ok = 1;
	if (!quiet)
		fprintf(stderr,
			"heapscope: .NET runtime events written to %s (%" PRIu64
			" bytes); look at them with: heapscope report %s\n",
			r->out, r->bytes, r->out);
	return ok;
}
