/*
 * routes_sources - what the files hold (docs/json-api.md): /api/info (the
 * traces, their sources, saved text boxes, presets), /api/stats (numbers
 * about a source and, for a heap trace, `heapscope stats`) and
 * /api/overweight (two sources compared).
 */
#include "analysis/memviews.h"
#include "analysis/overweight.h"
#include "analysis/presets.h"
#include "analysis/stats.h"
#include "server/routes.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The saved text boxes of a source (null where absent). */
static json_t *defaults_json(const struct hs_source_defaults *df)
{
	return json_pack(
	    "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "start",
	    hs_view_json_text(df->start), "end", hs_view_json_text(df->end), "group",
	    hs_view_json_text(df->group), "fold", hs_view_json_text(df->fold), "fold_pct",
	    hs_view_json_text(df->fold_pct), "inc", hs_view_json_text(df->inc), "exc",
	    hs_view_json_text(df->exc), "notes", hs_view_json_text(df->notes));
}

static json_t *trace_json(const struct hs_app_trace *t, size_t id)
{
	const struct hs_stack_source *s = &t->sources[0].src;
	json_t *o, *srcs = json_array();
	double metric, count;
	int64_t first, last;
	size_t k;

	/* sources not read yet have no numbers and no defaults (null) */
	for (k = 0; srcs && k < t->nr_sources; k++) {
		const struct hs_app_source *as = &t->sources[k];
		json_int_t n = (json_int_t)as->src.nr_samples;
		json_t *x = json_pack(
		    "{s:o, s:o, s:b, s:o?, s:o?}", "name", hs_view_json_text(as->name),
		    "summary", hs_view_json_text(as->summary), "loaded", as->loaded,
		    "samples", as->loaded ? json_integer(n) : NULL, "defaults",
		    as->loaded ? defaults_json(&as->src.defaults) : NULL);

		if (json_array_append_new(srcs, x)) {
			json_decref(srcs);
			srcs = NULL;
		}
	}
	hs_source_totals(s, &metric, &count);
	hs_source_time_range(s, &first, &last);
	o = json_pack("{s:I, s:o, s:o, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:b,"
		      " s:o, s:o}",
		      "id", (json_int_t)id, "name", hs_view_json_text(t->name), "format",
		      hs_view_json_text(t->format), "samples", (json_int_t)s->nr_samples,
		      "frames", (json_int_t)hs_source_nr_frames(s), "stacks",
		      (json_int_t)s->nr_stacks, "metric", metric, "count", count,
		      "first_ms", hs__ms(first), "last_ms", hs__ms(last), "unit",
		      hs_view_json_text(s->metric_unit), "time_metric",
		      s->kind == HS_METRIC_TIME, "sources", srcs, "defaults",
		      defaults_json(&s->defaults));
	if (o &&
	    json_object_set_new(
		o, "heap", json_boolean(hs_format_has(t->fmt, HS_FORMAT_HAS_HEAP)))) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

int hs__api_info(struct hs_route_ctx *c)
{
	struct hs_app *a = c->app;
	json_t *o = json_object(), *traces = json_array(), *presets = json_array(), *t;
	size_t i;
	int err = !o || !traces || !presets;

	/* which sources are loaded changes under other requests */
	pthread_mutex_lock(&a->lock);
	for (i = 0; !err && i < a->nr_traces; i++)
		err = json_array_append_new(traces, trace_json(&a->traces[i], i));
	pthread_mutex_unlock(&a->lock);
	for (i = 0; !err && i < hs_presets_count(); i++) {
		const struct hs_preset *p = hs_presets_get(i);
		char *text = NULL;

		if (!p->needs_exe_dir && hs_preset_group_text(p, NULL, &text)) {
			err = 1;
			break;
		}
		t = json_pack("{s:s, s:s?, s:s, s:s, s:s, s:b, s:s}", "name", p->name,
			      "group", text, "fold", p->fold, "fold_pct", p->fold_pct,
			      "comment", p->comment, "needs_exe_dir", p->needs_exe_dir,
			      "exc", p->exc ? p->exc : "");
		hs_free(text);
		err = !t || json_array_append_new(presets, t);
	}
	if (!err)
		err = json_object_set_new(o, "version", json_string(HS_VERSION)) ||
		      json_object_set(o, "traces", traces) ||
		      json_object_set(o, "presets", presets) ||
		      json_object_set_new(o, "default_group",
					  json_string(HS_PRESET_DEFAULT_GROUP)) ||
		      json_object_set_new(o, "ignore_pid_tid",
					  json_string(HS_PRESET_IGNORE_PID_TID)) ||
		      json_object_set_new(o, "overweight", json_true()) ||
		      json_object_set_new(o, "source_lines", json_true());
	json_decref(traces);
	json_decref(presets);
	if (err) {
		json_decref(o);
		o = NULL;
	}
	return hs__reply_json(c->resp, o, COMPACT);
}

/* Exactly `heapscope report --format json` for the same parameters. */

/* The stats of the heap trace behind @s (computed once per trace), or NULL. */
static json_t *heap_stats(struct hs_route_ctx *c, const struct hs_api_src *s)
{
	struct hs_diag d = HS_DIAG_INIT(NULL);

	if (s->kind != HS_API_SRC_TRACE)
		return NULL;
	return hs_app_heap_stats(c->app, s->trace, &d);
}

/*
 * Numbers about the query's source (with its saved text boxes) and what
 * the filter made of it; for a heap trace also its stats (`heapscope
 * stats --format json`) unless "heap" is false.
 */
int hs__api_stats(struct hs_route_ctx *c)
{
	const struct hs_calltree *ct;
	const struct hs_stack_source *s;
	double metric, count;
	int64_t first, last;
	uint32_t maxd = 0;
	size_t i, entries, hits, misses;
	json_t *o, *heap = NULL;
	int want_heap, err = hs__get_tree(c);

	if (!err)
		err = hs__get_bool(c, "heap", 1, &want_heap);
	if (err)
		return hs__reply_err(c, err, "");
	hs_cache_counts(&c->app->cache, &entries, &hits, &misses);
	ct = &c->tree->u.tree;
	s = c->src;
	hs_source_totals(s, &metric, &count);
	hs_source_time_range(s, &first, &last);
	for (i = 0; i < s->nr_stacks; i++)
		if (s->stack_depth[i] > maxd)
			maxd = s->stack_depth[i];
	o = json_pack(
	    "{s:{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:b, s:I, s:o},"
	    " s:{s:I, s:I, s:I, s:I, s:I, s:f, s:o?},"
	    " s:{s:I, s:I, s:I}}",
	    "source", "samples", (json_int_t)s->nr_samples, "frames",
	    (json_int_t)hs_source_nr_frames(s), "stacks", (json_int_t)s->nr_stacks,
	    "max_depth", (json_int_t)maxd, "metric", metric, "count", count, "first_ms",
	    hs__ms(first), "last_ms", hs__ms(last), "unit",
	    hs_view_json_text(s->metric_unit), "time_metric", s->kind == HS_METRIC_TIME,
	    "memory_bytes", (json_int_t)hs_source_memory(s), "defaults",
	    defaults_json(&s->defaults), "filter", "samples", (json_int_t)ct->nr_samples,
	    "frames", (json_int_t)hs_source_nr_frames(&ct->f.out), "stacks",
	    (json_int_t)hs_filtered_nr_stacks(&ct->f), "groups",
	    (json_int_t)ct->f.nr_groups, "folded_nodes", (json_int_t)ct->nr_folded,
	    "fold_threshold", ct->fold_threshold, "fold_pct",
	    isnan(ct->fold_pct) ? NULL : json_real(ct->fold_pct), "cache", "entries",
	    (json_int_t)entries, "hits", (json_int_t)hits, "misses", (json_int_t)misses);
	/* a source switch wants the source's numbers, not seconds of heap stats */
	if (want_heap)
		heap = heap_stats(c, &c->query.src);
	if (o && heap && json_object_set_new(o, "heap", heap)) {
		json_decref(o);
		o = NULL;
	}
	return hs__reply_json(c->resp, o, COMPACT);
}

/*
 * The Overweight report: the query's source and params are the test, the
 * "base" source (as in a diff) with "base_params" the baseline.
 */
int hs__api_overweight(struct hs_route_ctx *c)
{
	struct hs_api_params bp;
	struct hs_api_query bq;
	struct hs_overweight ow;
	struct hs_resolved t, b;
	json_t *bj, *o = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	bj = json_object_get(c->q, "base");
	if (!bj || !json_is_object(bj))
		return hs__reply_error(c->resp, 400, "overweight needs a base source");
	err = hs_api_query_parse(bj, c->app->nr_traces, 0, &bq, &c->diag);
	if (err)
		return hs__reply_err(c, err, "base: ");
	err = hs_api_params_parse(json_object_get(c->q, "base_params"), &bp, &c->diag);
	if (!err)
		err = hs__resolve_src(c, &c->query.src, c->query.src.nr_steps,
				      &c->query.params.vp.filter, &t);
	if (!err)
		err = hs__resolve_src(c, &bq.src, bq.src.nr_steps, &bp.vp.filter, &b);
	if (!err)
		err = hs_overweight_compute(b.src, &bp.vp, t.src, &c->query.params.vp,
					    &ow, &c->diag);
	hs_api_query_release(&bq);
	hs_api_params_release(&bp);
	if (err)
		return hs__reply_err(c, err, "");
	f = open_memstream(&text, &len);
	err = f ? hs_overweight_write_json(&ow, f) : -ENOMEM;
	if (f && fclose(f))
		err = -EIO;
	hs_overweight_release(&ow);
	if (!err)
		o = json_loadb(text, len, 0, NULL);
	free(text);
	return hs__reply_json(c->resp, o, COMPACT);
}
