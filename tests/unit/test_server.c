/*
 * test_server - the HTTP API without sockets: the token, assets and 404s,
 * bad requests, query parsing and canonical keys, report-style arguments,
 * and the answers of the routes on a small source (numbers by hand).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "analysis/query.h"
#include "common/alloc.h"
#include "common/utf8.h"
#include "server/app.h"
#include "server/assets.h"
#include "server/cache.h"
#include "server/params.h"
#include "views_helpers.h"

#define TOKEN "0123456789abcdef0123456789abcdef"

/* Query arguments as "k1", "v1", "k2", "v2", ..., NULL. */
static const char *args_get(void *ctx, const char *key)
{
	const char *const *a = ctx;

	for (; a && *a; a += 2)
		if (!strcmp(a[0], key))
			return a[1];
	return NULL;
}

struct answer {
	unsigned status;
	int set_cookie;
	const char *type;
	json_t *json; /* the body parsed, when it is JSON */
	char *text;   /* the body (owned) */
};

static void ask(struct hs_app *app, const char *method, const char *path,
		const char *const *args, const char *cookie, const char *body,
		struct answer *out)
{
	struct hs_request req = {
	    .method = method,
	    .path = path,
	    .arg = args_get,
	    .ctx = (void *)args,
	    .cookie_token = cookie,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	};
	struct hs_response resp;

	hs_app_handle(app, &req, &resp);
	out->status = resp.status;
	out->set_cookie = resp.set_cookie;
	out->type = resp.type;
	out->text = malloc(resp.len + 1);
	memcpy(out->text, resp.data, resp.len);
	out->text[resp.len] = '\0';
	out->json = !strcmp(resp.type, "application/json")
			? json_loads(out->text, 0, NULL)
			: NULL;
	hs_response_release(&resp);
}

static void answer_release(struct answer *a)
{
	json_decref(a->json);
	free(a->text);
}

/* POST @body to @path with the token cookie. */
static void post(struct hs_app *app, const char *path, const char *body,
		 struct answer *out)
{
	ask(app, "POST", path, NULL, TOKEN, body, out);
}

static void app_with_source(struct hs_app *app)
{
	struct hs_stack_source src;

	assert_int_equal(hs_app_init(app, TOKEN), 0);
	recursion_source(&src);
	assert_int_equal(hs_app_add_trace(app, "rec.folded", "folded", &src), 0);
}

static double num_at(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_non_null(v);
	return json_number_value(v);
}

/* @v printed compactly is @text. */
static void expect_json(const json_t *v, const char *text)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	assert_non_null(s);
	assert_string_equal(s, text);
	free(s);
}

static const char *error_of(const struct answer *a)
{
	return json_string_value(json_object_get(a->json, "error"));
}

/* Without the token nothing is served; the token argument asks for the cookie. */
static void token_is_required(void **state)
{
	static const char *const good[] = {"token", TOKEN, NULL};
	static const char *const bad[] = {"token", "0123456789abcdef0123456789abcdee",
					  NULL};
	struct hs_app app;
	struct answer a;

	(void)state;
	app_with_source(&app);
	ask(&app, "GET", "/", NULL, NULL, NULL, &a);
	assert_int_equal(a.status, 403);
	assert_non_null(error_of(&a));
	answer_release(&a);
	ask(&app, "GET", "/api/info", bad, NULL, NULL, &a);
	assert_int_equal(a.status, 403);
	answer_release(&a);
	/* a right cookie does not excuse a wrong argument */
	ask(&app, "GET", "/api/info", bad, TOKEN, NULL, &a);
	assert_int_equal(a.status, 403);
	answer_release(&a);
	ask(&app, "GET", "/", NULL, "short", NULL, &a);
	assert_int_equal(a.status, 403);
	answer_release(&a);
	ask(&app, "GET", "/", good, NULL, NULL, &a);
	assert_int_equal(a.status, 200);
	assert_true(a.set_cookie);
	assert_string_equal(a.type, "text/html; charset=utf-8");
	assert_non_null(strstr(a.text, "<title>heapscope</title>"));
	answer_release(&a);
	ask(&app, "GET", "/js/main.js", NULL, TOKEN, NULL, &a);
	assert_int_equal(a.status, 200);
	assert_false(a.set_cookie);
	answer_release(&a);
	assert_true(hs_app_token_ok(&app, TOKEN));
	assert_false(hs_app_token_ok(&app, NULL));
	assert_false(hs_app_token_ok(&app, TOKEN "0"));
	hs_app_release(&app);
	assert_int_equal(hs_app_init(&app, "not hex"), -EINVAL);
	/* a random token is 32 hex digits */
	assert_int_equal(hs_app_init(&app, NULL), 0);
	assert_int_equal(strlen(app.token), 32);
	assert_int_equal(strspn(app.token, "0123456789abcdef"), 32);
	hs_app_release(&app);
}

/* Only embedded files are served; anything else is a 404 with a JSON body. */
static void only_assets_are_served(void **state)
{
	static const char *const paths[] = {
	    "/../etc/passwd",
	    "/etc/passwd",
	    "//index.html",
	    "/index.html/",
	    "/js/",
	    "/js/../index.html",
	    "/%2e%2e/x",
	    "/api",
	    "/api/",
	    "/api/nope",
	    "/vendor/",
	    "/index.htm",
	    "",
	};
	struct hs_app app;
	struct answer a;
	size_t i;

	(void)state;
	app_with_source(&app);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		ask(&app, "GET", paths[i], NULL, TOKEN, NULL, &a);
		assert_int_equal(a.status, 404);
		assert_non_null(error_of(&a));
		answer_release(&a);
	}
	ask(&app, "DELETE", "/index.html", NULL, TOKEN, NULL, &a);
	assert_int_equal(a.status, 405);
	answer_release(&a);
	ask(&app, "PUT", "/api/view", NULL, TOKEN, "{}", &a);
	assert_int_equal(a.status, 405);
	answer_release(&a);
	/* every asset has a type and the uPlot files are in */
	for (i = 0; hs_asset_get(i); i++)
		assert_non_null(hs_asset_get(i)->type);
	assert_non_null(hs_asset_find("/vendor/uPlot.esm.js"));
	assert_non_null(hs_asset_find("/index.html"));
	assert_null(hs_asset_find("/"));
	hs_app_release(&app);
}

/* Malformed and oversized requests are 4xx with a message. */
static void bad_requests(void **state)
{
	static const struct {
		const char *body;
		unsigned status;
		const char *msg;
	} cases[] = {
	    {"", 400, "the body is not JSON"},
	    {"{", 400, "the body is not JSON"},
	    {"[1]", 400, "must be a JSON object"},
	    {"{\"a\":1,\"a\":2}", 400, "the body is not JSON"},
	    {"{\"view\":\"nope\"}", 400, "unknown view 'nope'"},
	    {"{\"view\":\"callers\"}", 400, "view 'callers' needs focus NAME"},
	    {"{\"focus\":\"A\"}", 400,
	     "focus is for the callers, callees and caller-callee views, not 'byname'"},
	    {"{\"view\":\"calltree\",\"focus\":\"A\"}", 400,
	     "focus is for the callers, callees and caller-callee views, not 'calltree'"},
	    {"{\"view\":\"flame\",\"focus\":\"A\"}", 400,
	     "focus is for the callers, callees and caller-callee views, not 'flame'"},
	    {"{\"trace\":7}", 400, "no trace 7 (1 loaded)"},
	    {"{\"trace\":\"0\"}", 400, "trace must be a whole number"},
	    {"{\"params\":{\"groop\":\"x\"}}", 400, "unknown key 'groop' in params"},
	    {"{\"params\":{\"start\":\"ten\"}}", 400, "start expects a number"},
	    {"{\"params\":{\"start\":5,\"end\":1}}", 400, "end is before start"},
	    {"{\"params\":{\"fold_pct\":-1}}", 400, "fold_pct must not be negative"},
	    {"{\"params\":{\"inc\":\"@(\"}}", 400, "IncPats"},
	    {"{\"params\":{\"inc\":7}}", 400, "inc expects a string"},
	    {"{\"steps\":[{\"kind\":\"x\"}]}", 400, "kind must be"},
	    {"{\"steps\":[{\"kind\":\"drill\"}]}", 400, "needs a name or a path"},
	    {"{\"steps\":[{\"kind\":\"drill\",\"name\":\"Z\"}]}", 404,
	     "no frame named 'Z'"},
	    {"{\"steps\":[{\"kind\":\"drill\",\"path\":[\"A\",\"Z\"]}]}", 404,
	     "no call-tree node 'Z' at depth 2"},
	    {"{\"steps\":[{\"kind\":\"flatten\",\"name\":\"A\"}]}", 400, "takes no name"},
	    {"{\"steps\":[{\"kind\":\"drill\",\"tree\":\"flame\",\"path\":[\"B\"]}]}", 400,
	     "tree must be \"calltree\", \"callers\" or \"callees\""},
	    {"{\"steps\":[{\"kind\":\"drill\",\"tree\":\"callers\",\"name\":\"B\"}]}", 400,
	     "tree goes with a drill step's path"},
	    {"{\"steps\":[{\"kind\":\"drill\",\"tree\":\"callers\",\"path\":[\"B\",\"Z\"]}]}",
	     404, "no callers node 'Z' at depth 1 of 'B'"},
	    {"{\"steps\":[{\"kind\":\"drill\",\"tree\":\"callees\",\"what\":\"exc\","
	     "\"path\":[\"B\"]}]}",
	     400, "a callees node is drilled into inclusively"},
	    {"{\"steps\":{}}", 400, "steps must be an array"},
	    {"{\"diff\":{\"test\":{}}}", 400, "needs a test and a base"},
	    {"{\"diff\":{\"test\":{},\"base\":{\"trace\":3}}}", 400, "no trace 3"},
	    {"{\"diff\":{\"test\":{},\"base\":{},\"x\":1}}", 400,
	     "unknown key 'x' in diff"},
	    {"{\"trace\":0,\"diff\":{}}", 400, "not both"},
	    {"{\"view\":\"callers\",\"focus\":\"Q\"}", 404, "no frame named 'Q'"},
	    {"{\"limit\":-1}", 400, "limit must be a whole number"},
	};
	static const char *const focus_routes[] = {
	    "/api/view", "/api/tree", "/api/rows", "/api/find", "/api/flame",
	};
	static const char *const get_focus[] = {"view", "byname", "focus", "A", NULL};
	struct hs_app app;
	struct answer a;
	char *big;
	size_t i;

	(void)state;
	app_with_source(&app);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		post(&app, "/api/view", cases[i].body, &a);
		if (a.status != cases[i].status || !error_of(&a) ||
		    !strstr(error_of(&a), cases[i].msg))
			fail_msg("%s: %u %s", cases[i].body, a.status, a.text);
		answer_release(&a);
	}
	/* every route that takes a view refuses a focus it does not use; null is none */
	for (i = 0; i < sizeof(focus_routes) / sizeof(focus_routes[0]); i++) {
		post(&app, focus_routes[i], "{\"view\":\"calltree\",\"focus\":\"A\"}",
		     &a);
		if (a.status != 400 || !error_of(&a) ||
		    !strstr(error_of(&a), "focus is for the callers"))
			fail_msg("%s: %u %s", focus_routes[i], a.status, a.text);
		answer_release(&a);
	}
	post(&app, "/api/view", "{\"view\":\"calltree\",\"focus\":null}", &a);
	assert_int_equal(a.status, 200);
	answer_release(&a);
	ask(&app, "GET", "/api/view", get_focus, TOKEN, NULL, &a);
	assert_int_equal(a.status, 400);
	assert_non_null(strstr(error_of(&a), "not 'byname'"));
	answer_release(&a);
	/* a diff nested too deep */
	post(&app, "/api/view",
	     "{\"diff\":{\"test\":{\"diff\":{\"test\":{\"diff\":{\"test\":"
	     "{\"diff\":{\"test\":{\"diff\":{\"test\":{},\"base\":{}}},\"base\":{}}},"
	     "\"base\":{}}},\"base\":{}}},\"base\":{}}}",
	     &a);
	assert_int_equal(a.status, 400);
	assert_non_null(strstr(error_of(&a), "nest at most"));
	answer_release(&a);
	/* a text box over the limit */
	big = malloc(HS_API_MAX_TEXT + 40);
	memset(big, 'x', HS_API_MAX_TEXT + 39);
	memcpy(big, "{\"params\":{\"inc\":\"", 18);
	strcpy(big + HS_API_MAX_TEXT + 20, "\"}}");
	post(&app, "/api/view", big, &a);
	assert_int_equal(a.status, 400);
	assert_non_null(strstr(error_of(&a), "longer than"));
	answer_release(&a);
	free(big);
	/* a body over the limit (http.c sets the flag) */
	{
		struct hs_request req = {.method = "POST",
					 .path = "/api/view",
					 .cookie_token = TOKEN,
					 .body_too_large = 1};
		struct hs_response resp;

		hs_app_handle(&app, &req, &resp);
		assert_int_equal(resp.status, 413);
		hs_response_release(&resp);
	}
	/* the app still answers */
	post(&app, "/api/view", "{}", &a);
	assert_int_equal(a.status, 200);
	answer_release(&a);
	hs_app_release(&app);
}

/* Equal queries have equal keys, whatever the way they were written. */
static void canonical_keys(void **state)
{
	struct hs_api_query a, b;
	json_t *qa, *qb;

	(void)state;
	qa = json_loads("{\"params\":{\"start\":\"10\",\"inc\":null,\"group\":\"\"}}", 0,
			NULL);
	qb = json_loads(
	    "{\"trace\":0,\"steps\":[],\"params\":{\"start\":10.0,\"end\":\"\"}}", 0,
	    NULL);
	assert_int_equal(hs_api_query_parse(qa, 1, 0, &a, NULL), 0);
	assert_int_equal(hs_api_query_parse(qb, 1, 0, &b, NULL), 0);
	assert_string_equal(a.tree_key, b.tree_key);
	assert_true(a.params.vp.filter.start_ms == 10);
	assert_true(isnan(a.params.vp.filter.end_ms));
	assert_null(a.params.vp.filter.inc);
	hs_api_query_release(&a);
	hs_api_query_release(&b);
	json_decref(qa);
	json_decref(qb);

	/* a drill step: keys[0] is the trace, keys[1] with the step */
	qa = json_loads("{\"steps\":[{\"kind\":\"drill\",\"name\":\"B\",\"params\":{"
			"\"fold_pct\":1}}],"
			"\"view\":\"calltree\",\"limit\":3,\"depth\":2}",
			0, NULL);
	assert_int_equal(hs_api_query_parse(qa, 1, 0, &a, NULL), 0);
	assert_int_equal(a.src.nr_steps, 1);
	assert_string_equal(a.src.keys[0], "{\"steps\":[],\"trace\":0}");
	assert_non_null(strstr(a.src.keys[1], "\"name\":\"B\""));
	assert_non_null(strstr(a.src.keys[1], "\"what\":\"inc\""));
	assert_int_equal(a.src.steps[0].kind, HS_STEP_DRILL);
	assert_true(a.src.steps[0].params.fold_pct == 1);
	assert_int_equal(a.view.kind, HS_VIEW_CALLTREE);
	assert_int_equal(a.view.limit, 3);
	assert_int_equal(a.view.max_depth, 2);
	hs_api_query_release(&a);
	json_decref(qa);
}

/* The saved defaults of trace 0's default source: @ctx. */
static const struct hs_source_defaults *test_defaults(void *ctx, size_t trace,
						      const char *source)
{
	return trace == 0 && !source ? ctx : NULL;
}

/* The report-style arguments make the query `heapscope report` runs. */
static void report_arguments(void **state)
{
	static const char *const drill[] = {
	    "view",    "calltree", "drill",    "B:exc", "inc", "A",
	    "flatten", "1",	   "fold_pct", "5",	NULL,
	};
	static const char *const preset[] = {"preset", "group-modules", "fold", "X",
					     NULL};
	static const char *const bad[] = {"start", "soon", NULL};
	static const char *const both[] = {"q", "{}", "view", "byname", NULL};
	struct hs_source_defaults d = {.group = "G", .fold_pct = "2", .end = "30"};
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	json_t *q, *steps;
	char *s;

	(void)state;
	q = hs_api_query_from_args(args_get, (void *)drill, test_defaults, &d, &diag);
	assert_non_null(q);
	steps = json_object_get(q, "steps");
	assert_int_equal(json_array_size(steps), 2);
	s = json_dumps(q, JSON_SORT_KEYS | JSON_COMPACT);
	/* drill with every option and the saved GroupPats and End */
	assert_non_null(
	    strstr(s, "{\"kind\":\"drill\",\"name\":\"B\",\"params\":{\"end\":30.0,"
		      "\"exc\":\"\",\"fold\":\"\",\"fold_pct\":5.0,\"group\":\"G\","
		      "\"inc\":\"A\",\"start\":null},\"what\":\"exc\"}"));
	/* then flatten without IncPats, then the view without patterns */
	assert_non_null(
	    strstr(s, "{\"kind\":\"flatten\",\"params\":{\"end\":30.0,\"exc\":\"\","
		      "\"fold\":\"\",\"fold_pct\":5.0,\"group\":\"G\",\"inc\":\"\""));
	assert_non_null(
	    strstr(s, "\"params\":{\"end\":30.0,\"exc\":\"\",\"fold\":\"\","
		      "\"fold_pct\":null,\"group\":\"\",\"inc\":\"\",\"start\":null}"));
	free(s);
	json_decref(q);

	q = hs_api_query_from_args(args_get, (void *)preset, NULL, NULL, &diag);
	assert_non_null(q);
	s = json_dumps(json_object_get(q, "params"), JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(s,
			    "{\"end\":null,\"exc\":\"\",\"fold\":\"X\",\"fold_pct\":null,"
			    "\"group\":\"[group modules] {%}!->module $1\",\"inc\":\"\","
			    "\"start\":null}");
	free(s);
	json_decref(q);

	assert_null(hs_api_query_from_args(args_get, (void *)bad, NULL, NULL, &diag));
	assert_string_equal(diag.msg, "start expects a number, not 'soon'");
	diag = (struct hs_diag)HS_DIAG_INIT(NULL);
	assert_null(hs_api_query_from_args(args_get, (void *)both, NULL, NULL, &diag));
	assert_string_equal(diag.msg, "argument 'view' cannot go with q");
}

/* /api/view is byte for byte what the report code writes for the same query. */
static void view_is_report_json(void **state)
{
	static const char *const args[] = {"view", "caller-callee", "focus", "B", NULL};
	struct hs_query q = {.params = HS_VIEW_PARAMS_INIT,
			     .view = {.kind = HS_VIEW_CALLER_CALLEE, .focus = "B"}};
	struct hs_query_result r;
	struct hs_app app;
	struct answer a;
	char *expect;
	json_t *o;

	(void)state;
	app_with_source(&app);
	assert_int_equal(hs_query_run(&app.traces[0].sources[0].src, &q, &r, NULL), 0);
	o = hs_view_json(&r.view);
	expect = json_dumps(o, HS_VIEW_JSON_FLAGS);
	json_decref(o);
	hs_query_result_release(&r);
	ask(&app, "GET", "/api/view", args, TOKEN, NULL, &a);
	assert_int_equal(a.status, 200);
	assert_int_equal(strlen(a.text), strlen(expect) + 1);
	assert_memory_equal(a.text, expect, strlen(expect));
	answer_release(&a);
	/* again, from the cache, as a POST */
	post(&app, "/api/view", "{\"view\":\"caller-callee\",\"focus\":\"B\"}", &a);
	assert_memory_equal(a.text, expect, strlen(expect));
	answer_release(&a);
	assert_true(app.cache.hits >= 1);
	free(expect);
	hs_app_release(&app);
}

/*
 * hs_app_warm() asks the page's first questions ahead: afterwards the
 * page's own rows and timeline come from the cache (no miss), with the
 * bytes a server that asked nothing ahead answers.
 */
static void first_view_asked_ahead(void **state)
{
	static const char *const queries[][2] = {
	    {"/api/rows",
	     "{\"trace\":0,\"params\":{\"start\":\"\",\"end\":\"\",\"group\":"
	     "\"\",\"fold\":\"\",\"fold_pct\":\"\",\"inc\":\"\",\"exc\":\"\"},"
	     "\"view\":\"byname\",\"offset\":0,\"count\":60,\"sort\":null,"
	     "\"order\":null}"},
	    {"/api/timeline", "{\"trace\":0,\"params\":{\"start\":\"\",\"end\":\"\","
			      "\"group\":\"\",\"fold\":\"\",\"fold_pct\":\"\",\"inc\":"
			      "\"\",\"exc\":\"\"},\"buckets\":600}"},
	};
	static const char *const others[] = {
	    "{\"view\":\"byname\",\"offset\":0,\"count\":2}",
	    "{\"view\":\"byname\",\"offset\":0,\"count\":60,\"sort\":\"name\"}",
	    "{\"view\":\"byname\",\"offset\":0,\"count\":60,\"sort\":\"name\","
	    "\"order\":\"desc\"}",
	    "{\"view\":\"byname\",\"offset\":1,\"count\":2}",
	    "{\"view\":\"calltree\",\"offset\":0,\"count\":3,\"sort\":\"inc\","
	    "\"order\":\"asc\"}",
	    "{\"view\":\"calltree\",\"offset\":2,\"count\":3}",
	};
	struct hs_app warm, cold;
	struct answer a, b;
	size_t k, entries, hits, misses, entries2, misses2;

	(void)state;
	app_with_source(&warm);
	app_with_source(&cold);
	assert_int_equal(hs_app_warm(&warm), 0);
	assert_int_equal(warm.nr_warm, HS_APP_WARM);
	hs_app_warm_wait(&warm);
	assert_int_equal(warm.nr_warm, 0);
	hs_cache_counts(&warm.cache, &entries, &hits, &misses);
	/* the filter result, the call tree, ByName's parts, two answer texts */
	assert_true(entries >= 5);
	for (k = 0; k < 2; k++) {
		post(&warm, queries[k][0], queries[k][1], &a);
		post(&cold, queries[k][0], queries[k][1], &b);
		assert_int_equal(a.status, 200);
		assert_int_equal(b.status, 200);
		assert_string_equal(a.text, b.text);
		answer_release(&a);
		answer_release(&b);
	}
	hs_cache_counts(&warm.cache, &entries2, &hits, &misses2);
	assert_int_equal(entries2, entries);
	assert_int_equal(misses2, misses);
	hs_cache_counts(&cold.cache, &entries2, &hits, &misses2);
	assert_true(misses2 > 0);
	/* other first pages are kept apart (count, order); later ones made */
	for (k = 0; k < sizeof(others) / sizeof(*others); k++) {
		post(&warm, "/api/rows", others[k], &a);
		post(&cold, "/api/rows", others[k], &b);
		assert_int_equal(a.status, 200);
		assert_string_equal(a.text, b.text);
		answer_release(&a);
		post(&warm, "/api/rows", others[k], &a);
		assert_string_equal(a.text, b.text);
		answer_release(&a);
		answer_release(&b);
	}
	/* released while the threads may still run: they are waited for */
	hs_app_release(&cold);
	app_with_source(&cold);
	assert_int_equal(hs_app_warm(&cold), 0);
	hs_app_release(&cold);
	hs_app_release(&warm);
}

/* The ids of an answer's rows, as "0 1 2". */
static void ids_of(json_t *rows, char *buf, size_t n)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < json_array_size(rows); i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? " " : "",
					(long long)json_integer_value(json_object_get(
					    json_array_get(rows, i), "id")));
}

/*
 * The call tree of the recursion source, depth first:
 * 0 ROOT, 1 A (15), 2 E (8), 3 B (7), 4 C (3), 5 B (1), 6 D (1).
 */
static void tree_rows(void **state)
{
	struct hs_app app;
	struct answer a;
	char ids[128];
	json_t *rows;

	(void)state;
	app_with_source(&app);
	/* the roots and one level; A has two children, so nothing opens further */
	post(&app, "/api/tree", "{\"view\":\"calltree\"}", &a);
	assert_int_equal(a.status, 200);
	rows = json_object_get(a.json, "rows");
	ids_of(rows, ids, sizeof(ids));
	assert_string_equal(ids, "0 1");
	assert_true(num_at(a.json, "total_rows") == 7);
	assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "parent")));
	answer_release(&a);
	/* A's children; B -> C -> B -> D is a chain of single children */
	post(&app, "/api/tree", "{\"view\":\"calltree\",\"of\":[1]}", &a);
	ids_of(json_object_get(a.json, "rows"), ids, sizeof(ids));
	assert_string_equal(ids, "2 3 4 5 6");
	answer_release(&a);
	post(&app, "/api/tree", "{\"view\":\"calltree\",\"of\":[1],\"auto\":false}", &a);
	ids_of(json_object_get(a.json, "rows"), ids, sizeof(ids));
	assert_string_equal(ids, "2 3");
	answer_release(&a);
	/* everything under ROOT, at most 3 rows */
	post(&app, "/api/tree",
	     "{\"view\":\"calltree\",\"of\":[0],\"levels\":0,\"max_rows\":3}", &a);
	ids_of(json_object_get(a.json, "rows"), ids, sizeof(ids));
	assert_string_equal(ids, "1 2 3");
	assert_true(json_is_true(json_object_get(a.json, "truncated")));
	answer_release(&a);
	post(&app, "/api/tree", "{\"view\":\"calltree\",\"of\":[9]}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	/* children by name: B's chain first, then E */
	post(&app, "/api/tree", "{\"view\":\"calltree\",\"of\":[1],\"sort\":\"name\"}",
	     &a);
	ids_of(json_object_get(a.json, "rows"), ids, sizeof(ids));
	assert_string_equal(ids, "3 4 5 6 2");
	answer_release(&a);
	/* the skeleton: ids, parents and numbers of children; two whole rows */
	post(&app, "/api/tree",
	     "{\"view\":\"calltree\",\"of\":[0],\"levels\":0,"
	     "\"skeleton\":true,\"detail\":2}",
	     &a);
	assert_int_equal(a.status, 200);
	expect_json(json_object_get(a.json, "id"), "[1,2,3,4,5,6]");
	expect_json(json_object_get(a.json, "parent"), "[0,1,1,3,4,5]");
	expect_json(json_object_get(a.json, "nr_children"), "[2,0,1,1,1,0]");
	assert_int_equal(json_array_size(json_object_get(a.json, "rows")), 2);
	assert_true(num_at(a.json, "total_rows") == 7);
	answer_release(&a);
	post(&app, "/api/tree", "{\"view\":\"calltree\",\"skeleton\":true}", &a);
	expect_json(json_object_get(a.json, "parent"), "[null,0]");
	answer_release(&a);
	/* rows by id, in the order asked */
	post(&app, "/api/rows", "{\"view\":\"calltree\",\"ids\":[6,0]}", &a);
	rows = json_object_get(a.json, "rows");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(rows, 0), "name")), "D");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(rows, 1), "name")), "ROOT");
	answer_release(&a);
	post(&app, "/api/rows", "{\"view\":\"calltree\",\"ids\":[7]}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	/* Callers of B: B <- A <- ROOT, and B <- C <- B <- A <- ROOT */
	post(&app, "/api/tree", "{\"view\":\"callers\",\"focus\":\"B\",\"levels\":0}",
	     &a);
	rows = json_object_get(a.json, "rows");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(rows, 0), "name")), "B");
	assert_true(num_at(json_array_get(rows, 0), "inc") == 7);
	answer_release(&a);
	hs_app_release(&app);
}

/*
 * The rows /api/rows, /api/tree and /api/find make for the rows they
 * show (ByName and CallTree in parts, analysis/view_part.h) are the whole
 * view's rows, When included, with their parents.
 */
static void expect_row_is(json_t *row, const struct hs_view *v, size_t id)
{
	uint32_t parent = v->rows[id].parent;
	char *got, *want;
	json_t *w;

	assert_true(num_at(row, "id") == (double)id);
	if (parent == HS_NO_NODE)
		assert_true(json_is_null(json_object_get(row, "parent")));
	else
		assert_true(num_at(row, "parent") == (double)parent);
	row = json_deep_copy(row);
	json_object_del(row, "id");
	json_object_del(row, "parent");
	w = hs_view_row_json(v, id);
	got = json_dumps(row, JSON_COMPACT | JSON_REAL_PRECISION(15));
	want = json_dumps(w, JSON_COMPACT | JSON_REAL_PRECISION(15));
	assert_string_equal(got, want);
	free(got);
	free(want);
	json_decref(w);
	json_decref(row);
}

static void expect_rows_of_view(struct hs_app *app, const char *kind, const char *params,
				const struct hs_view *v)
{
	char body[512];
	struct answer a;
	json_t *rows;
	size_t i, n = v->nr_rows;

	/* ByName: a page of all rows; CallTree: all rows by id, last first */
	if (!strcmp(kind, "byname")) {
		snprintf(body, sizeof(body), "{\"view\":\"byname\",%s\"count\":%zu}",
			 params, n);
	} else {
		size_t len = (size_t)snprintf(body, sizeof(body),
					      "{\"view\":\"calltree\",%s\"ids\":[", params);

		for (i = n; i-- > 0;)
			len += (size_t)snprintf(body + len, sizeof(body) - len, "%zu%s", i,
						i ? "," : "]}");
	}
	post(app, "/api/rows", body, &a);
	assert_int_equal(a.status, 200);
	assert_true(num_at(a.json, "total_rows") == (double)n);
	rows = json_object_get(a.json, "rows");
	assert_int_equal(json_array_size(rows), n);
	for (i = 0; i < n; i++)
		expect_row_is(json_array_get(rows, i), v, strcmp(kind, "byname") ? n - 1 - i : i);
	answer_release(&a);
}

static void rows_in_parts(void **state)
{
	static const struct {
		const char *json;
		double fold_pct, start_ms, end_ms;
	} params[] = {
	    {"", NAN, NAN, NAN},
	    {"\"params\":{\"fold_pct\":10},", 10, NAN, NAN},
	    {"\"params\":{\"start\":5,\"end\":25},", NAN, 5, 25},
	};
	static const enum hs_view_kind kinds[] = {HS_VIEW_BYNAME, HS_VIEW_CALLTREE};
	struct hs_query q = {.params = HS_VIEW_PARAMS_INIT};
	struct hs_query_result r;
	struct hs_app app;
	struct answer a;
	size_t i, k;

	(void)state;
	app_with_source(&app);
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		for (k = 0; k < 2; k++) {
			q.params.fold_pct = params[i].fold_pct;
			q.params.filter.start_ms = params[i].start_ms;
			q.params.filter.end_ms = params[i].end_ms;
			q.view.kind = kinds[k];
			assert_int_equal(
			    hs_query_run(&app.traces[0].sources[0].src, &q, &r, NULL), 0);
			expect_rows_of_view(&app, hs_view_kind_name(kinds[k]),
					    params[i].json, &r.view);
			hs_query_result_release(&r);
		}
	/* the skeleton's whole rows (1, 2, 3) and Find's row are made so too */
	q.params = (struct hs_view_params)HS_VIEW_PARAMS_INIT;
	q.view.kind = HS_VIEW_CALLTREE;
	assert_int_equal(hs_query_run(&app.traces[0].sources[0].src, &q, &r, NULL), 0);
	post(&app, "/api/tree",
	     "{\"view\":\"calltree\",\"of\":[0],\"levels\":0,\"skeleton\":true,"
	     "\"detail\":3}",
	     &a);
	assert_int_equal(json_array_size(json_object_get(a.json, "rows")), 3);
	for (i = 0; i < 3; i++)
		expect_row_is(json_array_get(json_object_get(a.json, "rows"), i), &r.view,
			      i + 1);
	answer_release(&a);
	post(&app, "/api/find", "{\"view\":\"calltree\",\"pattern\":\"^D$\"}", &a);
	expect_row_is(json_object_get(a.json, "row"), &r.view, 6);
	expect_json(json_object_get(a.json, "path"), "[0,1,3,4,5]");
	answer_release(&a);
	/* in another order than the tree's own: depth first, children by name */
	post(&app, "/api/find",
	     "{\"view\":\"calltree\",\"pattern\":\"^[de]$\",\"sort\":\"name\"}",
	     &a);
	assert_true(num_at(a.json, "id") == 6);
	assert_true(num_at(a.json, "index") == 5);
	answer_release(&a);
	hs_query_result_release(&r);
	q.view.kind = HS_VIEW_BYNAME;
	assert_int_equal(hs_query_run(&app.traces[0].sources[0].src, &q, &r, NULL), 0);
	post(&app, "/api/find", "{\"view\":\"byname\",\"pattern\":\"^C$\"}", &a);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(a.json, "row"), "name")), "C");
	expect_row_is(json_object_get(a.json, "row"), &r.view,
		      (size_t)num_at(json_object_get(a.json, "row"), "id"));
	answer_release(&a);
	hs_query_result_release(&r);
	hs_app_release(&app);
}

/* ByName pages in any column's order; Find in that order. */
static void rows_and_find(void **state)
{
	struct hs_app app;
	struct answer a;
	json_t *rows;

	(void)state;
	app_with_source(&app);
	/* by |Exc|: E 8, B 4, C 2, D 1, then A and ROOT (0) by |Inc| */
	post(&app, "/api/rows", "{\"offset\":1,\"count\":2}", &a);
	rows = json_object_get(a.json, "rows");
	assert_int_equal(json_array_size(rows), 2);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(rows, 0), "name")), "B");
	assert_true(num_at(a.json, "total_rows") == 6);
	answer_release(&a);
	post(&app, "/api/rows", "{\"sort\":\"name\",\"count\":10}", &a);
	rows = json_object_get(a.json, "rows");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(rows, 0), "name")), "A");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(rows, 5), "name")), "ROOT");
	answer_release(&a);
	post(&app, "/api/rows", "{\"sort\":\"inc\",\"order\":\"asc\",\"count\":1}", &a);
	rows = json_object_get(a.json, "rows");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(rows, 0), "name")), "D");
	answer_release(&a);
	post(&app, "/api/rows", "{\"sort\":\"size\"}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	post(&app, "/api/rows", "{\"count\":100000}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	/* find "^[cd]$" in the tree: C (row 4) whose ancestors are 0 1 3 */
	post(&app, "/api/find", "{\"view\":\"calltree\",\"pattern\":\"^[cd]$\"}", &a);
	assert_true(num_at(a.json, "id") == 4);
	expect_json(json_object_get(a.json, "path"), "[0,1,3]");
	answer_release(&a);
	post(&app, "/api/find",
	     "{\"view\":\"calltree\",\"pattern\":\"^[cd]$\",\"from\":4}", &a);
	assert_true(num_at(a.json, "id") == 6);
	answer_release(&a);
	post(&app, "/api/find",
	     "{\"view\":\"calltree\",\"pattern\":\"^[cd]$\",\"from\":4,"
	     "\"backward\":true}",
	     &a);
	assert_true(num_at(a.json, "id") == 6);
	answer_release(&a);
	post(&app, "/api/find", "{\"pattern\":\"zz\"}", &a);
	assert_true(json_is_null(json_object_get(a.json, "id")));
	answer_release(&a);
	post(&app, "/api/find", "{\"pattern\":\"(\"}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	hs_app_release(&app);
}

/* Timeline over 0-30 ms in 3 buckets; IncPats C keeps samples 1 and 2. */
static void timeline_and_samples(void **state)
{
	struct hs_app app;
	struct answer a;
	json_t *rows;

	(void)state;
	app_with_source(&app);
	post(&app, "/api/timeline", "{\"buckets\":3,\"params\":{\"inc\":\"C\"}}", &a);
	assert_int_equal(a.status, 200);
	expect_json(json_object_get(a.json, "all"), "[1.0,2.0,12.0]");
	expect_json(json_object_get(a.json, "filtered"), "[1.0,2.0,0.0]");
	assert_true(num_at(a.json, "bucket_ms") == 10);
	answer_release(&a);
	post(&app, "/api/timeline", "{\"buckets\":0}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	/* a Callers node's own samples: B called by C;B is sample 0 alone */
	post(&app, "/api/timeline",
	     "{\"buckets\":3,\"steps\":[{\"kind\":\"drill\",\"tree\":\"callers\","
	     "\"path\":[\"B\",\"C\",\"B\"]}]}",
	     &a);
	assert_int_equal(a.status, 200);
	expect_json(json_object_get(a.json, "filtered"), "[1.0,0.0,0.0]");
	answer_release(&a);
	/* and B's callee C is sample 1 alone (the time axis is the drilled source's) */
	post(&app, "/api/view",
	     "{\"steps\":[{\"kind\":\"drill\",\"tree\":\"callees\","
	     "\"path\":[\"B\",\"C\"]}]}",
	     &a);
	assert_int_equal(a.status, 200);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == 2);
	assert_true(num_at(json_object_get(a.json, "summary"), "samples") == 1);
	answer_release(&a);
	/* the samples under A;B;C */
	post(&app, "/api/samples", "{\"path\":[\"A\",\"B\",\"C\"]}", &a);
	assert_true(num_at(a.json, "total") == 2);
	rows = json_object_get(a.json, "rows");
	assert_true(num_at(json_array_get(rows, 1), "time_ms") == 10);
	expect_json(json_object_get(json_array_get(rows, 0), "stack"),
		    "[\"A\",\"B\",\"C\",\"B\",\"D\"]");
	answer_release(&a);
	post(&app, "/api/samples",
	     "{\"name\":\"B\",\"what\":\"exc\",\"offset\":0,\"count\":5}", &a);
	assert_true(num_at(a.json, "total") == 1);
	answer_release(&a);
	post(&app, "/api/samples", "{\"name\":\"nope\"}", &a);
	assert_int_equal(a.status, 404);
	answer_release(&a);
	/* Show Events on a Callers node: B called by C;B is sample 0 alone */
	post(&app, "/api/samples", "{\"tree\":\"callers\",\"path\":[\"B\",\"C\",\"B\"]}",
	     &a);
	assert_int_equal(a.status, 200);
	assert_true(num_at(a.json, "total") == 1);
	rows = json_object_get(a.json, "rows");
	assert_true(num_at(json_array_get(rows, 0), "time_ms") == 0);
	answer_release(&a);
	/* on a Callees node: B's callee C is sample 1 alone, metric 2 */
	post(&app, "/api/samples", "{\"tree\":\"callees\",\"path\":[\"B\",\"C\"]}", &a);
	assert_true(num_at(a.json, "total") == 1);
	rows = json_object_get(a.json, "rows");
	assert_true(num_at(json_array_get(rows, 0), "metric") == 2);
	answer_release(&a);
	post(&app, "/api/samples", "{\"tree\":\"callees\",\"path\":[\"B\",\"Q\"]}", &a);
	assert_int_equal(a.status, 404);
	answer_release(&a);
	post(&app, "/api/samples", "{\"tree\":\"flame\",\"path\":[\"B\"]}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	post(&app, "/api/samples",
	     "{\"tree\":\"callers\",\"what\":\"exc\",\"path\":[\"B\"]}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	post(&app, "/api/samples", "{\"tree\":\"callers\",\"name\":\"B\"}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	post(&app, "/api/stats", "{}", &a);
	assert_true(num_at(json_object_get(a.json, "source"), "samples") == 4);
	assert_true(num_at(json_object_get(a.json, "source"), "max_depth") == 5);
	answer_release(&a);
	/* Goto Source: no locations in this source, what the trace cannot give */
	post(&app, "/api/source", "{\"name\":\"B\"}", &a);
	assert_int_equal(a.status, 501);
	assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
			       "no line information"));
	answer_release(&a);
	post(&app, "/api/source", "{\"name\":\"Q\"}", &a);
	assert_int_equal(a.status, 404);
	answer_release(&a);
	post(&app, "/api/source", "{}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	hs_app_release(&app);
}

/* The row of @rows (a JSON array) named @name, or NULL. */
static json_t *json_row_named(json_t *rows, const char *name)
{
	json_t *r;
	size_t i;

	json_array_foreach(
	    rows, i,
	    r) if (!strcmp(json_string_value(json_object_get(r, "name")), name)) return r;
	return NULL;
}

/*
 * Names from files need not be UTF-8: the answers carry them with U+FFFD
 * for the bad bytes (as `report --format json` does) instead of failing;
 * a request's own arguments must be UTF-8 (400).
 */
static void names_not_utf8(void **state)
{
	static const char *const bad_arg[] = {"view", "callers", "focus", "B\xff", NULL};
	const char *fixed = "B" HS_UTF8_REPLACEMENT HS_UTF8_REPLACEMENT;
	struct hs_stack_source s0, s1;
	struct hs_app app;
	struct answer a;
	json_t *r;

	(void)state;
	hs_source_init(&s0);
	add(&s0, 0, 1, 1, "A;B\xff\xfe");
	add(&s0, 10, 2, 1, "A;C");
	hs_source_init(&s1);
	add(&s1, 0, 5, 1, "A;B\xff\xfe");
	add(&s1, 10, 2, 1, "A;C");
	assert_int_equal(hs_app_init(&app, TOKEN), 0);
	assert_int_equal(hs_app_add_trace(&app, "base\xe9.folded", "folded", &s0), 0);
	assert_int_equal(hs_app_add_trace(&app, "test.folded", "folded", &s1), 0);
	post(&app, "/api/info", "{}", &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(a.json, "traces"), 0), "name")),
	    "base" HS_UTF8_REPLACEMENT ".folded");
	answer_release(&a);
	post(&app, "/api/view", "{}", &a);
	assert_int_equal(a.status, 200);
	r = json_row_named(json_object_get(a.json, "rows"), fixed);
	assert_non_null(r);
	assert_true(num_at(r, "exc") == 1);
	answer_release(&a);
	post(&app, "/api/view", "{\"view\":\"calltree\"}", &a);
	assert_int_equal(a.status, 200);
	answer_release(&a);
	post(&app, "/api/samples", "{\"name\":\"A\"}", &a);
	assert_int_equal(a.status, 200);
	expect_json(
	    json_object_get(json_array_get(json_object_get(a.json, "rows"), 0), "stack"),
	    "[\"A\",\"B" HS_UTF8_REPLACEMENT HS_UTF8_REPLACEMENT "\"]");
	answer_release(&a);
	post(&app, "/api/stats", "{}", &a);
	assert_int_equal(a.status, 200);
	answer_release(&a);
	/* B grew from 1 to 5: Overweight names it */
	post(&app, "/api/overweight", "{\"trace\":1,\"base\":{\"trace\":0}}", &a);
	assert_int_equal(a.status, 200);
	assert_non_null(json_row_named(json_object_get(a.json, "rows"), fixed));
	answer_release(&a);
	/* a request's bytes that are not UTF-8; an error quoting them */
	ask(&app, "GET", "/api/view", bad_arg, TOKEN, NULL, &a);
	assert_int_equal(a.status, 400);
	assert_string_equal(error_of(&a), "argument 'focus' is not UTF-8");
	answer_release(&a);
	post(&app, "/api/\xff", "{}", &a);
	assert_int_equal(a.status, 404);
	assert_string_equal(error_of(&a), "no API call /api/" HS_UTF8_REPLACEMENT);
	answer_release(&a);
	hs_app_release(&app);
}

/* A drill, a diff of the source with itself (all zero) and the flame graph. */
static void drill_diff_flame(void **state)
{
	struct hs_app app;
	struct answer a;
	json_t *rows;

	(void)state;
	app_with_source(&app);
	post(&app, "/api/view",
	     "{\"steps\":[{\"kind\":\"drill\",\"path\":[\"A\",\"B\",\"C\"]}]}", &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == 3);
	answer_release(&a);
	post(&app, "/api/view", "{\"diff\":{\"test\":{},\"base\":{}}}", &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == 0);
	assert_true(num_at(json_object_get(a.json, "summary"), "samples") == 8);
	answer_release(&a);
	/* the test side drilled into E: 8 - 15 */
	post(&app, "/api/view",
	     "{\"diff\":{\"test\":{\"steps\":[{\"kind\":\"drill\","
	     "\"name\":\"E\"}]},\"base\":{}}}",
	     &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == -7);
	answer_release(&a);
	post(&app, "/api/flame", "{\"view\":\"flame\",\"root\":3,\"min_width\":0.5}", &a);
	rows = json_object_get(a.json, "rows");
	/* B (7/15 wide), then C (3/15) is under half of B: only B */
	assert_int_equal(json_array_size(rows), 1);
	expect_json(json_object_get(a.json, "root_path"), "[\"A\",\"B\"]");
	answer_release(&a);
	post(&app, "/api/overweight", "{\"base\":{}}", &a);
	assert_int_equal(a.status, 200);
	assert_true(num_at(a.json, "base_total") == 15);
	answer_release(&a);
	post(&app, "/api/overweight", "{}", &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	hs_app_release(&app);
}

/* A trace with two sources: the first is the default, the other by name. */
static void sources_of_a_trace(void **state)
{
	struct hs_stack_source other;
	struct hs_app app;
	struct answer a;
	json_t *srcs;

	(void)state;
	app_with_source(&app);
	hs_source_init(&other);
	add(&other, 5, 100, 1, "X;Y");
	assert_int_equal(hs_app_add_source(&app, 0, "net", &other), 0);
	assert_int_equal(other.nr_samples, 0);
	hs_source_init(&other);
	assert_int_equal(hs_app_add_source(&app, 0, "net", &other), -EEXIST);
	assert_int_equal(hs_app_add_source(&app, 3, "x", &other), -EINVAL);
	assert_string_equal(hs_app_source(&app, 0, NULL)->name, "samples");
	assert_null(hs_app_source(&app, 0, "leaks"));
	ask(&app, "GET", "/api/info", NULL, TOKEN, NULL, &a);
	srcs = json_object_get(json_array_get(json_object_get(a.json, "traces"), 0),
			       "sources");
	assert_int_equal(json_array_size(srcs), 2);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(srcs, 1), "name")), "net");
	answer_release(&a);
	post(&app, "/api/view", "{\"source\":\"net\"}", &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == 100);
	answer_release(&a);
	post(&app, "/api/view", "{\"source\":\"samples\"}", &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == 15);
	answer_release(&a);
	post(&app, "/api/view", "{\"source\":\"leaks\"}", &a);
	assert_int_equal(a.status, 404);
	assert_string_equal(error_of(&a), "trace 0 has no source 'leaks'");
	answer_release(&a);
	post(&app, "/api/view", "{\"source\":\"net\",\"diff\":{\"test\":{},\"base\":{}}}",
	     &a);
	assert_int_equal(a.status, 400);
	answer_release(&a);
	/* a diff of the two sources: 15 - 100 */
	post(&app, "/api/view", "{\"diff\":{\"test\":{},\"base\":{\"source\":\"net\"}}}",
	     &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == -85);
	answer_release(&a);
	hs_app_release(&app);
}

/*
 * view a b c: a merged trace is its members' sources appended, each under
 * a "Trace NAME" frame (folded stacks have no process), with the first
 * member's defaults; its other sources are merged when asked for.
 */
static void merged_traces(void **state)
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	struct hs_stack_source s;
	struct hs_app app;
	struct answer a;
	json_t *t2;

	(void)state;
	assert_int_equal(hs_app_init(&app, TOKEN), 0);
	recursion_source(&s); /* 15 */
	s.defaults.fold = hs_strdup("E");
	assert_int_equal(hs_app_add_trace(&app, "a.folded", "folded", &s), 0);
	hs_source_init(&s);
	add(&s, 5, 100, 1, "X;Y");
	assert_int_equal(hs_app_add_source(&app, 0, "net", &s), 0);
	hs_source_init(&s);
	add(&s, 0, 7, 1, "A;F");
	assert_int_equal(hs_app_add_trace(&app, "b.folded", "folded", &s), 0);
	hs_source_init(&s);
	add(&s, 1, 50, 1, "X");
	assert_int_equal(hs_app_add_source(&app, 1, "net", &s), 0);
	assert_int_equal(hs_app_merge(&app, "one", 1, 0, &diag), -EINVAL);
	assert_int_equal(app.nr_traces, 2);
	assert_int_equal(hs_app_merge(&app, "all 2 files", 2, 0, &diag), 0);
	assert_int_equal(app.nr_traces, 3);
	assert_true(app.traces[2].sources[0].loaded && !app.traces[2].sources[1].loaded);

	ask(&app, "GET", "/api/info", NULL, TOKEN, NULL, &a);
	t2 = json_array_get(json_object_get(a.json, "traces"), 2);
	assert_string_equal(json_string_value(json_object_get(t2, "name")),
			    "all 2 files");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(t2, "defaults"), "fold")),
	    "E");
	answer_release(&a);
	post(&app, "/api/view", "{\"trace\":2,\"params\":{\"fold\":\"\"}}", &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == 22);
	answer_release(&a);
	/* each member under its own frame */
	post(&app, "/api/view",
	     "{\"trace\":2,\"view\":\"callees\",\"focus\":\"Trace b.folded\","
	     "\"params\":{\"fold\":\"\"}}",
	     &a);
	assert_int_equal(a.status, 200);
	assert_true(num_at(json_object_get(a.json, "tree"), "inc") == 7);
	answer_release(&a);
	post(&app, "/api/view", "{\"trace\":2,\"source\":\"net\"}", &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == 150);
	answer_release(&a);

	/* a member without the source: the merged one cannot have it */
	recursion_source(&s);
	assert_int_equal(hs_app_add_trace(&app, "c.folded", "folded", &s), 0);
	/* first: the others one further */
	assert_int_equal(hs_app_merge(&app, "all 4", 4, 1, &diag), 0);
	assert_string_equal(app.traces[0].name, "all 4");
	assert_string_equal(app.traces[1].name, "a.folded");
	post(&app, "/api/view", "{\"trace\":0,\"params\":{\"fold\":\"\"}}", &a);
	/* a, b, the first merge (a and b again) and c */
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") ==
		    15 + 7 + 22 + 15);
	answer_release(&a);
	/* the first merge's members moved with it */
	post(&app, "/api/view", "{\"trace\":3,\"source\":\"net\"}", &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") == 150);
	answer_release(&a);
	post(&app, "/api/view", "{\"trace\":0,\"source\":\"net\"}", &a);
	assert_int_not_equal(a.status, 200);
	assert_non_null(strstr(error_of(&a), "has no source 'net'"));
	answer_release(&a);
	hs_app_release(&app);
}

/* Old entries go, with what borrows from them; held ones stay. */
static void cache_evicts(void **state)
{
	struct hs_cache c;
	struct hs_cache_hold h = HS_CACHE_HOLD_INIT;
	struct hs_cache_entry *s[3], *t, *v;
	char key[8];
	int i;

	(void)state;
	hs_cache_init(&c);
	c.max[HS_CACHE_SOURCE] = 2;
	for (i = 0; i < 2; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		s[i] = hs_cache_entry_new(HS_CACHE_SOURCE, key, NULL);
		assert_int_equal(hs_cache_add(&c, &h, s[i]), 0);
	}
	t = hs_cache_entry_new(HS_CACHE_TREE, "t0", s[0]);
	assert_int_equal(hs_cache_add(&c, &h, t), 0);
	v = hs_cache_entry_new(HS_CACHE_VIEW, "v0", t);
	assert_int_equal(hs_cache_add(&c, &h, v), 0);
	/* all held by this request: a third source keeps them */
	s[2] = hs_cache_entry_new(HS_CACHE_SOURCE, "s2", NULL);
	assert_int_equal(hs_cache_add(&c, &h, s[2]), 0);
	assert_int_equal(c.nr, 5);
	/* next request: s1 and s2 are used, s0 goes with t0 and v0 */
	hs_cache_hold_release(&c, &h);
	assert_non_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "s1"));
	assert_non_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "s2"));
	assert_int_equal(
	    hs_cache_add(&c, &h, hs_cache_entry_new(HS_CACHE_SOURCE, "s3", NULL)), 0);
	assert_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "s0"));
	assert_null(hs_cache_get(&c, &h, HS_CACHE_VIEW, "v0"));
	assert_null(hs_cache_get(&c, &h, HS_CACHE_TREE, "t0"));
	/* using a view uses its tree and source */
	hs_cache_hold_release(&c, &h);
	t = hs_cache_entry_new(HS_CACHE_TREE, "t1",
			       hs_cache_get(&c, &h, HS_CACHE_SOURCE, "s1"));
	assert_int_equal(hs_cache_add(&c, &h, t), 0);
	hs_cache_hold_release(&c, &h);
	assert_non_null(hs_cache_get(&c, &h, HS_CACHE_TREE, "t1"));
	assert_int_equal(
	    hs_cache_add(&c, &h, hs_cache_entry_new(HS_CACHE_SOURCE, "s4", NULL)), 0);
	assert_non_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "s1"));
	assert_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "s2"));
	hs_cache_hold_release(&c, &h);
	hs_cache_release(&c);

	/* over the memory budget, old entries of any kind go */
	hs_cache_init(&c);
	v = hs_cache_entry_new(HS_CACHE_VIEW, "v", NULL);
	assert_int_equal(hs_cache_add(&c, &h, v), 0);
	hs_cache_hold_release(&c, &h);
	s[0] = hs_cache_entry_new(HS_CACHE_SOURCE, "big", NULL);
	assert_int_equal(
	    hs_source_intern_frame(&s[0]->u.source.src, "main", 4, &(uint32_t){0}), 0);
	c.max_bytes = 1;
	assert_int_equal(hs_cache_add(&c, &h, s[0]), 0);
	assert_true(s[0]->bytes > 1);
	assert_null(hs_cache_get(&c, &h, HS_CACHE_VIEW, "v"));
	/* the held newcomer stays although the budget is still exceeded */
	assert_non_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "big"));
	assert_int_equal(c.bytes, s[0]->bytes);
	hs_cache_hold_release(&c, &h);
	hs_cache_release(&c);

	/* room for a build: entries nobody holds go before it, held ones stay */
	hs_cache_init(&c);
	s[0] = hs_cache_entry_new(HS_CACHE_SOURCE, "old", NULL);
	assert_int_equal(
	    hs_source_intern_frame(&s[0]->u.source.src, "main", 4, &(uint32_t){0}), 0);
	assert_int_equal(hs_cache_add(&c, &h, s[0]), 0);
	hs_cache_hold_release(&c, &h);
	c.max_bytes = c.bytes + 10;
	hs_cache_make_room(&c, HS_CACHE_TREE, 10);
	assert_non_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "old"));
	hs_cache_make_room(&c, HS_CACHE_TREE, 11);
	assert_int_equal(c.nr, 1);
	hs_cache_hold_release(&c, &h);
	hs_cache_make_room(&c, HS_CACHE_TREE, 11);
	assert_int_equal(c.nr, 0);
	assert_int_equal(c.bytes, 0);
	hs_cache_release(&c);

	/*
	 * what is held beside the cache and a request's temporaries come out
	 * of the budget, down to the entries' floor
	 */
	hs_cache_init(&c);
	s[0] = hs_cache_entry_new(HS_CACHE_SOURCE, "kept", NULL);
	assert_int_equal(
	    hs_source_intern_frame(&s[0]->u.source.src, "main", 4, &(uint32_t){0}), 0);
	assert_int_equal(hs_cache_add(&c, &h, s[0]), 0);
	hs_cache_hold_release(&c, &h);
	c.working = 100;
	c.min_bytes = c.bytes;
	c.max_bytes = 100 + c.bytes + 50;
	hs_cache_count_outside(&c, 50);
	assert_non_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "kept"));
	hs_cache_hold_release(&c, &h);
	hs_cache_make_room(&c, HS_CACHE_TREE, 1);
	assert_int_equal(c.nr, 0);
	s[0] = hs_cache_entry_new(HS_CACHE_SOURCE, "floor", NULL);
	assert_int_equal(
	    hs_source_intern_frame(&s[0]->u.source.src, "main", 4, &(uint32_t){0}), 0);
	assert_int_equal(hs_cache_add(&c, &h, s[0]), 0);
	hs_cache_hold_release(&c, &h);
	/* far more beside it: the entries still keep their floor */
	hs_cache_count_outside(&c, (size_t)1 << 40);
	assert_non_null(hs_cache_get(&c, &h, HS_CACHE_SOURCE, "floor"));
	hs_cache_hold_release(&c, &h);
	hs_cache_make_room(&c, HS_CACHE_TREE, 1);
	assert_int_equal(c.nr, 0);
	hs_cache_release(&c);
}

/* Listed entries of @kind in @app's cache. */
static size_t nr_of_kind(struct hs_app *app, enum hs_cache_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < app->cache.nr; i++)
		n += app->cache.e[i]->kind == kind;
	return n;
}

/*
 * The call trees of one set of patterns share one filter result, whatever
 * their Fold% and time window; a filter result that goes takes its trees.
 */
static void trees_share_the_filter_of_their_patterns(void **state)
{
	static const char *const bodies[] = {
	    "{\"view\":\"byname\"}",
	    "{\"view\":\"byname\",\"params\":{\"fold_pct\":10}}",
	    "{\"view\":\"byname\",\"params\":{\"start\":0,\"end\":1}}",
	    "{\"view\":\"byname\",\"params\":{\"inc\":\"C\"}}",
	};
	struct hs_cache_entry *filter = NULL, *e;
	struct hs_app app;
	struct answer a;
	char *alone[4];
	size_t i;

	(void)state;
	/* each answer on its own, in a fresh app */
	for (i = 0; i < 4; i++) {
		app_with_source(&app);
		post(&app, "/api/view", bodies[i], &a);
		assert_int_equal(a.status, 200);
		alone[i] = strdup(a.text);
		answer_release(&a);
		hs_app_release(&app);
	}
	app_with_source(&app);
	for (i = 0; i < 4; i++) {
		post(&app, "/api/view", bodies[i], &a);
		assert_int_equal(a.status, 200);
		assert_string_equal(a.text, alone[i]);
		answer_release(&a);
	}
	assert_int_equal(nr_of_kind(&app, HS_CACHE_FILTER), 2);
	assert_int_equal(nr_of_kind(&app, HS_CACHE_TREE), 4);
	for (i = 0; i < app.cache.nr; i++) {
		e = app.cache.e[i];
		if (e->kind != HS_CACHE_TREE)
			continue;
		assert_non_null(e->dep);
		assert_int_equal(e->dep->kind, HS_CACHE_FILTER);
		assert_true(e->u.tree.f.borrowed);
		if (!strstr(e->key, "\"inc\":\"C\"")) {
			if (!filter)
				filter = e->dep;
			assert_ptr_equal(e->dep, filter);
		} else {
			assert_ptr_not_equal(e->dep, filter);
		}
	}
	assert_non_null(filter);
	/* one filter result at most: the older goes with its three trees */
	app.cache.max[HS_CACHE_FILTER] = 1;
	post(&app, "/api/view", "{\"view\":\"byname\",\"params\":{\"exc\":\"D\"}}",
	     &a);
	assert_int_equal(a.status, 200);
	answer_release(&a);
	assert_int_equal(nr_of_kind(&app, HS_CACHE_FILTER), 1);
	assert_int_equal(nr_of_kind(&app, HS_CACHE_TREE), 1);
	for (i = 0; i < app.cache.nr; i++)
		assert_int_equal(app.cache.e[i]->refs, 0);
	/* and the first answer is made again, the same */
	post(&app, "/api/view", bodies[0], &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.text, alone[0]);
	answer_release(&a);
	for (i = 0; i < 4; i++)
		free(alone[i]);
	hs_app_release(&app);
}

/* GET @path with @args and the token cookie. */
static void get(struct hs_app *app, const char *path, const char *const *args,
		struct answer *out)
{
	ask(app, "GET", path, args, TOKEN, NULL, out);
}

/* Every call's own keys work as GET arguments, as in a POST body (issue 19, 18). */
static void get_arguments_of_every_call(void **state)
{
	static const char *const find_args[] = {"view",	    "calltree", "pattern", "D",
						"backward", "true",	NULL};
	static const char *const rows_args[] = {"sort", "inc",	 "order", "asc", "offset",
						"1",	"count", "2",	  NULL};
	static const char *const ids_args[] = {"ids", "[2,0]", NULL};
	static const char *const tree_args[] = {"view", "calltree", "of", "[0]", "levels",
						"0",	"auto",	    "0",  NULL};
	static const char *const timeline_args[] = {"buckets", "3", "inc", "C", NULL};
	static const char *const samples_args[] = {"path", "[\"A\",\"B\",\"C\"]", NULL};
	static const char *const flame_args[] = {"min_width", "0.5", NULL};
	static const char *const bad_bool[] = {"pattern", "D", "backward", "maybe", NULL};
	static const char *const bad_uint[] = {"buckets", "-3", NULL};
	static const char *const bad_json[] = {"ids", "[2,", NULL};
	static const struct {
		const char *path;
		const char *const *args;
		const char *body;
	} same[] = {
	    {"/api/find", find_args,
	     "{\"view\":\"calltree\",\"pattern\":\"D\",\"backward\":true}"},
	    {"/api/rows", rows_args,
	     "{\"sort\":\"inc\",\"order\":\"asc\",\"offset\":1,\"count\":2}"},
	    {"/api/rows", ids_args, "{\"ids\":[2,0]}"},
	    {"/api/tree", tree_args,
	     "{\"view\":\"calltree\",\"of\":[0],\"levels\":0,\"auto\":false}"},
	    {"/api/timeline", timeline_args,
	     "{\"buckets\":3,\"params\":{\"inc\":\"C\"}}"},
	    {"/api/samples", samples_args, "{\"path\":[\"A\",\"B\",\"C\"]}"},
	    {"/api/flame", flame_args, "{\"min_width\":0.5}"},
	};
	struct hs_app app;
	struct answer a, b;
	size_t i;

	(void)state;
	app_with_source(&app);
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		get(&app, same[i].path, same[i].args, &a);
		post(&app, same[i].path, same[i].body, &b);
		assert_int_equal(a.status, 200);
		assert_string_equal(a.text, b.text);
		answer_release(&a);
		answer_release(&b);
	}
	/* the report from the issue: a pattern in the URL is a pattern */
	get(&app, "/api/find", find_args, &a);
	assert_non_null(json_object_get(a.json, "row"));
	answer_release(&a);
	get(&app, "/api/find", bad_bool, &a);
	assert_int_equal(a.status, 400);
	assert_non_null(strstr(error_of(&a), "backward must be true or false"));
	answer_release(&a);
	get(&app, "/api/timeline", bad_uint, &a);
	assert_int_equal(a.status, 400);
	assert_non_null(strstr(error_of(&a), "buckets must be a whole number"));
	answer_release(&a);
	get(&app, "/api/rows", bad_json, &a);
	assert_int_equal(a.status, 400);
	assert_non_null(strstr(error_of(&a), "ids: "));
	answer_release(&a);
	hs_app_release(&app);
}

/* A request waiting for another's build: thread side. */
struct claimer {
	struct hs_cache *c;
	const char *key;
	struct hs_cache_hold h;
	struct hs_cache_entry *got;
	struct hs_diag d;
	int err;
};

static void *claim_thread(void *arg)
{
	struct claimer *k = arg;

	k->err = hs_cache_claim(k->c, &k->h, HS_CACHE_TEXT, k->key, NULL, &k->got, &k->d);
	return NULL;
}

/* Start a claimer of @key and return once it waits under the cache's lock. */
static void start_waiter(struct hs_cache *c, struct claimer *k, const char *key,
			 pthread_t *t)
{
	uint64_t clock;

	memset(k, 0, sizeof(*k));
	k->c = c;
	k->key = key;
	k->d = (struct hs_diag)HS_DIAG_INIT(NULL);
	pthread_mutex_lock(&c->lock);
	clock = c->clock;
	pthread_mutex_unlock(&c->lock);
	assert_int_equal(pthread_create(t, NULL, claim_thread, k), 0);
	/* its claim counts the clock and waits in one critical section */
	for (;;) {
		pthread_mutex_lock(&c->lock);
		if (c->clock != clock) {
			pthread_mutex_unlock(&c->lock);
			break;
		}
		pthread_mutex_unlock(&c->lock);
		sched_yield();
	}
}

/* A result is built once: a second request waits for it, or for its error. */
static void cache_builds_once(void **state)
{
	struct hs_cache c;
	struct hs_cache_hold h = HS_CACHE_HOLD_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_cache_entry *e;
	struct claimer k;
	pthread_t t;

	(void)state;
	hs_cache_init(&c);
	assert_int_equal(hs_cache_claim(&c, &h, HS_CACHE_TEXT, "k", NULL, &e, &d), 1);
	assert_int_equal(e->state, HS_CACHE_BUILDING);
	/* not ready: a plain lookup does not see it */
	assert_null(hs_cache_get(&c, &h, HS_CACHE_TEXT, "k"));
	start_waiter(&c, &k, "k", &t);
	e->u.text.s = strdup("{}");
	e->u.text.len = 2;
	hs_cache_publish(&c, e, 0, &d);
	pthread_join(t, NULL);
	assert_int_equal(k.err, 0);
	assert_ptr_equal(k.got, e);
	assert_int_equal(e->refs, 2);
	hs_cache_hold_release(&c, &k.h);
	assert_int_equal(e->refs, 1);

	/* a failed build: the waiter gets its error and message, and it is gone */
	assert_int_equal(hs_cache_claim(&c, &h, HS_CACHE_TEXT, "f", NULL, &e, &d), 1);
	start_waiter(&c, &k, "f", &t);
	hs_diag_set(&d, 0, "cannot build f");
	hs_cache_publish(&c, e, -EINVAL, &d);
	pthread_join(t, NULL);
	assert_int_equal(k.err, -EINVAL);
	assert_null(k.got);
	assert_string_equal(k.d.msg, "cannot build f");
	hs_cache_hold_release(&c, &k.h);
	assert_int_equal(c.nr, 1);
	/* the next request builds it afresh */
	assert_int_equal(hs_cache_claim(&c, &k.h, HS_CACHE_TEXT, "f", NULL, &e, &d), 1);
	hs_cache_publish(&c, e, 0, NULL);
	hs_cache_hold_release(&c, &k.h);
	hs_cache_hold_release(&c, &h);
	hs_cache_release(&c);
}

/* The requests that threads send at once in concurrent_requests_agree. */
static const char *const mixed[][2] = {
    {"/api/view", "{\"view\":\"byname\"}"},
    {"/api/view", "{\"view\":\"calltree\",\"params\":{\"inc\":\"C\"}}"},
    {"/api/tree", "{\"view\":\"calltree\",\"levels\":0}"},
    {"/api/rows", "{\"view\":\"byname\",\"sort\":\"inc\"}"},
    {"/api/timeline", "{\"buckets\":3,\"params\":{\"inc\":\"C\"}}"},
    {"/api/timeline", "{\"buckets\":7}"},
    {"/api/find", "{\"view\":\"calltree\",\"pattern\":\"D\"}"},
    {"/api/flame", "{\"params\":{\"fold_pct\":10}}"},
    {"/api/view", "{\"view\":\"callers\",\"focus\":\"B\"}"},
    {"/api/view",
     "{\"steps\":[{\"kind\":\"drill\",\"name\":\"B\"}],\"view\":\"byname\"}"},
    {"/api/info", NULL},
};
#define NR_MIXED (sizeof(mixed) / sizeof(mixed[0]))

struct asker {
	struct hs_app *app;
	char **expected;
	unsigned first;
	int mismatches;
};

static void *ask_thread(void *arg)
{
	struct asker *k = arg;
	struct answer a;
	unsigned round, i;

	for (round = 0; round < 20; round++)
		for (i = 0; i < NR_MIXED; i++) {
			unsigned r = (k->first + i + round) % NR_MIXED;

			post(k->app, mixed[r][0], mixed[r][1] ? mixed[r][1] : "{}", &a);
			k->mismatches += strcmp(a.text, k->expected[r]) != 0;
			answer_release(&a);
		}
	return NULL;
}

/*
 * Requests answered by eight threads at once (the server's workers) give
 * what one thread gives, with a cache small enough that entries come and
 * go meanwhile. Under TSan (-Db_sanitize=thread) this finds races.
 */
static void concurrent_requests_agree(void **state)
{
	struct hs_app app;
	struct answer a;
	struct asker k[8];
	pthread_t t[8];
	char *expected[NR_MIXED];
	size_t i;

	(void)state;
	app_with_source(&app);
	for (i = 0; i < NR_MIXED; i++) {
		post(&app, mixed[i][0], mixed[i][1] ? mixed[i][1] : "{}", &a);
		assert_int_equal(a.status, 200);
		expected[i] = strdup(a.text);
		answer_release(&a);
	}
	hs_app_release(&app);
	app_with_source(&app);
	app.cache.max[HS_CACHE_TREE] = 2;
	app.cache.max[HS_CACHE_VIEW] = 2;
	app.cache.max[HS_CACHE_TEXT] = 1;
	for (i = 0; i < 8; i++) {
		k[i] = (struct asker){
		    .app = &app, .expected = expected, .first = (unsigned)i};
		assert_int_equal(pthread_create(&t[i], NULL, ask_thread, &k[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(k[i].mismatches, 0);
	}
	/* nothing is held once the requests are answered */
	for (i = 0; i < app.cache.nr; i++)
		assert_int_equal(app.cache.e[i]->refs, 0);
	hs_app_release(&app);
	for (i = 0; i < NR_MIXED; i++)
		free(expected[i]);
}

/* perf script with CPU samples and the sched events of thread-time. */
static const char perf_text[] =
    "app 100/100 [000] 10.000000:          1 cpu-clock:\n"
    "\t    1100 compute (/opt/app/bin/app)\n"
    "\t    1000 main (/opt/app/bin/app)\n\n"
    "app 100/100 [000] 10.001500:          1 sched:sched_switch: prev_comm=app "
    "prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 "
    "next_prio=120\n"
    "\tffffffff81000100 __schedule+0x10 ([kernel.kallsyms])\n"
    "\t   f8200 read+0x20 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\t    1000 main (/opt/app/bin/app)\n\n"
    "other 200/200 [001] 10.004000:          1 sched:sched_wakeup: comm=app pid=100 "
    "prio=120 target_cpu=000\n"
    "\tffffffff81000200 try_to_wake_up+0x10 ([kernel.kallsyms])\n"
    "\t    3000 produce (/opt/other)\n\n"
    "app 100/100 [000] 10.006000:          1 cpu-clock:\n"
    "\t    1100 compute (/opt/app/bin/app)\n"
    "\t    1000 main (/opt/app/bin/app)\n\n"
    "app 100/100 [000] 10.008000:          1 cpu-clock:\n"
    "\t    1100 compute (/opt/app/bin/app)\n"
    "\t    1000 main (/opt/app/bin/app)\n";

/* Two perf script files in @dir, opened and merged as `view a b` has them. */
static void app_with_merged(struct hs_app *app, const char *dir, char paths[2][256])
{
	struct hs_diag diag = HS_DIAG_INIT("t");
	int i;

	assert_int_equal(hs_app_init(app, TOKEN), 0);
	for (i = 0; i < 2; i++) {
		FILE *f;

		snprintf(paths[i], 256, "%s/%c.data.txt", dir, 'a' + i);
		f = fopen(paths[i], "w");
		assert_non_null(f);
		assert_int_equal(fputs(perf_text, f) >= 0, 1);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(
		    hs_app_open(app, paths[i], paths[i], HS_FORMAT_PERF_SCRIPT, &diag),
		    0);
	}
	assert_int_equal(hs_app_merge(app, "both", 2, 0, &diag), 0);
}

static const char *const merged_asks[] = {
    "{\"trace\":2,\"source\":\"thread-time\"}",
    "{\"trace\":0,\"source\":\"thread-time\"}",
    "{\"trace\":1,\"source\":\"thread-time\",\"view\":\"calltree\"}",
    "{\"trace\":2,\"source\":\"thread-time\",\"view\":\"calltree\"}",
};
#define NR_MERGED_ASKS (sizeof(merged_asks) / sizeof(merged_asks[0]))

struct merged_asker {
	struct hs_app *app;
	char **expected;
	unsigned first;
	int mismatches;
};

static void *merged_ask_thread(void *arg)
{
	struct merged_asker *k = arg;
	struct answer a;
	unsigned i;

	for (i = 0; i < NR_MERGED_ASKS; i++) {
		unsigned r = (k->first + i) % NR_MERGED_ASKS;

		post(k->app, "/api/view", merged_asks[r], &a);
		k->mismatches += a.status != 200 || strcmp(a.text, k->expected[r]) != 0;
		answer_release(&a);
	}
	return NULL;
}

/*
 * A merged trace's source read for the first time by eight requests at
 * once, while others read the same source of its members: its members are
 * loaded before its own claim is taken (app.h), so nothing deadlocks, each
 * source is read once and every answer is the one-thread answer.
 */
static void merged_trace_concurrent_loads(void **state)
{
	char dir[] = "/tmp/hs-test-server-XXXXXX", paths[2][256];
	char *expected[NR_MERGED_ASKS];
	struct merged_asker k[8];
	struct hs_app app;
	struct answer a;
	pthread_t t[8];
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	app_with_merged(&app, dir, paths);
	for (i = 0; i < NR_MERGED_ASKS; i++) {
		post(&app, "/api/view", merged_asks[i], &a);
		assert_int_equal(a.status, 200);
		expected[i] = strdup(a.text);
		answer_release(&a);
	}
	/* the merged thread-time is both members' */
	post(&app, "/api/view", "{\"trace\":0,\"source\":\"thread-time\"}", &a);
	assert_true(num_at(json_object_get(a.json, "summary"), "metric") > 0);
	answer_release(&a);
	hs_app_release(&app);

	app_with_merged(&app, dir, paths);
	assert_false(app.traces[2].sources[1].loaded || app.traces[0].sources[1].loaded);
	for (i = 0; i < 8; i++) {
		k[i] = (struct merged_asker){
		    .app = &app, .expected = expected, .first = (unsigned)i};
		assert_int_equal(pthread_create(&t[i], NULL, merged_ask_thread, &k[i]),
				 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(k[i].mismatches, 0);
	}
	for (i = 0; i < 3; i++)
		assert_true(app.traces[i].sources[1].loaded &&
			    !app.traces[i].sources[1].loading);
	hs_app_release(&app);
	for (i = 0; i < NR_MERGED_ASKS; i++)
		free(expected[i]);
	unlink(paths[0]);
	unlink(paths[1]);
	rmdir(dir);
}

/* POST @body to @path (with the token): whether the answer is marked to
 * trim after it (hs_response's @trim); its status in *@status. */
static int trims_after(struct hs_app *app, const char *path, const char *body,
		       unsigned *status)
{
	struct hs_request req = {
	    .method = "POST",
	    .path = path,
	    .arg = args_get,
	    .cookie_token = TOKEN,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	};
	struct hs_response resp;
	int trim;

	hs_app_handle(app, &req, &resp);
	trim = resp.trim;
	*status = resp.status;
	hs_response_release(&resp);
	return trim;
}

/*
 * malloc_trim() after a burst only when it built or dropped cache entries,
 * the app computed something it keeps, or the answers were long: not for
 * a burst that reads what the cache holds (scrolling).
 */
static void trim_only_after_bursts_that_freed(void **state)
{
	struct hs_app app;
	unsigned st;

	(void)state;
	app_with_source(&app);
	/* the first tree: the filter, the tree and the view built */
	assert_int_equal(trims_after(&app, "/api/tree", "{\"view\":\"calltree\"}", &st),
			 1);
	assert_int_equal(st, 200);
	/* scrolling and expanding read them */
	assert_int_equal(
	    trims_after(&app, "/api/rows", "{\"view\":\"calltree\",\"ids\":[6,0]}", &st),
	    0);
	assert_int_equal(st, 200);
	assert_int_equal(
	    trims_after(&app, "/api/tree", "{\"view\":\"calltree\",\"of\":[1]}", &st), 0);
	assert_int_equal(st, 200);
	/* a bad request builds nothing */
	assert_int_equal(
	    trims_after(&app, "/api/rows", "{\"view\":\"calltree\",\"ids\":[7]}", &st),
	    0);
	assert_int_equal(st, 400);
	/* new patterns: a new tree */
	assert_int_equal(trims_after(&app, "/api/tree",
				     "{\"view\":\"calltree\",\"params\":{\"inc\":\"B\"}}",
				     &st),
			 1);
	assert_int_equal(st, 200);
	assert_int_equal(trims_after(&app, "/api/tree",
				     "{\"view\":\"calltree\",\"params\":{\"inc\":\"B\"}}",
				     &st),
			 0);
	/* a long answer, whatever the cache did */
	app.trim_answer_bytes = 16;
	assert_int_equal(trims_after(&app, "/api/tree", "{\"view\":\"calltree\"}", &st),
			 1);
	app.trim_answer_bytes = HS_APP_TRIM_ANSWER_BYTES;
	assert_int_equal(trims_after(&app, "/api/tree", "{\"view\":\"calltree\"}", &st),
			 0);
	/* a burst of two: only its last answer marks it */
	app.serving++;
	assert_int_equal(trims_after(&app, "/api/tree",
				     "{\"view\":\"calltree\",\"params\":{\"exc\":\"E\"}}",
				     &st),
			 0);
	app.serving--;
	assert_int_equal(
	    trims_after(&app, "/api/rows", "{\"view\":\"calltree\",\"ids\":[0]}", &st),
	    1);
	/* assets never */
	{
		struct hs_request req = {
		    .method = "GET", .path = "/", .cookie_token = TOKEN};
		struct hs_response resp;

		hs_app_handle(&app, &req, &resp);
		assert_int_equal(resp.status, 200);
		assert_int_equal(resp.trim, 0);
		hs_response_release(&resp);
	}
	hs_app_release(&app);
}

/* Out of memory anywhere: a 503 (or the answer), never a crash or a leak. */
static void allocation_failures(void **state)
{
	static const char *const bodies[] = {
	    "{\"view\":\"caller-callee\",\"focus\":\"B\"}",
	    "{\"view\":\"calltree\",\"of\":[0],\"levels\":0}",
	    "{\"steps\":[{\"kind\":\"drill\",\"name\":\"B\"}],\"view\":\"byname\"}",
	};
	static const char *const paths[] = {"/api/view", "/api/tree", "/api/rows"};
	struct hs_app app;
	struct answer a;
	size_t k;
	long n;

	(void)state;
	for (k = 0; k < 3; k++) {
		for (n = 0;; n++) {
			app_with_source(&app);
			hs_alloc_fail_after(n);
			post(&app, paths[k], bodies[k], &a);
			hs_alloc_fail_after(-1);
			if (a.status == 200) {
				answer_release(&a);
				hs_app_release(&app);
				break;
			}
			assert_int_equal(a.status, 503);
			answer_release(&a);
			hs_app_release(&app);
		}
		assert_true(n > 3);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(token_is_required),
	    cmocka_unit_test(only_assets_are_served),
	    cmocka_unit_test(bad_requests),
	    cmocka_unit_test(canonical_keys),
	    cmocka_unit_test(report_arguments),
	    cmocka_unit_test(view_is_report_json),
	    cmocka_unit_test(first_view_asked_ahead),
	    cmocka_unit_test(tree_rows),
	    cmocka_unit_test(rows_in_parts),
	    cmocka_unit_test(rows_and_find),
	    cmocka_unit_test(timeline_and_samples),
	    cmocka_unit_test(drill_diff_flame),
	    cmocka_unit_test(sources_of_a_trace),
	    cmocka_unit_test(merged_traces),
	    cmocka_unit_test(merged_trace_concurrent_loads),
	    cmocka_unit_test(cache_evicts),
	    cmocka_unit_test(get_arguments_of_every_call),
	    cmocka_unit_test(trees_share_the_filter_of_their_patterns),
	    cmocka_unit_test(cache_builds_once),
	    cmocka_unit_test(concurrent_requests_agree),
	    cmocka_unit_test(names_not_utf8),
	    cmocka_unit_test(trim_only_after_bursts_that_freed),
	    cmocka_unit_test(allocation_failures),
	};
	return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
