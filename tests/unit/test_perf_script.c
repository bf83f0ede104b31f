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
#include "common/buf.h"
#include "io/io.h"
#include "testutil.h"

/* ---- helpers ---- */

static int import_text(const char *text, size_t len, struct hs_stack_source *src,
		       struct hs_diag *d)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int ret;

	assert_non_null(f);
	hs_source_init(src);
	ret = hs_import_perf_script(f, src, d);
	fclose(f);
	return ret;
}

/* Import @text, which must succeed. */
static void import_ok(const char *text, struct hs_stack_source *src)
{
	struct hs_diag d = HS_DIAG_INIT("t");
	int ret = import_text(text, strlen(text), src, &d);

	tu_expect_ok(ret, &d);
}

/* Import @text, which must fail with -EINVAL at @line with a message holding @msg. */
static void import_bad(const char *text, size_t len, uint64_t line, const char *msg)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	int ret = import_text(text, len, &src, &d);

	hs_source_release(&src);
	tu_expect_einval(ret, &d, line, msg);
}

#define BAD(text, line, msg) import_bad(text, sizeof(text) - 1, line, msg)

/* Frames of sample @i's stack, root first, joined with '|'. */
static const char *sample_str(const struct hs_stack_source *src, size_t i)
{
	return tu_sample_text(src, i, "|");
}

/* ---- the header line ---- */

static const char basic[] =
	"hot  5911   386.895076:    1001001 cpu-clock:ppp: \n"
	"\t            114d hot+0x14 (/tmp/perfplay/hot)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n"
	"hot  5911   386.896076:    1001001 cpu-clock:ppp: \n"
	"\t            1176 cold+0x11 (/tmp/perfplay/hot)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n"
	"hot  5911   386.898576:    1001001 cpu-clock:ppp: \n"
	"\t            114d hot+0x14 (/tmp/perfplay/hot)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n";

static void default_output(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok(basic, &src);
	/* three samples on one (absent) CPU: the last has no successor */
	assert_int_equal(src.nr_samples, 2);
	assert_int_equal(src.time[0], 0);
	assert_int_equal(src.time[1], 1000000);
	assert_float_equal(src.metric[0], 1.0, 1e-12);
	assert_float_equal(src.metric[1], 2.5, 1e-12);
	assert_float_equal(src.count[0], 1.0, 0);
	assert_float_equal(src.count[1], 1.0, 0);
	assert_string_equal(sample_str(&src, 0),
			    "Process hot (5911)|Thread (5911)|"
			    "libc.so.6!__libc_start_call_main|hot!hot");
	assert_string_equal(sample_str(&src, 1),
			    "Process hot (5911)|Thread (5911)|"
			    "libc.so.6!__libc_start_call_main|hot!cold");
	assert_int_equal(src.kind, HS_METRIC_TIME);
	assert_string_equal(src.metric_unit, "ms");
	/* Process, Thread, libc, hot, cold */
	assert_int_equal(hs_source_nr_frames(&src), 5);
	hs_source_release(&src);
}

static void comm_names(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("rs:action 13 qu  1234/1235 10.000000: 1 cpu-clock:\n"
		  "kworker/1:3    77/77 10.001: cpu-clock:\n"
		  " 12/34 10.002: cpu-clock:\n"
		  "my 12/34 prog 9/10 10.003: cpu-clock:\n"
		  "java 8 5 10.004: cpu-clock:\n"
		  "a  b\t 6/7 10.005000000: cpu-clock:\n"
		  "end 1 10.011: cpu-clock:\n", &src);
	assert_int_equal(src.nr_samples, 6);
	assert_string_equal(sample_str(&src, 0), "Process rs:action 13 qu (1234)|Thread (1235)");
	assert_string_equal(sample_str(&src, 1), "Process kworker/1:3 (77)|Thread (77)");
	assert_string_equal(sample_str(&src, 2), "Process  (12)|Thread (34)");
	assert_string_equal(sample_str(&src, 3), "Process my 12/34 prog (9)|Thread (10)");
	assert_string_equal(sample_str(&src, 4), "Process java 8 (5)|Thread (5)");
	assert_string_equal(sample_str(&src, 5), "Process a  b (6)|Thread (7)");
	assert_int_equal(src.time[4], 4000000);
	assert_int_equal(src.time[5], 5000000);
	assert_float_equal(src.metric[4], 1.0, 1e-12);
	assert_float_equal(src.metric[5], 6.0, 1e-12);
	hs_source_release(&src);
}

static void tid_cpu_period_and_event_forms(void **state)
{
	struct hs_stack_source src;

	(void)state;
	/* perf script -F comm,pid,tid,cpu,time,period,event,ip,sym,dso */
	import_ok("hot  5911/5912  [001]   1.000000:    1001001 cpu/cycles/: \n"
		  "\t  114d hot (/tmp/hot)\n"
		  "\n"
		  /* no event field at all */
		  "hot  5911   1.000250: \n"
		  "\t  114d hot (/tmp/hot)\n"
		  "\n"
		  "hot 5911/5913 [1] 1.001: 7 cycles:u: \n"
		  "hot 5911 1.002: cpu-clock:\n", &src);
	assert_int_equal(src.nr_samples, 2);
	/* [1] and [001] are one CPU; the sample without [cpu] is on CPU -1 */
	assert_string_equal(sample_str(&src, 0), "Process hot (5911)|Thread (5912)|hot!hot");
	assert_float_equal(src.metric[0], 1.0, 1e-12);
	assert_string_equal(sample_str(&src, 1), "Process hot (5911)|Thread (5911)|hot!hot");
	assert_int_equal(src.time[1], 250000);
	assert_float_equal(src.metric[1], 1.75, 1e-12);
	hs_source_release(&src);
}

/* ---- frames ---- */

static void frame_names(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("a 1 1.0: cycles:\n"
		  "\tffffffff81000d62 asm_common_interrupt+0x22 ([kernel.kallsyms])\n"
		  "\t7f00 [unknown] ([unknown])\n"
		  "\t7f01 operator+0x10+0x20 (/usr/lib/libx.so)\n"
		  "\t7f02 +0x10 (/usr/lib/libx.so)\n"
		  "\t7f03 foo+0x (/usr/lib/libx.so)\n"
		  "\t7f04 instance void [System.Private.CoreLib] "
		  "System.Threading.Thread::StartCallback() (/tmp/perf-1.map)\n"
		  "\t7f05 JitFoo (/tmp/perf-1.map)\n"
		  "\t7f06 uint8[] [System.Private.CoreLib] "
		  "Internal.IO.File::ReadAllBytes(string) (/tmp/jitted-1-12.so)\n"
		  "\t7f07 inl_fn (/usr/lib/liby.so) (inlined)\n"
		  "\t7f08 main (/bin/a+0x1234)\n"
		  "\t7f09 (/bin/a)\n"
		  "\t7f0a std::vector<int>::push_back(int const&) (/usr/lib/libstdc++.so.6)\n"
		  "\t7f0b [vdso] ([vdso])\n"
		  "\t7f0c Sym (C:\\dir\\x.dll)\n"
		  "\n"
		  "a 1 2.0: cycles:\n", &src);
	assert_int_equal(src.nr_samples, 1);
	assert_string_equal(sample_str(&src, 0),
			    "Process a (1)|Thread (1)|"
			    "x.dll!Sym|"
			    "vdso!vdso|"
			    "libstdc++.so.6!std::vector<int>::push_back(int const&)|"
			    "a!|"
			    "a!main|"
			    "liby.so!inl_fn|"
			    "System.Private.CoreLib!Internal.IO.File::ReadAllBytes(string)|"
			    "perf-1.map!JitFoo|"
			    "System.Private.CoreLib!System.Threading.Thread::StartCallback()|"
			    "libx.so!foo+0x|"
			    "libx.so!+0x10|"
			    "libx.so!operator+0x10|"
			    "unknown!unknown|"
			    "kernel.kallsyms!asm_common_interrupt");
	assert_float_equal(src.metric[0], 1000.0, 1e-9);
	hs_source_release(&src);
}

static void optimization_tiers(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("a 1 1.0: x:\n"
		  "\t1 Foo()[QuickJitted] (/x.so)\n"
		  "\t2 Bar[3] (/x.so)\n"
		  "\t3 Baz()[Unknown] (/x.so)\n"
		  "\t4 [] (/x.so)\n"
		  "\t5 void [Asm] N.C::M()[OptimizedTier1] (/tmp/jitted-1-2.so)\n"
		  "\n"
		  "a 1 2.0: x:\n", &src);
	assert_string_equal(sample_str(&src, 0),
			    "Process a (1)|Thread (1)|Asm![OptimizedTier1]N.C::M()|"
			    "x.so!|x.so!Baz()|x.so!Bar[3]|x.so![QuickJitted]Foo()");
	hs_source_release(&src);
}

static void srcline_lines_are_skipped(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("a 1 1.0: x:\n"
		  "\t1234 main (/bin/a)\n"
		  "  a.c:3\n"
		  "\t1235 start (/bin/a)\n"
		  "  ../sysdeps/x86/libc-start.c:74 (discriminator 2)\n"
		  "\t1236 _start (/bin/a)\n"
		  "  ??:0\n"
		  "\tffffffff81000d62 irq+0x22 ([kernel.kallsyms])\n"
		  "  [kernel.kallsyms][ffffffff81000d62]\n"
		  "\n"
		  "a 1 2.0: x:\n", &src);
	assert_int_equal(src.nr_samples, 1);
	assert_string_equal(sample_str(&src, 0),
			    "Process a (1)|Thread (1)|kernel.kallsyms!irq|a!_start|"
			    "a!start|a!main");
	hs_source_release(&src);
	/* a frame indented with spaces is not taken for a source line */
	BAD("a 1 1.0: x:\n\t1234 main (/bin/a)\n    1235 start (/bin/a)\n", 3,
	    "expected 'PID[/TID]'");
	BAD("a 1 1.0: x:\n\t1234 main (/bin/a)\n  a.c:x\n", 3, "expected 'PID[/TID]'");
	BAD("a 1 1.0: x:\n  a.c:3\n", 2, "expected 'PID[/TID]'");
}

static void shared_prefixes_give_shared_stacks(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("a 1 1.0: x:\n\t1 f (/m)\n\t2 g (/m)\n\t3 main (/m)\n\n"
		  "a 1 1.1: x:\n\t1 h (/m)\n\t3 main (/m)\n\n"
		  "a 1 1.2: x:\n\t1 f (/m)\n\t2 g (/m)\n\t3 main (/m)\n\n"
		  "a 1 1.3: x:\n\t3 main (/m)\n\n"
		  "a 1 1.4: x:\n\t1 f+0x1 (/m)\n\t2 g+0x2 (/m)\n\t3 main+0x3 (/m)\n\n"
		  "a 1 1.5: x:\n", &src);
	assert_int_equal(src.nr_samples, 5);
	assert_int_equal(src.stack[0], src.stack[2]);
	assert_int_equal(src.stack[0], src.stack[4]);
	assert_string_equal(sample_str(&src, 1), "Process a (1)|Thread (1)|m!main|m!h");
	assert_string_equal(sample_str(&src, 3), "Process a (1)|Thread (1)|m!main");
	/* Process, Thread, main, g, f, h */
	assert_int_equal(src.nr_stacks, 6);
	hs_source_release(&src);
}

/* ---- weights, kinds, processes ---- */

static void weight_per_cpu(void **state)
{
	struct hs_stack_source src;
	double m, c;

	(void)state;
	import_ok("a 1/1 [000] 1.000: cpu-clock:\n"
		  "a 1/1 [001] 1.001: cpu-clock:\n"
		  "a 1/2 [001] 1.003: cpu-clock:\n"
		  "a 1/1 [000] 1.004: cpu-clock:\n"
		  "a 1/1 [000] 1.010: cpu-clock:\n"
		  "a 1/2 [001] 1.011: cpu-clock:\n", &src);
	/* the last sample of CPU 0 (1.010) and of CPU 1 (1.011) are dropped */
	assert_int_equal(src.nr_samples, 4);
	assert_int_equal(src.time[0], 0);
	assert_int_equal(src.time[1], 1000000);
	assert_int_equal(src.time[2], 3000000);
	assert_int_equal(src.time[3], 4000000);
	assert_float_equal(src.metric[0], 4.0, 1e-12);
	assert_float_equal(src.metric[1], 2.0, 1e-12);
	assert_float_equal(src.metric[2], 8.0, 1e-12);
	assert_float_equal(src.metric[3], 6.0, 1e-12);
	assert_string_equal(sample_str(&src, 2), "Process a (1)|Thread (2)");
	hs_source_totals(&src, &m, &c);
	assert_float_equal(m, 20.0, 1e-12);
	assert_float_equal(c, 4.0, 0);
	hs_source_release(&src);
}

/* Samples that go back in time on their CPU: weighed in time order (issue 19). */
static void out_of_order_samples_are_weighed_in_time_order(void **state)
{
	struct hs_stack_source src;
	double m, c;

	(void)state;
	import_ok("a 1/1 [000] 2.0: x:\n\t1 two (/m)\n\n"
		  "a 1/2 [001] 1.5: x:\n\t1 cpu1 (/m)\n\n"
		  "a 1/1 [000] 1.0: x:\n\t1 one (/m)\n\n"
		  "a 1/2 [001] 2.0: x:\n\t1 cpu1 (/m)\n\n"
		  "a 1/1 [000] 3.0: x:\n\t1 three (/m)\n", &src);
	/* in time order, from the earliest sample: 1.0, 1.5, 2.0 (3.0 and CPU 1's 2.0 dropped) */
	assert_int_equal(src.nr_samples, 3);
	assert_int_equal(src.time[0], 0);
	assert_int_equal(src.time[1], 500000000);
	assert_int_equal(src.time[2], 1000000000);
	assert_float_equal(src.metric[0], 1000.0, 1e-9);
	assert_float_equal(src.metric[1], 500.0, 1e-9);
	assert_float_equal(src.metric[2], 1000.0, 1e-9);
	assert_string_equal(sample_str(&src, 0), "Process a (1)|Thread (1)|m!one");
	assert_string_equal(sample_str(&src, 1), "Process a (1)|Thread (2)|m!cpu1");
	assert_string_equal(sample_str(&src, 2), "Process a (1)|Thread (1)|m!two");
	hs_source_totals(&src, &m, &c);
	assert_float_equal(m, 2500.0, 1e-9);
	hs_source_release(&src);
	/* the earliest sample on another CPU than the first one read */
	import_ok("a 1/1 [000] 2.0: x:\na 1/2 [001] 5.0: x:\na 1/2 [001] 1.0: x:\n"
		  "a 1/1 [000] 3.0: x:\na 1/2 [001] 6.0: x:\n", &src);
	assert_int_equal(src.nr_samples, 3);
	assert_int_equal(src.time[0], 0);
	assert_int_equal(src.time[1], 1000000000);
	assert_int_equal(src.time[2], 4000000000ll);
	assert_float_equal(src.metric[0], 4000.0, 1e-9);
	assert_float_equal(src.metric[1], 1000.0, 1e-9);
	assert_float_equal(src.metric[2], 1000.0, 1e-9);
	hs_source_release(&src);
	/* without [CPU]: one CPU, the same rule */
	import_ok("a 1 5.0: x:\na 1 4.0: x:\na 1 6.0: x:\n", &src);
	assert_int_equal(src.nr_samples, 2);
	assert_int_equal(src.time[0], 0);
	assert_float_equal(src.metric[0], 1000.0, 1e-9);
	assert_float_equal(src.metric[1], 1000.0, 1e-9);
	hs_source_release(&src);
}

static void one_sample_per_cpu_gives_nothing(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("a 1 [0] 1.0: x:\na 1 [1] 1.1: x:\n", &src);
	assert_int_equal(src.nr_samples, 0);
	hs_source_release(&src);
	import_ok("", &src);
	assert_int_equal(src.nr_samples, 0);
	assert_int_equal(src.kind, HS_METRIC_TIME);
	hs_source_release(&src);
}

static void process_names_are_joined(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("dotnet 100/100 1.0: cpu-clock:\n"
		  ".NET Finalizer 100/101 1.1: cpu-clock:\n"
		  "worker 100/102 1.2: cpu-clock:\n"
		  "dotnet 100/100 1.3: cpu-clock:\n"
		  ".NET BGC 200/200 1.4: cpu-clock:\n"
		  ".NET Server GC 200/201 1.5: cpu-clock:\n"
		  ".NET BGC 300/300 1.6: cpu-clock:\n"
		  "x 400/400 1.7: cpu-clock:\n"
		  "end 1/1 2.0: cpu-clock:\n", &src);
	assert_int_equal(src.nr_samples, 8);
	assert_string_equal(sample_str(&src, 0), "Process dotnet;worker (100)|Thread (100)");
	assert_string_equal(sample_str(&src, 1), "Process dotnet;worker (100)|Thread (101)");
	assert_string_equal(sample_str(&src, 3), "Process dotnet;worker (100)|Thread (100)");
	/* only ignored names: all of them */
	assert_string_equal(sample_str(&src, 4),
			    "Process .NET BGC;.NET Server GC (200)|Thread (200)");
	/* a single name is kept even if it is an ignored one */
	assert_string_equal(sample_str(&src, 6), "Process .NET BGC (300)|Thread (300)");
	assert_string_equal(sample_str(&src, 7), "Process x (400)|Thread (400)");
	hs_source_release(&src);
}

static void other_event_kinds_are_not_samples(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("perf  8313 [000]   464.882422: sched:sched_switch: prev_comm=perf "
		  "prev_pid=8313 prev_prio=120 prev_state=D ==> next_comm=migration/0 "
		  "next_pid=18 next_prio=0\n"
		  "\tffffffff821facd8 __schedule+0x618 ([kernel.kallsyms])\n"
		  "\tffffffff821fb643 schedule+0x23 ([kernel.kallsyms])\n"
		  "\n"
		  "a 1/1 [000] 464.882500: cpu-clock:\n"
		  "\tffffffff821fb643 schedule+0x23 ([kernel.kallsyms])\n"
		  "\t1234 main+0x4 (/bin/a)\n"
		  "\n"
		  "a 1 [000] 464.882600: irq:irq_handler_entry: irq=1 name=x\n"
		  "a 1 [000] 464.882650: irq:irq_handler_exit: irq=1 ret=handled\n"
		  "a 1 [000] 464.882700: irq:softirq_exit: vec=1\n"
		  "a 1 [000] 464.882800: block:block_rq_issue: 8,0 R\n"
		  "\tffffffff821facd8 blk_issue+0x618 ([kernel.kallsyms])\n"
		  "a 1 [000] 464.882900: block:block_rq_complete: 8,0 R\n"
		  "b 2 [000] 464.883000: sched:sched_wakeup: comm=x pid=1\n"
		  "c 3 [000] 464.883100: sched:sched_process_exec: filename=/bin/a\n"
		  "d 4 [000] 464.883200: sched:sched_process_exit: comm=a pid=1\n"
		  "a 1/1 [000] 464.884500: cpu-clock:\n", &src);
	assert_int_equal(src.nr_samples, 1);
	assert_int_equal(src.time[0], 78000);
	assert_float_equal(src.metric[0], 2.0, 1e-12);
	assert_string_equal(sample_str(&src, 0),
			    "Process a (1)|Thread (1)|a!main|kernel.kallsyms!schedule");
	/* nothing of the other events reached the model */
	assert_int_equal(hs_source_nr_frames(&src), 4);
	hs_source_release(&src);
}

static void bom_blank_and_comment_lines(void **state)
{
	struct hs_stack_source src;

	(void)state;
	import_ok("\xef\xbb\xbf# ========\n#\n\n   \n"
		  "a 1 1.0: cpu-clock:\n"
		  "# a comment in the middle\n"
		  "\t1 f (/m)\n"
		  "\n\n"
		  "a 1 1.5: cpu-clock:\r\n", &src);
	assert_int_equal(src.nr_samples, 1);
	assert_float_equal(src.metric[0], 500.0, 1e-9);
	assert_string_equal(sample_str(&src, 0), "Process a (1)|Thread (1)|m!f");
	hs_source_release(&src);
}

/* ---- malformed input ---- */

static void malformed_headers(void **state)
{
	(void)state;
	BAD("a 1 1.0: x:\nhot abc 1.0: x:\n", 2,
		   "expected 'PID[/TID]' after the command name");
	BAD("hot 5911/5911 abc: cpu-clock:\n", 1, "bad time 'abc:'");
	BAD("hot 5911 [x] 1.0: cpu-clock:\n", 1, "bad CPU '[x]'");
	BAD("hot 5911 [1 1.0: cpu-clock:\n", 1, "bad CPU '[1'");
	BAD("hot 5911/5911 1.0 cpu-clock:\n", 1, "bad time '1.0'");
	BAD("\n\nhot 5911/5911 1.0: 100 cpu-clock\n", 3,
		   "expected 'EVENT:' after the time, found 'cpu-clock'");
	BAD("hot 99999999999/1 1.0: x:\n", 1, "expected 'PID[/TID]'");
	BAD("hot 5/ 1.0: x:\n", 1, "expected 'PID[/TID]'");
	BAD("hot 5/5 99999999999.0: x:\n", 1, "bad time");
	BAD("hot\n", 1, "expected 'PID[/TID]'");
}

static void malformed_frames(void **state)
{
	static const char nul[] = "a 1 1.0: x:\n\t12 m\0in (/a)\n";
	char *big;

	(void)state;
	BAD("\t1234 main (/bin/a)\n", 1, "frame line outside a sample");
	BAD("a 1 1.0: x:\n\t1 f (/m)\n\n\t2 g (/m)\n", 4,
		   "frame line outside a sample");
	BAD("a 1 1.0: x:\n\t1234 main\n", 2,
		   "frame line has no '(MODULE)' after 'main'");
	BAD("a 1 1.0: x:\n\tzz main (/bin/a)\n", 2, "bad frame address 'zz'");
	BAD("a 1 1.0: x:\n\t12345678901234567 f (/a)\n", 2, "bad frame address");
	BAD("a 1 1.0: x:\n\t1234 main (/bin/a\n", 2, "does not end with ')'");
	BAD("a 1 1.0: x:\n\t1234\n", 2, "no 'SYMBOL (MODULE)'");
	/* also in events whose frames are not kept */
	BAD("a 1 1.0: sched:sched_switch: x\n\t1234 main\n", 2, "no '(MODULE)'");
	import_bad(nul, sizeof(nul) - 1, 2, "NUL byte");
	BAD("PERFILE2\x68\0\0\0\0\0\0\0\n", 1, "binary perf.data");
	big = malloc(3u << 20);
	assert_non_null(big);
	memset(big, 'x', 3u << 20);
	memcpy(big, "a 1 1.0: x:\n", 12);
	import_bad(big, 3u << 20, 2, "line longer than");
	/* a perf.data whose first "line" is over the limit */
	memcpy(big, "PERFILE2", 8);
	import_bad(big, 3u << 20, 1, "binary perf.data");
	free(big);
}

/* A time past what fits in nanoseconds is said to be out of range (issue 19). */
static void times_out_of_range(void **state)
{
	struct hs_stack_source src;

	(void)state;
	BAD("a 1 9000000001.0: x:\n", 1,
	    "bad time '9000000001.0:' (out of range: perf times are seconds, at most "
	    "9000000000)");
	BAD("a 1 99999999999999999999999: x:\n", 1, "(out of range: ");
	import_ok("a 1 9000000000.999999999: x:\na 1 9000000000.999999999: x:\n", &src);
	assert_int_equal(src.nr_samples, 1);
	hs_source_release(&src);
	/* not a number at all: still the shape that was expected */
	BAD("a 1 [0] x.0: x:\n", 1, "bad time 'x.0:' (expected SECONDS:)");
}

static void deep_stacks_are_capped(void **state)
{
	size_t n = 100001, i, len = 0;
	char *text = malloc(20 + n * 12);
	struct hs_stack_source src;

	(void)state;
	assert_non_null(text);
	len += (size_t)sprintf(text, "a 1 1.0: x:\n");
	for (i = 0; i < n - 1; i++)
		len += (size_t)sprintf(text + len, "\t1 f (/m)\n");
	len += (size_t)sprintf(text + len, "\na 1 2.0: x:\n");
	/* 100000 frames are fine */
	text[len] = '\0';
	import_ok(text, &src);
	assert_int_equal(src.nr_samples, 1);
	assert_int_equal(hs_source_depth(&src, src.stack[0]), 100002);
	hs_source_release(&src);
	/* one more is not */
	len = (size_t)sprintf(text, "a 1 1.0: x:\n");
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "\t1 f (/m)\n");
	import_bad(text, len, 100002, "more than 100000 frames");
	free(text);
}

static void truncated_files(void **state)
{
	static const char whole[] = "a 1 1.0: x:\n\t1234 main (/bin/a)\n\na 1/1 1.5: x:\n"
				    "\t1234 main (/bin/a)";
	struct hs_stack_source src;

	(void)state;
	/* a final line without its newline is fine when it is whole */
	import_ok(whole, &src);
	assert_int_equal(src.nr_samples, 1);
	hs_source_release(&src);
	/* cut inside a frame line */
	import_bad(whole, sizeof(whole) - 4, 5, "(the file ends here: cut off?)");
	import_bad(whole, sizeof(whole) - 12, 5, "no '(MODULE)'");
	/* cut inside a header */
	import_bad(whole, 39, 4, "header ends before the time");
	import_bad(whole, 38, 4, "header ends after the PID");
	import_bad(whole, 42, 4, "bad time '1.5'");
	BAD("a 1/2", 1, "cut off?");
}

/* ---- robustness ---- */

static void out_of_memory_is_reported(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d;
	long n;
	int ret = -ENOMEM;

	(void)state;
	for (n = 0; ret == -ENOMEM; n++) {
		memset(&d, 0, sizeof(d));
		hs_alloc_fail_after(n);
		ret = import_text(basic, strlen(basic), &src, &d);
		hs_alloc_fail_after(-1);
		if (ret) {
			assert_int_equal(ret, -ENOMEM);
			assert_true(d.set);
		}
		hs_source_release(&src);
	}
	assert_int_equal(ret, 0);
	assert_true(n > 10);
}

/* Mutated and random inputs: an error or a model, never a crash. */
static void garbage_never_crashes(void **state)
{
	static const char alphabet[] = "\t\n :/[]()+0x19abc.-#\r!";
	char buf[sizeof(basic) + 64];
	struct hs_stack_source src;
	struct hs_diag d;
	unsigned seed = 12345;
	int round, i, ret;

	(void)state;
	for (round = 0; round < 3000; round++) {
		size_t len = sizeof(basic) - 1;

		memcpy(buf, basic, len);
		for (i = 0; i < 1 + round % 5 && len; i++) {
			size_t at = (size_t)rand_r(&seed) % len;

			if (round % 3 == 0)
				buf[at] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
			else if (round % 3 == 1)
				buf[at] = (char)rand_r(&seed);
			else
				len = at;
		}
		if (round % 100 == 99)
			for (i = 0; i < (int)len; i++)
				buf[i] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		memset(&d, 0, sizeof(d));
		ret = import_text(buf, len, &src, &d);
		assert_true(ret == 0 || ret == -EINVAL);
		if (ret)
			assert_true(d.set && d.line > 0);
		hs_source_release(&src);
	}
}

/* ---- .trace.zip ---- */

static void add_entry(zip_t *z, const char *name, const char *text)
{
	zip_source_t *s = zip_source_buffer(z, text, strlen(text), 0);

	assert_non_null(s);
	assert_true(zip_file_add(z, name, s, 0) >= 0);
}

static const char zip_data[] =
	"dotnet 42/42 [000] 1.000: cpu-clock:\n"
	"\t7f0000001010 [unknown] ([unknown])\n"
	"\t7f0000002000 [unknown] (/usr/share/dotnet/System.Private.CoreLib.dll)\n"
	"\t1000 main (/usr/bin/dotnet)\n"
	"\n"
	"dotnet 42/42 [000] 1.001: cpu-clock:\n"
	"\t7f0000009000 [unknown] ([unknown])\n"
	"\t2010 [unknown] (/usr/share/dotnet/System.Private.CoreLib.dll)\n"
	"\t1000 main (/usr/bin/dotnet)\n"
	"\n"
	"dotnet 42/42 [000] 1.002: cpu-clock:\n"
	"\t7f0000003004 [unknown] ([unknown])\n"
	"\n"
	"dotnet 42/42 [000] 1.003: cpu-clock:\n";

static void trace_zip_uses_its_maps(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	char path[128];
	zip_t *z;
	int err;

	(void)state;
	snprintf(path, sizeof(path), "%s/x.trace.zip", tu_dir);
	z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	assert_non_null(z);
	add_entry(z, "x/readme.txt", "not this one\n");
	add_entry(z, "x/perf.data.txt", zip_data);
	add_entry(z, "x/perf-42.map",
		  "7f0000001000 100 instance void [MyApp] MyApp.Program::Hot()\n"
		  "garbage line\n"
		  "0x7f0000003000 10 JitStub\n");
	add_entry(z, "x/perfinfo-42.map",
		  "ImageLoad;/usr/share/dotnet/System.Private.CoreLib.dll;{abc};7f0000000000;\n"
		  "Other;x;y\n");
	add_entry(z, "x/System.Private.CoreLib.{abc}.map",
		  "2000 20 [System.Private.CoreLib] System.String::Concat()\n");
	assert_int_equal(zip_close(z), 0);

	hs_source_init(&src);
	err = hs_import_trace_zip(path, &src, &d);
	if (err)
		fail_msg("%d: %s", err, d.msg);
	assert_int_equal(src.nr_samples, 3);
	assert_string_equal(sample_str(&src, 0),
			    "Process dotnet (42)|Thread (42)|dotnet!main|"
			    "System.Private.CoreLib!System.String::Concat()|"
			    "MyApp!MyApp.Program::Hot()");
	assert_string_equal(sample_str(&src, 1),
			    "Process dotnet (42)|Thread (42)|dotnet!main|"
			    "System.Private.CoreLib!System.String::Concat()|"
			    "unknown!unknown");
	assert_string_equal(sample_str(&src, 2),
			    "Process dotnet (42)|Thread (42)|perf-42.map!JitStub");
	assert_float_equal(src.metric[2], 1.0, 1e-12);
	hs_source_release(&src);

	/* the same text outside a zip keeps the unknown frames */
	import_ok(zip_data, &src);
	assert_string_equal(sample_str(&src, 0),
			    "Process dotnet (42)|Thread (42)|dotnet!main|"
			    "System.Private.CoreLib.dll!unknown|unknown!unknown");
	hs_source_release(&src);
}

static void trace_zip_errors(void **state)
{
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	char path[128];
	zip_t *z;
	int err;

	(void)state;
	snprintf(path, sizeof(path), "%s/none.trace.zip", tu_dir);
	z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	assert_non_null(z);
	add_entry(z, "perf-1.map", "1 2 x\n");
	assert_int_equal(zip_close(z), 0);
	hs_source_init(&src);
	assert_int_equal(hs_import_trace_zip(path, &src, &d), -EINVAL);
	assert_non_null(strstr(d.msg, ".data.txt"));
	hs_source_release(&src);

	snprintf(path, sizeof(path), "%s/bad.trace.zip", tu_dir);
	z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	assert_non_null(z);
	add_entry(z, "t/p.data.txt", "a 1 1.0: x:\n\t1 f (/m)\nb zz 2.0: x:\n");
	assert_int_equal(zip_close(z), 0);
	memset(&d, 0, sizeof(d));
	hs_source_init(&src);
	assert_int_equal(hs_import_trace_zip(path, &src, &d), -EINVAL);
	assert_int_equal(d.line, 3);
	assert_non_null(strstr(d.msg, "in 't/p.data.txt': expected 'PID[/TID]'"));
	hs_source_release(&src);

	memset(&d, 0, sizeof(d));
	hs_source_init(&src);
	snprintf(path, sizeof(path), "%s/missing.trace.zip", tu_dir);
	assert_int_equal(hs_import_trace_zip(path, &src, &d), -EINVAL);
	assert_true(d.set);
	hs_source_release(&src);
}

/*
 * More samples than one batch of stacks (the CPU view interns them in
 * batches): every sample keeps its own stack, and the stack ids come in
 * the order of interning the samples one by one, root to leaf.
 */
static void batched_stacks_keep_sample_order(void **state)
{
	enum { NR = 150, MAX_DEPTH = 12 };
	struct hs_buf text;
	struct hs_stack_source src;
	struct hs_diag d = {0};
	uint32_t depth[NR], fn[NR][MAX_DEPTH], path[MAX_DEPTH + 2];
	unsigned seed = 7;
	uint32_t next_id = 0;
	int i, j;

	(void)state;
	hs_buf_init(&text);
	for (i = 0; i < NR; i++) {
		depth[i] = 1 + (seed = seed * 1103515245u + 12345u) % MAX_DEPTH;
		assert_int_equal(hs_buf_addf(&text, "prog %d/%d %d.%06d: 1000 cpu-clock:\n",
					     100 + i % 2, 200 + i % 3, 10 + i / 1000, i % 1000),
				 0);
		for (j = 0; j < (int)depth[i]; j++) {
			/* leaf first; a few functions, so stacks share prefixes */
			fn[i][j] = (seed = seed * 1103515245u + 12345u) >> 16 & 7;
			assert_int_equal(hs_buf_addf(&text, "\t%x f%u+0x1 (/lib/libm.so)\n",
						     0x1000 + j, fn[i][j]),
					 0);
		}
		assert_int_equal(hs_buf_adds(&text, "\n"), 0);
	}
	assert_int_equal(import_text(text.s, text.len, &src, &d), 0);
	/* one CPU (no [CPU] field): its last sample has no weight */
	assert_int_equal(src.nr_samples, NR - 1);
	for (i = 0; i < NR - 1; i++) {
		char want[64];
		size_t n = hs_source_stack_frames(&src, src.stack[i], path, MAX_DEPTH + 2);
		uint32_t s;

		assert_int_equal(n, depth[i] + 2);
		snprintf(want, sizeof(want), "Process prog (%d)", 100 + i % 2);
		assert_string_equal(hs_source_frame_name(&src, path[0]), want);
		snprintf(want, sizeof(want), "Thread (%d)", 200 + i % 3);
		assert_string_equal(hs_source_frame_name(&src, path[1]), want);
		for (j = 0; j < (int)depth[i]; j++) {
			snprintf(want, sizeof(want), "libm.so!f%u", fn[i][j]);
			assert_string_equal(hs_source_frame_name(&src, path[n - 1 - j]), want);
		}
		/* root to leaf: a stack is either known or the next new id */
		for (j = 1; j <= (int)n; j++) {
			size_t up;

			s = src.stack[i];
			for (up = 0; up < n - (size_t)j; up++)
				s = src.stack_caller[s];
			assert_true(s <= next_id);
			if (s == next_id)
				next_id++;
		}
	}
	hs_buf_release(&text);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_output),
		cmocka_unit_test(comm_names),
		cmocka_unit_test(tid_cpu_period_and_event_forms),
		cmocka_unit_test(frame_names),
		cmocka_unit_test(optimization_tiers),
		cmocka_unit_test(srcline_lines_are_skipped),
		cmocka_unit_test(shared_prefixes_give_shared_stacks),
		cmocka_unit_test(weight_per_cpu),
		cmocka_unit_test(out_of_order_samples_are_weighed_in_time_order),
		cmocka_unit_test(one_sample_per_cpu_gives_nothing),
		cmocka_unit_test(process_names_are_joined),
		cmocka_unit_test(other_event_kinds_are_not_samples),
		cmocka_unit_test(bom_blank_and_comment_lines),
		cmocka_unit_test(malformed_headers),
		cmocka_unit_test(malformed_frames),
		cmocka_unit_test(deep_stacks_are_capped),
		cmocka_unit_test(times_out_of_range),
		cmocka_unit_test(truncated_files),
		cmocka_unit_test(out_of_memory_is_reported),
		cmocka_unit_test(garbage_never_crashes),
		cmocka_unit_test(trace_zip_uses_its_maps),
		cmocka_unit_test(trace_zip_errors),
		cmocka_unit_test(batched_stacks_keep_sample_order),
	};
	return cmocka_run_group_tests_name("perf_script", tests, tu_dir_setup,
					   tu_dir_teardown);
}
