#ifndef HS_ANALYSIS_QUERY_H
#define HS_ANALYSIS_QUERY_H
#include "common/log.h"
#include <stddef.h>
#include "analysis/calltree.h"
#include "analysis/drill.h"
#include "analysis/views.h"
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * query - the one path from parameters to a view that every front end
 * takes (`heapscope report`, the HTTP API): derived sources (Drill Into,
 * Flatten), the filter and call tree, Fold% and the view.
 *
 * A query is a chain of steps, each of which views its input with its own
 * parameters and makes a new source from some of it (Drill Into, Flatten),
 * then the parameters and the view of the last source. A source made by a
 * step keeps the When range of the view it came from: the steps after it
 * and the final view get that range in when_start_ms/when_end_ms (the
 * values given in their params are replaced).
 *
 * Ownership: a query and its steps only borrow strings; a result owns the
 * derived source, the call tree and the view, and borrows the input
 * source, which must outlive it. Release with hs_query_result_release().
 */

enum hs_step_kind {
	HS_STEP_DRILL,	 /* Drill Into a by-name row or a call-tree node */
	HS_STEP_FLATTEN, /* one-frame stacks (drill.h) */
};

struct hs_query_step {
	enum hs_step_kind kind;
	struct hs_view_params params; /* the view the step works on */
	/*
	 * Drill Into: the by-name row @name, or when @path_len > 0 the
	 * call-tree node reached from ROOT through the names @path[0..]
	 * (row keys, outermost first). With @tree HS_VIEW_CALLERS or
	 * HS_VIEW_CALLEES, @path is instead a node of that tree of the
	 * focus @path[0] (hs_view_focus_pick(); inclusive only).
	 */
	const char *name;
	const char *const *path;
	size_t path_len;
	enum hs_view_kind tree; /* the tree @path is in; other values: CallTree */
	enum hs_drill_what what;
};

struct hs_query {
	const struct hs_query_step *steps;
	size_t nr_steps;
	struct hs_view_params params; /* the final view's parameters */
	struct hs_view_opts view;
};

struct hs_query_result {
	struct hs_stack_source derived;	   /* the last step's source (if any) */
	const struct hs_stack_source *src; /* what the view is of */
	struct hs_calltree ct;
	struct hs_view view;
	double when_start_ms, when_end_ms; /* the When range the view used */
	/*
	 * On failure, which part failed: the index of a step, or nr_steps
	 * for the final call tree and view.
	 */
	size_t err_at;
};

/*
 * Apply @step to @in: build @in's call tree with @step->params (with the
 * When range @when[0..1] unless NULL), then derive @out (initialised
 * here) from it. @when_out (may be NULL) gets the range of that view, for
 * the next step. Returns 0; -EINVAL for a bad pattern (message in
 * @diag); -ENOENT when the drilled name or path is not in the tree (the
 * message says which); -ENOMEM. On error @out is left released.
 */
HS_MUST_CHECK int hs_query_derive(const struct hs_stack_source *in,
				  const struct hs_query_step *step, const double *when,
				  struct hs_stack_source *out, double *when_out,
				  struct hs_diag *diag);

/*
 * The call-tree node of @ct reached from ROOT through the names @path[0..n)
 * (row keys). 0 and the node in *@node, or -ENOENT.
 */
HS_MUST_CHECK int hs_query_find_path(const struct hs_calltree *ct,
				     const char *const *path, size_t n, uint32_t *node);

/*
 * Run @q over @in into @r (initialised here). Returns 0, or the error of
 * the part that failed (hs_query_derive(), hs_calltree_build(),
 * hs_view_build(): -ENOENT when the focus is not a name of the tree) with
 * r->err_at saying which and a message in @diag; @r is then left released
 * except for err_at.
 */
HS_MUST_CHECK int hs_query_run(const struct hs_stack_source *in, const struct hs_query *q,
			       struct hs_query_result *r, struct hs_diag *diag);
void hs_query_result_release(struct hs_query_result *r);

/*
 * The output frame of @ct that @name stands for: its exact name, else the
 * one frame whose display name or function is @name, else the one whose
 * qualified function name ends in it ("fill", "ns::fill"), as `source`
 * accepts (sourcelines.h). 0 and *@frame (HS_NO_FRAME for "ROOT"), or
 * -ENOENT with @diag listing the frames it names or, when it names none,
 * the frames that contain it ("did you mean").
 */
int hs_query_resolve_name(const struct hs_calltree *ct, const char *name, uint32_t *frame,
			  struct hs_diag *diag);
#endif
