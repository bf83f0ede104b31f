/*
 * import_perf_script_threadtime - the thread-time view of `perf script`
 * text: each thread's state from the scheduler events, its time cut into
 * periods (import_perf_script.h maps the importer's files).
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
 * State: one struct thr per thread (ps->thrs, indexed by ps->thr_index),
 * owned by the driver's struct ps; the samples go into ps->out.
 */
#include "io/import_perf_script.h"
#include "common/alloc.h"
#include <errno.h>
#include <math.h>
#include <string.h>

/*
 * A wait for the CPU after a wakeup shorter than this stays in the blocked
 * period (PerfView's MiniumReadiedTimeMSec).
 */
#define MIN_READIED_NS 500000

/* The thread-time state of @tid, created idle when missing. */
int hs__ps_get_thr(struct ps *ps, uint32_t tid, struct thr **t)
{
	uint64_t *v;
	int added;

	v = hs_u64map_ref(&ps->thr_index, tid, 0, &added);
	if (!v)
		return hs__ps_nomem(ps);
	if (!*v) {
		if (HS_GROW(ps->thrs, ps->nr_thrs + 1, ps->alloc_thrs))
			return hs__ps_nomem(ps);
		memset(&ps->thrs[ps->nr_thrs], 0, sizeof(ps->thrs[0]));
		*v = ++ps->nr_thrs;
	}
	*t = &ps->thrs[*v - 1];
	return 0;
}

/* The state of @tid, or NULL when it was never seen. */
static struct thr *find_thr(struct ps *ps, uint32_t tid)
{
	uint64_t v;

	return hs_u64map_get(&ps->thr_index, tid, &v) && v ? &ps->thrs[v - 1] : NULL;
}

/* Intern a pseudo-frame once: CPU_TIME, BLOCKED_TIME, READIED_TIME. */
int hs__ps_special_frame(struct ps *ps, uint32_t *frame, const char *name)
{
	int err;

	if (*frame != NO_ID)
		return 0;
	err = hs_source_intern_frame(ps->out, name, strlen(name), frame);
	return err == -ENOMEM ? hs__ps_nomem(ps) : err;
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
	err = hs__ps_special_frame(ps, leaf, leaf_name);
	if (err)
		return err;
	err = hs_source_intern_stack(ps->out, *leaf, stack, &stack);
	if (!err)
		err = hs_source_add_sample(ps->out, from, ms_between(from, to), 1, stack);
	return err == -ENOMEM ? hs__ps_nomem(ps) : err;
}

/*
 * @t runs again (or the trace ends) at @end: its time switched out
 * becomes BLOCKED_TIME up to its wakeup and READIED_TIME from there, or
 * READIED_TIME all through when it was preempted.
 */
int hs__ps_end_wait(struct ps *ps, struct thr *t, int64_t end)
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
int hs__ps_thread_ran(struct ps *ps, const struct ps_event *ev)
{
	struct thr *t = find_thr(ps, ev->tid);

	return t ? hs__ps_end_wait(ps, t, ev->time) : 0;
}

/* The field @key of event @what, a whole number (a pid). */
static int pid_field(struct ps *ps, const struct ps_event *ev, const char *what,
		     const char *key, int last, uint32_t *pid)
{
	const char *p = ps->details.s, *end = p + ps->details.len, *v, *ve, *q;
	uint64_t n;

	if (hs__ps_find_field(p, end, key, last, &v, &ve))
		return hs__ps_fail_at(ps, ev->line, "%s event without '%sN'", what, key);
	q = v;
	if (hs__ps_parse_uint(&q, ve, INT32_MAX, &n) || q != ve)
		return hs__ps_fail_at(ps, ev->line,
				      "bad '%s%.*s' (expected a whole number)", key,
				      quote_len(v, ve), v);
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
int hs__ps_on_sched_switch(struct ps *ps, const struct ps_event *ev)
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
	if (hs__ps_find_field(p, end, "prev_state=", 0, &st, &st_end))
		return hs__ps_fail_at(ps, ev->line,
				      "sched_switch event without 'prev_state=S'");
	if (ev->tid) {
		err = hs__ps_get_thr(ps, ev->tid, &t);
		if (err)
			return err;
		end_cpu(ps, t, ev->time);
		/* R (R+): preempted, still runnable; X, Z: dead */
		if (*st != 'X' && *st != 'Z' && *st != 'x') {
			err = hs__ps_process_frame(ps, ev->pid, ps->comm.s, ps->comm.len,
						   &proc);
			if (!err)
				err = hs__ps_thread_frame(ps, ev->tid, &thread);
			if (!err)
				err = hs__ps_build_stack(ps, proc, thread, &t->stack);
			if (err)
				return err;
			t->state = *st == 'R' ? T_READY : T_BLOCKED;
			t->since = ev->time;
			t->woken = -1;
			t->readied_stack = HS_NO_STACK;
		}
	}
	n = next_pid ? find_thr(ps, next_pid) : NULL;
	return n ? hs__ps_end_wait(ps, n, ev->time) : 0;
}

/* sched_process_exit: the thread (the header's TID) is gone. */
int hs__ps_on_sched_exit(struct ps *ps, const struct ps_event *ev)
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
int hs__ps_on_sched_wakeup(struct ps *ps, const struct ps_event *ev)
{
	struct hs_stack_source *out = ps->out;
	uint32_t pid, frame, stack;
	struct thr *t;
	size_t i;
	int err;

	err = pid_field(ps, ev,
			ev->kind == PS_SCHED_WAKING ? "sched_waking" : "sched_wakeup",
			"pid=", 1, &pid);
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
		return hs__ps_nomem(ps);
	err = hs_source_intern_frame(out, ps->name.s, ps->name.len, &frame);
	if (!err)
		err = hs_source_intern_stack(out, frame, t->stack, &stack);
	for (i = ps->nr_frames; !err && i > 0; i--)
		err = hs_source_intern_stack(out, ps->frames[i - 1], stack, &stack);
	if (err)
		return err == -ENOMEM ? hs__ps_nomem(ps) : err;
	t->readied_stack = stack;
	return 0;
}
