#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "model/stack_source.h"

static uint32_t frame(struct hs_stack_source *src, const char *name)
{
	uint32_t id;

	assert_int_equal(hs_source_intern_frame(src, name, strlen(name), &id), 0);
	return id;
}

static void stacks_are_interned_by_frame_and_caller(void **state)
{
	struct hs_stack_source src;
	uint32_t a, b, c, s1, s2, s3, s4, path[3], out[3];

	(void)state;
	hs_source_init(&src);
	a = frame(&src, "/bin/prog!main");
	b = frame(&src, "/bin/prog!work");
	c = frame(&src, "/lib/libc.so.6!malloc");
	assert_int_equal(frame(&src, "/bin/prog!main"), a);

	assert_int_equal(hs_source_intern_stack(&src, a, HS_NO_STACK, &s1), 0);
	assert_int_equal(hs_source_intern_stack(&src, b, s1, &s2), 0);
	assert_int_equal(hs_source_intern_stack(&src, c, s2, &s3), 0);
	path[0] = a, path[1] = b, path[2] = c;
	assert_int_equal(hs_source_intern_path(&src, path, 3, &s4), 0);
	assert_int_equal(s4, s3);
	assert_int_equal(src.nr_stacks, 3);
	assert_int_equal(hs_source_depth(&src, s3), 3);
	assert_int_equal(hs_source_depth(&src, HS_NO_STACK), 0);
	assert_int_equal(hs_source_stack_frames(&src, s3, out, 3), 3);
	assert_memory_equal(out, path, sizeof(path));
	/* a short buffer keeps the leaf-most frames */
	assert_int_equal(hs_source_stack_frames(&src, s3, out, 2), 3);
	assert_int_equal(out[0], b);
	assert_int_equal(out[1], c);
	/* same frame under another caller is another stack */
	assert_int_equal(hs_source_intern_stack(&src, c, s1, &s4), 0);
	assert_int_not_equal(s4, s3);
	assert_int_equal(hs_source_intern_stack(&src, 99, s1, &s4), -EINVAL);
	assert_int_equal(hs_source_intern_stack(&src, a, 99, &s4), -EINVAL);
	hs_source_release(&src);
}

/* Appended stacks take the next ids, keep depths and skip the index. */
static void appended_stacks_are_not_indexed(void **state)
{
	struct hs_stack_source src;
	uint32_t a, b, s0, s1, s2, again;

	(void)state;
	hs_source_init(&src);
	assert_int_equal(hs_source_intern_frame(&src, "m!a", 3, &a), 0);
	assert_int_equal(hs_source_intern_frame(&src, "m!b", 3, &b), 0);
	assert_int_equal(hs_source_intern_stack(&src, a, HS_NO_STACK, &s0), 0);
	assert_int_equal(hs_source_append_stack(&src, b, s0, &s1), 0);
	assert_int_equal(hs_source_append_stack(&src, a, s1, &s2), 0);
	assert_int_equal(s1, 1);
	assert_int_equal(s2, 2);
	assert_int_equal(hs_source_depth(&src, s2), 3);
	assert_int_equal(src.stack_caller[s2], s1);
	assert_int_equal(src.stack_frame[s1], b);
	/* the interned one is found; an appended one is not in the index */
	assert_int_equal(hs_source_intern_stack(&src, a, HS_NO_STACK, &again), 0);
	assert_int_equal(again, s0);
	assert_int_equal(src.nr_stacks, 3);
	assert_int_equal(hs_source_append_stack(&src, 7, s0, &again), -EINVAL);
	assert_int_equal(hs_source_append_stack(&src, a, 3, &again), -EINVAL);
	assert_int_equal(src.nr_stacks, 3);
	hs_source_check(&src);
	hs_source_release(&src);
}

static void samples_are_columnar_with_totals(void **state)
{
	struct hs_stack_source src;
	uint32_t a, s;
	double m, c;
	int64_t first, last;

	(void)state;
	hs_source_init(&src);
	a = frame(&src, "x");
	assert_int_equal(hs_source_intern_stack(&src, a, HS_NO_STACK, &s), 0);
	assert_int_equal(hs_source_add_sample(&src, 5000000, 10, 1, s), 0);
	assert_int_equal(hs_source_add_sample(&src, 1000000, -4, -1, HS_NO_STACK), 0);
	assert_int_equal(hs_source_add_sample(&src, 9000000, 2.5, 2, s), 0);
	assert_int_equal(hs_source_add_sample(&src, 0, 1, 1, 7), -EINVAL);
	assert_int_equal(src.nr_samples, 3);
	hs_source_totals(&src, &m, &c);
	assert_true(m == 8.5 && c == 2);
	hs_source_time_range(&src, &first, &last);
	assert_int_equal(first, 1000000);
	assert_int_equal(last, 9000000);
	assert_true(hs_source_memory(&src) > 0);
	hs_source_release(&src);
}

static void display_names_strip_the_directory(void **state)
{
	(void)state;
	assert_string_equal(hs_frame_display("/usr/lib/libc.so.6!malloc"), "libc.so.6!malloc");
	assert_string_equal(hs_frame_display("C:\\Windows\\ntdll!Rtl/Start"), "ntdll!Rtl/Start");
	assert_string_equal(hs_frame_display("libc.so.6!a/b"), "libc.so.6!a/b");
	assert_string_equal(hs_frame_display("Thread (12) /bin/x"), "Thread (12) /bin/x");
	assert_string_equal(hs_frame_display("/no/bang/at/all"), "/no/bang/at/all");
}

static void million_stacks_intern_quickly(void **state)
{
	struct hs_stack_source src;
	uint32_t f[64], s, i;
	char name[16];

	(void)state;
	hs_source_init(&src);
	for (i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		f[i] = frame(&src, name);
	}
	/* 1M distinct stacks: a 3-level tree 100 x 100 x 100 */
	for (i = 0; i < 1000000; i++) {
		uint32_t p[3] = { f[i % 64], f[(i / 64) % 64], f[(i / 4096) % 64] };
		uint32_t leaf;

		assert_int_equal(hs_source_intern_path(&src, p, 3, &s), 0);
		snprintf(name, sizeof(name), "leaf%u", i % 1000);
		leaf = frame(&src, name);
		assert_int_equal(hs_source_intern_stack(&src, leaf, s, &s), 0);
		assert_int_equal(hs_source_add_sample(&src, i, 1, 1, s), 0);
	}
	assert_true(src.nr_stacks > 250000);
	assert_true(hs_source_memory(&src) < (size_t)256 << 20);
	hs_source_release(&src);
}

static void locations_tell_stacks_apart(void **state)
{
	struct hs_stack_source src;
	uint32_t main_f, f, a, b, c, d, loc1, loc2, loc3, line, i;
	const char *file;

	(void)state;
	hs_source_init(&src);
	assert_int_equal(hs_source_intern_frame(&src, "app!main", 8, &main_f), 0);
	assert_int_equal(hs_source_intern_frame(&src, "app!f", 5, &f), 0);
	assert_int_equal(hs_source_intern_stack(&src, main_f, HS_NO_STACK, &a), 0);
	assert_null(src.stack_loc);	/* no location yet: no array */
	assert_int_equal(hs_source_stack_loc(&src, a), 0);
	assert_int_equal(hs_source_intern_loc(&src, "/src/a.c", 8, 10, &loc1), 0);
	assert_int_equal(hs_source_intern_loc(&src, "/src/a.c", 8, 12, &loc2), 0);
	assert_int_equal(hs_source_intern_loc(&src, "/src/a.c", 8, 10, &loc3), 0);
	assert_int_equal(loc1, 1);
	assert_int_equal(loc2, 2);
	assert_int_equal(loc3, loc1);
	file = hs_source_loc(&src, loc2, &line);
	assert_string_equal(file, "/src/a.c");
	assert_int_equal(line, 12);
	assert_null(hs_source_loc(&src, 0, &line));
	assert_null(hs_source_loc(&src, 3, &line));
	/* f called from main at two lines: two stacks with the same frames */
	assert_int_equal(hs_source_intern_stack_loc(&src, f, a, loc1, &b), 0);
	assert_int_equal(hs_source_intern_stack_loc(&src, f, a, loc2, &c), 0);
	assert_int_not_equal(b, c);
	assert_int_equal(hs_source_intern_stack_loc(&src, f, a, loc1, &d), 0);
	assert_int_equal(d, b);
	assert_int_equal(hs_source_intern_stack(&src, f, a, &d), 0);
	assert_true(d != b && d != c);
	assert_int_equal(hs_source_stack_loc(&src, b), loc1);
	assert_int_equal(hs_source_stack_loc(&src, c), loc2);
	assert_int_equal(hs_source_stack_loc(&src, d), 0);
	assert_int_equal(hs_source_stack_loc(&src, a), 0);
	assert_int_equal(hs_source_stack_loc(&src, HS_NO_STACK), 0);
	assert_int_equal(src.stack_frame[b], src.stack_frame[c]);
	assert_int_equal(hs_source_intern_stack_loc(&src, f, a, 99, &d), -EINVAL);
	/* many stacks with locations: the index and the array grow together */
	for (i = 0; i < 5000; i++) {
		assert_int_equal(hs_source_intern_loc(&src, "/src/b.c", 8, i + 1, &loc3), 0);
		assert_int_equal(hs_source_intern_stack_loc(&src, f, c, loc3, &d), 0);
		assert_int_equal(hs_source_stack_loc(&src, d), loc3);
	}
	assert_int_equal(hs_source_intern_stack_loc(&src, f, a, loc2, &d), 0);
	assert_int_equal(d, c);
	hs_source_release(&src);
}

/* Run hs_source_check(@src) in a child: 1 if it aborted (a BUG), 0 if it returned. */
static int check_aborts(const struct hs_stack_source *src)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		fclose(stderr);	/* the BUG line is expected */
		hs_source_check(src);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void check_finds_a_broken_model(void **state)
{
	struct hs_stack_source src;
	uint32_t a, b, s1, s2;

	(void)state;
	hs_source_init(&src);
	a = frame(&src, "main");
	b = frame(&src, "work");
	assert_int_equal(hs_source_intern_stack(&src, a, HS_NO_STACK, &s1), 0);
	assert_int_equal(hs_source_intern_stack(&src, b, s1, &s2), 0);
	assert_int_equal(hs_source_add_sample(&src, 0, 1, 1, s2), 0);
	assert_int_equal(hs_source_add_sample(&src, 0, 1, 1, HS_NO_STACK), 0);
	hs_source_check(&src);
	assert_int_equal(check_aborts(&src), 0);

	src.stack_caller[s1] = s2;	/* a caller after its callee */
	assert_int_equal(check_aborts(&src), 1);
	src.stack_caller[s1] = HS_NO_STACK;
	src.stack_depth[s2] = 3;	/* depth not its caller's + 1 */
	assert_int_equal(check_aborts(&src), 1);
	src.stack_depth[s2] = 2;
	src.stack_frame[s2] = 2;	/* no such frame */
	assert_int_equal(check_aborts(&src), 1);
	src.stack_frame[s2] = b;
	src.stack[0] = 2;		/* no such stack */
	assert_int_equal(check_aborts(&src), 1);
	src.stack[0] = s2;
	assert_int_equal(check_aborts(&src), 0);
	hs_source_release(&src);
}

static void out_of_memory_is_reported(void **state)
{
	struct hs_stack_source src;
	uint32_t a, s;
	long n;
	int ret = -1;

	(void)state;
	for (n = 0; n < 20 && ret; n++) {
		hs_source_init(&src);
		hs_alloc_fail_after(n);
		ret = hs_source_intern_frame(&src, "a", 1, &a);
		if (!ret)
			ret = hs_source_intern_stack(&src, a, HS_NO_STACK, &s);
		if (!ret)
			ret = hs_source_add_sample(&src, 0, 1, 1, s);
		hs_alloc_fail_after(-1);
		assert_true(ret == 0 || ret == -ENOMEM);
		hs_source_release(&src);
	}
	assert_int_equal(ret, 0);
}

/* Per-stack sums keep the order stacks first appear in; ROOT is slot 0. */
static void sums_by_stack_in_first_appearance_order(void **state)
{
	struct hs_stack_source src;
	struct hs_stack_sums sums;
	uint32_t a, b, sa, sb;
	long n;
	int ret = -1;

	(void)state;
	hs_source_init(&src);
	a = frame(&src, "a");
	b = frame(&src, "b");
	assert_int_equal(hs_source_intern_stack(&src, a, HS_NO_STACK, &sa), 0);
	assert_int_equal(hs_source_intern_stack(&src, b, sa, &sb), 0);
	assert_int_equal(hs_source_add_sample(&src, 0, 5, 1, sb), 0);
	assert_int_equal(hs_source_add_sample(&src, 1, 7, 2, HS_NO_STACK), 0);
	assert_int_equal(hs_source_add_sample(&src, 2, 1, 1, sb), 0);
	assert_int_equal(hs_source_sum_by_stack(&src, &sums), 0);
	assert_int_equal(sums.nr, 2); /* stack a has no sample of its own */
	assert_int_equal(sums.order[0], sb + 1);
	assert_int_equal(hs_stack_sums_stack(sums.order[0]), sb);
	assert_int_equal(sums.order[1], 0);
	assert_int_equal(hs_stack_sums_stack(0), HS_NO_STACK);
	assert_true(sums.metric[sb + 1] == 6 && sums.count[sb + 1] == 2);
	assert_true(sums.metric[0] == 7 && sums.count[0] == 2);
	assert_true(sums.metric[sa + 1] == 0);
	hs_stack_sums_release(&sums);
	for (n = 0; n < 5 && ret; n++) {
		hs_alloc_fail_after(n);
		ret = hs_source_sum_by_stack(&src, &sums);
		hs_alloc_fail_after(-1);
		assert_true(ret == 0 || ret == -ENOMEM);
		if (ret)
			assert_null(sums.order);
		else
			hs_stack_sums_release(&sums);
	}
	assert_int_equal(ret, 0);
	hs_source_release(&src);
}

/* guess_stack() finds interned stacks, and the hints change nothing. */
static void guesses_find_interned_stacks(void **state)
{
	struct hs_stack_source src;
	uint32_t f[4], s1, s2, s3, before;
	int i;

	(void)state;
	hs_source_init(&src);
	/* no stacks, no index yet */
	assert_int_equal(hs_source_guess_stack(&src, 0, HS_NO_STACK), HS_NO_STACK);
	hs_source_prefetch_stack(&src, 0, HS_NO_STACK);
	for (i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "f%d", i);
		f[i] = frame(&src, name);
	}
	assert_int_equal(hs_source_intern_stack(&src, f[0], HS_NO_STACK, &s1), 0);
	assert_int_equal(hs_source_intern_stack(&src, f[1], s1, &s2), 0);
	assert_int_equal(hs_source_intern_stack(&src, f[2], s2, &s3), 0);
	before = (uint32_t)src.nr_stacks;
	hs_source_prefetch_stack(&src, f[0], HS_NO_STACK);
	assert_int_equal(hs_source_guess_stack(&src, f[0], HS_NO_STACK), s1);
	assert_int_equal(hs_source_guess_stack(&src, f[1], s1), s2);
	assert_int_equal(hs_source_guess_stack(&src, f[2], s2), s3);
	/* a stack never interned is guessed new (no fingerprint matches) */
	assert_int_equal(hs_source_guess_stack(&src, f[3], s3), HS_NO_STACK);
	assert_int_equal(hs_source_guess_stack(&src, f[1], HS_NO_STACK), HS_NO_STACK);
	assert_int_equal(src.nr_stacks, before);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stacks_are_interned_by_frame_and_caller),
		cmocka_unit_test(appended_stacks_are_not_indexed),
		cmocka_unit_test(samples_are_columnar_with_totals),
		cmocka_unit_test(display_names_strip_the_directory),
		cmocka_unit_test(million_stacks_intern_quickly),
		cmocka_unit_test(locations_tell_stacks_apart),
		cmocka_unit_test(check_finds_a_broken_model),
		cmocka_unit_test(out_of_memory_is_reported),
		cmocka_unit_test(sums_by_stack_in_first_appearance_order),
		cmocka_unit_test(guesses_find_interned_stacks),
	};
	return cmocka_run_group_tests_name("stack_source", tests, NULL, NULL);
}
