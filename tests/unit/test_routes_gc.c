/*
 * test_routes_gc - /api/gc (server/routes_gc.c) without sockets: a
 * .nettrace fixture's GCStats, the same document as `gcstats --format
 * json`, and the refusals (a trace that is not .NET, no such trace, a bad
 * trace number).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include "server/app.h"
#include "app_request.h"
#include "views_helpers.h"

/* GET /api/gc with @args; the status, and the body parsed into *@out. */
static unsigned get_gc(struct hs_app *app, const char *const *args, json_t **out)
{
	return app_ask_json(app, "GET", "/api/gc", args, NULL, out);
}

static void app_with_traces(struct hs_app *app)
{
	app_with_fixture(app, "dotnet", "allocs.nettrace");
}

static void gc_of_a_nettrace(void **state)
{
	static const char *const first[] = { "trace", "0", NULL };
	struct hs_app app;
	json_t *j, *gcs, *sum;

	(void)state;
	app_with_traces(&app);
	assert_int_equal(get_gc(&app, first, &j), 200);
	sum = json_object_get(j, "summary");
	gcs = json_object_get(j, "gcs");
	/* allocs.truth: three GC.Collect() calls, no other GC */
	assert_int_equal(json_integer_value(json_object_get(sum, "gc_count")), 3);
	assert_int_equal(json_integer_value(json_object_get(sum, "induced")), 3);
	assert_int_equal(json_array_size(gcs), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(gcs, 0), "kind")),
			    "NonConcurrentGC");
	assert_true(json_is_false(json_object_get(j, "cut_off")));
	assert_string_equal(json_string_value(json_object_get(sum, "trace")), "allocs.nettrace");
	json_decref(j);
	/* no argument: the first trace */
	assert_int_equal(get_gc(&app, NULL, &j), 200);
	json_decref(j);
	hs_app_release(&app);
}

static void refusals(void **state)
{
	static const char *const folded[] = { "trace", "1", NULL };
	static const char *const none[] = { "trace", "7", NULL };
	static const char *const bad[] = { "trace", "x1", NULL };
	static const char *const negative[] = { "trace", "-1", NULL };
	struct hs_app app;
	json_t *j;

	(void)state;
	app_with_traces(&app);
	assert_int_equal(get_gc(&app, folded, &j), 400);
	assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
			       "not a .nettrace"));
	json_decref(j);
	assert_int_equal(get_gc(&app, none, &j), 404);
	json_decref(j);
	assert_int_equal(get_gc(&app, bad, &j), 400);
	json_decref(j);
	assert_int_equal(get_gc(&app, negative, &j), 400);
	json_decref(j);
	hs_app_release(&app);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gc_of_a_nettrace),
		cmocka_unit_test(refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
