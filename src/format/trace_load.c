/*
 * trace_load - a whole trace in memory (see trace_reader.h): the walk
 * (trace_walk.h) fills its columns in file order, then they are sorted by
 * time and the equal-time events of several threads ordered
 * (trace_ties.h); the accessors of a loaded trace, and its release.
 */
#include "format/trace_reader.h"
#include "format/trace_symbols.h"
#include "format/trace_ties.h"
#include "format/trace_walk.h"
#include "common/alloc.h"
#include "common/u64map.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stable merge sort of the event permutation @idx by time. */
static void merge_sort(uint32_t *idx, uint32_t *tmp, size_t n, const int64_t *time)
{
	size_t width, i;

	for (width = 1; width < n; width *= 2) {
		for (i = 0; i < n; i += 2 * width) {
			size_t lo = i, mid = i + width < n ? i + width : n;
			size_t hi = i + 2 * width < n ? i + 2 * width : n;
			size_t a = lo, b = mid, k = lo;

			if (mid >= hi || time[idx[mid - 1]] <= time[idx[mid]]) {
				memcpy(tmp + lo, idx + lo, (hi - lo) * sizeof(*idx));
				continue;
			}
			while (a < mid && b < hi)
				tmp[k++] =
				    time[idx[b]] < time[idx[a]] ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[k++] = idx[a++];
			while (b < hi)
				tmp[k++] = idx[b++];
		}
		memcpy(idx, tmp, n * sizeof(*idx));
	}
}

#define PERMUTE(col, type)                                                               \
	do {                                                                             \
		type *dst = (type *)scratch;                                             \
		for (i = 0; i < n; i++)                                                  \
			dst[i] = t->col[idx[i]];                                         \
		memcpy(t->col, dst, n * sizeof(type));                                   \
	} while (0)

static int sort_events(struct hs_trace *t)
{
	size_t n = t->nr_events, i;
	uint32_t *idx, *tmp;
	void *scratch;

	for (i = 1; i < n; i++)
		if (t->time[i] < t->time[i - 1])
			break;
	if (i >= n)
		return 0;
	idx = hs_malloc(n * sizeof(uint32_t));
	tmp = hs_malloc(n * sizeof(uint32_t));
	scratch = hs_malloc(n * sizeof(uint64_t));
	if (!idx || !tmp || !scratch) {
		hs_free(idx);
		hs_free(tmp);
		hs_free(scratch);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	merge_sort(idx, tmp, n, t->time);
	PERMUTE(time, int64_t);
	PERMUTE(addr, uint64_t);
	PERMUTE(size, uint64_t);
	PERMUTE(stack, uint32_t);
	PERMUTE(thread, uint32_t);
	PERMUTE(op, uint8_t);
	PERMUTE(fn, uint8_t);
	hs_free(idx);
	hs_free(tmp);
	hs_free(scratch);
	return 0;
}

void hs_trace_event_get(const struct hs_trace *t, size_t i, struct hs_trace_event *e)
{
	e->time = t->time[i];
	e->addr = t->addr[i];
	e->size = t->size[i];
	e->node = t->stack[i];
	e->thread = t->thread[i];
	e->op = t->op[i];
	e->fn = t->fn[i];
}

int hs_trace_feed(const struct hs_trace *t, const struct hs_trace_sink *sink)
{
	struct hs_trace_event batch[256];
	size_t i = 0, n;
	int err = 0;

	while (i < t->nr_events && !err) {
		for (n = 0; n < 256 && i < t->nr_events; n++, i++)
			hs_trace_event_get(t, i, &batch[n]);
		err = sink->events(sink->ctx, batch, n);
	}
	return err;
}

/* The reverse of hs_trace_event_get(). */
static void event_put(struct hs_trace *t, size_t i, const struct hs_trace_event *e)
{
	t->time[i] = e->time;
	t->addr[i] = e->addr;
	t->size[i] = e->size;
	t->stack[i] = (uint32_t)e->node;
	t->thread[i] = e->thread;
	t->op[i] = e->op;
	t->fn[i] = e->fn;
}

/* Address 0 is never live. */
static int map_live(void *ctx, uint64_t a)
{
	return a && hs_u64map_has(ctx, a);
}

/* hs_order_ties() over the ticks of a loaded trace with several threads' events. */
static int fix_ties(struct hs_trace *t)
{
	struct hs_tie_work w;
	struct hs_u64map live = HS_U64MAP_INIT;
	struct hs_trace_event *grp = NULL;
	size_t alloc_grp = 0, i = 0, n = t->nr_events, k;
	int err = 0;

	if (t->nr_threads < 2)
		return 0;
	memset(&w, 0, sizeof(w));
	while (i < n && !err) {
		size_t j = i + 1;
		int multi = 0;

		while (j < n && t->time[j] == t->time[i]) {
			multi |= t->thread[j] != t->thread[i];
			j++;
		}
		if (multi) {
			if (HS_GROW(grp, j - i, alloc_grp)) {
				err = -ENOMEM;
				break;
			}
			for (k = i; k < j; k++)
				hs_trace_event_get(t, k, &grp[k - i]);
			err = hs_order_ties(&w, grp, j - i, map_live, &live);
			if (err > 0)
				for (k = i; k < j; k++)
					event_put(t, k, &grp[k - i]);
			if (err > 0)
				err = 0;
		}
		for (k = i; k < j && !err; k++) {
			if (!t->addr[k])
				continue;
			if (t->op[k] == HS_OP_ALLOC)
				err = hs_u64map_put(&live, t->addr[k], 1, NULL) < 0
					  ? -ENOMEM
					  : 0;
			else if (t->op[k] == HS_OP_FREE)
				hs_u64map_del(&live, t->addr[k], NULL);
		}
		i = j;
	}
	hs_free(grp);
	hs_tie_work_release(&w);
	hs_u64map_release(&live);
	return err;
}

/* The loaded columns in time order, ties ordered. */
static int in_time_order(struct hs_trace *t)
{
	int err = sort_events(t);

	return err ? err : fix_ties(t);
}

static void trace_init(struct hs_trace *t)
{
	memset(t, 0, sizeof(*t));
}

/* Load the opened @r into @t in time order, then close @r; @t is released on failure. */
static int load_opened(struct hs_trace_reader *r, struct hs_trace *t, unsigned flags,
		       struct hs_diag *diag)
{
	int err = 0;

	if ((flags & HS_TRACE_SKIP_EVENT_CHUNKS) && (flags & HS_TRACE_NO_EVENTS))
		err = hs_trace_reader_skip_events(r);
	if (err >= 0)
		err = hs__trace_walk(r, t, flags, NULL, diag);
	if (!err)
		err = in_time_order(t);
	hs_trace_reader_close(r);
	if (err)
		hs_trace_release(t);
	return err;
}

int hs_trace_load(const char *path, struct hs_trace *t, struct hs_diag *diag)
{
	return hs_trace_load_flags(path, t, 0, diag);
}

int hs_trace_load_flags(const char *path, struct hs_trace *t, unsigned flags,
			struct hs_diag *diag)
{
	struct hs_trace_reader r;
	int err;

	trace_init(t);
	err = hs_trace_reader_open(&r, path, diag);
	return err ? err : load_opened(&r, t, flags, diag);
}

int hs_trace_load_mem(const void *data, size_t n, const char *name, struct hs_trace *t,
		      struct hs_diag *diag)
{
	struct hs_trace_reader r;
	int err;

	trace_init(t);
	err = hs_trace_reader_open_mem(&r, data, n, name, diag);
	return err ? err : load_opened(&r, t, 0, diag);
}

void hs_trace_release(struct hs_trace *t)
{
	size_t i;

	hs_trace_info_release(&t->info);
	hs_free(t->node_addr);
	hs_free(t->node_parent);
	hs_free(t->node_module);
	hs_free(t->node_id);
	hs_free(t->node_ticks);
	hs_idindex_release(&t->node_ix);
	for (i = 0; i < t->nr_modules; i++) {
		hs_free(t->modules[i].path);
		hs_free(t->modules[i].build_id);
	}
	hs_free(t->modules);
	for (i = 0; i < t->nr_threads; i++)
		hs_free(t->threads[i].name);
	hs_free(t->threads);
	hs_free(t->time);
	hs_free(t->addr);
	hs_free(t->size);
	hs_free(t->stack);
	hs_free(t->thread);
	hs_free(t->op);
	hs_free(t->fn);
	hs_free(t->rss_time);
	hs_free(t->rss_bytes);
	hs_free(t->clock_ticks);
	hs_free(t->clock_ns);
	hs__trace_syms_release(&t->syms);
	memset(t, 0, sizeof(*t));
}

size_t hs_trace_stack(const struct hs_trace *t, uint32_t node, uint32_t *out, size_t max)
{
	size_t n = 0;

	while (node < t->nr_nodes && n < max) {
		out[n++] = node;
		node = t->node_parent[node];
	}
	/* a parent that was referenced but never defined */
	if (node == HS_TRACE_MISSING && n < max)
		out[n++] = HS_TRACE_NONE;
	return n;
}

/*
 * "@prefix!0x@a" (lowercase hex) into @buf of @n bytes, cut as snprintf()
 * cuts: the views name every frame of every node of an unsymbolized trace
 * this way, where snprintf()'s parsing of its format was most of the cost.
 */
static void name_at(char *buf, size_t n, const char *prefix, uint64_t a)
{
	char tail[3 + 16];
	size_t lp = strlen(prefix), lt = 3, k, d = 0;
	uint64_t x = a;

	if (!n)
		return;
	do {
		d++;
		x >>= 4;
	} while (x);
	memcpy(tail, "!0x", 3);
	for (k = d; k-- > 0; a >>= 4)
		tail[3 + k] = "0123456789abcdef"[a & 15];
	lt += d;
	if (lp > n - 1)
		lp = n - 1;
	memcpy(buf, prefix, lp);
	k = lt < n - 1 - lp ? lt : n - 1 - lp;
	memcpy(buf + lp, tail, k);
	buf[lp + k] = '\0';
}

const char *hs_trace_frame_name(const struct hs_trace *t, uint32_t node, char *buf,
				size_t n)
{
	uint64_t a;
	uint32_t m;

	if (node >= t->nr_nodes || !t->node_addr[node]) {
		snprintf(buf, n, "BROKEN");
		return buf;
	}
	a = t->node_addr[node];
	m = t->node_module[node];
	if (m == HS_TRACE_NONE)
		name_at(buf, n, "[unknown]", a);
	else
		name_at(buf, n, t->modules[m].path, a - t->modules[m].bias);
	return buf;
}

double hs_trace_weight(const struct hs_trace *t, uint64_t size)
{
	double p;

	if (!t->info.sample_bytes)
		return 1.0;
	p = -expm1(-(double)size / (double)t->info.sample_bytes);
	return p > 0 ? 1.0 / p : 1.0;
}
