/*
 * gc_stats_json - GCStats as a JSON document (gc_stats.h), the same for
 * `heapscope gcstats --format json` and the GUI's /api/gc.
 */
#include "dotnet/gc_stats.h"
#include <jansson.h>
#include <math.h>

#define MB 1e6

/* A number, or null when unknown. */
static json_t *jnum(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static const char *const rollup_names[4] = {"ALL", "0", "1", "2"};

static json_t *summary_json(const struct hs_gc_stats *s, const char *name, uint32_t pid)
{
	return json_pack(
	    "{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:o, s:o, s:o,"
	    " s:o}",
	    "trace", name, "pid", (json_int_t)pid, "duration_ms", jnum(s->duration_ms),
	    "first_ms", jnum(s->have_event ? s->first_ms : NAN), "last_ms",
	    jnum(s->have_event ? s->last_ms : NAN), "total_allocated_mb",
	    s->has_alloc_ticks ? jnum(s->total_alloc_bytes / MB) : json_null(),
	    "total_allocated_bytes",
	    s->has_alloc_ticks ? jnum(s->total_alloc_bytes) : json_null(), "gc_count",
	    (json_int_t)s->nr, "induced", (json_int_t)s->rollup[0].induced, "incomplete",
	    (json_int_t)s->nr_incomplete, "total_pause_ms", jnum(s->total_pause_ms),
	    "max_pause_ms", jnum(s->max_pause_ms), "pause_percent",
	    jnum(s->pause_percent), "max_heap_mb", jnum(s->max_peak_bytes / MB));
}

static json_t *rollup_json(const struct hs_gc_rollup *u, int k)
{
	return json_pack("{s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "gen",
			 rollup_names[k], "count", (json_int_t)u->count, "induced",
			 (json_int_t)u->induced, "max_pause_ms", jnum(u->max_pause_ms),
			 "mean_pause_ms", jnum(u->mean_pause_ms), "total_pause_ms",
			 jnum(u->total_pause_ms), "max_peak_mb",
			 jnum(u->max_peak_bytes / MB), "mean_peak_mb",
			 jnum(u->mean_peak_bytes / MB), "mean_after_mb",
			 jnum(u->mean_after_bytes / MB), "total_alloc_mb",
			 jnum(u->total_alloc_bytes / MB), "total_promoted_mb",
			 jnum(u->total_promoted_bytes / MB));
}

static json_t *generations_json(const struct hs_gc_record *gc)
{
	static const char *const names[HS_GC__NR_GENS] = {"gen0", "gen1", "gen2", "loh",
							  "poh"};
	json_t *gens = json_object();
	int g;

	for (g = 0; gens && g < HS_GC__NR_GENS; g++) {
		json_t *one =
		    json_pack("{s:o, s:o, s:o, s:o}", "before_mb",
			      jnum(gc->before[g] / MB), "size_mb",
			      gc->has_heap_stats ? jnum((double)gc->heap.gen_size[g] / MB)
						 : json_null(),
			      "promoted_mb",
			      gc->has_heap_stats ? jnum((double)gc->heap.promoted[g] / MB)
						 : json_null(),
			      "survival_percent", jnum(gc->survival[g]));

		if (!one || json_object_set_new(gens, names[g], one)) {
			json_decref(gens);
			return NULL;
		}
	}
	return gens;
}

static json_t *gc_json(const struct hs_gc_record *gc)
{
	char b1[32], b2[32];
	json_t *gens = generations_json(gc);

	if (!gens)
		return NULL;
	return json_pack(
	    "{s:I, s:I, s:o, s:o, s:s, s:I, s:I, s:s, s:o, s:o, s:o, s:o, s:o,"
	    " s:o, s:o, s:o, s:o, s:o, s:b, s:b}",
	    "index", (json_int_t)gc->index, "number", (json_int_t)gc->number,
	    "pause_start_ms", jnum(gc->pause_start_ms), "start_ms", jnum(gc->start_ms),
	    "reason", hs_gc_reason_name(gc->reason, b1, sizeof(b1)), "reason_id",
	    (json_int_t)gc->reason, "generation", (json_int_t)gc->generation, "kind",
	    hs_gc_kind_name(gc->kind, b2, sizeof(b2)), "suspend_ms", jnum(gc->suspend_ms),
	    "pause_ms", jnum(gc->pause_ms), "duration_ms", jnum(gc->duration_ms),
	    "gen0_alloc_mb", jnum((double)gc->alloc_gen0 / MB), "large_alloc_mb",
	    jnum((double)gc->alloc_large / MB), "peak_mb", jnum(gc->peak_bytes / MB),
	    "after_mb", jnum(gc->after_bytes / MB), "promoted_mb",
	    jnum(gc->promoted_bytes / MB), "generations", gens, "pinned_objects",
	    gc->has_heap_stats ? json_integer(gc->heap.pinned_objects) : json_null(),
	    "complete", gc->complete, "heap_history", gc->nr_heap_histories > 0);
}

json_t *hs_gc_stats_json(const struct hs_gc_stats *s, const char *name, uint32_t pid)
{
	json_t *roll = json_array(), *gcs = json_array(),
	       *sum = summary_json(s, name, pid);
	json_t *out = NULL;
	size_t i;
	int k, err = !roll || !gcs || !sum;

	for (k = 0; !err && k < 4; k++)
		err = json_array_append_new(roll, rollup_json(&s->rollup[k], k));
	for (i = 0; !err && i < s->nr; i++)
		err = json_array_append_new(gcs, gc_json(&s->gcs[i]));
	if (!err)
		out = json_pack("{s:o, s:o, s:o}", "summary", sum, "rollup", roll, "gcs",
				gcs);
	else {
		json_decref(sum);
		json_decref(roll);
		json_decref(gcs);
	}
	return out;
}
