#ifndef HS_SERVER_PARAMS_H
#define HS_SERVER_PARAMS_H
#include "common/log.h"
#include <stddef.h>
#include "analysis/query.h"
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * params - the HTTP API's queries (docs/json-api.md): a JSON object that
 * names a source (a trace, Drill Into / Flatten steps, a diff of two
 * sources), the filter parameters and the view, checked and turned into
 * query.h's structs; and the flat GET arguments that mirror `heapscope
 * report`'s options, turned into the same JSON.
 *
 * Every size that comes from a request is bounded (HS_API_MAX_*); a bad
 * query is -EINVAL with a message in a struct hs_diag, never a crash.
 *
 * Each source and each (source, parameters) pair has a canonical key, a
 * compact JSON text with sorted keys and every default filled in, so that
 * equal queries share cache entries (cache.h).
 *
 * Ownership: a parsed query borrows the strings of the JSON object it was
 * parsed from (which must outlive it) and owns its arrays and keys;
 * release with hs_api_query_release().
 */

#define HS_API_MAX_TEXT 8192	/* bytes in one text box */
#define HS_API_MAX_STEPS 32	/* Drill Into / Flatten steps in one chain */
#define HS_API_MAX_DIFF_DEPTH 4 /* diffs of diffs */
#define HS_API_MAX_PATH 4096	/* names in a call-tree path */

/* Filter parameters as the API gives them ("params"). */
struct hs_api_params {
	struct hs_view_params vp; /* strings borrowed from the JSON */
	char *key;		  /* canonical JSON text (owned) */
};

enum hs_api_src_kind { HS_API_SRC_TRACE, HS_API_SRC_DIFF };

struct hs_api_src {
	enum hs_api_src_kind kind;
	size_t trace;			/* HS_API_SRC_TRACE: index of the trace */
	const char *source;		/* its source's name; NULL = the first */
	struct hs_api_src *test, *base; /* HS_API_SRC_DIFF: owned */
	struct hs_api_params test_params, base_params;
	struct hs_query_step *steps; /* owned array */
	size_t nr_steps;
	/* keys[k]: canonical JSON of this source with its first k steps */
	char **keys; /* nr_steps + 1 owned strings */
};

struct hs_api_query {
	struct hs_api_src src;
	struct hs_api_params params;
	struct hs_view_opts view; /* focus borrowed from the JSON */
	char *tree_key;		  /* source and params: the call tree's key */
};

/*
 * Parse @q (a JSON object: the source keys "trace", "source", "diff", "steps", and
 * "params", "view", "focus", "limit", "depth"; other keys are left to the
 * caller) with @nr_traces traces loaded. A focus with a view that has
 * none is an error; a view that needs a focus without one only when
 * @need_focus (hs_view_focus_check()). Returns 0, -EINVAL (message in
 * @diag) or -ENOMEM. On error @out is left released.
 */
struct json_t;
HS_MUST_CHECK int hs_api_query_parse(const struct json_t *q, size_t nr_traces,
				     int need_focus, struct hs_api_query *out,
				     struct hs_diag *diag);
void hs_api_query_release(struct hs_api_query *q);

/*
 * Parse a "params" object (NULL = all defaults: no patterns, open window,
 * no Fold%) into @out. 0, -EINVAL or -ENOMEM.
 */
HS_MUST_CHECK int hs_api_params_parse(const struct json_t *p, struct hs_api_params *out,
				      struct hs_diag *diag);
void hs_api_params_release(struct hs_api_params *p);

/*
 * The flat GET arguments of `heapscope report` (trace, source, view,
 * focus, group, fold, fold_pct, inc, exc, start, end,
 * drill=NAME[:inc|:exc], flatten, limit, depth, preset, exe_dir) as a JSON
 * query, with the same rules: what is not given comes from the source's
 * saved defaults (@defaults(@dctx, trace, source) gives them, or NULL), a
 * preset gives GroupPats (and FoldPats, Fold%) unless they are given,
 * Drill Into clears IncPats/ExcPats after it and Flatten clears the
 * patterns and Fold%. @arg looks up an argument (NULL when absent). Also
 * "q": a whole JSON query, which the other arguments may not accompany.
 * Returns a new JSON object, or NULL with a message in @diag.
 */
struct json_t *hs_api_query_from_args(const char *(*arg)(void *ctx, const char *key),
				      void *ctx,
				      const struct hs_source_defaults *(*defaults)(
					  void *dctx, size_t trace, const char *source),
				      void *dctx, struct hs_diag *diag);
#endif
