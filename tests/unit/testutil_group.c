/*
 * testutil_group - GroupPats applied to one name, for the tests of
 * groups and presets (see testutil.h). Apart from testutil.c so that
 * tests without the analysis library can use the rest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "analysis/group.h"
#include "common/buf.h"
#include "testutil.h"

int tu_group(const char *text, const char *full, char *name)
{
	struct hs_groups g = HS_GROUPS_INIT;
	struct hs_buf out = HS_BUF_INIT;
	int kind;

	assert_int_equal(hs_groups_parse(&g, text, NULL), 0);
	kind = hs_groups_match(&g, full, &out, NULL);
	assert_true(kind >= 0);
	snprintf(name, 256, "%s", out.s);
	hs_buf_release(&out);
	hs_groups_release(&g);
	return kind;
}
