/*
 * run_summary - the end-of-run summary `heapscope run` prints on stderr
 * once the program exited: the heap line (allocations, frees, peaks,
 * leaks as `heapscope stats` counts them), CPU and wall-clock samples,
 * whether the trace was cut off, and where it was written. It reads the
 * finished trace through analysis/totals.h and analysis/stats.h;
 * cmd_run.c decides when to call it.
 *
 * The summary's pass (struct cli_run_pass) can also read the events
 * while `run`'s symbolizer works on the same file: the pass needs the
 * names only at its end (the leaks' known exit-time allocations), so it
 * streams the data chunks as they were when it opened the file, lets
 * the symbolizer append its section only then, and takes the section
 * once the symbolizer has finished. The pass is the caller's until
 * cli_run_summarize_pass() prints and frees it.
 */
#include "analysis/stats.h"
#include "analysis/totals.h"
#include "cli/cli.h"
#include "cli/run_summary.h"
#include "common/alloc.h"
#include "common/log.h"
#include "format/trace_reader.h"
#include "format/trace_symbols.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
 * The end summary's lines of trace @t, read from @path: its totals @s
 * and, when @have is not NULL, its leaks (else they are read again).
 */
static void summarize_read(const char *path, const char *shown, int exited,
			   const struct hs_trace *t, const struct hs_heap_totals *s,
			   const struct hs_leak_totals *have)
{
	struct stat sb;
	char a[32];

	/* (the pass read the SAMPLING record: no second reader for it) */
	if (!t->sampling.present || !(t->sampling.flags & 1)) {
		summarize_heap(path, t, s, have);
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
	if (t->cut_off && exited)
		fprintf(stderr,
			"heapscope: the trace was cut off although the program "
			"finished: the collector could not write all of it (a full disk, "
			"or a file size limit?): %" PRIu64 " event%s recovered\n",
			s->events, cli_s((double)s->events));
	else if (t->cut_off)
		fprintf(stderr,
			"heapscope: the trace was cut off (the program did not "
			"finish): %" PRIu64 " event%s recovered\n",
			s->events, cli_s((double)s->events));
	if (t->has_footer && t->footer[HS_FC_LOST])
		fprintf(stderr,
			"heapscope: warning: the collector could not record %" PRIu64
			" event%s (out of memory for a thread, or its writer had "
			"stopped): the counts above miss them\n",
			t->footer[HS_FC_LOST], cli_s((double)t->footer[HS_FC_LOST]));
	if (!stat(shown, &sb))
		cli_human_bytes((double)sb.st_size, a, sizeof(a));
	else
		snprintf(a, sizeof(a), "?");
	fprintf(stderr,
		"heapscope: trace written to %s (%s); look at it with: "
		"heapscope report %s\n",
		shown, a, shown);
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
	struct hs_heap_totals tot;
	struct hs_leak_totals l, *have = &l;
	struct hs_trace t;
	char msg[1024];

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
	summarize_read(path, shown, exited, &t, &tot, have);
	hs_trace_release(&t);
}

void cli_run_summarize(const char *path, int exited)
{
	cli_run_summarize_as(path, path, exited);
}

/* --- the pass beside the symbolizer ---------------------------------------- */

/*
 * hs_heap_summary_path()'s pass (analysis/stats.h), cut in two: the
 * events, then, once the symbol section is in @t, the leaks.
 */
struct cli_run_pass {
	const char *path;
	int go_fd;  /* closed once the file is open: the symbolizer's turn */
	int again;  /* the stream gave up: the events are loaded at the end */
	int failed; /* the summary reads the trace afresh */
	struct hs_trace t;
	struct hs_heap_totals tot;
	struct hs_leak_totals leaks;
	struct hs_heap_summary_pass *pass;
};

/* The symbolizer may write: the pass reads no further than it has seen. */
static void let_go(struct cli_run_pass *p)
{
	if (p->go_fd >= 0)
		close(p->go_fd);
	p->go_fd = -1;
}

/* let_go() as the summary pass's first-batch callback */
static void let_go_first(void *arg)
{
	let_go(arg);
}

struct cli_run_pass *cli_run_pass_start(const char *path, int go_fd)
{
	struct cli_run_pass *p = hs_calloc(1, sizeof(*p));
	struct hs_trace_sink sink;
	struct hs_diag diag = HS_DIAG_INIT(path);
	int err;

	if (!p) {
		close(go_fd);
		return NULL;
	}
	p->path = path;
	p->go_fd = go_fd;
	err = hs_heap_summary_begin(&p->t, &p->tot, let_go_first, p, &p->pass, &sink);
	if (!err)
		err = hs_trace_stream(path, &p->t, &sink, &diag);
	let_go(p);
	if (err == -EAGAIN) {
		/* loaded at the end, once the symbolizer has written its section */
		hs_log(HS_LOG_DEBUG, "run: the summary's events are loaded after "
				     "the symbols: not in time order");
		hs_heap_summary_free(p->pass);
		p->pass = NULL;
		p->again = 1;
	} else if (err) {
		hs_heap_summary_free(p->pass);
		p->pass = NULL;
		p->failed = 1;
	}
	return p;
}

/*
 * The pass's end, once the symbolizer is done: the section it wrote into
 * the trace read; or the events loaded, when they could not be streamed.
 */
static int pass_end(struct cli_run_pass *p, struct hs_diag *diag)
{
	int err;

	if (p->again)
		err = hs_heap_summary_load(p->path, &p->t, &p->tot, &p->pass, diag);
	else
		err = hs_trace_syms_read(&p->t, p->path, diag);
	if (!err)
		err = hs_heap_summary_finish(p->pass, &p->leaks, diag);
	if (err)
		hs_trace_release(&p->t);
	return err;
}

void cli_run_summarize_pass(const char *path, const char *shown, int exited,
			    struct cli_run_pass *p)
{
	struct hs_diag diag = HS_DIAG_INIT(path);

	if (p && !p->failed && !strcmp(p->path, path) && !pass_end(p, &diag)) {
		hs_log(HS_LOG_DEBUG, "run: the summary read the events while the "
				     "trace was symbolized");
		summarize_read(path, shown, exited, &p->t, &p->tot, &p->leaks);
		hs_trace_release(&p->t);
	} else {
		if (p && diag.set)
			hs_log(HS_LOG_DEBUG, "run: the summary reads the trace again");
		cli_run_summarize_as(path, shown, exited);
	}
	cli_run_pass_free(p);
}

int cli_run_pass_ended_by_exec(const struct cli_run_pass *p)
{
	if (!p || p->failed || p->again)
		return -1;
	return p->t.has_end && p->t.end_reason == HS_END_EXEC;
}

void cli_run_pass_free(struct cli_run_pass *p)
{
	if (!p)
		return;
	let_go(p);
	hs_heap_summary_free(p->pass);
	hs_trace_release(&p->t); /* (released already, or never read: a no-op) */
	hs_free(p);
}
