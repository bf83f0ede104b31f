/*
 * cmd_stats - `heapscope stats`: a heap trace's numbers at a glance
 * (analysis/stats.h), as text with small charts or as JSON
 * (docs/json-api.md). A trace that ended by exec is read with the traces
 * of the images its process ran next, as `report` reads it
 * (cli/exec_images.h, analysis/stats_chain.h).
 */
#include "analysis/stats.h"
#include "analysis/stats_chain.h"
#include "analysis/views.h"
#include "cli/cli.h"
#include "cli/exec_images.h"
#include "cli/stats_graph.h"
#include "io/io.h"
#include "common/alloc.h"
#include "common/diag.h"
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHART_ROWS 6
#define CHART_COLS 64

/* A chart of @tl: CHART_ROWS lines of CHART_COLS columns, '#' under the curve. */
static void chart(const char *title, const struct hs_timeline *tl, double duration_ms)
{
	double col[CHART_COLS], max = 0;
	char h[32], line[CHART_COLS + 1];
	size_t i;
	int c, r;

	if (!tl->n) {
		printf("%s: no samples\n", title);
		return;
	}
	for (c = 0; c < CHART_COLS; c++)
		col[c] = -1;
	for (i = 0; i < tl->n; i++) {
		c = duration_ms > 0 ? (int)(tl->ms[i] / duration_ms * CHART_COLS) : 0;
		if (c >= CHART_COLS)
			c = CHART_COLS - 1;
		if (c < 0)
			c = 0;
		if (tl->bytes[i] > col[c])
			col[c] = tl->bytes[i];
		if (tl->bytes[i] > max)
			max = tl->bytes[i];
	}
	/* a column without a point keeps the level before it */
	for (c = 1; c < CHART_COLS; c++)
		if (col[c] < 0)
			col[c] = col[c - 1];
	cli_human_bytes(max, h, sizeof(h));
	printf("%s (highest %s; time runs left to right, %.1f ms):\n", title, h,
	       duration_ms);
	for (r = CHART_ROWS; r > 0; r--) {
		double level = max * (r - 0.5) / CHART_ROWS;

		for (c = 0; c < CHART_COLS; c++)
			line[c] = max > 0 && col[c] >= level ? '#' : ' ';
		line[CHART_COLS] = '\0';
		printf("  |%s\n", line);
	}
	printf("  +");
	for (c = 0; c < CHART_COLS; c++)
		putchar('-');
	putchar('\n');
}

static void top_text(const char *title, const struct hs_top_list *l, int by_count)
{
	char a[32], b[32];
	size_t i;

	printf("\n%s:\n", title);
	if (!l->nr)
		printf("  (none)\n");
	for (i = 0; i < l->nr; i++) {
		double first = by_count ? l->site[i].count : l->site[i].bytes;
		double second = by_count ? l->site[i].bytes : l->site[i].count;

		cli_count(first, a, sizeof(a));
		cli_count(second, b, sizeof(b));
		printf("  %12s %s%s  (%s %s%s)  %s\n", a,
		       by_count ? "allocation" : "byte", cli_s(first), b,
		       by_count ? "byte" : "allocation", cli_s(second), l->site[i].name);
	}
}

/*
 * The images of an exec chain: "sh (x.heapscope), then by exec prog
 * (prog.PID.heapscope)".
 */
static void chain_text(const char *name, char *const *paths,
		       const struct hs_trace *traces, size_t n)
{
	size_t i;

	printf("exec chain:             ");
	for (i = 0; i < n; i++)
		printf("%s%s (%s)", i ? ", then by exec " : "",
		       traces[i].info.comm ? traces[i].info.comm : "?",
		       i ? paths[i] : name);
	printf(", read as one process\n");
}

/* @t: the @n traces @paths, the first named @path; @s: their stats. */
static void text(const char *path, const struct hs_trace *t, char *const *paths, size_t n,
		 const struct hs_heap_stats *s)
{
	char a[32], b[32], c[32], d[32], lost[48] = "";
	unsigned k;

	if (s->lost)
		snprintf(lost, sizeof(lost), ", %" PRIu64 " event%s lost", s->lost,
			 cli_s((double)s->lost));
	printf("trace:                  %s (%s, pid %" PRIu64 ")%s%s%s\n", path,
	       t->info.comm ? t->info.comm : "?", t->info.pid,
	       s->cut_off ? ", cut off" : "", lost,
	       s->symbolized ? "" : ", not symbolized");
	if (n > 1)
		chain_text(path, paths, t, n);
	if (s->sampled)
		printf("sampled:                one allocation per %" PRIu64 " bytes on "
		       "average: counts and bytes are estimates\n",
		       s->sample_bytes);
	printf("duration:               %.3f ms\n", s->duration_ms);
	if (s->cpu_samples)
		printf("cpu samples:            %.0f (%.3f ms of CPU; report --source "
		       "cpu)\n",
		       s->cpu_samples, s->cpu_ms);
	if (s->wall_samples)
		printf("wall samples:           %.0f (CPU_TIME %.3f ms, BLOCKED_TIME "
		       "%.3f ms, "
		       "READIED_TIME %.3f ms; report --source wall)\n",
		       s->wall_samples, s->wall_cpu_ms, s->wall_blocked_ms,
		       s->wall_ready_ms);
	cli_count(s->allocations, a, sizeof(a));
	printf("allocations:            %s (%.1f per second)\n", a,
	       s->allocations_per_second);
	cli_count(s->frees, a, sizeof(a));
	cli_count(s->reallocs, b, sizeof(b));
	printf("frees:                  %s\nreallocs:               %s\n", a, b);
	cli_count(s->bytes_allocated, a, sizeof(a));
	cli_human_bytes(s->bytes_allocated, b, sizeof(b));
	printf("bytes allocated:        %s (%s)\n", a, b);
	cli_count(s->peak_heap_bytes, a, sizeof(a));
	cli_human_bytes(s->peak_heap_bytes, b, sizeof(b));
	if (s->peak_heap_ms >= 0)
		printf("peak heap:              %s (%s) at %.3f ms\n", a, b,
		       s->peak_heap_ms);
	else
		printf("peak heap:              0\n");
	cli_human_bytes(s->peak_rss_bytes, b, sizeof(b));
	if (s->peak_rss_ms >= 0)
		printf("peak RSS:               %.0f (%s) at %.3f ms\n",
		       s->peak_rss_bytes, b, s->peak_rss_ms);
	else
		printf("peak RSS:               no samples\n");
	cli_count(s->leaked_bytes, a, sizeof(a));
	cli_count(s->leaked_blocks, b, sizeof(b));
	cli_count(s->suppressed_bytes, c, sizeof(c));
	cli_count(s->suppressed_blocks, d, sizeof(d));
	printf("leaked:                 %s byte%s in %s block%s (and %s byte%s in %s "
	       "block%s of known exit-time allocations)\n",
	       a, cli_s(s->leaked_bytes), b, cli_s(s->leaked_blocks), c,
	       cli_s(s->suppressed_bytes), d, cli_s(s->suppressed_blocks));
	cli_count(s->temporary_allocations, a, sizeof(a));
	cli_count(s->temporary_bytes, b, sizeof(b));
	printf("temporary allocations:  %s (%s byte%s)\n", a, b,
	       cli_s(s->temporary_bytes));
	cli_count(s->unmatched_frees, a, sizeof(a));
	printf("unmatched frees:        %s\n", a);
	printf("mmaps, munmaps:         %.0f, %.0f\n", s->mmaps, s->munmaps);
	printf("threads:                %zu\n", s->threads);

	printf("\nsize histogram:\n  %21s %12s %14s\n", "size (bytes)", "allocations",
	       "bytes");
	for (k = 0; k < 65; k++) {
		char range[48];

		if (s->hist[k].count == 0)
			continue;
		if (s->hist[k].min == s->hist[k].max)
			snprintf(range, sizeof(range), "%" PRIu64, s->hist[k].min);
		else
			snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64,
				 s->hist[k].min, s->hist[k].max);
		cli_count(s->hist[k].count, a, sizeof(a));
		cli_count(s->hist[k].bytes, b, sizeof(b));
		printf("  %21s %12s %14s\n", range, a, b);
	}
	top_text("top call sites by bytes allocated", &s->by_bytes, 0);
	top_text("top call sites by allocations", &s->by_count, 1);
	top_text("top call sites by bytes leaked", &s->by_leaked, 0);
	top_text("top call sites at the peak", &s->at_peak, 0);
	putchar('\n');
	chart("heap in use", &s->heap, s->duration_ms);
	putchar('\n');
	chart("RSS", &s->rss, s->duration_ms);
}

struct stats_cli {
	const char *format;
	int no_exec_chain; /* --no-exec-chain */
	struct hs_stats_opts o;
};

/* --top N and --points N: whole numbers in a range. */
static int range_cb(const char *cmd, const struct cli_option *opt, void *field,
		    const char *arg)
{
	unsigned long lo = opt->value == 't' ? 1 : 2,
		      hi = opt->value == 't' ? 100000 : 1000000;
	const char *name = opt->value == 't' ? "--top" : "--points";
	unsigned long ul;

	if (cli_parse_ulong(cmd, name, arg, &ul))
		return HS_EXIT_USAGE;
	if (ul < lo || ul > hi)
		return cli_usage_error(cmd, "%s is %lu to %lu", name, lo, hi);
	*(size_t *)field = ul;
	return 0;
}

static const struct cli_option stats_options[] = {
    OPT_STRING(0, "format", struct stats_cli, format, "F",
	       "text (default) or json (keys in docs/json-api.md)"),
    OPT_CALLBACK(0, "top", struct stats_cli, o.top, "N",
		 "entries per top list (default 10)", range_cb, 't'),
    OPT_CALLBACK(0, "points", struct stats_cli, o.points, "N",
		 "points per timeline at most (default 200)", range_cb, 'p'),
    OPT_FLAG(0, "no-exec-chain", struct stats_cli, no_exec_chain,
	     "read a trace that ended by exec alone: by default\n"
	     "the traces of the images its process exec'd next\n"
	     "(found beside it) are read with it, as one process"),
    OPT_END(),
};

const struct cli_syntax cli_stats_syntax = {
    .cmd = "stats",
    .usage = "usage: heapscope stats TRACE [--format text|json] [--top N] [--points N]\n"
	     "                       [--no-exec-chain]\n",
    .intro = "Summarise a heapscope trace: duration, allocations, frees, reallocs,\n"
	     "bytes allocated, allocations per second, the peak of heap in use and\n"
	     "when, the peak RSS, what leaked (live at the end; known exit-time\n"
	     "allocations of libc and libstdc++ counted apart), temporary\n"
	     "allocations (freed before their thread's next one), a histogram of sizes,\n"
	     "the top call sites by bytes, by allocations, by bytes leaked and at\n"
	     "the peak, and the timelines of heap in use and RSS (charts in text,\n"
	     "[ms, bytes] arrays in JSON). A call site is the function that called\n"
	     "the allocator, as 'report' shows it in ByName's Exc column. Sampled\n"
	     "traces give estimates. The numbers are those of the memory views of\n"
	     "'heapscope report --source ...' (docs/memory.md).\n"
	     "A trace that ended by exec (as 'run -- sh -c \"exec prog\"' leaves\n"
	     "it) is read with the traces of the images its process ran next, as\n"
	     "one process, as 'report' reads it: allocations and bytes summed, the\n"
	     "peak the highest image's (an exec frees the heap it replaces, so only\n"
	     "the last image can leak), the timelines over the chain's time.\n"
	     "For a .NET heap snapshot (.gcdump): the totals, the type table\n"
	     "(objects and bytes per type, largest first) and the largest\n"
	     "retainers (docs/dotnet.md).\n",
    .options = stats_options,
    .help_column = 16,
};

/*
 * The stats of @n traces @paths, one trace or the images of an exec chain
 * (hs_heap_stats_chain_path()), as text or JSON; @name names the first in
 * messages. The exit status.
 */
static int show_traces(const char *name, char *const *paths, size_t n,
		       const struct hs_stats_opts *o, int json)
{
	struct hs_heap_stats s;
	struct hs_trace *t = hs_calloc(n, sizeof(*t));
	uint64_t *events = hs_calloc(n, sizeof(*events));
	struct hs_diag diag = HS_DIAG_INIT(name);
	size_t i;
	int err;

	if (!t || !events) {
		hs_free(t);
		hs_free(events);
		return cli_fail("stats: out of memory");
	}
	/* one streamed pass a trace: memory bounded by the live blocks and
	 * the stacks, the reading side's buffers handed back as they go */
	if (hs_alloc_map_large())
		pr_debug("stats: the allocator kept its own threshold");
	if (n == 1)
		err = hs_heap_stats_compute_path(paths[0], o, &t[0], &s, &diag);
	else
		err = hs_heap_stats_chain_path((const char *const *)paths, n, o, t,
					       events, &s, &diag);
	if (n == 1 && !err)
		events[0] = s.events;
	if (err) {
		hs_free(t);
		hs_free(events);
		return cli_fail_diag(&diag, err);
	}
	for (i = 0; i < n; i++)
		cli_trace_warn(i ? paths[i] : name, t[i].cut_off, (size_t)events[i],
			       t[i].has_footer ? t[i].footer[HS_FC_LOST] : 0,
			       &t[i].sym_damage);
	hs_free(events);
	if (json) {
		json_t *j = hs_heap_stats_json(&s), *out = json_object(),
		       *cmd = json_array(), *images = json_array();

		err = !j || !out || !cmd || !images;
		for (i = 0; !err && i < t[0].info.argc; i++)
			err = json_array_append_new(cmd,
						    hs_view_json_text(t[0].info.argv[i]));
		for (i = 0; !err && i < n; i++)
			err = json_array_append_new(
			    images, hs_view_json_text(i ? paths[i] : name));
		err = err || json_object_set_new(out, "trace", hs_view_json_text(name)) ||
		      json_object_set_new(out, "pid",
					  json_integer((json_int_t)t[0].info.pid)) ||
		      json_object_set(out, "command", cmd) ||
		      json_object_set(out, "images", images) ||
		      json_object_update(out, j) ||
		      json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
		      putchar('\n') == EOF;
		json_decref(j);
		json_decref(cmd);
		json_decref(images);
		json_decref(out);
	} else {
		text(name, t, paths, n, &s);
	}
	hs_heap_stats_release(&s);
	for (i = 0; i < n; i++)
		hs_trace_release(&t[i]);
	hs_free(t);
	if (err || fflush(stdout))
		return cli_fail("cannot write the stats");
	return HS_EXIT_OK;
}

/* The stats of the trace @in (and its exec chain, unless @alone); the exit status. */
static int show(const struct cli_input *in, const struct hs_stats_opts *o, int json,
		int alone)
{
	struct hs_diag diag = HS_DIAG_INIT(in->name);
	char *one[1] = {(char *)in->path}, **paths = NULL, **owned = NULL;
	enum hs_format fmt;
	int n = 1, ret;

	if (!cli_is_trace(in->path, NULL) &&
	    !hs_path_format(in->path, HS_FORMAT_UNKNOWN, &fmt, &diag) &&
	    hs_format_has(fmt, HS_FORMAT_HAS_GRAPH))
		return cli_stats_graph(in->path, in->name, o->top ? o->top : 10, json);
	if (!cli_is_trace(in->path, NULL) && access(in->path, R_OK) == 0)
		return cli_fail("%s: not a heapscope trace or heap snapshot (stats reads "
				".heapscope and .gcdump files)",
				in->name);
	/* the images after an exec, found beside the file (not for standard input) */
	if (!alone && !in->tmp && cli_is_trace(in->path, NULL)) {
		ret = cli_exec_images_add("stats", one, 1, &paths, &n, &owned);
		if (ret)
			return ret;
	}
	ret = show_traces(in->name, paths ? paths : one, (size_t)n, o, json);
	cli_exec_images_release(paths, owned);
	return ret;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_cli cli = {.format = "text"};
	struct hs_stats_opts o;
	struct cli_input in;
	int n, json = 0, ret;

	n = cli_parse_options(&cli_stats_syntax, &cli, argc, argv, &ret);
	if (n < 0)
		return ret;
	if (!strcmp(cli.format, "json"))
		json = 1;
	else if (strcmp(cli.format, "text"))
		return cli_usage_error("stats", "unknown format '%s' (text or json)",
				       cli.format);
	if (n != 1)
		return cli_usage_error("stats",
				       n == 0 ? "no trace file" : "too many arguments");
	o = cli.o;
	ret = cli_input_open(argv[0], &in);
	if (!ret)
		ret = show(&in, &o, json, cli.no_exec_chain);
	cli_input_close(&in);
	return ret;
}
