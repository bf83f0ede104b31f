/*
 * run_summary - the end-of-run summary `heapscope run` prints on stderr
 * once the program exited: the heap line (allocations, frees, peaks,
 * leaks as `heapscope stats` counts them), CPU and wall-clock samples,
 * whether the trace was cut off, and where it was written. It reads the
 * finished trace through analysis/totals.h and analysis/stats.h and owns
 * nothing past the call; cmd_run.c decides when to call it.
 */
#include "analysis/stats.h"
#include "analysis/totals.h"
#include "cli/cli.h"
#include "cli/run_summary.h"
#include "format/trace_reader.h"
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

/*
 * What leaked, as `heapscope stats` counts it (hs_heap_leaks_path(), or
 * @have when not NULL): the known exit-time allocations of libc and
 * libstdc++ are left out and said apart. "" when it cannot be computed
 * (the reason is printed).
 */
static void leaked(const char *path, const struct hs_leak_totals *have, char *buf,
		   size_t n)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_leak_totals l;
	char a[32], b[32], c[32], msg[1024];
	int len;

	buf[0] = '\0';
	if (have) {
		l = *have;
	} else if (hs_heap_leaks_path(path, &l, &diag)) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "cannot compute the leaks");
		fprintf(stderr, "heapscope: %s\n",
			hs_diag_format(&diag, msg, sizeof(msg)));
		return;
	}
	cli_human_bytes(l.bytes, a, sizeof(a));
	cli_count(l.blocks, b, sizeof(b));
	len = snprintf(buf, n, ", leaked %s in %s block%s", a, b, cli_s(l.blocks));
	if (l.suppressed_blocks > 0 && len > 0 && (size_t)len < n) {
		cli_human_bytes(l.suppressed_bytes, c, sizeof(c));
		snprintf(buf + len, n - (size_t)len,
			 " (%s more in known exit-time allocations)", c);
	}
}

/* The end summary's heap line: counts, peaks, leaks (docs/memory.md). */
static void summarize_heap(const char *path, const struct hs_trace *t,
			   const struct hs_heap_totals *s, const struct hs_leak_totals *l)
{
	char a[32], b[32], c[32], leaks[160];

	if (t->has_end && t->end_reason == HS_END_EXEC)
		snprintf(leaks, sizeof(leaks), ", no leaks (its exec freed the heap)");
	else
		leaked(path, l, leaks, sizeof(leaks));
	cli_human_bytes((double)s->bytes_allocated, a, sizeof(a));
	cli_human_bytes((double)s->peak_heap, b, sizeof(b));
	if (s->peak_rss)
		cli_human_bytes((double)s->peak_rss, c, sizeof(c));
	else
		snprintf(c, sizeof(c), "not sampled");
	fprintf(stderr,
		"heapscope: %" PRIu64 " allocation%s (%s), %" PRIu64
		" free%s, peak heap %s, peak RSS %s%s\n",
		s->allocs, cli_s((double)s->allocs), a, s->frees, cli_s((double)s->frees),
		b, c, leaks);
	if (t->info.sample_bytes)
		fprintf(stderr,
			"heapscope: sampled one allocation per %" PRIu64
			" bytes on average: counts and bytes above are of the samples, "
			"leaks are estimates\n",
			t->info.sample_bytes);
}

/*
 * The end summary: the trace's totals (analysis/totals.h), as `heapscope
 * stats` and `dump --summary` give them, and stats's leaks
 * (docs/memory.md). A --no-heap trace (its SAMPLING record's flags bit
 * 0) has no heap line of zeros, only its peak RSS. @exited: the program
 * ended by exit, so a trace cut short was cut by a failed write, not by
 * the program's end.
 */
void cli_run_summarize_as(const char *path, const char *shown, int exited)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_heap_totals tot, *s = &tot;
	struct hs_trace_sampling sampling;
	struct hs_leak_totals l, *have = &l;
	struct hs_trace t;
	struct stat sb;
	char a[32], msg[1024];

	/* the totals and the leaks in one pass; each in its own if that fails */
	if (hs_heap_summary_path(path, &t, &tot, &l, &diag)) {
		have = NULL;
		diag = (struct hs_diag)HS_DIAG_INIT(path);
	}
	if (!have && hs_heap_totals_path(path, &t, &tot, &diag)) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "cannot read the trace");
		fprintf(stderr, "heapscope: %s\n",
			hs_diag_format(&diag, msg, sizeof(msg)));
		return;
	}
	if (hs_trace_peek_sampling(path, &sampling, &diag) != 1 ||
	    !(sampling.flags & 1)) {
		summarize_heap(path, &t, s, have);
	} else if (s->peak_rss) {
		cli_human_bytes((double)s->peak_rss, a, sizeof(a));
		fprintf(stderr, "heapscope: heap not recorded (--no-heap), peak RSS %s\n",
			a);
	}
	if (s->cpu_samples || s->wall_samples)
		fprintf(stderr,
			"heapscope: %" PRIu64 " CPU sample%s (%.1f ms of CPU), "
			"%" PRIu64 " wall-clock sample%s: heapscope report --source "
			"%s %s\n",
			s->cpu_samples, cli_s((double)s->cpu_samples),
			(double)s->cpu_ns / 1e6, s->wall_samples,
			cli_s((double)s->wall_samples), s->cpu_samples ? "cpu" : "wall",
			shown);
	if (t.cut_off && exited)
		fprintf(stderr,
			"heapscope: the trace was cut off although the program "
			"finished: the collector could not write all of it (a full disk, "
			"or a file size limit?): %" PRIu64 " event%s recovered\n",
			s->events, cli_s((double)s->events));
	else if (t.cut_off)
		fprintf(stderr,
			"heapscope: the trace was cut off (the program did not "
			"finish): %" PRIu64 " event%s recovered\n",
			s->events, cli_s((double)s->events));
	if (t.has_footer && t.footer[HS_FC_LOST])
		fprintf(stderr,
			"heapscope: warning: the collector could not record %" PRIu64
			" event%s (out of memory for a thread, or its writer had "
			"stopped): the counts above miss them\n",
			t.footer[HS_FC_LOST], cli_s((double)t.footer[HS_FC_LOST]));
	hs_trace_release(&t);
	if (!stat(shown, &sb))
		cli_human_bytes((double)sb.st_size, a, sizeof(a));
	else
		snprintf(a, sizeof(a), "?");
	fprintf(stderr,
		"heapscope: trace written to %s (%s); look at it with: "
		"heapscope report %s\n",
		shown, a, shown);
}

void cli_run_summarize(const char *path, int exited)
{
	cli_run_summarize_as(path, path, exited);
}
