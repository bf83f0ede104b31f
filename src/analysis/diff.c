/*
 * diff - concatenate test samples and negated baseline samples on their
 * raw stacks (see diff.h).
 */
#include "analysis/diff.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

/*
 * Append the samples of @in that pass @params to @out, with metric and
 * count multiplied by @sign. Input stacks are translated once each into
 * @out's ids (cached in a table indexed by input stack id).
 */
static int append_side(const struct hs_stack_source *in,
		       const struct hs_filter_params *params, double sign,
		       struct hs_stack_source *out, struct hs_diag *diag)
{
	struct hs_filtered f;
	uint32_t *frame_map = NULL, *stack_map = NULL, *path = NULL;
	size_t i, nr_frames = hs_source_nr_frames(in);
	int err;

	err = hs_filter_apply(in, params, &f, diag);
	if (err)
		return err;
	err = -ENOMEM;
	frame_map = hs_malloc((nr_frames + 1) * sizeof(*frame_map));
	stack_map = hs_malloc((in->nr_stacks + 1) * sizeof(*stack_map));
	path = hs_malloc(HS_DIFF_MAX_DEPTH * sizeof(*path));
	if (!frame_map || !stack_map || !path)
		goto out;
	for (i = 0; i < nr_frames; i++) {
		const char *name = hs_source_frame_name(in, (uint32_t)i);

		err = hs_source_intern_frame(
		    out, name, hs_strtab_len(&in->frames, (uint32_t)i), &frame_map[i]);
		if (err)
			goto out;
	}
	for (i = 0; i < in->nr_stacks; i++) {
		uint32_t s = (uint32_t)i;
		size_t depth = in->stack_depth[s];

		if (depth <= HS_DIFF_MAX_DEPTH) {
			uint32_t caller = in->stack_caller[s];

			/* the caller was translated already: its id is smaller */
			err = hs_source_intern_stack(
			    out, frame_map[in->stack_frame[s]],
			    caller == HS_NO_STACK ? HS_NO_STACK : stack_map[caller],
			    &stack_map[s]);
		} else {
			size_t n = hs_source_stack_frames(in, s, path, HS_DIFF_MAX_DEPTH),
			       k;

			(void)n;
			for (k = 0; k < HS_DIFF_MAX_DEPTH; k++)
				path[k] = frame_map[path[k]];
			err = hs_source_intern_path(out, path, HS_DIFF_MAX_DEPTH,
						    &stack_map[s]);
		}
		if (err)
			goto out;
	}
	for (i = 0; i < in->nr_samples; i++) {
		uint32_t mapped, raw = in->stack[i];
		double metric, count;

		if (!hs_filtered_sample(&f, i, &mapped, &metric, &count))
			continue;
		err = hs_source_add_sample(out, in->time[i], sign * metric, sign * count,
					   raw == HS_NO_STACK ? HS_NO_STACK
							      : stack_map[raw]);
		if (err)
			goto out;
	}
	err = 0;
out:
	hs_free(frame_map);
	hs_free(stack_map);
	hs_free(path);
	hs_filtered_release(&f);
	return err;
}

int hs_diff_build(const struct hs_stack_source *base,
		  const struct hs_filter_params *base_params,
		  const struct hs_stack_source *test,
		  const struct hs_filter_params *test_params, struct hs_stack_source *out,
		  struct hs_diag *diag)
{
	int err;

	/* a diff is only a time source when both sides are */
	out->kind = base->kind == HS_METRIC_TIME && test->kind == HS_METRIC_TIME
			? HS_METRIC_TIME
			: HS_METRIC_PLAIN;
	out->untimed = base->untimed && test->untimed;
	if (test->metric_unit && !out->metric_unit) {
		out->metric_unit = hs_strdup(test->metric_unit);
		if (!out->metric_unit)
			return -ENOMEM;
	}
	/* one allocation for both sides' samples, not a growth series */
	err = hs_source_reserve_samples(out, test->nr_samples + base->nr_samples);
	if (!err)
		err = append_side(test, test_params, 1.0, out, diag);
	if (!err)
		err = append_side(base, base_params, -1.0, out, diag);
	return err;
}
