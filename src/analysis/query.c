/*
 * query - derived sources, call tree and view for a chain of parameters
 * (see query.h).
 */
#include "analysis/query.h"
#include <errno.h>
#include <math.h>
#include <string.h>

int hs_query_find_path(const struct hs_calltree *ct, const char *const *path, size_t n,
		       uint32_t *node)
{
	const struct hs_tree *t = &ct->t;
	uint32_t cur = 0;
	size_t i, k, nr;

	for (i = 0; i < n; i++) {
		const uint32_t *kids = hs_tree_children(t, cur);

		nr = hs_tree_nr_children(t, cur);
		for (k = 0; k < nr; k++)
			if (!strcmp(hs_tree_name(t, kids[k]), path[i]))
				break;
		if (k == nr)
			return -ENOENT;
		cur = kids[k];
	}
	HS_BUG_ON(cur >= t->nr);
	*node = cur;
	return 0;
}

static int build(struct hs_calltree *ct, const struct hs_stack_source *in,
		 const struct hs_view_params *params, const double *when,
		 struct hs_diag *diag)
{
	struct hs_view_params p = *params;

	if (when) {
		p.when_start_ms = when[0];
		p.when_end_ms = when[1];
	}
	return hs_calltree_build(ct, in, &p, diag);
}

static int drill(const struct hs_calltree *ct, const struct hs_query_step *step,
		 struct hs_stack_source *out, struct hs_diag *diag)
{
	uint32_t id;

	if (step->path_len) {
		if (hs_query_find_path(ct, step->path, step->path_len, &id)) {
			hs_diag_set(diag, 0, "no call-tree node '%s' at depth %zu",
				    step->path[step->path_len - 1], step->path_len);
			return -ENOENT;
		}
		return hs_drill_node(ct, id, step->what, out);
	}
	if (!step->name || hs_calltree_find_name(ct, step->name, &id)) {
		hs_diag_set(diag, 0, "no frame named '%s'", step->name ? step->name : "");
		return -ENOENT;
	}
	return hs_drill_name(ct, id, step->what, out);
}

int hs_query_derive(const struct hs_stack_source *in, const struct hs_query_step *step,
		    const double *when, struct hs_stack_source *out, double *when_out,
		    struct hs_diag *diag)
{
	struct hs_calltree ct;
	int err = build(&ct, in, &step->params, when, diag);

	hs_source_init(out);
	if (err)
		return err;
	if (step->kind == HS_STEP_FLATTEN)
		err = hs_flatten(&ct, out);
	else
		err = drill(&ct, step, out, diag);
	if (when_out)
		hs_calltree_when_bounds(&ct, &when_out[0], &when_out[1]);
	hs_calltree_release(&ct);
	if (err)
		hs_source_release(out);
	return err;
}

int hs_query_run(const struct hs_stack_source *in, const struct hs_query *q,
		 struct hs_query_result *r, struct hs_diag *diag)
{
	struct hs_stack_source next;
	double when[2] = { NAN, NAN };
	int err, derived = 0;
	size_t i;

	memset(r, 0, sizeof(*r));
	hs_source_init(&r->derived);
	r->src = in;
	for (i = 0; i < q->nr_steps; i++) {
		err = hs_query_derive(r->src, &q->steps[i], derived ? when : NULL, &next,
				      when, diag);
		if (err) {
			r->err_at = i;
			goto fail;
		}
		hs_source_release(&r->derived);
		r->derived = next;
		r->src = &r->derived;
		derived = 1;
	}
	r->err_at = q->nr_steps;
	err = build(&r->ct, r->src, &q->params, derived ? when : NULL, diag);
	if (err)
		goto fail;
	hs_calltree_when_bounds(&r->ct, &r->when_start_ms, &r->when_end_ms);
	err = hs_view_build(&r->view, &r->ct, &q->view);
	if (err) {
		if (err == -ENOENT)
			hs_diag_set(diag, 0, "no frame named '%s'",
				    q->view.focus ? q->view.focus : "");
		hs_calltree_release(&r->ct);
		goto fail;
	}
	return 0;
fail:
	hs_source_release(&r->derived);
	i = r->err_at;
	memset(r, 0, sizeof(*r));
	r->err_at = i;
	return err;
}

void hs_query_result_release(struct hs_query_result *r)
{
	hs_view_release(&r->view);
	hs_calltree_release(&r->ct);
	hs_source_release(&r->derived);
	memset(r, 0, sizeof(*r));
}
