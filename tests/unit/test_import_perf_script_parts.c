/*
 * test_import_perf_script_parts - a `perf script` file read from a mapping
 * in parts on worker threads (import_perf_script_parts.c) gives the model
 * of the serial parse: the same frame ids, stack ids, samples and weights,
 * and the same error at the same line of the whole file. Parts are made
 * tiny (HEAPSCOPE_PARSE_PART_BYTES) so that every blank line is a
 * boundary: a pid renamed in a later part, a CPU whose samples span parts,
 * times going back across a boundary, an error in the last part. Big
 * parts are handed to the merger in chunks made as tiny
 * (HEAPSCOPE_PARSE_CHUNK_BYTES), which must give the same model too.
 *
 * The same for the memo of whole stacks (import_perf_script.c): a mapped
 * file read with it (the default) and without it (HEAPSCOPE_PARSE_MEMO=0)
 * gives the same model, or the same error at the same line, also in the
 * shapes that test the keys it makes of the next samples ahead.
 *
 * A mapped file that shrinks while it is read gives an error, not SIGBUS.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/buf.h"
#include "io/io.h"
#include "io/perf_script.h"

/* Deterministic text with every case the merge must get right. */
static void make_text(struct hs_buf *b, unsigned seed, int events)
{
	static const char *const comms[] = {"app", "app worker", ".NET Finalizer", "x!y",
					    "sh"};
	static const char *const blanks[] = {"", "", "", "  ", "\r"};
	uint64_t r = seed * 2654435761u + 1;
	double t = 100.0;
	int i, d;

#define RND(n)                                                                           \
	((r = r * 6364136223846793005ull + 1442695040888963407ull), (r >> 33) % (n))
	for (i = 0; i < events; i++) {
		unsigned pid = 1 + (unsigned)RND(5), tid = pid * 10 + (unsigned)RND(3);
		const char *comm = comms[RND(5)];
		unsigned kind = (unsigned)RND(10);

		t += ((double)RND(2500) - 500) / 1e6; /* sometimes back in time */
		if (!RND(20))
			assert_int_equal(hs_buf_adds(b, "# a comment\n"), 0);
		if (kind == 0)
			assert_int_equal(
			    hs_buf_addf(b,
					"%s %u/%u [%03u] %.6f: sched:sched_switch: "
					"prev_comm=a prev_pid=%u prev_state=S ==> "
					"next_comm=b next_pid=0\n",
					comm, pid, tid, (unsigned)RND(4), t, tid),
			    0);
		else if (kind == 1)
			assert_int_equal(hs_buf_addf(b, "%s %u/%u %.6f: 1 cycles:\n",
						     comm, pid, tid, t),
					 0);
		else
			assert_int_equal(
			    hs_buf_addf(b, "%s %u/%u [%03u] %.6f: 1000 cycles:u:\n", comm,
					pid, tid, (unsigned)RND(4), t),
			    0);
		for (d = (int)RND(7); d > 0; d--) {
			unsigned k = (unsigned)RND(10), f = (unsigned)RND(30);

			if (k == 0)
				assert_int_equal(
				    hs_buf_addf(b, "\t%x [unknown] ([unknown])\n", f), 0);
			else if (k == 1)
				assert_int_equal(hs_buf_addf(b, "\t%x inl_%u (inlined)\n",
							     4096 + f, f % 3),
						 0);
			else
				assert_int_equal(
				    hs_buf_addf(b, "\t  %x f%u+0x%x (/lib/m%u.so)\n",
						4096 + f, f, f * 7, f % 4),
				    0);
		}
		assert_int_equal(hs_buf_addf(b, "%s\n", blanks[RND(5)]), 0);
	}
#undef RND
}

/* Write @len bytes at @text to a new temporary file; its path into @path. */
static void write_file(const char *text, size_t len, char path[64])
{
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd;

	snprintf(path, 64, "%s/hs-parts-XXXXXX", dir && strlen(dir) < 40 ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* import_with() reads without the memo of whole stacks */
static int memo_off;
/* import_with()'s parts are handed over in chunks of this (NULL: the default) */
static const char *chunk_bytes;

/*
 * Import @path's CPU view with @threads threads (NULL: the default) and
 * parts of @part_bytes (NULL: the default). Returns the import's result.
 */
static int import_with(const char *path, const char *threads, const char *part_bytes,
		       struct hs_stack_source *src, struct hs_diag *d)
{
	FILE *f = fopen(path, "r");
	int ret;

	assert_non_null(f);
	if (memo_off)
		setenv("HEAPSCOPE_PARSE_MEMO", "0", 1);
	else
		unsetenv("HEAPSCOPE_PARSE_MEMO");
	if (threads)
		setenv("HEAPSCOPE_PARSE_THREADS", threads, 1);
	else
		unsetenv("HEAPSCOPE_PARSE_THREADS");
	if (part_bytes)
		setenv("HEAPSCOPE_PARSE_PART_BYTES", part_bytes, 1);
	else
		unsetenv("HEAPSCOPE_PARSE_PART_BYTES");
	if (chunk_bytes)
		setenv("HEAPSCOPE_PARSE_CHUNK_BYTES", chunk_bytes, 1);
	else
		unsetenv("HEAPSCOPE_PARSE_CHUNK_BYTES");
	hs_source_init(src);
	ret = hs_import_perf_script_view(f, HS_PERF_CPU, src, d);
	fclose(f);
	unsetenv("HEAPSCOPE_PARSE_THREADS");
	unsetenv("HEAPSCOPE_PARSE_PART_BYTES");
	unsetenv("HEAPSCOPE_PARSE_CHUNK_BYTES");
	unsetenv("HEAPSCOPE_PARSE_MEMO");
	return ret;
}

static void assert_same_model(const struct hs_stack_source *a,
			      const struct hs_stack_source *b)
{
	size_t i;

	assert_int_equal(hs_source_nr_frames(a), hs_source_nr_frames(b));
	for (i = 0; i < hs_source_nr_frames(a); i++)
		assert_string_equal(hs_source_frame_name(a, (uint32_t)i),
				    hs_source_frame_name(b, (uint32_t)i));
	assert_int_equal(a->nr_stacks, b->nr_stacks);
	assert_memory_equal(a->stack_frame, b->stack_frame,
			    a->nr_stacks * sizeof(*a->stack_frame));
	assert_memory_equal(a->stack_caller, b->stack_caller,
			    a->nr_stacks * sizeof(*a->stack_caller));
	assert_int_equal(a->nr_samples, b->nr_samples);
	assert_memory_equal(a->time, b->time, a->nr_samples * sizeof(*a->time));
	assert_memory_equal(a->metric, b->metric, a->nr_samples * sizeof(*a->metric));
	assert_memory_equal(a->count, b->count, a->nr_samples * sizeof(*a->count));
	assert_memory_equal(a->stack, b->stack, a->nr_samples * sizeof(*a->stack));
}

/* Serial (one thread) and in parts of each size: the same model. */
static void check_same(const char *text, size_t len)
{
	static const char *const sizes[] = {"1", "64", "1000", NULL};
	static const char *const chunks[] = {"1", "1", "300", "300", "2000"};
	struct hs_stack_source serial, parts;
	struct hs_diag d = HS_DIAG_INIT("t");
	char path[64];
	size_t k;

	write_file(text, len, path);
	assert_int_equal(import_with(path, "1", NULL, &serial, &d), 0);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct hs_diag dp = HS_DIAG_INIT("t");

		assert_int_equal(import_with(path, "3", sizes[k], &parts, &dp), 0);
		assert_same_model(&serial, &parts);
		hs_source_release(&parts);
	}
	/* big parts handed over in chunks of one event or a few */
	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct hs_diag dp = HS_DIAG_INIT("t");

		chunk_bytes = chunks[k];
		assert_int_equal(
		    import_with(path, k % 2 ? "2" : "3", "5000", &parts, &dp), 0);
		chunk_bytes = NULL;
		assert_same_model(&serial, &parts);
		hs_source_release(&parts);
	}
	/* without the memo, serially and in parts */
	memo_off = 1;
	for (k = 0; k < 2; k++) {
		struct hs_diag dp = HS_DIAG_INIT("t");

		assert_int_equal(
		    import_with(path, k ? "3" : "1", k ? "64" : NULL, &parts, &dp), 0);
		assert_same_model(&serial, &parts);
		hs_source_release(&parts);
	}
	memo_off = 0;
	hs_source_release(&serial);
	unlink(path);
}

static void parts_give_the_serial_model(void **state)
{
	struct hs_buf b;
	unsigned seed;

	(void)state;
	for (seed = 1; seed <= 4; seed++) {
		hs_buf_init(&b);
		make_text(&b, seed, 300);
		check_same(b.s, b.len);
		hs_buf_release(&b);
	}
}

/* A pid first seen under one name, renamed only in a later part. */
static void a_pid_renamed_in_a_later_part(void **state)
{
	static const char text[] = "a 7/7 [000] 1.000000: 1 cycles:\n"
				   "\t1 f (m)\n"
				   "\n"
				   "a 7/7 [000] 1.001000: 1 cycles:\n"
				   "\t1 f (m)\n"
				   "\n"
				   "b 7/8 [000] 1.002000: 1 cycles:\n"
				   "\t2 g (m)\n"
				   "\n"
				   "a 7/7 [000] 1.003000: 1 cycles:\n"
				   "\n";
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	char path[64];
	size_t i;
	int found = 0;

	(void)state;
	check_same(text, sizeof(text) - 1);
	write_file(text, sizeof(text) - 1, path);
	assert_int_equal(import_with(path, "2", "1", &src, &d), 0);
	for (i = 0; i < hs_source_nr_frames(&src); i++)
		found +=
		    !strcmp(hs_source_frame_name(&src, (uint32_t)i), "Process a;b (7)");
	assert_int_equal(found, 1);
	assert_int_equal(src.nr_samples, 3); /* the last one has no weight */
	hs_source_release(&src);
	unlink(path);
}

/*
 * A later part where pid 7 is first "x!y" holds a frame line named as its
 * process frame would be there ("Process x!y (7)"), but the pid's first
 * name is "a": the two must stay apart, as in the serial parse.
 */
static void a_frame_named_like_a_later_parts_process(void **state)
{
	static const char text[] = "a 7/7 [000] 1.000000: 1 cycles:\n"
				   "\t1 f (m)\n"
				   "\n"
				   "x!y 7/7 [000] 1.001000: 1 cycles:\n"
				   "\t1 y (7) (Process x)\n"
				   "\n"
				   "a 7/7 [000] 1.002000: 1 cycles:\n"
				   "\n";

	(void)state;
	check_same(text, sizeof(text) - 1);
}

/* @text fails alike serially and in parts, at @line with @msg in its message. */
static void check_same_error(const char *text, size_t len, uint64_t line, const char *msg)
{
	struct hs_stack_source serial, parts;
	struct hs_diag ds = HS_DIAG_INIT("t"), dp = HS_DIAG_INIT("t"),
		       dc = HS_DIAG_INIT("t");
	char path[64];

	write_file(text, len, path);
	assert_int_equal(import_with(path, "1", NULL, &serial, &ds), -EINVAL);
	assert_int_equal(import_with(path, "3", "1", &parts, &dp), -EINVAL);
	assert_int_equal(ds.line, line);
	assert_int_equal(dp.line, line);
	assert_string_equal(ds.msg, dp.msg);
	assert_non_null(strstr(dp.msg, msg));
	hs_source_release(&serial);
	hs_source_release(&parts);
	/* in two big parts handed over an event at a time */
	chunk_bytes = "1";
	assert_int_equal(import_with(path, "2", "2000", &parts, &dc), -EINVAL);
	chunk_bytes = NULL;
	assert_int_equal(dc.line, line);
	assert_string_equal(ds.msg, dc.msg);
	hs_source_release(&parts);
	memo_off = 1;
	assert_int_equal(import_with(path, "1", NULL, &serial, &dp), -EINVAL);
	memo_off = 0;
	assert_int_equal(dp.line, line);
	assert_string_equal(ds.msg, dp.msg);
	hs_source_release(&serial);
	unlink(path);
}

static void errors_name_the_line_of_the_whole_file(void **state)
{
	struct hs_buf b;
	size_t lines = 0, i, at;

	(void)state;
	hs_buf_init(&b);
	make_text(&b, 9, 200);
	for (i = 0; i < b.len; i++)
		lines += b.s[i] == '\n';
	/* a frame address that is no hex, in the last part */
	assert_int_equal(hs_buf_adds(&b, "a 1/1 [000] 9.0: 1 cycles:\n\tzz f (m)\n"), 0);
	check_same_error(b.s, b.len, lines + 2, "bad frame address 'zz'");
	/* a NUL byte, the last line cut off */
	b.len -= strlen("\tzz f (m)\n");
	assert_int_equal(hs_buf_add(&b, "\t1 f\0(m)", 8), 0);
	check_same_error(b.s, b.len, lines + 2, "NUL byte");
	b.len -= 8;
	assert_int_equal(hs_buf_adds(&b, "\t1 f (m"), 0);
	check_same_error(b.s, b.len, lines + 2, "cut off?");
	/* a line of more than 1 MiB in a later part */
	at = b.len / 2;
	while (b.s[at - 1] != '\n' || b.s[at - 2] != '\n')
		at++;
	b.len = at;
	for (i = 0; i < ((size_t)1 << 20) + 1; i++)
		assert_int_equal(hs_buf_addc(&b, 'x'), 0);
	assert_int_equal(hs_buf_adds(&b, "\n\n"), 0);
	for (i = 0, lines = 0; i < at; i++)
		lines += b.s[i] == '\n';
	check_same_error(b.s, b.len, lines + 1, "line longer than");
	hs_buf_release(&b);
}

/* A file with no blank line, an empty file, one that is all blank lines. */
static void files_without_boundaries(void **state)
{
	static const char one_event[] = "a 1/1 [000] 1.0: 1 cycles:\n\t1 f (m)\n"
					"a 1/1 [000] 1.5: 1 cycles:\n\t1 f (m)";
	static const char blank[] = "\n\n  \n\n\n";

	(void)state;
	check_same(one_event, sizeof(one_event) - 1);
	check_same(blank, sizeof(blank) - 1);
	check_same("", 0);
}

/* Read serially with and without the memo: the same model. */
static void check_same_memo(const char *text, size_t len)
{
	struct hs_stack_source with, without;
	struct hs_diag d = HS_DIAG_INIT("t");
	char path[64];

	write_file(text, len, path);
	assert_int_equal(import_with(path, "1", NULL, &with, &d), 0);
	memo_off = 1;
	assert_int_equal(import_with(path, "1", NULL, &without, &d), 0);
	memo_off = 0;
	assert_same_model(&with, &without);
	hs_source_release(&with);
	hs_source_release(&without);
	unlink(path);
}

/*
 * Stacks that repeat, as the memo meets them: the same frame lines under
 * other pids and tids and with other addresses and offsets (which the
 * memo's key leaves out), offsets it must keep ("+0x" alone, a symbol
 * that is only an offset, map-file text), a repeat while the first one's
 * stack is still queued, inlined and unknown frames, srclines and a
 * comment inside a stack (parsed, never memoized), a stack ended by the
 * next header or by the end of the file, CR line ends; an error after
 * repeats; then enough new stacks to turn the memo off, and repeats.
 */
static void repeated_stacks_give_the_parse_model(void **state)
{
	static const char *const stacks[] = {
	    "\t1 f+0x1 (/lib/m.so)\n\t2 g (/lib/m.so)\n",
	    "\t3 inl (inlined)\n\t3 h+0x4 (m)\n\t4 g (/lib/m.so)\n",
	    "\t5 [unknown] ([unknown])\n\t2 g (/lib/m.so)\n",
	    "\t1 f+0x1 (/lib/m.so)\n  f.c:12\n\t2 g (/lib/m.so)\n",
	    "\t1 f+0x1 (/lib/m.so)\n# c\n\t2 g (/lib/m.so)\n",
	    "\t1 f+0x1 (/lib/m.so)\r\n\t2 g (/lib/m.so)\r\n",
	    "\t7 x (inlined)\n",
	    NULL, /* varied(), below */
	};
	static const char *const ends[] = {"\n", "  \n", "\t\n", "\r\n"};
	struct hs_buf b;
	size_t lines = 0, i;
	int k, j;

	(void)state;
	hs_buf_init(&b);
	for (k = 0; k < 1500; k++) {
		int s = (k * 7 + k / 5) % 8, v = k / 10; /* k % 10 is 1 when s is 7 */

		assert_int_equal(hs_buf_addf(&b, "c%d %d/%d [%03d] %d.%06d: 1 cycles:\n",
					     k % 3, 1 + k % 3, 10 + k % 5, k % 4,
					     1 + k / 1000, k % 1000 * 1000),
				 0);
		if (stacks[s])
			assert_int_equal(hs_buf_adds(&b, stacks[s]), 0);
		else
			assert_int_equal(hs_buf_addf(&b,
						     "\t%16x f+0x%x (/lib/m.so)\n"
						     "\t%x +0x%x (m)\n"
						     "\t%x g+0x%.0x (m)\n"
						     "\t%x h+0x1+0x%x (m)\n"
						     "\t%x [A] M+0x%x (/tmp/perf-9.map)\n"
						     "\t%x q+0x%x ([m])\n",
						     (unsigned)(v % 9) << (v % 4 * 8),
						     v % 3, v % 2, 7, v % 5, v % 3, v % 2,
						     v % 2, v % 4, v / 3 % 2, v % 2,
						     v % 3),
					 0);
		assert_int_equal(hs_buf_adds(&b, ends[k % 4]), 0);
	}
	/* a stack ended by the next header, one by the end of the file */
	assert_int_equal(hs_buf_addf(&b,
				     "c 1/10 [001] 10.0: 1 cycles:\n%s"
				     "c 1/10 [001] 10.1: 1 cycles:\n%s",
				     stacks[0], stacks[0]),
			 0);
	check_same(b.s, b.len);
	/* an error after repeats: the same line with or without the memo */
	for (i = 0; i < b.len; i++)
		lines += b.s[i] == '\n';
	assert_int_equal(
	    hs_buf_addf(&b, "\nc 1/10 [001] 11.0: 1 cycles:\n%s\tzz f (m)\n", stacks[1]),
	    0);
	check_same_error(b.s, b.len, lines + 6, "bad frame address 'zz'");
	/* 20000 new stacks: fewer than an eighth hit, the memo turns off */
	b.len -= strlen("\tzz f (m)\n");
	assert_int_equal(hs_buf_adds(&b, "\n"), 0);
	for (k = 0; k < 20000; k++)
		assert_int_equal(hs_buf_addf(&b,
					     "c 1/10 [000] 12.%06d: 1 cycles:\n"
					     "\t%x u%d (m)\n\t2 g (/lib/m.so)\n\n",
					     k, 100 + k, k),
				 0);
	for (k = 0; k < 100; k++)
		for (j = 0; j < 2; j++)
			assert_int_equal(hs_buf_addf(&b,
						     "c 1/10 [001] 13.%06d: 1 cycles:\n"
						     "%s\n",
						     k, stacks[j]),
					 0);
	check_same_memo(b.s, b.len);
	hs_buf_release(&b);
}

/*
 * The memo's fast keys (a head of kernel frames and the line after them
 * keyed, the other lines raw): texts that share their head and their
 * first 256 raw bytes and differ after them, a text that is a stored
 * one's prefix and one that goes on past it, inlined frames in the raw
 * lines (whose addresses count) and in the head (no fast key), heads of
 * more than 16 lines, texts that end in their head; under other pids
 * and tids, with other leaf addresses and offsets, and other blank
 * lines. The model with the memo is the one without it, serially and in
 * parts.
 */
static void fast_keys_give_the_parse_model(void **state)
{
	static const char *const ends[] = {"\n", "  \n", "\t\n", "\r\n"};
	struct hs_buf b, tail;
	int k, j;

	(void)state;
	hs_buf_init(&b);
	hs_buf_init(&tail);
	/* raw lines enough to pass 256 bytes */
	for (j = 0; j < 8; j++)
		assert_int_equal(hs_buf_addf(&tail,
					     "\t%16x mid%d::call+0x%x (/usr/lib/libm%d.so)\n",
					     0x1000 + j, j, 0x10 + j, j % 3),
				 0);
	for (k = 0; k < 1200; k++) {
		int s = (k * 5 + k / 7) % 9, v = k / 9;

		assert_int_equal(hs_buf_addf(&b, "c%d %d/%d [%03d] %d.%06d: 1 cycles:\n",
					     k % 3, 1 + k % 3, 10 + k % 5, k % 4,
					     1 + k / 1000, k % 1000 * 1000),
				 0);
		if (s <= 5 && s != 3) {
			/* kernel head, leaf offsets that vary, then raw lines */
			assert_int_equal(
			    hs_buf_addf(&b,
					"\t%x k0+0x%x ([kernel.kallsyms])\n"
					"\t%x kcall+0x10 ([kernel.kallsyms])\n"
					"\t%x user+0x%x (/lib/u.so)\n",
					0x100 + v % 7, v % 5, 0x200, 0x300 + v % 3, v % 4),
			    0);
			if (s == 1) /* a prefix of the others */
				assert_int_equal(hs_buf_add(&b, tail.s, tail.len / 2), 0);
			else
				assert_int_equal(hs_buf_add(&b, tail.s, tail.len), 0);
			/* after the first 256 raw bytes: one of two, or more */
			if (s == 2)
				assert_int_equal(hs_buf_addf(&b, "\t9 last%d (m)\n", v % 2),
						 0);
			else if (s == 4)
				assert_int_equal(hs_buf_addf(&b,
							     "\t%x in (inlined)\n"
							     "\t%x host+0x4 (/lib/h.so)\n",
							     7 + v % 2, 8),
						 0);
			else if (s == 5)
				assert_int_equal(hs_buf_addf(&b, "\t9 last0 (m)\n"
								 "\t9 more (m)\n"),
						 0);
		} else if (s == 3) {
			/* inlined in the head: no fast key */
			assert_int_equal(hs_buf_addf(&b,
						     "\t%x in (inlined)\n"
						     "\t%x f+0x%x (m)\n%s",
						     3 + v % 2, 3, v % 3, tail.s),
					 0);
		} else if (s == 6) {
			/* a head of 20 kernel lines */
			for (j = 0; j < 20; j++)
				assert_int_equal(
				    hs_buf_addf(&b, "\t%x k%d+0x%x ([kernel.kallsyms])\n",
						j, j, j ? 8 : v % 4),
				    0);
			assert_int_equal(hs_buf_adds(&b, tail.s), 0);
		} else if (s == 7) {
			/* a text that ends in its head */
			assert_int_equal(hs_buf_addf(&b,
						     "\t%x k0+0x%x ([kernel.kallsyms])\n"
						     "\t1 k1+0x8 ([kernel.kallsyms])\n",
						     v % 3, v % 4),
					 0);
		} else {
			/* no kernel frame: the head is the leaf */
			assert_int_equal(hs_buf_addf(&b, "\t%x leaf+0x%x (/lib/u.so)\n%s",
						     0x10 + v % 5, v % 6, tail.s),
					 0);
		}
		assert_int_equal(hs_buf_adds(&b, ends[k % 4]), 0);
	}
	check_same(b.s, b.len);
	check_same_memo(b.s, b.len);
	hs_buf_release(&tail);
	hs_buf_release(&b);
}

/*
 * With the memo and without it, serially and in parts: the same result,
 * the same model or the same error at the same line. For texts cut
 * anywhere, which may or may not parse.
 */
static void check_same_either_way(const char *text, size_t len)
{
	static const struct {
		int memo_off;
		const char *threads, *part_bytes;
	} runs[] = {
	    {1, "1", NULL}, {0, "3", "1"}, {0, "3", "64"}, {1, "3", "64"},
	};
	struct hs_stack_source ref, other;
	struct hs_diag dr = HS_DIAG_INIT("t");
	char path[64];
	size_t k;
	int want;

	write_file(text, len, path);
	want = import_with(path, "1", NULL, &ref, &dr);
	for (k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		struct hs_diag d = HS_DIAG_INIT("t");

		memo_off = runs[k].memo_off;
		assert_int_equal(import_with(path, runs[k].threads, runs[k].part_bytes,
					     &other, &d),
				 want);
		memo_off = 0;
		if (want) {
			assert_int_equal(d.line, dr.line);
			assert_string_equal(d.msg, dr.msg);
		} else {
			assert_same_model(&ref, &other);
		}
		hs_source_release(&other);
	}
	hs_source_release(&ref);
	unlink(path);
}

/*
 * The keys the memo makes ahead (memo_scan(), memo_next_lines()) in the
 * shapes that could fool a key made early: runs of samples with the same
 * stack (the ring full of one key), one line changed among repeats (the
 * first, a middle and the last frame line; a line more, a line less),
 * and a stack cut by the end of the text or of a part, at every byte of
 * the last samples: the model, or the error, of the parse without it.
 */
static void keys_made_ahead_give_the_parse_model(void **state)
{
	static const char *const same = "\t1 f+0x1 (/lib/m.so)\n\t2 g+0x2 (/lib/m.so)\n"
					"\t3 h (/lib/m.so)\n\t4 main (/bin/p)\n";
	static const char *const changed[] = {
	    "\t1 F+0x1 (/lib/m.so)\n\t2 g+0x2 (/lib/m.so)\n\t3 h (/lib/m.so)\n\t4 main (/bin/p)\n",
	    "\t1 f+0x1 (/lib/m.so)\n\t2 g+0x2 (/lib/n.so)\n\t3 h (/lib/m.so)\n\t4 main (/bin/p)\n",
	    "\t1 f+0x1 (/lib/m.so)\n\t2 g+0x2 (/lib/m.so)\n\t3 h (/lib/m.so)\n\t4 mainx (/bin/p)\n",
	    "\t1 f+0x1 (/lib/m.so)\n\t2 g+0x2 (/lib/m.so)\n\t3 h (/lib/m.so)\n\t4 main (/bin/p)\n"
	    "\t5 start (/bin/p)\n",
	    "\t1 f+0x1 (/lib/m.so)\n\t2 g+0x2 (/lib/m.so)\n\t3 h (/lib/m.so)\n",
	    "\t1 f+0x1 (/lib/m.so)\n\t2 g+0x2 (/lib/m.so)\n\t3 h+0x9 (/lib/m.so)\n\t4 main (/bin/p)\n",
	};
	size_t nr = sizeof(changed) / sizeof(changed[0]), whole, cut;
	struct hs_buf b;
	int k, n = 0;

	(void)state;
	hs_buf_init(&b);
#define SAMPLE(stack)                                                                    \
	assert_int_equal(hs_buf_addf(&b, "p %d/%d [%03d] 1.%06d: 1 cycles:\n%s\n",        \
				     1 + n % 2, 10 + n % 3, n % 4, n, (stack)),          \
			 0),                                                             \
	    n++
	/* a long run of one stack: every key ahead is the same */
	for (k = 0; k < 40; k++)
		SAMPLE(same);
	/* one line changed among repeats, then the run again */
	for (k = 0; k < (int)nr; k++) {
		int r;

		SAMPLE(changed[k]);
		for (r = 0; r < 7; r++)
			SAMPLE(same);
		/* the changed one again, right after a repeat, and twice */
		SAMPLE(changed[k]);
		SAMPLE(changed[k]);
		SAMPLE(same);
	}
	check_same_either_way(b.s, b.len);
	/* the same stack cut by the end of the text at each byte of the last
	 * three samples (the memo looks ahead into them) */
	for (k = 0; k < 3; k++)
		SAMPLE(same);
#undef SAMPLE
	whole = b.len;
	for (cut = whole - 3 * (strlen(same) + 40); cut <= whole; cut++)
		check_same_either_way(b.s, cut);
	hs_buf_release(&b);
}

/*
 * Module paths that the memo keys by their file name alone ("(/DIR/FILE)"
 * as "(/FILE)"): other directories, '\\' separators, brackets, blanks and
 * ".map" around or inside the path, and paths that do not start with
 * "(/", each repeated under the others: the parse's model. A NUL byte
 * in a left-out directory is the parse's error at its line.
 */
static void module_dirs_keyed_by_file_name(void **state)
{
	static const char *const mods[] = {
	    "(/usr/lib/m.so)", "(/opt/x/m.so)",	 "(/m.so)",	  "(/a\\b\\m.so)",
	    "(/a\\b/m.so)",	"(/a/b\\m.so)",	 "(/a)b/m.so)",	  "(/a(b/m.so)",
	    "(/a/m.so ])",	"(/a/[m.so])",	 "([/a/m.so])",	  "(/a/ m.so)",
	    "( /a/m.so)",	"(/a/b/)",	 "(/a/b/ )",	  "(/a/b/ap)",
	    "(/a/.map)",	"(/a/x.map)",	 "(/a/b.map/m)",  "(/a/map)",
	    "(/a/m.so) ",	"(/a/m.so)\r",	 "(/a/jitted-1.so)", "(/b/jitted-1.so)",
	    "(/a/unknown)",	"(/)",		 "(//)",	  "(/a//m.so)",
	    "([m.so)",		"([/a/m.so)",	 "(x/m.so)",	  "(x/a/m.so)",
	};
	static const char *const syms[] = {"f+0x1", "[A] M+0x2", "f", "Int32 [A] N::M()"};
	size_t nr = sizeof(mods) / sizeof(mods[0]);
	struct hs_buf b;
	int k;

	(void)state;
	hs_buf_init(&b);
	for (k = 0; k < 4000; k++) {
		size_t m = (size_t)(k * 7 + k / 13) % nr;

		assert_int_equal(hs_buf_addf(&b,
					     "c %d/%d [%03d] %d.%06d: 1 cycles:\n"
					     "\t%x %s %s\n\t2 g %s\n\n",
					     1 + k % 2, 10 + k % 3, k % 4, 1 + k / 1000,
					     k % 1000 * 1000, 1 + k % 5, syms[k / 3 % 4],
					     mods[m], mods[(m + k / 50) % nr]),
				 0);
	}
	check_same_memo(b.s, b.len);
	/* a NUL in a directory the key leaves out: still the parse's error */
	hs_buf_reset(&b);
	for (k = 0; k < 3; k++)
		assert_int_equal(hs_buf_addf(&b,
					     "c 1/1 [000] 1.%06d: 1 cycles:\n"
					     "\t1 f+0x1 (/a/m.so)\n\t2 g (/%s/m.so)\n\n",
					     k, k < 2 ? "b" : "b\001"),
				 0);
	b.s[b.len - 10] = '\0'; /* the \001 */
	check_same_error(b.s, b.len, 11, "NUL byte in a line");
	hs_buf_release(&b);
}

/* The symbol hook of shrink_while_read(): the file is cut to one page. */
static int shrink_file(void *ctx, uint32_t pid, uint64_t addr, const char *module,
		       size_t module_len, const char **sym, size_t *sym_len,
		       const char **module_out, size_t *module_out_len)
{
	(void)pid;
	(void)addr;
	(void)module;
	(void)module_len;
	(void)sym;
	(void)sym_len;
	(void)module_out;
	(void)module_out_len;
	assert_int_equal(truncate(ctx, 4096), 0);
	return 0;
}

/*
 * Import @path with the symbol hook shrink_file(), which its first frame
 * calls: the rest of the file, past the first page, is gone before the
 * parse reads it. @view's source.
 */
static int shrink_while_read(const char *path, enum hs_perf_view view,
			     struct hs_stack_source *src, struct hs_diag *d)
{
	struct hs__perf_symbols syms = {shrink_file, (void *)path};
	FILE *f = fopen(path, "r");
	int ret;

	assert_non_null(f);
	hs_source_init(src);
	ret = hs__import_perf_script(f, view, src, d, &syms);
	fclose(f);
	return ret;
}

/*
 * A file truncated while the importer reads it from its mapping: the
 * reads past the new end would fault (SIGBUS, which kills the process);
 * the import fails with a message instead, in both views, and the SIGBUS
 * action is the one before again afterwards (cmocka's, here).
 */
static void a_file_that_shrinks_while_read(void **state)
{
	enum hs_perf_view views[] = {HS_PERF_CPU, HS_PERF_THREAD_TIME};
	struct hs_stack_source src;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct sigaction before, after;
	struct hs_buf b;
	char path[64], msg[300];
	size_t v;
	int k;

	(void)state;
	assert_int_equal(sigaction(SIGBUS, NULL, &before), 0);
	hs_buf_init(&b);
	assert_int_equal(hs_buf_adds(&b, "c 1/1 [000] 1.000000: 1 cycles:\n"
					 "\t1 x ([unknown])\n\n"),
			 0);
	for (k = 0; b.len < (64 << 10); k++)
		assert_int_equal(hs_buf_addf(&b,
					     "c 1/1 [000] 1.%06d: 1 cycles:\n"
					     "\t%x f+0x1 (/lib/m.so)\n\t2 g (/lib/m.so)\n\n",
					     k + 1, k),
				 0);
	for (v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		write_file(b.s, b.len, path);
		assert_int_equal(shrink_while_read(path, views[v], &src, &d), -EIO);
		hs_diag_format(&d, msg, sizeof(msg));
		assert_non_null(strstr(msg, "the file shrank while it was read"));
		assert_true(d.line > 2);
		hs_source_release(&src);
		unlink(path);
	}
	assert_int_equal(sigaction(SIGBUS, NULL, &after), 0);
	assert_int_equal(after.sa_flags, before.sa_flags);
	assert_ptr_equal(after.sa_handler, before.sa_handler);
	hs_buf_release(&b);
}

/*
 * The caller's own share of the text: under an even part from 2 threads
 * on, never negative or past the text, and only the floor (an eighth of
 * a part) once the others' merges alone would keep it busy.
 */
static void callers_share_at_every_thread_count(void **state)
{
	const size_t bytes = (size_t)6170 << 20;
	size_t n, first, part;

	(void)state;
	for (n = 2; n <= 64; n++) {
		part = bytes / n + 1;
		first = hs__ps_first_part_bytes(bytes, n, part);
		assert_true(first >= part / 8);
		assert_true(first < part);
		if (n >= 9)
			assert_int_equal(first, part / 8);
	}
	/* two threads: the caller takes a little under half */
	first = hs__ps_first_part_bytes(bytes, 2, bytes / 2 + 1);
	assert_true(first > bytes / 100 * 45 && first < bytes / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parts_give_the_serial_model),
	    cmocka_unit_test(a_pid_renamed_in_a_later_part),
	    cmocka_unit_test(a_frame_named_like_a_later_parts_process),
	    cmocka_unit_test(errors_name_the_line_of_the_whole_file),
	    cmocka_unit_test(files_without_boundaries),
	    cmocka_unit_test(repeated_stacks_give_the_parse_model),
	    cmocka_unit_test(fast_keys_give_the_parse_model),
	    cmocka_unit_test(module_dirs_keyed_by_file_name),
	    cmocka_unit_test(keys_made_ahead_give_the_parse_model),
	    cmocka_unit_test(a_file_that_shrinks_while_read),
	    cmocka_unit_test(callers_share_at_every_thread_count),
	};
	return cmocka_run_group_tests_name("import_perf_script_parts", tests, NULL, NULL);
}
