/*
 * stats_chain - the stats of a process's images across exec() read as
 * one (stats_chain.h). Each image is one run of the stats' streamed pass
 * (stats.c), which hands back its alloc and leaks views; those are merged
 * as `report` merges the traces of a chain (exec_chain.c names the
 * process frame, source_merge.c appends), and the top lists and leaks
 * are taken from the merged views. The other numbers are each image's,
 * combined here. Owns nothing past its calls.
 */
#include "analysis/stats_chain.h"
#include "analysis/exec_chain.h"
#include "common/alloc.h"
#include "model/source_merge.h"
#include <errno.h>
#include <math.h>
#include <string.h>

/* Append timeline @part, shifted by @offset_ms, to @acc. */
static int timeline_append(struct hs_timeline *acc, const struct hs_timeline *part,
			   double offset_ms)
{
	double *ms, *bytes;
	size_t i;

	if (!part->n)
		return 0;
	ms = hs_realloc(acc->ms, (acc->n + part->n) * sizeof(*ms));
	if (ms)
		acc->ms = ms;
	bytes = hs_realloc(acc->bytes, (acc->n + part->n) * sizeof(*bytes));
	if (bytes)
		acc->bytes = bytes;
	if (!ms || !bytes)
		return -ENOMEM;
	for (i = 0; i < part->n; i++) {
		acc->ms[acc->n + i] = part->ms[i] + offset_ms;
		acc->bytes[acc->n + i] = part->bytes[i];
	}
	acc->n += part->n;
	return 0;
}

/*
 * @tl in at most @points points: @duration_ms cut in @points equal
 * stretches, each point a stretch's start and its highest value. The
 * images' timelines placed one after the other can go back in time (an
 * image's last points after the next one's start): a stretch is one
 * point however its values come.
 */
static int timeline_cut(struct hs_timeline *tl, double duration_ms, size_t points)
{
	struct hs_timeline out = {0};
	double width = duration_ms / (double)points;
	uint8_t *seen;
	size_t i, k;

	if (tl->n <= points)
		return 0;
	out.ms = hs_malloc(points * sizeof(*out.ms));
	out.bytes = hs_malloc(points * sizeof(*out.bytes));
	seen = hs_calloc(points, 1);
	if (!out.ms || !out.bytes || !seen) {
		hs_timeline_release(&out);
		hs_free(seen);
		return -ENOMEM;
	}
	/* each stretch's highest value, in out.bytes[stretch] */
	for (i = 0; i < tl->n; i++) {
		double at = width > 0 ? floor(tl->ms[i] / width) : 0;

		k = at <= 0 ? 0 : at >= (double)points ? points - 1 : (size_t)at;
		if (!seen[k] || tl->bytes[i] > out.bytes[k])
			out.bytes[k] = tl->bytes[i];
		seen[k] = 1;
	}
	/* the stretches with a value, in time order */
	for (k = 0; k < points; k++) {
		if (!seen[k])
			continue;
		out.ms[out.n] = (double)k * width;
		out.bytes[out.n] = out.bytes[k];
		out.n++;
	}
	hs_free(seen);
	hs_timeline_release(tl);
	*tl = out;
	return 0;
}

static void hist_add(struct hs_size_bucket *acc, const struct hs_size_bucket *part)
{
	if (!part->count)
		return;
	if (!acc->count || part->min < acc->min)
		acc->min = part->min;
	if (!acc->count || part->max > acc->max)
		acc->max = part->max;
	acc->count += part->count;
	acc->bytes += part->bytes;
}

void hs_heap_stats_chain_init(struct hs_heap_stats *acc)
{
	memset(acc, 0, sizeof(*acc));
	acc->peak_heap_ms = acc->peak_rss_ms = -1;
	acc->symbolized = 1;
}

int hs_heap_stats_chain_add(struct hs_heap_stats *acc, struct hs_heap_stats *part,
			    double offset_ms)
{
	struct hs_top_list swap;
	unsigned k;

	if (part->duration_ms + offset_ms > acc->duration_ms)
		acc->duration_ms = part->duration_ms + offset_ms;
	acc->allocations += part->allocations;
	acc->frees += part->frees;
	acc->reallocs += part->reallocs;
	acc->bytes_allocated += part->bytes_allocated;
	if (part->peak_heap_ms >= 0 &&
	    (acc->peak_heap_ms < 0 || part->peak_heap_bytes > acc->peak_heap_bytes)) {
		acc->peak_heap_bytes = part->peak_heap_bytes;
		acc->peak_heap_ms = part->peak_heap_ms + offset_ms;
		swap = acc->at_peak;
		acc->at_peak = part->at_peak;
		part->at_peak = swap;
	}
	if (part->peak_rss_ms >= 0 &&
	    (acc->peak_rss_ms < 0 || part->peak_rss_bytes > acc->peak_rss_bytes)) {
		acc->peak_rss_bytes = part->peak_rss_bytes;
		acc->peak_rss_ms = part->peak_rss_ms + offset_ms;
	}
	acc->leaked_bytes += part->leaked_bytes;
	acc->leaked_blocks += part->leaked_blocks;
	acc->suppressed_bytes += part->suppressed_bytes;
	acc->suppressed_blocks += part->suppressed_blocks;
	acc->temporary_allocations += part->temporary_allocations;
	acc->temporary_bytes += part->temporary_bytes;
	acc->unmatched_frees += part->unmatched_frees;
	acc->mmaps += part->mmaps;
	acc->munmaps += part->munmaps;
	acc->cpu_samples += part->cpu_samples;
	acc->cpu_ms += part->cpu_ms;
	acc->wall_samples += part->wall_samples;
	acc->wall_cpu_ms += part->wall_cpu_ms;
	acc->wall_blocked_ms += part->wall_blocked_ms;
	acc->wall_ready_ms += part->wall_ready_ms;
	acc->threads += part->threads;
	acc->events += part->events;
	acc->lost += part->lost;
	acc->cut_off |= part->cut_off;
	acc->symbolized = acc->symbolized && part->symbolized;
	if (part->sampled && !acc->sampled) {
		acc->sampled = 1;
		acc->sample_bytes = part->sample_bytes;
	}
	for (k = 0; k < sizeof(acc->hist) / sizeof(acc->hist[0]); k++)
		hist_add(&acc->hist[k], &part->hist[k]);
	if (timeline_append(&acc->heap, &part->heap, offset_ms) ||
	    timeline_append(&acc->rss, &part->rss, offset_ms))
		return -ENOMEM;
	return 0;
}

int hs_heap_stats_chain_finish(struct hs_heap_stats *acc, size_t points)
{
	if (!points)
		points = 200;
	acc->allocations_per_second =
	    acc->duration_ms > 0 ? acc->allocations / (acc->duration_ms / 1000) : 0;
	if (timeline_cut(&acc->heap, acc->duration_ms, points) ||
	    timeline_cut(&acc->rss, acc->duration_ms, points))
		return -ENOMEM;
	return 0;
}

/* Append image view @one to @all, under @process when not NULL. */
static int append(struct hs_stack_source *all, const struct hs_stack_source *one,
		  const char *process)
{
	return process ? hs_source_append_as(all, one, process)
		       : hs_source_append(all, one, NULL);
}

/*
 * The lists and leaks of @s from the merged views @alloc and @leaks (with
 * the first image's default settings, as report has them).
 */
static int from_views(struct hs_stack_source *alloc, struct hs_stack_source *leaks,
		      size_t n, struct hs_heap_stats *s, struct hs_diag *diag)
{
	struct hs_leak_totals lt;
	int err;

	hs_heap_top_release(&s->by_bytes);
	hs_heap_top_release(&s->by_count);
	hs_heap_top_release(&s->by_leaked);
	err = hs_heap_top(alloc, n, &s->by_bytes, &s->by_count, diag);
	if (!err)
		err = hs_heap_leaks(leaks, n, &s->by_leaked, &lt, diag);
	if (err)
		return err;
	hs_source_totals(alloc, &s->bytes_allocated, &s->allocations);
	s->leaked_bytes = lt.bytes;
	s->leaked_blocks = lt.blocks;
	s->suppressed_bytes = lt.suppressed_bytes;
	s->suppressed_blocks = lt.suppressed_blocks;
	return 0;
}

int hs_heap_stats_chain_path(const char *const *paths, size_t n,
			     const struct hs_stats_opts *o, struct hs_trace *traces,
			     uint64_t *events, struct hs_heap_stats *s,
			     struct hs_diag *diag)
{
	struct hs_stack_source alloc, leaks, one_alloc, one_leaks;
	struct hs_stats_opts each = *o;
	char **process = hs_calloc(n ? n : 1, sizeof(*process));
	size_t i, done = 0;
	int err = process ? 0 : -ENOMEM;

	hs_heap_stats_chain_init(s);
	memset(traces, 0, n * sizeof(*traces));
	hs_source_init(&alloc);
	hs_source_init(&leaks);
	hs_source_init(&one_alloc);
	hs_source_init(&one_leaks);
	each.keep_alloc = &one_alloc;
	each.keep_leaks = &one_leaks;
	if (!err)
		err = hs_exec_chain_frames(paths, n, process);
	for (i = 0; !err && i < n; i++) {
		struct hs_heap_stats part;
		double offset_ms = 0;

		err =
		    hs_heap_stats_compute_path(paths[i], &each, &traces[i], &part, diag);
		if (err)
			break;
		done = i + 1;
		if (events)
			events[i] = part.events;
		if (traces[i].info.start_realtime_ns > traces[0].info.start_realtime_ns)
			offset_ms = (double)(traces[i].info.start_realtime_ns -
					     traces[0].info.start_realtime_ns) /
				    1e6;
		err = hs_heap_stats_chain_add(s, &part, offset_ms);
		hs_heap_stats_release(&part);
		if (!err)
			err = append(&alloc, &one_alloc, process[i]);
		if (!err)
			err = append(&leaks, &one_leaks, process[i]);
		if (!err && i == 0) {
			/* the first file's default settings, as report's */
			alloc.defaults = one_alloc.defaults;
			memset(&one_alloc.defaults, 0, sizeof(one_alloc.defaults));
			leaks.defaults = one_leaks.defaults;
			memset(&one_leaks.defaults, 0, sizeof(one_leaks.defaults));
		}
		hs_source_release(&one_alloc);
		hs_source_release(&one_leaks);
		hs_source_init(&one_alloc);
		hs_source_init(&one_leaks);
	}
	if (!err)
		err = from_views(&alloc, &leaks, o->top ? o->top : 10, s, diag);
	if (!err)
		err = hs_heap_stats_chain_finish(s, o->points);
	if (err == -ENOMEM && !diag->set)
		hs_diag_set(diag, 0, "out of memory");
	if (process)
		hs_exec_chain_release(process, n);
	hs_free(process);
	hs_source_release(&alloc);
	hs_source_release(&leaks);
	if (err) {
		hs_heap_stats_release(s);
		for (i = 0; i < done; i++)
			hs_trace_release(&traces[i]);
	}
	return err;
}
