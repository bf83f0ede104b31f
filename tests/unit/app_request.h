/*
 * app_request - asking the server's app (server/app.h) without sockets,
 * for the tests of its JSON routes (test_routes_gc.c, test_routes_retained.c,
 * test_routes_counts.c; header-only, after cmocka.h). The app is the
 * caller's, initialised with APP_TEST_TOKEN (app_with_fixture does that
 * and loads a fixture); each answer's body is the caller's to json_decref.
 */
#ifndef HS_TEST_APP_REQUEST_H
#define HS_TEST_APP_REQUEST_H
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "server/app.h"
#include "views_helpers.h"

/* The session token of the app under test, sent as the cookie. */
#define APP_TEST_TOKEN "0123456789abcdef0123456789abcdef"

/* Query argument @key from @ctx, "k1", "v1", "k2", "v2", ..., NULL (or NULL). */
static inline const char *app_query_arg(void *ctx, const char *key)
{
	const char *const *a = ctx;

	for (; a && *a; a += 2)
		if (!strcmp(a[0], key))
			return a[1];
	return NULL;
}

/*
 * @method @path with the token cookie, the query arguments @args (NULL:
 * none) and the body @body (NULL: none), answered in JSON: the status, and
 * the body parsed into *@out.
 */
static inline unsigned app_ask_json(struct hs_app *app, const char *method,
				    const char *path, const char *const *args,
				    const char *body, json_t **out)
{
	struct hs_request req = {.method = method,
				 .path = path,
				 .arg = app_query_arg,
				 .ctx = (void *)args,
				 .cookie_token = APP_TEST_TOKEN,
				 .body = body,
				 .body_len = body ? strlen(body) : 0};
	struct hs_response resp;
	unsigned status;

	hs_app_handle(app, &req, &resp);
	status = resp.status;
	assert_string_equal(resp.type, "application/json");
	*out = json_loadb(resp.data, resp.len, 0, NULL);
	assert_non_null(*out);
	hs_response_release(&resp);
	return status;
}

/*
 * @app, initialised with APP_TEST_TOKEN, serving the fixture
 * tests/data/@dir/@name as trace 0 and recursion_source() (views_helpers.h)
 * as trace 1, "rec.folded": a trace of the kind a route is for, and one it
 * is not.
 */
static inline void app_with_fixture(struct hs_app *app, const char *dir, const char *name)
{
	struct hs_diag d = HS_DIAG_INIT(name);
	struct hs_stack_source src;
	char path[1024];

	assert_int_equal(hs_app_init(app, APP_TEST_TOKEN), 0);
	snprintf(path, sizeof(path), "%s/%s/%s", HS_TEST_DATA, dir, name);
	assert_int_equal(hs_app_open(app, path, name, HS_FORMAT_UNKNOWN, &d), 0);
	recursion_source(&src);
	assert_int_equal(hs_app_add_trace(app, "rec.folded", "folded", &src), 0);
}

#endif
