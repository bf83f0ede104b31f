/*
 * app_request - asking the server's app (server/app.h) without sockets,
 * for the tests of its JSON routes (test_routes_gc.c, test_routes_retained.c,
 * test_routes_counts.c; header-only, after cmocka.h). The app is the
 * caller's, initialised with APP_TEST_TOKEN; each answer's body is the
 * caller's to json_decref.
 */
#ifndef HS_TEST_APP_REQUEST_H
#define HS_TEST_APP_REQUEST_H
#include <string.h>
#include <jansson.h>
#include "server/app.h"

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

#endif
