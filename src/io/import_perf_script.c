/*
 * import_perf_script - `perf script` text to a stack source, streaming
 * (perfview-semantics.md §9 and §10).
 *
 * The input is a series of events, each a header line
 *
 *	COMM PID[/TID] [CPU] SECONDS: [PERIOD] EVENT: details
 *
 * followed by its call stack, one TAB-led frame line per frame, leaf
 * first; a blank line or the next header ends the event. Each event is
 * classified by kind (kinds[] below) and handed, with its frames, to that
 * kind's handler. CPU samples become samples whose stack is
 * `Process <comm> (<pid>)` -> `Thread (<tid>)` -> outermost frame ... leaf
 * and whose metric is the time in ms to the next CPU sample on the same
 * CPU (the last sample of each CPU is dropped). The other kinds are
 * recognised and, in the CPU view, ignored.
 *
 * The thread-time view (HS_PERF_THREAD_TIME, docs/perf.md) cuts each
 * thread's time into periods, each a sample at its start weighing its
 * duration, with a leaf pseudo-frame saying what the thread was doing:
 *
 *   CPU_TIME      a CPU sample, weighted as in the CPU view, except that
 *                 the thread's own switch-out or exit ends it sooner
 *   BLOCKED_TIME  from a sched_switch whose prev_state is not runnable
 *                 (S, D, I, ...) until its wakeup, on the stack of the
 *                 switch
 *   READIED_TIME (waiting for cpu)
 *                 from a sched_switch with prev_state R (preempted), or
 *                 from the wakeup when the wait for a CPU after it took
 *                 over 0.5 ms (shorter waits stay in BLOCKED_TIME, as in
 *                 PerfView), on the stack of the switch
 *
 * A period ends when the thread is switched in (next_pid), at its next
 * own event (perf records a process's switch-ins only when the task
 * switched out is traced too), or at the end of the trace.
 *
 * A wakeup is two events: sched_waking, in the waker's context (on the
 * waker's stack), then sched_wakeup, where the woken thread is put on a
 * run queue: in the waker's context too, or, when the kernel hands that to
 * the woken thread's idle CPU, there, in whatever runs there (which a
 * recording of one program does not see). sched_waking ends the blocked
 * period; sched_wakeup does as well in recordings without sched_waking
 * (older ones), but once a sched_waking has been read a sched_wakeup only
 * ends a period not ended yet and adds no READIED_BY (its stack need not
 * be the waker's). Only the first wakeup of a period counts. A blocked
 * period whose wakeup event has a stack (the waker's) gets, as in
 * PerfView's "Thread Time (with ReadyThread)" view,
 *
 *	... frames at the switch -> READIED BY TID(t) comm (pid) ->
 *	waker's frames, outermost first, each "NAME (READIED_BY)" -> BLOCKED_TIME
 *
 * The samples are put in time order at the end.
 *
 * Speed: lines come from a block line reader and are parsed in place; a
 * frame's name is built in a scratch buffer and interned (the frame table
 * is small and stays in the CPU caches); a sample's stack reuses the
 * interned prefix it shares with the previous sample. Nothing is
 * allocated per line once the tables are warm. (A cache keyed by the raw
 * frame text was measured slower: it holds every distinct return address
 * and sampled IP, far more entries than there are frames.)
 *
 * Process names are final only at the end (a pid's threads may have
 * several COMM values): each pid's process frame is interned at first
 * sight under its first name and renamed at the end if that changed.
 */
#include "io/io.h"
#include "io/perf_script.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/hash.h"
#include "common/linereader.h"
#include "common/strtab.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define MAX_LINE ((size_t)1 << 20)	/* longest line accepted */
#define MAX_FRAMES 100000		/* frames of one event */
#define NO_ID UINT32_MAX

/* ---- a small map from 63-bit keys to 64-bit values ---- */

struct u64map {
	uint64_t *key;		/* key + 1; 0 = empty slot */
	uint64_t *val;
	size_t nr, nr_slot;	/* nr_slot: power of two, at most half full */
};

static void map_release(struct u64map *m)
{
	hs_free(m->key);
	hs_free(m->val);
	memset(m, 0, sizeof(*m));
}

static size_t map_slot(const struct u64map *m, uint64_t key)
{
	size_t mask = m->nr_slot - 1;
	size_t i = (size_t)hs_hash_u64(key) & mask;

	while (m->key[i] && m->key[i] != key + 1)
		i = (i + 1) & mask;
	return i;
}

/* The value of @key, or NULL when it is missing. */
static uint64_t *map_get(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->nr_slot)
		return NULL;
	i = map_slot(m, key);
	return m->key[i] ? &m->val[i] : NULL;
}

/* Value of @key in *@val, added as 0 if missing. Returns 0 or -ENOMEM. */
static int map_put(struct u64map *m, uint64_t key, uint64_t **val)
{
	size_t i;

	if (2 * (m->nr + 1) > m->nr_slot) {
		struct u64map n = { .nr = m->nr };
		size_t j;

		n.nr_slot = m->nr_slot ? 2 * m->nr_slot : 64;
		n.key = hs_calloc(n.nr_slot, sizeof(*n.key));
		n.val = hs_calloc(n.nr_slot, sizeof(*n.val));
		if (!n.key || !n.val) {
			map_release(&n);
			return -ENOMEM;
		}
		for (j = 0; j < m->nr_slot; j++) {
			if (!m->key[j])
				continue;
			i = map_slot(&n, m->key[j] - 1);
			n.key[i] = m->key[j];
			n.val[i] = m->val[j];
		}
		map_release(m);
		*m = n;
	}
	i = map_slot(m, key);
	if (!m->key[i]) {
		m->key[i] = key + 1;
		m->val[i] = 0;
		m->nr++;
	}
	*val = &m->val[i];
	return 0;
}

/* ---- event kinds ---- */

enum ps_kind {
	PS_CPU,			/* anything not named below: a CPU sample */
	PS_SCHED_SWITCH,
	PS_SCHED_EXEC,
	PS_SCHED_EXIT,
	PS_SCHED_WAKING,	/* sched_waking: a wakeup, in the waker's context */
	PS_SCHED_WAKEUP,	/* sched_wakeup[_new]: the same, or its second half */
	PS_BLOCK_ISSUE,
	PS_BLOCK_COMPLETE,
	PS_IRQ_ENTRY,
	PS_IRQ_EXIT,
	PS__NR_KINDS
};

/* Tracepoint names that select a kind (matched as whole words). */
static const struct {
	const char *name;
	enum ps_kind kind;
} kind_names[] = {
	{ "sched_switch", PS_SCHED_SWITCH },
	{ "sched_process_exec", PS_SCHED_EXEC },
	{ "sched_process_exit", PS_SCHED_EXIT },
	{ "sched_waking", PS_SCHED_WAKING },
	{ "sched_wakeup", PS_SCHED_WAKEUP },
	{ "sched_wakeup_new", PS_SCHED_WAKEUP },
	{ "block_rq_issue", PS_BLOCK_ISSUE },
	{ "block_rq_complete", PS_BLOCK_COMPLETE },
	{ "irq_handler_entry", PS_IRQ_ENTRY },
	{ "softirq_entry", PS_IRQ_ENTRY },
	{ "irq_handler_exit", PS_IRQ_EXIT },
	{ "softirq_exit", PS_IRQ_EXIT },
};

/* What an event's frame lines become (kinds[].frames). */
enum ps_frames {
	FR_NONE,		/* only checked */
	FR_KEEP,		/* interned into ps->frames */
	FR_WAKER,		/* the same, named "NAME (READIED_BY)" */
};

/* One event being read: its header, then its frames in ps->frames. */
struct ps_event {
	enum ps_kind kind;
	enum ps_frames frames;	/* kinds[kind].frames[tt], or FR_NONE */
	uint32_t pid, tid;
	int64_t cpu;		/* -1 when the header has no [CPU] */
	int64_t time;		/* ns from the first event */
	uint64_t line;		/* line of the header */
	/* comm, event name and details are copied to ps->comm, ->event, ->details */
};

struct ps;
typedef int (*ps_handler)(struct ps *ps, const struct ps_event *ev);
static int on_cpu_sample(struct ps *ps, const struct ps_event *ev);
static int on_ignored(struct ps *ps, const struct ps_event *ev);
static int on_sched_switch(struct ps *ps, const struct ps_event *ev);
static int on_sched_exit(struct ps *ps, const struct ps_event *ev);
static int on_sched_wakeup(struct ps *ps, const struct ps_event *ev);

/*
 * What each kind does at the end of its event, in each view, and what its
 * frame lines become. (A sched_wakeup read after a sched_waking keeps no
 * frames: start_event.)
 */
static const struct {
	ps_handler finish[2];
	enum ps_frames frames[2];
} kinds[PS__NR_KINDS] = {
	[PS_CPU] = { { on_cpu_sample, on_cpu_sample }, { FR_KEEP, FR_KEEP } },
	[PS_SCHED_SWITCH] = { { on_ignored, on_sched_switch }, { FR_NONE, FR_KEEP } },
	[PS_SCHED_EXEC] = { { on_ignored, on_ignored }, { FR_NONE, FR_NONE } },
	[PS_SCHED_EXIT] = { { on_ignored, on_sched_exit }, { FR_NONE, FR_NONE } },
	[PS_SCHED_WAKING] = { { on_ignored, on_sched_wakeup }, { FR_NONE, FR_WAKER } },
	[PS_SCHED_WAKEUP] = { { on_ignored, on_sched_wakeup }, { FR_NONE, FR_WAKER } },
	[PS_BLOCK_ISSUE] = { { on_ignored, on_ignored }, { FR_NONE, FR_NONE } },
	[PS_BLOCK_COMPLETE] = { { on_ignored, on_ignored }, { FR_NONE, FR_NONE } },
	[PS_IRQ_ENTRY] = { { on_ignored, on_ignored }, { FR_NONE, FR_NONE } },
	[PS_IRQ_EXIT] = { { on_ignored, on_ignored }, { FR_NONE, FR_NONE } },
};

/* ---- importer state ---- */

struct proc {
	uint32_t frame;		/* its `Process ...` frame */
	uint32_t first, last;	/* its comm ids, in order of first sight */
	uint32_t nr_comms;
	const char *comm;	/* last comm seen (borrowed from ps->comms) */
	size_t comm_len;
};

/* Thread-time state of one thread. */
enum thr_state {
	T_RUNNING,		/* running, or nothing known */
	T_BLOCKED,		/* switched out, not runnable */
	T_READY,		/* switched out while runnable (preempted) */
};

struct thr {
	enum thr_state state;
	int64_t since;		/* ns: when it was switched out */
	int64_t woken;		/* ns: its first wakeup since, or -1 */
	uint32_t stack;		/* Process -> Thread -> frames at the switch-out */
	uint32_t readied_stack;	/* stack -> READIED BY ..., or HS_NO_STACK */
	size_t last_cpu;	/* its last CPU sample's index + 1, 0 = none */
};

/*
 * A wait for the CPU after a wakeup shorter than this stays in the blocked
 * period (PerfView's MiniumReadiedTimeMSec).
 */
#define MIN_READIED_NS 500000

struct ps {
	struct hs_stack_source *out;
	struct hs_diag *diag;
	const struct hs__perf_symbols *syms;
	int tt;			/* the thread-time view (index into kinds[]) */
	struct hs_linereader lr;
	struct hs_buf name;	/* scratch: a name being built */

	/* the current event */
	int in_event;
	int after_frame;	/* the last line was a frame line */
	struct ps_event ev;
	struct hs_buf comm, event, details;
	struct hs_buf inl;	/* inlined frames waiting for a module */
	size_t nr_inl;
	uint32_t *frames;	/* leaf first */
	size_t nr_frames, alloc_frames;

	int have_base;
	int64_t base;		/* ns of the first event */

	/* processes and threads */
	struct u64map pids;	/* pid -> index in procs */
	struct proc *procs;
	size_t nr_procs, alloc_procs;
	struct hs_strtab comms;	/* "<pid>:<comm>" */
	uint32_t *comm_next;	/* comm id -> next comm id of its pid, NO_ID */
	size_t alloc_comm_next;
	struct u64map tids;	/* tid -> thread frame */

	/* weights: cpu + 1 -> last sample index + 1 on that CPU */
	struct u64map cpus;

	/* the previous sample's path, root first, to reuse its prefix */
	uint32_t *path_frame, *path_stack;
	size_t path_len, alloc_path, alloc_path2;

	/* thread time */
	struct u64map thr_index;	/* tid -> index in thrs + 1 */
	struct thr *thrs;
	size_t nr_thrs, alloc_thrs;
	uint32_t cpu_time_frame, blocked_frame, ready_frame;	/* NO_ID until needed */
	int seen_waking;	/* a sched_waking was read: sched_wakeup is its twin */
	int64_t last_time;	/* ns of the latest event */

	char msg[400];		/* why a header did not parse */
};

static int fail(struct ps *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record a malformed-input error at the current line; returns -EINVAL. */
static int fail(struct ps *ps, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hs_diag_set(ps->diag, ps->lr.lineno, "%s%s", buf,
		    ps->lr.last_had_newline ? "" : " (the file ends here: cut off?)");
	return -EINVAL;
}

/* The same for the event whose header is at @line. */
static int fail_at(struct ps *ps, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct ps *ps, uint64_t line, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hs_diag_set(ps->diag, line, "%s", buf);
	return -EINVAL;
}

static int nomem(struct ps *ps)
{
	hs_diag_set(ps->diag, ps->lr.lineno, "out of memory");
	return -ENOMEM;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	return p;
}

static const char *trim_end(const char *p, const char *end)
{
	while (end > p && is_space(end[-1]))
		end--;
	return end;
}

/* Quote at most 40 bytes of a token for a message. */
static int quote_len(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && !is_space(*q))
		q++;
	return q - p > 40 ? 40 : (int)(q - p);
}

/* Decimal digits at *@pp (at least one) into *@v, at most @max. */
static int parse_uint(const char **pp, const char *end, uint64_t max, uint64_t *v)
{
	const char *p = *pp;
	uint64_t n = 0;

	if (p == end || !is_digit(*p))
		return -1;
	while (p < end && is_digit(*p)) {
		uint64_t d = (uint64_t)(*p++ - '0');

		if (n > (max - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*pp = p;
	*v = n;
	return 0;
}

/* ---- the header line ---- */

struct header {
	const char *comm, *comm_end;
	uint64_t pid, tid;
	int64_t cpu;
	int64_t time;		/* ns, absolute */
	const char *event, *event_end;
	const char *details, *details_end;
};

/*
 * SECONDS: digits, optionally '.' and digits, then ':'. Nanoseconds are
 * computed exactly; digits beyond the ninth decimal are ignored.
 */
static int parse_time(struct ps *ps, const char **pp, const char *end, int64_t *ns)
{
	const char *p = *pp;
	uint64_t sec, frac = 0;
	int digits = 0;

	if (parse_uint(&p, end, 9000000000ull, &sec))
		goto bad;
	if (p < end && *p == '.') {
		for (p++; p < end && is_digit(*p); p++)
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				digits++;
			}
	}
	for (; digits < 9; digits++)
		frac *= 10;
	if (p == end || *p != ':')
		goto bad;
	*ns = (int64_t)(sec * 1000000000ull + frac);
	*pp = p + 1;
	return 0;
bad:
	snprintf(ps->msg, sizeof(ps->msg), "bad time '%.*s' (expected SECONDS:)",
		 quote_len(*pp, end), *pp);
	return -1;
}

/* "-1": perf's PID or TID of a task it no longer knows (one exiting). */
static int is_minus_one(const char *p, const char *end)
{
	return end - p >= 2 && p[0] == '-' && p[1] == '1' && (end - p == 2 || !is_digit(p[2]));
}

/* A PID or TID: digits, or -1 (kept as UINT32_MAX, shown as -1). */
static int parse_id(const char **pp, const char *end, uint64_t *v)
{
	if (is_minus_one(*pp, end)) {
		*pp += 2;
		*v = UINT32_MAX;
		return 0;
	}
	return parse_uint(pp, end, INT32_MAX, v);
}

/*
 * Parse `PID[/TID] [CPU] SECONDS: [PERIOD] EVENT: details` at @p. Returns
 * 0, or -1 with the reason in ps->msg.
 */
static int parse_after_comm(struct ps *ps, const char *p, const char *end,
			    struct header *h)
{
	const char *q;
	uint64_t v;

	if (parse_id(&p, end, &h->pid))
		goto bad_pid;
	h->tid = h->pid;
	if (p < end && *p == '/') {
		p++;
		if (parse_id(&p, end, &h->tid))
			goto bad_pid;
	}
	if (p == end) {
		snprintf(ps->msg, sizeof(ps->msg), "header ends after the PID (no time)");
		return -1;
	}
	if (!is_space(*p))
		goto bad_pid;
	p = skip_space(p, end);
	h->cpu = -1;
	if (p < end && *p == '[') {
		q = p + 1;
		if (parse_uint(&q, end, INT32_MAX, &v) || q == end || *q != ']') {
			snprintf(ps->msg, sizeof(ps->msg),
				 "bad CPU '%.*s' (expected [N])", quote_len(p, end), p);
			return -1;
		}
		h->cpu = (int64_t)v;
		p = skip_space(q + 1, end);
	}
	if (p == end) {
		snprintf(ps->msg, sizeof(ps->msg), "header ends before the time");
		return -1;
	}
	if (parse_time(ps, &p, end, &h->time))
		return -1;
	p = skip_space(p, end);
	h->event = h->event_end = h->details = h->details_end = p;
	if (p == end)
		return 0;	/* perf script -F without 'event' */
	/* PERIOD: a number before the event name */
	q = p;
	if (!parse_uint(&q, end, UINT64_MAX, &v) && q < end && is_space(*q))
		p = skip_space(q, end);
	q = memchr(p, ':', (size_t)(end - p));
	if (!q) {
		snprintf(ps->msg, sizeof(ps->msg),
			 "expected 'EVENT:' after the time, found '%.*s'",
			 quote_len(p, end), p);
		return -1;
	}
	h->event = p;
	h->event_end = q;
	/* cpu/cycles/ -> cpu */
	p = memchr(h->event, '/', (size_t)(q - h->event));
	if (p)
		h->event_end = p;
	h->details = skip_space(q + 1, end);
	h->details_end = end;
	return 0;
bad_pid:
	snprintf(ps->msg, sizeof(ps->msg),
		 "expected 'PID[/TID]' after the command name, found '%.*s'",
		 quote_len(p, end), p);
	return -1;
}

/*
 * Does the token at @p look like the PID that ends COMM: `digits/digits`,
 * or `digits` followed by ` [` or by ` SECONDS:`?
 */
static int looks_like_pid(const char *p, const char *end)
{
	if (is_minus_one(p, end))
		p += 2;
	while (p < end && is_digit(*p))
		p++;
	if (p < end && *p == '/')
		return p + 1 < end && (is_digit(p[1]) || is_minus_one(p + 1, end));
	if (p == end || !is_space(*p))
		return 0;
	p = skip_space(p, end);
	if (p < end && *p == '[')
		return 1;
	if (p == end || !is_digit(*p))
		return 0;
	while (p < end && (is_digit(*p) || *p == '.'))
		p++;
	return p < end && *p == ':';
}

/*
 * COMM is free-form (spaces, digits, slashes, or empty), so try each
 * whitespace-separated token that looks like a PID, left to right; the
 * first one after which the rest of the header parses ends COMM.
 */
static int parse_header(struct ps *ps, const char *line, const char *end,
			struct header *h)
{
	const char *p = skip_space(line, end);
	char first[sizeof(ps->msg)];
	int tried = 0;

	for (; p < end; p++) {
		if ((!is_digit(*p) && !is_minus_one(p, end)) ||
		    (p > line && !is_space(p[-1])))
			continue;
		if (!looks_like_pid(p, end))
			continue;
		if (!parse_after_comm(ps, p, end, h)) {
			h->comm = skip_space(line, end);
			h->comm_end = trim_end(h->comm, p);
			return 0;
		}
		if (!tried++)	/* report the first problem */
			memcpy(first, ps->msg, sizeof(first));
	}
	if (tried)
		memcpy(ps->msg, first, sizeof(first));
	else
		snprintf(ps->msg, sizeof(ps->msg),
			 "expected 'PID[/TID]' after the command name "
			 "(a header is 'COMM PID[/TID] [CPU] SECONDS: EVENT:')");
	return -1;
}

/*
 * Kind of an event from its name and the start of its details
 * ("sched:sched_switch: prev_comm=..." has name "sched" and details
 * "sched_switch: ...").
 */
static enum ps_kind event_kind(const struct header *h)
{
	size_t i, n, dn = (size_t)(h->details_end - h->details);
	size_t en = (size_t)(h->event_end - h->event);

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		n = strlen(kind_names[i].name);
		if (dn >= n && !memcmp(h->details, kind_names[i].name, n) &&
		    (dn == n || h->details[n] == ':' || is_space(h->details[n])))
			return kind_names[i].kind;
		if (en == n && !memcmp(h->event, kind_names[i].name, n))
			return kind_names[i].kind;
	}
	return PS_CPU;
}

/* ---- frames ---- */

/* Strip outer () and [] pairs repeatedly: "([unknown])" -> "unknown". */
static void strip_brackets(const char **p, const char **end)
{
	while (*end - *p >= 2 &&
	       ((**p == '(' && (*end)[-1] == ')') || (**p == '[' && (*end)[-1] == ']'))) {
		(*p)++;
		(*end)--;
	}
}

/* Remove the last "+0x..." from @p..*@end unless it starts or ends it. */
static void strip_offset(const char *p, const char **end)
{
	const char *q;

	if (*end - p < 4)
		return;
	for (q = *end - 3; q > p; q--)
		if (q[0] == '+' && q[1] == '0' && q[2] == 'x') {
			if (q + 3 < *end)
				*end = q;
			return;
		}
}

static int equals(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) == n && !memcmp(p, s, n);
}

/*
 * In map-file symbol text, the first space-separated "[Assembly]" token
 * names the module and what follows it the symbol
 * ("instance void [System.Private.CoreLib] System.X::Y()"). Returns 1 and
 * the two spans, or 0 when there is no such token (or nothing after it).
 */
static int assembly_token(const char *p, const char *end, const char **mod,
			  const char **mod_end, const char **sym, const char **sym_end)
{
	const char *t = p, *te;

	while (t < end) {
		te = memchr(t, ' ', (size_t)(end - t));
		if (!te)
			te = end;
		if (te - t >= 3 && *t == '[' && te[-1] == ']') {
			*sym = skip_space(te, end);
			*sym_end = trim_end(*sym, end);
			if (*sym == *sym_end)
				return 0;
			*mod = t + 1;
			*mod_end = te - 1;
			return 1;
		}
		t = te + 1;
	}
	return 0;
}

/*
 * jitted-<pid>.so (perf's jitdump): "[ret] [Assembly] Ns.Type::Method(args)"
 * becomes module "Assembly", symbol "Ns.Type::Method(args)". Left as is
 * when the text does not have that shape.
 */
static void jitted_rule(const char **mod, const char **mod_end, const char **sym,
			const char **sym_end)
{
	const char *p = *sym;
	ptrdiff_t i = *sym_end - p - 1, name, close;
	int depth = 0;

	if (*mod_end - *mod < 10 || memcmp(*mod, "jitted-", 7) ||
	    memcmp(*mod_end - 3, ".so", 3) || i < 0 || p[i] != ')')
		return;
	/* the '(' matching the final ')' */
	for (; i >= 0; i--) {
		if (p[i] == ')')
			depth++;
		else if (p[i] == '(' && --depth == 0)
			break;
	}
	while (i >= 0 && p[i] != ' ')
		i--;
	if (i < 0)
		return;
	name = i + 1;
	while (i >= 0 && p[i] != ']')
		i--;
	if (i < 0)
		return;
	close = i;
	while (i >= 0 && p[i] != '[')
		i--;
	if (i < 0)
		return;
	*mod = p + i + 1;
	*mod_end = p + close;
	*sym = p + name;
}

struct frame_text {
	const char *mod, *mod_end;
	const char *sym, *sym_end;
	const char *tier, *tier_end;	/* .NET optimization tier, or empty */
	int unknown;		/* module or symbol is "unknown" */
	int inlined;		/* "SYMBOL (inlined)": no module of its own */
};

/*
 * .NET runtimes append the JIT's optimization tier to symbols
 * ("Foo()[OptimizedTier1]"); it moves to the front of the frame's symbol
 * ("module![OptimizedTier1]Foo()"). An "[Unknown]" tier is dropped.
 */
static void take_tier(struct frame_text *ft)
{
	static const char *const tiers[] = {
		"MinOptJitted", "Optimized", "QuickJitted", "OptimizedTier1",
		"OptimizedTier1OSR", "ReadyToRun", "PreJIT", "QuickJittedInstrumented",
		"OptimizedTier1Instrumented", "Unknown",
	};
	const char *open = ft->sym_end - 2;
	size_t i;

	ft->tier = ft->tier_end = NULL;
	if (ft->sym_end - ft->sym < 3 || ft->sym_end[-1] != ']')
		return;
	while (open > ft->sym && *open != '[')
		open--;
	if (*open != '[' || ft->sym_end - open <= 2)
		return;
	for (i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++) {
		if (!equals(open + 1, ft->sym_end - 1, tiers[i]))
			continue;
		if (strcmp(tiers[i], "Unknown")) {
			ft->tier = open + 1;
			ft->tier_end = ft->sym_end - 1;
		}
		ft->sym_end = open;
		return;
	}
}

/*
 * Split the text after a frame's address, "SYMBOL[+0xOFF] (MODULE)", into
 * module file name and symbol (the spans point into @p..@end).
 */
static int split_frame(struct ps *ps, const char *p, const char *end,
		       struct frame_text *ft)
{
	const char *lp, *raw_sym, *raw_sym_end, *s;

	lp = memrchr(p, '(', (size_t)(end - p));
	if (!lp)
		return fail(ps, "frame line has no '(MODULE)' after '%.*s'%s",
			    quote_len(p, end), p, ps->lr.last_had_newline ?
			    " (perf script -F needs 'dso')" : "");
	if (end[-1] != ')')
		return fail(ps, "frame line does not end with ')' after '(MODULE'");
	/* perf marks inline frames "SYMBOL (MODULE) (inlined)" */
	ft->inlined = 0;
	if (equals(lp, end, "(inlined)") && lp > p) {
		const char *e = trim_end(p, lp);
		const char *lp2 = NULL;

		if (e > p && e[-1] == ')')
			lp2 = memrchr(p, '(', (size_t)(e - p));

		if (lp2) {
			lp = lp2;
			end = e;
		} else {
			ft->inlined = 1;
		}
	}
	ft->mod = lp;
	ft->mod_end = end;
	strip_brackets(&ft->mod, &ft->mod_end);
	ft->mod = skip_space(ft->mod, ft->mod_end);
	ft->mod_end = trim_end(ft->mod, ft->mod_end);
	strip_brackets(&ft->mod, &ft->mod_end);

	raw_sym = p;
	raw_sym_end = trim_end(p, lp);
	ft->sym = raw_sym;
	ft->sym_end = raw_sym_end;
	strip_brackets(&ft->sym, &ft->sym_end);

	if (ft->mod_end - ft->mod >= 4 && !memcmp(ft->mod_end - 4, ".map", 4)) {
		/* perf-<pid>.map text may carry "[Assembly] symbol" */
		const char *m, *me, *y, *ye;

		if (assembly_token(raw_sym, raw_sym_end, &m, &me, &y, &ye)) {
			ft->mod = m;
			ft->mod_end = me;
			ft->sym = y;
			ft->sym_end = ye;
		}
	}
	/* module file name, without a "+0x..." offset perf -F dsoff adds */
	for (s = ft->mod_end; s > ft->mod; s--)
		if (s[-1] == '/' || s[-1] == '\\')
			break;
	ft->mod = s;
	strip_offset(ft->mod, &ft->mod_end);
	strip_offset(ft->sym, &ft->sym_end);
	take_tier(ft);
	ft->unknown = equals(ft->mod, ft->mod_end, "unknown") ||
		      equals(ft->sym, ft->sym_end, "unknown");
	jitted_rule(&ft->mod, &ft->mod_end, &ft->sym, &ft->sym_end);
	return 0;
}

#define READIED_SUFFIX " (READIED_BY)"

/*
 * Intern "module!symbol" for @ft; a waker's frame in the thread-time view
 * gets READIED_SUFFIX.
 */
static int intern_frame_text(struct ps *ps, const struct frame_text *ft, uint32_t *frame)
{
	size_t ml = (size_t)(ft->mod_end - ft->mod), sl = (size_t)(ft->sym_end - ft->sym);
	size_t tl = ft->tier ? (size_t)(ft->tier_end - ft->tier) + 2 : 0;
	int readied = ps->ev.frames == FR_WAKER;
	size_t xl = readied ? sizeof(READIED_SUFFIX) - 1 : 0;
	char *p;
	int err;

	hs_buf_reset(&ps->name);
	if (hs_buf_grow(&ps->name, ml + tl + sl + xl + 1))
		return nomem(ps);
	p = ps->name.s;
	memcpy(p, ft->mod, ml);
	p += ml;
	*p++ = '!';
	if (tl) {
		*p++ = '[';
		memcpy(p, ft->tier, tl - 2);
		p += tl - 2;
		*p++ = ']';
	}
	memcpy(p, ft->sym, sl);
	memcpy(p + sl, READIED_SUFFIX, xl);
	ps->name.len = ml + tl + sl + xl + 1;
	ps->name.s[ps->name.len] = '\0';
	err = hs_source_intern_frame(ps->out, ps->name.s, ps->name.len, frame);
	if (err == -ENOMEM)
		return nomem(ps);
	if (err) {
		hs_diag_set(ps->diag, ps->lr.lineno, "too many frame names");
		return err;
	}
	return 0;
}

/* A frame perf left unknown: ask the symbol files beside the trace. */
static int resolve_unknown(struct ps *ps, uint64_t addr, struct frame_text *ft, int *hit)
{
	const char *sym, *mod, *m, *me, *y, *ye;
	size_t sym_len, mod_len;
	int ret;

	ret = ps->syms->lookup(ps->syms->ctx, ps->ev.pid, addr, ft->mod,
			       (size_t)(ft->mod_end - ft->mod), &sym, &sym_len, &mod,
			       &mod_len);
	if (ret < 0) {
		hs_diag_set(ps->diag, ps->lr.lineno,
			    "cannot read the trace's symbol maps");
		return ret;
	}
	*hit = ret > 0;
	if (!ret)
		return 0;
	y = skip_space(sym, sym + sym_len);
	ye = trim_end(y, sym + sym_len);
	if (assembly_token(y, ye, &m, &me, &y, &ye)) {
		ft->mod = m;
		ft->mod_end = me;
	} else {
		ft->mod = mod;
		ft->mod_end = mod + mod_len;
	}
	ft->sym = y;
	ft->sym_end = ye;
	take_tier(ft);
	jitted_rule(&ft->mod, &ft->mod_end, &ft->sym, &ft->sym_end);
	return 0;
}

/* Append @frame to the event's frames. */
static int push_frame(struct ps *ps, uint32_t frame)
{
	if (ps->nr_frames >= MAX_FRAMES)
		return fail(ps, "more than %d frames in one stack", MAX_FRAMES);
	if (HS_GROW(ps->frames, ps->nr_frames + 1, ps->alloc_frames))
		return nomem(ps);
	ps->frames[ps->nr_frames++] = frame;
	return 0;
}

/*
 * perf (without --no-inline) prints the functions inlined at an address
 * as "ADDRESS SYMBOL (inlined)" lines, innermost first, usually followed
 * by the host function's own frame at the same address. Such frames wait
 * in ps->inl (each an 8-byte address, then the symbol and a NUL) for the
 * next frame with a module: those at its address @addr take its module
 * @mod..@mod_end; the others (perf printed no host for them) keep the
 * module "inlined", as PerfView reads them.
 */
static int flush_inlined(struct ps *ps, uint64_t addr, const char *mod,
			 const char *mod_end)
{
	static const char inl[] = "inlined";
	struct frame_text ft = { 0 };
	size_t off = 0, n;
	uint64_t at;
	uint32_t frame;
	int err;

	while (off < ps->inl.len) {
		memcpy(&at, ps->inl.s + off, sizeof(at));
		off += sizeof(at);
		n = strlen(ps->inl.s + off);
		ft.sym = ps->inl.s + off;
		ft.sym_end = ft.sym + n;
		off += n + 1;
		ft.mod = mod && at == addr ? mod : inl;
		ft.mod_end = mod && at == addr ? mod_end : inl + sizeof(inl) - 1;
		err = intern_frame_text(ps, &ft, &frame);
		if (!err)
			err = push_frame(ps, frame);
		if (err)
			return err;
	}
	hs_buf_reset(&ps->inl);
	ps->nr_inl = 0;
	return 0;
}

/*
 * A TAB-led frame line: "ADDRESS SYMBOL[+0xOFF] (MODULE)". Appends its
 * frame to ps->frames when the event's kind wants frames.
 */
static int read_frame(struct ps *ps, const char *line, const char *end)
{
	const char *p = skip_space(line, end), *a = p, *text;
	struct frame_text ft;
	uint64_t addr = 0;
	uint32_t frame;
	int err, hit = 0;

	for (; p < end && !is_space(*p); p++) {
		int v = hex_value(*p);

		if (v < 0 || p - a >= 16)
			return fail(ps, "bad frame address '%.*s' (expected hex)",
				    quote_len(a, end), a);
		addr = addr << 4 | (uint64_t)v;
	}
	text = skip_space(p, end);
	end = trim_end(text, end);
	if (text == end)
		return fail(ps, "frame line has no 'SYMBOL (MODULE)' after the address");
	err = split_frame(ps, text, end, &ft);
	if (err || ps->ev.frames == FR_NONE)
		return err;
	if (ft.inlined) {
		if (ps->nr_frames + ps->nr_inl >= MAX_FRAMES)
			return fail(ps, "more than %d frames in one stack", MAX_FRAMES);
		if (hs_buf_add(&ps->inl, (const char *)&addr, sizeof(addr)) ||
		    hs_buf_add(&ps->inl, ft.sym, (size_t)(ft.sym_end - ft.sym)) ||
		    hs_buf_addc(&ps->inl, '\0'))
			return nomem(ps);
		ps->nr_inl++;
		return 0;
	}
	if (ft.unknown && ps->syms) {
		err = resolve_unknown(ps, addr, &ft, &hit);
		if (err)
			return err;
	}
	if (ps->inl.len) {
		err = flush_inlined(ps, addr, ft.mod, ft.mod_end);
		if (err)
			return err;
	}
	err = intern_frame_text(ps, &ft, &frame);
	return err ? err : push_frame(ps, frame);
}

/* ---- processes, threads, stacks ---- */

static int proc_add_comm(struct ps *ps, struct proc *pr, uint32_t pid,
			 const char *comm, size_t len)
{
	size_t before = hs_strtab_count(&ps->comms);
	uint32_t id;
	int n;

	hs_buf_reset(&ps->name);
	n = hs_buf_addf(&ps->name, "%d:", (int)pid);
	if (n || hs_buf_add(&ps->name, comm, len) ||
	    hs_strtab_intern(&ps->comms, ps->name.s, ps->name.len, &id))
		return nomem(ps);
	pr->comm = hs_strtab_get(&ps->comms, id) + (ps->name.len - len);
	pr->comm_len = len;
	if (id < before)
		return 0;	/* this pid had that name before */
	if (HS_GROW(ps->comm_next, (size_t)id + 1, ps->alloc_comm_next))
		return nomem(ps);
	ps->comm_next[id] = NO_ID;
	if (pr->nr_comms)
		ps->comm_next[pr->last] = id;
	else
		pr->first = id;
	pr->last = id;
	pr->nr_comms++;
	return 0;
}

/* The process frame of @pid, noting @comm as one of its names. */
static int process_frame(struct ps *ps, uint32_t pid, const char *comm, size_t len,
			 uint32_t *frame)
{
	struct proc *pr;
	uint64_t *v;
	int err;

	if (map_put(&ps->pids, pid, &v))
		return nomem(ps);
	if (!*v) {
		if (HS_GROW(ps->procs, ps->nr_procs + 1, ps->alloc_procs))
			return nomem(ps);
		pr = &ps->procs[ps->nr_procs++];
		memset(pr, 0, sizeof(*pr));
		*v = ps->nr_procs;
		err = proc_add_comm(ps, pr, pid, comm, len);
		if (err)
			return err;
		hs_buf_reset(&ps->name);
		if (hs_buf_adds(&ps->name, "Process ") ||
		    hs_buf_add(&ps->name, comm, len) ||
		    hs_buf_addf(&ps->name, " (%d)", (int)pid))
			return nomem(ps);
		err = hs_source_intern_frame(ps->out, ps->name.s, ps->name.len,
					     &pr->frame);
		if (err)
			return err == -ENOMEM ? nomem(ps) : err;
	}
	pr = &ps->procs[*v - 1];
	if (len != pr->comm_len || memcmp(comm, pr->comm, len)) {
		err = proc_add_comm(ps, pr, pid, comm, len);
		if (err)
			return err;
	}
	*frame = pr->frame;
	return 0;
}

static int thread_frame(struct ps *ps, uint32_t tid, uint32_t *frame)
{
	uint64_t *v;
	char name[32];
	uint32_t id;
	int err, n;

	if (map_put(&ps->tids, tid, &v))
		return nomem(ps);
	if (!*v) {
		n = snprintf(name, sizeof(name), "Thread (%d)", (int)tid);
		err = hs_source_intern_frame(ps->out, name, (size_t)n, &id);
		if (err)
			return err == -ENOMEM ? nomem(ps) : err;
		*v = (uint64_t)id + 1;
	}
	*frame = (uint32_t)(*v - 1);
	return 0;
}

/*
 * Intern the stack Process -> Thread -> frames (outermost first), reusing
 * the prefix it shares with the previous sample's stack.
 */
static int build_stack(struct ps *ps, uint32_t proc, uint32_t thread, uint32_t *stack)
{
	size_t n = ps->nr_frames + 2, i = 0;
	uint32_t s = HS_NO_STACK, f;
	int err;

	if (HS_GROW(ps->path_frame, n, ps->alloc_path) ||
	    HS_GROW(ps->path_stack, n, ps->alloc_path2))
		return nomem(ps);
	for (;; i++) {
		if (i == n) {
			*stack = ps->path_stack[n - 1];
			ps->path_len = n;
			return 0;
		}
		f = i == 0 ? proc : i == 1 ? thread : ps->frames[n - 1 - i];
		if (i >= ps->path_len || ps->path_frame[i] != f)
			break;
	}
	if (i)
		s = ps->path_stack[i - 1];
	for (; i < n; i++) {
		f = i == 0 ? proc : i == 1 ? thread : ps->frames[n - 1 - i];
		err = hs_source_intern_stack(ps->out, f, s, &s);
		if (err) {
			ps->path_len = 0;
			return err == -ENOMEM ? nomem(ps) : err;
		}
		ps->path_frame[i] = f;
		ps->path_stack[i] = s;
	}
	ps->path_len = n;
	*stack = s;
	return 0;
}

/* ---- event handlers ---- */

static int on_ignored(struct ps *ps, const struct ps_event *ev)
{
	(void)ps;
	(void)ev;
	return 0;
}

/*
 * A CPU sample: metric pending (NAN) until the next sample on its CPU
 * ends it; the previous sample on this CPU gets its weight now.
 */
static int get_thr(struct ps *ps, uint32_t tid, struct thr **t);
static int special_frame(struct ps *ps, uint32_t *frame, const char *name);

/* Weight of a sample at @from ended at @to, in ms (never negative). */
static double ms_between(int64_t from, int64_t to)
{
	return to > from ? (double)(to - from) / 1e6 : 0;
}

/*
 * A CPU sample: metric pending (NAN) until the next sample on its CPU
 * ends it (or, in the thread-time view, its thread's switch-out or exit);
 * the previous sample on this CPU gets its weight now.
 */
static int on_cpu_sample(struct ps *ps, const struct ps_event *ev)
{
	struct hs_stack_source *out = ps->out;
	uint32_t proc, thread, stack;
	struct thr *t;
	uint64_t *last;
	int err;

	err = process_frame(ps, ev->pid, ps->comm.s, ps->comm.len, &proc);
	if (!err)
		err = thread_frame(ps, ev->tid, &thread);
	if (!err)
		err = build_stack(ps, proc, thread, &stack);
	if (!err && ps->tt) {
		err = special_frame(ps, &ps->cpu_time_frame, HS_FRAME_CPU_TIME);
		if (!err)
			err = hs_source_intern_stack(out, ps->cpu_time_frame, stack,
						     &stack);
		if (err)
			return err == -ENOMEM ? nomem(ps) : err;
	}
	if (err)
		return err;
	if (map_put(&ps->cpus, (uint64_t)(ev->cpu + 1), &last))
		return nomem(ps);
	if (*last) {
		size_t prev = *last - 1;

		if (!ps->tt)
			out->metric[prev] = (double)(ev->time - out->time[prev]) / 1e6;
		else if (isnan(out->metric[prev]))
			out->metric[prev] = ms_between(out->time[prev], ev->time);
	}
	if (hs_source_add_sample(out, ev->time, NAN, 1, stack))
		return nomem(ps);
	*last = out->nr_samples;
	if (ps->tt) {
		err = get_thr(ps, ev->tid, &t);
		if (err)
			return err;
		t->last_cpu = out->nr_samples;
	}
	return 0;
}

/* ---- thread time ---- */

/* The thread-time state of @tid, created idle when missing. */
static int get_thr(struct ps *ps, uint32_t tid, struct thr **t)
{
	uint64_t *v;

	if (map_put(&ps->thr_index, tid, &v))
		return nomem(ps);
	if (!*v) {
		if (HS_GROW(ps->thrs, ps->nr_thrs + 1, ps->alloc_thrs))
			return nomem(ps);
		memset(&ps->thrs[ps->nr_thrs], 0, sizeof(ps->thrs[0]));
		*v = ++ps->nr_thrs;
	}
	*t = &ps->thrs[*v - 1];
	return 0;
}

/* The state of @tid, or NULL when it was never seen. */
static struct thr *find_thr(struct ps *ps, uint32_t tid)
{
	uint64_t *v = map_get(&ps->thr_index, tid);

	return v ? &ps->thrs[*v - 1] : NULL;
}

/* Intern a pseudo-frame once: CPU_TIME, BLOCKED_TIME, READIED_TIME. */
static int special_frame(struct ps *ps, uint32_t *frame, const char *name)
{
	int err;

	if (*frame != NO_ID)
		return 0;
	err = hs_source_intern_frame(ps->out, name, strlen(name), frame);
	return err == -ENOMEM ? nomem(ps) : err;
}

/* Weigh @t's pending CPU sample up to @time (its switch-out or exit). */
static void end_cpu(struct ps *ps, struct thr *t, int64_t time)
{
	struct hs_stack_source *out = ps->out;
	size_t i;

	if (!t->last_cpu)
		return;
	i = t->last_cpu - 1;
	if (isnan(out->metric[i]))
		out->metric[i] = ms_between(out->time[i], time);
	t->last_cpu = 0;
}

/* One sample from @from to @to on @stack plus the pseudo-frame @leaf. */
static int add_period(struct ps *ps, int64_t from, int64_t to, uint32_t stack,
		      uint32_t *leaf, const char *leaf_name)
{
	int err;

	if (to <= from)
		return 0;
	err = special_frame(ps, leaf, leaf_name);
	if (err)
		return err;
	err = hs_source_intern_stack(ps->out, *leaf, stack, &stack);
	if (!err)
		err = hs_source_add_sample(ps->out, from, ms_between(from, to), 1, stack);
	return err == -ENOMEM ? nomem(ps) : err;
}

/*
 * @t runs again (or the trace ends) at @end: its time switched out
 * becomes BLOCKED_TIME up to its wakeup and READIED_TIME from there, or
 * READIED_TIME all through when it was preempted.
 */
static int end_wait(struct ps *ps, struct thr *t, int64_t end)
{
	int64_t blocked_end = end;
	enum thr_state state = t->state;
	uint32_t stack;
	int err;

	t->state = T_RUNNING;
	if (state == T_READY)
		return add_period(ps, t->since, end, t->stack, &ps->ready_frame,
				  HS_FRAME_READIED_TIME);
	if (state != T_BLOCKED)
		return 0;
	if (t->woken >= 0 && end - t->woken > MIN_READIED_NS) {
		blocked_end = t->woken;
		err = add_period(ps, t->woken, end, t->stack, &ps->ready_frame,
				 HS_FRAME_READIED_TIME);
		if (err)
			return err;
	}
	stack = t->readied_stack != HS_NO_STACK ? t->readied_stack : t->stack;
	return add_period(ps, t->since, blocked_end, stack, &ps->blocked_frame,
			  HS_FRAME_BLOCKED_TIME);
}

/* Any event of a thread shows it running: its wait is over. */
static int thread_ran(struct ps *ps, const struct ps_event *ev)
{
	struct thr *t = find_thr(ps, ev->tid);

	return t ? end_wait(ps, t, ev->time) : 0;
}

/*
 * The value of the field "@key=" in @p..@end: the first (@last = 0) or
 * last occurrence that starts the text or follows a blank. The value runs
 * to the next blank. Returns 0, or -1 when there is no such field or its
 * value is empty.
 */
static int find_field(const char *p, const char *end, const char *key, int last,
		      const char **val, const char **val_end)
{
	size_t kl = strlen(key);
	const char *q = p, *hit = NULL;

	while ((size_t)(end - q) >= kl) {
		const char *k = memmem(q, (size_t)(end - q), key, kl);

		if (!k)
			break;
		if (k == p || is_space(k[-1])) {
			hit = k;
			if (!last)
				break;
		}
		q = k + 1;
	}
	if (!hit)
		return -1;
	*val = hit + kl;
	for (*val_end = *val; *val_end < end && !is_space(**val_end); (*val_end)++)
		;
	return *val_end > *val ? 0 : -1;
}

/* The field @key of event @what, a whole number (a pid). */
static int pid_field(struct ps *ps, const struct ps_event *ev, const char *what,
		     const char *key, int last, uint32_t *pid)
{
	const char *p = ps->details.s, *end = p + ps->details.len, *v, *ve, *q;
	uint64_t n;

	if (find_field(p, end, key, last, &v, &ve))
		return fail_at(ps, ev->line, "%s event without '%sN'", what, key);
	q = v;
	if (parse_uint(&q, ve, INT32_MAX, &n) || q != ve)
		return fail_at(ps, ev->line, "bad '%s%.*s' (expected a whole number)",
			       key, quote_len(v, ve), v);
	*pid = (uint32_t)n;
	return 0;
}

/*
 * sched_switch: "prev_comm=C prev_pid=N prev_prio=N prev_state=S ==>
 * next_comm=C next_pid=N next_prio=N". COMM may hold blanks, so prev_*
 * fields are the first of their name and next_* the last. The thread
 * switching out is the event's own (the header's TID; prev_pid is only
 * checked).
 */
static int on_sched_switch(struct ps *ps, const struct ps_event *ev)
{
	const char *p = ps->details.s, *end = p + ps->details.len, *st, *st_end;
	uint32_t prev_pid, next_pid, proc, thread;
	struct thr *t, *n;
	int err;

	err = pid_field(ps, ev, "sched_switch", "prev_pid=", 0, &prev_pid);
	if (!err)
		err = pid_field(ps, ev, "sched_switch", "next_pid=", 1, &next_pid);
	if (err)
		return err;
	if (find_field(p, end, "prev_state=", 0, &st, &st_end))
		return fail_at(ps, ev->line, "sched_switch event without 'prev_state=S'");
	if (ev->tid) {
		err = get_thr(ps, ev->tid, &t);
		if (err)
			return err;
		end_cpu(ps, t, ev->time);
		/* R (R+): preempted, still runnable; X, Z: dead */
		if (*st != 'X' && *st != 'Z' && *st != 'x') {
			err = process_frame(ps, ev->pid, ps->comm.s, ps->comm.len, &proc);
			if (!err)
				err = thread_frame(ps, ev->tid, &thread);
			if (!err)
				err = build_stack(ps, proc, thread, &t->stack);
			if (err)
				return err;
			t->state = *st == 'R' ? T_READY : T_BLOCKED;
			t->since = ev->time;
			t->woken = -1;
			t->readied_stack = HS_NO_STACK;
		}
	}
	n = next_pid ? find_thr(ps, next_pid) : NULL;
	return n ? end_wait(ps, n, ev->time) : 0;
}

/* sched_process_exit: the thread (the header's TID) is gone. */
static int on_sched_exit(struct ps *ps, const struct ps_event *ev)
{
	struct thr *t = find_thr(ps, ev->tid);

	if (t) {
		end_cpu(ps, t, ev->time);
		t->state = T_RUNNING;
	}
	return 0;
}

/*
 * sched_waking, sched_wakeup: "comm=C pid=N prio=N [success=1]
 * target_cpu=N", in the context of the header's thread: for sched_waking
 * always the waker, whose stack the event carries (the header comment
 * says when sched_wakeup's is). The first one while the woken thread is
 * blocked ends its blocked time; if it kept frames (a sched_wakeup after a
 * sched_waking keeps none), READIED BY TID(tid) comm (pid) and the waker's
 * frames go under the blocked stack.
 */
static int on_sched_wakeup(struct ps *ps, const struct ps_event *ev)
{
	struct hs_stack_source *out = ps->out;
	uint32_t pid, frame, stack;
	struct thr *t;
	size_t i;
	int err;

	err = pid_field(ps, ev, ev->kind == PS_SCHED_WAKING ? "sched_waking" :
			"sched_wakeup", "pid=", 1, &pid);
	if (err)
		return err;
	t = find_thr(ps, pid);
	if (!t || t->state != T_BLOCKED || t->woken >= 0)
		return 0;
	t->woken = ev->time;
	if (!ps->nr_frames)
		return 0;
	hs_buf_reset(&ps->name);
	if (hs_buf_addf(&ps->name, "READIED BY TID(%d) ", (int)ev->tid) ||
	    hs_buf_add(&ps->name, ps->comm.s, ps->comm.len) ||
	    hs_buf_addf(&ps->name, " (%d)", (int)ev->pid))
		return nomem(ps);
	err = hs_source_intern_frame(out, ps->name.s, ps->name.len, &frame);
	if (!err)
		err = hs_source_intern_stack(out, frame, t->stack, &stack);
	for (i = ps->nr_frames; !err && i > 0; i--)
		err = hs_source_intern_stack(out, ps->frames[i - 1], stack, &stack);
	if (err)
		return err == -ENOMEM ? nomem(ps) : err;
	t->readied_stack = stack;
	return 0;
}

/* End the current event, if any: hand it to its kind's handler. */
static int end_event(struct ps *ps)
{
	int err;

	if (!ps->in_event)
		return 0;
	ps->in_event = 0;
	ps->after_frame = 0;
	if (ps->inl.len) {
		err = flush_inlined(ps, 0, NULL, NULL);
		if (err)
			return err;
	}
	if (ps->tt) {
		err = thread_ran(ps, &ps->ev);
		if (err)
			return err;
	}
	err = kinds[ps->ev.kind].finish[ps->tt](ps, &ps->ev);
	ps->nr_frames = 0;
	return err;
}

static int copy_span(struct hs_buf *b, const char *p, const char *end)
{
	hs_buf_reset(b);
	return hs_buf_add(b, p, (size_t)(end - p));
}

/* A header line (not TAB-led, not blank) starts a new event. */
/*
 * `perf script -F +srcline` prints "  file.c:12" (or "  ??:0", or
 * "  f.c:7 (discriminator 2)", or "  module[hexaddr]" when it knows no
 * line) on a line of its own under a frame.
 */
static int is_srcline(const char *line, const char *end)
{
	const char *p = trim_end(line, end), *d;

	if (end - line < 3 || line[0] != ' ' || line[1] != ' ' || is_space(line[2]))
		return 0;
	if (p[-1] == ']') {
		for (d = p - 1; d > line && hex_value(d[-1]) >= 0; d--)
			;
		return d < p - 1 && d - 1 > line + 2 && d[-1] == '[';
	}
	if (p > line && p[-1] == ')') {
		const char *open = p - 1;

		while (open > line && *open != '(')
			open--;
		if (p - open < 16 || memcmp(open, "(discriminator ", 15))
			return 0;
		p = trim_end(line, open);
	}
	for (d = p; d > line && is_digit(d[-1]); d--)
		;
	return d < p && d > line && d[-1] == ':';
}

static int start_event(struct ps *ps, const char *line, const char *end)
{
	struct header h;
	int err;

	if (parse_header(ps, line, end, &h)) {
		if (ps->after_frame && is_srcline(line, end))
			return 0;
		return fail(ps, "%s", ps->msg);
	}
	err = end_event(ps);
	if (err)
		return err;
	if (!ps->have_base) {
		ps->have_base = 1;
		ps->base = h.time;
	}
	if (h.time - ps->base > ps->last_time)
		ps->last_time = h.time - ps->base;
	ps->ev.kind = event_kind(&h);
	ps->ev.frames = kinds[ps->ev.kind].frames[ps->tt];
	if (ps->ev.kind == PS_SCHED_WAKING)
		ps->seen_waking = 1;
	else if (ps->ev.kind == PS_SCHED_WAKEUP && ps->seen_waking)
		ps->ev.frames = FR_NONE;	/* not the waker's stack, maybe */
	ps->ev.pid = (uint32_t)h.pid;
	ps->ev.tid = (uint32_t)h.tid;
	ps->ev.cpu = h.cpu;
	ps->ev.time = h.time - ps->base;
	ps->ev.line = ps->lr.lineno;
	if (copy_span(&ps->comm, h.comm, h.comm_end))
		return nomem(ps);
	if (ps->ev.kind != PS_CPU &&
	    (copy_span(&ps->event, h.event, h.event_end) ||
	     copy_span(&ps->details, h.details, h.details_end)))
		return nomem(ps);
	ps->in_event = 1;
	return 0;
}

/* ---- the end: process names, dropped samples ---- */

static int is_ignored_name(const char *s, size_t n)
{
	static const char *const ignored[] = {
		".NET Finalizer", ".NET Tiered Compilation Worker", ".NET BGC",
		".NET Server GC",
	};
	size_t i;

	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (strlen(ignored[i]) == n && !memcmp(ignored[i], s, n))
			return 1;
	return 0;
}

/*
 * A pid seen with several COMM values is named by all of them joined with
 * ';' in order of first sight, leaving out the .NET helper-thread names
 * unless nothing else is left.
 */
static int name_processes(struct ps *ps)
{
	size_t i;
	int pass, added, err;

	for (i = 0; i < ps->nr_procs; i++) {
		struct proc *pr = &ps->procs[i];
		const char *colon;
		uint32_t id;

		if (pr->nr_comms < 2)
			continue;
		hs_buf_reset(&ps->name);
		if (hs_buf_adds(&ps->name, "Process "))
			return nomem(ps);
		added = 0;
		for (pass = 0; pass < 2 && !added; pass++) {
			for (id = pr->first; id != NO_ID; id = ps->comm_next[id]) {
				const char *s = hs_strtab_get(&ps->comms, id);
				size_t n = hs_strtab_len(&ps->comms, id);

				colon = memchr(s, ':', n);
				n -= (size_t)(colon + 1 - s);
				s = colon + 1;
				if (!pass && is_ignored_name(s, n))
					continue;
				if ((added && hs_buf_addc(&ps->name, ';')) ||
				    hs_buf_add(&ps->name, s, n))
					return nomem(ps);
				added = 1;
			}
		}
		colon = hs_strtab_get(&ps->comms, pr->first);
		if (hs_buf_addf(&ps->name, " (%.*s)", (int)(strchr(colon, ':') - colon),
				colon))
			return nomem(ps);
		err = hs_source_rename_frame(ps->out, pr->frame, ps->name.s,
					     ps->name.len);
		/* -EEXIST: a real frame has this very name; keep the first one */
		if (err == -ENOMEM)
			return nomem(ps);
		if (err && err != -EEXIST)
			return err;
	}
	return 0;
}

/* Drop the samples still without a weight: the last one of each CPU. */
static void drop_unweighted(struct hs_stack_source *out)
{
	size_t i, j = 0;

	for (i = 0; i < out->nr_samples; i++) {
		if (isnan(out->metric[i]))
			continue;
		out->time[j] = out->time[i];
		out->metric[j] = out->metric[i];
		out->count[j] = out->count[i];
		out->stack[j] = out->stack[i];
		j++;
	}
	out->nr_samples = j;
}

/* Order of samples by time, then by index (a stable sort). */
static int by_time(const void *a, const void *b, void *src)
{
	const int64_t *time = ((const struct hs_stack_source *)src)->time;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int64_t ti = time[i], tj = time[j];

	if (ti != tj)
		return ti < tj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Put the samples in time order (blocked periods come out at their end). */
static int sort_samples(struct hs_stack_source *out)
{
	size_t n = out->nr_samples, i, sorted = 1;
	size_t *perm;
	void *tmp;

	for (i = 1; i < n && sorted; i++)
		sorted = out->time[i - 1] <= out->time[i];
	if (sorted)
		return 0;
	perm = hs_malloc(n * sizeof(*perm));
	tmp = hs_malloc(n * 8);
	if (!perm || !tmp) {
		hs_free(perm);
		hs_free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		perm[i] = i;
	qsort_r(perm, n, sizeof(*perm), by_time, out);
#define PERMUTE(arr, type)                                      \
	do {                                                    \
		type *t_ = tmp;                                 \
		for (i = 0; i < n; i++)                         \
			t_[i] = (arr)[perm[i]];                 \
		memcpy((arr), t_, n * sizeof(type));            \
	} while (0)
	PERMUTE(out->time, int64_t);
	PERMUTE(out->metric, double);
	PERMUTE(out->count, double);
	PERMUTE(out->stack, uint32_t);
#undef PERMUTE
	hs_free(perm);
	hs_free(tmp);
	return 0;
}

static int finish(struct ps *ps)
{
	int err = name_processes(ps);
	size_t i;

	for (i = 0; !err && i < ps->nr_thrs; i++)
		err = end_wait(ps, &ps->thrs[i], ps->last_time);
	if (err)
		return err;
	drop_unweighted(ps->out);
	if (ps->tt && sort_samples(ps->out))
		return nomem(ps);
	ps->out->kind = HS_METRIC_TIME;
	hs_free(ps->out->metric_unit);
	ps->out->metric_unit = hs_strdup("ms");
	return ps->out->metric_unit ? 0 : nomem(ps);
}

/* ---- the line loop ---- */

static int is_blank(const char *p, const char *end)
{
	return skip_space(p, end) == end;
}

static int read_lines(struct ps *ps)
{
	char *line, *end;
	size_t len;
	int ret, first = 1, err;

	while ((ret = hs_linereader_next(&ps->lr, &line, &len)) > 0) {
		end = line + len;
		if (first) {
			first = 0;
			if (len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3))
				line += 3;
			if (end - line >= 7 && !memcmp(line, "PERFILE", 7))
				return fail(ps, "this is a binary perf.data file: "
					    "convert it with 'perf script -i FILE "
					    "> FILE.data.txt'");
		}
		if (memchr(line, '\0', (size_t)(end - line)))
			return fail(ps, "NUL byte in a line: not perf script text");
		if (line[0] == '\t' && !is_blank(line, end)) {
			if (!ps->in_event)
				return fail(ps, "frame line outside a sample (no "
					    "header line since the last blank line)");
			err = read_frame(ps, line + 1, end);
			if (err)
				return err;
			ps->after_frame = 1;
			continue;
		}
		if (is_blank(line, end)) {
			err = end_event(ps);
			if (err)
				return err;
			continue;
		}
		if (line[0] == '#')
			continue;
		err = start_event(ps, line, end);
		if (err)
			return err;
	}
	if (ret == -E2BIG && !ps->lr.lineno && ps->lr.end - ps->lr.start >= 7 &&
	    !memcmp(ps->lr.buf + ps->lr.start, "PERFILE", 7)) {
		hs_diag_set(ps->diag, 1, "this is a binary perf.data file: convert it "
			    "with 'perf script -i FILE > FILE.data.txt'");
		return -EINVAL;
	}
	if (ret == -E2BIG) {
		hs_diag_set(ps->diag, ps->lr.lineno + 1, "line longer than %zu bytes",
			    (size_t)MAX_LINE);
		return -EINVAL;
	}
	if (ret < 0) {
		hs_diag_set(ps->diag, ps->lr.lineno + 1, "read error");
		return ret;
	}
	return end_event(ps);
}

static void ps_release(struct ps *ps)
{
	hs_linereader_release(&ps->lr);
	hs_buf_release(&ps->name);
	hs_buf_release(&ps->comm);
	hs_buf_release(&ps->event);
	hs_buf_release(&ps->details);
	hs_buf_release(&ps->inl);
	hs_free(ps->frames);
	map_release(&ps->pids);
	hs_free(ps->procs);
	hs_strtab_release(&ps->comms);
	hs_free(ps->comm_next);
	map_release(&ps->tids);
	map_release(&ps->cpus);
	map_release(&ps->thr_index);
	hs_free(ps->thrs);
	hs_free(ps->path_frame);
	hs_free(ps->path_stack);
}

int hs__import_perf_script(FILE *f, enum hs_perf_view view, struct hs_stack_source *out,
			   struct hs_diag *diag, const struct hs__perf_symbols *syms)
{
	struct ps *ps = hs_calloc(1, sizeof(*ps));
	int err;

	if (!ps) {
		hs_diag_set(diag, 0, "out of memory");
		return -ENOMEM;
	}
	ps->out = out;
	ps->diag = diag;
	ps->syms = syms;
	ps->tt = view == HS_PERF_THREAD_TIME;
	ps->cpu_time_frame = ps->blocked_frame = ps->ready_frame = NO_ID;
	hs_buf_init(&ps->name);
	hs_buf_init(&ps->comm);
	hs_buf_init(&ps->event);
	hs_buf_init(&ps->details);
	hs_buf_init(&ps->inl);
	hs_strtab_init(&ps->comms, 0);
	err = hs_linereader_init(&ps->lr, f, MAX_LINE);
	if (err)
		err = nomem(ps);
	if (!err)
		err = read_lines(ps);
	if (!err)
		err = finish(ps);
	ps_release(ps);
	hs_free(ps);
	return err;
}

int hs_import_perf_script(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs__import_perf_script(f, HS_PERF_CPU, out, diag, NULL);
}

int hs_import_perf_script_view(FILE *f, enum hs_perf_view view,
			       struct hs_stack_source *out, struct hs_diag *diag)
{
	return hs__import_perf_script(f, view, out, diag, NULL);
}
