/*
 * cmd_gcdump - `heapscope gcdump PID`: take a heap snapshot of a running
 * .NET process through its diagnostic socket, as dotnet-gcdump does, and
 * write it as a .gcdump.
 *
 * The session asks the runtime's provider for the GC, GCHeapCollect,
 * GCHeapDump, GCHeapAndTypeNames and Type keywords (0x1980001) at verbose
 * level: the runtime then runs a blocking gen2 GC that reports its heap
 * as events. The rundown, after StopTracing, names the types' modules. The stream is
 * copied to a temporary file; while it grows, the file is read again (the nettrace reader
 * hands over the events of whole blocks) until the dump GC's GCEnd is in it
 * (dotnet/heap_snapshot.c). Then StopTracing, the rundown, one last read,
 * and the graph is written (heapgraph/gcdump_write.c). The temporary file is ours and
 * removed; the output file is created here, never over an existing one, and removed when
 * no snapshot came.
 */
#include "cli/cli.h"
#include "cli/dotnet_session.h"
#include "dotnet/heap_snapshot.h"
#include "heapgraph/gcdump_write.h"
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

#define HEAP_DUMP_KEYWORDS                                                               \
	0x1980001ull /* GC | GCHeapCollect | GCHeapDump | ... | Type                     \
		      */
#define LEVEL_VERBOSE 5
#define STOP_TIMEOUT_S 30.0 /* for the rundown and the stream's end after StopTracing */
#define MIN_PROBE_INTERVAL_S 0.3

struct gcdump_opts {
	const char *out;
	const char *types; /* --types: the types of earlier snapshots, or NULL */
	double timeout;	   /* seconds; 0: the default */
	int quiet;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The snapshot being read from the stream's copy. */
struct probe {
	struct hs_heap_snapshot snap;
	unsigned pointer_size;
};

static int probe_header(void *ctx, const struct hs_nettrace_header *h)
{
	((struct probe *)ctx)->pointer_size = h->pointer_size;
	return 0;
}

static int probe_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct probe *p = ctx;

	return hs_heap_snapshot_event(&p->snap, ev, p->pointer_size);
}

/*
 * Read the stream's copy at @path so far into @p (emptied first): 0, or
 * the reader's error with @diag.
 */
static int probe(const char *path, struct probe *p, struct hs_diag *diag)
{
	struct hs_nettrace_ops ops = {
	    .ctx = p, .header = probe_header, .event = probe_event};
	FILE *f = fopen(path, "rb");
	int err;

	hs_heap_snapshot_release(&p->snap);
	hs_heap_snapshot_init(&p->snap);
	p->pointer_size = 8;
	if (!f)
		return -errno;
	err = hs_nettrace_read(f, &ops, NULL, diag);
	fclose(f);
	return err;
}

static const struct cli_option gcdump_options[] = {
    OPT_STRING('o', "output", struct gcdump_opts, out, "FILE",
	       "the .gcdump file (default: COMM.PID.gcdump in\n"
	       "the current directory); an existing file is never\n"
	       "overwritten"),
    OPT_DOUBLE(0, "timeout", struct gcdump_opts, timeout, "S",
	       "give up when the snapshot has not come in S\n"
	       "seconds (default 60)"),
    OPT_STRING(0, "types", struct gcdump_opts, types, "FILE",
	       "name the types of objects the runtime described\n"
	       "to an earlier snapshot of this process only (as it\n"
	       "does while another session is on): read FILE, then\n"
	       "write every type known to it"),
    OPT_FLAG('q', "quiet", struct gcdump_opts, quiet,
	     "say nothing unless something fails"),
    OPT_END(),
};

const struct cli_syntax cli_gcdump_syntax = {
    .cmd = "gcdump",
    .usage =
	"usage: heapscope gcdump [-o FILE.gcdump] [--timeout S] [--types FILE] [-q]\n"
	"                        PID\n",
    .intro =
	"Take a heap snapshot of the running .NET process PID through its\n"
	"diagnostic socket, as dotnet-gcdump collect does: the runtime runs a\n"
	"full blocking GC and reports every live object, its type and size, its\n"
	"references and the roots. The .gcdump is read by heapscope (report,\n"
	"stats, diff, view), dotnet-gcdump report and PerfView (docs/dotnet.md).\n"
	"The process pauses for the GC; it needs no root, only the process's user.\n",
    .options = gcdump_options,
    .help_column = 24,
};

/* Where the stream's copy goes: $TMPDIR or /tmp. */
static int make_temp(char *path, size_t n)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, n, "%s/heapscope-gcdump-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		cli_fail("cannot create a temporary file in %s: %s", dir,
			 strerror(errno));
	return fd;
}

/*
 * Copy the session's stream on @fd into @tfd until the snapshot at
 * @tpath is complete (1), the stream ends (0), or time runs out or the
 * user interrupts (-ETIMEDOUT, -EINTR); other errors negative.
 */
static int stream_until_snapshot(int fd, int tfd, const char *tpath, double deadline,
				 struct probe *p, struct hs_diag *diag, uint64_t *bytes)
{
	uint64_t probed = 0;
	double next_probe = 0, interval = MIN_PROBE_INTERVAL_S;

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int r = poll(&pfd, 1, 100);

		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0) {
			r = hs_dipc_pump(fd, tfd, 0, bytes);
			if (r == 0)
				return 0;
			if (r < 0 && r != -ETIMEDOUT)
				return r;
		}
		if (interrupted)
			return -EINTR;
		if (*bytes > probed && now_s() >= next_probe) {
			double t0 = now_s();

			probed = *bytes;
			r = probe(tpath, p, diag);
			if (r)
				return r;
			if (hs_heap_snapshot_done(&p->snap))
				return 1;
			/* a long read waits longer before the next one */
			interval =
			    now_s() - t0 > interval / 4 ? 4 * (now_s() - t0) : interval;
			next_probe = now_s() + interval;
		}
		if (now_s() >= deadline)
			return -ETIMEDOUT;
	}
}

/* After StopTracing: drain the stream until it ends or STOP_TIMEOUT_S. */
static void drain(int fd, int tfd, int stop_fd, int quiet, uint64_t *bytes)
{
	double deadline = now_s() + STOP_TIMEOUT_S;

	while (now_s() < deadline) {
		struct pollfd pfd[2] = {
		    {.fd = fd, .events = POLLIN},
		    {.fd = stop_fd, .events = POLLIN},
		};
		int r = poll(pfd, stop_fd >= 0 ? 2 : 1, 100);

		if (r < 0 && errno != EINTR)
			break;
		if (r > 0 && stop_fd >= 0 && pfd[1].revents) {
			cli_dotnet_read_stop_reply(stop_fd, quiet);
			stop_fd = -1;
		}
		if (r > 0 && pfd[0].revents) {
			r = hs_dipc_pump(fd, tfd, 0, bytes);
			if (r == 0 || (r < 0 && r != -ETIMEDOUT))
				break;
		}
	}
	if (stop_fd >= 0)
		close(stop_fd);
}

/*
 * --types FILE: add the types FILE holds to @snap (a missing FILE holds
 * none); a damaged FILE is said and ignored.
 */
static void load_types(const char *path, struct hs_heap_snapshot *snap)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f) {
		if (errno != ENOENT)
			fprintf(stderr, "heapscope: cannot read '%s': %s\n", path,
				strerror(errno));
		return;
	}
	err = hs_heap_snapshot_load_types(snap, f);
	fclose(f);
	if (err)
		fprintf(stderr, "heapscope: '%s': %s; its types are not used\n", path,
			err == -EINVAL ? "not a list of types" : strerror(-err));
}

/* --types FILE: write every type @snap knows to FILE. */
static void save_types(const char *path, const struct hs_heap_snapshot *snap)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f) {
		fprintf(stderr, "heapscope: cannot write '%s': %s\n", path,
			strerror(errno));
		return;
	}
	err = hs_heap_snapshot_save_types(snap, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (err)
		fprintf(stderr, "heapscope: cannot write '%s': %s\n", path,
			strerror(-err));
}

/* Write @g into the new file @ofd (@out): HS_EXIT_OK or HS_EXIT_FAIL. */
static int write_snapshot(int ofd, const char *out, const struct hs_heapgraph *g,
			  long pid, const char *comm)
{
	struct hs_gcdump_origin origin = {.pid = (int32_t)pid, .process_name = comm};
	struct hs_diag diag = HS_DIAG_INIT(out);
	char msg[600];
	FILE *f = fdopen(ofd, "wb");
	int err;

	if (!f) {
		close(ofd);
		return cli_fail("cannot write '%s': %s", out, strerror(errno));
	}
	err = hs_gcdump_write(f, g, &origin, &diag);
	if (fclose(f) && !err) {
		hs_diag_set(&diag, 0, "write error: %s", strerror(errno));
		err = -EIO;
	}
	if (err)
		return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
	return HS_EXIT_OK;
}

int cmd_gcdump(int argc, char **argv)
{
	struct gcdump_opts o = {0};
	struct hs_dipc_provider provider = {
	    .name = "Microsoft-Windows-DotNETRuntime",
	    .keywords = HEAP_DUMP_KEYWORDS,
	    .level = LEVEL_VERBOSE,
	};
	struct hs_dipc_collect req = {
	    .buffer_mb = 256,
	    .format = HS_DIPC_FORMAT_NETTRACE,
	    .rundown = 1,
	    .providers = &provider,
	    .nr_providers = 1,
	};
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_dipc_reply reply;
	struct sigaction sa, old_int, old_term;
	struct probe p;
	struct hs_heapgraph g;
	char comm[32], out[PATH_MAX], tpath[PATH_MAX], why[256], msg[600], *end;
	uint64_t session = 0, bytes = 0;
	int n, status, fd, ofd, tfd, r, stop_fd;
	long pid;
	double t0;

	n = cli_parse_options(&cli_gcdump_syntax, &o, argc, argv, &status);
	if (n < 0)
		return status;
	if (n != 1)
		return cli_usage_error("gcdump", n ? "one PID only"
						   : "which process? give its PID");
	errno = 0;
	pid = strtol(argv[0], &end, 10);
	if (errno || *end || end == argv[0] || pid <= 0 || pid > INT_MAX)
		return cli_usage_error("gcdump", "'%s' is not a process id", argv[0]);
	if (o.timeout < 0)
		return cli_usage_error("gcdump",
				       "--timeout is a number of seconds, not negative");
	if (o.timeout == 0)
		o.timeout = 60;
	cli_dotnet_comm((pid_t)pid, comm, sizeof(comm));
	fd = cli_dotnet_connect((pid_t)pid, comm);
	if (fd < 0)
		return HS_EXIT_FAIL;
	if (o.out)
		snprintf(out, sizeof(out), "%s", o.out);
	else
		snprintf(out, sizeof(out), "%s.%ld.gcdump", comm, pid);
	ofd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (ofd < 0) {
		int e = errno;

		close(fd);
		if (e == EEXIST)
			return cli_fail("'%s' exists; not overwriting it", out);
		return cli_fail("cannot create '%s': %s", out, strerror(e));
	}
	tfd = make_temp(tpath, sizeof(tpath));
	if (tfd < 0) {
		close(fd);
		close(ofd);
		unlink(out);
		return HS_EXIT_FAIL;
	}
	status = HS_EXIT_FAIL;
	hs_heap_snapshot_init(&p.snap);
	hs_heapgraph_init(&g);
	r = hs_dipc_collect(fd, &req, &session, &reply, CLI_DOTNET_REPLY_TIMEOUT_MS);
	if (r) {
		cli_fail("process %ld refused the EventPipe session: %s", pid,
			 cli_dotnet_strerror(r, &reply, why, sizeof(why)));
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (!o.quiet)
		fprintf(stderr,
			"heapscope: asking process %ld (%s) for a heap snapshot\n", pid,
			comm);
	t0 = now_s();
	r = stream_until_snapshot(fd, tfd, tpath, t0 + o.timeout, &p, &diag, &bytes);
	stop_fd = r == 0 ? -1 : cli_dotnet_send_stop((pid_t)pid, session);
	if (stop_fd >= 0 || r == 0)
		drain(fd, tfd, stop_fd, o.quiet, &bytes);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	/* once more, for what came after: the rundown names the types' modules */
	if ((r == 0 || r == 1) && !(r = probe(tpath, &p, &diag)))
		r = hs_heap_snapshot_done(&p.snap) ? 1 : 0;
	if (r == 0) {
		cli_fail(
		    "process %ld ended the session before its heap dump was complete "
		    "(%" PRIu64 " bytes of events; did it exit?)",
		    pid, bytes);
		goto out;
	}
	if (r == -ETIMEDOUT) {
		cli_fail("no complete heap snapshot from process %ld within %.0f s (%s); "
			 "try a longer --timeout",
			 pid, o.timeout,
			 hs_heap_snapshot_started(&p.snap)
			     ? "its GC was still reporting the heap"
			     : "its GC did not start");
		goto out;
	}
	if (r == -EINTR) {
		cli_fail("interrupted before the snapshot was complete");
		goto out;
	}
	if (r < 0) {
		if (diag.set)
			cli_fail("reading the session's events: %s",
				 hs_diag_format(&diag, msg, sizeof(msg)));
		else
			cli_fail("reading the session's events: %s", strerror(-r));
		goto out;
	}
	if (o.types)
		load_types(o.types, &p.snap);
	r = hs_heap_snapshot_build(&p.snap, &g);
	if (r) {
		cli_fail("building the heap graph: %s", strerror(-r));
		goto out;
	}
	status = write_snapshot(ofd, out, &g, pid, comm);
	ofd = -1;
	if (status == HS_EXIT_OK && o.types)
		save_types(o.types, &p.snap);
	if (status == HS_EXIT_OK && !o.quiet) {
		uint64_t total = 0;
		uint32_t i;

		for (i = 0; i < g.nr_nodes; i++)
			total += g.size[i];
		fprintf(stderr,
			"heapscope: %" PRIu32 " objects, %" PRIu64 " bytes, %" PRIu32
			" types in %.1f s written to %s; look at it with: heapscope "
			"stats %s\n",
			g.nr_nodes, total, g.nr_types, now_s() - t0, out, out);
	}
out:
	close(fd);
	close(tfd);
	unlink(tpath);
	if (ofd >= 0)
		close(ofd);
	if (status != HS_EXIT_OK)
		unlink(out);
	hs_heapgraph_release(&g);
	hs_heap_snapshot_release(&p.snap);
	return status;
}
