/*
 * testutil - the unit tests' shared builders (see testutil.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/diag.h"
#include "testutil.h"

#define MAX_FRAMES 4096

uint32_t tu_path(struct hs_stack_source *src, const char *spec)
{
	uint32_t s = HS_NO_STACK, frame;
	const char *p = spec;

	if (!spec || !*spec)
		return HS_NO_STACK;
	for (;;) {
		size_t len = strcspn(p, ";");

		assert_int_equal(hs_source_intern_frame(src, p, len, &frame), 0);
		assert_int_equal(hs_source_intern_stack(src, frame, s, &s), 0);
		if (!p[len])
			break;
		p += len + 1;
	}
	return s;
}

size_t tu_sample(struct hs_stack_source *src, int64_t t_ns, double metric, double count,
		 const char *spec)
{
	uint32_t s = tu_path(src, spec);

	assert_int_equal(hs_source_add_sample(src, t_ns, metric, count, s), 0);
	return src->nr_samples - 1;
}

const char *tu_stack_text(const struct hs_stack_source *src, uint32_t stack, const char *sep)
{
	static char out[65536];
	static uint32_t frames[MAX_FRAMES];
	size_t n = hs_source_stack_frames(src, stack, frames, MAX_FRAMES), i, at = 0;

	assert_true(n <= MAX_FRAMES);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s", i ? sep : "",
				       hs_source_frame_name(src, frames[i]));
		assert_true(at < sizeof(out));
	}
	return out;
}

const char *tu_sample_text(const struct hs_stack_source *src, size_t i, const char *sep)
{
	assert_true(i < src->nr_samples);
	return tu_stack_text(src, src->stack[i], sep);
}

void tu_expect_ok(int ret, const struct hs_diag *d)
{
	if (ret)
		fail_msg("import failed: %d line %llu: %s", ret,
			 (unsigned long long)d->line, d->msg);
}

void tu_expect_einval(int ret, const struct hs_diag *d, uint64_t line, const char *msg)
{
	if (ret != -EINVAL || !d->set || d->line != line || !strstr(d->msg, msg))
		fail_msg("want -EINVAL at line %llu with '%s'; got %d at line %llu: '%s'",
			 (unsigned long long)line, msg, ret, (unsigned long long)d->line,
			 d->msg);
}

char tu_dir[] = "/tmp/hs-test-XXXXXX";

int tu_dir_setup(void **state)
{
	(void)state;
	strcpy(tu_dir, "/tmp/hs-test-XXXXXX");
	return mkdtemp(tu_dir) ? 0 : -1;
}

int tu_dir_teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tu_dir);
	return system(cmd);
}
