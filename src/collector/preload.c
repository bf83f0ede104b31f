/*
 * preload - the collector's life cycle: finding the real functions,
 * start-up from HEAPSCOPE_OPTIONS, fork, exec, _exit, fatal signals and
 * the end of the program.
 *
 * The environment `heapscope run` sets:
 *   HEAPSCOPE_OUTPUT   the trace file it created for this process (empty);
 *                      removed at start-up so children do not reuse it
 *   HEAPSCOPE_OPTIONS  sample=N,unwind=libunwind|fp|slow|check,depth=N,fork=0|1,
 *                      exec=0|1|main,cpu=HZ,wall=HZ,cpuclock=timer,heap=0 (check:
 *                      libunwind, each fast walk (and each stack the memo
 *                      gave, walked again) compared with libunwind alone,
 *                      the differences told at exit; cpu, wall: stack
 *                      sampling rates, cpu.c; cpuclock=timer: CPU samples by
 *                      POSIX timers even where perf events are allowed;
 *                      heap=0: no heap events)
 *   HEAPSCOPE_DIR      where traces of followed children go
 *   HEAPSCOPE_MANIFEST a file where each trace this library starts for a
 *                      followed child or exec'd image is listed, as a
 *                      line "PID PATH", for `heapscope run` to symbolize
 * Without HEAPSCOPE_OUTPUT (the library preloaded by hand, or an image
 * started by exec) the trace is <comm>.<pid>.heapscope in HEAPSCOPE_DIR or
 * the working directory. Without follow-exec, start-up removes the library
 * from LD_PRELOAD so that programs started by this one run untraced.
 * exec=main (run's default) follows the exec chain of the process run
 * started, and only it: start-up keeps a copy of the three variables and
 * of the library's LD_PRELOAD entry, removes them as without follow-exec,
 * and an exec by that pid puts them back into the new image's
 * environment; its forked children (and their execs) see none of them.
 */
#include "collector/collector.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct hs_config hs_cfg = {.max_depth = 128};
struct hs_real hs_real;
_Atomic int hs_on;
_Atomic uint64_t hs_gen;
pid_t hs_pid;
uint64_t hs_start_ns;
size_t hs_page_size = 4096;

static char manifest[1024]; /* HEAPSCOPE_MANIFEST, or "" */
/* exec=main: the pid whose execs are followed (0: none), and what they get */
static int exec_chain; /* HEAPSCOPE_OPTIONS said exec=main */
static pid_t chain_pid;
static char chain_preload[1100]; /* this library's LD_PRELOAD entry */
static char chain_vars[3][1100]; /* "HEAPSCOPE_OPTIONS=...", _DIR, _MANIFEST */
static int saved_argc;
static char **saved_argv;
static char *const empty_argv[] = {NULL};

/* --- messages ---------------------------------------------------------- */

void hs_msg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	memcpy(buf, "heapscope: ", 11);
	va_start(ap, fmt);
	n = vsnprintf(buf + 11, sizeof(buf) - 12, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n += 11;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		return;
}

/* --- the real functions ------------------------------------------------ */

static _Atomic int resolving;
_Atomic int hs_real_ready;

void hs_resolve_real(void)
{
	if (HS_LIKELY(atomic_load_explicit(&hs_real_ready, memory_order_acquire)))
		return;
	atomic_store(&resolving, 1);
#define R(name) *(void **)&hs_real.name = dlsym(RTLD_NEXT, #name)
	R(malloc);
	R(free);
	R(calloc);
	R(realloc);
	R(reallocarray);
	R(posix_memalign);
	R(aligned_alloc);
	R(memalign);
	R(valloc);
	R(pvalloc);
	R(mmap);
	R(mmap64);
	R(munmap);
	R(mremap);
	R(dlclose);
	R(fork);
	R(execve);
	R(execv);
	R(execvp);
	R(execvpe);
	R(fexecve);
	R(_exit);
	R(_Exit);
	R(sigaction);
	R(signal);
	R(sysv_signal);
	R(sigset);
	R(pthread_setname_np);
	R(prctl);
	R(close);
	R(close_range);
#undef R
	atomic_store(&resolving, 0);
	atomic_store_explicit(&hs_real_ready, 1, memory_order_release);
}

int hs_resolving(void) HS_HIDDEN;
int hs_resolving(void)
{
	return atomic_load(&resolving);
}

/* --- configuration ----------------------------------------------------- */

static void parse_options(const char *s)
{
	while (s && *s) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		unsigned long long v;
		char *num_end;

		if (n > 7 && !strncmp(s, "sample=", 7)) {
			v = strtoull(s + 7, &num_end, 10);
			hs_cfg.sample_bytes = v;
		} else if (n > 6 && !strncmp(s, "depth=", 6)) {
			v = strtoull(s + 6, &num_end, 10);
			hs_cfg.max_depth =
			    v > HS_DEPTH_LIMIT ? HS_DEPTH_LIMIT : (unsigned)v;
		} else if (n == 9 && !strncmp(s, "unwind=fp", 9)) {
			hs_cfg.unwind = HS_UNWIND_FP;
		} else if (n == 11 && !strncmp(s, "unwind=slow", 11)) {
			hs_cfg.unwind = HS_UNWIND_SLOW;
		} else if (n == 16 && !strncmp(s, "unwind=libunwind", 16)) {
			hs_cfg.unwind = HS_UNWIND_LIBUNWIND;
		} else if (n == 12 && !strncmp(s, "unwind=check", 12)) {
			/* libunwind's results, checked against libunwind alone */
			hs_cfg.unwind = HS_UNWIND_LIBUNWIND;
			hs_cfg.check_unwind = 1;
		} else if (n > 4 && !strncmp(s, "cpu=", 4)) {
			v = strtoull(s + 4, NULL, 10);
			hs_cfg.cpu_hz = v > 100000 ? 100000 : (unsigned)v;
		} else if (n > 5 && !strncmp(s, "wall=", 5)) {
			v = strtoull(s + 5, NULL, 10);
			hs_cfg.wall_hz = v > 100000 ? 100000 : (unsigned)v;
		} else if (n == 14 && !strncmp(s, "cpuclock=timer", 14)) {
			hs_cfg.cpu_timer = 1;
		} else if (n == 6 && !strncmp(s, "heap=0", 6)) {
			hs_cfg.no_heap = 1;
		} else if (n == 6 && !strncmp(s, "fork=1", 6)) {
			hs_cfg.follow_fork = 1;
		} else if (n == 6 && !strncmp(s, "exec=1", 6)) {
			hs_cfg.follow_exec = 1;
		} else if (n == 9 && !strncmp(s, "exec=main", 9)) {
			exec_chain = 1;
		}
		s = end ? end + 1 : NULL;
	}
}

/*
 * Remove our own entry from LD_PRELOAD, in place (no allocation); the
 * last one removed is copied to @removed (@size bytes, "" if none).
 */
static void strip_preload(char *removed, size_t size)
{
	char *v = getenv("LD_PRELOAD");
	Dl_info info;
	const char *self, *base;
	char *p;

	removed[0] = '\0';
	if (!v || !dladdr((void *)strip_preload, &info) || !info.dli_fname)
		return;
	self = info.dli_fname;
	base = strrchr(self, '/');
	base = base ? base + 1 : self;
	p = v;
	while (*p) {
		char *start, *end;
		const char *b;
		size_t len;

		while (*p == ' ' || *p == ':')
			p++;
		start = p;
		while (*p && *p != ' ' && *p != ':')
			p++;
		end = p;
		len = (size_t)(end - start);
		if (!len)
			break;
		for (b = end; b > start && b[-1] != '/'; b--)
			;
		if ((size_t)(end - b) == strlen(base) && !memcmp(b, base, strlen(base))) {
			if (len < size) {
				memcpy(removed, start, len);
				removed[len] = '\0';
			}
			memmove(start, end, strlen(end) + 1);
			p = start;
		}
	}
	if (!v[strspn(v, " :")])
		unsetenv("LD_PRELOAD");
}

static void start_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	hs_start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	atomic_store(&hs_coarse_ticks, 0);
}

/* The name of a new trace: DIR/COMM.PID.heapscope, made unique. */
static int create_name(char *buf, size_t size)
{
	char comm[17] = "";
	int i;

	syscall(SYS_prctl, PR_GET_NAME, comm, 0, 0, 0);
	for (i = 1; i < 1000; i++) {
		int n;

		if (i == 1)
			n = snprintf(buf, size, "%s%s%s.%d.heapscope", hs_cfg.dir,
				     hs_cfg.dir[0] ? "/" : "", comm, (int)hs_pid);
		else
			n = snprintf(buf, size, "%s%s%s.%d.%d.heapscope", hs_cfg.dir,
				     hs_cfg.dir[0] ? "/" : "", comm, (int)hs_pid, i);
		if (n < 0 || (size_t)n >= size)
			return -1;
		if (access(buf, F_OK))
			return 0;
	}
	return -1;
}

/* List a trace this library started in the manifest (no allocation). */
static void note_trace(const char *path)
{
	char line[1300];
	int n, fd;

	if (!manifest[0])
		return;
	n = snprintf(line, sizeof(line), "%d %s\n", (int)hs_pid, path);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		hs_msg("cannot list %s in %s: %s", path, manifest, strerror(errno));
	close(fd);
}

/* Start a trace of this process: writer, main thread, modules, signals. */
static int start_tracing(const char *path, int precreated, unsigned flags,
			 uint64_t parent_pid)
{
	struct hs_thread *t;
	char name[1200];

	if (!path) {
		if (create_name(name, sizeof(name))) {
			hs_msg("cannot name a trace file in '%s'; not tracing",
			       hs_cfg.dir);
			return -1;
		}
		path = name;
	}
	if (hs_writer_start(path, precreated, flags, parent_pid, saved_argc,
			    saved_argv ? saved_argv : (char **)empty_argv))
		return -1;
	if (!precreated)
		note_trace(path);
	t = hs_thread_get();
	if (!t)
		return -1;
	hs_modules_scan(t);
	hs_thread_reserve();
	return 0;
}

static void atfork_prepare(void);
static void atfork_child(void);

/* exec=main: keep what an exec of this pid puts back (chain_env()). */
static void keep_chain_env(void)
{
	static const char *const names[3] = {"HEAPSCOPE_OPTIONS", "HEAPSCOPE_DIR",
					     "HEAPSCOPE_MANIFEST"};
	int i;

	for (i = 0; i < 3; i++) {
		const char *v = getenv(names[i]);
		int n;

		chain_vars[i][0] = '\0';
		if (!v)
			continue;
		n = snprintf(chain_vars[i], sizeof(chain_vars[i]), "%s=%s", names[i], v);
		if (n < 0 || (size_t)n >= sizeof(chain_vars[i])) {
			hs_msg("%s is too long; a program this one execs is not traced",
			       names[i]);
			return;
		}
	}
	chain_pid = getpid();
}

/*
 * exec=main, in the pid whose execs are followed: @envp with the
 * variables start-up removed put back (this library first in LD_PRELOAD,
 * before the program's own entries), in one block to hs_real.free();
 * NULL otherwise, or when out of memory (then the image is not traced).
 */
static char **chain_env(char *const envp[])
{
	static const char ld[] = "LD_PRELOAD=";
	size_t n = 0, k = 0, size;
	const char *theirs = "";
	char **v, *text;
	int i;

	if (!chain_pid || getpid() != chain_pid)
		return NULL;
	while (envp && envp[n])
		n++;
	for (i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], ld, sizeof(ld) - 1))
			theirs = envp[i] + sizeof(ld) - 1;
	size = (n + 5) * sizeof(char *) + sizeof(ld) + strlen(chain_preload) + 1 +
	       strlen(theirs);
	v = hs_real.malloc(size);
	if (!v) {
		hs_msg("out of memory; the program exec'd is not traced");
		return NULL;
	}
	text = (char *)(v + n + 5);
	snprintf(text, size - (n + 5) * sizeof(char *), "%s%s%s%s", ld, chain_preload,
		 *theirs ? ":" : "", theirs);
	v[k++] = text;
	for (i = 0; i < 3; i++)
		if (chain_vars[i][0])
			v[k++] = chain_vars[i];
	for (i = 0; envp && envp[i]; i++) {
		if (!strncmp(envp[i], ld, sizeof(ld) - 1) ||
		    !strncmp(envp[i], "HEAPSCOPE_OPTIONS=", 18) ||
		    !strncmp(envp[i], "HEAPSCOPE_DIR=", 14) ||
		    !strncmp(envp[i], "HEAPSCOPE_MANIFEST=", 19) ||
		    !strncmp(envp[i], "HEAPSCOPE_OUTPUT=", 17))
			continue;
		v[k++] = envp[i];
	}
	v[k] = NULL;
	return v;
}

/* Free what chain_env() returned, after an exec that failed: errno stays. */
static void drop_env(char **env)
{
	int e = errno;

	hs_real.free(env);
	errno = e;
}

__attribute__((constructor(101))) static void hs_init(int argc, char **argv, char **envp)
{
	const char *out, *opts, *dir;
	unsigned flags = 0;
	long ps;

	/*
	 * The library is linked with -z initfirst, so that the allocations of
	 * other libraries' constructors are traced too: this runs before the
	 * C library's own constructor has set environ, to the @envp it will
	 * set it to.
	 */
	if (!environ)
		environ = envp;
	hs_resolve_real();
	if (!hs_real.malloc || !hs_real.free) {
		hs_msg("cannot find the allocator's functions; not tracing");
		return;
	}
	hs_tls.guard = 1;
	saved_argc = argc;
	saved_argv = argv;
	hs_pid = getpid();
	ps = sysconf(_SC_PAGESIZE);
	hs_page_size = ps > 0 ? (size_t)ps : 4096;
	opts = getenv("HEAPSCOPE_OPTIONS");
	parse_options(opts);
	dir = getenv("HEAPSCOPE_DIR");
	if (dir)
		snprintf(hs_cfg.dir, sizeof(hs_cfg.dir), "%s", dir);
	if (getenv("HEAPSCOPE_MANIFEST"))
		snprintf(manifest, sizeof(manifest), "%s", getenv("HEAPSCOPE_MANIFEST"));
	if (hs_cfg.follow_fork)
		flags |= HS_PROC_FOLLOW_FORK;
	if (hs_cfg.follow_exec || exec_chain)
		flags |= HS_PROC_FOLLOW_EXEC;
	hs_precise_clock = hs_cfg.sample_bytes != 0 || hs_cfg.no_heap;
	out = getenv("HEAPSCOPE_OUTPUT");
	if (!out && opts)
		flags |= HS_PROC_EXECED;
	start_clock();
	if (hs_stacks_init() || hs_thread_init()) {
		hs_msg("out of memory; not tracing");
		hs_tls.guard = 0;
		return;
	}
	if (!start_tracing(out, out != NULL, flags, 0)) {
		hs_signals_install();
		atomic_store(&hs_on, hs_cfg.no_heap ? 2 : 1);
		hs_cpu_start();
	}
	/* after cpu.c's: a child's handlers run in this order, ours last */
	pthread_atfork(atfork_prepare, NULL, atfork_child);
	/* after the file is open: the name must not leak to children */
	if (out)
		unsetenv("HEAPSCOPE_OUTPUT");
	if (!hs_cfg.follow_exec) {
		if (exec_chain)
			keep_chain_env();
		strip_preload(chain_preload, sizeof(chain_preload));
		if (!chain_preload[0])
			chain_pid = 0;
		unsetenv("HEAPSCOPE_OPTIONS");
		unsetenv("HEAPSCOPE_DIR");
		unsetenv("HEAPSCOPE_MANIFEST");
	}
	hs_tls.guard = 0;
}

void hs_shutdown(unsigned reason, uint64_t detail)
{
	hs_cpu_stop();
	atomic_store(&hs_on, 0);
	hs_writer_finish(reason, detail, 0);
}

/*
 * libstdc++ allocates its emergency exception pool (72,704 bytes with
 * GCC 12) when it is loaded and frees it only in its free-at-exit hook
 * __gnu_cxx::__freeres(), which memcheck and heaptrack call at the exit;
 * without it the pool is a leak of every C++ program, and a nameless one
 * (libstdc++.so.6!?) where libstdc++ has no debug information. Called
 * once, on the exit() path of the traced process only (not on _exit, a
 * fatal signal or exec), with the hooks on so that its free is recorded.
 * The hook only frees the pool, which libstdc++ uses only when malloc
 * fails in a throw. libc's __libc_freeres is not called: it tears down
 * stdio, the loader's and the threads' state while other libraries'
 * destructors and other threads may still run, and the blocks it frees
 * are the leaks view's known exit-time allocations already.
 */
static void run_freeres_hooks(void)
{
	static _Atomic int ran;
	void (*cxx_freeres)(void);
	int expect = 0, saved_guard = hs_tls.guard;

	if (atomic_load(&hs_on) != 1 || !atomic_compare_exchange_strong(&ran, &expect, 1))
		return;
	/* untraced: a failed dlsym allocates its error message */
	hs_tls.guard = 1;
	*(void **)&cxx_freeres = dlsym(RTLD_DEFAULT, "_ZN9__gnu_cxx9__freeresEv");
	if (!cxx_freeres)
		(void)dlerror();
	hs_tls.guard = saved_guard;
	if (cxx_freeres)
		cxx_freeres();
}

__attribute__((destructor)) static void hs_fini(void)
{
	if (getpid() != hs_pid)
		return;
	run_freeres_hooks();
	hs_tls.guard = 1;
	hs_shutdown(HS_END_EXIT, 0);
	if (hs_cfg.check_unwind)
		hs_unwind_report();
	hs_tls.guard = 0;
}

/* --- fork ----------------------------------------------------------------- */

static void child_restart(pid_t parent)
{
	struct hs_thread *t;
	uint8_t body[40], *q;
	char name[17] = "";

	hs_pid = getpid();
	pthread_mutex_init(&hs_unwind_lock, NULL);
	hs_sampler_after_fork();
	hs_writer_forget();
	hs_thread_after_fork();
	hs_stacks_restart();
	if (hs_writer_start_child(parent))
		return;
	t = hs_tls.t;
	if (t) {
		syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
		q = hs_enc_thread_start_body(body, hs_now_ticks(), name,
					     strnlen(name, 16));
		hs_emit_sized(t, HS_TAG_THREAD_START, body, (size_t)(q - body));
		hs_modules_reemit(t);
	} else if (!hs_thread_get()) {
		return;
	}
	atomic_store(&hs_on, hs_cfg.no_heap ? 2 : 1);
	hs_cpu_follow_child();
}

int hs_writer_start_child(pid_t parent)
{
	char name[1200];
	unsigned flags = HS_PROC_FORKED | HS_PROC_FOLLOW_FORK;

	if (hs_cfg.follow_exec)
		flags |= HS_PROC_FOLLOW_EXEC;
	if (create_name(name, sizeof(name))) {
		hs_msg("cannot name a trace file for child %d; not tracing it",
		       (int)hs_pid);
		return -1;
	}
	if (hs_writer_start(name, 0, flags, (uint64_t)parent, saved_argc,
			    saved_argv ? saved_argv : (char **)empty_argv))
		return -1;
	note_trace(name);
	return 0;
}

/*
 * Forks are followed from the atfork handlers, which run for every fork()
 * glibc makes, also those of daemon() and forkpty() that do not go
 * through the fork() below. The parent decides in atfork_prepare() (on
 * the forking thread) whether the child is traced; the child starts its
 * own trace or forgets the parent's in atfork_child(). A child made
 * without the handlers (_Fork(), a raw clone) cannot be told apart here:
 * its records go to rings nobody drains, and the first ring that fills
 * up stops tracing in it (thread.c, wait_room()).
 */
static __thread int fork_traced; /* the fork being made is followed */
static __thread pid_t fork_parent;

static void atfork_prepare(void)
{
	fork_parent = getpid();
	fork_traced = atomic_load(&hs_on) && fork_parent == hs_pid &&
		      (!hs_tls.guard || hs_tls.in_fork);
}

static void atfork_child(void)
{
	int e = errno, guard = hs_tls.guard;

	hs_tls.guard = 1;
	if (fork_traced && hs_cfg.follow_fork) {
		child_restart(fork_parent);
	} else {
		atomic_store(&hs_on, 0);
		hs_writer_forget();
	}
	hs_tls.guard = guard;
	errno = e;
}

/* fork() itself only adds the FORK record (with the child's pid) to the parent. */
HS_EXPORT pid_t fork(void)
{
	int saved_guard = hs_tls.guard;
	pid_t pid;

	hs_resolve_real();
	/* a fork from inside a hook (a signal handler's) is not followed */
	hs_tls.in_fork = !saved_guard;
	hs_tls.guard = 1;
	pid = hs_real.fork();
	hs_tls.in_fork = 0;
	if (pid > 0 && fork_traced) {
		struct hs_thread *t = hs_thread_get();

		if (t) {
			uint8_t body[3 * HS_VARINT_MAX], *q;
			int e = errno;

			q = hs_enc_fork_body(body, hs_now_ticks(), (uint64_t)pid,
					     (uint64_t)hs_cfg.follow_fork);
			hs_emit_sized(t, HS_TAG_FORK, body, (size_t)(q - body));
			errno = e;
		}
	}
	hs_tls.guard = saved_guard;
	return pid;
}

/* --- exec and _exit ------------------------------------------------------- */

/* Before the image is replaced: END the trace (resumed if exec fails). */
static int before_exec(const char *path)
{
	struct hs_thread *t;
	uint8_t body[1100], *q;
	size_t n;

	if (!atomic_load(&hs_on) || hs_tls.guard || getpid() != hs_pid)
		return 0;
	hs_tls.guard = 1;
	t = hs_thread_get();
	if (t && path) {
		n = strnlen(path, 1024);
		q = hs_enc_exec_body(body, hs_now_ticks(), path, n);
		hs_emit_sized(t, HS_TAG_EXEC, body, (size_t)(q - body));
	}
	hs_cpu_stop(); /* not resumed if exec fails */
	atomic_store(&hs_on, 0);
	hs_writer_pause_for_exec();
	hs_tls.guard = 0;
	return 1;
}

static void after_failed_exec(int paused)
{
	int e = errno;

	if (paused) {
		hs_tls.guard = 1;
		hs_writer_resume();
		atomic_store(&hs_on, hs_cfg.no_heap ? 2 : 1);
		hs_tls.guard = 0;
	}
	errno = e;
}

HS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	char **env;
	int paused, r;

	hs_resolve_real();
	paused = before_exec(path);
	env = chain_env(envp);
	r = hs_real.execve(path, argv, env ? env : envp);
	drop_env(env);
	after_failed_exec(paused);
	return r;
}

HS_EXPORT int execv(const char *path, char *const argv[])
{
	char **env;
	int paused, r;

	hs_resolve_real();
	paused = before_exec(path);
	env = chain_env(environ);
	r = env ? hs_real.execve(path, argv, env) : hs_real.execv(path, argv);
	drop_env(env);
	after_failed_exec(paused);
	return r;
}

HS_EXPORT int execvp(const char *file, char *const argv[])
{
	char **env;
	int paused, r;

	hs_resolve_real();
	paused = before_exec(file);
	env = chain_env(environ);
	r = env ? hs_real.execvpe(file, argv, env) : hs_real.execvp(file, argv);
	drop_env(env);
	after_failed_exec(paused);
	return r;
}

HS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char **env;
	int paused, r;

	hs_resolve_real();
	paused = before_exec(file);
	env = chain_env(envp);
	r = hs_real.execvpe(file, argv, env ? env : envp);
	drop_env(env);
	after_failed_exec(paused);
	return r;
}

HS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char **env;
	int paused, r;

	hs_resolve_real();
	paused = before_exec("(fexecve)");
	env = chain_env(envp);
	r = hs_real.fexecve(fd, argv, env ? env : envp);
	drop_env(env);
	after_failed_exec(paused);
	return r;
}

/*
 * execl, execle, execlp: glibc's versions call execve internally, where
 * no wrapper sees them, so they are rebuilt here on the vector forms.
 */
#define MAX_LIST_ARGS (1 << 20)

static char **list_args(const char *arg0, va_list ap, char ***envp_out, int want_envp)
{
	char **v;
	size_t n = 1, cap = 64;
	const char *a;

	v = hs_real.malloc(cap * sizeof(char *));
	if (!v)
		return NULL;
	v[0] = (char *)arg0;
	while ((a = va_arg(ap, const char *)) != NULL) {
		if (n + 1 >= cap) {
			char **nv;

			if (cap >= MAX_LIST_ARGS) {
				hs_real.free(v);
				errno = E2BIG;
				return NULL;
			}
			nv = hs_real.realloc(v, 2 * cap * sizeof(char *));
			if (!nv) {
				hs_real.free(v);
				return NULL;
			}
			v = nv;
			cap *= 2;
		}
		v[n++] = (char *)a;
	}
	v[n] = NULL;
	if (want_envp)
		*envp_out = va_arg(ap, char **);
	return v;
}

enum list_exec { LIST_EXECV, LIST_EXECVP, LIST_EXECVE };

/* Run @v (from list_args(), NULL if that failed) by @how, then free it. */
static int exec_list(enum list_exec how, const char *path, char **v, char **envp)
{
	int r;

	if (!v)
		return -1;
	switch (how) {
	case LIST_EXECVP:
		r = execvp(path, v);
		break;
	case LIST_EXECVE:
		r = execve(path, v, envp);
		break;
	default:
		r = execv(path, v);
		break;
	}
	hs_real.free(v);
	return r;
}

HS_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	char **v;

	hs_resolve_real();
	va_start(ap, arg);
	v = list_args(arg, ap, NULL, 0);
	va_end(ap);
	return exec_list(LIST_EXECV, path, v, NULL);
}

HS_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	char **v;

	hs_resolve_real();
	va_start(ap, arg);
	v = list_args(arg, ap, NULL, 0);
	va_end(ap);
	return exec_list(LIST_EXECVP, file, v, NULL);
}

HS_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **v, **envp = NULL;

	hs_resolve_real();
	va_start(ap, arg);
	v = list_args(arg, ap, &envp, 1);
	va_end(ap);
	return exec_list(LIST_EXECVE, path, v, envp);
}

/* _exit() and _Exit(): end the trace, then leave through libc's @real */
static _Noreturn void exit_now(int status, void (*real)(int))
{
	if (atomic_load(&hs_on) && getpid() == hs_pid) {
		hs_tls.guard = 1;
		hs_shutdown(HS_END__EXIT, (uint64_t)(unsigned)status);
	}
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

HS_EXPORT void _exit(int status)
{
	hs_resolve_real();
	exit_now(status, hs_real._exit);
}

HS_EXPORT void _Exit(int status)
{
	hs_resolve_real();
	exit_now(status, hs_real._Exit);
}

/* --- fatal signals -------------------------------------------------------- */

static const int fatal_signals[] = {
    SIGSEGV, SIGBUS,  SIGABRT, SIGFPE, SIGILL,	SIGTRAP, SIGSYS,  SIGQUIT, SIGXCPU,
    SIGXFSZ, SIGTERM, SIGINT,  SIGHUP, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2,
};
static _Atomic int installed[NSIG];

void hs_fatal_signal(int sig)
{
	struct sigaction dfl;

	if (atomic_load(&hs_on) && getpid() == hs_pid &&
	    (pid_t)syscall(SYS_gettid) != hs_writer_tid) {
		hs_tls.guard = 1;
		atomic_store(&hs_on, 0);
		hs_writer_finish(HS_END_SIGNAL, (uint64_t)sig, 1);
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	hs_real.sigaction(sig, &dfl, NULL);
	/* delivered again when the handler returns, now with the default action */
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	int e = errno;

	(void)si;
	(void)uc;
	atomic_store(&installed[sig], 0);
	hs_fatal_signal(sig);
	errno = e;
}

void hs_signals_install(void)
{
	size_t i;

	for (i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		int sig = fatal_signals[i];
		struct sigaction old, sa;

		if (hs_real.sigaction(sig, NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_fatal;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (!hs_real.sigaction(sig, &sa, NULL))
			atomic_store(&installed[sig], 1);
	}
}

/* The program sees the dispositions it set itself, never ours. */
HS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int r;

	hs_resolve_real();
	if (hs_cpu_owns(sig))
		return hs_cpu_sigaction(sig, act, old);
	if (sig <= 0 || sig >= NSIG || !atomic_load(&installed[sig]))
		return hs_real.sigaction(sig, act, old);
	r = hs_real.sigaction(sig, act, old);
	if (!r) {
		if (old && (old->sa_flags & SA_SIGINFO) &&
		    old->sa_sigaction == on_fatal) {
			memset(old, 0, sizeof(*old));
			old->sa_handler = SIG_DFL;
			sigemptyset(&old->sa_mask);
		}
		if (act)
			atomic_store(&installed[sig], 0);
	}
	return r;
}

/*
 * signal() and its relatives install handlers through libc's own
 * sigaction, not the interposed one: each is interposed the same way.
 * @real sets the handler for a signal that is neither the sampling one
 * nor one of the fatal ones the collector watches; for the sampling
 * signal, @flags are what @real would have set.
 */
static void (*set_handler(int sig, void (*handler)(int), int flags,
			  void (*(*real)(int, void (*)(int)))(int)))(int)
{
	void (*old)(int);

	if (hs_cpu_owns(sig)) {
		struct sigaction sa, o;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = handler;
		sa.sa_flags = flags;
		sigemptyset(&sa.sa_mask);
		if (hs_cpu_sigaction(sig, &sa, &o))
			return SIG_ERR;
		return o.sa_handler;
	}
	if (!real) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (sig <= 0 || sig >= NSIG || !atomic_load(&installed[sig]))
		return real(sig, handler);
	old = real(sig, handler);
	if (old != SIG_ERR) {
		atomic_store(&installed[sig], 0);
		if (old == (void (*)(int))(void *)on_fatal)
			old = SIG_DFL;
	}
	return old;
}

HS_EXPORT void (*signal(int sig, void (*handler)(int)))(int)
{
	hs_resolve_real();
	return set_handler(sig, handler, SA_RESTART, hs_real.signal);
}

/* glibc's other names of signal() and sysv_signal(), the same functions here */
HS_EXPORT __typeof__(signal) bsd_signal __attribute__((alias("signal"), copy(signal)));
HS_EXPORT __typeof__(signal) ssignal __attribute__((alias("signal"), copy(signal)));
/* The System V semantics: the handler is reset when it runs. */
HS_EXPORT void (*sysv_signal(int sig, void (*handler)(int)))(int)
{
	hs_resolve_real();
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, hs_real.sysv_signal);
}

HS_EXPORT __typeof__(sysv_signal) __sysv_signal
    __attribute__((alias("sysv_signal"), copy(sysv_signal)));

/*
 * sigset() also blocks (SIG_HOLD) or unblocks the signal; the sampling
 * signal is never blocked (cpu_threads.c), so SIG_HOLD only tells its disposition.
 */
HS_EXPORT void (*sigset(int sig, void (*disp)(int)))(int)
{
	struct sigaction o;
	sigset_t one;
	void (*old)(int);

	hs_resolve_real();
	if (!hs_cpu_owns(sig) && disp == SIG_HOLD) {
		/* the handler stays: the collector's may stay hidden */
		if (!hs_real.sigset)
			return SIG_ERR;
		old = hs_real.sigset(sig, disp);
		return old == (void (*)(int))(void *)on_fatal ? SIG_DFL : old;
	}
	if (!hs_cpu_owns(sig))
		return set_handler(sig, disp, 0, hs_real.sigset);
	if (disp == SIG_HOLD)
		return hs_cpu_sigaction(sig, NULL, &o) ? SIG_ERR : o.sa_handler;
	old = set_handler(sig, disp, 0, hs_real.sigset);
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (old != SIG_ERR)
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	return old;
}

/* --- thread names --------------------------------------------------------- */

HS_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	int r;

	hs_resolve_real();
	r = hs_real.pthread_setname_np(th, name);
	if (!r && atomic_load(&hs_on) && !hs_tls.guard) {
		hs_tls.guard = 1;
		hs_thread_name(th, name);
		hs_tls.guard = 0;
	}
	return r;
}

HS_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i, r, e;

	hs_resolve_real();
	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	r = hs_real.prctl(option, a[0], a[1], a[2], a[3]);
	if (option == PR_SET_NAME && !r && atomic_load(&hs_on) && !hs_tls.guard) {
		char name[17];

		e = errno;
		hs_tls.guard = 1;
		strncpy(name, (const char *)a[0], 16);
		name[16] = '\0';
		hs_thread_name(pthread_self(), name);
		hs_tls.guard = 0;
		errno = e;
	}
	return r;
}
