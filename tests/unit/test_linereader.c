#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "common/linereader.h"

static FILE *from_text(const char *s, size_t n)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, n, f), n);
	rewind(f);
	return f;
}

static void splits_lines_and_strips_cr(void **state)
{
	const char text[] = "one\r\ntwo\n\nlast";
	FILE *f = from_text(text, sizeof(text) - 1);
	struct hs_linereader r;
	char *line;
	size_t len;

	(void)state;
	assert_int_equal(hs_linereader_init(&r, f, 100), 0);
	assert_int_equal(hs_linereader_next(&r, &line, &len), 1);
	assert_string_equal(line, "one");
	assert_int_equal(hs_linereader_next(&r, &line, &len), 1);
	assert_string_equal(line, "two");
	assert_int_equal(hs_linereader_next(&r, &line, &len), 1);
	assert_int_equal(len, 0);
	assert_int_equal(hs_linereader_next(&r, &line, &len), 1);
	assert_string_equal(line, "last");
	assert_false(r.last_had_newline);
	assert_int_equal(r.lineno, 4);
	assert_int_equal(hs_linereader_next(&r, &line, &len), 0);
	assert_int_equal(r.offset, sizeof(text) - 1);
	hs_linereader_release(&r);
	fclose(f);
}

static void overlong_line_is_an_error(void **state)
{
	char text[300];
	FILE *f;
	struct hs_linereader r;
	char *line;
	size_t len;

	(void)state;
	memset(text, 'a', sizeof(text));
	text[10] = '\n';
	f = from_text(text, sizeof(text));
	assert_int_equal(hs_linereader_init(&r, f, 64), 0);
	assert_int_equal(hs_linereader_next(&r, &line, &len), 1);
	assert_int_equal(len, 10);
	assert_int_equal(hs_linereader_next(&r, &line, &len), -E2BIG);
	hs_linereader_release(&r);
	fclose(f);
}

static void lines_across_block_boundaries(void **state)
{
	FILE *f = tmpfile();
	struct hs_linereader r;
	char *line, want[32];
	size_t len;
	int i;

	(void)state;
	for (i = 0; i < 300000; i++)
		fprintf(f, "line %d\n", i);
	rewind(f);
	assert_int_equal(hs_linereader_init(&r, f, 1000), 0);
	for (i = 0; i < 300000; i++) {
		assert_int_equal(hs_linereader_next(&r, &line, &len), 1);
		snprintf(want, sizeof(want), "line %d", i);
		assert_string_equal(line, want);
	}
	assert_int_equal(hs_linereader_next(&r, &line, &len), 0);
	hs_linereader_release(&r);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(splits_lines_and_strips_cr),
		cmocka_unit_test(overlong_line_is_an_error),
		cmocka_unit_test(lines_across_block_boundaries),
	};
	return cmocka_run_group_tests_name("linereader", tests, NULL, NULL);
}
