/*
 * routes_ungroup - /api/ungroup (docs/json-api.md): the GroupPats that
 * Ungroup makes of a row that is a template's group or an entry group,
 * found from the query source's frames (analysis/ungroup.h), so that the
 * GUI never parses a name to build a pattern.
 */
#include "analysis/ungroup.h"
#include "server/routes.h"
#include "common/buf.h"
#include <errno.h>
#include <jansson.h>

/*
 * "name": a row key of the query's view. Answers "group": the query's
 * GroupPats with the entries that take exactly that row's frames out of
 * their group put first; 404 when no frame is in that row, 400 when no
 * pattern can take out only them.
 */
int hs__api_ungroup(struct hs_route_ctx *c)
{
	struct hs_buf text = HS_BUF_INIT;
	const char *name;
	json_t *o;
	int err = hs__get_tree(c);

	if (!err)
		err = hs__get_string(c, "name", HS_API_MAX_TEXT, &name);
	if (!err && !name) {
		hs_diag_set(&c->diag, 0, "ungroup needs a name");
		err = -EINVAL;
	}
	if (!err)
		err = hs_ungroup(c->src, c->query.params.vp.filter.group, name, &text, &c->diag);
	if (!err && text.len > HS_API_MAX_TEXT) {
		hs_diag_set(&c->diag, 0, "ungrouping '%s' takes more than %d bytes of GroupPats",
			    name, HS_API_MAX_TEXT);
		err = -E2BIG;
	}
	if (err) {
		hs_buf_release(&text);
		return hs__reply_err(c, err, "");
	}
	o = json_pack("{s:s%}", "group", text.s ? text.s : "", text.len);
	hs_buf_release(&text);
	return hs__reply_json(c->resp, o, COMPACT);
}
