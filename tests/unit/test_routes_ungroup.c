/*
 * test_routes_ungroup - what the GUI asks the server instead of reading
 * names, without sockets: /api/ungroup (server/routes_ungroup.c) for a
 * row and for a module, its refusals; and /api/timeline's "timed"
 * (server/routes_time.c), which tells the GUI whether a source has times
 * to show.
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

#define CLASSES "[group classes] {%!*}.%(->class $1;{%!*}::->class $1"

/* POST @body to @path; the status, and the body parsed into *@out. */
static unsigned post(struct hs_app *app, const char *path, const char *body, json_t **out)
{
	return app_ask_json(app, "POST", path, NULL, body, out);
}

/* Trace 0: two classes of libfoo.so at 1 and 2 ms; trace 1 the same, all at 0 ms. */
static void app_with_classes(struct hs_app *app)
{
	struct hs_stack_source timed, untimed;

	assert_int_equal(hs_app_init(app, APP_TEST_TOKEN), 0);
	hs_source_init(&timed);
	add(&timed, 1, 5, 5, "app!main;/usr/lib/libfoo.so!Foo::bar;/usr/lib/libfoo.so!Baz::qux");
	add(&timed, 2, 3, 3, "app!main;/usr/lib/libfoo.so!Foo::zap");
	assert_int_equal(hs_app_add_trace(app, "classes.perfView.xml", "xml", &timed), 0);
	hs_source_init(&untimed);
	add(&untimed, 0, 5, 5, "app!main;libfoo.so!Foo::bar");
	add(&untimed, 0, 3, 3, "app!main;libfoo.so!Foo::zap");
	assert_int_equal(hs_app_add_trace(app, "classes.folded", "folded", &untimed), 0);
}

static void ungroup_row_and_module(void **state)
{
	struct hs_app app;
	json_t *j;

	(void)state;
	app_with_classes(&app);
	/* a class: its methods, not the other class of its module */
	assert_int_equal(post(&app, "/api/ungroup", "{\"params\":{\"group\":\"" CLASSES "\"},"
			      "\"name\":\"class libfoo.so!Foo\"}", &j), 200);
	assert_string_equal(json_string_value(json_object_get(j, "group")),
			    "[group classes] libfoo.so!Foo::->;{%!*}.%(->class $1;{%!*}::->class $1");
	json_decref(j);
	/* Ungroup Module: every class of the module */
	assert_int_equal(post(&app, "/api/ungroup", "{\"params\":{\"group\":\"" CLASSES "\"},"
			      "\"module\":\"libfoo.so\"}", &j), 200);
	assert_string_equal(json_string_value(json_object_get(j, "group")),
			    "[group classes] libfoo.so!->;{%!*}.%(->class $1;{%!*}::->class $1");
	json_decref(j);
	hs_app_release(&app);
}

static void refusals(void **state)
{
	static const struct {
		const char *body;
		unsigned status;
	} bad[] = {
		/* no frame is in that row */
		{"{\"params\":{\"group\":\"" CLASSES "\"},\"name\":\"class nothing\"}", 404},
		/* a frame no group holds */
		{"{\"params\":{\"group\":\"" CLASSES "\"},\"name\":\"app!main\"}", 404},
		/* neither a name nor a module, or both */
		{"{\"params\":{\"group\":\"" CLASSES "\"}}", 400},
		{"{\"name\":\"x\",\"module\":\"y\"}", 400},
		{"{\"name\":3}", 400},
		/* a bad GroupPats */
		{"{\"params\":{\"group\":\"{%->x\"},\"name\":\"x\"}", 400},
	};
	struct hs_app app;
	size_t i;
	json_t *j;

	(void)state;
	app_with_classes(&app);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned status = post(&app, "/api/ungroup", bad[i].body, &j);

		if (status != bad[i].status)
			fail_msg("%s: %u, not %u", bad[i].body, status, bad[i].status);
		assert_non_null(json_string_value(json_object_get(j, "error")));
		json_decref(j);
	}
	hs_app_release(&app);
}

/* The timeline says whether the source has times: the folded one has none. */
static void timeline_timed(void **state)
{
	struct hs_app app;
	json_t *j;

	(void)state;
	app_with_classes(&app);
	assert_int_equal(post(&app, "/api/timeline", "{\"buckets\":4}", &j), 200);
	assert_true(json_is_true(json_object_get(j, "timed")));
	json_decref(j);
	assert_int_equal(post(&app, "/api/timeline", "{\"trace\":1,\"buckets\":4}", &j), 200);
	assert_true(json_is_false(json_object_get(j, "timed")));
	json_decref(j);
	hs_app_release(&app);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ungroup_row_and_module),
		cmocka_unit_test(refusals),
		cmocka_unit_test(timeline_timed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
