#ifndef HS_SERVER_ROUTES_H
#define HS_SERVER_ROUTES_H
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "analysis/views.h"
#include "common/diag.h"
#include "server/app.h"
#include "server/cache.h"
#include "server/params.h"

/*
 * routes - what the files of the JSON API under /api/ share
 * (docs/json-api.md); private to src/server/routes*.c:
 *   routes.c          the route table, a request's query, its source,
 *                     call tree and view through the cache, readers of
 *                     request keys, row objects;
 *   routes_views.c    the rows of a view: /api/view, rows, tree, flame,
 *                     find;
 *   routes_sources.c  what the files hold: /api/info, stats, overweight;
 *   routes_time.c     samples over time: /api/timeline, samples;
 *   routes_counts.c   the samples' counts over time: /api/counts;
 *   routes_lines.c    a function's source lines: /api/source;
 *   routes_gc.c       a .NET trace's GCStats: /api/gc;
 *   routes_ungroup.c  Ungroup's GroupPats for a row: /api/ungroup.
 *
 * A handler gets the request's context, answers into c->resp (through
 * hs__reply_json() or hs__reply_err()) and returns 0. What it finds
 * through the cache (c->src, c->tree, c->view: a full view, or one in
 * parts for the routes that show some rows) is held in c->hold for
 * the request's duration (cache.h); handlers run on several threads at
 * once and touch shared state only through the cache and app.h.
 */

#define MAX_ROWS_PAGE 10000		  /* rows in one /api/rows answer */
#define MAX_VIEW_ROWS 200000		  /* rows in one /api/view answer */
#define MAX_VIEW_BYTES ((size_t)64 << 20) /* about the text of one /api/view answer */
#define MAX_TREE_ROWS 200000		  /* rows in one /api/tree or /api/flame answer */
#define MAX_IDS 100000			  /* ids in one "of" list */
#define MAX_BUCKETS 4000		  /* timeline buckets */
#define MAX_SAMPLES_PAGE 1000		  /* samples in one /api/samples answer */
#define MAX_STACK_SHOWN 256		  /* frames of one sample's stack */

#define COMPACT (JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)

/* What a request works on, found or built through the cache. */
struct hs_route_ctx {
	struct hs_app *app;
	const struct hs_request *req;
	struct hs_response *resp;
	json_t *q; /* the request's query object */
	struct hs_api_query query;
	struct hs_diag diag;
	const struct hs_stack_source *src; /* the query's source */
	struct hs_cache_entry *tree, *view;
	struct hs_cache_hold hold; /* the cache entries it uses */
};

/* A source of a query's chain, found or built. */
struct hs_resolved {
	const struct hs_stack_source *src;
	const double *when;	    /* the When range it carries, or NULL */
	struct hs_cache_entry *ent; /* its cache entry, NULL for a trace */
};

static inline double hs__ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Reply with @o (taken), dumped with @flags. Returns 0. */
int hs__reply_json(struct hs_response *resp, json_t *o, size_t flags);
/* @o's compact JSON text as an hs_malloc()ed copy (a cache entry's). */
int hs__json_text(const json_t *o, char **text, size_t *len);
/* Reply with the error of an engine call (400, 404, 413 or 503). Returns 0. */
int hs__reply_err(struct hs_route_ctx *c, int err, const char *what);

/*
 * The source of @s with its first @k steps, built through the cache; @win
 * is the time window of the view the chain ends in. 0 or a negative errno
 * (message in @d).
 */
int hs__resolve_src(struct hs_route_ctx *c, const struct hs_api_src *s, size_t k,
		    const struct hs_filter_params *win, struct hs_resolved *r);
/* The call tree of the query (c->tree) and its source (c->src). */
int hs__get_tree(struct hs_route_ctx *c);
/* The full view of the query (no limit, no depth): c->view. */
int hs__get_view(struct hs_route_ctx *c);
/*
 * The view of the query for answers that show some of its rows (c->view):
 * ByName and CallTree in parts (kind HS_CACHE_PARTS, view_part.h), any
 * other view whole (hs__get_view()).
 */
int hs__get_parts(struct hs_route_ctx *c);
/* c->view's kind, summary and basis (either kind of entry). */
const struct hs_view *hs__view_of(const struct hs_route_ctx *c);
/* c->view's number of rows (row ids are below it). */
size_t hs__view_rows(const struct hs_route_ctx *c);
/*
 * A JSON array of the row objects (hs__row_obj()) of rows @ids (@n ids
 * below hs__view_rows()) of c->view, made for them when it is in parts.
 * A new reference, or NULL when out of memory.
 */
json_t *hs__rows_json(struct hs_route_ctx *c, const uint32_t *ids, size_t n);

/*
 * The answer text cached under @key, built once by @build (see routes.c):
 * 0 with *@out held, or a negative errno (message in c->diag).
 */
int hs__cached_text(struct hs_route_ctx *c, const char *key,
		    int (*build)(struct hs_route_ctx *c, void *arg, char **text,
				 size_t *len),
		    void *arg, const struct hs_cache_entry **out);
/* Reply with a copy of the JSON text of a text entry. Returns 0. */
int hs__reply_text_entry(struct hs_response *resp, const struct hs_cache_entry *e);

/*
 * Readers of request keys: each leaves its default (or NULL) when @key is
 * absent, and returns 0 or -EINVAL with a message in c->diag.
 */
int hs__get_uint(struct hs_route_ctx *c, const char *key, size_t dflt, size_t max,
		 size_t *out);
int hs__get_bool(struct hs_route_ctx *c, const char *key, int dflt, int *out);
int hs__get_string(struct hs_route_ctx *c, const char *key, size_t max, const char **out);
/* A row id of the view (HS_NO_NODE for none). */
int hs__get_row(struct hs_route_ctx *c, const char *key, uint32_t *out);

/* A row object with its "id" and "parent" (new reference, NULL: no memory). */
json_t *hs__row_obj(const struct hs_view *v, size_t i);
/* Row @i of @v as the row with id @id (a part's rows: view_part.h). */
json_t *hs__row_obj_id(const struct hs_view *v, size_t i, uint32_t id);
/* A document: the view's name, summary and total rows, plus @key: @val (taken). */
json_t *hs__doc(const struct hs_view *v, const char *key, json_t *val);
/* hs__doc() for a view of @nr_rows rows (a view in parts has fewer). */
json_t *hs__doc_rows(const struct hs_view *v, size_t nr_rows, const char *key,
		     json_t *val);

/* The routes, one per API call. */
int hs__api_view(struct hs_route_ctx *c);
int hs__api_rows(struct hs_route_ctx *c);
int hs__api_tree(struct hs_route_ctx *c);
int hs__api_flame(struct hs_route_ctx *c);
int hs__api_find(struct hs_route_ctx *c);
int hs__api_info(struct hs_route_ctx *c);
int hs__api_stats(struct hs_route_ctx *c);
int hs__api_overweight(struct hs_route_ctx *c);
int hs__api_timeline(struct hs_route_ctx *c);
int hs__api_counts(struct hs_route_ctx *c);
int hs__api_samples(struct hs_route_ctx *c);
int hs__api_source(struct hs_route_ctx *c);
/* routes_retained.c: a heap snapshot's retained size per name */
int hs__api_retained(struct hs_route_ctx *c);
int hs__api_gc(struct hs_route_ctx *c);
int hs__api_ungroup(struct hs_route_ctx *c);
#endif
