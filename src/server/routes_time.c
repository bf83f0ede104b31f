/*
 * routes_time - samples over time (docs/json-api.md): /api/timeline (the
 * metric per time bucket, all and kept by the filter, and a heap trace's
 * heap in use and RSS) and /api/samples (a row's samples with their
 * stacks, for the Events tab).
 */
#include "analysis/memviews.h"
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

/* Add @v spread evenly over [@a, @b) ns into the buckets of @h. */
static void spread(double *h, size_t nb, double lo, double width, double a, double b,
		   double v)
{
	size_t i, i0, i1;

	if (b <= a) {
		i = a <= lo ? 0 : (size_t)((a - lo) / width);
		h[i < nb ? i : nb - 1] += v;
		return;
	}
	i0 = a <= lo ? 0 : (size_t)((a - lo) / width);
	i1 = b <= lo ? 0 : (size_t)((b - lo) / width);
	if (i0 >= nb)
		i0 = nb - 1;
	if (i1 >= nb)
		i1 = nb - 1;
	for (i = i0; i <= i1; i++) {
		double s = lo + (double)i * width, e = s + width;
		double ov = (b < e ? b : e) - (a > s ? a : s);

		if (i == nb - 1 && b > e)
			ov += b - e;
		if (i == 0 && a < s)
			ov += s - a;
		if (ov > 0)
			h[i] += v * ov / (b - a);
	}
}

/* The heap history of the trace the query's source is a view of, or NULL. */
static const struct hs_heap_history *heap_history(const struct hs_route_ctx *c)
{
	if (c->query.src.kind != HS_API_SRC_TRACE)
		return NULL;
	return hs_app_heap_history(c->app, c->query.src.trace);
}

/* Build the heap and RSS curves of the query's trace in @points points. */
static int build_heap_curves(struct hs_route_ctx *c, void *arg, char **text, size_t *len)
{
	struct hs_timeline heap = {0}, rss = {0};
	size_t points = *(const size_t *)arg;
	json_t *o;
	int err;

	err =
	    hs_heap_history_timelines(heap_history(c), points, &heap, &rss) ? -ENOMEM : 0;
	o = err ? NULL
		: json_pack("{s:o, s:o}", "heap", hs_timeline_json(&heap), "rss",
			    hs_timeline_json(&rss));
	hs_timeline_release(&heap);
	hs_timeline_release(&rss);
	err = hs__json_text(o, text, len);
	json_decref(o);
	return err;
}

/*
 * A heap trace's heap in use and RSS, "heap" and "rss": [[ms, bytes], ...]
 * in at most @points points, each the highest value in its stretch of
 * time, cut from the trace's history (app.h: read at the open); cached
 * per (trace, points), since they depend on neither the filter nor the
 * time range. A trace without a history (not readable) gives none. 0 or
 * a negative errno.
 */
static int add_heap_timelines(struct hs_route_ctx *c, json_t *o, size_t points)
{
	const struct hs_cache_entry *e;
	char key[64];
	json_t *curves;
	int err;

	snprintf(key, sizeof(key), "heap curves\ntrace %zu\npoints %zu",
		 c->query.src.trace, points);
	err = hs__cached_text(c, key, build_heap_curves, &points, &e);
	if (err)
		return err;
	curves = json_loadb(e->u.text.s, e->u.text.len, 0, NULL);
	if (!curves || json_object_update(o, curves))
		err = -ENOMEM;
	json_decref(curves);
	return err;
}

/*
 * Whether @s has times to show: not when its samples carry none (a heap
 * snapshot's) or all have one time (folded stacks, pprof, speedscope's
 * sampled profiles), unless a heap trace's run gives the time axis (@ht).
 */
static int timed(const struct hs_stack_source *s, const struct hs_heap_history *ht,
		 int64_t first, int64_t last)
{
	if (s->untimed)
		return 0;
	return first != last || (ht && ht->duration_ns > 0);
}

/*
 * The timeline's JSON text for @arg buckets: the source's metric per time
 * bucket over the whole trace, for all samples and for those the filter
 * keeps (the time window aside).
 */
static int build_timeline(struct hs_route_ctx *c, void *arg, char **text, size_t *len)
{
	const struct hs_calltree *ct = &c->tree->u.tree;
	const struct hs_stack_source *s = c->src;
	const struct hs_heap_history *ht = heap_history(c);
	size_t nb = *(const size_t *)arg, i;
	double *all = NULL, *kept = NULL, lo, hi, width;
	json_t *o = NULL, *ja, *jk;
	int64_t first, last;
	int tm = s->kind == HS_METRIC_TIME, err = -ENOMEM;

	hs_source_time_range(s, &first, &last);
	lo = first < 0 ? (double)first : 0;
	hi = (double)last;
	if (tm)
		for (i = 0; i < s->nr_samples; i++) {
			double e = (double)s->time[i] + fabs(s->metric[i]) * 1e6;

			if (e > hi)
				hi = e;
		}
	/* a heap trace's timeline spans the whole run (its heap and RSS too) */
	if (ht && (double)ht->duration_ns > hi)
		hi = (double)ht->duration_ns;
	/* all at one time: 1 ms in all */
	width = hi > lo ? (hi - lo) / (double)nb : 1e6 / (double)nb;
	all = hs_calloc(nb, sizeof(*all));
	kept = hs_calloc(nb, sizeof(*kept));
	if (!all || !kept)
		goto out;
	for (i = 0; i < s->nr_samples; i++) {
		double t = (double)s->time[i], m = s->metric[i];
		double e = tm ? t + fabs(m) * 1e6 : t;
		uint32_t st = s->stack[i];
		uint32_t to =
		    st == HS_NO_STACK ? ct->f.root_map : hs_filtered_map(&ct->f, st);

		spread(all, nb, lo, width, t, e, m);
		if (to != HS_DROPPED)
			spread(kept, nb, lo, width, t, e, m);
	}
	o = json_object();
	ja = json_array();
	jk = json_array();
	if (!o || !ja || !jk || json_object_set_new(o, "all", ja) ||
	    json_object_set_new(o, "filtered", jk)) {
		json_decref(ja);
		json_decref(jk);
		goto out;
	}
	for (i = 0; i < nb; i++)
		if (json_array_append_new(ja, json_real(all[i])) ||
		    json_array_append_new(jk, json_real(kept[i])))
			goto out;
	if (ht) {
		err = add_heap_timelines(c, o, nb);
		if (err)
			goto out;
		err = -ENOMEM;
	}
	if (json_object_set_new(o, "start_ms", json_real(lo / 1e6)) ||
	    json_object_set_new(o, "end_ms",
				json_real((lo + width * (double)nb) / 1e6)) ||
	    json_object_set_new(o, "bucket_ms", json_real(width / 1e6)) ||
	    json_object_set_new(o, "time_metric", json_boolean(tm)) ||
	    json_object_set_new(o, "unit", hs_view_json_text(s->metric_unit)) ||
	    json_object_set_new(o, "timed", json_boolean(timed(s, ht, first, last))))
		goto out;
	err = hs__json_text(o, text, len);
out:
	json_decref(o);
	hs_free(all);
	hs_free(kept);
	return err;
}

/*
 * The timeline, cached per call tree (a source with its filter and time
 * range) and number of buckets: an Update that changes nothing it depends
 * on answers from the cache.
 */
int hs__api_timeline(struct hs_route_ctx *c)
{
	const struct hs_cache_entry *e;
	struct hs_buf key = HS_BUF_INIT;
	size_t nb;
	int err = hs__get_tree(c);

	if (!err)
		err = hs__get_uint(c, "buckets", 400, MAX_BUCKETS, &nb);
	if (!err && !nb) {
		hs_diag_set(&c->diag, 0, "buckets must be at least 1");
		err = -EINVAL;
	}
	if (!err && hs_buf_addf(&key, "timeline\nbuckets %zu\n%s", nb, c->query.tree_key))
		err = -ENOMEM;
	if (!err)
		err = hs__cached_text(c, key.s, build_timeline, &nb, &e);
	hs_buf_release(&key);
	if (err)
		return hs__reply_err(c, err, "");
	return hs__reply_text_entry(c->resp, e);
}

/*
 * Into @out the samples of the node @step->path names in the Callers or
 * Callees tree (@step->tree) of the focus path[0]: those its Inc counts,
 * as Drill Into takes them. 0, -ENOENT (@diag says what), -ENOMEM.
 */
static int focus_tree_samples(const struct hs_calltree *ct,
			      const struct hs_query_step *step,
			      struct hs_stack_source *out, struct hs_diag *diag)
{
	uint8_t *pick = hs_calloc(ct->t.nr, 1);
	int err;

	if (!pick)
		return -ENOMEM;
	err = hs_view_focus_pick(ct, step->tree, step->path, step->path_len, pick, diag);
	if (!err)
		err = hs_drill_pick(ct, pick, out);
	hs_free(pick);
	return err;
}

/*
 * The samples of a name ("name") or call-tree node ("path"), inclusive or
 * exclusive ("what"), that pass the filter: a page of them in time order
 * with their original stacks. With "tree" "callers" or "callees", "path"
 * is a node of that tree of the focus path[0] (inclusive only).
 */
int hs__api_samples(struct hs_route_ctx *c)
{
	struct hs_stack_source out;
	struct hs_query_step step = {.kind = HS_STEP_DRILL, .what = HS_DRILL_INC};
	const struct hs_calltree *ct;
	const char *what, *tree, **names = NULL;
	uint32_t id, frames[MAX_STACK_SHOWN];
	size_t offset, count, i, k, depth, n;
	json_t *o = NULL, *rows, *path, *row, *st;
	int err;

	hs_source_init(&out);
	err = hs__get_tree(c);
	if (!err)
		err = hs__get_string(c, "name", HS_API_MAX_TEXT, &step.name);
	if (!err)
		err = hs__get_string(c, "what", 8, &what);
	if (!err)
		err = hs__get_string(c, "tree", 16, &tree);
	if (!err)
		err = hs__get_uint(c, "offset", 0, UINT32_MAX, &offset);
	if (!err)
		err = hs__get_uint(c, "count", 100, MAX_SAMPLES_PAGE, &count);
	if (err)
		return hs__reply_err(c, err, "");
	if (what && strcmp(what, "inc") && strcmp(what, "exc"))
		return hs__reply_error(c->resp, 400, "what must be \"inc\" or \"exc\"");
	step.what = what && !strcmp(what, "exc") ? HS_DRILL_EXC : HS_DRILL_INC;
	step.tree = HS_VIEW_CALLTREE;
	if (tree && (hs_view_kind_parse(tree, &step.tree) ||
		     (step.tree != HS_VIEW_CALLTREE && step.tree != HS_VIEW_CALLERS &&
		      step.tree != HS_VIEW_CALLEES)))
		return hs__reply_error(c->resp, 400,
				       "tree must be \"calltree\", \"callers\" or "
				       "\"callees\"");
	if (step.tree != HS_VIEW_CALLTREE && step.what != HS_DRILL_INC)
		return hs__reply_error(c->resp, 400,
				       "the samples of a %s node are inclusive",
				       hs_view_kind_name(step.tree));
	path = json_object_get(c->q, "path");
	if (path && !json_is_null(path)) {
		n = json_is_array(path) ? json_array_size(path) : 0;
		if (!n || n > HS_API_MAX_PATH)
			return hs__reply_error(c->resp, 400,
					       "path must be an array of 1 to %d "
					       "names",
					       HS_API_MAX_PATH);
		names = hs_calloc(n, sizeof(*names));
		if (!names)
			return hs__reply_error(c->resp, 503, "out of memory");
		for (i = 0; i < n; i++) {
			names[i] = json_string_value(json_array_get(path, i));
			if (!names[i]) {
				hs_free(names);
				return hs__reply_error(c->resp, 400,
						       "path: names are strings");
			}
		}
		step.path = names;
		step.path_len = n;
	}
	if (!step.name == !step.path_len) {
		hs_free(names);
		return hs__reply_error(c->resp, 400, "samples needs a name or a path");
	}
	if (step.tree != HS_VIEW_CALLTREE && !step.path_len)
		return hs__reply_error(c->resp, 400, "tree needs a path");
	ct = &c->tree->u.tree;
	if (step.tree != HS_VIEW_CALLTREE) {
		err = focus_tree_samples(ct, &step, &out, &c->diag);
	} else if (step.path_len) {
		err = hs_query_find_path(ct, step.path, step.path_len, &id);
		if (!err)
			err = hs_drill_node(ct, id, step.what, &out);
	} else {
		err = hs_calltree_find_name(ct, step.name, &id);
		if (!err)
			err = hs_drill_name(ct, id, step.what, &out);
	}
	hs_free(names);
	if (err) {
		hs_source_release(&out);
		if (err == -ENOENT)
			return hs__reply_error(c->resp, 404,
					       "no such name or call-tree node");
		return hs__reply_err(c, err, "");
	}
	rows = json_array();
	o = json_pack("{s:I, s:I, s:o}", "total", (json_int_t)out.nr_samples, "offset",
		      (json_int_t)offset, "rows", rows);
	if (!o)
		goto fail;
	for (i = offset; i < out.nr_samples && i - offset < count; i++) {
		depth =
		    hs_source_stack_frames(&out, out.stack[i], frames, MAX_STACK_SHOWN);
		st = json_array();
		row = json_pack("{s:f, s:f, s:f, s:I, s:o}", "time_ms",
				hs__ms(out.time[i]), "metric", out.metric[i], "count",
				out.count[i], "depth", (json_int_t)depth, "stack", st);
		if (!row || json_array_append_new(rows, row))
			goto fail;
		n = depth < MAX_STACK_SHOWN ? depth : MAX_STACK_SHOWN;
		for (k = 0; k < n; k++)
			if (json_array_append_new(
				st,
				hs_view_json_text(hs_source_frame_name(&out, frames[k]))))
				goto fail;
	}
	goto out;
fail:
	json_decref(o);
	o = NULL;
out:
	hs_source_release(&out);
	return hs__reply_json(c->resp, o, COMPACT);
}
