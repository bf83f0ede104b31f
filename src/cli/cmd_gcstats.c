/*
 * cmd_gcstats - `heapscope gcstats FILE`: PerfView's GCStats report of a
 * .nettrace (plain or zipped): the summary, "GC Rollup By Generation" and
 * "GC Events by Time", as text, JSON or one self-contained HTML page.
 * The numbers come from dotnet/gc_stats.c; this file reads the file into
 * it and prints. Sizes are in MB of 1,000,000 bytes, as in PerfView.
 */
#include "cli/cli.h"
#include "common/diag.h"
#include "common/log.h"
#include "dotnet/gc_stats.h"
#include "dotnet/nettrace.h"
#include "io/zipfile.h"
#include <errno.h>
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

/* What was read besides the GCs. */
struct gc_read {
	struct hs_gc_stats st;
	uint32_t pid;
	int have_header;
};

static int on_header(void *ctx, const struct hs_nettrace_header *h)
{
	struct gc_read *r = ctx;

	r->pid = h->pid;
	r->have_header = 1;
	hs_gc_stats_header(&r->st, h);
	return 0;
}

static int on_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct gc_read *r = ctx;

	return hs_gc_stats_event(&r->st, ev);
}

/* Whether @path starts as a zip or as a nettrace stream: 'z', 'n' or 0. */
static int sniff(const char *path)
{
	unsigned char head[8];
	size_t n = 0;
	FILE *f = fopen(path, "rb");

	if (!f)
		return -1;
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (n >= 4 && !memcmp(head, "PK\3\4", 4))
		return 'z';
	return hs_nettrace_sniff(head, n) ? 'n' : 0;
}

/* Read @in into @r; the exit status (after printing why on failure). */
static int read_trace(const struct cli_input *in, struct gc_read *r)
{
	struct hs_nettrace_ops ops = { .ctx = r, .header = on_header, .event = on_event };
	struct hs_diag diag = HS_DIAG_INIT(in->name);
	struct hs_nettrace_stats ns;
	char msg[1024];
	FILE *f;
	int kind = sniff(in->path), err;

	if (kind < 0)
		return cli_fail("%s: %s", in->name, strerror(errno));
	if (!kind)
		return cli_fail("gcstats reads .nettrace files (EventPipe traces of .NET "
				"programs, plain or zipped); %s is not one", in->name);
	f = kind == 'z' ? hs_zip_open_entry(in->path, ".nettrace", NULL, &diag) :
	    fopen(in->path, "rb");
	if (!f) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "%s", strerror(errno));
		return cli_fail("gcstats reads .nettrace files; %s",
				hs_diag_format(&diag, msg, sizeof(msg)));
	}
	err = hs_nettrace_read(f, &ops, &ns, &diag);
	fclose(f);
	if (!err && !r->have_header) {
		hs_diag_set_offset(&diag, ns.bytes, "the trace ends before its Trace object");
		err = -EINVAL;
	}
	if (err) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "%s", strerror(-err));
		return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
	}
	if (ns.truncated)
		pr_warn("%s: cut off at offset %" PRIu64 "; the GCs before it are kept, "
			"the last may be incomplete", in->name, ns.truncated_at);
	if (ns.nr_lost)
		pr_warn("%s: the runtime dropped %" PRIu64 " event%s; some GCs may be "
			"incomplete", in->name, ns.nr_lost, ns.nr_lost == 1 ? "" : "s");
	hs_gc_stats_finish(&r->st);
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
	static const char *const labels[] = { "ALL", "0", "1", "2" };

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
		printf("total allocated:    unknown (no AllocationTick events: record the GC "
		       "keyword at level Verbose)\n");
	printf("GCs:                %zu (%u induced", s->nr, s->rollup[0].induced);
	if (s->nr_incomplete)
		printf(", %zu incomplete", s->nr_incomplete);
	printf(")\n");
	printf("total pause:        %.3f ms\n", s->total_pause_ms);
	printf("longest pause:      %.3f ms\n", s->max_pause_ms);
	printf("time paused:        %.2f %%\n", s->pause_percent);
	printf("largest heap:       %.3f MB\n", s->max_peak_bytes / MB);

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

		snprintf(gen, sizeof(gen), "%u%c", gc->generation, hs_gc_kind_letter(gc->kind));
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
			cell(gc->has_heap_stats ? (double)gc->heap.gen_size[g] / MB : NAN, 9, 3);
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

/* ---- JSON ---- */

/* A number, or null when unknown. */
static json_t *jnum(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *summary_json(const char *name, const struct gc_read *r)
{
	const struct hs_gc_stats *s = &r->st;

	return json_pack("{s:s, s:I, s:o, s:o, s:o, s:I, s:I, s:I, s:o, s:o, s:o, s:o}",
			 "trace", name, "pid", (json_int_t)r->pid,
			 "duration_ms", jnum(s->duration_ms),
			 "total_allocated_mb",
			 s->has_alloc_ticks ? jnum(s->total_alloc_bytes / MB) : json_null(),
			 "total_allocated_bytes",
			 s->has_alloc_ticks ? jnum(s->total_alloc_bytes) : json_null(),
			 "gc_count", (json_int_t)s->nr,
			 "induced", (json_int_t)s->rollup[0].induced,
			 "incomplete", (json_int_t)s->nr_incomplete,
			 "total_pause_ms", jnum(s->total_pause_ms),
			 "max_pause_ms", jnum(s->max_pause_ms),
			 "pause_percent", jnum(s->pause_percent),
			 "max_heap_mb", jnum(s->max_peak_bytes / MB));
}

static json_t *rollup_json(const struct hs_gc_rollup *u, int k)
{
	return json_pack("{s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "gen", gen_label(k), "count", (json_int_t)u->count,
			 "induced", (json_int_t)u->induced,
			 "max_pause_ms", jnum(u->max_pause_ms),
			 "mean_pause_ms", jnum(u->mean_pause_ms),
			 "total_pause_ms", jnum(u->total_pause_ms),
			 "max_peak_mb", jnum(u->max_peak_bytes / MB),
			 "mean_peak_mb", jnum(u->mean_peak_bytes / MB),
			 "mean_after_mb", jnum(u->mean_after_bytes / MB),
			 "total_alloc_mb", jnum(u->total_alloc_bytes / MB),
			 "total_promoted_mb", jnum(u->total_promoted_bytes / MB));
}

static json_t *gc_json(const struct hs_gc_record *gc)
{
	static const char *const names[HS_GC__NR_GENS] = { "gen0", "gen1", "gen2", "loh", "poh" };
	char b1[32], b2[32];
	json_t *o, *gens;
	int g;

	gens = json_object();
	for (g = 0; gens && g < HS_GC__NR_GENS; g++)
		json_object_set_new(gens, names[g], json_pack(
			"{s:o, s:o, s:o}",
			"size_mb", gc->has_heap_stats ? jnum((double)gc->heap.gen_size[g] / MB) :
				   json_null(),
			"promoted_mb", gc->has_heap_stats ?
				       jnum((double)gc->heap.promoted[g] / MB) : json_null(),
			"survival_percent", jnum(gc->survival[g])));
	o = json_pack("{s:I, s:I, s:o, s:o, s:s, s:I, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o,"
		      " s:o, s:o, s:o, s:o, s:b}",
		      "index", (json_int_t)gc->index, "number", (json_int_t)gc->number,
		      "pause_start_ms", jnum(gc->pause_start_ms),
		      "start_ms", jnum(gc->start_ms),
		      "reason", hs_gc_reason_name(gc->reason, b1, sizeof(b1)),
		      "reason_id", (json_int_t)gc->reason,
		      "generation", (json_int_t)gc->generation,
		      "kind", hs_gc_kind_name(gc->kind, b2, sizeof(b2)),
		      "suspend_ms", jnum(gc->suspend_ms),
		      "pause_ms", jnum(gc->pause_ms),
		      "duration_ms", jnum(gc->duration_ms),
		      "gen0_alloc_mb", jnum((double)gc->alloc_gen0 / MB),
		      "large_alloc_mb", jnum((double)gc->alloc_large / MB),
		      "peak_mb", jnum(gc->peak_bytes / MB),
		      "after_mb", jnum(gc->after_bytes / MB),
		      "promoted_mb", jnum(gc->promoted_bytes / MB),
		      "generations", gens ? gens : json_null(),
		      "pinned_objects", gc->has_heap_stats ?
					json_integer(gc->heap.pinned_objects) : json_null(),
		      "complete", gc->complete);
	return o;
}

static int json_out(const char *name, const struct gc_read *r)
{
	json_t *out = json_object(), *roll = json_array(), *gcs = json_array();
	size_t i;
	int k, err;

	err = !out || !roll || !gcs;
	for (k = 0; !err && k < 4; k++)
		err = json_array_append_new(roll, rollup_json(&r->st.rollup[k], k));
	for (i = 0; !err && i < r->st.nr; i++)
		err = json_array_append_new(gcs, gc_json(&r->st.gcs[i]));
	err = err || json_object_set_new(out, "summary", summary_json(name, r)) ||
	      json_object_set(out, "rollup", roll) || json_object_set(out, "gcs", gcs) ||
	      json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
	      putchar('\n') == EOF;
	json_decref(roll);
	json_decref(gcs);
	json_decref(out);
	return err;
}

/* ---- HTML ---- */

static void html_text(const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", stdout); break;
		case '>': fputs("&gt;", stdout); break;
		case '&': fputs("&amp;", stdout); break;
		case '"': fputs("&quot;", stdout); break;
		default: putchar(*s);
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
	printf("</title>\n<style>\nbody{font-family:sans-serif;font-size:13px;margin:1em}\n"
	       "table{border-collapse:collapse;margin-bottom:1.5em}\n"
	       "th,td{border:1px solid #bbb;padding:2px 6px;text-align:right}\n"
	       "th{background:#eef;position:sticky;top:0}\n"
	       "td.l,th.l{text-align:left}\ntr.inc td{color:#a00}\n</style></head><body>\n");
	printf("<h1>GCStats</h1>\n<table>\n<tr><th class=\"l\">Trace</th><td class=\"l\">");
	html_text(name);
	printf(" (pid %" PRIu32 ")</td></tr>\n", r->pid);
	printf("<tr><th class=\"l\">Duration</th><td>%.3f ms</td></tr>\n", s->duration_ms);
	if (s->has_alloc_ticks)
		printf("<tr><th class=\"l\">Total allocated</th><td>%.3f MB</td></tr>\n",
		       s->total_alloc_bytes / MB);
	else
		printf("<tr><th class=\"l\">Total allocated</th><td>unknown</td></tr>\n");
	printf("<tr><th class=\"l\">GCs</th><td>%zu (%u induced, %zu incomplete)</td></tr>\n",
	       s->nr, s->rollup[0].induced, s->nr_incomplete);
	printf("<tr><th class=\"l\">Total pause</th><td>%.3f ms</td></tr>\n", s->total_pause_ms);
	printf("<tr><th class=\"l\">Longest pause</th><td>%.3f ms</td></tr>\n", s->max_pause_ms);
	printf("<tr><th class=\"l\">Time paused</th><td>%.2f %%</td></tr>\n", s->pause_percent);
	printf("<tr><th class=\"l\">Largest heap</th><td>%.3f MB</td></tr>\n</table>\n",
	       s->max_peak_bytes / MB);

	printf("<h2>GC Rollup By Generation</h2>\n<table>\n<tr><th>Gen</th><th>Count</th>"
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

	printf("<h2>GC Events by Time</h2>\n<table>\n<tr><th>Index</th><th>Pause Start ms</th>"
	       "<th class=\"l\">Reason</th><th>Gen</th><th class=\"l\">Kind</th>"
	       "<th>Suspend ms</th><th>Pause ms</th><th>Gen0 Alloc MB</th><th>Peak MB</th>"
	       "<th>After MB</th><th>Promoted MB</th><th>Gen0 MB</th><th>Gen0 Surv %%</th>"
	       "<th>Gen1 MB</th><th>Gen1 Surv %%</th><th>Gen2 MB</th><th>Gen2 Surv %%</th>"
	       "<th>LOH MB</th><th>LOH Surv %%</th><th>POH MB</th><th>Pinned Obj</th></tr>\n");
	for (i = 0; i < s->nr; i++) {
		const struct hs_gc_record *gc = &s->gcs[i];

		printf("<tr%s><td>%u</td><td>%.3f</td><td class=\"l\">%s</td><td>%u%c</td>"
		       "<td class=\"l\">%s</td>", gc->complete ? "" : " class=\"inc\"",
		       gc->index, gc->pause_start_ms,
		       hs_gc_reason_name(gc->reason, b1, sizeof(b1)), gc->generation,
		       hs_gc_kind_letter(gc->kind), hs_gc_kind_name(gc->kind, b2, sizeof(b2)));
		html_cell(gc->suspend_ms, 3);
		html_cell(gc->pause_ms, 3);
		html_cell((double)gc->alloc_gen0 / MB, 3);
		html_cell(gc->peak_bytes / MB, 3);
		html_cell(gc->after_bytes / MB, 3);
		html_cell(gc->promoted_bytes / MB, 3);
		for (g = 0; g < HS_GC__NR_GENS; g++) {
			html_cell(gc->has_heap_stats ? (double)gc->heap.gen_size[g] / MB : NAN, 3);
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
	struct gcstats_cli cli = { .format = "text" };
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
		return cli_usage_error("gcstats", "unknown format '%s' (text, json or html)",
				       cli.format);
	if (n != 1)
		return cli_usage_error("gcstats", n == 0 ? "no trace file" :
				       "too many arguments");
	ret = cli_input_open(argv[0], &in);
	if (ret)
		return ret;
	memset(&r, 0, sizeof(r));
	hs_gc_stats_init(&r.st);
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
