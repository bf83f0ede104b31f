/*
 * routes_lines - /api/source (docs/json-api.md): Goto Source, a
 * function's cost per source line beside the text of its files, as
 * `heapscope source` computes it (analysis/sourcelines.h); the files read
 * are only those the trace's line information names, bounded in number
 * and size.
 */
#include "analysis/sourcelines.h"
#include "server/routes.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each line's exc_pct and inc_pct of @basis in the files of @o. */
static int add_line_pcts(json_t *o, double basis)
{
	json_t *file, *line;
	size_t i, k;

	json_array_foreach(json_object_get(o, "files"), i, file)
	    json_array_foreach(json_object_get(file, "lines"), k, line)
	{
		double e = json_real_value(json_object_get(line, "exc"));
		double n = json_real_value(json_object_get(line, "inc"));

		if (json_object_set_new(line, "exc_pct",
					json_real(basis > 0 ? 100 * e / basis : 0)) ||
		    json_object_set_new(line, "inc_pct",
					json_real(basis > 0 ? 100 * n / basis : 0)))
			return -ENOMEM;
	}
	return 0;
}

/* Goto Source reads at most this many files of at most this size an answer. */
#define SOURCE_MAX_FILES 8
#define SOURCE_MAX_BYTES ((size_t)4 << 20)

/*
 * Goto Source: the cost of the function "name" (a row key) per source
 * line over the samples the query's filter keeps, computed as `heapscope
 * source` does (analysis/sourcelines.h), with the text of the files the
 * trace's line information names for it: never a path from the request,
 * only regular files, bounded in number and size. 501 when the source has
 * no locations.
 */
int hs__api_source(struct hs_route_ctx *c)
{
	struct hs_source_text text[SOURCE_MAX_FILES];
	const struct hs_source_text **tp;
	const struct hs_calltree *ct;
	struct hs_source_lines sl;
	const char *name;
	size_t i, nr_read = 0;
	json_t *o;
	int err = hs__get_tree(c);

	if (!err)
		err = hs__get_string(c, "name", HS_API_MAX_TEXT, &name);
	if (!err && !name) {
		hs_diag_set(&c->diag, 0, "source needs a name");
		err = -EINVAL;
	}
	if (err)
		return hs__reply_err(c, err, "");
	ct = &c->tree->u.tree;
	err = hs_source_lines_filtered(&ct->f, name, &sl, &c->diag);
	if (err == -ENODATA)
		return hs__reply_error(c->resp, 501, "%s", c->diag.msg);
	if (err)
		return hs__reply_err(c, err, "");
	/* the costliest files first (sl.files is in that order) */
	tp = hs_calloc(sl.nr_files + 1, sizeof(*tp));
	for (i = 0; tp && i < sl.nr_files && nr_read < SOURCE_MAX_FILES; i++)
		if (sl.files[i].path &&
		    !hs_source_text_load(sl.files[i].path, NULL, 0, SOURCE_MAX_BYTES,
					 &text[nr_read]))
			tp[i] = &text[nr_read++];
	o = tp ? hs_source_lines_json(&sl, tp, HS_SOURCE_JSON_WHOLE_TEXT) : NULL;
	for (i = 0; i < nr_read; i++)
		hs_source_text_release(&text[i]);
	hs_free(tp);
	hs_source_lines_release(&sl);
	if (o &&
	    (json_object_set_new(o, "name", json_string(name)) ||
	     json_object_set_new(o, "unit", hs_view_json_text(ct->in->metric_unit)) ||
	     add_line_pcts(o, hs_calltree_basis(ct)))) {
		json_decref(o);
		o = NULL;
	}
	return hs__reply_json(c->resp, o, COMPACT);
}
