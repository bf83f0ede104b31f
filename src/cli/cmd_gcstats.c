/*
 * cmd_gcstats - `heapscope gcstats FILE`: PerfView's GCStats report of a
 * .nettrace (plain or zipped): the summary, "GC Rollup By Generation" and
 * "GC Events by Time", as text, JSON or one self-contained HTML page.
 * The numbers come from dotnet/gc_stats.c (read by io/gc_stats_load.c,
 * JSON by dotnet/gc_stats_json.c); this file prints them. Sizes are in MB of 1,000,000
 * bytes, as in PerfView.
 */
#include "cli/cli.h"
#include "common/diag.h"
#include "common/log.h"
#include "dotnet/gc_stats.h"
#include "io/gc_stats_load.h"
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MB 1e6

enum gc_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_HTML };

struct gcstats_cli {
	const char *format;
};

static const struct cli_option gcstats_options[] = {
    OPT_STRING(0, "format", struct gcstats_cli, format, "F",
	       "text (default), json or html"),
    OPT_END(),
};

const struct cli_syntax cli_gcstats_syntax = {
    .cmd = "gcstats",
    .usage = "usage: heapscope gcstats FILE.nettrace[.zip] [--format text|json|html]\n",
    .intro = "PerfView's GCStats of a .NET trace (.nettrace or .nettrace.zip, recorded\n"
	     "with the GC keyword; at level Verbose for the allocated amounts): the\n"
	     "summary (total allocated, GC count, total and longest pause, % of time\n"
	     "paused, largest heap), 'GC Rollup By Generation', and 'GC Events by\n"
	     "Time' (each GC's pause start, reason, generation and kind, suspension\n"
	     "and pause, gen0 allocated, peak and after, promoted, each generation's\n"
	     "size and survival, pinned objects). MB are 1,000,000 bytes. JSON is\n"
	     "{\"summary\": {...}, \"rollup\": [...], \"gcs\": [...]}; HTML is one page\n"
	     "without external resources. docs/dotnet.md says how each number is made.\n",
    .options = gcstats_options,
    .help_column = 16,
};

/* A trace's GCs and what the read found. */
struct gc_read {
	struct hs_gc_stats st;
	uint32_t pid;
};

/* Read @in into @r; the exit status (after printing why on failure). */
static int read_trace(const struct cli_input *in, struct gc_read *r)
{
	struct hs_diag diag = HS_DIAG_INIT(in->name);
	struct hs_gc_load_info info;
	int err;

	err = hs_gc_stats_load(in->path, &r->st, &info, &diag);
	r->pid = info.pid;
	if (err && info.not_nettrace)
		return cli_fail("gcstats reads .nettrace files (EventPipe traces of .NET "
				"programs, plain or zipped); %s is not one",
				in->name);
	if (err)
		return cli_fail_diag(&diag, err);
	if (info.truncated)
		pr_warn("%s: cut off at offset %" PRIu64 "; the GCs before it are kept, "
			"the last may be incomplete",
			in->name, info.truncated_at);
	if (info.nr_lost)
		pr_warn("%s: the runtime dropped %" PRIu64 " event%s; some GCs may be "
			"incomplete",
			in->name, info.nr_lost, info.nr_lost == 1 ? "" : "s");
	return HS_EXIT_OK;
}

/* ---- text ---- */

/* @v in a column of @w with @prec decimals, blank when unknown. */
static void cell(double v, int w, int prec)
{
	if (isnan(v))
		printf(" %*s", w, "");
	else
		printf(" %*.*f", w, prec, v);
}

static const char *gen_label(int k)
{
	static const char *const labels[] = {"ALL", "0", "1", "2"};

	return labels[k];
}

static void text(const char *name, const struct gc_read *r)
{
	const struct hs_gc_stats *s = &r->st;
	char b1[32], b2[32];
	size_t i;
	int k, g;

	printf("trace:              %s (pid %" PRIu32 ")\n", name, r->pid);
	printf("duration:           %.3f ms\n", s->duration_ms);
	if (s->has_alloc_ticks)
		printf("total allocated:    %.3f MB (AllocationTick events)\n",
		       s->total_alloc_bytes / MB);
	else
		printf("total allocated:    unknown (no AllocationTick events: record "
		       "the GC "
		       "keyword at level Verbose)\n");
	printf("GCs:                %zu (%u induced", s->nr, s->rollup[0].induced);
	if (s->nr_incomplete)
		printf(", %zu incomplete", s->nr_incomplete);
	printf(")\n");
	printf("total pause:        %.3f ms\n", s->total_pause_ms);
	printf("longest pause:      %.3f ms\n", s->max_pause_ms);
	printf("time paused:        %.2f %%\n", s->pause_percent);
	printf("largest heap:       %.3f MB\n", s->max_peak_bytes / MB);
	for (i = 0; i < s->nr && s->gcs[i].nr_heap_histories; i++)
		;
	if (s->nr)
		printf(
		    "sizes before GCs:   %s\n",
		    i == s->nr
			? "from GCPerHeapHistory"
			: "estimated where GCPerHeapHistory is missing (docs/dotnet.md)");

	printf("\nGC Rollup By Generation\n");
	printf("%-4s %6s %11s %11s %12s %11s %12s %13s %14s %17s %8s\n", "Gen", "Count",
	       "Max Pause", "Mean Pause", "Total Pause", "Max Peak MB", "Mean Peak MB",
	       "Mean After MB", "Total Alloc MB", "Total Promoted MB", "Induced");
	for (k = 0; k < 4; k++) {
		const struct hs_gc_rollup *u = &s->rollup[k];

		printf("%-4s %6u", gen_label(k), u->count);
		cell(u->max_pause_ms, 11, 3);
		cell(u->mean_pause_ms, 11, 3);
		cell(u->total_pause_ms, 12, 3);
		cell(u->max_peak_bytes / MB, 11, 3);
		cell(u->mean_peak_bytes / MB, 12, 3);
		cell(u->mean_after_bytes / MB, 13, 3);
		cell(u->total_alloc_bytes / MB, 14, 3);
		cell(u->total_promoted_bytes / MB, 17, 3);
		printf(" %8u\n", u->induced);
	}

	printf("\nGC Events by Time\n");
	printf("%5s %12s %-17s %3s %-15s %10s %9s %13s %9s %9s %11s", "Index",
	       "Pause Start", "Reason", "Gen", "Kind", "Suspend ms", "Pause ms",
	       "Gen0 Alloc MB", "Peak MB", "After MB", "Promoted MB");
	printf(" %9s %9s %9s %9s %9s %9s %9s %9s %9s %10s\n", "Gen0 MB", "Gen0 Surv%",
	       "Gen1 MB", "Gen1 Surv%", "Gen2 MB", "Gen2 Surv%", "LOH MB", "LOH Surv%",
	       "POH MB", "Pinned Obj");
	for (i = 0; i < s->nr; i++) {
		const struct hs_gc_record *gc = &s->gcs[i];
		char gen[8];

		snprintf(gen, sizeof(gen), "%u%c", gc->generation,
			 hs_gc_kind_letter(gc->kind));
		printf("%5u %12.3f %-17s %3s %-15s", gc->index, gc->pause_start_ms,
		       hs_gc_reason_name(gc->reason, b1, sizeof(b1)), gen,
		       hs_gc_kind_name(gc->kind, b2, sizeof(b2)));
		cell(gc->suspend_ms, 10, 3);
		cell(gc->pause_ms, 9, 3);
		cell((double)gc->alloc_gen0 / MB, 13, 3);
		cell(gc->peak_bytes / MB, 9, 3);
		cell(gc->after_bytes / MB, 9, 3);
		cell(gc->promoted_bytes / MB, 11, 3);
		for (g = 0; g < HS_GC__NR_GENS; g++) {
			cell(gc->has_heap_stats ? (double)gc->heap.gen_size[g] / MB : NAN,
			     9, 3);
			if (g != HS_GC_POH)
				cell(gc->survival[g], 9, 1);
		}
		if (gc->has_heap_stats)
			printf(" %10" PRIu32, gc->heap.pinned_objects);
		else
			printf(" %10s", "");
		printf("%s\n", gc->complete ? "" : "  (incomplete)");
	}
}

static int json_out(const char *name, const struct gc_read *r)
{
	json_t *out = hs_gc_stats_json(&r->st, name, r->pid);
	int err =
	    !out ||
	    json_dumpf(out, stdout,
		       JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) ||
	    putchar('\n') == EOF;

	json_decref(out);
	return err;
}

/* ---- HTML ---- */

static void html_text(const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", stdout);
			break;
		case '>':
			fputs("&gt;", stdout);
			break;
		case '&':
			fputs("&amp;", stdout);
			break;
		case '"':
			fputs("&quot;", stdout);
			break;
		default:
			putchar(*s);
		}
	}
}

static void html_cell(double v, int prec)
{
	if (isnan(v))
		printf("<td></td>");
	else
		printf("<td>%.*f</td>", prec, v);
}

static void html(const char *name, const struct gc_read *r)
{
	const struct hs_gc_stats *s = &r->st;
	char b1[32], b2[32];
	size_t i;
	int k, g;

	printf("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>GCStats: ");
	html_text(name);
	printf(
	    "</title>\n<style>\nbody{font-family:sans-serif;font-size:13px;margin:1em}\n"
	    "table{border-collapse:collapse;margin-bottom:1.5em}\n"
	    "th,td{border:1px solid #bbb;padding:2px 6px;text-align:right}\n"
	    "th{background:#eef;position:sticky;top:0}\n"
	    "td.l,th.l{text-align:left}\ntr.inc td{color:#a00}\n</style></head><body>\n");
	printf(
	    "<h1>GCStats</h1>\n<table>\n<tr><th class=\"l\">Trace</th><td class=\"l\">");
	html_text(name);
	printf(" (pid %" PRIu32 ")</td></tr>\n", r->pid);
	printf("<tr><th class=\"l\">Duration</th><td>%.3f ms</td></tr>\n",
	       s->duration_ms);
	if (s->has_alloc_ticks)
		printf("<tr><th class=\"l\">Total allocated</th><td>%.3f MB</td></tr>\n",
		       s->total_alloc_bytes / MB);
	else
		printf("<tr><th class=\"l\">Total allocated</th><td>unknown</td></tr>\n");
	printf("<tr><th class=\"l\">GCs</th><td>%zu (%u induced, %zu "
	       "incomplete)</td></tr>\n",
	       s->nr, s->rollup[0].induced, s->nr_incomplete);
	printf("<tr><th class=\"l\">Total pause</th><td>%.3f ms</td></tr>\n",
	       s->total_pause_ms);
	printf("<tr><th class=\"l\">Longest pause</th><td>%.3f ms</td></tr>\n",
	       s->max_pause_ms);
	printf("<tr><th class=\"l\">Time paused</th><td>%.2f %%</td></tr>\n",
	       s->pause_percent);
	printf("<tr><th class=\"l\">Largest heap</th><td>%.3f MB</td></tr>\n</table>\n",
	       s->max_peak_bytes / MB);

	printf(
	    "<h2>GC Rollup By Generation</h2>\n<table>\n<tr><th>Gen</th><th>Count</th>"
	    "<th>Max Pause ms</th><th>Mean Pause ms</th><th>Total Pause ms</th>"
	    "<th>Max Peak MB</th><th>Mean Peak MB</th><th>Mean After MB</th>"
	    "<th>Total Alloc MB</th><th>Total Promoted MB</th><th>Induced</th></tr>\n");
	for (k = 0; k < 4; k++) {
		const struct hs_gc_rollup *u = &s->rollup[k];

		printf("<tr><td class=\"l\">%s</td><td>%u</td>", gen_label(k), u->count);
		html_cell(u->max_pause_ms, 3);
		html_cell(u->mean_pause_ms, 3);
		html_cell(u->total_pause_ms, 3);
		html_cell(u->max_peak_bytes / MB, 3);
		html_cell(u->mean_peak_bytes / MB, 3);
		html_cell(u->mean_after_bytes / MB, 3);
		html_cell(u->total_alloc_bytes / MB, 3);
		html_cell(u->total_promoted_bytes / MB, 3);
		printf("<td>%u</td></tr>\n", u->induced);
	}
	printf("</table>\n");

	printf(
	    "<h2>GC Events by Time</h2>\n<table>\n<tr><th>Index</th><th>Pause Start "
	    "ms</th>"
	    "<th class=\"l\">Reason</th><th>Gen</th><th class=\"l\">Kind</th>"
	    "<th>Suspend ms</th><th>Pause ms</th><th>Gen0 Alloc MB</th><th>Peak MB</th>"
	    "<th>After MB</th><th>Promoted MB</th><th>Gen0 MB</th><th>Gen0 Surv %%</th>"
	    "<th>Gen1 MB</th><th>Gen1 Surv %%</th><th>Gen2 MB</th><th>Gen2 Surv %%</th>"
	    "<th>LOH MB</th><th>LOH Surv %%</th><th>POH MB</th><th>Pinned "
	    "Obj</th></tr>\n");
	for (i = 0; i < s->nr; i++) {
		const struct hs_gc_record *gc = &s->gcs[i];

		printf(
		    "<tr%s><td>%u</td><td>%.3f</td><td class=\"l\">%s</td><td>%u%c</td>"
		    "<td class=\"l\">%s</td>",
		    gc->complete ? "" : " class=\"inc\"", gc->index, gc->pause_start_ms,
		    hs_gc_reason_name(gc->reason, b1, sizeof(b1)), gc->generation,
		    hs_gc_kind_letter(gc->kind),
		    hs_gc_kind_name(gc->kind, b2, sizeof(b2)));
		html_cell(gc->suspend_ms, 3);
		html_cell(gc->pause_ms, 3);
		html_cell((double)gc->alloc_gen0 / MB, 3);
		html_cell(gc->peak_bytes / MB, 3);
		html_cell(gc->after_bytes / MB, 3);
		html_cell(gc->promoted_bytes / MB, 3);
		for (g = 0; g < HS_GC__NR_GENS; g++) {
			html_cell(gc->has_heap_stats ? (double)gc->heap.gen_size[g] / MB
						     : NAN,
				  3);
			if (g != HS_GC_POH)
				html_cell(gc->survival[g], 1);
		}
		if (gc->has_heap_stats)
			printf("<td>%" PRIu32 "</td></tr>\n", gc->heap.pinned_objects);
		else
			printf("<td></td></tr>\n");
	}
	printf("</table>\n</body></html>\n");
}

int cmd_gcstats(int argc, char **argv)
{
	struct gcstats_cli cli = {.format = "text"};
	struct cli_input in;
	struct gc_read r;
	enum gc_format format;
	int n, ret, err = 0;

	n = cli_parse_options(&cli_gcstats_syntax, &cli, argc, argv, &ret);
	if (n < 0)
		return ret;
	if (!strcmp(cli.format, "text"))
		format = FORMAT_TEXT;
	else if (!strcmp(cli.format, "json"))
		format = FORMAT_JSON;
	else if (!strcmp(cli.format, "html"))
		format = FORMAT_HTML;
	else
		return cli_usage_error(
		    "gcstats", "unknown format '%s' (text, json or html)", cli.format);
	if (n != 1)
		return cli_usage_error("gcstats",
				       n == 0 ? "no trace file" : "too many arguments");
	ret = cli_input_open(argv[0], &in);
	if (ret)
		return ret;
	memset(&r, 0, sizeof(r));
	ret = read_trace(&in, &r);
	if (ret == HS_EXIT_OK) {
		if (format == FORMAT_JSON)
			err = json_out(in.name, &r);
		else if (format == FORMAT_HTML)
			html(in.name, &r);
		else
			text(in.name, &r);
		if (err || fflush(stdout) || ferror(stdout))
			ret = cli_fail("cannot write the GC stats");
	}
	hs_gc_stats_release(&r.st);
	cli_input_close(&in);
	return ret;
}
