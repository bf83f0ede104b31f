/*
 * source_merge - append one stack source to another (source_merge.h).
 * Stack ids of a source grow from callers to callees (a stack is interned
 * after its caller), so one pass in id order maps every stack.
 */
#include "model/source_merge.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

#define PROCESS_PREFIX "Process "

static int same_unit(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Give an empty @dst the kind, unit and view name of @src. */
static int take_metric(struct hs_stack_source *dst, const struct hs_stack_source *src)
{
	dst->kind = src->kind;
	if (src->metric_unit && !(dst->metric_unit = hs_strdup(src->metric_unit)))
		return -ENOMEM;
	if (src->view_name && !(dst->view_name = hs_strdup(src->view_name)))
		return -ENOMEM;
	return 0;
}

/* Whether stack @i of @src is a root whose frame is a process's. */
static int process_root(const struct hs_stack_source *src, size_t i)
{
	return src->stack_caller[i] == HS_NO_STACK &&
	       !strncmp(hs_source_frame_name(src, src->stack_frame[i]), PROCESS_PREFIX,
			strlen(PROCESS_PREFIX));
}

/* hs_source_append(), and with @process the root process frames renamed. */
static int append(struct hs_stack_source *dst, const struct hs_stack_source *src,
		  const char *top, const char *process)
{
	size_t nr_frames = hs_source_nr_frames(src), i;
	uint32_t *frame_of = NULL, *stack_of = NULL, root = HS_NO_STACK,
		 process_frame = 0;
	int err = 0;

	if (!dst->nr_samples && !dst->metric_unit && !dst->view_name) {
		err = take_metric(dst, src);
	} else if (dst->kind != src->kind ||
		   !same_unit(dst->metric_unit, src->metric_unit)) {
		return -EINVAL;
	}
	if (!err && top) {
		uint32_t frame;

		err = hs_source_intern_frame(dst, top, strlen(top), &frame);
		if (!err)
			err = hs_source_intern_stack(dst, frame, HS_NO_STACK, &root);
	}
	if (!err && process)
		err =
		    hs_source_intern_frame(dst, process, strlen(process), &process_frame);
	frame_of = hs_malloc((nr_frames + 1) * sizeof(*frame_of));
	stack_of = hs_malloc((src->nr_stacks + 1) * sizeof(*stack_of));
	if (!frame_of || !stack_of)
		err = err ? err : -ENOMEM;
	for (i = 0; !err && i < nr_frames; i++)
		err = hs_source_intern_frame(dst, hs_source_frame_name(src, (uint32_t)i),
					     hs_strtab_len(&src->frames, (uint32_t)i),
					     &frame_of[i]);
	for (i = 0; !err && i < src->nr_stacks; i++) {
		uint32_t caller = src->stack_caller[i], line, loc = 0;
		const char *file =
		    hs_source_loc(src, hs_source_stack_loc(src, (uint32_t)i), &line);

		HS_BUG_ON(caller != HS_NO_STACK && caller >= i);
		if (file)
			err = hs_source_intern_loc(dst, file, strlen(file), line, &loc);
		if (!err)
			err = hs_source_intern_stack_loc(
			    dst,
			    process && process_root(src, i)
				? process_frame
				: frame_of[src->stack_frame[i]],
			    caller == HS_NO_STACK ? root : stack_of[caller], loc,
			    &stack_of[i]);
	}
	if (!err)
		err = hs_source_reserve_samples(dst, src->nr_samples);
	for (i = 0; !err && i < src->nr_samples; i++)
		err = hs_source_add_sample(
		    dst, src->time[i], src->metric[i], src->count[i],
		    src->stack[i] == HS_NO_STACK ? root : stack_of[src->stack[i]]);
	hs_free(frame_of);
	hs_free(stack_of);
	return err;
}

int hs_source_append(struct hs_stack_source *dst, const struct hs_stack_source *src,
		     const char *top)
{
	return append(dst, src, top, NULL);
}

int hs_source_append_as(struct hs_stack_source *dst, const struct hs_stack_source *src,
			const char *process)
{
	return append(dst, src, NULL, process);
}

int hs_source_has_process_frames(const struct hs_stack_source *src)
{
	/* per stack: whether its top frame is a process's (stacks in id order) */
	unsigned char *process = hs_malloc(src->nr_stacks + 1);
	size_t i;
	int all = process != NULL;

	for (i = 0; all && i < src->nr_stacks; i++) {
		uint32_t caller = src->stack_caller[i];

		if (caller == HS_NO_STACK) {
			const char *name = hs_source_frame_name(src, src->stack_frame[i]);

			process[i] =
			    !strncmp(name, PROCESS_PREFIX, strlen(PROCESS_PREFIX));
		} else {
			process[i] = process[caller];
		}
	}
	for (i = 0; all && i < src->nr_samples; i++)
		all = src->stack[i] != HS_NO_STACK && process[src->stack[i]];
	hs_free(process);
	return all;
}
