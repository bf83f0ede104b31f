#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "common/buf.h"

static void empty_buffer_is_a_string(void **state)
{
	struct hs_buf b = HS_BUF_INIT;
	char *s;

	(void)state;
	assert_string_equal(b.s, "");
	s = hs_buf_detach(&b);
	assert_string_equal(s, "");
	hs_free(s);
}

static void appends_and_formats(void **state)
{
	struct hs_buf b = HS_BUF_INIT;
	int i;

	(void)state;
	assert_int_equal(hs_buf_adds(&b, "libc.so.6"), 0);
	assert_int_equal(hs_buf_addc(&b, '!'), 0);
	assert_int_equal(hs_buf_addf(&b, "%s+0x%x", "malloc", 0x1f), 0);
	assert_string_equal(b.s, "libc.so.6!malloc+0x1f");
	for (i = 0; i < 1000; i++)
		assert_int_equal(hs_buf_addf(&b, "%04d", i), 0);
	assert_int_equal(b.len, 21 + 4000);
	assert_memory_equal(b.s + b.len - 4, "0999", 4);
	hs_buf_reset(&b);
	assert_string_equal(b.s, "");
	hs_buf_release(&b);
}

static void failed_append_keeps_content(void **state)
{
	struct hs_buf b = HS_BUF_INIT;
	char big[4096];

	(void)state;
	memset(big, 'x', sizeof(big));
	assert_int_equal(hs_buf_adds(&b, "keep"), 0);
	hs_alloc_fail_after(0);
	assert_int_equal(hs_buf_add(&b, big, sizeof(big)), -ENOMEM);
	hs_alloc_fail_after(-1);
	assert_string_equal(b.s, "keep");
	hs_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_buffer_is_a_string),
		cmocka_unit_test(appends_and_formats),
		cmocka_unit_test(failed_append_keeps_content),
	};
	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
