/*
 * cmd_run - `heapscope run`: start a program with the preload collector,
 * wait for it, and summarise the trace it wrote.
 *
 * The trace file is created here (never over an existing file) before the
 * program starts; the collector only opens it. The program's exit status
 * becomes heapscope's (128 + N when signal N killed it); everything
 * heapscope says goes to stderr.
 */
#include "cli/cli.h"
#include "cli/dotnet_session.h"
#include "cli/exec_images.h"
#include "cli/run_summary.h"
#include "cli/run_dotnet.h"
#include "cli/run_gcdump.h"
#include "common/alloc.h"
#include "common/log.h"
#include "format/trace_reader.h"
#include "format/trace_symbols.h"
#include "symbols/trace_symbolize.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef HS_LIBDIR
#define HS_LIBDIR "/usr/local/lib"
#endif
#define PRELOAD_NAME "libheapscope-preload.so"

struct run_opts {
	const char *out;
	unsigned long sample_bytes;
	const char *unwind;
	unsigned long max_depth;
	int follow_fork, no_view, quiet;
	int follow_exec; /* 1: every exec; 0: CMD's own pid's; -1: none */
	int no_symbolize;
	int no_repack;		       /* --no-repack (cmd_repack.c does the rewrite) */
	unsigned long cpu_hz, wall_hz; /* --cpu, --wall; 0: off */
	int cpu_timer;		       /* --cpu-clock timer */
	int no_heap;		       /* --no-heap */
	int perf;		       /* --perf: let perf record instead */
	struct cli_string_list debug_dirs; /* --debug-dir, for the symbols */
	char manifest[PATH_MAX];	   /* the children's traces are listed here; "" */
	int dotnet;			   /* --dotnet 1, --no-dotnet -1, 0: detect */
	struct cli_string_list providers;  /* --providers, for --dotnet */
	const char *dotnet_port;      /* DOTNET_DiagnosticPorts for the child, or NULL */
	struct cli_run_gcdump gcdump; /* --gcdump-on, --gcdump-at-exit */
};

/* The preload library: next to this executable, else in the libdir. */
static int find_preload(char *buf, size_t n)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (k > 0) {
		char *slash;

		exe[k] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(buf, n, "%s/%s", exe, PRELOAD_NAME) < n &&
			    !access(buf, R_OK))
				return 0;
		}
	}
	if ((size_t)snprintf(buf, n, "%s/heapscope/%s", HS_LIBDIR, PRELOAD_NAME) < n &&
	    !access(buf, R_OK))
		return 0;
	return -1;
}

/* The kernel's name for a program run as @cmd: basename, 15 bytes. */
static void comm_of(const char *cmd, char *out)
{
	const char *b = strrchr(cmd, '/');

	b = b ? b + 1 : cmd;
	snprintf(out, 16, "%s", b);
}

/*
 * In the child: create the trace file (unless -o made it), tell the
 * parent its name, set the environment and exec. Never returns.
 */
static void child(const struct run_opts *o, const char *preload, const char *made,
		  char **cmd, int report_fd)
{
	/* by o->follow_exec + 1: --no-follow-exec, the default, --follow-exec */
	static const char *const exec_mode[3] = {"0", "main", "1"};
	char path[PATH_MAX], comm[16], opts[256], dir[PATH_MAX], *slash;
	const char *old;
	int fd = -1, i, e;

	if (made) {
		snprintf(path, sizeof(path), "%s", made);
	} else {
		comm_of(cmd[0], comm);
		for (i = 1; i < 1000; i++) {
			if (i == 1)
				snprintf(path, sizeof(path), "%s.%d.heapscope", comm,
					 (int)getpid());
			else
				snprintf(path, sizeof(path), "%s.%d.%d.heapscope", comm,
					 (int)getpid(), i);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
		if (fd < 0) {
			e = errno;
			if (write(report_fd, "C", 1) < 0 ||
			    write(report_fd, &e, sizeof(e)) < 0)
				_exit(127);
			_exit(127);
		}
		close(fd);
	}
	if (write(report_fd, "P", 1) < 0 || write(report_fd, path, strlen(path) + 1) < 0)
		_exit(127);
	/* children's traces go next to this one */
	if (!realpath(path, dir))
		snprintf(dir, sizeof(dir), ".");
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	setenv("HEAPSCOPE_DIR", dir, 1);
	{
		char abs[PATH_MAX + 32];

		if (realpath(path, abs))
			setenv("HEAPSCOPE_OUTPUT", abs, 1);
		else
			setenv("HEAPSCOPE_OUTPUT", path, 1);
	}
	snprintf(opts, sizeof(opts),
		 "sample=%lu,unwind=%s,depth=%lu,fork=%d,exec=%s,"
		 "cpu=%lu,wall=%lu%s%s",
		 o->sample_bytes, o->unwind, o->max_depth, o->follow_fork,
		 exec_mode[o->follow_exec + 1], o->cpu_hz, o->wall_hz,
		 o->no_heap ? ",heap=0" : "", o->cpu_timer ? ",cpuclock=timer" : "");
	setenv("HEAPSCOPE_OPTIONS", opts, 1);
	if (o->manifest[0])
		setenv("HEAPSCOPE_MANIFEST", o->manifest, 1);
	if (o->dotnet_port)
		setenv("DOTNET_DiagnosticPorts", o->dotnet_port, 1);
	cli_run_gcdump_child(&o->gcdump);
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		size_t n = strlen(preload) + strlen(old) + 2;
		char *v = malloc(n);

		if (v) {
			snprintf(v, n, "%s:%s", preload, old);
			setenv("LD_PRELOAD", v, 1);
		}
	} else {
		setenv("LD_PRELOAD", preload, 1);
	}
	execvp(cmd[0], cmd);
	e = errno;
	unlink(path);
	if (write(report_fd, "E", 1) < 0 || write(report_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Whether @path is an empty regular file. */
static int empty_file(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISREG(sb.st_mode) && sb.st_size == 0;
}

/* Read the child's report: the trace name, then an exec error or EOF. */
static int read_report(int fd, char *path, size_t n, int *exec_errno, int *create_errno)
{
	char buf[PATH_MAX + 64];
	size_t len = 0;
	ssize_t k;

	while ((k = read(fd, buf + len, sizeof(buf) - 1 - len)) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		len += (size_t)k;
		if (len >= sizeof(buf) - 1)
			break;
	}
	buf[len] = '\0';
	*exec_errno = *create_errno = 0;
	path[0] = '\0';
	if (len > 0 && buf[0] == 'C' && len >= 1 + sizeof(int)) {
		memcpy(create_errno, buf + 1, sizeof(int));
		return 0;
	}
	if (len > 0 && buf[0] == 'P') {
		size_t plen = strnlen(buf + 1, len - 1);

		if (plen >= n)
			return -1;
		memcpy(path, buf + 1, plen);
		path[plen] = '\0';
		if (len >= 1 + plen + 1 + 1 + sizeof(int) && buf[1 + plen + 1] == 'E')
			memcpy(exec_errno, buf + 1 + plen + 2, sizeof(int));
	}
	return 0;
}

static pid_t target_pid;

/* --- --perf: perf record and perf script (docs/perf.md) --------------------- */

/* Run @argv (argv[0] looked up in PATH); its exit status, or -errno. */
static int spawn(char *const argv[], const char *out, int quiet)
{
	int status, fd;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (out) {
			fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
				_exit(126);
		}
		if (quiet) {
			fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				dup2(fd, STDERR_FILENO);
				if (!out)
					dup2(fd, STDOUT_FILENO);
			}
		}
		execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	target_pid = pid;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	target_pid = 0;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/*
 * Whether perf may record here: `perf record -q [-e @ev1 -e @ev2] -o
 * @data -- true` (the events may be NULL), its file removed. Returns its
 * exit status: 0, 127 when there is no perf.
 */
static int perf_probe(const char *data, const char *ev1, const char *ev2)
{
	const char *av[16];
	int n = 0, r;

	av[n++] = "perf";
	av[n++] = "record";
	av[n++] = "-q";
	if (ev1) {
		av[n++] = "-e";
		av[n++] = ev1;
		av[n++] = "-e";
		av[n++] = ev2;
	}
	av[n++] = "-o";
	av[n++] = data;
	av[n++] = "--";
	av[n++] = "true";
	av[n] = NULL;
	r = spawn((char *const *)av, NULL, 1);
	unlink(data);
	return r;
}

/*
 * Whether the perf script text in @path has an event: a line that is
 * neither blank, nor a '#' comment, nor a TAB-led frame. Reads up to the
 * first one (the file's first line, when perf recorded anything).
 */
static int has_event(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, skip, found = 0;

	if (!f)
		return 1; /* say nothing we do not know */
	while (!found && (c = getc(f)) != EOF) {
		skip = c == '#' || c == '\t'; /* c starts a line */
		for (; c != EOF && c != '\n'; c = getc(f))
			if (!skip && c != ' ' && c != '\t' && c != '\r') {
				found = 1;
				break;
			}
	}
	fclose(f);
	return found;
}

/*
 * perf recorded no sample: say so, and why it probably happened, instead
 * of pointing to a report of an empty file. @hz: the sampling rate;
 * @with_sched: whether the scheduler's tracepoints were recorded.
 */
static void no_samples(const char *cmd, const char *out, unsigned long hz, int with_sched)
{
	char buf[32] = "";
	FILE *f;

	fprintf(stderr,
		"heapscope: perf recorded no sample of %s (perf script printed "
		"nothing; %s not written)\n",
		cmd, out);
	fprintf(stderr,
		"heapscope: perf samples a program only while it runs on a CPU, "
		"and %s probably ran for less than a sampling period (1/%lu s)\n",
		cmd, hz);
	if (with_sched)
		return;
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	fprintf(stderr,
		"heapscope: the time it spent blocked or asleep needs the "
		"scheduler's tracepoints, which perf may not record here (they need "
		"root, or kernel.perf_event_paranoid at -1%s%s): see docs/perf.md\n",
		buf[0] ? "; it is " : "", buf);
}

/*
 * heapscope run --perf -- CMD: perf record (with the scheduler's
 * tracepoints when perf may record them: the thread-time source; the
 * wakeups as sched_waking, else, on kernels before 4.3, sched_wakeup)
 * and perf script into OUT (default COMM.data.txt), the commands of
 * docs/perf.md. Returns the program's exit status (perf record's), or
 * HS_EXIT_FAIL when perf cannot be run.
 */
static int run_perf(const struct run_opts *o, char **cmd, int ncmd)
{
	static const char *const sched[] = {
	    "-m",
	    "16M",
	    "--call-graph",
	    "dwarf",
	    "--sample-cpu",
	    "-e",
	    "cpu-clock",
	    "-e",
	    "sched:sched_switch",
	    "-e",
	    NULL /* wakeup */,
	    "-e",
	    "sched:sched_process_exit",
	};
	static const char *const plain[] = {"-g", "--sample-cpu", "-F", "999"};
	char out[PATH_MAX], data[PATH_MAX + 16], freq[32];
	const char **av;
	const char *base, *wakeup = NULL;
	int n = 0, k, r, with_sched;
	struct sigaction ign, old_int, old_quit;
	struct stat sb;

	base = strrchr(cmd[0], '/');
	base = base ? base + 1 : cmd[0];
	if (o->out) {
		snprintf(out, sizeof(out), "%s", o->out);
	} else {
		snprintf(out, sizeof(out), "%s.data.txt", base);
	}
	if (!stat(out, &sb))
		return cli_fail("'%s' exists; not overwriting it", out);
	snprintf(data, sizeof(data), "%s.perf.data", out);
	if (!stat(data, &sb))
		return cli_fail("'%s' exists; not overwriting it", data);
	/* is perf there, and may it record? */
	r = perf_probe(data, NULL, NULL);
	if (r == 127)
		return cli_fail("--perf needs perf, which is not on the PATH (Debian: "
				"linux-perf)");
	if (r)
		return cli_fail("perf record is refused here (kernel.perf_event_paranoid "
				"is too high, or no perf events in this container); "
				"'heapscope run --cpu' samples without perf");
	/* the scheduler's tracepoints: sched_waking is Linux 4.3's */
	if (!perf_probe(data, "sched:sched_switch", "sched:sched_waking"))
		wakeup = "sched:sched_waking";
	else if (!perf_probe(data, "sched:sched_switch", "sched:sched_wakeup"))
		wakeup = "sched:sched_wakeup";
	with_sched = wakeup != NULL;
	av = hs_calloc((size_t)ncmd + 32, sizeof(*av));
	if (!av)
		return cli_fail("out of memory");
	av[n++] = "perf";
	av[n++] = "record";
	snprintf(freq, sizeof(freq), "%lu", o->cpu_hz ? o->cpu_hz : 999);
	if (with_sched) {
		for (k = 0; k < (int)(sizeof(sched) / sizeof(sched[0])); k++)
			av[n++] = sched[k] ? sched[k] : wakeup;
		if (o->cpu_hz) {
			av[n++] = "-F";
			av[n++] = freq;
		}
	} else {
		for (k = 0; k < (int)(sizeof(plain) / sizeof(plain[0])); k++)
			av[n++] = plain[k];
		av[n - 1] = freq;
	}
	av[n++] = "-o";
	av[n++] = data;
	av[n++] = "--";
	for (k = 0; k < ncmd; k++)
		av[n++] = cmd[k];
	av[n] = NULL;
	if (!o->quiet)
		fprintf(stderr, "heapscope: perf record %s-o %s -- %s ...\n",
			with_sched
			    ? "-m 16M --call-graph dwarf --sample-cpu -e cpu-clock "
			      "-e sched:... "
			    : "-g --sample-cpu ",
			data, cmd[0]);
	if (!o->quiet && wakeup && strcmp(wakeup, "sched:sched_waking"))
		fprintf(
		    stderr,
		    "heapscope: perf has no sched:sched_waking here, so the "
		    "wakeups are sched:sched_wakeup's, which misses those the kernel "
		    "hands to an idle CPU: READIED_BY is missing there (docs/perf.md)\n");
	/* Ctrl-C is for the program (perf passes it on) */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	r = spawn((char *const *)av, NULL, 0);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (r < 0 || stat(data, &sb)) {
		hs_free(av);
		return cli_fail("perf record failed (status %d)", r);
	}
	n = 0;
	av[n++] = "perf";
	av[n++] = "script";
	av[n++] = "--no-inline";
	av[n++] = "-F";
	av[n++] = with_sched ? "comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace"
			     : "comm,pid,tid,cpu,time,period,event,ip,sym,dso";
	av[n++] = "-i";
	av[n++] = data;
	av[n] = NULL;
	k = spawn((char *const *)av, out, 1);
	hs_free(av);
	if (k) {
		unlink(out);
		return cli_fail("perf script failed (status %d); the recording is in %s",
				k, data);
	}
	unlink(data);
	if (!has_event(out)) {
		unlink(out);
		/* perf's default rate for cpu-clock is 4000 Hz */
		no_samples(cmd[0], out,
			   o->cpu_hz	? o->cpu_hz
			   : with_sched ? 4000
					: 999,
			   with_sched);
		return r;
	}
	if (!o->quiet)
		fprintf(stderr,
			"heapscope: perf script output written to %s; look at it "
			"with: heapscope report %s%s\n",
			out, out, with_sched ? " (and --source thread-time)" : "");
	return r;
}

static void forward_signal(int sig)
{
	if (target_pid > 0)
		kill(target_pid, sig);
}

/*
 * Unless --no-follow-exec without --follow-fork: the file the collector
 * lists the traces of followed children and exec'd images in ("PID PATH").
 */
static void make_manifest(struct run_opts *o)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	o->manifest[0] = '\0';
	if (!o->follow_fork && o->follow_exec < 0)
		return;
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(o->manifest, sizeof(o->manifest), "%s/heapscope-run.XXXXXX",
			     tmp) >= sizeof(o->manifest)) {
		o->manifest[0] = '\0';
		return;
	}
	fd = mkstemp(o->manifest);
	if (fd < 0) {
		o->manifest[0] = '\0';
		return;
	}
	close(fd);
}

static void drop_manifest(struct run_opts *o)
{
	if (o->manifest[0])
		unlink(o->manifest);
	o->manifest[0] = '\0';
}

/*
 * Symbolize @path in a child process. libdw ends the process it runs in
 * when memory is short (it calls exit() from its out-of-memory handler,
 * or crashes in dwarf_getsrclines() under a tight ulimit -v), and run
 * must still return the program's status. With @go_fd not -1 (a pipe's
 * read end, @other_fd its write end), the child starts once that pipe
 * is closed: the summary's pass has the file open by then
 * (cli_run_pass_start()). Returns the child's pid, or -errno.
 */
static pid_t symbolize_start(const char *path, const struct hs_symbolize_opts *so,
			     int go_fd, int other_fd)
{
	pid_t pid;
	char c;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		if (other_fd >= 0)
			close(other_fd);
		if (go_fd >= 0) {
			while (read(go_fd, &c, 1) < 0 && errno == EINTR)
				;
			close(go_fd);
		}
		/* libdw's own messages go through error(): say who we are */
		program_invocation_name = (char *)"heapscope";
		_exit(cli_symbolize(path, NULL, so, 0) == HS_EXIT_OK ? 0 : 1);
	}
	return pid < 0 ? -errno : pid;
}

/*
 * Wait for the symbolizer @pid (symbolize_start()'s result). A failure is
 * a warning: the trace is whole without its symbol section, which
 * `heapscope symbolize` writes again from the data (a section cut short
 * is replaced).
 */
static void symbolize_wait(const char *path, pid_t pid)
{
	const char *why = NULL;
	char reason[96];
	int st = 0;

	if (pid < 0) {
		snprintf(reason, sizeof(reason), "cannot start it: %s", strerror(-pid));
		why = reason;
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(st)) {
			snprintf(reason, sizeof(reason),
				 "the symbolizer was killed by signal "
				 "%d (%s)",
				 WTERMSIG(st), strsignal(WTERMSIG(st)));
			why = reason;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			why = "see above";
		}
	}
	if (why)
		fprintf(stderr,
			"heapscope: warning: symbolization of %s was skipped (%s); "
			"the trace is complete without names: 'heapscope symbolize %s' "
			"adds them later\n",
			path, why, path);
}

static void symbolize_apart(const char *path, const struct hs_symbolize_opts *so)
{
	symbolize_wait(path, symbolize_start(path, so, -1, -1));
}

/*
 * Symbolize @path while the summary's pass reads its events: the pass
 * needs the names only at its end, and the two share the cores the
 * program has left (issue 14: `run` finishes about when the program
 * does). Returns the pass for the summary, or NULL (the summary then
 * reads the trace itself).
 */
static struct cli_run_pass *symbolize_beside_summary(const char *path,
						     const struct hs_symbolize_opts *so)
{
	struct cli_run_pass *pass;
	int go[2];
	pid_t pid;

	/* the summary is of the image its exec ran: none of @path's events */
	if (cli_exec_summary_elsewhere(path)) {
		symbolize_apart(path, so);
		return NULL;
	}
	/* a trace cut inside a chunk: the symbolizer writes over its end */
	if (!hs_trace_ends_with_data(path)) {
		hs_log(HS_LOG_DEBUG,
		       "run: %s does not end with its data: symbolized "
		       "before the summary reads it",
		       path);
		symbolize_apart(path, so);
		return NULL;
	}
	if (pipe2(go, O_CLOEXEC)) {
		symbolize_apart(path, so);
		return NULL;
	}
	pid = symbolize_start(path, so, go[0], go[1]);
	close(go[0]);
	if (pid < 0) {
		close(go[1]);
		symbolize_wait(path, pid);
		return NULL;
	}
	pass = cli_run_pass_start(path, go[1]);
	symbolize_wait(path, pid);
	return pass;
}

/*
 * The traces the manifest lists: symbolized like the main one when their
 * process has ended; a process still running (a daemon) is still writing
 * its trace, which is left for `heapscope symbolize`. Removes the manifest.
 */
static void finish_children(struct run_opts *o, const struct hs_symbolize_opts *so)
{
	char line[PATH_MAX + 32];
	FILE *f;

	if (!o->manifest[0])
		return;
	f = fopen(o->manifest, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *path, *end;
		long pid = strtol(line, &path, 10);

		if (pid <= 0 || *path != ' ')
			continue;
		path++;
		end = path + strcspn(path, "\n");
		*end = '\0';
		if (kill((pid_t)pid, 0) == 0 || errno == EPERM) {
			fprintf(
			    stderr,
			    "heapscope: %s: process %ld is still running and "
			    "writing it; 'heapscope symbolize %s' once it has ended\n",
			    path, pid, path);
			continue;
		}
		if (!o->no_symbolize)
			symbolize_apart(path, so);
		if (!o->quiet)
			fprintf(stderr, "heapscope: process %ld traced into %s\n", pid,
				path);
	}
	if (f)
		fclose(f);
	drop_manifest(o);
}

static int unwind_cb(const char *cmd, const struct cli_option *opt, void *field,
		     const char *arg)
{
	if (strcmp(arg, "libunwind") && strcmp(arg, "fp") && strcmp(arg, "slow"))
		return cli_usage_error(cmd, "--unwind is libunwind or fp, not '%s'", arg);
	*(const char **)field = arg;
	return 0;
}

static int gcdump_on_cb(const char *cmd, const struct cli_option *opt, void *field,
			const char *arg)
{
	(void)opt;
	return cli_run_gcdump_signal(cmd, arg, field);
}

static int max_depth_cb(const char *cmd, const struct cli_option *opt, void *field,
			const char *arg)
{
	unsigned long *depth = field;

	if (cli_parse_ulong(cmd, "--max-depth", arg, depth))
		return HS_EXIT_USAGE;
	if (*depth > HS_DEPTH_LIMIT)
		return cli_usage_error(cmd, "--max-depth is at most %d", HS_DEPTH_LIMIT);
	return 0;
}

/* --cpu[=HZ], --wall[=HZ]: a rate, 999 Hz when not given */
static int rate_cb(const char *cmd, const struct cli_option *opt, void *field,
		   const char *arg)
{
	const char *name = opt->value ? "--wall" : "--cpu";
	unsigned long hz = 999;

	if (arg && cli_parse_ulong(cmd, name, arg, &hz))
		return HS_EXIT_USAGE;
	if (hz < 1 || hz > 10000)
		return cli_usage_error(cmd, "%s is a rate from 1 to 10000 Hz", name);
	*(unsigned long *)field = hz;
	return 0;
}

static int cpu_clock_cb(const char *cmd, const struct cli_option *opt, void *field,
			const char *arg)
{
	if (strcmp(arg, "perf") && strcmp(arg, "timer"))
		return cli_usage_error(cmd, "--cpu-clock is perf or timer, not '%s'",
				       arg);
	*(int *)field = !strcmp(arg, "timer");
	return 0;
}

static const struct cli_option run_options[] = {
    OPT_STRING('o', "output", struct run_opts, out, "FILE",
	       "the trace file (default: COMM.PID.heapscope in the\n"
	       "current directory); an existing file is never\n"
	       "overwritten"),
    OPT_ULONG(0, "sample-bytes", struct run_opts, sample_bytes, "N",
	      "record a Poisson sample of allocations, one per N\n"
	      "bytes on average (0: all); frees only of sampled\n"
	      "blocks; readers scale the samples back up"),
    OPT_CALLBACK(0, "unwind", struct run_opts, unwind, "MODE",
		 "libunwind (default: DWARF unwind rules, cached per\n"
		 "return address) or fp (frame pointers: faster,\n"
		 "needs code built with -fno-omit-frame-pointer)",
		 unwind_cb, 0),
    OPT_CALLBACK(0, "max-depth", struct run_opts, max_depth, "N",
		 "keep at most N frames of each stack (default 128);\n"
		 "deeper stacks start with a BROKEN frame",
		 max_depth_cb, 0),
    OPT_FLAG(0, "follow-fork", struct run_opts, follow_fork,
	     "children made by fork() (daemon()'s too) write\n"
	     "their own traces (COMM.PID.heapscope next to this\n"
	     "one), listed and symbolized at the end; without\n"
	     "it, tracing stops in them"),
    OPT_SET_INT(0, "follow-exec", struct run_opts, follow_exec, 1,
		"programs started by exec() are traced too, each\n"
		"into its own COMM.PID.heapscope, listed and\n"
		"symbolized at the end; without it, only CMD's own\n"
		"execs are (`sh -c 'exec prog'`, wrapper scripts),\n"
		"not its children's (docs/run.md)"),
    OPT_SET_INT(0, "no-follow-exec", struct run_opts, follow_exec, -1,
		"not even CMD's own execs: tracing stops at its\n"
		"first exec"),
    OPT_FLAG(0, "no-view", struct run_opts, no_view,
	     "do not serve the trace in the GUI afterwards (as\n"
	     "`heapscope view` does, until Ctrl-C); it is served\n"
	     "only when stdin and stdout are a terminal"),
    OPT_FLAG('q', "quiet", struct run_opts, quiet,
	     "no summary at the end (it reads the whole trace)"),
    OPT_FLAG(0, "no-symbolize", struct run_opts, no_symbolize,
	     "leave the addresses unresolved (see 'heapscope\n"
	     "symbolize'); by default names and file:line of\n"
	     "every address are stored in the trace at the end"),
    OPT_FLAG(0, "no-repack", struct run_opts, no_repack,
	     "leave the trace in the chunks written while the\n"
	     "program ran (see 'heapscope repack'); by default a\n"
	     "trace of many small chunks is rewritten at the end"),
    OPT_STRING_LIST(0, "debug-dir", struct run_opts, debug_dirs, "DIR",
		    "look for separate debug files in DIR too"),
    OPT_CALLBACK_F(0, "cpu", struct run_opts, cpu_hz, "HZ",
		   "also sample every thread's stack HZ times per second\n"
		   "of its CPU time (default 999): the 'cpu' source",
		   rate_cb, 0, CLI_OPTION_OPTIONAL_VALUE),
    OPT_CALLBACK(0, "cpu-clock", struct run_opts, cpu_timer, "CLOCK",
		 "what times --cpu: perf (default: a perf event of\n"
		 "the thread's time, where the kernel allows it)\n"
		 "or timer (POSIX CPU-clock timers, at the kernel's\n"
		 "tick rate, which never make a sleep return EINTR;\n"
		 "docs/cpu.md)",
		 cpu_clock_cb, 0),
    OPT_CALLBACK_F(0, "wall", struct run_opts, wall_hz, "HZ",
		   "also sample every thread HZ times per second of\n"
		   "wall-clock time (default 999), running or blocked:\n"
		   "the 'wall' source: CPU_TIME, BLOCKED_TIME and\n"
		   "READIED_TIME",
		   rate_cb, 1, CLI_OPTION_OPTIONAL_VALUE),
    OPT_FLAG(0, "no-heap", struct run_opts, no_heap,
	     "record no heap events, only the samples"),
    OPT_FLAG(0, "perf", struct run_opts, perf,
	     "record CMD with perf instead (perf record -g, with\n"
	     "the scheduler's events when allowed, then perf\n"
	     "script into -o FILE, default COMM.data.txt: the\n"
	     "commands of docs/perf.md); --cpu=HZ sets its rate"),
    OPT_SET_INT(0, "dotnet", struct run_opts, dotnet, 1,
		"also record the .NET runtime's events (GC allocation\n"
		"ticks, GCs, JIT, exceptions, the SampleProfiler)\n"
		"through a diagnostic port into COMM.PID.nettrace;\n"
		"the default when CMD is `dotnet` or an apphost"),
    OPT_SET_INT(0, "no-dotnet", struct run_opts, dotnet, -1,
		"do not record the .NET runtime's events"),
    OPT_STRING_LIST(0, "providers", struct run_opts, providers, "LIST",
		    "more .NET providers, in dotnet-trace's syntax:\n"
		    "Provider[:keywords[:level[:key=value;...]]],...\n"
		    "(one of the same name replaces heapscope's)"),
    OPT_CALLBACK(0, "gcdump-on", struct run_opts, gcdump.signo, "SIG",
		 "for .NET: a heap snapshot (NAME.PID.N.gcdump) each\n"
		 "time heapscope receives SIG (e.g. SIGUSR2)",
		 gcdump_on_cb, 0),
    OPT_FLAG(0, "gcdump-at-exit", struct run_opts, gcdump.at_exit,
	     "for .NET: a heap snapshot when the program's Main\n"
	     "returns, or when SIGTERM or SIGHUP to heapscope\n"
	     "ends the run, before the program gets it"),
    OPT_END(),
};

/* The options end at CMD: what follows is CMD's own. */
const struct cli_syntax cli_run_syntax = {
    .cmd = "run",
    .usage =
	"usage: heapscope run [-o FILE] [--sample-bytes N] [--unwind libunwind|fp]\n"
	"                     [--max-depth N] [--follow-fork] [--[no-]follow-exec]\n"
	"                     [--no-view] [--no-symbolize] [--debug-dir DIR]...\n"
	"                     [--cpu[=HZ]] [--cpu-clock perf|timer] [--wall[=HZ]]\n"
	"                     [--no-heap] [--perf] [--[no-]dotnet] [--providers LIST]\n"
	"                     [--gcdump-on SIG] [--gcdump-at-exit]\n"
	"                     [-q] [--] CMD [ARGS...]\n",
    .intro =
	"Run CMD with heapscope's collector preloaded and record every heap\n"
	"allocation and free (malloc, calloc, realloc, the aligned variants, C++\n"
	"new and delete, anonymous mmap) with its call stack, into a trace file.\n"
	"The exit status is CMD's (128+N if signal N killed it). At the end a\n"
	"summary goes to stderr; CMD's own output is untouched.\n"
	"\n"
	"For a .NET program (`dotnet app.dll`, or an apphost) the runtime's events\n"
	"are recorded too, as `heapscope attach` does, into COMM.PID.nettrace beside\n"
	"the trace (docs/dotnet.md); --gcdump-on and --gcdump-at-exit take heap\n"
	"snapshots of it as `heapscope gcdump` does.\n",
    .options = run_options,
    .flags = CLI_SYNTAX_STOP_AT_OPERAND,
    .help_column = 26,
};

int cmd_run(int argc, char **argv)
{
	struct run_opts o = {.unwind = "libunwind", .max_depth = 128};
	struct sigaction ign, old_int, old_quit, fwd, old_term, old_hup;
	char preload[PATH_MAX], path[PATH_MAX] = "";
	int i, n, pipefd[2], status, exec_errno = 0, create_errno = 0, made = 0;
	int dotnet = 0, have_nettrace = 0;
	struct hs_dipc_providers providers = {0};
	struct hs_dipc_collect req;
	struct cli_dotnet_run dr;
	struct cli_run_pass *pass = NULL;
	pid_t pid;

	memset(&dr, 0, sizeof(dr));

	n = cli_parse_options(&cli_run_syntax, &o, argc, argv, &status);
	for (i = 0; n >= 0 && i < (int)o.debug_dirs.nr; i++) {
		struct stat sb;

		if (stat(o.debug_dirs.v[i], &sb) || !S_ISDIR(sb.st_mode)) {
			status =
			    cli_usage_error("run", "--debug-dir '%s' is not a directory",
					    o.debug_dirs.v[i]);
			n = -1;
		}
	}
	if (n == 0) {
		status = cli_usage_error("run", "no program to run");
		n = -1;
	}
	if (n < 0) {
		cli_string_list_release(&o.debug_dirs);
		cli_string_list_release(&o.providers);
		return status;
	}
	if (o.dotnet > 0 && o.perf)
		return cli_usage_error("run", "--dotnet does not go with --perf");
	dotnet = o.dotnet > 0 || (!o.dotnet && !o.perf && cli_dotnet_program(argv[0]));
	if (o.providers.nr && !dotnet) {
		cli_string_list_release(&o.providers);
		return cli_usage_error("run",
				       "--providers is for a .NET program (--dotnet)");
	}
	if ((o.gcdump.signo || o.gcdump.at_exit) && !dotnet)
		return cli_usage_error("run", "--gcdump-on and --gcdump-at-exit are for "
					      "a .NET program (--dotnet)");
	o.gcdump.quiet = o.quiet;
	if (o.no_heap && !o.cpu_hz && !o.wall_hz)
		return cli_usage_error("run", "--no-heap needs --cpu or --wall");
	if (o.cpu_timer && !o.cpu_hz)
		return cli_usage_error("run", "--cpu-clock goes with --cpu");
	if (o.perf) {
		int r;

		if (o.wall_hz || o.no_heap || o.sample_bytes || o.follow_fork ||
		    o.follow_exec > 0)
			return cli_usage_error("run",
					       "--perf records with perf alone: "
					       "only -o, -q and --cpu=HZ go with it");
		r = run_perf(&o, argv, n);
		cli_string_list_release(&o.debug_dirs);
		return r;
	}
	if (find_preload(preload, sizeof(preload)))
		return cli_fail("cannot find %s next to heapscope or in %s/heapscope",
				PRELOAD_NAME, HS_LIBDIR);
	if (o.out) {
		int fd = open(o.out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

		if (fd < 0) {
			if (errno == EEXIST)
				return cli_fail("'%s' exists; not overwriting it", o.out);
			return cli_fail("cannot create '%s': %s", o.out, strerror(errno));
		}
		close(fd);
		made = 1;
	}
	if (dotnet) {
		status = cli_dotnet_providers("run", &o.providers, &providers);
		if (!status) {
			cli_dotnet_request(&providers, &req);
			status = cli_dotnet_run_listen(&dr, &req);
		}
		if (status) {
			cli_string_list_release(&o.providers);
			cli_string_list_release(&o.debug_dirs);
			hs_dipc_providers_release(&providers);
			if (made)
				unlink(o.out);
			return status;
		}
		o.dotnet_port = dr.env;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		int e = errno;

		if (dotnet)
			cli_dotnet_run_finish(&dr, 1);
		if (made)
			unlink(o.out);
		return cli_fail("cannot create a pipe: %s", strerror(e));
	}
	make_manifest(&o);
	cli_run_gcdump_prepare(&o.gcdump);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		drop_manifest(&o);
		if (dotnet)
			cli_dotnet_run_finish(&dr, 1);
		if (made)
			unlink(o.out);
		return cli_fail("cannot fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(pipefd[0]);
		child(&o, preload, made ? o.out : NULL, argv, pipefd[1]);
	}
	target_pid = pid;
	close(pipefd[1]);
	cli_run_gcdump_forked(&o.gcdump);
	/* Ctrl-C and Ctrl-\ are for the program; we summarise after it */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	memset(&fwd, 0, sizeof(fwd));
	fwd.sa_handler = forward_signal;
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);
	read_report(pipefd[0], path, sizeof(path), &exec_errno, &create_errno);
	close(pipefd[0]);
	if (dotnet && path[0] && !exec_errno)
		cli_dotnet_run_start(&dr, pid, path);
	if (dotnet && !exec_errno)
		cli_run_gcdump_arm(&o.gcdump, pid, path);
	while (cli_run_gcdump_waitpid(&o.gcdump, pid, &status) < 0) {
		if (errno != EINTR) {
			status = 127 << 8;
			break;
		}
	}
	cli_run_gcdump_disarm(&o.gcdump);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (dotnet) {
		have_nettrace = cli_dotnet_run_finish(&dr, o.quiet);
		hs_dipc_providers_release(&providers);
		cli_string_list_release(&o.providers);
	}
	if (create_errno) {
		fprintf(stderr,
			"heapscope: error: cannot create a trace file in the "
			"current directory: %s\n",
			strerror(create_errno));
		drop_manifest(&o);
		return HS_EXIT_FAIL;
	}
	if (exec_errno) {
		fprintf(stderr, "heapscope: error: cannot run '%s': %s\n", argv[0],
			strerror(exec_errno));
		drop_manifest(&o);
		if (made)
			unlink(o.out);
		return exec_errno == ENOENT ? 127 : 126;
	}
	if (path[0] && empty_file(path)) {
		/* the collector never started in the program */
		fprintf(stderr,
			"heapscope: %s did not load the collector, so nothing was "
			"traced (a statically linked program, a setuid one, or one that "
			"drops LD_PRELOAD before it runs cannot be traced)\n",
			argv[0]);
		unlink(path);
		path[0] = '\0';
	}
	{
		struct hs_symbolize_opts so = {
		    .debug_dirs = o.debug_dirs.v,
		    .nr_debug_dirs = o.debug_dirs.nr,
		};

		/* bigger chunks first: what reads the trace next reads those */
		if (path[0] && !o.no_repack)
			cli_repack_after_run(path);
		if (path[0] && !o.no_symbolize && !o.quiet)
			pass = symbolize_beside_summary(path, &so);
		else if (path[0] && !o.no_symbolize)
			symbolize_apart(path, &so);
		finish_children(&o, &so);
	}
	cli_string_list_release(&o.debug_dirs);
	if (path[0] && !o.quiet)
		cli_exec_summarize(path, WIFEXITED(status), pass);
	else
		cli_run_pass_free(pass);
	/* then the viewer, for a person at a terminal (scripts get their status) */
	if (path[0] && !o.no_view && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		char *paths[] = {path, dr.out};
		const struct cli_view_opts vo = {0};

		cli_view_files(have_nettrace ? 2 : 1, paths, NULL, &vo);
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "heapscope: %s was killed by signal %d (%s)\n", argv[0],
			WTERMSIG(status), strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : HS_EXIT_FAIL;
}
