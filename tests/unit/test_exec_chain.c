/*
 * Tests of analysis/exec_chain.c: which traces of a set are images of one
 * process before an exec (a trace that ended by exec, continued by the
 * next trace of its pid that an exec started), whatever the order of the
 * files; pid reuse, other processes and files that are no traces are
 * left alone. And which image of each chain the peak view keeps.
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
#include "analysis/exec_chain.h"
#include "common/alloc.h"
#include "format/trace_writer.h"
#include "trace_builder.h"

/* A trace of pid @pid (@comm) started at @start_ns, @flags, ended by @reason, in @path. */
static void write_image(char *path, uint64_t pid, const char *comm, uint64_t start_ns,
			unsigned flags, unsigned reason)
{
	struct tb b;
	int fd;

	tb_process_image(&b, pid, comm, start_ns, flags, reason);
	strcpy(path, "/tmp/hs-exec-chain-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.buf, b.len), (ssize_t)b.len);
	close(fd);
	free(b.buf);
}

static void chains_of_images(void **state)
{
	char files[7][32];
	const char *paths[7];
	char *frames[7];
	size_t i;
	int fd;

	(void)state;
	/* pid 10: make's forked child exec'd sh, which exec'd cc */
	write_image(files[0], 10, "cc", 300, HS_PROC_EXECED, HS_END_EXIT);
	write_image(files[1], 10, "make", 100, HS_PROC_FORKED, HS_END_EXEC);
	write_image(files[2], 10, "sh", 200, HS_PROC_EXECED, HS_END_EXEC);
	/* pid 10 again, later: another process (forked, not exec'd) */
	write_image(files[3], 10, "make", 400, HS_PROC_FORKED, HS_END_EXIT);
	/* pid 11 exec'd, but its image after the exec is not among the files */
	write_image(files[4], 11, "sh", 150, HS_PROC_FORKED, HS_END_EXEC);
	/* pid 12 ended by exec, then a trace of pid 12 that no exec started */
	write_image(files[5], 12, "a", 100, 0, HS_END_EXEC);
	strcpy(files[6], "/tmp/hs-exec-chain-XXXXXX");
	fd = mkstemp(files[6]);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a;b 1\n", 6), 6);
	close(fd);
	for (i = 0; i < 7; i++)
		paths[i] = files[i];
	assert_int_equal(hs_exec_chain_frames(paths, 7, frames), 0);
	assert_null(frames[0]);
	assert_string_equal(frames[1], "Process cc (10)");
	assert_string_equal(frames[2], "Process cc (10)");
	for (i = 3; i < 7; i++)
		assert_null(frames[i]);
	hs_exec_chain_release(frames, 7);
	for (i = 0; i < 7; i++)
		assert_null(frames[i]);

	/* pid 12's next trace was not started by its exec */
	unlink(files[6]);
	write_image(files[6], 12, "b", 200, HS_PROC_FORKED, HS_END_EXIT);
	paths[6] = files[6];
	assert_int_equal(hs_exec_chain_frames(paths + 5, 2, frames), 0);
	assert_null(frames[0]);
	assert_null(frames[1]);
	/* a missing file is no trace: without cc's, the chain ends at sh */
	paths[0] = "/nonexistent/x.heapscope";
	assert_int_equal(hs_exec_chain_frames(paths, 3, frames), 0);
	assert_null(frames[0]);
	assert_string_equal(frames[1], "Process sh (10)");
	assert_null(frames[2]);
	hs_exec_chain_release(frames, 3);
	for (i = 0; i < 7; i++)
		unlink(files[i]);
}

static void out_of_memory(void **state)
{
	char files[2][32];
	const char *paths[2];
	char *frames[2];
	int n, err;

	(void)state;
	write_image(files[0], 5, "sh", 1, 0, HS_END_EXEC);
	write_image(files[1], 5, "cc", 2, HS_PROC_EXECED, HS_END_EXIT);
	paths[0] = files[0];
	paths[1] = files[1];
	/* every allocation failing in turn: -ENOMEM, nothing left behind */
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_exec_chain_frames(paths, 2, frames);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_null(frames[0]);
		assert_null(frames[1]);
	}
	assert_string_equal(frames[0], "Process cc (5)");
	hs_exec_chain_release(frames, 2);
	unlink(files[0]);
	unlink(files[1]);
}

/*
 * The peak view keeps of each chain its image with the highest peak, the
 * earliest of a tie, whatever the order of the files; the rest stay.
 */
static void peak_keeps_the_highest_image(void **state)
{
	char files[7][32];
	const char *paths[7];
	/* cc, make, sh (pid 10); b, a (pid 11); lone 12; no trace */
	const double peak[7] = {400, 50, 900, 70, 70, 10, 5};
	int keep[7];
	size_t i;
	int fd, n, err;

	(void)state;
	write_image(files[0], 10, "cc", 300, HS_PROC_EXECED, HS_END_EXIT);
	write_image(files[1], 10, "make", 100, HS_PROC_FORKED, HS_END_EXEC);
	write_image(files[2], 10, "sh", 200, HS_PROC_EXECED, HS_END_EXEC);
	write_image(files[3], 11, "b", 200, HS_PROC_EXECED, HS_END_EXIT);
	write_image(files[4], 11, "a", 100, 0, HS_END_EXEC);
	write_image(files[5], 12, "lone", 100, 0, HS_END_EXIT);
	strcpy(files[6], "/tmp/hs-exec-chain-XXXXXX");
	fd = mkstemp(files[6]);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a;b 1\n", 6), 6);
	close(fd);
	for (i = 0; i < 7; i++)
		paths[i] = files[i];
	assert_int_equal(hs_exec_chain_peak_images(paths, 7, peak, keep), 0);
	/* sh's 900 of pid 10; a's 70, which ran before b's 70; the others */
	assert_int_equal(keep[0], 0);
	assert_int_equal(keep[1], 0);
	assert_int_equal(keep[2], 1);
	assert_int_equal(keep[3], 0);
	assert_int_equal(keep[4], 1);
	assert_int_equal(keep[5], 1);
	assert_int_equal(keep[6], 1);

	/* out of memory at any step: -ENOMEM, every file kept */
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_exec_chain_peak_images(paths, 2, peak, keep);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(keep[0], 1);
		assert_int_equal(keep[1], 1);
	}
	/* make and cc alone: cc's 400 */
	assert_int_equal(keep[0], 1);
	assert_int_equal(keep[1], 0);
	for (i = 0; i < 7; i++)
		unlink(files[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(chains_of_images),
	    cmocka_unit_test(out_of_memory),
	    cmocka_unit_test(peak_keeps_the_highest_image),
	};

	return cmocka_run_group_tests_name("exec_chain", tests, NULL, NULL);
}
