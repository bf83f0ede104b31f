/*
 * cpu_wall - `--wall`: where the program's threads spend wall-clock time
 * (cpu_internal.h has the map of the cpu_*.c files; docs/cpu.md).
 *
 * Everything here runs on the sampler thread, at each of its ticks on
 * CLOCK_MONOTONIC. It reads each thread's CPU clock and
 * /proc/self/task/TID/syscall: the CPU it used is CPU_TIME, the rest
 * BLOCKED_TIME or READIED_TIME. A blocked thread is never signalled
 * (nanosleep, poll, ... would return EINTR): the sampler walks its stack
 * from the sp and pc /proc gives, once per blocked episode, over a copy
 * of the stack (process_vm_readv(), so a thread that woke up meanwhile
 * gives a wrong stack, never a fault). A running thread gets a trigger
 * (a perf event or a POSIX timer on its CPU clock) that signals it only
 * while it runs in user space, and its handler takes the sample
 * (a request: hs__cpu_sig_lock, the req_* fields of struct cpu_thread).
 * Without /proc, the thread is signalled instead (sigqueue with the
 * collector's cookie).
 *
 * A BLOCKED_TIME sample is extended while its thread stays blocked on the
 * same stack (hs__cpu_add_blocked()).
 */
#define UNW_LOCAL_ONLY
#include "collector/cpu_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define SNAP_MAX (256u << 10) /* bytes of a blocked stack copied for a walk */
#define SCAN_MAX (64u << 10)  /* bytes above sp searched for a frame's rbp */
#define SCAN_KEEP 16	      /* candidate frames kept by a search */

static uint8_t *snap_buf;  /* SNAP_MAX bytes (sampler thread) */
static int pvr_ok = 1;	   /* process_vm_readv() works */
static uint64_t threshold; /* without /proc: CPU ns that mean "ran" */
static uid_t my_uid;
static int wall_perf_ok = 1; /* perf events may be the wall triggers */
uint64_t hs__cpu_n_signals;

/* "/proc/self/task/TID/@leaf" into @path (64 bytes; @leaf short), without stdio. */
void hs__cpu_task_file(char *path, pid_t tid, const char *leaf)
{
	static const char dir[] = "/proc/self/task/";
	char digits[12];
	unsigned v = (unsigned)tid, k = 0;
	size_t len = sizeof(dir) - 1;

	memcpy(path, dir, len);
	do
		digits[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < sizeof(digits));
	while (k)
		path[len++] = digits[--k];
	path[len++] = '/';
	memcpy(path + len, leaf, strlen(leaf) + 1);
}

/*
 * A BLOCKED_TIME sample is extended while its thread stays blocked on the
 * same stack, up to this long (ns): a thread blocked for a second makes
 * ten samples, not a thousand, and views lose nothing (a sample covers
 * its interval, which ranges and When prorate).
 */
#define MERGE_MAX 100000000u

/* Write thread @c's BLOCKED_TIME sample being extended, if any. */
void hs__cpu_flush_open(struct hs_thread *t, struct cpu_thread *c)
{
	if (c->open && c->open_dur)
		hs__cpu_add_out(t, c->open_end, c->open_dur, c->tid,
				HS_SAMPLE_WALL_BLOCKED, c->open_node);
	c->open = 0;
}

/* @dur ns of BLOCKED_TIME of thread @c on stack @node, ending at @end. */
void hs__cpu_add_blocked(struct hs_thread *t, struct cpu_thread *c, uint64_t end,
			 uint64_t dur, uint32_t node)
{
	if (!dur)
		return;
	if (c->open && c->open_node == node && c->open_end == end - dur &&
	    c->open_dur + dur <= MERGE_MAX) {
		c->open_end = end;
		c->open_dur += dur;
		return;
	}
	hs__cpu_flush_open(t, c);
	c->open = 1;
	c->open_node = node;
	c->open_end = end;
	c->open_dur = dur;
}

/*
 * Thread @c is done with: its open period written, its /proc file and
 * trigger closed (sig_lock held).
 */
void hs__cpu_wall_release(struct hs_thread *t, struct cpu_thread *c)
{
	hs__cpu_flush_open(t, c);
	if (c->sys_fd >= 0)
		hs_fd_close(c->sys_fd);
	c->sys_fd = -1;
	hs__cpu_trigger_close(c);
}

/*
 * Copy @n bytes of this process at @a into @buf, page by page, so that a
 * page that cannot be read ends the copy instead of faulting: the bytes
 * copied, or -1 if process_vm_readv() cannot be used here.
 */
static ssize_t peek(void *buf, uintptr_t a, size_t n)
{
	struct iovec local = {buf, n}, remote[SNAP_MAX / 4096 + 2];
	uintptr_t p = a, end = a + n;
	unsigned k = 0;
	ssize_t r;

	if (!pvr_ok || end < a)
		return -1;
	while (p < end && k < sizeof(remote) / sizeof(remote[0])) {
		uintptr_t next = (p | 4095) + 1;

		if (next > end || next < p)
			next = end;
		remote[k].iov_base = (void *)p;
		remote[k].iov_len = next - p;
		k++;
		p = next;
	}
	local.iov_len = p - a;
	r = process_vm_readv(hs_pid, &local, 1, remote, k, 0);
	if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
		pvr_ok = 0;
		return -1;
	}
	return r < 0 ? 0 : r;
}

/* A copy of the top of a blocked thread's stack: [lo, hi) in snap_buf. */
struct snap {
	uintptr_t lo, hi;
};

static int snap_word(const struct snap *s, uintptr_t a, uintptr_t *v)
{
	if (a < s->lo || a >= s->hi || s->hi - a < sizeof(*v))
		return -1;
	memcpy(v, snap_buf + (a - s->lo), sizeof(*v));
	return 0;
}

/*
 * Copy thread @c's stack from @sp up (to its top or SNAP_MAX bytes).
 * Through process_vm_readv(), so that a thread that woke up and changed
 * or left its stack meanwhile gives a wrong stack, never a fault; without
 * it, by plain reads within the thread's stack bounds.
 */
static void take_snap(const struct cpu_thread *c, uintptr_t sp, struct snap *s)
{
	int bounded = c->stack_lo && c->stack_hi != UINTPTR_MAX && sp >= c->stack_lo &&
		      sp < c->stack_hi;
	uintptr_t hi = sp + SNAP_MAX < sp ? UINTPTR_MAX : sp + SNAP_MAX;
	ssize_t n;

	if (bounded && c->stack_hi < hi)
		hi = c->stack_hi;
	s->lo = s->hi = sp;
	n = peek(snap_buf, sp, hi - sp);
	if (n >= 0) {
		s->hi = sp + (uintptr_t)n;
	} else if (bounded) {
		memcpy(snap_buf, (const void *)sp, hi - sp);
		s->hi = hi;
	}
}

/*
 * The start of the function that holds code address @pc, from its FDE
 * (libunwind finds it through the module's .eh_frame_hdr); 0 if unknown.
 */
static uintptr_t func_entry(uintptr_t pc)
{
	unw_proc_info_t pi;

	memset(&pi, 0, sizeof(pi));
	if (unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t)pc, &pi, NULL) < 0)
		return 0;
	return (uintptr_t)pi.start_ip;
}

/* Where a PLT entry at @a jumps to (its GOT slot), else @a. */
static uintptr_t plt_target(uintptr_t a)
{
	uint8_t b[16];
	unsigned p = 0;
	int32_t rel;
	uintptr_t v;

	if (peek(b, a, sizeof(b)) != (ssize_t)sizeof(b))
		return a;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		p = 4; /* endbr64 */
	if (b[p] == 0xf2)
		p++; /* bnd */
	if (b[p] != 0xff || b[p + 1] != 0x25)
		return a; /* not jmp *GOT(%rip) */
	memcpy(&rel, b + p + 2, 4);
	if (peek(&v, a + p + 6 + (uintptr_t)(intptr_t)rel, sizeof(v)) !=
	    (ssize_t)sizeof(v))
		return a;
	return v;
}

/* Bytes of a ModRM operand from @m on (@avail bytes there); 99 if cut. */
static unsigned modrm_len(const uint8_t *m, unsigned avail)
{
	unsigned mod = m[0] >> 6, rm = m[0] & 7, len = 1;

	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return 99;
		len++;
		if (mod == 0 && (m[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4; /* rip-relative */
	}
	return len + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

static int is_prefix(uint8_t b)
{
	return (b >= 0x40 && b <= 0x4f) || b == 0x3e || b == 0xf2 || b == 0x64 ||
	       b == 0x65 || b == 0x67;
}

/*
 * Whether @ra is a return address: in a module, just after a call
 * instruction. 1 for a direct call (its target, through a PLT entry, in
 * *@target), 2 for an indirect one, 0 if not.
 */
static int call_before(uintptr_t ra, uintptr_t *target)
{
	uint8_t b[8];
	unsigned st, p;
	int32_t rel;
	int in;

	pthread_mutex_lock(&hs_unwind_lock);
	in = ra > 8 && hs_module_find(ra - 1) != NULL;
	pthread_mutex_unlock(&hs_unwind_lock);
	if (!in || peek(b, ra - 8, 8) != 8)
		return 0;
	for (st = 0; st < 7; st++) {
		for (p = st; p < 7 && is_prefix(b[p]); p++)
			;
		if (p < 7 && b[p] == 0xff && ((b[p + 1] >> 3) & 7) == 2 &&
		    p + 1 + modrm_len(b + p + 1, 7 - p) == 8)
			return 2;
	}
	if (b[3] != 0xe8)
		return 0;
	memcpy(&rel, b + 4, 4);
	*target = plt_target(ra + (uintptr_t)(intptr_t)rel);
	return 1;
}

/* A walk of a blocked thread's stack by the sampler. */
struct bwalk {
	struct hs_thread *t;
	struct snap s;
	uintptr_t *ips;
	unsigned max;
};

enum { BW_BROKEN, BW_COMPLETE, BW_TRUNCATED };

static int bw_scan(struct bwalk *w, uintptr_t key, uintptr_t sp, const struct sig_rule *r,
		   unsigned *n);

/*
 * Walk with the rules from code address @key - 1 (a call site, or the
 * exact pc + 1), @sp and, if @bp_known, @bp, appending frames to w->ips
 * from *@n on. Every stack word comes from the copy, so a stack that
 * changed meanwhile gives a wrong or broken walk, never a fault. rbp is
 * not known at first (/proc gives sp and pc only): the walk goes on while
 * no frame needs it (CFAs from rsp; a frame that saved rbp restores it),
 * and with @scan a frame whose CFA is rbp-based searches for it.
 */
static int bw_walk(struct bwalk *w, uintptr_t key, uintptr_t sp, uintptr_t bp,
		   int bp_known, unsigned *n, int scan)
{
	for (;;) {
		struct sig_rule r;
		uintptr_t cfa, ra;

		if (*n == w->max)
			return BW_TRUNCATED;
		w->ips[(*n)++] = key - 1;
		if (!hs__cpu_sampler_rule(w->t, key - 1, &r))
			return BW_BROKEN;
		if (r.kind == HS_RULE_END)
			return BW_COMPLETE;
		if (r.kind == HS_RULE_RBP && !bp_known)
			return scan ? bw_scan(w, key, sp, &r, n) : BW_BROKEN;
		cfa = (r.kind == HS_RULE_RSP ? sp : bp) + (uintptr_t)(intptr_t)r.cfa_off;
		if (cfa <= sp || cfa - sp > MAX_FRAME || snap_word(&w->s, cfa - 8, &ra))
			return BW_BROKEN;
		if (r.bp_off) {
			if (snap_word(&w->s, cfa + (uintptr_t)(intptr_t)r.bp_off, &bp))
				return BW_BROKEN;
			bp_known = 1;
		}
		if (!ra)
			return BW_COMPLETE;
		key = ra;
		sp = cfa;
	}
}

/*
 * The frame at code address @key - 1, at @sp, has its CFA at rbp + off
 * and rbp is not known: find the frame's saved rbp and return address
 * above @sp. A candidate rbp R (CFA = R + off) must hold, at CFA - 8, a
 * return address just after a call instruction; a direct call must call
 * the function @key is in, so that a pair an earlier call left in an
 * uninitialised local does not pass. Direct calls are tried first, then
 * indirect ones, each nearest to sp first, and a candidate is taken when
 * the walk from it with the rules completes. Else the stack ends here.
 */
static int bw_scan(struct bwalk *w, uintptr_t key, uintptr_t sp, const struct sig_rule *r,
		   unsigned *n)
{
	struct {
		uintptr_t at;
		int direct;
	} cand[SCAN_KEEP];
	uintptr_t entry = func_entry(key - 1), a;
	unsigned nc = 0, i, depth = *n;
	int pass;

	for (a = (sp + 7) & ~(uintptr_t)7; a - sp < SCAN_MAX && nc < SCAN_KEEP; a += 8) {
		uintptr_t ra, target = 0;
		int call;

		if (snap_word(&w->s, a + (uintptr_t)(intptr_t)r->cfa_off - 8, &ra))
			break;
		if (ra < 4096)
			continue;
		call = call_before(ra, &target);
		if (!call || (call == 1 && entry && target != entry))
			continue;
		cand[nc].at = a;
		cand[nc].direct = call == 1 && entry;
		nc++;
	}
	for (pass = 1; pass >= 0; pass--)
		for (i = 0; i < nc; i++) {
			uintptr_t cfa = cand[i].at + (uintptr_t)(intptr_t)r->cfa_off;
			uintptr_t bp = cand[i].at, ra;
			int res;

			if (cand[i].direct != pass || snap_word(&w->s, cfa - 8, &ra) ||
			    (r->bp_off &&
			     snap_word(&w->s, cfa + (uintptr_t)(intptr_t)r->bp_off, &bp)))
				continue;
			*n = depth;
			res = bw_walk(w, ra, cfa, bp, 1, n, 0);
			if (res != BW_BROKEN)
				return res;
		}
	*n = depth;
	return BW_BROKEN;
}

/* Where a thread is, from /proc/self/task/TID/syscall. */
struct sys_state {
	int running;	  /* running or waiting for a CPU */
	long nr;	  /* else the system call (-1: in a fault) */
	uintptr_t sp, pc; /* and its user registers */
};

/*
 * "running", or "NR ARG1..ARG6 SP PC" (a system call), or "-1 SP PC" (a
 * fault): NR in decimal, the rest in hexadecimal. 0, or -1 if it is not
 * that.
 */
static int parse_syscall(const char *b, size_t n, struct sys_state *st)
{
	const char *p = b, *end = b + n;
	uint64_t v[9];
	unsigned k = 0;
	int neg = 0;

	if (n >= 7 && !memcmp(b, "running", 7)) {
		st->running = 1;
		return 0;
	}
	st->running = 0;
	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	while (k < 9) {
		int hex = k > 0, digits = 0;

		if (hex) {
			if (p == end || *p != ' ')
				break;
			p++;
			if (end - p < 2 || p[0] != '0' || p[1] != 'x')
				return -1;
			p += 2;
		}
		for (v[k] = 0; p < end; p++, digits++) {
			unsigned d;

			if (*p >= '0' && *p <= '9')
				d = (unsigned)(*p - '0');
			else if (hex && *p >= 'a' && *p <= 'f')
				d = (unsigned)(*p - 'a' + 10);
			else
				break;
			v[k] = v[k] * (hex ? 16 : 10) + d;
		}
		if (!digits)
			return -1;
		k++;
	}
	if (k != 3 && k != 9)
		return -1;
	st->nr = neg ? -(long)v[0] : (long)v[0];
	st->sp = (uintptr_t)v[k - 2];
	st->pc = (uintptr_t)v[k - 1];
	return 0;
}

/*
 * Thread @c's state into @st: 0; -1 when /proc does not tell (the
 * descriptor cannot be opened: sampling falls back to signals); -2 for
 * nothing this tick (the thread is gone, or the descriptor was closed by
 * the program and is opened again next time).
 */
static int read_state(struct cpu_thread *c, struct sys_state *st)
{
	char b[256];
	ssize_t n;

	if (c->sys_fd == -1) {
		char path[64];
		int fd;

		hs__cpu_task_file(path, c->tid, "syscall");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		c->sys_fd = fd < 0 ? -2 : hs_fd_move_high(fd);
		if (c->sys_fd < 0)
			c->sys_fd = -2;
	}
	if (c->sys_fd < 0)
		return -1;
	n = pread(c->sys_fd, b, sizeof(b), 0);
	if (n > 0 && !parse_syscall(b, (size_t)n, st))
		return 0;
	if (n < 0 && errno == EBADF) {
		/* not our file any more: the number may be the program's now */
		hs_fd_forget(c->sys_fd);
		c->sys_fd = -1;
		return -2;
	}
	if (n < 0)
		return -2; /* the thread is gone (ESRCH), or try again */
	/* a text this kernel writes that we cannot read: signals from now on */
	hs_fd_close(c->sys_fd);
	c->sys_fd = -2;
	return -1;
}

/* The stack of blocked thread @c, walked by the sampler from /proc's sp and pc. */
static uint32_t walk_blocked(struct hs_thread *t, struct cpu_thread *c,
			     const struct sys_state *st)
{
	uintptr_t ips[RAW_DEPTH];
	struct bwalk w;
	unsigned n = 0;
	int res;

	ips[0] = st->pc;
	if (st->pc < 4096)
		return hs_stack_intern(t, ips, 0, 0);
	w.t = t;
	w.ips = ips;
	w.max = hs_cfg.max_depth < RAW_DEPTH ? hs_cfg.max_depth : RAW_DEPTH;
	if (!w.max)
		return hs_stack_intern(t, ips, 0, 0);
	take_snap(c, st->sp, &w.s);
	res = bw_walk(&w, st->pc + 1, st->sp, 0, 0, &n, 1);
	return hs_stack_intern(t, ips, n, res == BW_COMPLETE);
}

/*
 * The wall sampler's trigger of thread @c for signal @s, created on first
 * use (sig_lock held): a perf event of its user-space CPU time, else a
 * POSIX timer on its CPU clock. Either signals the thread only while it
 * runs in user space (a perf event excluding the kernel samples there
 * only; a CPU-clock timer fires on the return to user space), so a
 * system call is never interrupted. 0, or -1 if neither can be had.
 */
static int trigger_open(struct cpu_thread *c, int s)
{
	if (c->wall_fd == -1 && wall_perf_ok) {
		struct perf_event_attr a;
		struct f_owner_ex owner = {F_OWNER_TID, c->tid};
		int fd;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = 100000; /* 100 us of its time, taken in user space */
		a.wakeup_events = 1;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.disabled = 1;
		fd = (int)syscall(SYS_perf_event_open, &a, c->tid, -1, -1,
				  PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS ||
			       errno == ENOENT))
			wall_perf_ok = 0;
		if (fd >= 0)
			fd = hs_fd_move_high(fd);
		if (fd >= 0 &&
		    (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, s) ||
		     fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK))) {
			hs_fd_close(fd);
			fd = -1;
		}
		atomic_store(&c->wall_fd, fd < 0 ? -2 : fd);
	}
	if (atomic_load(&c->wall_fd) >= 0)
		return 0;
	if (c->wall_timer == -1) {
		struct sigevent sev;
		int id;

		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = s;
		sev.sigev_value.sival_ptr = hs__cpu_wall_cookie;
		sev._sigev_un._tid = c->tid;
		c->wall_timer =
		    syscall(SYS_timer_create, thread_clock(c->tid), &sev, &id) ? -2 : id;
	}
	return c->wall_timer >= 0 ? 0 : -1;
}

/* Arm thread @c's trigger for one signal (sig_lock held); 0 or -1. */
static int trigger_arm(struct cpu_thread *c)
{
	struct itimerspec its = {{0, 0}, {0, 1}};
	int fd = atomic_load(&c->wall_fd);

	if (fd >= 0)
		return ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) ? -1 : 0;
	if (c->wall_timer >= 0)
		return syscall(SYS_timer_settime, c->wall_timer, 0, &its, NULL) ? -1 : 0;
	return -1;
}

/* Disarm thread @c's trigger (sig_lock held). */
static void trigger_disarm(struct cpu_thread *c)
{
	struct itimerspec zero;
	int fd = atomic_load(&c->wall_fd);

	memset(&zero, 0, sizeof(zero));
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (c->wall_timer >= 0)
		syscall(SYS_timer_settime, c->wall_timer, 0, &zero, NULL);
}

/* Close thread @c's trigger (sig_lock held): it exited, or the signal moves. */
void hs__cpu_trigger_close(struct cpu_thread *c)
{
	int fd = atomic_exchange(&c->wall_fd, -1);

	if (fd >= 0)
		hs_fd_close(fd);
	if (c->wall_timer >= 0)
		syscall(SYS_timer_delete, c->wall_timer);
	c->wall_timer = -1;
}

/*
 * Ask thread @c for its stack: its handler takes a wall sample of @dur
 * ns of @kind, after @ready ns of waiting for a CPU, ending at @now. A
 * running thread's trigger is armed; a thread that may be blocked (only
 * without /proc) is sent the signal (sigqueue codes and the collector's
 * cookie). Under sig_lock, so that nothing goes out with a number that
 * sampling is moving away from.
 */
static void request(struct cpu_thread *c, uint64_t now, uint64_t dur, uint64_t ready,
		    unsigned kind, int running)
{
	siginfo_t si;
	int s, sent;

	pthread_mutex_lock(&hs__cpu_sig_lock);
	s = atomic_load(&hs__cpu_signo);
	if (s && atomic_load(&hs__cpu_sampling)) {
		atomic_fetch_add(&c->req_dur, dur);
		atomic_fetch_add(&c->req_ready, ready);
		atomic_store(&c->req_ticks, now);
		c->req_epoch = atomic_load(&hs__cpu_sig_epoch);
		atomic_store(&c->req, (int)kind + 1);
		if (running && !trigger_open(c, s)) {
			sent = !trigger_arm(c);
		} else {
			memset(&si, 0, sizeof(si));
			si.si_signo = s;
			si.si_code = SI_QUEUE;
			si.si_pid = hs_pid;
			si.si_uid = my_uid;
			si.si_value.sival_ptr = hs__cpu_sig_cookie;
			sent = !syscall(SYS_rt_tgsigqueueinfo, hs_pid, c->tid, s, &si);
		}
		if (sent) {
			hs__cpu_n_signals++;
		} else if (atomic_exchange(&c->req, 0)) {
			atomic_store(&c->req_dur, 0);
			atomic_store(&c->req_ready, 0);
		}
	}
	pthread_mutex_unlock(&hs__cpu_sig_lock);
}

/*
 * Take back thread @c's request that was not served (it blocked before
 * its trigger fired, or sampling moved to another signal): 1 with its
 * CPU and ready ns in *@dur and *@ready, 0 if the handler has it.
 */
static int cancel(struct cpu_thread *c, uint64_t *dur, uint64_t *ready)
{
	pthread_mutex_lock(&hs__cpu_sig_lock);
	trigger_disarm(c);
	pthread_mutex_unlock(&hs__cpu_sig_lock);
	if (!atomic_exchange(&c->req, 0))
		return 0;
	*dur = atomic_exchange(&c->req_dur, 0);
	*ready = atomic_exchange(&c->req_ready, 0);
	return 1;
}

/*
 * One wall-clock tick of thread @c, @dur ns since its previous one, in
 * which it used @used ns of CPU (its clock went from @ref to @cpu).
 *
 * With /proc (the thread's system call state): the CPU it used is
 * CPU_TIME; the rest of the tick is BLOCKED_TIME if it was blocked at
 * either end of the tick, else READIED_TIME (it was runnable and waited
 * for a CPU). A running thread is asked for its stack by its trigger; a
 * blocked one is never signalled (a signal would make nanosleep, poll,
 * select, ... return early with EINTR): the sampler walks its stack from
 * the sp and pc /proc gives, once per blocked episode (a thread whose CPU
 * clock did not move has not left its system call).
 */
static void wall_thread(struct hs_thread *t, struct cpu_thread *c, uint64_t now,
			uint64_t dur, uint64_t used, uint64_t cpu, uint64_t ref)
{
	struct sys_state st;
	uint64_t rdur, rready;
	uint32_t node;
	int r;

	if (c->wstate == WS_BLOCKED && !used) {
		hs__cpu_add_blocked(t, c, now, dur, c->blocked_node);
		return;
	}
	r = read_state(c, &st);
	if (r == -2)
		return;
	if (r == -1) {
		/*
		 * Without /proc: the thread is asked for its stack when its CPU
		 * clock advanced (CPU_TIME), or once per blocked episode, by a
		 * signal (which may interrupt a system call).
		 */
		uint64_t hc = atomic_load(&c->handler_cpu);
		int advanced;

		if (atomic_load(&c->req)) {
			if (c->req_epoch == atomic_load(&hs__cpu_sig_epoch)) {
				atomic_fetch_add(&c->req_dur, dur);
				atomic_store(&c->req_ticks, now);
				return;
			}
			if (cancel(c, &rdur, &rready))
				dur += rdur;
		}
		if (hc > ref)
			ref = hc;
		advanced = cpu > ref + threshold;
		if (!advanced && c->blocked_valid) {
			hs__cpu_add_blocked(t, c, now, dur, c->blocked_node);
			return;
		}
		if (advanced) {
			c->blocked_valid = 0;
			hs__cpu_flush_open(t, c);
		}
		request(c, now, dur, 0,
			advanced ? HS_SAMPLE_WALL_CPU : HS_SAMPLE_WALL_BLOCKED, 0);
		return;
	}
	if (st.running) {
		uint64_t ready = dur - used;

		if (atomic_load(&c->req)) {
			if (c->req_epoch == atomic_load(&hs__cpu_sig_epoch)) {
				/* not served yet (it had no CPU, or no user time) */
				atomic_fetch_add(&c->req_dur, used);
				atomic_fetch_add(&c->req_ready, ready);
				atomic_store(&c->req_ticks, now);
				return;
			}
			if (cancel(c, &rdur, &rready)) {
				used += rdur;
				ready += rready;
			}
		}
		if (c->wstate == WS_BLOCKED) {
			/* it woke up in this tick: blocked until it ran */
			hs__cpu_add_blocked(t, c, now - used, ready, c->blocked_node);
			ready = 0;
		}
		hs__cpu_flush_open(t, c);
		c->wstate = WS_RUN;
		request(c, now, used, ready, HS_SAMPLE_WALL_CPU, 1);
		return;
	}
	node = walk_blocked(t, c, &st);
	rdur = rready = 0;
	if (atomic_load(&c->req))
		cancel(c, &rdur, &rready);
	if (used || rdur || rready) {
		/* it ran (or waited to), then blocked: on the stack it blocked on */
		hs__cpu_flush_open(t, c);
		if (rready)
			hs__cpu_add_out(t, now - (dur - used) - used - rdur, rready,
					c->tid, HS_SAMPLE_WALL_READY, node);
		if (used + rdur)
			hs__cpu_add_out(t, now - (dur - used), used + rdur, c->tid,
					HS_SAMPLE_WALL_CPU, node);
	}
	hs__cpu_add_blocked(t, c, now, dur - used, node);
	c->wstate = WS_BLOCKED;
	c->blocked_node = node;
}

/*
 * One wall-clock tick: every live thread's time since its previous one.
 * Returns whether a thread ran or is not known to be blocked; -1 without
 * the stack copy's buffer (hs__cpu_wall_alloc() not called or failed).
 */
int hs__cpu_wall_tick(struct hs_thread *t)
{
	struct cpu_thread *c;
	int busy = 0;

	if (!snap_buf)
		return -1;

	for (c = atomic_load(&hs__cpu_registry); c; c = c->next) {
		uint64_t cpu, now, dur, used, ref;

		if (atomic_load(&c->state) != HS_T_LIVE || !atomic_load(&c->ready))
			continue;
		cpu = clock_ns(thread_clock(c->tid));
		if (!cpu)
			continue;
		now = hs_now_ns();
		dur = now > c->wall_prev ? now - c->wall_prev : 0;
		ref = c->wall_ref;
		used = cpu > ref ? cpu - ref : 0;
		if (used > dur)
			used = dur;
		c->wall_prev = now;
		c->wall_ref = cpu;
		wall_thread(t, c, now, dur, used, cpu, ref);
		busy |= used || c->wstate != WS_BLOCKED;
	}
	return busy;
}

int hs__cpu_wall_alloc(void)
{
	snap_buf = map_zero(SNAP_MAX);
	return snap_buf ? 0 : -1;
}

void hs__cpu_wall_begin(uint64_t period)
{
	my_uid = getuid();
	threshold = period / 20;
}
