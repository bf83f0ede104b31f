/*
 * query - derived sources, call tree and view for a chain of parameters
 * (see query.h).
 */
#include "analysis/query.h"
#include "analysis/sourcelines.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#define MAX_CANDIDATES 8  /* names a message lists */
#define MIN_SUGGEST_LEN 3 /* shorter names get no suggestions */

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

/* Whether @hay holds @needle, without regard to case. */
static int contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return 0;
}

/* Add frame @name to the list in @b (at most MAX_CANDIDATES shown). */
static void list_add(struct hs_buf *b, size_t *nr, const char *name)
{
	if (*nr < MAX_CANDIDATES)
		hs_buf_addf(b, "%s'%s'", *nr ? ", " : "", name);
	(*nr)++;
}

int hs_query_resolve_name(const struct hs_calltree *ct, const char *name, uint32_t *frame,
			  struct hs_diag *diag)
{
	const struct hs_stack_source *out = &ct->f.out;
	size_t nr = hs_source_nr_frames(out), k, hits = 0, pass;
	struct hs_buf list = HS_BUF_INIT;
	uint32_t found = HS_NO_FRAME;

	if (!hs_calltree_find_name(ct, name, frame))
		return 0;
	/* by name without module or directory, then by qualified name */
	for (pass = 0; pass < 2 && !hits; pass++)
		for (k = 0; k < nr; k++) {
			const char *full = hs_source_frame_name(out, (uint32_t)k);

			if (!(pass ? hs_function_named : hs_function_is)(full, name))
				continue;
			found = (uint32_t)k;
			list_add(&list, &hits, full);
		}
	if (hits == 1) {
		hs_buf_release(&list);
		*frame = found;
		return 0;
	}
	if (hits > 1) {
		hs_diag_set(diag, 0, "'%s' names %zu frames (give one as shown): %s%s",
			    name, hits, list.s ? list.s : "",
			    hits > MAX_CANDIDATES ? ", ..." : "");
		hs_buf_release(&list);
		return -ENOENT;
	}
	for (k = 0; strlen(name) >= MIN_SUGGEST_LEN && k < nr; k++) {
		const char *full = hs_source_frame_name(out, (uint32_t)k);

		if (contains_nocase(full, name))
			list_add(&list, &hits, full);
	}
	if (hits)
		hs_diag_set(diag, 0, "no frame named '%s'; did you mean %s%s?", name,
			    list.s ? list.s : "", hits > MAX_CANDIDATES ? ", ..." : "");
	else
		hs_diag_set(diag, 0, "no frame named '%s'", name);
	hs_buf_release(&list);
	return -ENOENT;
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

	if (step->path_len &&
	    (step->tree == HS_VIEW_CALLERS || step->tree == HS_VIEW_CALLEES)) {
		uint8_t *pick;
		int err;

		if (step->what != HS_DRILL_INC) {
			hs_diag_set(diag, 0, "a %s node is drilled into inclusively",
				    hs_view_kind_name(step->tree));
			return -EINVAL;
		}
		pick = hs_calloc(ct->t.nr, 1);
		if (!pick)
			return -ENOMEM;
		err = hs_view_focus_pick(ct, step->tree, step->path, step->path_len, pick,
					 diag);
		if (!err)
			err = hs_drill_pick(ct, pick, out);
		hs_free(pick);
		return err;
	}
	if (step->path_len) {
		if (hs_query_find_path(ct, step->path, step->path_len, &id)) {
			hs_diag_set(diag, 0, "no call-tree node '%s' at depth %zu",
				    step->path[step->path_len - 1], step->path_len);
			return -ENOENT;
		}
		return hs_drill_node(ct, id, step->what, out);
	}
	if (!step->name) {
		hs_diag_set(diag, 0, "no frame named ''");
		return -ENOENT;
	}
	if (hs_query_resolve_name(ct, step->name, &id, diag))
		return -ENOENT;
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
	struct hs_view_opts view;
	double when[2] = {NAN, NAN};
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
	view = q->view;
	if (view.focus && hs_view_kind_has_focus(view.kind)) {
		/* a bare or qualified name stands for the one frame it names */
		uint32_t id;

		if (hs_query_resolve_name(&r->ct, view.focus, &id, diag)) {
			hs_calltree_release(&r->ct);
			err = -ENOENT;
			goto fail;
		}
		if (id != HS_NO_FRAME)
			view.focus = hs_source_frame_name(&r->ct.f.out, id);
	}
	err = hs_view_build(&r->view, &r->ct, &view);
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
