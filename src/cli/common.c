/*
 * common - helpers every command uses: usage errors, loading inputs,
 * parsing numbers.
 */
#include "cli/cli.h"
#include "analysis/filter.h"
#include "analysis/memviews.h"
#include "common/diag.h"
#include "common/escape.h"
#include "common/log.h"
#include "format/trace_reader.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>
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
	hs_escape_vprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nSee 'heapscope %s --help'.\n", cmd);
	return HS_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "heapscope: error: ");
	va_start(ap, fmt);
	hs_escape_vprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return HS_EXIT_FAIL;
}

void cli_warn_lines(const char *text)
{
	const char *nl;

	for (; text && *text; text = nl ? nl + 1 : NULL) {
		nl = strchr(text, '\n');
		pr_warn("%.*s", nl ? (int)(nl - text) : (int)strlen(text), text);
	}
}

int cli_load(const char *cmd, const char *path, const char *from,
	     struct hs_stack_source *src)
{
	return cli_load_source(cmd, path, from, NULL, src);
}

int cli_list_sources(const char *cmd, const char *path, const char *from)
{
	enum hs_format fmt = HS_FORMAT_UNKNOWN;
	struct hs_diag diag = HS_DIAG_INIT(strcmp(path, "-") ? path : "<stdin>");
	struct hs_source_info list[HS_SOURCES_MAX];
	char msg[1024];
	size_t i, n;
	int err;

	if (from) {
		fmt = hs_format_parse(from);
		if (fmt == HS_FORMAT_UNKNOWN)
			return cli_usage_error(cmd, "unknown input format '%s'", from);
	}
	err = hs_path_format(path, fmt, &fmt, &diag);
	if (err) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "%s", strerror(-err));
		return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
	}
	n = hs_path_sources(path, fmt, list);
	if (!n)
		printf("(%s input has one source: no --source choice)\n",
		       hs_format_name(fmt));
	for (i = 0; i < n; i++)
		printf("%-12s %s\n", list[i].name, list[i].summary);
	return HS_EXIT_OK;
}

/*
 * --source NAME that @path's format does not offer is a usage error,
 * told before reading the file. Standard input is not looked at twice:
 * there the importer says it (exit 1).
 */
static int check_source(const char *cmd, const char *path, enum hs_format fmt,
			const char *source)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_source_info list[HS_SOURCES_MAX];
	char names[256] = "";
	size_t i, n;

	if (!source || !strcmp(path, "-") || hs_path_format(path, fmt, &fmt, &diag))
		return 0;	/* unreadable: the import says so */
	n = hs_path_sources(path, fmt, list);
	for (i = 0; i < n; i++) {
		if (!strcmp(list[i].name, source))
			return 0;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", list[i].name);
	}
	if (!n)
		return cli_usage_error(cmd, "%s: %s input has one source; --source is "
				       "for perf script files (cpu, thread-time) and "
				       "heapscope traces (their memory views)", path,
				       hs_format_name(fmt));
	return cli_usage_error(cmd, "%s: %s input has no source '%s' (it has: %s)", path,
			       hs_format_name(fmt), source, names);
}

int cli_load_source(const char *cmd, const char *path, const char *from,
		    const char *source, struct hs_stack_source *src)
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
	err = check_source(cmd, path, fmt, source);
	if (err)
		return err;
	hs_source_init(src);
	err = hs_import_path_source(path, fmt, source, src, &diag);
	if (err) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "%s", strerror(-err));
		hs_source_release(src);
		return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
	}
	cli_warn_lines(src->defaults.warning);	/* saved texts not used */
	return HS_EXIT_OK;
}

int cli_is_trace(const char *path, const char *from)
{
	enum hs_format fmt = from ? hs_format_parse(from) : hs_format_from_path(path);
	unsigned char head[HS_TRACE_MAGIC_LEN];
	ssize_t n;
	int fd;

	if (fmt != HS_FORMAT_UNKNOWN || !strcmp(path, "-"))
		return fmt == HS_FORMAT_HEAPSCOPE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, head, sizeof(head));
	close(fd);
	return n > 0 && hs_format_sniff(head, (size_t)n) == HS_FORMAT_HEAPSCOPE;
}

int cli_load_view(const char *cmd, const char *path, const char *from,
		  const char *source, const struct hs_memview_opts *mv,
		  struct hs_stack_source *src, struct hs_memview_info *info)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_memview_info own;
	struct hs_memview_opts own_mv;
	char msg[1024];
	int err;

	if (!cli_is_trace(path, from)) {
		if (info)
			memset(info, 0, sizeof(*info));
		return cli_load_source(cmd, path, from, source, src);
	}
	if (!info)
		info = &own;
	if (!source) {
		/* no --source: the trace's default view (cpu for --no-heap) */
		struct hs_source_info avail[HS_SOURCES_MAX];
		struct hs_memview_opts *o = &own_mv;

		*o = *mv;
		if (hs_path_sources(path, HS_FORMAT_HEAPSCOPE, avail) &&
		    !hs_memview_parse(avail[0].name, &o->kind))
			mv = o;
	}
	err = hs_memview_build_path(path, mv, src, info, &diag);
	if (!err)
		cli_trace_warn(path, info->cut_off, info->events, &info->sym_damage);
	if (err) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "%s", strerror(-err));
		hs_source_release(src);
		return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
	}
	return HS_EXIT_OK;
}

void cli_trace_warn(const char *path, int cut_off, size_t events,
		    const struct hs_trace_sym_damage *damage)
{
	if (cut_off)
		fprintf(stderr, "heapscope: warning: %s was cut off (the program did not "
			"finish): %zu event%s recovered\n", path, events, cli_s((double)events));
	if (damage->what)
		fprintf(stderr, "heapscope: warning: %s: the symbol section is damaged at "
			"offset %" PRIu64 " (%s); names are missing; `heapscope symbolize %s` "
			"restores them\n", path, damage->offset, damage->what, path);
}

void cli_human_bytes(double bytes, char *buf, size_t n)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = fabs(bytes);
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%.0f B", bytes);
	else
		snprintf(buf, n, "%.1f %s", bytes < 0 ? -v : v, units[u]);
}

void cli_count(double x, char *buf, size_t n)
{
	if (x == floor(x) && fabs(x) < 1e15)
		snprintf(buf, n, "%.0f", x);
	else
		snprintf(buf, n, "%.1f", x);
}

const char *cli_s(double x)
{
	return x == 1 ? "" : "s";
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

int cli_option_error(const char *cmd, int c, char *const *argv)
{
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
	return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

int cli_filter_option(const char *cmd, int c, const char *arg,
		      struct hs_filter_params *f, unsigned *given)
{
	switch (c) {
	case CLI_OPT_GROUP:
		f->group = arg;
		*given |= CLI_GIVEN_GROUP;
		return 0;
	case CLI_OPT_FOLD:
		f->fold = arg;
		*given |= CLI_GIVEN_FOLD;
		return 0;
	case CLI_OPT_INC:
		f->inc = arg;
		*given |= CLI_GIVEN_INC;
		return 0;
	case CLI_OPT_EXC:
		f->exc = arg;
		*given |= CLI_GIVEN_EXC;
		return 0;
	case CLI_OPT_START:
		*given |= CLI_GIVEN_START;
		return cli_parse_double(cmd, "--start", arg, &f->start_ms);
	case CLI_OPT_END:
		*given |= CLI_GIVEN_END;
		return cli_parse_double(cmd, "--end", arg, &f->end_ms);
	default:
		return -ENOENT;
	}
}

void cli_filter_defaults(struct hs_filter_params *f, unsigned given,
			 const struct hs_source_defaults *d)
{
	if (!(given & CLI_GIVEN_GROUP) && d->group)
		f->group = d->group;
	if (!(given & CLI_GIVEN_FOLD) && d->fold)
		f->fold = d->fold;
	if (!(given & CLI_GIVEN_INC) && d->inc)
		f->inc = d->inc;
	if (!(given & CLI_GIVEN_EXC) && d->exc)
		f->exc = d->exc;
	if (!(given & CLI_GIVEN_START))
		f->start_ms = hs_source_default_number(d->start);
	if (!(given & CLI_GIVEN_END))
		f->end_ms = hs_source_default_number(d->end);
}
