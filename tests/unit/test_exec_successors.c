/*
 * Tests of analysis/exec_successors.c: the traces that continue a trace's
 * process after its exec, found in its directory by name and PROCESS
 * record. The chain is taken in start order; traces of other pids, of a
 * fork, of an earlier process with the same pid, of a later one after the
 * chain ended, and files that are no traces are left out.
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
#include <cmocka.h>
#include "analysis/exec_successors.h"
#include "common/alloc.h"
#include "format/trace_writer.h"
#include "trace_builder.h"

static char dir[64];

/* A trace of pid @pid (@comm) started at @start_ns, @flags, ended by @reason, as
 * dir/@name. */
static void write_image(const char *name, uint64_t pid, const char *comm,
			uint64_t start_ns, unsigned flags, unsigned reason)
{
	char path[128];
	struct tb b;
	FILE *f;

	tb_process_image(&b, pid, comm, start_ns, flags, reason);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.buf, 1, b.len, f), b.len);
	fclose(f);
	free(b.buf);
}

static const char *in_dir(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static int make_dir(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/hs-exec-succ-XXXXXX");
	assert_non_null(mkdtemp(dir));
	/* pid 10: x.heapscope (-o) ran sh, which exec'd sh, which exec'd cc */
	write_image("x.heapscope", 10, "sh", 100, HS_PROC_FOLLOW_EXEC, HS_END_EXEC);
	write_image("sh.10.heapscope", 10, "sh", 200,
		    HS_PROC_EXECED | HS_PROC_FOLLOW_EXEC, HS_END_EXEC);
	write_image("cc.10.heapscope", 10, "cc", 300, HS_PROC_EXECED, HS_END_EXIT);
	/* pid 10 before, in an older run; pid 10 again after cc ended */
	write_image("old.10.heapscope", 10, "old", 50, HS_PROC_EXECED, HS_END_EXIT);
	write_image("cc.10.2.heapscope", 10, "cc", 400, HS_PROC_EXECED, HS_END_EXIT);
	/* pid 10 forked (no exec started it), pid 110 and 11, a file that is no trace */
	write_image("make.10.3.heapscope", 10, "make", 250, HS_PROC_FORKED, HS_END_EXIT);
	write_image("cc.110.heapscope", 110, "cc", 210, HS_PROC_EXECED, HS_END_EXIT);
	write_image("cc.11.heapscope", 11, "cc", 220, HS_PROC_EXECED, HS_END_EXIT);
	write_image("y.heapscope", 11, "sh", 100, HS_PROC_FOLLOW_EXEC, HS_END_EXEC);
	{
		FILE *f = fopen(in_dir("junk.10.heapscope"), "w");

		assert_non_null(f);
		fputs("a;b 1\n", f);
		fclose(f);
	}
	/* pid 12 ended by exec, not followed: a later exec'd image of pid 12 is another's
	 */
	write_image("z.heapscope", 12, "sh", 100, 0, HS_END_EXEC);
	write_image("cc.12.heapscope", 12, "cc", 300, HS_PROC_EXECED, HS_END_EXIT);
	/* pid 13 followed, its next image left no trace */
	write_image("w.heapscope", 13, "sh", 100, HS_PROC_FOLLOW_EXEC, HS_END_EXEC);
	return 0;
}

static int remove_dir(void **state)
{
	static const char *const names[] = {
	    "x.heapscope",	 "sh.10.heapscope",   "cc.10.heapscope",
	    "old.10.heapscope",	 "cc.10.2.heapscope", "make.10.3.heapscope",
	    "cc.110.heapscope",	 "cc.11.heapscope",   "y.heapscope",
	    "junk.10.heapscope", "z.heapscope",	      "cc.12.heapscope",
	    "w.heapscope",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(in_dir(names[i]));
	rmdir(dir);
	return 0;
}

static void chain_in_exec_order(void **state)
{
	struct hs_exec_successors s = HS_EXEC_SUCCESSORS_INIT;
	char want[2][128];

	(void)state;
	assert_int_equal(hs_exec_successors_find(in_dir("x.heapscope"), &s), 0);
	assert_int_equal(s.nr, 2);
	snprintf(want[0], sizeof(want[0]), "%s/sh.10.heapscope", dir);
	snprintf(want[1], sizeof(want[1]), "%s/cc.10.heapscope", dir);
	assert_string_equal(s.path[0], want[0]);
	assert_string_equal(s.path[1], want[1]);
	assert_int_equal(s.pid, 10);
	assert_true(s.ended_by_exec);
	assert_true(s.follows_exec);
	assert_string_equal(s.first_comm, "sh");
	assert_string_equal(s.last_comm, "cc");
	hs_exec_successors_release(&s);
	assert_int_equal(s.nr, 0);
	assert_null(s.path);

	/* from the middle of the chain: the rest of it */
	assert_int_equal(hs_exec_successors_find(in_dir("sh.10.heapscope"), &s), 0);
	assert_int_equal(s.nr, 1);
	assert_string_equal(s.path[0], want[1]);
	hs_exec_successors_release(&s);
	/* pid 11's image after the exec */
	assert_int_equal(hs_exec_successors_find(in_dir("y.heapscope"), &s), 0);
	assert_int_equal(s.nr, 1);
	assert_string_equal(s.last_comm, "cc");
	hs_exec_successors_release(&s);
}

static void none_to_find(void **state)
{
	struct hs_exec_successors s = HS_EXEC_SUCCESSORS_INIT;

	(void)state;
	/* ended by exec, the next image not traced */
	assert_int_equal(hs_exec_successors_find(in_dir("z.heapscope"), &s), 0);
	assert_int_equal(s.nr, 0);
	assert_true(s.ended_by_exec);
	assert_false(s.follows_exec);
	assert_int_equal(s.pid, 12);
	assert_string_equal(s.first_comm, "sh");
	assert_string_equal(s.last_comm, "sh");
	hs_exec_successors_release(&s);
	/* followed, but nothing of its pid beside it */
	assert_int_equal(hs_exec_successors_find(in_dir("w.heapscope"), &s), 0);
	assert_int_equal(s.nr, 0);
	assert_true(s.ended_by_exec);
	assert_true(s.follows_exec);
	hs_exec_successors_release(&s);
	/* ended by exit */
	assert_int_equal(hs_exec_successors_find(in_dir("cc.10.heapscope"), &s), 0);
	assert_int_equal(s.nr, 0);
	assert_false(s.ended_by_exec);
	hs_exec_successors_release(&s);
	/* no trace, no file, stdin */
	assert_int_equal(hs_exec_successors_find(in_dir("junk.10.heapscope"), &s), 0);
	assert_int_equal(s.nr, 0);
	assert_null(s.first_comm);
	assert_int_equal(hs_exec_successors_find("/nonexistent/x.heapscope", &s), 0);
	assert_int_equal(hs_exec_successors_find("-", &s), 0);
	assert_int_equal(s.nr, 0);
}

static void out_of_memory(void **state)
{
	struct hs_exec_successors s = HS_EXEC_SUCCESSORS_INIT;
	int n, err;

	(void)state;
	/* every allocation failing in turn: -ENOMEM, nothing left behind */
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_exec_successors_find(in_dir("x.heapscope"), &s);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(s.nr, 0);
		assert_null(s.path);
		assert_null(s.first_comm);
	}
	assert_int_equal(s.nr, 2);
	hs_exec_successors_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(chain_in_exec_order),
	    cmocka_unit_test(none_to_find),
	    cmocka_unit_test(out_of_memory),
	};

	return cmocka_run_group_tests_name("exec_successors", tests, make_dir,
					   remove_dir);
}
