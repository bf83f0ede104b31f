/*
 * common - helpers every command uses: loading inputs, the filter
 * options, numbers for people.
 */
#include "cli/cli.h"
#include "cli/dotnet_session.h"
#include "analysis/filter.h"
#include "analysis/memviews.h"
#include "analysis/pattern.h"
#include "common/alloc.h"
#include "common/diag.h"
#include "common/log.h"
#include "format/trace_reader.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>
#include <math.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_fail_diag(struct hs_diag *diag, int err)
{
	char msg[1024];

	if (!diag->set)
		hs_diag_set(diag, 0, "%s", strerror(-err));
	return cli_fail("%s", hs_diag_format(diag, msg, sizeof(msg)));
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
	struct hs_source_info list[HS_SOURCES_MAX];
	struct cli_input in;
	struct hs_diag diag;
	size_t i, n;
	int err;

	if (from) {
		fmt = hs_format_parse(from);
		if (fmt == HS_FORMAT_UNKNOWN)
			return cli_usage_error(cmd, "unknown input format '%s'", from);
	}
	err = cli_input_open(path, &in);
	if (err)
		return err;
	diag = (struct hs_diag)HS_DIAG_INIT(in.name);
	err = hs_path_format(in.path, fmt, &fmt, &diag);
	if (err) {
		cli_input_close(&in);
		return cli_fail_diag(&diag, err);
	}
	n = hs_path_sources(in.path, fmt, list);
	cli_input_close(&in);
	if (!n)
		printf("(%s input has one source: no --source choice)\n",
		       hs_format_name(fmt));
	for (i = 0; i < n; i++)
		printf("%-12s %s\n", list[i].name, list[i].summary);
	cli_dotnet_list_sibling(path);
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
		return 0; /* unreadable: the import says so */
	n = hs_path_sources(path, fmt, list);
	for (i = 0; i < n; i++) {
		size_t len = strlen(list[i].name);

		/* "events:PROVIDER/EVENT" is one of a file's "events" */
		if (!strcmp(list[i].name, source) ||
		    (!strncmp(list[i].name, source, len) && source[len] == ':'))
			return 0;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", list[i].name);
	}
	if (!n)
		return cli_usage_error(cmd,
				       "%s: %s input has one source; --source is "
				       "for perf script files (cpu, thread-time) and "
				       "heapscope traces (their memory views)",
				       path, hs_format_name(fmt));
	return cli_usage_error(cmd, "%s: %s input has no source '%s' (it has: %s)", path,
			       hs_format_name(fmt), source, names);
}

/*
 * Import @path, called @name in messages; --source is checked first
 * (a usage error) unless @path is standard input or a copy of it, which
 * the importer reads once and reports on (exit 1).
 */
static int load_source(const char *cmd, const char *path, const char *name,
		       const char *from, const char *source, struct hs_stack_source *src)
{
	enum hs_format fmt = HS_FORMAT_UNKNOWN;
	struct hs_diag diag = HS_DIAG_INIT(name);
	int err;

	if (from) {
		fmt = hs_format_parse(from);
		if (fmt == HS_FORMAT_UNKNOWN)
			return cli_usage_error(cmd, "unknown input format '%s'", from);
	}
	if (path == name) {
		err = check_source(cmd, path, fmt, source);
		if (err)
			return err;
	}
	hs_source_init(src);
	err = hs_import_path_source(path, fmt, source, src, &diag);
	if (err) {
		hs_source_release(src);
		return cli_fail_diag(&diag, err);
	}
	cli_warn_lines(src->defaults.warning); /* saved texts not used */
	return HS_EXIT_OK;
}

int cli_load_source(const char *cmd, const char *path, const char *from,
		    const char *source, struct hs_stack_source *src)
{
	return load_source(cmd, path, strcmp(path, "-") ? path : "<stdin>", from, source,
			   src);
}

int cli_input_open(const char *path, struct cli_input *in)
{
	struct hs_diag diag = HS_DIAG_INIT("<stdin>");
	struct stat st;
	char msg[1024];

	memset(in, 0, sizeof(*in));
	in->path = in->name = path;
	if (strcmp(path, "-"))
		return HS_EXIT_OK;
	in->name = "<stdin>";
	if (!fstat(STDIN_FILENO, &st) && S_ISREG(st.st_mode) &&
	    lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
		/* a redirected file, read from its start: open it again */
		snprintf(in->fdpath, sizeof(in->fdpath), "/proc/self/fd/%d",
			 STDIN_FILENO);
	} else {
		in->tmp = hs_spool_input(stdin, &diag);
		if (!in->tmp)
			return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
		snprintf(in->fdpath, sizeof(in->fdpath), "/proc/self/fd/%d",
			 fileno(in->tmp));
	}
	in->path = in->fdpath;
	return HS_EXIT_OK;
}

void cli_input_close(struct cli_input *in)
{
	if (in->tmp)
		fclose(in->tmp);
	in->tmp = NULL;
}

/*
 * @path's format as far as it is known without consuming standard input:
 * --from @from, else the extension, else the content of a file.
 */
static enum hs_format guess_format(const char *path, const char *from)
{
	enum hs_format fmt = from ? hs_format_parse(from) : hs_format_from_path(path);
	unsigned char head[HS_TRACE_MAGIC_LEN];
	ssize_t n;
	int fd;

	if (fmt != HS_FORMAT_UNKNOWN || !strcmp(path, "-"))
		return fmt;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return HS_FORMAT_UNKNOWN;
	n = read(fd, head, sizeof(head));
	close(fd);
	return n > 0 ? hs_format_sniff(head, (size_t)n) : HS_FORMAT_UNKNOWN;
}

int cli_is_trace(const char *path, const char *from)
{
	return hs_format_has(guess_format(path, from), HS_FORMAT_HAS_HEAP);
}

static int has_source(const struct hs_source_info *list, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i].name, name))
			return 1;
	return 0;
}

/* "cpu, wall": the names of @list, in @buf. */
static const char *source_names(const struct hs_source_info *list, size_t n, char *buf,
				size_t size)
{
	size_t i, used = 0;

	buf[0] = 0;
	for (i = 0; i < n && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
					 list[i].name);
	return buf;
}

/*
 * cli_load_view() of @path, readable as @in->path, called @in->name in
 * messages. A --source the trace does not have (cpu of a heap-only trace,
 * a memory view of a --no-heap one) fails naming those it has, rather
 * than showing an empty view.
 */
static int load_view(const char *cmd, const struct cli_input *in, const char *from,
		     const char *source, const struct hs_memview_opts *mv,
		     struct hs_stack_source *src, struct hs_memview_info *info)
{
	struct hs_diag diag = HS_DIAG_INIT(in->name);
	struct hs_memview_info own;
	struct hs_memview_opts own_mv = *mv;
	struct hs_source_info avail[HS_SOURCES_MAX];
	char msg[1024], names[256];
	size_t n_avail;
	int err;

	if (!cli_is_trace(in->path, from)) {
		if (info)
			memset(info, 0, sizeof(*info));
		return load_source(cmd, in->path, in->name, from, source, src);
	}
	if (!info)
		info = &own;
	n_avail = hs_path_sources(in->path, guess_format(in->path, from), avail);
	/* no --source: the trace's default view (cpu for --no-heap) */
	if (!source && n_avail)
		source = avail[0].name;
	if (source && hs_memview_parse(source, &own_mv.kind))
		return cli_usage_error(
		    cmd,
		    "unknown source '%s' (alloc, net, leaks, peak, "
		    "temporary, mmap, cpu or wall)%s",
		    source, cli_dotnet_sibling_hint(in->path, source, msg, sizeof(msg)));
	if (source && n_avail && !has_source(avail, n_avail, source))
		return cli_fail("%s: the trace has no '%s' source (it has: %s)", in->name,
				source,
				source_names(avail, n_avail, names, sizeof(names)));
	/* (the streamed read's buffers handed back as they go: common/alloc.h) */
	if (hs_alloc_map_large())
		pr_debug("%s: the allocator kept its own threshold", cmd);
	err = hs_memview_build_path(in->path, &own_mv, src, info, &diag);
	if (!err)
		cli_trace_warn(in->name, info->cut_off, info->events, info->lost,
			       &info->sym_damage);
	if (err) {
		hs_source_release(src);
		return cli_fail_diag(&diag, err);
	}
	return HS_EXIT_OK;
}

int cli_load_view(const char *cmd, const char *path, const char *from, const char *source,
		  const struct hs_memview_opts *mv, struct hs_stack_source *src,
		  struct hs_memview_info *info)
{
	struct cli_input in;
	int ret;

	if (from && !hs_format_has(hs_format_parse(from), HS_FORMAT_HAS_HEAP))
		return cli_load_source(cmd, path, from, source, src);
	ret = cli_input_open(path, &in);
	if (!ret)
		ret = load_view(cmd, &in, from, source, mv, src, info);
	cli_input_close(&in);
	return ret;
}

void cli_trace_warn(const char *path, int cut_off, size_t events, uint64_t lost,
		    const struct hs_trace_sym_damage *damage)
{
	if (lost)
		fprintf(stderr,
			"heapscope: warning: %s: the collector could not record %" PRIu64
			" event%s (out of memory for a thread, or its writer had "
			"stopped): the counts miss them\n",
			path, lost, cli_s((double)lost));
	if (cut_off)
		fprintf(stderr,
			"heapscope: warning: %s was cut off (the program did not "
			"finish): %zu event%s recovered\n",
			path, events, cli_s((double)events));
	if (damage->what)
		fprintf(stderr,
			"heapscope: warning: %s: the symbol section is damaged at "
			"offset %" PRIu64
			" (%s); names are missing; `heapscope symbolize %s` "
			"restores them\n",
			path, damage->offset, damage->what, path);
}

void cli_human_bytes(double bytes, char *buf, size_t n)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
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

int cli_filter_option_cb(const char *cmd, const struct cli_option *opt, void *field,
			 const char *arg)
{
	struct cli_filter *f = field;

	f->given |= (unsigned)opt->value;
	switch (opt->value) {
	case CLI_GIVEN_GROUP:
		f->params.group = arg;
		return 0;
	case CLI_GIVEN_FOLD:
		f->params.fold = arg;
		return 0;
	case CLI_GIVEN_INC:
		f->params.inc = arg;
		return 0;
	case CLI_GIVEN_EXC:
		f->params.exc = arg;
		return 0;
	case CLI_GIVEN_START:
		return cli_parse_double(cmd, "--start", arg, &f->params.start_ms);
	default:
		return cli_parse_double(cmd, "--end", arg, &f->params.end_ms);
	}
}

int cli_filter_defaults(struct hs_filter_params *f, unsigned given,
			const struct hs_source_defaults *d, struct cli_joined_pats *keep)
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
	return cli_filter_extend(f, d, keep);
}

int cli_filter_extend(struct hs_filter_params *f, const struct hs_source_defaults *d,
		      struct cli_joined_pats *keep)
{
	const char *group = hs_patterns_extend(f->group, d->group, &keep->group);
	const char *fold = hs_patterns_extend(f->fold, d->fold, &keep->fold);
	const char *exc = hs_patterns_extend(f->exc, d->exc, &keep->exc);

	if ((f->group && !group) || (f->fold && !fold) || (f->exc && !exc))
		return cli_fail("out of memory");
	f->group = group;
	f->fold = fold;
	f->exc = exc;
	return 0;
}

void cli_joined_pats_release(struct cli_joined_pats *j)
{
	hs_free(j->group);
	hs_free(j->fold);
	hs_free(j->exc);
	memset(j, 0, sizeof(*j));
}
