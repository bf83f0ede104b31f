/*
 * stack_source - interned frames and stacks, columnar samples.
 */
#include "model/stack_source.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME_BYTES ((size_t)4 << 30)	/* 4 GiB of frame names */

void hs_source_init(struct hs_stack_source *src)
{
	memset(src, 0, sizeof(*src));
	hs_strtab_init(&src->frames, MAX_NAME_BYTES);
	hs_strtab_init(&src->files, MAX_NAME_BYTES);
}

void hs_source_defaults_release(struct hs_source_defaults *d)
{
	hs_free(d->start);
	hs_free(d->end);
	hs_free(d->group);
	hs_free(d->fold);
	hs_free(d->fold_pct);
	hs_free(d->inc);
	hs_free(d->exc);
	hs_free(d->notes);
	hs_free(d->warning);
	memset(d, 0, sizeof(*d));
}

void hs_source_release(struct hs_stack_source *src)
{
	if (!src)
		return;
	hs_strtab_release(&src->frames);
	hs_free(src->stack_frame);
	hs_free(src->stack_caller);
	hs_free(src->stack_depth);
	hs_free(src->stack_slot);
	hs_free(src->time);
	hs_free(src->metric);
	hs_free(src->count);
	hs_free(src->stack);
	hs_free(src->metric_unit);
	hs_source_defaults_release(&src->defaults);
	hs_strtab_release(&src->files);
	hs_free(src->loc_file);
	hs_free(src->loc_line);
	hs_free(src->loc_slot);
	hs_free(src->stack_loc);
	hs_source_init(src);
}

int hs_source_intern_frame(struct hs_stack_source *src, const char *name,
			   size_t len, uint32_t *frame)
{
	return hs_strtab_intern(&src->frames, name, len, frame);
}

int hs_source_rename_frame(struct hs_stack_source *src, uint32_t frame,
			   const char *name, size_t len)
{
	return hs_strtab_rename(&src->frames, frame, name, len);
}

static size_t stack_slot(const struct hs_stack_source *src, uint32_t frame,
			 uint32_t caller, uint32_t loc)
{
	size_t mask = src->nr_stack_slot - 1;
	uint64_t h = hs_hash_pair(frame, caller);
	size_t i;

	if (loc)
		h ^= hs_hash_u64(loc);
	i = (size_t)h & mask;
	while (src->stack_slot[i]) {
		uint32_t id = src->stack_slot[i] - 1;

		if (src->stack_frame[id] == frame && src->stack_caller[id] == caller &&
		    hs_source_stack_loc(src, id) == loc)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

static int grow_stack_index(struct hs_stack_source *src)
{
	size_t n = src->nr_stack_slot ? 2 * src->nr_stack_slot : 1024;
	uint32_t *slot = hs_calloc(n, sizeof(*slot));
	size_t id;

	if (!slot)
		return -ENOMEM;
	hs_free(src->stack_slot);
	src->stack_slot = slot;
	src->nr_stack_slot = n;
	for (id = 0; id < src->nr_stacks; id++) {
		size_t i = stack_slot(src, src->stack_frame[id], src->stack_caller[id],
				      hs_source_stack_loc(src, (uint32_t)id));

		src->stack_slot[i] = (uint32_t)id + 1;
	}
	return 0;
}

static int grow_stacks(struct hs_stack_source *src)
{
	size_t need = src->nr_stacks + 1;
	size_t a1 = src->alloc_stacks, a2 = src->alloc_stacks, a3 = src->alloc_stacks;

	if (need <= src->alloc_stacks)
		return 0;
	if (HS_GROW(src->stack_frame, need, a1) ||
	    HS_GROW(src->stack_caller, need, a2) ||
	    HS_GROW(src->stack_depth, need, a3))
		return -ENOMEM;
	if (src->stack_loc) {
		uint32_t *p = hs_realloc(src->stack_loc, a1 * sizeof(uint32_t));

		if (!p)
			return -ENOMEM;
		memset(p + src->alloc_stacks, 0, (a1 - src->alloc_stacks) * sizeof(uint32_t));
		src->stack_loc = p;
	}
	/* all grew by the same rule from the same capacity */
	src->alloc_stacks = a1;
	return 0;
}

int hs_source_intern_stack(struct hs_stack_source *src, uint32_t frame,
			   uint32_t caller, uint32_t *stack)
{
	return hs_source_intern_stack_loc(src, frame, caller, 0, stack);
}

int hs_source_intern_stack_loc(struct hs_stack_source *src, uint32_t frame,
			       uint32_t caller, uint32_t loc, uint32_t *stack)
{
	size_t i;
	uint32_t id;

	if (frame >= hs_source_nr_frames(src) ||
	    (caller != HS_NO_STACK && caller >= src->nr_stacks) || loc > src->nr_locs)
		return -EINVAL;
	if (loc && !src->stack_loc) {
		src->stack_loc = hs_calloc(src->alloc_stacks ? src->alloc_stacks : 1,
					   sizeof(uint32_t));
		if (!src->stack_loc)
			return -ENOMEM;
	}
	if (2 * (src->nr_stacks + 1) > src->nr_stack_slot && grow_stack_index(src))
		return -ENOMEM;
	i = stack_slot(src, frame, caller, loc);
	if (src->stack_slot[i]) {
		*stack = src->stack_slot[i] - 1;
		return 0;
	}
	if (src->nr_stacks >= UINT32_MAX - 1)
		return -E2BIG;
	if (grow_stacks(src))
		return -ENOMEM;
	id = (uint32_t)src->nr_stacks++;
	src->stack_frame[id] = frame;
	src->stack_caller[id] = caller;
	src->stack_depth[id] = caller == HS_NO_STACK ? 1 : src->stack_depth[caller] + 1;
	if (src->stack_loc)
		src->stack_loc[id] = loc;
	src->stack_slot[i] = id + 1;
	*stack = id;
	return 0;
}

static size_t loc_slot(const struct hs_stack_source *src, uint32_t file, uint32_t line)
{
	size_t mask = src->nr_loc_slot - 1;
	size_t i = (size_t)hs_hash_pair(file, line) & mask;

	while (src->loc_slot[i]) {
		uint32_t k = src->loc_slot[i] - 1;

		if (src->loc_file[k] == file && src->loc_line[k] == line)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

int hs_source_intern_loc(struct hs_stack_source *src, const char *file, size_t len,
			 uint32_t line, uint32_t *loc)
{
	uint32_t f;
	size_t i, a;
	int err = hs_strtab_intern(&src->files, file, len, &f);

	if (err)
		return err;
	if (2 * (src->nr_locs + 1) > src->nr_loc_slot) {
		size_t n = src->nr_loc_slot ? 2 * src->nr_loc_slot : 256, k;
		uint32_t *slot = hs_calloc(n, sizeof(uint32_t));

		if (!slot)
			return -ENOMEM;
		hs_free(src->loc_slot);
		src->loc_slot = slot;
		src->nr_loc_slot = n;
		for (k = 0; k < src->nr_locs; k++)
			src->loc_slot[loc_slot(src, src->loc_file[k], src->loc_line[k])] =
				(uint32_t)k + 1;
	}
	i = loc_slot(src, f, line);
	if (src->loc_slot[i]) {
		*loc = src->loc_slot[i];
		return 0;
	}
	if (src->nr_locs >= UINT32_MAX - 1)
		return -E2BIG;
	a = src->alloc_locs;
	if (HS_GROW(src->loc_file, src->nr_locs + 1, a))
		return -ENOMEM;
	a = src->alloc_locs;
	if (HS_GROW(src->loc_line, src->nr_locs + 1, a))
		return -ENOMEM;
	src->alloc_locs = a;
	src->loc_file[src->nr_locs] = f;
	src->loc_line[src->nr_locs] = line;
	*loc = (uint32_t)++src->nr_locs;
	src->loc_slot[i] = *loc;
	return 0;
}

const char *hs_source_loc(const struct hs_stack_source *src, uint32_t loc,
			  uint32_t *line)
{
	if (!loc || loc > src->nr_locs)
		return NULL;
	*line = src->loc_line[loc - 1];
	return hs_strtab_get(&src->files, src->loc_file[loc - 1]);
}

int hs_source_intern_path(struct hs_stack_source *src, const uint32_t *frames,
			  size_t n, uint32_t *stack)
{
	uint32_t s = HS_NO_STACK;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		err = hs_source_intern_stack(src, frames[i], s, &s);
		if (err)
			return err;
	}
	*stack = s;
	return 0;
}

int hs_source_reserve_samples(struct hs_stack_source *src, size_t n)
{
	size_t need = src->nr_samples + n;
	size_t a1 = src->alloc_samples, a2 = a1, a3 = a1, a4 = a1;

	if (need <= src->alloc_samples)
		return 0;
	if (HS_GROW(src->time, need, a1) || HS_GROW(src->metric, need, a2) ||
	    HS_GROW(src->count, need, a3) || HS_GROW(src->stack, need, a4))
		return -ENOMEM;
	src->alloc_samples = a1;
	return 0;
}

int hs_source_add_sample(struct hs_stack_source *src, int64_t time_ns,
			 double metric, double count, uint32_t stack)
{
	size_t i;

	if (stack != HS_NO_STACK && stack >= src->nr_stacks)
		return -EINVAL;
	if (src->nr_samples == src->alloc_samples &&
	    hs_source_reserve_samples(src, 1))
		return -ENOMEM;
	i = src->nr_samples++;
	src->time[i] = time_ns;
	src->metric[i] = metric;
	src->count[i] = count;
	src->stack[i] = stack;
	return 0;
}

size_t hs_source_stack_frames(const struct hs_stack_source *src, uint32_t stack,
			      uint32_t *out, size_t max)
{
	size_t depth = hs_source_depth(src, stack);
	size_t n = depth < max ? depth : max;
	size_t i = n;

	while (i > 0) {
		out[--i] = src->stack_frame[stack];
		stack = src->stack_caller[stack];
	}
	return depth;
}

const char *hs_frame_display(const char *full)
{
	const char *bang = strchr(full, '!');
	const char *p, *start = full;

	if (!bang)
		return full;
	for (p = full; p < bang; p++)
		if (*p == '/' || *p == '\\')
			start = p + 1;
	return start;
}

void hs_source_totals(const struct hs_stack_source *src, double *metric,
		      double *count)
{
	double m = 0, c = 0;
	size_t i;

	for (i = 0; i < src->nr_samples; i++) {
		m += src->metric[i];
		c += src->count[i];
	}
	*metric = m;
	*count = c;
}

void hs_source_time_range(const struct hs_stack_source *src, int64_t *first,
			  int64_t *last)
{
	int64_t lo = 0, hi = 0;
	size_t i;

	for (i = 0; i < src->nr_samples; i++) {
		if (!i || src->time[i] < lo)
			lo = src->time[i];
		if (!i || src->time[i] > hi)
			hi = src->time[i];
	}
	*first = lo;
	*last = hi;
}

size_t hs_source_memory(const struct hs_stack_source *src)
{
	return hs_strtab_memory(&src->frames) + hs_strtab_memory(&src->files) +
	       src->alloc_locs * 2 * sizeof(uint32_t) +
	       src->nr_loc_slot * sizeof(uint32_t) +
	       src->alloc_stacks * (src->stack_loc ? 4 : 3) * sizeof(uint32_t) +
	       src->nr_stack_slot * sizeof(uint32_t) +
	       src->alloc_samples * (sizeof(int64_t) + 2 * sizeof(double) +
				     sizeof(uint32_t));
}

double hs_source_default_number(const char *s)
{
	char *end;
	double v;

	if (!s)
		return NAN;
	v = strtod(s, &end);
	return end != s && !*end && isfinite(v) ? v : NAN;
}
