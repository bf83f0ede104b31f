/*
 * gc_stats - per-GC records from the runtime's GC events, in one pass
 * (see gc_stats.h for what is measured and how).
 */
#include "dotnet/gc_stats.h"
#include "common/alloc.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* GCSuspendEEBegin's reasons that start a GC's pause. */
#define SUSPEND_FOR_GC 1
#define SUSPEND_FOR_GC_PREP 6

static const char *const reason_names[] = {
    "AllocSmall",	 "Induced",
    "LowMemory",	 "Empty",
    "AllocLarge",	 "OutOfSpaceSOH",
    "OutOfSpaceLOH",	 "InducedNotForced",
    "Internal",		 "InducedLowMemory",
    "InducedCompacting", "LowMemoryHost",
    "PMFullGC",		 "LowMemoryHostBlocking",
};

const char *hs_gc_reason_name(uint32_t reason, char *buf, size_t n)
{
	if (reason < sizeof(reason_names) / sizeof(reason_names[0]))
		return reason_names[reason];
	snprintf(buf, n, "Reason%u", reason);
	return buf;
}

int hs_gc_reason_induced(uint32_t reason)
{
	return reason == 1 || reason == 7 || reason == 9 || reason == 10;
}

const char *hs_gc_kind_name(uint32_t kind, char *buf, size_t n)
{
	switch (kind) {
	case HS_GC_NONCONCURRENT:
		return "NonConcurrentGC";
	case HS_GC_BACKGROUND:
		return "BackgroundGC";
	case HS_GC_FOREGROUND:
		return "ForegroundGC";
	}
	snprintf(buf, n, "Kind%u", kind);
	return buf;
}

char hs_gc_kind_letter(uint32_t kind)
{
	return kind == HS_GC_NONCONCURRENT ? 'N'
	       : kind == HS_GC_BACKGROUND  ? 'B'
	       : kind == HS_GC_FOREGROUND  ? 'F'
					   : '?';
}

void hs_gc_stats_init(struct hs_gc_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->qpc_per_ms = 1e6; /* nanoseconds until a header says otherwise */
	s->pointer_size = 8;
	s->suspend_begin_ms = NAN;
	s->suspend_end_ms = NAN;
}

void hs_gc_stats_release(struct hs_gc_stats *s)
{
	hs_free(s->gcs);
	s->gcs = NULL;
	s->nr = s->alloc = 0;
}

void hs_gc_stats_header(struct hs_gc_stats *s, const struct hs_nettrace_header *h)
{
	s->have_header = 1;
	s->qpc_origin = h->sync_qpc;
	s->qpc_per_ms = h->qpc_freq > 0 ? (double)h->qpc_freq / 1e3 : 1e6;
	if (h->pointer_size == 4 || h->pointer_size == 8)
		s->pointer_size = h->pointer_size;
}

static double event_ms(const struct hs_gc_stats *s, int64_t timestamp)
{
	return (double)(timestamp - s->qpc_origin) / s->qpc_per_ms;
}

/* The GC the next event is about: the last one while it runs, else the running background
 * GC. */
static struct hs_gc_record *current_gc(struct hs_gc_stats *s)
{
	if (s->nr && !s->gcs[s->nr - 1].complete)
		return &s->gcs[s->nr - 1];
	return s->current_bgc ? &s->gcs[s->current_bgc - 1] : NULL;
}

static void on_suspend_begin(struct hs_gc_stats *s, const struct hs_nettrace_event *ev,
			     double t)
{
	struct hs_clr_gc_suspend sus;

	if (hs_clr_gc_suspend(ev, &sus))
		return;
	if (sus.reason != SUSPEND_FOR_GC && sus.reason != SUSPEND_FOR_GC_PREP)
		return; /* the debugger, shutdown, ...: not a GC's pause */
	s->suspend_begin_ms = t;
	s->suspend_end_ms = NAN;
	s->suspend_thread = ev->thread_id;
	s->suspend_for_bgc = sus.reason == SUSPEND_FOR_GC_PREP;
}

static int tracked(const struct hs_gc_stats *s, const struct hs_nettrace_event *ev)
{
	return !isnan(s->suspend_begin_ms) && ev->thread_id == s->suspend_thread;
}

static void on_suspend_end(struct hs_gc_stats *s, const struct hs_nettrace_event *ev,
			   double t)
{
	if (!tracked(s, ev))
		return;
	s->suspend_end_ms = t;
	if (s->suspend_for_bgc && s->current_bgc) {
		struct hs_gc_record *bgc = &s->gcs[s->current_bgc - 1];

		bgc->suspend_ms = (isnan(bgc->suspend_ms) ? 0 : bgc->suspend_ms) +
				  (t - s->suspend_begin_ms);
	}
}

static int on_gc_start(struct hs_gc_stats *s, const struct hs_nettrace_event *ev,
		       double t)
{
	struct hs_clr_gc_start st;
	struct hs_gc_record *r, *last;
	struct hs_gc_record *grown;
	int ephemeral_in_bgc;

	if (hs_clr_gc_start(ev, &st))
		return 0;
	last = s->nr ? &s->gcs[s->nr - 1] : NULL;
	if (last && last->number == st.count)
		return 0; /* the same GC announced twice */
	grown = hs_grow(s->gcs, sizeof(*s->gcs), s->nr + 1, &s->alloc);
	if (!grown)
		return -ENOMEM;
	s->gcs = grown;
	last = s->nr ? &s->gcs[s->nr - 1] : NULL;
	r = &s->gcs[s->nr];
	memset(r, 0, sizeof(*r));
	r->index = (uint32_t)s->nr + 1;
	r->number = st.count;
	r->generation = st.depth;
	r->reason = st.reason;
	r->kind = st.type;
	r->start_ms = t;
	r->pause_ms = NAN;
	r->duration_ms = NAN;
	r->alloc_gen0 = s->tick_small;
	r->alloc_large = s->tick_large;
	s->tick_small = s->tick_large = 0;
	/*
	 * A background GC may begin with an ephemeral GC inside its own
	 * suspension: that one's pause starts at its GCStart.
	 */
	ephemeral_in_bgc = last && last->kind == HS_GC_BACKGROUND && !last->complete &&
			   st.type == HS_GC_NONCONCURRENT;
	if (ephemeral_in_bgc) {
		r->pause_start_ms = t;
		r->suspend_ms = 0;
	} else if (!isnan(s->suspend_begin_ms)) {
		r->pause_start_ms = s->suspend_begin_ms;
		r->suspend_ms = (isnan(s->suspend_end_ms) ? t : s->suspend_end_ms) -
				s->suspend_begin_ms;
	} else {
		r->pause_start_ms = t; /* the suspension is not in the trace */
		r->suspend_ms = NAN;
	}
	s->nr++;
	if (r->kind == HS_GC_BACKGROUND) {
		s->current_bgc = s->nr;
		/* its initial suspension is part of its pause even if an ephemeral GC
		 * takes the restart */
		r->pause_ms = r->suspend_ms;
	}
	return 0;
}

static void on_gc_end(struct hs_gc_stats *s, const struct hs_nettrace_event *ev, double t)
{
	struct hs_clr_gc_end end;
	struct hs_gc_record *r = NULL;
	size_t i;

	if (hs_clr_gc_end(ev, &end))
		return;
	/* by number: a background GC ends after the foreground GCs it let run */
	for (i = s->nr; i-- > 0 && s->nr - i <= 8;)
		if (s->gcs[i].number == end.count) {
			r = &s->gcs[i];
			break;
		}
	if (!r)
		r = current_gc(s);
	if (r && isnan(r->duration_ms))
		r->duration_ms = t - r->start_ms;
}

static void on_heap_stats(struct hs_gc_stats *s, const struct hs_nettrace_event *ev)
{
	struct hs_gc_record *r = current_gc(s);
	struct hs_clr_gc_heap_stats hs;

	if (!r || hs_clr_gc_heap_stats(ev, &hs))
		return;
	r->heap = hs;
	r->has_heap_stats = 1;
	if (r->kind == HS_GC_BACKGROUND) {
		if (s->current_bgc && &s->gcs[s->current_bgc - 1] == r)
			s->current_bgc = 0;
		/*
		 * Its end in its own initial suspension (the runtime may do the
		 * whole of a requested background GC there): the restart still
		 * to come ends its pause.
		 */
		if (isnan(s->suspend_begin_ms) || s->suspend_for_bgc)
			r->complete = 1;
	} else if (!isnan(r->pause_ms)) {
		r->complete = 1;
	}
}

static void on_per_heap_history(struct hs_gc_stats *s, const struct hs_nettrace_event *ev)
{
	struct hs_gc_record *r = current_gc(s);
	struct hs_clr_gc_per_heap ph;
	int g;

	if (!r || hs_clr_gc_per_heap(ev, s->pointer_size, &ph))
		return;
	r->nr_heap_histories++;
	for (g = 0; g < HS_GC__NR_GENS && (uint32_t)g < ph.nr_gens; g++)
		r->size_before[g] += ph.size_before[g];
}

static void on_restart_end(struct hs_gc_stats *s, const struct hs_nettrace_event *ev,
			   double t)
{
	struct hs_gc_record *r;

	if (!tracked(s, ev))
		return;
	r = current_gc(s);
	if (r && r->kind == HS_GC_BACKGROUND) {
		if (s->suspend_for_bgc)
			r->pause_ms = (isnan(r->pause_ms) ? 0 : r->pause_ms) +
				      (t - s->suspend_begin_ms);
		else
			r->pause_ms = t - r->pause_start_ms;
		if (r->has_heap_stats)
			r->complete = 1;
	} else if (r) {
		r->pause_ms = t - r->pause_start_ms;
		if (r->has_heap_stats)
			r->complete = 1;
	}
	s->suspend_begin_ms = NAN;
	s->suspend_end_ms = NAN;
}

int hs_gc_stats_event(struct hs_gc_stats *s, const struct hs_nettrace_event *ev)
{
	double t = event_ms(s, ev->timestamp);
	uint64_t amount;
	uint32_t kind;

	if (!s->have_event || t < s->first_ms)
		s->first_ms = t;
	if (!s->have_event || t > s->last_ms)
		s->last_ms = t;
	s->have_event = 1;
	if (strcmp(ev->meta->provider, HS_CLR_PROVIDER))
		return 0;
	switch (ev->meta->event_id) {
	case HS_CLR_GC_SUSPEND_EE_BEGIN:
		on_suspend_begin(s, ev, t);
		break;
	case HS_CLR_GC_SUSPEND_EE_END:
		on_suspend_end(s, ev, t);
		break;
	case HS_CLR_GC_START:
		return on_gc_start(s, ev, t);
	case HS_CLR_GC_END:
		on_gc_end(s, ev, t);
		break;
	case HS_CLR_GC_HEAP_STATS:
		on_heap_stats(s, ev);
		break;
	case HS_CLR_GC_RESTART_EE_END:
		on_restart_end(s, ev, t);
		break;
	case HS_CLR_GC_PER_HEAP_HISTORY:
		on_per_heap_history(s, ev);
		break;
	case HS_CLR_GC_ALLOCATION_TICK:
		if (hs_clr_alloc_amount(ev, &amount, &kind))
			break;
		s->has_alloc_ticks = 1;
		s->total_alloc_bytes += (double)amount;
		if (kind == HS_CLR_ALLOC_SMALL)
			s->tick_small += amount;
		else
			s->tick_large += amount;
		break;
	default:
		break;
	}
	return 0;
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

/*
 * The heap before @r, per generation: what its heap histories say, else
 * estimated from @prev (the last GC before it with heap stats, or NULL) as
 * PerfView does without them: gen0 is what was allocated since (or what
 * the last GC left, if more), the older generations are what the last GC
 * left.
 */
static void estimate_before(struct hs_gc_record *r, const struct hs_gc_record *prev)
{
	int g;

	if (r->nr_heap_histories) {
		for (g = 0; g < HS_GC__NR_GENS; g++)
			r->before[g] = (double)r->size_before[g];
		return;
	}
	for (g = 0; g < HS_GC__NR_GENS; g++)
		r->before[g] = 0;
	r->before[HS_GC_GEN0] = (double)r->alloc_gen0;
	if (!prev)
		return;
	r->before[HS_GC_GEN0] =
	    max2((double)prev->heap.gen_size[0], (double)r->alloc_gen0);
	r->before[HS_GC_GEN1] = (double)prev->heap.gen_size[1];
	r->before[HS_GC_GEN2] = (double)prev->heap.gen_size[2];
	for (g = HS_GC_LOH; g <= HS_GC_POH; g++)
		r->before[g] = max2((double)prev->heap.gen_size[g],
				    r->has_heap_stats ? (double)r->heap.gen_size[g] : 0);
}

static void derive(struct hs_gc_record *r, const struct hs_gc_record *prev)
{
	double before = 0;
	int g;

	estimate_before(r, prev);
	for (g = 0; g < HS_GC__NR_GENS; g++)
		before += r->before[g];
	r->after_bytes = NAN;
	r->promoted_bytes = NAN;
	r->peak_bytes = before;
	for (g = 0; g < HS_GC__NR_GENS; g++)
		r->survival[g] = NAN;
	if (!r->has_heap_stats)
		return;
	r->after_bytes = 0;
	r->promoted_bytes = 0;
	for (g = 0; g < HS_GC__NR_GENS; g++) {
		int collected =
		    g <= HS_GC_GEN2 ? (uint32_t)g <= r->generation : r->generation >= 2;

		r->after_bytes += (double)r->heap.gen_size[g];
		r->promoted_bytes += (double)r->heap.promoted[g];
		if (collected && r->before[g] > 0)
			r->survival[g] =
			    (double)r->heap.promoted[g] * 100.0 / r->before[g];
	}
	r->peak_bytes = max2(before, r->after_bytes);
}

static void add_to_rollup(struct hs_gc_rollup *u, const struct hs_gc_record *r)
{
	u->count++;
	if (hs_gc_reason_induced(r->reason))
		u->induced++;
	if (!isnan(r->pause_ms)) {
		u->total_pause_ms += r->pause_ms;
		u->max_pause_ms = max2(u->max_pause_ms, r->pause_ms);
	}
	u->max_peak_bytes = max2(u->max_peak_bytes, r->peak_bytes);
	u->mean_peak_bytes += r->peak_bytes; /* sums until finish_rollup() */
	if (!isnan(r->after_bytes))
		u->mean_after_bytes += r->after_bytes;
	if (!isnan(r->promoted_bytes))
		u->total_promoted_bytes += r->promoted_bytes;
	u->total_alloc_bytes += (double)(r->alloc_gen0 + r->alloc_large);
}

void hs_gc_stats_finish(struct hs_gc_stats *s)
{
	const struct hs_gc_record *prev = NULL;
	size_t i, j, with_stats[4] = {0};
	int k;

	memset(s->rollup, 0, sizeof(s->rollup));
	s->total_pause_ms = s->max_pause_ms = s->max_peak_bytes = 0;
	s->nr_incomplete = 0;
	for (i = 0; i < s->nr; i++) {
		derive(&s->gcs[i], prev);
		if (s->gcs[i].has_heap_stats)
			prev = &s->gcs[i];
	}
	for (i = 0; i < s->nr; i++) {
		struct hs_gc_record *r = &s->gcs[i];

		/* a background GC's heap grows while it runs: its peak is the largest
		 * meanwhile */
		if (r->kind == HS_GC_BACKGROUND && !isnan(r->duration_ms))
			for (j = i + 1; j < s->nr &&
					s->gcs[j].start_ms < r->start_ms + r->duration_ms;
			     j++)
				r->peak_bytes = max2(r->peak_bytes, s->gcs[j].peak_bytes);
		if (!r->complete)
			s->nr_incomplete++;
		if (!isnan(r->pause_ms)) {
			s->total_pause_ms += r->pause_ms;
			s->max_pause_ms = max2(s->max_pause_ms, r->pause_ms);
		}
		s->max_peak_bytes = max2(s->max_peak_bytes, r->peak_bytes);
		if (!isnan(r->after_bytes))
			s->max_peak_bytes = max2(s->max_peak_bytes, r->after_bytes);
		add_to_rollup(&s->rollup[0], r);
		with_stats[0] += r->has_heap_stats;
		if (r->generation <= 2) {
			add_to_rollup(&s->rollup[1 + r->generation], r);
			with_stats[1 + r->generation] += r->has_heap_stats;
		}
	}
	for (k = 0; k < 4; k++) {
		struct hs_gc_rollup *u = &s->rollup[k];

		u->mean_pause_ms = u->count ? u->total_pause_ms / u->count : 0;
		u->mean_peak_bytes = u->count ? u->mean_peak_bytes / u->count : 0;
		u->mean_after_bytes =
		    with_stats[k] ? u->mean_after_bytes / (double)with_stats[k] : 0;
	}
	s->duration_ms = s->have_event ? s->last_ms - s->first_ms : 0;
	s->pause_percent =
	    s->duration_ms > 0 ? s->total_pause_ms * 100.0 / s->duration_ms : 0;
}
