/*
 * Tests of a heapscope trace as a stack source: samples, metrics, the
 * process and thread pseudo-frames, frames named MODULE!0xOFFSET, BROKEN
 * stacks and sampling weights.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "format/trace_reader.h"
#include "io/io.h"
#include "model/stack_source.h"
#include "trace_builder.h"
#include "testutil.h"

/*
 * Thread 10 "main": malloc 100 at 1 ms (stack app!0x10 <- libc!0x20),
 * calloc 40 at 2 ms (same stack), free; thread 11 "worker": malloc 8 with
 * a stack whose parent is missing, and a malloc without a stack.
 */
static void build(struct tb *b, uint64_t sample_bytes)
{
	uint8_t *p;

	tb_init(b);
	p = tb_p(b);
	p = put_process_sampled(p, sample_bytes);
	p = put_module(p, 0, 1, 0x1000, 0x1000, 0x2000, "/bin/app");
	p = put_module(p, 0, 2, 0x9000, 0x9000, 0xa000, "/lib/libc.so.6");
	p = put_span(p, 10, 0, 0);
	p = put_thread_start(p, 0, "main");
	p = put_node(p, 1, 0, 0x9020);
	p = put_node(p, 2, 1, 0x1010);
	p = put_alloc(b, p, HS_TAG_MALLOC, 1000000, 0x500, 100, 2);
	p = put_alloc(b, p, HS_TAG_CALLOC, 1000000, 0x100, 40, 2);
	p = put_free(b, p, 0, -0x100);
	p = put_span(p, 11, 0, 0);
	p = put_thread_start(p, 0, "worker");
	p = put_node(p, 7, 6, 0x1030);
	p = put_alloc(b, p, HS_TAG_MALLOC, 3000000, 0x900, 8, 7);
	p = put_alloc(b, p, HS_TAG_MALLOC, 0, 0x10, 16, 0);
	tb_end(b, p);
	tb_chunk(b, HS_CHUNK_EVENTS, 1);
}

static void load(struct tb *b, struct hs_stack_source *src)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_trace t;

	assert_int_equal(hs_trace_load_mem(b->buf, b->len, "t", &t, &diag), 0);
	hs_source_init(src);
	assert_int_equal(hs_trace_to_source(&t, src, &diag), 0);
	hs_trace_release(&t);
}

static void stack_string(const struct hs_stack_source *src, uint32_t stack,
			 char *out, size_t n)
{
	snprintf(out, n, "%s", tu_stack_text(src, stack, ";"));
}

static void allocations_become_samples(void **state)
{
	struct hs_stack_source src;
	struct tb b;
	char s[512];

	(void)state;
	build(&b, 0);
	load(&b, &src);
	assert_string_equal(src.metric_unit, "bytes");
	assert_int_equal(src.nr_samples, 4);
	/* time order: 1 ms, 2 ms, 3 ms... and the stackless one at 3 ms */
	assert_true(src.time[0] == 1000000 && src.metric[0] == 100 && src.count[0] == 1);
	stack_string(&src, src.stack[0], s, sizeof(s));
	assert_string_equal(s, "Process app (77);Thread (10) main;"
			       "/lib/libc.so.6!0x20;/bin/app!0x10;/lib/libc.so.6!malloc");
	assert_true(src.time[1] == 2000000 && src.metric[1] == 40);
	/* the same call site, another allocation function */
	assert_int_equal(src.stack_caller[src.stack[1]], src.stack_caller[src.stack[0]]);
	stack_string(&src, src.stack[1], s, sizeof(s));
	assert_string_equal(s, "Process app (77);Thread (10) main;"
			       "/lib/libc.so.6!0x20;/bin/app!0x10;/lib/libc.so.6!calloc");
	assert_true(src.time[2] == 3000000 && src.metric[2] == 8);
	stack_string(&src, src.stack[2], s, sizeof(s));
	assert_string_equal(s, "Process app (77);Thread (11) worker;BROKEN;/bin/app!0x30;"
			       "/lib/libc.so.6!malloc");
	stack_string(&src, src.stack[3], s, sizeof(s));
	assert_string_equal(s, "Process app (77);Thread (11) worker;/lib/libc.so.6!malloc");
	/* the heap views' defaults: the allocator folded into its callers */
	assert_non_null(src.defaults.fold);
	assert_null(src.defaults.exc);
	hs_source_release(&src);
	free(b.buf);
}

static void sampled_traces_are_scaled(void **state)
{
	struct hs_stack_source src;
	struct tb b;
	double w;

	(void)state;
	build(&b, 100);
	load(&b, &src);
	/* 100 bytes at N = 100: weight 1 / (1 - e^-1) */
	w = 1.0 / (1.0 - exp(-1.0));
	assert_true(fabs(src.count[0] - w) < 1e-9);
	assert_true(fabs(src.metric[0] - 100 * w) < 1e-6);
	w = 1.0 / (1.0 - exp(-0.4));
	assert_true(fabs(src.metric[1] - 40 * w) < 1e-6);
	hs_source_release(&src);
	free(b.buf);
}

static void import_path_sniffs_a_trace(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("x");
	struct hs_stack_source src;
	char path[] = "/tmp/hs-import-XXXXXX";
	struct tb b;
	int fd;

	(void)state;
	assert_int_equal(hs_format_parse("heapscope"), HS_FORMAT_HEAPSCOPE);
	assert_int_equal(hs_format_from_path("a/b.heapscope"), HS_FORMAT_HEAPSCOPE);
	build(&b, 0);
	assert_int_equal(hs_format_sniff(b.buf, b.len), HS_FORMAT_HEAPSCOPE);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.buf, b.len), (ssize_t)b.len);
	close(fd);
	hs_source_init(&src);
	assert_int_equal(hs_import_path(path, HS_FORMAT_UNKNOWN, &src, &diag), 0);
	assert_int_equal(src.nr_samples, 4);
	hs_source_release(&src);
	unlink(path);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allocations_become_samples),
		cmocka_unit_test(sampled_traces_are_scaled),
		cmocka_unit_test(import_path_sniffs_a_trace),
	};
	return cmocka_run_group_tests_name("import_heapscope", tests, NULL, NULL);
}
