/*
 * stack_source - interned frames and stacks, columnar samples.
 */
#include "model/stack_source.h"
#include "model/frame_name.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME_BYTES ((size_t)4 << 30) /* 4 GiB of frame names */

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
	hs_idindex_release(&src->stack_index);
	hs_free(src->time);
	hs_free(src->metric);
	hs_free(src->count);
	hs_free(src->stack);
	hs_free(src->metric_unit);
	hs_free(src->view_name);
	hs_source_defaults_release(&src->defaults);
	hs_strtab_release(&src->files);
	hs_free(src->loc_file);
	hs_free(src->loc_line);
	hs_idindex_release(&src->loc_index);
	hs_free(src->stack_loc);
	hs_source_init(src);
}

int hs_source_intern_frame(struct hs_stack_source *src, const char *name, size_t len,
			   uint32_t *frame)
{
	return hs_strtab_intern(&src->frames, name, len, frame);
}

int hs_source_rename_frame(struct hs_stack_source *src, uint32_t frame, const char *name,
			   size_t len)
{
	return hs_strtab_rename(&src->frames, frame, name, len);
}

/* A stack to look up. */
struct stack_key {
	uint32_t frame, caller, loc;
};

static inline uint64_t stack_hash(const struct stack_key *k)
{
	uint64_t h = hs_hash_pair(k->frame, k->caller);

	return k->loc ? h ^ hs_hash_u64(k->loc) : h;
}

static int stack_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct hs_stack_source *src = ctx;
	const struct stack_key *k = key;

	return src->stack_frame[id] == k->frame && src->stack_caller[id] == k->caller &&
	       hs_source_stack_loc(src, id) == k->loc;
}

static int grow_stacks(struct hs_stack_source *src)
{
	size_t need = src->nr_stacks + 1;
	size_t a1 = src->alloc_stacks, a2 = src->alloc_stacks, a3 = src->alloc_stacks;

	if (need <= src->alloc_stacks)
		return 0;
	if (HS_GROW(src->stack_frame, need, a1) || HS_GROW(src->stack_caller, need, a2) ||
	    HS_GROW(src->stack_depth, need, a3))
		return -ENOMEM;
	if (src->stack_loc) {
		uint32_t *p = hs_realloc(src->stack_loc, a1 * sizeof(uint32_t));

		if (!p)
			return -ENOMEM;
		memset(p + src->alloc_stacks, 0,
		       (a1 - src->alloc_stacks) * sizeof(uint32_t));
		src->stack_loc = p;
	}
	/* all grew by the same rule from the same capacity */
	src->alloc_stacks = a1;
	return 0;
}

/* Stack @frame under @caller at @loc as a new id, not indexed. */
static int new_stack(struct hs_stack_source *src, uint32_t frame, uint32_t caller,
		     uint32_t loc, uint32_t *stack)
{
	uint32_t id;

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
	*stack = id;
	return 0;
}

int hs_source_intern_stack(struct hs_stack_source *src, uint32_t frame, uint32_t caller,
			   uint32_t *stack)
{
	return hs_source_intern_stack_loc(src, frame, caller, 0, stack);
}

int hs_source_intern_stack_loc(struct hs_stack_source *src, uint32_t frame,
			       uint32_t caller, uint32_t loc, uint32_t *stack)
{
	struct stack_key k = {frame, caller, loc};
	uint64_t h;
	size_t i;
	uint32_t id;
	int err;

	if (frame >= hs_source_nr_frames(src) ||
	    (caller != HS_NO_STACK && caller >= src->nr_stacks) || loc > src->nr_locs)
		return -EINVAL;
	if (loc && !src->stack_loc) {
		src->stack_loc = hs_calloc(src->alloc_stacks ? src->alloc_stacks : 1,
					   sizeof(uint32_t));
		if (!src->stack_loc)
			return -ENOMEM;
	}
	if (hs_idindex_reserve(&src->stack_index, src->nr_stacks + 1))
		return -ENOMEM;
	h = stack_hash(&k);
	i = hs_idindex_slot(&src->stack_index, h, stack_eq, src, &k);
	id = hs_idindex_at(&src->stack_index, i);
	if (id != HS_IDINDEX_NONE) {
		*stack = id;
		return 0;
	}
	err = new_stack(src, frame, caller, loc, &id);
	if (err)
		return err;
	hs_idindex_set(&src->stack_index, i, h, id);
	*stack = id;
	return 0;
}

int hs_source_append_stack(struct hs_stack_source *src, uint32_t frame, uint32_t caller,
			   uint32_t *stack)
{
	if (frame >= hs_source_nr_frames(src) ||
	    (caller != HS_NO_STACK && caller >= src->nr_stacks))
		return -EINVAL;
	return new_stack(src, frame, caller, 0, stack);
}

void hs_source_prefetch_stack(const struct hs_stack_source *src, uint32_t frame,
			      uint32_t caller)
{
	hs_idindex_prefetch(&src->stack_index, hs_hash_pair(frame, caller));
}

uint32_t hs_source_guess_stack(const struct hs_stack_source *src, uint32_t frame,
			       uint32_t caller)
{
	uint32_t id = hs_idindex_guess(&src->stack_index, hs_hash_pair(frame, caller));

	if (id == HS_IDINDEX_NONE || id >= src->nr_stacks)
		return HS_NO_STACK;
	__builtin_prefetch(&src->stack_frame[id]);
	__builtin_prefetch(&src->stack_caller[id]);
	__builtin_prefetch(&src->stack_depth[id]);
	return id;
}

/* A location to look up: (file id, line). */
struct loc_key {
	uint32_t file, line;
};

static int loc_eq(const void *ctx, uint32_t k, const void *key)
{
	const struct hs_stack_source *src = ctx;
	const struct loc_key *l = key;

	return src->loc_file[k] == l->file && src->loc_line[k] == l->line;
}

int hs_source_intern_loc(struct hs_stack_source *src, const char *file, size_t len,
			 uint32_t line, uint32_t *loc)
{
	struct loc_key k;
	uint32_t f, found;
	uint64_t h;
	size_t i, a;
	int err = hs_strtab_intern(&src->files, file, len, &f);

	if (err)
		return err;
	if (hs_idindex_reserve(&src->loc_index, src->nr_locs + 1))
		return -ENOMEM;
	k.file = f;
	k.line = line;
	h = hs_hash_pair(f, line);
	i = hs_idindex_slot(&src->loc_index, h, loc_eq, src, &k);
	found = hs_idindex_at(&src->loc_index, i);
	if (found != HS_IDINDEX_NONE) {
		*loc = found + 1;
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
	hs_idindex_set(&src->loc_index, i, h, (uint32_t)src->nr_locs);
	*loc = (uint32_t)++src->nr_locs;
	return 0;
}

const char *hs_source_loc(const struct hs_stack_source *src, uint32_t loc, uint32_t *line)
{
	if (!loc || loc > src->nr_locs)
		return NULL;
	*line = src->loc_line[loc - 1];
	return hs_strtab_get(&src->files, src->loc_file[loc - 1]);
}

int hs_source_intern_path(struct hs_stack_source *src, const uint32_t *frames, size_t n,
			  uint32_t *stack)
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

int hs_source_add_sample(struct hs_stack_source *src, int64_t time_ns, double metric,
			 double count, uint32_t stack)
{
	size_t i;

	if (stack != HS_NO_STACK && stack >= src->nr_stacks)
		return -EINVAL;
	if (src->nr_samples == src->alloc_samples && hs_source_reserve_samples(src, 1))
		return -ENOMEM;
	i = src->nr_samples++;
	src->time[i] = time_ns;
	src->metric[i] = metric;
	src->count[i] = count;
	src->stack[i] = stack;
	return 0;
}

void hs_source_check(const struct hs_stack_source *src)
{
	size_t nr_frames = hs_source_nr_frames(src), i;

	HS_BUG_ON(src->nr_stacks > src->alloc_stacks ||
		  src->nr_samples > src->alloc_samples);
	for (i = 0; i < src->nr_stacks; i++) {
		uint32_t caller = src->stack_caller[i];

		HS_BUG_ON(src->stack_frame[i] >= nr_frames);
		HS_BUG_ON(caller != HS_NO_STACK && caller >= i);
		HS_BUG_ON(src->stack_depth[i] != hs_source_depth(src, caller) + 1);
	}
	for (i = 0; i < src->nr_samples; i++)
		HS_BUG_ON(src->stack[i] != HS_NO_STACK &&
			  src->stack[i] >= src->nr_stacks);
}

size_t hs_source_stack_frames(const struct hs_stack_source *src, uint32_t stack,
			      uint32_t *out, size_t max)
{
	size_t depth, n, i;

	HS_BUG_ON(stack != HS_NO_STACK && stack >= src->nr_stacks);
	depth = hs_source_depth(src, stack);
	n = depth < max ? depth : max;
	i = n;
	while (i > 0) {
		out[--i] = src->stack_frame[stack];
		stack = src->stack_caller[stack];
	}
	return depth;
}

const char *hs_frame_display(const char *full)
{
	size_t mlen;
	const char *mod = hs_frame_name_short_module(full, strlen(full), &mlen);

	return mod ? mod : full;
}

void hs_source_totals(const struct hs_stack_source *src, double *metric, double *count)
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
	       hs_idindex_memory(&src->loc_index) +
	       src->alloc_stacks * (src->stack_loc ? 4 : 3) * sizeof(uint32_t) +
	       hs_idindex_memory(&src->stack_index) +
	       src->alloc_samples *
		   (sizeof(int64_t) + 2 * sizeof(double) + sizeof(uint32_t));
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

int hs_source_sum_by_stack(const struct hs_stack_source *src, struct hs_stack_sums *out)
{
	size_t n = src->nr_stacks + 1, i;
	unsigned char *seen = hs_calloc(n, 1);

	memset(out, 0, sizeof(*out));
	out->metric = hs_calloc(n, sizeof(*out->metric));
	out->count = hs_calloc(n, sizeof(*out->count));
	out->order = hs_malloc(n * sizeof(*out->order));
	if (!seen || !out->metric || !out->count || !out->order) {
		hs_free(seen);
		hs_stack_sums_release(out);
		return -ENOMEM;
	}
	for (i = 0; i < src->nr_samples; i++) {
		uint32_t k = src->stack[i] == HS_NO_STACK ? 0 : src->stack[i] + 1;

		HS_BUG_ON(k >= n);
		if (!seen[k]) {
			seen[k] = 1;
			out->order[out->nr++] = k;
		}
		out->metric[k] += src->metric[i];
		out->count[k] += src->count[i];
	}
	hs_free(seen);
	return 0;
}

void hs_stack_sums_release(struct hs_stack_sums *s)
{
	hs_free(s->metric);
	hs_free(s->count);
	hs_free(s->order);
	memset(s, 0, sizeof(*s));
}
