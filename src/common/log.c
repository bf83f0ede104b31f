/*
 * log - leveled stderr logging.
 */
#include "common/log.h"
#include "common/escape.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int level = -1;

static int current_level(void)
{
	const char *env;

	if (level >= 0)
		return level;
	level = HS_LOG_WARN;
	env = getenv("HS_LOG");
	if (env) {
		if (!strcmp(env, "error"))
			level = HS_LOG_ERROR;
		else if (!strcmp(env, "info"))
			level = HS_LOG_INFO;
		else if (!strcmp(env, "debug"))
			level = HS_LOG_DEBUG;
	}
	return level;
}

void hs_log_set_level(enum hs_log_level l)
{
	level = (int)l;
}

int hs_log_enabled(enum hs_log_level l)
{
	return (int)l <= current_level();
}

void hs_log(enum hs_log_level l, const char *fmt, ...)
{
	va_list ap;
	static const char *const names[] = {"error: ", "warning: ", "", "debug: "};

	if (!hs_log_enabled(l))
		return;
	fprintf(stderr, "heapscope: %s", names[l]);
	va_start(ap, fmt);
	hs_escape_vprintf(stderr, fmt, ap); /* arguments quote input */
	va_end(ap);
	fputc('\n', stderr);
}

void hs__bug(const char *file, int line, const char *what)
{
	fprintf(stderr, "heapscope: BUG at %s:%d: %s\n", file, line, what);
	abort();
}
