/*
 * The thread-time view of perf script text (HS_PERF_THREAD_TIME) and the
 * choice of a file's source (hs_format_sources, hs_import_path_source).
 * Every expected number below is worked out by hand from the input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "analysis/memviews.h"
#include "io/io.h"
#include "testutil.h"

/* ---- helpers ---- */

static int import_view(const char *text, enum hs_perf_view view,
		       struct hs_stack_source *src, struct hs_diag *d)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	assert_non_null(f);
	hs_source_init(src);
	ret = hs_import_perf_script_view(f, view, src, d);
	fclose(f);
	return ret;
}

/* Import @text as thread time, which must succeed. */
static void tt_ok(const char *text, struct hs_stack_source *src)
{
	struct hs_diag d = HS_DIAG_INIT("t");
	int ret = import_view(text, HS_PERF_THREAD_TIME, src, &d);

	tu_expect_ok(ret, &d);
}

/* Import @text as thread time: -EINVAL at @line with a message holding @msg. */
static void tt_bad(const char *text, uint64_t line, const char *msg)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	int ret = import_view(text, HS_PERF_THREAD_TIME, &src, &d);

	hs_source_release(&src);
	tu_expect_einval(ret, &d, line, msg);
}

/* Frames of sample @i's stack, root first, joined with '|'. */
static const char *sample_str(const struct hs_stack_source *src, size_t i)
{
	return tu_sample_text(src, i, "|");
}

/* Sample @i: at @time_us microseconds, weighing @ms, on @stack. */
static void check(const struct hs_stack_source *src, size_t i, int64_t time_us,
		  double ms, const char *stack)
{
	assert_true(i < src->nr_samples);
	if (src->time[i] != time_us * 1000 || src->metric[i] != ms ||
	    src->count[i] != 1 || strcmp(sample_str(src, i), stack))
		fail_msg("sample %zu: want %lld us %g ms '%s'; got %lld ns %g ms "
			 "count %g '%s'", i, (long long)time_us, ms, stack,
			 (long long)src->time[i], src->metric[i], src->count[i],
			 sample_str(src, i));
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

#define SCENARIO HS_TEST_DATA "/perf/threadtime.data.txt"
/* the same with sched_waking instead of sched_wakeup, and with both */
#define SCENARIO_WAKING HS_TEST_DATA "/perf/threadtime-waking.data.txt"
#define SCENARIO_BOTH HS_TEST_DATA "/perf/threadtime-both.data.txt"
#define MAIN "Process app (100)|Thread (100)|app!main"
#define WORK "Process app (100)|Thread (101)|app!start|app!work"
#define READY "READIED_TIME (waiting for cpu)"

/* ---- the hand-written scenario (tests/data/perf/threadtime.data.txt) ---- */

/*
 * main (100) runs on CPU 0 (samples at 0, 1 and 6 ms), blocks in read() at
 * 1.5, is woken by other (200) at 4 and runs again at 6 (its next sample);
 * worker (101) runs on CPU 1 (samples at 0.5 and 2), is preempted at 2.5,
 * switched in at 5, sampled at 6.5 and exits at 7; other blocks in poll()
 * at 5 and is never woken; the trace ends at 8. The wakeup at 4 is a
 * sched_wakeup in @path = SCENARIO, a sched_waking in SCENARIO_WAKING, and
 * in SCENARIO_BOTH a sched_waking followed by a sched_wakeup in the idle
 * task's context at 4.01 (which must change nothing).
 */
static void check_scenario(const char *path)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	double metric, count;

	hs_source_init(&src);
	assert_int_equal(hs_import_path_source(path, HS_FORMAT_UNKNOWN,
					       "thread-time", &src, &d), 0);
	assert_int_equal(src.nr_samples, 10);
	/* CPU 0: 0 -> 1 ms; ended by main's switch-out at 1.5 */
	check(&src, 0, 0, 1.0, MAIN "|app!compute|CPU_TIME");
	/* CPU 1: 0.5 -> 2 ms */
	check(&src, 1, 500, 1.5, WORK "|CPU_TIME");
	check(&src, 2, 1000, 0.5, MAIN "|app!compute|CPU_TIME");
	/* blocked from 1.5 to the wakeup at 4; the wait for the CPU (2 ms) apart */
	check(&src, 3, 1500, 2.5, MAIN "|libc.so.6!read|kernel.kallsyms!__schedule|"
	      "READIED BY TID(200) other (200)|other!produce (READIED_BY)|"
	      "libc.so.6!write (READIED_BY)|kernel.kallsyms!try_to_wake_up (READIED_BY)|"
	      "BLOCKED_TIME");
	/* ended by worker's preemption at 2.5 */
	check(&src, 4, 2000, 0.5, WORK "|CPU_TIME");
	/* preempted at 2.5, switched in (next_pid=101) at 5 */
	check(&src, 5, 2500, 2.5, WORK "|kernel.kallsyms!__schedule|" READY);
	/* woken at 4, ran at 6 */
	check(&src, 6, 4000, 2.0, MAIN "|libc.so.6!read|kernel.kallsyms!__schedule|"
	      READY);
	/* never woken: blocked to the end of the trace, 8 ms */
	check(&src, 7, 5000, 3.0, "Process other (200)|Thread (200)|other!produce|"
	      "libc.so.6!poll|kernel.kallsyms!__schedule|BLOCKED_TIME");
	/* CPU 0: 6 -> 8 ms */
	check(&src, 8, 6000, 2.0, MAIN "|app!compute|CPU_TIME");
	/* ended by worker's exit at 7 */
	check(&src, 9, 6500, 0.5, WORK "|CPU_TIME");
	/* the sample at 8 ms is the last of CPU 0: dropped */
	hs_source_totals(&src, &metric, &count);
	assert_float_equal(metric, 16.0, 1e-9);
	assert_float_equal(count, 10, 0);
	assert_int_equal(src.kind, HS_METRIC_TIME);
	assert_string_equal(src.metric_unit, "ms");
	hs_source_release(&src);
}

static void scenario(void **state)
{
	(void)state;
	check_scenario(SCENARIO);
}

static void scenario_waking(void **state)
{
	(void)state;
	check_scenario(SCENARIO_WAKING);
}

static void scenario_both(void **state)
{
	(void)state;
	check_scenario(SCENARIO_BOTH);
}

/*
 * The CPU view of the same file: CPU samples only, weighted per CPU (no
 * wakeup event, sched_waking or sched_wakeup, is one).
 */
static void check_scenario_cpu_view(const char *path)
{
	struct hs_stack_source src;
	char *text = read_file(path);
	struct hs_diag d = HS_DIAG_INIT("t");

	hs_source_init(&src);
	assert_int_equal(hs_import_path(path, HS_FORMAT_UNKNOWN, &src, &d), 0);
	assert_int_equal(src.nr_samples, 5);
	check(&src, 0, 0, 1.0, MAIN "|app!compute");
	check(&src, 1, 500, 1.5, WORK);
	check(&src, 2, 1000, 5.0, MAIN "|app!compute");
	check(&src, 3, 2000, 4.5, WORK);
	check(&src, 4, 6000, 2.0, MAIN "|app!compute");
	hs_source_release(&src);
	/* the same through the stream importers */
	assert_int_equal(import_view(text, HS_PERF_CPU, &src, &d), 0);
	assert_int_equal(src.nr_samples, 5);
	check(&src, 2, 1000, 5.0, MAIN "|app!compute");
	hs_source_release(&src);
	free(text);
}

static void scenario_cpu_view(void **state)
{
	(void)state;
	check_scenario_cpu_view(SCENARIO);
	check_scenario_cpu_view(SCENARIO_WAKING);
	check_scenario_cpu_view(SCENARIO_BOTH);
}

/* ---- rules, one at a time ---- */

#define SW(time, tid, state, next)                                              \
	"a 1/" #tid " [000] " time ": sched:sched_switch: prev_comm=a prev_pid=" #tid \
	" prev_prio=120 prev_state=" state " ==> next_comm=b next_pid=" #next         \
	" next_prio=120\n\t1 f (/a)\n\n"
#define CPU(time, tid) "a 1/" #tid " [000] " time ": cpu-clock:\n\t2 g (/a)\n\n"
#define WAKE(time, tid, target)                                                \
	"w 9/" #tid " [001] " time ": sched:sched_wakeup: comm=a pid=" #target        \
	" prio=120 target_cpu=000\n\t3 h (/w)\n\n"
#define WAKING(time, tid, target)                                              \
	"v 8/" #tid " [001] " time ": sched:sched_waking: comm=a pid=" #target        \
	" prio=120 target_cpu=000\n\t4 k (/v)\n\n"

#define F "Process a (1)|Thread (2)|a!f|"

/* prev_state: R and R+ are runnable, X and Z dead, anything else blocked. */
static void prev_states(void **state)
{
	struct hs_stack_source src;

	(void)state;
	tt_ok(SW("1.000", 2, "D", 0) CPU("1.001", 2)
	      SW("1.002", 2, "R+", 0) CPU("1.004", 2)
	      SW("1.005", 2, "R", 0) CPU("1.008", 2)
	      SW("1.009", 2, "I", 0) CPU("1.013", 2)
	      SW("1.014", 2, "D|K", 0) CPU("1.019", 2)
	      SW("1.020", 2, "X", 0) CPU("1.026", 2)
	      SW("1.027", 2, "Z", 0) CPU("1.035", 2), &src);
	/* CPU samples: all on CPU 0, each ended by the thread's next switch */
	assert_int_equal(src.nr_samples, 11);
	check(&src, 0, 0, 1.0, F "BLOCKED_TIME");
	check(&src, 1, 1000, 1.0, "Process a (1)|Thread (2)|a!g|CPU_TIME");
	check(&src, 2, 2000, 2.0, F READY);
	check(&src, 3, 4000, 1.0, "Process a (1)|Thread (2)|a!g|CPU_TIME");
	check(&src, 4, 5000, 3.0, F READY);
	check(&src, 6, 9000, 4.0, F "BLOCKED_TIME");
	check(&src, 8, 14000, 5.0, F "BLOCKED_TIME");
	/* dead: no period after X or Z; the samples after them end at the next switch */
	check(&src, 9, 19000, 1.0, "Process a (1)|Thread (2)|a!g|CPU_TIME");
	check(&src, 10, 26000, 1.0, "Process a (1)|Thread (2)|a!g|CPU_TIME");
	hs_source_release(&src);
}

/* A switch-in (next_pid) ends the wait exactly; the idle task has no state. */
static void switch_in_ends_the_wait(void **state)
{
	struct hs_stack_source src;

	(void)state;
	tt_ok(SW("2.000", 2, "S", 0) SW("2.003", 0, "R", 2) CPU("2.010", 2), &src);
	assert_int_equal(src.nr_samples, 1);
	check(&src, 0, 0, 3.0, F "BLOCKED_TIME");
	hs_source_release(&src);
}

/*
 * After a wakeup, a wait for the CPU over 0.5 ms becomes READIED_TIME;
 * up to 0.5 ms it stays in BLOCKED_TIME.
 */
static void readied_threshold(void **state)
{
	struct hs_stack_source src;

	(void)state;
	tt_ok(SW("3.000", 2, "S", 0) WAKE("3.002", 9, 2) SW("3.0025", 0, "R", 2)
	      SW("3.010", 2, "S", 0) WAKE("3.012", 9, 2) SW("3.0126", 0, "R", 2),
	      &src);
	assert_int_equal(src.nr_samples, 3);
	check(&src, 0, 0, 2.5, F "READIED BY TID(9) w (9)|w!h (READIED_BY)|"
	      "BLOCKED_TIME");
	check(&src, 1, 10000, 2.0, F "READIED BY TID(9) w (9)|w!h (READIED_BY)|"
	      "BLOCKED_TIME");
	check(&src, 2, 12000, 0.6, F READY);
	hs_source_release(&src);
}

/*
 * The first wakeup counts; without a stack it still ends the blocked
 * part but adds no READIED_BY frames. Wakeups of threads that are not
 * blocked (running, preempted, never seen) change nothing.
 */
static void wakeups(void **state)
{
	struct hs_stack_source src;

	(void)state;
	tt_ok(WAKE("4.000", 9, 2) WAKE("4.000", 9, 77)
	      SW("4.001", 2, "R", 0) WAKE("4.002", 9, 2) CPU("4.003", 2)
	      SW("4.004", 2, "S", 0)
	      "w 9/9 [001] 4.005: sched:sched_wakeup: comm=a pid=2 prio=120 "
	      "success=1 target_cpu=000\n\n"
	      WAKE("4.006", 9, 2) CPU("4.008", 2), &src);
	assert_int_equal(src.nr_samples, 4);
	check(&src, 0, 1000, 2.0, F READY);
	check(&src, 1, 3000, 1.0, "Process a (1)|Thread (2)|a!g|CPU_TIME");
	check(&src, 2, 4000, 1.0, F "BLOCKED_TIME");
	check(&src, 3, 5000, 3.0, F READY);
	hs_source_release(&src);
}

/*
 * sched_waking is a wakeup like sched_wakeup. Once one has been read, a
 * sched_wakeup (its twin, or one fired in the context of a thread that is
 * not the waker) adds no READIED_BY: after its twin it changes nothing;
 * without one, it still ends the blocked time. Before any sched_waking a
 * sched_wakeup is the wakeup, READIED_BY and all (older recordings).
 */
static void waking_and_wakeup(void **state)
{
	struct hs_stack_source src;

	(void)state;
	/* waking alone */
	tt_ok(SW("1.000", 2, "S", 0) WAKING("1.002", 8, 2) SW("1.0025", 0, "R", 2),
	      &src);
	assert_int_equal(src.nr_samples, 1);
	check(&src, 0, 0, 2.5, F "READIED BY TID(8) v (8)|v!k (READIED_BY)|"
	      "BLOCKED_TIME");
	hs_source_release(&src);
	/*
	 * a wakeup before any waking; a waking and its twin (in another
	 * thread's context); a wakeup without a waking
	 */
	tt_ok(SW("2.000", 2, "S", 0) WAKE("2.001", 9, 2) SW("2.0013", 0, "R", 2)
	      SW("2.010", 2, "S", 0) WAKING("2.012", 8, 2) WAKE("2.0121", 9, 2)
	      SW("2.0124", 0, "R", 2)
	      SW("2.020", 2, "S", 0) WAKE("2.023", 9, 2) SW("2.0232", 0, "R", 2),
	      &src);
	assert_int_equal(src.nr_samples, 3);
	check(&src, 0, 0, 1.3, F "READIED BY TID(9) w (9)|w!h (READIED_BY)|"
	      "BLOCKED_TIME");
	check(&src, 1, 10000, 2.4, F "READIED BY TID(8) v (8)|v!k (READIED_BY)|"
	      "BLOCKED_TIME");
	check(&src, 2, 20000, 3.2, F "BLOCKED_TIME");
	hs_source_release(&src);
}

/*
 * No wakeup event is a CPU sample, in either view: a CPU sample before
 * one on the same CPU still weighs the time to the next CPU sample.
 */
static void wakeups_are_not_cpu_samples(void **state)
{
	static const char text[] =
		"a 1/2 [000] 1.000: cpu-clock:\n\t2 g (/a)\n\n"
		"a 1/2 [000] 1.001: sched:sched_waking: comm=b pid=3 prio=120 "
		"target_cpu=001\n\t5 try_to_wake_up ([kernel.kallsyms])\n\t2 g (/a)\n\n"
		"a 1/2 [000] 1.002: sched:sched_wakeup: comm=b pid=3 prio=120 "
		"target_cpu=001\n\t6 ttwu_do_activate ([kernel.kallsyms])\n\t2 g (/a)\n\n"
		"a 1/2 [000] 1.0025: sched:sched_wakeup_new: comm=a pid=4 prio=120 "
		"target_cpu=001\n\t7 wake_up_new_task ([kernel.kallsyms])\n\n"
		"a 1/2 [000] 1.004: cpu-clock:\n\t2 g (/a)\n\n"
		"a 1/2 [000] 1.005: cpu-clock:\n\n";
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");

	(void)state;
	assert_int_equal(import_view(text, HS_PERF_CPU, &src, &d), 0);
	assert_int_equal(src.nr_samples, 2);
	check(&src, 0, 0, 4.0, "Process a (1)|Thread (2)|a!g");
	check(&src, 1, 4000, 1.0, "Process a (1)|Thread (2)|a!g");
	hs_source_release(&src);
	tt_ok(text, &src);
	assert_int_equal(src.nr_samples, 2);
	check(&src, 0, 0, 4.0, "Process a (1)|Thread (2)|a!g|CPU_TIME");
	check(&src, 1, 4000, 1.0, "Process a (1)|Thread (2)|a!g|CPU_TIME");
	hs_source_release(&src);
}

/*
 * The end of the trace ends every wait: blocked, woken but not yet
 * running, preempted.
 */
static void trace_end(void **state)
{
	struct hs_stack_source src;

	(void)state;
	tt_ok("a 1/2 [000] 5.000: sched:sched_switch: prev_comm=a prev_pid=2 "
	      "prev_prio=120 prev_state=S ==> next_comm=b next_pid=0 next_prio=120\n"
	      "\t1 f (/a)\n\n"
	      "a 1/3 [000] 5.001: sched:sched_switch: prev_comm=a prev_pid=3 "
	      "prev_prio=120 prev_state=S ==> next_comm=b next_pid=0 next_prio=120\n"
	      "\t1 f (/a)\n\n"
	      "a 1/4 [000] 5.002: sched:sched_switch: prev_comm=a prev_pid=4 "
	      "prev_prio=120 prev_state=R ==> next_comm=b next_pid=0 next_prio=120\n"
	      "\t1 f (/a)\n\n"
	      WAKE("5.003", 9, 3) "x 8/8 [000] 5.010: cpu-clock:\n", &src);
	assert_int_equal(src.nr_samples, 4);
	check(&src, 0, 0, 10.0, F "BLOCKED_TIME");
	check(&src, 1, 1000, 2.0, "Process a (1)|Thread (3)|a!f|READIED BY TID(9) w (9)|"
	      "w!h (READIED_BY)|BLOCKED_TIME");
	check(&src, 2, 2000, 8.0, "Process a (1)|Thread (4)|a!f|" READY);
	check(&src, 3, 3000, 7.0, "Process a (1)|Thread (3)|a!f|" READY);
	/* x's CPU sample, the last of CPU 0, has no weight: dropped */
	hs_source_release(&src);
}

/* COMM with blanks in the header and in the sched fields. */
static void comm_with_blanks(void **state)
{
	struct hs_stack_source src;

	(void)state;
	tt_ok("my app 1/2 [000] 6.000: sched:sched_switch: prev_comm=my app "
	      "prev_pid=2 prev_prio=120 prev_state=S ==> next_comm=x next_pid=3 "
	      "next_pid=7 next_prio=120\n\t1 f (/a)\n\n"
	      "x y 5/7 [000] 6.001: sched:sched_wakeup: comm=my pid=3 prio=1 pid=2 "
	      "prio=120 target_cpu=000\n\t3 h (/w)\n\n"
	      "my app 1/2 [000] 6.004: cpu-clock:\n", &src);
	assert_int_equal(src.nr_samples, 2);
	check(&src, 0, 0, 1.0, "Process my app (1)|Thread (2)|a!f|"
	      "READIED BY TID(7) x y (5)|w!h (READIED_BY)|BLOCKED_TIME");
	check(&src, 1, 1000, 3.0, "Process my app (1)|Thread (2)|a!f|" READY);
	hs_source_release(&src);
}

/*
 * CPU samples that go back in time on their CPU: the thread-time view
 * follows the events in the order given, so it refuses them with the
 * sample's line (issue 19); the CPU view weighs them in time order.
 */
static void samples_out_of_time_order(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	static const char text[] = "a 1/2 [001] 2.0: cpu-clock:\n\t1 f (/a)\n\n"
				   "a 1/3 [000] 1.0: cpu-clock:\n\t1 f (/a)\n\n"
				   "a 1/2 [001] 1.5: cpu-clock:\n\t1 f (/a)\n\n"
				   "a 1/2 [001] 3.0: cpu-clock:\n";

	(void)state;
	tt_bad(text, 7, "sample at 1.500000 s on CPU 1 is earlier than the one before "
			"it on that CPU (2.000000 s): the thread-time view needs the "
			"events in time order");
	tt_bad("a 1/2 2.0: cpu-clock:\na 1/2 1.0: cpu-clock:\n", 2,
	       "sample at 1.000000 s is earlier than the one before it (2.000000 s)");
	/* another CPU going back is not out of order */
	tt_ok("a 1/2 [001] 2.0: cpu-clock:\na 1/3 [000] 1.0: cpu-clock:\n"
	      "a 1/2 [001] 2.5: cpu-clock:\n", &src);
	hs_source_release(&src);
	assert_int_equal(import_view(text, HS_PERF_CPU, &src, &d), 0);
	assert_int_equal(src.nr_samples, 2);
	hs_source_release(&src);
}

/* Malformed sched events: the header's line and what is missing. */
static void malformed_sched_events(void **state)
{
	static const char *const bad[][3] = {
		{ "a 1/2 [000] 1.0: sched:sched_switch: prev_comm=a prev_prio=1 "
		  "prev_state=S ==> next_comm=b next_pid=0 next_prio=1\n",
		  "sched_switch event without 'prev_pid=N'" },
		{ "a 1/2 [000] 1.0: sched:sched_switch: prev_comm=a prev_pid=2 "
		  "prev_prio=1 prev_state=S ==> next_comm=b next_prio=1\n",
		  "sched_switch event without 'next_pid=N'" },
		{ "a 1/2 [000] 1.0: sched:sched_switch: prev_comm=a prev_pid=2 "
		  "prev_prio=1 ==> next_comm=b next_pid=0 next_prio=1\n",
		  "sched_switch event without 'prev_state=S'" },
		{ "a 1/2 [000] 1.0: sched:sched_switch: prev_comm=a prev_pid=2x "
		  "prev_state=S ==> next_pid=0\n",
		  "bad 'prev_pid=2x' (expected a whole number)" },
		{ "a 1/2 [000] 1.0: sched:sched_switch: prev_comm=a prev_pid=2 "
		  "prev_state=S ==> next_pid=99999999999\n",
		  "bad 'next_pid=99999999999'" },
		{ "a 1/2 [000] 1.0: sched:sched_switch: prev_comm=a prev_pid=2 "
		  "prev_state= ==> next_pid=0\n",
		  "sched_switch event without 'prev_state=S'" },
		{ "a 1/2 [000] 1.0: sched:sched_wakeup: comm=a prio=1 target_cpu=000\n",
		  "sched_wakeup event without 'pid=N'" },
		{ "a 1/2 [000] 1.0: sched:sched_wakeup: comm=a pid=-1 prio=1\n",
		  "bad 'pid=-1' (expected a whole number)" },
		{ "a 1/2 [000] 1.0: sched:sched_waking: comm=a prio=1 target_cpu=000\n",
		  "sched_waking event without 'pid=N'" },
		{ "a 1/2 [000] 1.0: sched:sched_waking: comm=a pid=7x prio=1\n",
		  "bad 'pid=7x' (expected a whole number)" },
		{ "a 1/2 [000] 1.0: sched:sched_switch:\n",
		  "sched_switch event without 'prev_pid=N'" },
	};
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	char text[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* line 4: after a good event; its frame line does not move it */
		snprintf(text, sizeof(text), "%s%s\t1 f (/a)\n\n", CPU("0.5", 2),
			 bad[i][0]);
		tt_bad(text, 4, bad[i][1]);
		/* the CPU view ignores sched events */
		assert_int_equal(import_view(text, HS_PERF_CPU, &src, &d), 0);
		assert_int_equal(src.nr_samples, 0);
		hs_source_release(&src);
	}
}

/*
 * perf prints a task it no longer knows (one exiting, in a system-wide
 * recording) as ":-1 -1/-1"; its events read in both views.
 */
static void unknown_task(void **state)
{
	static const char text[] =
		"a 1/2 [001] 1.000: sched:sched_switch: prev_comm=a prev_pid=2 "
		"prev_prio=120 prev_state=S ==> next_comm=b next_pid=0 next_prio=120\n"
		"\t1 f (/a)\n\n"
		":-1    -1/-1    [001]  1.001: sched:sched_switch: prev_comm=b "
		"prev_pid=5 prev_prio=120 prev_state=X ==> next_comm=a next_pid=2 "
		"next_prio=120\n\t1 do_exit ([kernel.kallsyms])\n\n"
		":-1 -1 [001] 1.002: cpu-clock:\n\t2 g (/a)\n\n"
		"a 1/2 [001] 1.004: cpu-clock:\n\n";
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");

	(void)state;
	tt_ok(text, &src);
	assert_int_equal(src.nr_samples, 2);
	check(&src, 0, 0, 1.0, F "BLOCKED_TIME");
	check(&src, 1, 2000, 2.0, "Process :-1 (-1)|Thread (-1)|a!g|CPU_TIME");
	hs_source_release(&src);
	assert_int_equal(import_view(text, HS_PERF_CPU, &src, &d), 0);
	assert_int_equal(src.nr_samples, 1);
	check(&src, 0, 2000, 2.0, "Process :-1 (-1)|Thread (-1)|a!g");
	hs_source_release(&src);
	/* only -1 itself: "-12" is no PID */
	tt_bad("a -12 1.0: cpu-clock:\n", 1, "expected 'PID[/TID]'");
}

/* ---- inlined frames (both views) ---- */

static void inlined_frames(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");

	(void)state;
	assert_int_equal(import_view(
		"a 1 1.0: cpu-clock:\n"
		"\t10 leaf (/lib/libc.so.6)\n"
		"\t20 inner (inlined)\n"
		"\t20 outer (inlined)\n"
		"\t20 host (/lib/libc.so.6)\n"
		"\t30 orphan (inlined)\n"
		"\t40 main (/bin/app)\n"
		"\t50 tail (inlined)\n"
		"\n"
		"a 1 2.0: cpu-clock:\n", HS_PERF_CPU, &src, &d), 0);
	assert_int_equal(src.nr_samples, 1);
	assert_string_equal(sample_str(&src, 0),
			    "Process a (1)|Thread (1)|inlined!tail|app!main|"
			    "inlined!orphan|libc.so.6!host|libc.so.6!outer|"
			    "libc.so.6!inner|libc.so.6!leaf");
	hs_source_release(&src);
}

/* ---- sources ---- */

static void sources_of_formats(void **state)
{
	const struct hs_source_info *list;
	int i;

	(void)state;
	assert_int_equal(hs_format_sources(HS_FORMAT_PERF_SCRIPT, &list), 2);
	assert_string_equal(list[0].name, "cpu");
	assert_string_equal(list[1].name, "thread-time");
	assert_int_equal(hs_format_sources(HS_FORMAT_TRACE_ZIP, &list), 2);
	assert_string_equal(list[1].name, "thread-time");
	assert_int_equal(hs_format_sources(HS_FORMAT_HEAPSCOPE, &list), HS_MEM__COUNT);
	for (i = 0; i < HS_MEM__COUNT; i++) {
		assert_string_equal(list[i].name,
				    hs_memview_name((enum hs_memview_kind)i));
		assert_non_null(list[i].summary);
	}
	assert_string_equal(list[0].name, "alloc");
	assert_int_equal(hs_format_sources(HS_FORMAT_PERFVIEW_XML, &list), 0);
	assert_null(list);
	assert_int_equal(hs_format_sources(HS_FORMAT_FOLDED, &list), 0);
}

static void source_names(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	enum hs_format fmt;
	char path[256];
	FILE *f;

	(void)state;
	/* an unknown name: which names there are */
	hs_source_init(&src);
	assert_int_equal(hs_import_path_source(SCENARIO, HS_FORMAT_UNKNOWN, "wall",
					       &src, &d), -ENOENT);
	assert_string_equal(d.msg, "perf-script input has no source 'wall' "
			    "(it has: cpu, thread-time)");
	hs_source_release(&src);
	/* the same when the format is only known from the content */
	snprintf(path, sizeof(path), "%s/noext", tu_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("a 1 1.0: cpu-clock:\n\t1 f (/a)\n\na 1 2.0: cpu-clock:\n", f);
	fclose(f);
	memset(&d, 0, sizeof(d));
	hs_source_init(&src);
	assert_int_equal(hs_import_path_source(path, HS_FORMAT_UNKNOWN, "x", &src, &d),
			 -ENOENT);
	assert_non_null(strstr(d.msg, "has no source 'x'"));
	hs_source_release(&src);
	hs_source_init(&src);
	assert_int_equal(hs_import_path_source(path, HS_FORMAT_UNKNOWN, "cpu", &src, &d),
			 0);
	assert_int_equal(src.nr_samples, 1);
	hs_source_release(&src);
	assert_int_equal(hs_path_format(path, HS_FORMAT_UNKNOWN, &fmt, &d), 0);
	assert_int_equal(fmt, HS_FORMAT_PERF_SCRIPT);
	assert_int_equal(hs_path_format(path, HS_FORMAT_FOLDED, &fmt, &d), 0);
	assert_int_equal(fmt, HS_FORMAT_FOLDED);
	assert_int_equal(hs_path_format(SCENARIO, HS_FORMAT_UNKNOWN, &fmt, &d), 0);
	assert_int_equal(fmt, HS_FORMAT_PERF_SCRIPT);
	/* a format with no choice */
	memset(&d, 0, sizeof(d));
	hs_source_init(&src);
	assert_int_equal(hs_import_path_source(path, HS_FORMAT_FOLDED, "cpu", &src, &d),
			 -ENOENT);
	assert_string_equal(d.msg, "folded input offers no choice of source "
			    "(asked for 'cpu')");
	hs_source_release(&src);
	/* hs_path_format: missing files and unknown content */
	memset(&d, 0, sizeof(d));
	snprintf(path, sizeof(path), "%s/missing", tu_dir);
	assert_int_equal(hs_path_format(path, HS_FORMAT_UNKNOWN, &fmt, &d), -ENOENT);
	assert_true(d.set);
	snprintf(path, sizeof(path), "%s/missing.data.txt", tu_dir);
	memset(&d, 0, sizeof(d));
	assert_int_equal(hs_path_format(path, HS_FORMAT_UNKNOWN, &fmt, &d), -ENOENT);
	assert_string_equal(d.msg, "cannot open: No such file or directory");
	snprintf(path, sizeof(path), "%s/junk", tu_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("hello\n", f);
	fclose(f);
	memset(&d, 0, sizeof(d));
	assert_int_equal(hs_path_format(path, HS_FORMAT_UNKNOWN, &fmt, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "cannot tell the input's format"));
}

/* A .trace.zip reads as thread time too. */
static void trace_zip_thread_time(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	char *text = read_file(SCENARIO);
	char path[256];
	zip_source_t *zs;
	zip_t *z;
	int err;

	(void)state;
	snprintf(path, sizeof(path), "%s/tt.trace.zip", tu_dir);
	z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	assert_non_null(z);
	zs = zip_source_buffer(z, text, strlen(text), 0);
	assert_non_null(zs);
	assert_true(zip_file_add(z, "tt.data.txt", zs, ZIP_FL_OVERWRITE) >= 0);
	assert_int_equal(zip_close(z), 0);
	hs_source_init(&src);
	assert_int_equal(hs_import_path_source(path, HS_FORMAT_UNKNOWN, "thread-time",
					       &src, &d), 0);
	assert_int_equal(src.nr_samples, 10);
	check(&src, 7, 5000, 3.0, "Process other (200)|Thread (200)|other!produce|"
	      "libc.so.6!poll|kernel.kallsyms!__schedule|BLOCKED_TIME");
	hs_source_release(&src);
	hs_source_init(&src);
	assert_int_equal(hs_import_path_source(path, HS_FORMAT_UNKNOWN, NULL, &src, &d),
			 0);
	assert_int_equal(src.nr_samples, 5);
	hs_source_release(&src);
	free(text);
}

/* ---- robustness ---- */

static void out_of_memory_is_reported(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d;
	char *text = read_file(SCENARIO_BOTH);
	long n;
	int ret = -ENOMEM;

	(void)state;
	for (n = 0; ret == -ENOMEM; n++) {
		memset(&d, 0, sizeof(d));
		hs_alloc_fail_after(n);
		ret = import_view(text, HS_PERF_THREAD_TIME, &src, &d);
		hs_alloc_fail_after(-1);
		if (ret) {
			assert_int_equal(ret, -ENOMEM);
			assert_true(d.set);
		}
		hs_source_release(&src);
	}
	assert_int_equal(ret, 0);
	assert_true(n > 20);
	free(text);
}

/* Mutated inputs: an error or a model, never a crash. */
static void garbage_never_crashes(void **state)
{
	static const char alphabet[] = "\t\n :/[]()=>0123RSXZ_a.-#";
	char *text = read_file(SCENARIO), *buf;
	size_t len = strlen(text);
	struct hs_stack_source src;
	struct hs_diag d;
	unsigned seed = 4321;
	int round, i, ret;

	(void)state;
	buf = malloc(len + 1);
	assert_non_null(buf);
	for (round = 0; round < 2000; round++) {
		memcpy(buf, text, len + 1);
		for (i = 0; i < 1 + round % 8; i++)
			buf[(size_t)rand_r(&seed) % len] =
				alphabet[(size_t)rand_r(&seed) % (sizeof(alphabet) - 1)];
		memset(&d, 0, sizeof(d));
		ret = import_view(buf, HS_PERF_THREAD_TIME, &src, &d);
		if (ret) {
			assert_int_equal(ret, -EINVAL);
			assert_true(d.set);
		}
		hs_source_release(&src);
	}
	free(buf);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scenario),
		cmocka_unit_test(scenario_waking),
		cmocka_unit_test(scenario_both),
		cmocka_unit_test(scenario_cpu_view),
		cmocka_unit_test(prev_states),
		cmocka_unit_test(switch_in_ends_the_wait),
		cmocka_unit_test(readied_threshold),
		cmocka_unit_test(wakeups),
		cmocka_unit_test(waking_and_wakeup),
		cmocka_unit_test(wakeups_are_not_cpu_samples),
		cmocka_unit_test(trace_end),
		cmocka_unit_test(comm_with_blanks),
		cmocka_unit_test(malformed_sched_events),
		cmocka_unit_test(unknown_task),
		cmocka_unit_test(inlined_frames),
		cmocka_unit_test(sources_of_formats),
		cmocka_unit_test(source_names),
		cmocka_unit_test(trace_zip_thread_time),
		cmocka_unit_test(samples_out_of_time_order),
		cmocka_unit_test(out_of_memory_is_reported),
		cmocka_unit_test(garbage_never_crashes),
	};
	return cmocka_run_group_tests_name("perf_threadtime", tests, tu_dir_setup,
					   tu_dir_teardown);
}
