/*
 * common - helpers every command uses: usage errors, loading inputs,
 * parsing numbers.
 */
#include "cli/cli.h"
#include "common/diag.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "heapscope %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nSee 'heapscope %s --help'.\n", cmd);
	return HS_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "heapscope: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return HS_EXIT_FAIL;
}

int cli_load(const char *cmd, const char *path, const char *from,
	     struct hs_stack_source *src)
{
	enum hs_format fmt = HS_FORMAT_UNKNOWN;
	struct hs_diag diag = HS_DIAG_INIT(strcmp(path, "-") ? path : "<stdin>");
	char msg[1024];
	int err;

	if (from) {
		fmt = hs_format_parse(from);
		if (fmt == HS_FORMAT_UNKNOWN)
			return cli_usage_error(cmd, "unknown input format '%s'", from);
	}
	hs_source_init(src);
	err = hs_import_path(path, fmt, src, &diag);
	if (err) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "%s", strerror(-err));
		hs_source_release(src);
		return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
	}
	return HS_EXIT_OK;
}

int cli_parse_double(const char *cmd, const char *opt, const char *arg,
		     double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v))
		return cli_usage_error(cmd, "%s expects a number, not '%s'", opt, arg);
	*out = v;
	return 0;
}

int cli_parse_ulong(const char *cmd, const char *opt, const char *arg,
		    unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (arg[0] == '-')
		return cli_usage_error(cmd, "%s expects a whole number, not '%s'", opt, arg);
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end)
		return cli_usage_error(cmd, "%s expects a whole number, not '%s'", opt, arg);
	*out = v;
	return 0;
}
