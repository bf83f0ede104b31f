#ifndef HS_MODEL_SOURCE_MERGE_H
#define HS_MODEL_SOURCE_MERGE_H
#include "model/stack_source.h"

/*
 * source_merge - several stack sources as one, as PerfView's multi-file
 * view: `report a b c` appends each trace's samples to one source, each
 * trace under its own top frame (a heapscope trace's "Process NAME (PID)"
 * frames already say which process a row came from).
 *
 * Ownership: @dst keeps copies of everything it takes; @src is only read.
 */

/*
 * Append every sample of @src to @dst with the same stacks (frames, source
 * locations), times, metrics and counts, under a top frame named @top when
 * @top is not NULL. The first source appended to an empty @dst gives it
 * its kind, unit and view name; a later one must have the same kind and
 * unit (-EINVAL, nothing appended). Returns 0, -EINVAL, -ENOMEM or -E2BIG
 * (then @dst holds part of @src: release it).
 */
HS_MUST_CHECK int hs_source_append(struct hs_stack_source *dst,
				   const struct hs_stack_source *src, const char *top);

/*
 * hs_source_append() without a top frame, each root "Process ..." frame
 * of @src becoming @process: traces of one process's images (an exec
 * chain, analysis/exec_chain.h) under one process frame.
 */
HS_MUST_CHECK int hs_source_append_as(struct hs_stack_source *dst,
				      const struct hs_stack_source *src,
				      const char *process);

/* Whether every stack of @src's samples starts with a "Process " frame. */
int hs_source_has_process_frames(const struct hs_stack_source *src);
#endif
