#ifndef HS_TESTS_TESTUTIL_H
#define HS_TESTS_TESTUTIL_H
/*
 * testutil - small builders the unit tests share (testutil.c and
 * testutil_group.c, a static library linked into every test): stacks and
 * samples from "root;...;leaf" text, a stack as text, a scratch directory
 * for a group of tests, GroupPats applied to one name. Failures are
 * cmocka assertions; include after cmocka.h. Nothing returned is owned by
 * the caller: texts are static buffers, valid until the next call.
 */
#include <stddef.h>
#include <stdint.h>
#include "model/stack_source.h"

/*
 * The stack "root;...;leaf" interned in @src (names may be empty between
 * two ';'); NULL or "" is HS_NO_STACK.
 */
uint32_t tu_path(struct hs_stack_source *src, const char *spec);

/* Add a sample at @t_ns of @metric and @count on tu_path(@spec); its index. */
size_t tu_sample(struct hs_stack_source *src, int64_t t_ns, double metric, double count,
		 const char *spec);

/* The frames of @stack, root first, joined with @sep ("" for HS_NO_STACK). */
const char *tu_stack_text(const struct hs_stack_source *src, uint32_t stack, const char *sep);

/* tu_stack_text() of sample @i's stack. */
const char *tu_sample_text(const struct hs_stack_source *src, size_t i, const char *sep);

struct hs_diag;
/* An importer's result @ret is 0; else the test fails with @d's line and message. */
void tu_expect_ok(int ret, const struct hs_diag *d);
/*
 * An importer's result @ret is -EINVAL with @d at @line, its message
 * holding @msg; else the test fails saying what came instead.
 */
void tu_expect_einval(int ret, const struct hs_diag *d, uint64_t line, const char *msg);

/*
 * A scratch directory for a group of tests: tu_dir_setup() makes tu_dir
 * (/tmp/hs-test-XXXXXX), tu_dir_teardown() removes it with all it holds.
 * Both are cmocka group setup and teardown functions.
 */
extern char tu_dir[];
int tu_dir_setup(void **state);
int tu_dir_teardown(void **state);

/*
 * Group @full with GroupPats @text: the match's kind (>= 0), its name into
 * @name, which holds 256 bytes (testutil_group.c: needs the analysis
 * library).
 */
int tu_group(const char *text, const char *full, char *name);

/* tu_group(@text, @full) is @want_kind with the name @want_name. */
#define assert_group(text, full, want_kind, want_name)                        \
	do {                                                                  \
		char got_[256];                                               \
		assert_int_equal(tu_group((text), (full), got_), (want_kind)); \
		assert_string_equal(got_, (want_name));                       \
	} while (0)
#endif
