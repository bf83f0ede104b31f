/*
 * routes_gc - /api/gc?trace=N: PerfView's GCStats of a .NET trace
 * (docs/json-api.md), the same document as `heapscope gcstats --format
 * json`, for the GUI's GC tab (web/js/gc.js). The file is read again on
 * each request (one streaming pass, one record per GC); nothing is kept.
 */
#include "io/gc_stats_load.h"
#include "server/routes.h"
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int hs__api_gc(struct hs_route_ctx *c)
{
	const char *arg = c->req->arg ? c->req->arg(c->req->ctx, "trace") : NULL;
	const struct hs_app_trace *t;
	struct hs_gc_load_info info;
	struct hs_gc_stats st;
	struct hs_diag diag;
	char *end = NULL;
	unsigned long id = 0;
	json_t *o;
	int err;

	if (arg) {
		id = strtoul(arg, &end, 10);
		if (!*arg || *end || arg[0] == '-')
			return hs__reply_error(c->resp, 400, "trace must be a number");
	}
	if (id >= c->app->nr_traces)
		return hs__reply_error(c->resp, 404, "no trace %lu", id);
	t = &c->app->traces[id];
	if (t->fmt != HS_FORMAT_NETTRACE && t->fmt != HS_FORMAT_NETTRACE_ZIP)
		return hs__reply_error(c->resp, 400,
				       "trace %lu is not a .nettrace: GC "
				       "statistics come from .NET traces",
				       id);
	if (!t->path)
		return hs__reply_error(c->resp, 404, "trace %lu cannot be read again",
				       id);
	diag = (struct hs_diag)HS_DIAG_INIT(t->name);
	err = hs_gc_stats_load(t->path, &st, &info, &diag);
	if (err) {
		char msg[512];

		hs_gc_stats_release(&st);
		if (!diag.set)
			hs_diag_set(&diag, 0, "%s", strerror(-err));
		return hs__reply_error(c->resp, err == -ENOMEM ? 503 : 400, "%s",
				       hs_diag_format(&diag, msg, sizeof(msg)));
	}
	o = hs_gc_stats_json(&st, t->name, info.pid);
	hs_gc_stats_release(&st);
	if (o && json_object_set_new(o, "cut_off", json_boolean(info.truncated))) {
		json_decref(o);
		o = NULL;
	}
	return hs__reply_json(c->resp, o, COMPACT);
}
