/*
 * test_gc_stats - GCStats from GC events (dotnet/gc_stats.c): synthetic
 * event sequences (a blocking GC, a background GC with its own
 * suspension and a foreground GC inside it, an ephemeral GC at a
 * background GC's start, missing suspensions, a trace cut off inside a
 * GC, duplicate starts, suspensions that are not a GC's) and the
 * committed recordings, whose program called GC.Collect() three times.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dotnet/gc_stats.h"
#include "dotnet/nettrace.h"
#include "io/gc_stats_load.h"
#include "io/zipfile.h"
#include <jansson.h>

/* @a within @eps of @b (this cmocka has no assert_double_equal). */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* ---- building events ---- */

struct feed {
	struct hs_gc_stats s;
	struct hs_nettrace_meta meta[16];
	unsigned char payload[512];
};

static void put(unsigned char **p, uint64_t v, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes; i++)
		*(*p)++ = (unsigned char)(v >> (8 * i));
}

/* Feed event @id (version @version) at @ms on @thread with the @n payload bytes. */
static void feed_raw(struct feed *f, uint32_t id, uint32_t version, double ms, uint64_t thread,
		     size_t n)
{
	struct hs_nettrace_meta *m = &f->meta[id % 16];
	struct hs_nettrace_event ev;

	memset(m, 0, sizeof(*m));
	m->provider = (char *)HS_CLR_PROVIDER;
	m->event_id = id;
	m->event_name = (char *)"";
	m->version = version;
	memset(&ev, 0, sizeof(ev));
	ev.meta = m;
	ev.thread_id = thread;
	ev.timestamp = (int64_t)(ms * 1e6);	/* ns: the default units */
	ev.payload = f->payload;
	ev.payload_size = (uint32_t)n;
	assert_int_equal(hs_gc_stats_event(&f->s, &ev), 0);
}

static void suspend(struct feed *f, double ms, uint64_t thread, uint32_t reason)
{
	unsigned char *p = f->payload;

	put(&p, reason, 4);
	put(&p, 0, 4);
	put(&p, 0, 2);
	feed_raw(f, HS_CLR_GC_SUSPEND_EE_BEGIN, 1, ms, thread, (size_t)(p - f->payload));
}

static void no_payload(struct feed *f, uint32_t id, double ms, uint64_t thread)
{
	unsigned char *p = f->payload;

	put(&p, 0, 2);
	feed_raw(f, id, 1, ms, thread, 2);
}

static void start(struct feed *f, double ms, uint64_t thread, uint32_t count, uint32_t depth,
		  uint32_t reason, uint32_t type)
{
	unsigned char *p = f->payload;

	put(&p, count, 4);
	put(&p, depth, 4);
	put(&p, reason, 4);
	put(&p, type, 4);
	put(&p, 0, 2);
	feed_raw(f, HS_CLR_GC_START, 1, ms, thread, (size_t)(p - f->payload));
}

static void end(struct feed *f, double ms, uint64_t thread, uint32_t count, uint32_t depth)
{
	unsigned char *p = f->payload;

	put(&p, count, 4);
	put(&p, depth, 4);
	put(&p, 0, 2);
	feed_raw(f, HS_CLR_GC_END, 1, ms, thread, (size_t)(p - f->payload));
}

/* GCHeapStats v2: @size and @promoted per generation (gen0, 1, 2, LOH, POH). */
static void heap_stats(struct feed *f, double ms, uint64_t thread, const uint64_t size[5],
		       const uint64_t promoted[5], uint32_t pinned)
{
	unsigned char *p = f->payload;
	int g;

	for (g = 0; g < 4; g++) {
		put(&p, size[g], 8);
		put(&p, promoted[g], 8);
	}
	put(&p, 0, 8);
	put(&p, 0, 8);
	put(&p, pinned, 4);
	put(&p, 0, 4);
	put(&p, 0, 4);
	put(&p, 0, 2);
	put(&p, size[4], 8);
	put(&p, promoted[4], 8);
	feed_raw(f, HS_CLR_GC_HEAP_STATS, 2, ms, thread, (size_t)(p - f->payload));
}

/* GCPerHeapHistory v3 of heap @heap: @before and @after per generation (5). */
static void heap_history(struct feed *f, double ms, uint32_t heap, const uint64_t before[5],
			 const uint64_t after[5])
{
	unsigned char *p = f->payload;
	int g, k;

	put(&p, 0, 2);
	for (k = 0; k < 6; k++)
		put(&p, 1000 + (uint64_t)k, 8);
	for (k = 0; k < 5; k++)
		put(&p, 77, 4);
	put(&p, heap, 4);
	put(&p, 0, 8);
	put(&p, 5, 4);
	assert_int_equal(p - f->payload, 86);
	feed_raw(f, HS_CLR_GC_PER_HEAP_HISTORY, 3, ms, 7, 86);	/* header only: too short */
	for (g = 0; g < 5; g++) {
		put(&p, before[g], 8);
		put(&p, 11, 8);
		put(&p, 12, 8);
		put(&p, after[g], 8);
		for (k = 0; k < 6; k++)
			put(&p, 13 + (uint64_t)k, 8);
	}
	assert_true((size_t)(p - f->payload) <= sizeof(f->payload));
	feed_raw(f, HS_CLR_GC_PER_HEAP_HISTORY, 3, ms, 7, (size_t)(p - f->payload));
}

static void tick(struct feed *f, double ms, uint64_t amount, uint32_t kind)
{
	unsigned char *p = f->payload;

	put(&p, amount, 4);
	put(&p, kind, 4);
	put(&p, 0, 2);
	put(&p, amount, 8);
	put(&p, 0x1234, 8);
	put(&p, 'F', 2);	/* type name "F" */
	put(&p, 0, 2);
	put(&p, 0, 4);
	feed_raw(f, HS_CLR_GC_ALLOCATION_TICK, 2, ms, 7, (size_t)(p - f->payload));
}

/* A whole blocking GC: suspend at @ms, 1 ms to suspend, 8 ms of pause. */
static void blocking_gc(struct feed *f, double ms, uint32_t count, uint32_t depth,
			uint32_t reason, const uint64_t size[5], const uint64_t promoted[5])
{
	suspend(f, ms, 7, 1);
	no_payload(f, HS_CLR_GC_SUSPEND_EE_END, ms + 1, 7);
	start(f, ms + 2, 7, count, depth, reason, HS_GC_NONCONCURRENT);
	end(f, ms + 5, 7, count, depth);
	heap_stats(f, ms + 6, 7, size, promoted, 3);
	no_payload(f, HS_CLR_GC_RESTART_EE_BEGIN, ms + 7, 7);
	no_payload(f, HS_CLR_GC_RESTART_EE_END, ms + 8, 7);
}

static void feed_init(struct feed *f)
{
	memset(f, 0, sizeof(*f));
	hs_gc_stats_init(&f->s);
}

/* ---- synthetic sequences ---- */

static void one_blocking_gc(void **state)
{
	static const uint64_t size[5] = { 100, 2000, 0, 0, 50 };
	static const uint64_t promoted[5] = { 2000, 0, 0, 0, 0 };
	struct feed f;
	const struct hs_gc_record *r;

	(void)state;
	feed_init(&f);
	tick(&f, 1, 100000, 0);
	tick(&f, 2, 100000, 0);
	tick(&f, 3, 300000, 1);
	blocking_gc(&f, 10, 1, 0, 0, size, promoted);
	tick(&f, 20, 50000, 0);
	hs_gc_stats_finish(&f.s);
	assert_int_equal(f.s.nr, 1);
	r = &f.s.gcs[0];
	assert_int_equal(r->index, 1);
	assert_int_equal(r->generation, 0);
	assert_int_equal(r->kind, HS_GC_NONCONCURRENT);
	assert_true(r->complete);
	assert_near(r->pause_start_ms, 10, 1e-9);
	assert_near(r->suspend_ms, 1, 1e-9);
	assert_near(r->pause_ms, 8, 1e-9);
	assert_near(r->duration_ms, 3, 1e-9);
	assert_int_equal(r->alloc_gen0, 200000);
	assert_int_equal(r->alloc_large, 300000);
	assert_near(r->after_bytes, 2150, 1e-9);
	assert_near(r->promoted_bytes, 2000, 1e-9);
	/* the first GC: gen0 before is what was allocated, 2000 of 200000 survived */
	assert_near(r->before[HS_GC_GEN0], 200000, 1e-9);
	assert_near(r->survival[HS_GC_GEN0], 1.0, 1e-9);
	assert_true(isnan(r->survival[HS_GC_GEN1]));	/* not collected */
	assert_near(r->peak_bytes, 200000, 1e-9);
	assert_int_equal(r->heap.pinned_objects, 3);
	/* the summary */
	assert_near(f.s.total_alloc_bytes, 550000, 1e-9);
	assert_near(f.s.total_pause_ms, 8, 1e-9);
	assert_near(f.s.max_pause_ms, 8, 1e-9);
	assert_near(f.s.duration_ms, 19, 1e-9);
	assert_near(f.s.pause_percent, 800.0 / 19, 1e-9);
	assert_int_equal(f.s.nr_incomplete, 0);
	assert_int_equal(f.s.rollup[0].count, 1);
	assert_int_equal(f.s.rollup[1].count, 1);
	assert_int_equal(f.s.rollup[3].count, 0);
	hs_gc_stats_release(&f.s);
}

static void gens_and_rollup(void **state)
{
	static const uint64_t size1[5] = { 0, 1000, 5000, 40000, 8 };
	static const uint64_t prom1[5] = { 1000, 0, 0, 0, 0 };
	static const uint64_t size2[5] = { 0, 0, 5500, 40000, 8 };
	static const uint64_t prom2[5] = { 300, 500, 4500, 20000, 8 };
	struct feed f;
	const struct hs_gc_record *r;

	(void)state;
	feed_init(&f);
	tick(&f, 1, 100000, 0);
	blocking_gc(&f, 10, 1, 1, 0, size1, prom1);
	tick(&f, 20, 100000, 0);
	blocking_gc(&f, 30, 2, 2, 1, size2, prom2);	/* induced */
	hs_gc_stats_finish(&f.s);
	assert_int_equal(f.s.nr, 2);
	r = &f.s.gcs[1];
	/* before: gen0 from the ticks, the others what GC 1 left (LOH the larger) */
	assert_near(r->before[HS_GC_GEN0], 100000, 1e-9);
	assert_near(r->before[HS_GC_GEN1], 1000, 1e-9);
	assert_near(r->before[HS_GC_GEN2], 5000, 1e-9);
	assert_near(r->before[HS_GC_LOH], 40000, 1e-9);
	assert_near(r->survival[HS_GC_GEN1], 50.0, 1e-9);
	assert_near(r->survival[HS_GC_GEN2], 90.0, 1e-9);
	assert_near(r->survival[HS_GC_LOH], 50.0, 1e-9);
	assert_near(r->peak_bytes, 100000 + 1000 + 5000 + 40000 + 8, 1e-9);
	assert_int_equal(f.s.rollup[0].count, 2);
	assert_int_equal(f.s.rollup[0].induced, 1);
	assert_int_equal(f.s.rollup[2].count, 1);	/* gen1 */
	assert_int_equal(f.s.rollup[3].count, 1);	/* gen2 */
	assert_near(f.s.rollup[0].total_pause_ms, 16, 1e-9);
	assert_near(f.s.rollup[0].mean_pause_ms, 8, 1e-9);
	assert_near(f.s.rollup[0].total_alloc_bytes, 200000, 1e-9);
	assert_near(f.s.rollup[3].total_promoted_bytes, 300 + 500 + 4500 + 20000 + 8,
			    1e-9);
	assert_near(f.s.rollup[0].mean_after_bytes, (46008 + 45508) / 2.0, 1e-9);
	hs_gc_stats_release(&f.s);
}

/*
 * A background GC: its initial pause (100 to 105), a foreground gen1 GC
 * while it marks (150 to 154), its own second suspension (200 to 203),
 * and its end at 300.
 */
static void background_gc(void **state)
{
	static const uint64_t size[5] = { 10, 20, 30, 40, 50 };
	static const uint64_t prom[5] = { 1, 2, 3, 4, 5 };
	struct feed f;
	const struct hs_gc_record *bgc, *fgc;

	(void)state;
	feed_init(&f);
	suspend(&f, 100, 7, 1);
	no_payload(&f, HS_CLR_GC_SUSPEND_EE_END, 101, 7);
	start(&f, 102, 7, 1, 2, 0, HS_GC_BACKGROUND);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 105, 7);
	/* the foreground GC, on another thread */
	suspend(&f, 150, 9, 1);
	no_payload(&f, HS_CLR_GC_SUSPEND_EE_END, 150.5, 9);
	start(&f, 151, 9, 2, 1, 0, HS_GC_FOREGROUND);
	end(&f, 152, 9, 2, 1);
	heap_stats(&f, 153, 9, size, prom, 0);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 154, 9);
	/* the background GC's own suspension */
	suspend(&f, 200, 8, 6);
	no_payload(&f, HS_CLR_GC_SUSPEND_EE_END, 201, 8);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 203, 8);
	end(&f, 300, 8, 1, 2);
	heap_stats(&f, 301, 8, size, prom, 0);
	hs_gc_stats_finish(&f.s);

	assert_int_equal(f.s.nr, 2);
	bgc = &f.s.gcs[0];
	fgc = &f.s.gcs[1];
	assert_int_equal(bgc->kind, HS_GC_BACKGROUND);
	assert_true(bgc->complete);
	/* 5 ms at its start and 3 of its own: not the 198 ms it ran */
	assert_near(bgc->pause_ms, 8, 1e-9);
	assert_near(bgc->suspend_ms, 2, 1e-9);
	assert_near(bgc->duration_ms, 198, 1e-9);
	assert_int_equal(fgc->kind, HS_GC_FOREGROUND);
	assert_int_equal(fgc->generation, 1);
	assert_true(fgc->complete);
	assert_near(fgc->pause_start_ms, 150, 1e-9);
	assert_near(fgc->pause_ms, 4, 1e-9);
	assert_near(fgc->suspend_ms, 0.5, 1e-9);
	assert_near(f.s.total_pause_ms, 12, 1e-9);
	/* the BGC's peak covers the foreground GC during it */
	assert_true(bgc->peak_bytes >= fgc->peak_bytes);
	assert_int_equal(f.s.nr_incomplete, 0);
	hs_gc_stats_release(&f.s);
}

/* An ephemeral GC inside the background GC's first suspension takes the restart. */
static void ephemeral_at_bgc_start(void **state)
{
	static const uint64_t size[5] = { 10, 20, 30, 40, 50 };
	static const uint64_t prom[5] = { 1, 2, 3, 4, 5 };
	struct feed f;

	(void)state;
	feed_init(&f);
	suspend(&f, 100, 7, 1);
	no_payload(&f, HS_CLR_GC_SUSPEND_EE_END, 101, 7);
	start(&f, 102, 7, 1, 2, 0, HS_GC_BACKGROUND);
	start(&f, 103, 7, 2, 1, 0, HS_GC_NONCONCURRENT);
	end(&f, 104, 7, 2, 1);
	heap_stats(&f, 105, 7, size, prom, 0);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 107, 7);
	end(&f, 200, 8, 1, 2);
	heap_stats(&f, 201, 8, size, prom, 0);
	hs_gc_stats_finish(&f.s);
	assert_int_equal(f.s.nr, 2);
	assert_near(f.s.gcs[1].pause_start_ms, 103, 1e-9);
	assert_near(f.s.gcs[1].pause_ms, 4, 1e-9);
	assert_true(f.s.gcs[1].complete);
	/* the background GC keeps its suspension as its pause */
	assert_near(f.s.gcs[0].pause_ms, 1, 1e-9);
	assert_true(f.s.gcs[0].complete);
	hs_gc_stats_release(&f.s);
}

/*
 * A requested background GC the runtime does whole inside its initial
 * suspension: its GCEnd and heap stats come before the restart, which
 * still ends its pause.
 */
static void bgc_inside_its_suspension(void **state)
{
	static const uint64_t size[5] = { 10, 20, 30, 40, 50 };
	static const uint64_t prom[5] = { 1, 2, 3, 4, 5 };
	struct feed f;

	(void)state;
	feed_init(&f);
	suspend(&f, 10, 7, 1);
	no_payload(&f, HS_CLR_GC_SUSPEND_EE_END, 10.5, 7);
	start(&f, 11, 7, 1, 2, 7, HS_GC_BACKGROUND);
	end(&f, 12, 7, 1, 2);
	heap_stats(&f, 12.5, 7, size, prom, 0);
	assert_false(f.s.gcs[0].complete);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 13, 7);
	hs_gc_stats_finish(&f.s);
	assert_true(f.s.gcs[0].complete);
	assert_near(f.s.gcs[0].pause_ms, 3, 1e-9);
	assert_near(f.s.gcs[0].duration_ms, 1, 1e-9);
	assert_int_equal(f.s.nr_incomplete, 0);
	hs_gc_stats_release(&f.s);
}

/* Two heaps' histories: the sizes before are theirs, summed, not estimates. */
static void heap_histories(void **state)
{
	static const uint64_t before0[5] = { 100000, 4000, 9000, 50000, 8 };
	static const uint64_t before1[5] = { 300000, 6000, 1000, 0, 0 };
	static const uint64_t after[5] = { 0, 0, 0, 0, 0 };
	static const uint64_t size[5] = { 0, 10000, 8000, 25000, 8 };
	static const uint64_t prom[5] = { 40000, 5000, 5000, 25000, 8 };
	struct feed f;
	const struct hs_gc_record *r;

	(void)state;
	feed_init(&f);
	tick(&f, 1, 100000, 0);
	suspend(&f, 10, 7, 1);
	start(&f, 11, 7, 1, 2, 0, HS_GC_NONCONCURRENT);
	heap_history(&f, 12, 0, before0, after);
	heap_history(&f, 12, 1, before1, after);
	end(&f, 13, 7, 1, 2);
	heap_stats(&f, 14, 7, size, prom, 0);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 15, 7);
	hs_gc_stats_finish(&f.s);
	r = &f.s.gcs[0];
	assert_int_equal(r->nr_heap_histories, 2);	/* the short one is ignored */
	assert_near(r->before[HS_GC_GEN0], 400000, 1e-9);
	assert_near(r->before[HS_GC_GEN2], 10000, 1e-9);
	assert_near(r->survival[HS_GC_GEN0], 10.0, 1e-9);
	assert_near(r->survival[HS_GC_GEN1], 50.0, 1e-9);
	assert_near(r->survival[HS_GC_GEN2], 50.0, 1e-9);
	assert_near(r->survival[HS_GC_LOH], 50.0, 1e-9);
	assert_near(r->peak_bytes, 400000 + 10000 + 10000 + 50000 + 8, 1e-9);
	hs_gc_stats_release(&f.s);
}

static void missing_and_cut_off(void **state)
{
	static const uint64_t size[5] = { 10, 20, 30, 40, 50 };
	static const uint64_t prom[5] = { 1, 2, 3, 4, 5 };
	struct feed f;

	(void)state;
	feed_init(&f);
	/* no suspension in the trace (it began before the recording) */
	start(&f, 5, 7, 4, 0, 0, HS_GC_NONCONCURRENT);
	end(&f, 6, 7, 4, 0);
	heap_stats(&f, 7, 7, size, prom, 0);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 8, 7);	/* untracked: ignored */
	/* the same GC announced twice */
	suspend(&f, 20, 7, 1);
	start(&f, 21, 7, 5, 0, 0, HS_GC_NONCONCURRENT);
	start(&f, 21.5, 7, 5, 0, 0, HS_GC_NONCONCURRENT);
	/* a debugger's suspension is no GC's */
	suspend(&f, 22, 11, 5);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 23, 11);
	no_payload(&f, HS_CLR_GC_RESTART_EE_END, 24, 7);
	end(&f, 25, 7, 5, 0);
	/* cut off here: no heap stats */
	hs_gc_stats_finish(&f.s);
	assert_int_equal(f.s.nr, 2);
	assert_near(f.s.gcs[0].pause_start_ms, 5, 1e-9);
	assert_true(isnan(f.s.gcs[0].suspend_ms));
	assert_true(isnan(f.s.gcs[0].pause_ms));
	assert_false(f.s.gcs[0].complete);
	assert_near(f.s.gcs[0].after_bytes, 150, 1e-9);
	/* the suspension had no SuspendEEEnd: it lasted until the GC started */
	assert_near(f.s.gcs[1].suspend_ms, 1, 1e-9);
	assert_near(f.s.gcs[1].pause_ms, 4, 1e-9);
	assert_false(f.s.gcs[1].complete);
	assert_true(isnan(f.s.gcs[1].after_bytes));
	assert_true(isnan(f.s.gcs[1].promoted_bytes));
	assert_int_equal(f.s.nr_incomplete, 2);
	assert_near(f.s.total_pause_ms, 4, 1e-9);
	assert_false(f.s.has_alloc_ticks);
	/* in JSON, what is unknown is null */
	{
		json_t *j = hs_gc_stats_json(&f.s, "t", 1);
		json_t *g0 = json_array_get(json_object_get(j, "gcs"), 0);

		assert_non_null(j);
		assert_true(json_is_null(json_object_get(g0, "pause_ms")));
		assert_true(json_is_null(json_object_get(g0, "suspend_ms")));
		assert_true(json_is_false(json_object_get(g0, "complete")));
		assert_true(json_is_null(json_object_get(json_object_get(j, "summary"),
							  "total_allocated_mb")));
		assert_int_equal(json_integer_value(json_object_get(
			json_object_get(j, "summary"), "incomplete")), 2);
		assert_int_equal(json_array_size(json_object_get(j, "rollup")), 4);
		json_decref(j);
	}
	hs_gc_stats_release(&f.s);
}

static void short_payloads_ignored(void **state)
{
	struct feed f;

	(void)state;
	feed_init(&f);
	feed_raw(&f, HS_CLR_GC_START, 1, 1, 7, 3);
	feed_raw(&f, HS_CLR_GC_SUSPEND_EE_BEGIN, 1, 2, 7, 1);
	feed_raw(&f, HS_CLR_GC_HEAP_STATS, 2, 3, 7, 10);
	feed_raw(&f, HS_CLR_GC_ALLOCATION_TICK, 2, 4, 7, 5);
	hs_gc_stats_finish(&f.s);
	assert_int_equal(f.s.nr, 0);
	assert_false(f.s.has_alloc_ticks);
	assert_near(f.s.total_pause_ms, 0, 0);
	hs_gc_stats_release(&f.s);
}

static void names(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(hs_gc_reason_name(1, buf, sizeof(buf)), "Induced");
	assert_string_equal(hs_gc_reason_name(0, buf, sizeof(buf)), "AllocSmall");
	assert_string_equal(hs_gc_reason_name(99, buf, sizeof(buf)), "Reason99");
	assert_string_equal(hs_gc_kind_name(1, buf, sizeof(buf)), "BackgroundGC");
	assert_string_equal(hs_gc_kind_name(7, buf, sizeof(buf)), "Kind7");
	assert_int_equal(hs_gc_kind_letter(2), 'F');
	assert_true(hs_gc_reason_induced(1));
	assert_false(hs_gc_reason_induced(0));
}

/* ---- the recordings ---- */

static int on_header(void *ctx, const struct hs_nettrace_header *h)
{
	hs_gc_stats_header(ctx, h);
	return 0;
}

static int on_event(void *ctx, const struct hs_nettrace_event *ev)
{
	return hs_gc_stats_event(ctx, ev);
}

static void read_fixture(const char *name, struct hs_gc_stats *s)
{
	struct hs_nettrace_ops ops = { .ctx = s, .header = on_header, .event = on_event };
	struct hs_diag d = HS_DIAG_INIT(name);
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/dotnet/%s", HS_TEST_DATA, name);
	f = strstr(name, ".zip") ? hs_zip_open_entry(path, ".nettrace", NULL, &d) :
	    fopen(path, "rb");
	assert_non_null(f);
	hs_gc_stats_init(s);
	assert_int_equal(hs_nettrace_read(f, &ops, NULL, &d), 0);
	fclose(f);
	hs_gc_stats_finish(s);
}

/* allocs.truth: three GC.Collect() calls and no other GC (gc_count 3). */
static void check_three_induced(const struct hs_gc_stats *s)
{
	size_t i;

	assert_int_equal(s->nr, 3);
	assert_int_equal(s->nr_incomplete, 0);
	assert_int_equal(s->rollup[0].induced, 3);
	assert_int_equal(s->rollup[3].count, 3);
	for (i = 0; i < s->nr; i++) {
		const struct hs_gc_record *r = &s->gcs[i];

		assert_int_equal(r->index, i + 1);
		assert_int_equal(r->generation, 2);
		assert_int_equal(r->kind, HS_GC_NONCONCURRENT);
		assert_true(r->pause_ms > 0 && r->pause_ms < 1000);
		assert_true(r->suspend_ms >= 0 && r->suspend_ms <= r->pause_ms);
		assert_true(r->duration_ms > 0 && r->duration_ms <= r->pause_ms);
		assert_true(r->start_ms >= r->pause_start_ms);
		if (i)
			assert_true(r->pause_start_ms >= s->gcs[i - 1].pause_start_ms +
				    s->gcs[i - 1].pause_ms);
	}
	assert_true(s->pause_percent > 0 && s->pause_percent < 100);
}

static void fixture_allocs(void **state)
{
	struct hs_gc_stats s;

	(void)state;
	read_fixture("allocs.nettrace", &s);
	check_three_induced(&s);
	/*
	 * The program allocated 2.4 MB of Foo, 2.0 MB of arrays and 2.24 MB of
	 * strings before the first GC: the ticks before it say about that
	 * (one tick per ~100 KB), the arrays in the large object heap.
	 */
	assert_true(s.gcs[0].alloc_large >= 1900000 && s.gcs[0].alloc_large <= 2100000);
	assert_true(s.gcs[0].alloc_gen0 >= 4400000 && s.gcs[0].alloc_gen0 <= 5000000 + 300000);
	assert_true(s.has_alloc_ticks);
	/*
	 * Its heap history has the exact sizes before: the ten arrays in the
	 * LOH (2,000,240 bytes), Foo and strings (4,640,000) and the runtime's
	 * own in gen0; the peak is their sum.
	 */
	assert_int_equal(s.gcs[0].nr_heap_histories, 1);
	assert_true(s.gcs[0].before[HS_GC_LOH] >= 2000240 &&
		    s.gcs[0].before[HS_GC_LOH] < 2000240 + 100000);
	assert_true(s.gcs[0].before[HS_GC_GEN0] >= 4640000 &&
		    s.gcs[0].before[HS_GC_GEN0] < 4640000 + 1000000);
	assert_near(s.gcs[0].peak_bytes, s.gcs[0].before[0] + s.gcs[0].before[1] +
		    s.gcs[0].before[2] + s.gcs[0].before[3] + s.gcs[0].before[4], 1e-6);
	/* the later two find the heap the first left: gen0 empty, the rest survives */
	assert_true(s.gcs[2].survival[HS_GC_GEN2] > 50);
	assert_int_equal(s.gcs[2].heap.gen_size[0], 0);
	hs_gc_stats_release(&s);
}

/*
 * bgc.truth: tests/targets/dotnet-bgc asked for three background GCs after
 * two blocking ones, with a 1 MB gen0 budget: GC.CollectionCount(0) 79,
 * (1) 5, (2) 5; gen0 GCs ran while the background GCs marked.
 */
static void fixture_background(void **state)
{
	struct hs_gc_stats s;
	size_t i, j, bgcs = 0, fgcs = 0;

	(void)state;
	read_fixture("bgc.nettrace.zip", &s);
	assert_int_equal(s.nr, 79);
	assert_int_equal(s.rollup[3].count, 5);		/* gen2 */
	assert_int_equal(s.rollup[2].count + s.rollup[3].count, 5);	/* gen1 and above */
	assert_int_equal(s.nr_incomplete, 0);
	for (i = 0; i < s.nr; i++) {
		const struct hs_gc_record *r = &s.gcs[i];

		assert_true(r->pause_ms > 0);
		assert_true(r->suspend_ms >= 0 && r->suspend_ms <= r->pause_ms);
		if (r->kind == HS_GC_FOREGROUND) {
			/* during a background GC: the last one before it still runs */
			fgcs++;
			for (j = i; j-- > 0 && s.gcs[j].kind != HS_GC_BACKGROUND;)
				;
			assert_true(j < i);
			assert_true(r->start_ms < s.gcs[j].start_ms + s.gcs[j].duration_ms);
		}
		if (r->kind != HS_GC_BACKGROUND)
			continue;
		bgcs++;
		assert_int_equal(r->generation, 2);
		assert_int_equal(r->reason, 7);		/* InducedNotForced */
		/*
		 * The first (GC 4) ran whole inside its initial suspension; the
		 * others pause for less than they run, while gen0 GCs run.
		 */
		if (i == 3)
			assert_true(r->pause_ms >= r->duration_ms);
		else
			assert_true(r->pause_ms < r->duration_ms / 2);
		assert_true(r->peak_bytes > 0);
	}
	assert_int_equal(bgcs, 3);
	assert_true(fgcs >= 2);
	hs_gc_stats_release(&s);
}

static void fixture_zip_and_sampled(void **state)
{
	struct hs_gc_stats s;

	(void)state;
	read_fixture("allocs-rundown.nettrace.zip", &s);
	check_three_induced(&s);
	hs_gc_stats_release(&s);
	/* recorded without AllocationTick: the allocated amounts are unknown */
	read_fixture("allocs-sampled.nettrace", &s);
	check_three_induced(&s);
	assert_false(s.has_alloc_ticks);
	hs_gc_stats_release(&s);
}

/* The loader: a zip, a plain file, and what is not a .nettrace. */
static void load(void **state)
{
	struct hs_gc_stats s;
	struct hs_gc_load_info info;
	struct hs_diag d = HS_DIAG_INIT("x");
	char path[1024];

	(void)state;
	snprintf(path, sizeof(path), "%s/dotnet/allocs-rundown.nettrace.zip", HS_TEST_DATA);
	assert_int_equal(hs_gc_stats_load(path, &s, &info, &d), 0);
	assert_int_equal(s.nr, 3);
	assert_true(info.pid > 0);
	assert_false(info.truncated);
	hs_gc_stats_release(&s);
	snprintf(path, sizeof(path), "%s/dotnet/allocs.truth", HS_TEST_DATA);
	assert_int_equal(hs_gc_stats_load(path, &s, &info, &d), -EINVAL);
	assert_true(info.not_nettrace);
	hs_gc_stats_release(&s);
	snprintf(path, sizeof(path), "%s/dotnet/no-such.nettrace", HS_TEST_DATA);
	assert_int_equal(hs_gc_stats_load(path, &s, &info, &d), -ENOENT);
	assert_false(info.not_nettrace);
	hs_gc_stats_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_blocking_gc),
		cmocka_unit_test(gens_and_rollup),
		cmocka_unit_test(background_gc),
		cmocka_unit_test(ephemeral_at_bgc_start),
		cmocka_unit_test(bgc_inside_its_suspension),
		cmocka_unit_test(heap_histories),
		cmocka_unit_test(missing_and_cut_off),
		cmocka_unit_test(short_payloads_ignored),
		cmocka_unit_test(names),
		cmocka_unit_test(fixture_allocs),
		cmocka_unit_test(fixture_background),
		cmocka_unit_test(fixture_zip_and_sampled),
		cmocka_unit_test(load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
