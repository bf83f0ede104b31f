/*
 * routes_ungroup - /api/ungroup (docs/json-api.md): the GroupPats that
 * Ungroup makes of a row that is a template's group or an entry group,
 * and Ungroup Module of a module, found from the query source's frames
 * (analysis/ungroup.h), so that the GUI never parses a name to build a
 * pattern.
 */
#include "analysis/ungroup.h"
#include "server/routes.h"
#include "common/buf.h"
#include <errno.h>
#include <jansson.h>

/*
 * "name": a row key of the query's view (Ungroup), or "module": a module's
 * short name (Ungroup Module). Answers "group": the query's GroupPats
 * with the entries that take exactly that row's (or module's) grouped
 * frames out of their groups put first; 404 when no frame is in that
 * row, 400 when no pattern can take out only them.
 */
int hs__api_ungroup(struct hs_route_ctx *c)
{
	struct hs_buf text = HS_BUF_INIT;
	const char *name = NULL, *module = NULL, *group;
	json_t *o;
	int err = hs__get_tree(c);

	if (!err)
		err = hs__get_string(c, "name", HS_API_MAX_TEXT, &name);
	if (!err)
		err = hs__get_string(c, "module", HS_API_MAX_TEXT, &module);
	if (!err && !name == !module) {
		hs_diag_set(&c->diag, 0, "ungroup needs a name or a module");
		err = -EINVAL;
	}
	group = c->query.params.vp.filter.group;
	if (!err)
		err = name ? hs_ungroup(c->src, group, name, &text, &c->diag)
			   : hs_ungroup_module(c->src, group, module, &text, &c->diag);
	if (!err && text.len > HS_API_MAX_TEXT) {
		hs_diag_set(&c->diag, 0,
			    "ungrouping '%s' takes more than %d bytes of GroupPats",
			    name ? name : module, HS_API_MAX_TEXT);
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
