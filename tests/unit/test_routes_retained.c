/*
 * test_routes_retained - /api/retained (server/routes_retained.c) without
 * sockets, on the committed snapshot heap-1000.gcdump (the static
 * List<Node> retains its array, its 1,000 nodes and their byte[1000]
 * payloads: 1,064,248 bytes): the retained size per name of the heap
 * view, the same under the heap view's patterns, per CallTree row (null
 * where a pattern merges an object with one it may dominate), and null
 * for what is not a snapshot's heap view.
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

#define LIST "System.Private.CoreLib.dll!System.Collections.Generic.List<Node>"

/* GET /api/retained with @args: the status, and the body in *@out. */
static unsigned get_retained(struct hs_app *app, const char *const *args, json_t **out)
{
	return app_ask_json(app, "GET", "/api/retained", args, NULL, out);
}

static void app_with_traces(struct hs_app *app)
{
	app_with_fixture(app, "dotnet", "heap-1000.gcdump");
}

static double retained_of(json_t *j, const char *name)
{
	json_t *v = json_object_get(json_object_get(j, "retained"), name);

	assert_non_null(v);
	return json_number_value(v);
}

static void retained_per_name(void **state)
{
	static const char *const heap[] = {"trace", "0", NULL};
	static const char *const named[] = {"trace", "0", "source", "heap", NULL};
	static const char *const grouped[] = {"trace", "0", "preset", "perfview heap", NULL};
	struct hs_app app;
	json_t *j;

	(void)state;
	app_with_traces(&app);
	assert_int_equal(get_retained(&app, heap, &j), 200);
	assert_true(retained_of(j, LIST) == 1064248.0);
	/* a node retains itself and its payload; the root everything reachable */
	assert_true(retained_of(j, "dotnet-heap.dll!Node") == 1056000.0);
	assert_true(retained_of(j, "[.NET Roots]") > retained_of(j, LIST));
	json_decref(j);
	assert_int_equal(get_retained(&app, named, &j), 200);
	assert_true(retained_of(j, LIST) == 1064248.0);
	json_decref(j);
	/* the heap view's patterns: the names as that view shows them */
	assert_int_equal(get_retained(&app, grouped, &j), 200);
	assert_true(retained_of(j, "LIB <<" LIST ">>") == 1064248.0);
	assert_null(json_object_get(json_object_get(j, "retained"), LIST));
	json_decref(j);
	hs_app_release(&app);
}

/* POST @body to /api/retained: the status, and the body in *@out. */
static unsigned post_retained(struct hs_app *app, const char *body, json_t **out)
{
	return app_ask_json(app, "POST", "/api/retained", NULL, body, out);
}

/*
 * CallTree rows of the heap view (depth first: 0 ROOT, 1 [.NET Roots],
 * 2 [static vars], 3 the List's static, 4 List<Node>, 5 Node[], 6 Node,
 * 7 byte[]): each row the retained bytes of the objects on it.
 */
static void retained_per_row(void **state)
{
	struct hs_app app;
	json_t *j, *r;

	(void)state;
	app_with_traces(&app);
	assert_int_equal(post_retained(&app, "{\"trace\":0,\"view\":\"calltree\","
					     "\"ids\":[4,6,7,0,3,4]}", &j), 200);
	r = json_object_get(j, "retained");
	assert_int_equal(json_array_size(r), 6);
	/* the list retains its array, the nodes and their payloads */
	assert_true(json_number_value(json_array_get(r, 0)) == 1064248.0);
	/* 1,000 nodes of 32 bytes, each holding its byte[1000] (1,024 bytes) */
	assert_true(json_number_value(json_array_get(r, 1)) == 1056000.0);
	assert_true(json_number_value(json_array_get(r, 2)) == 1024000.0);
	/* ROOT and a static variable's frame hold no object of their own */
	assert_true(json_number_value(json_array_get(r, 3)) == 0.0);
	assert_true(json_number_value(json_array_get(r, 4)) == 0.0);
	assert_true(json_number_value(json_array_get(r, 5)) == 1064248.0);
	json_decref(j);

	/* byte[] folded into Node: a node with objects dominating others */
	assert_int_equal(post_retained(&app, "{\"trace\":0,\"view\":\"calltree\","
					     "\"params\":{\"fold\":\"System.Byte[]\"},\"ids\":[4,6]}",
				       &j), 200);
	r = json_object_get(j, "retained");
	assert_true(json_number_value(json_array_get(r, 0)) == 1064248.0);
	assert_true(json_is_null(json_array_get(r, 1)));
	json_decref(j);

	/* bad ids */
	assert_int_equal(post_retained(&app, "{\"trace\":0,\"view\":\"calltree\","
					     "\"ids\":[100000000]}", &j), 400);
	json_decref(j);
	assert_int_equal(post_retained(&app, "{\"trace\":0,\"view\":\"calltree\"}", &j),
			 400);
	json_decref(j);
	/* another source's call tree: null */
	assert_int_equal(post_retained(&app, "{\"trace\":0,\"source\":\"retained\","
					     "\"view\":\"calltree\",\"ids\":[0]}", &j), 200);
	assert_true(json_is_null(json_object_get(j, "retained")));
	json_decref(j);
	hs_app_release(&app);
}

static void null_for_other_views(void **state)
{
	static const char *const retained[] = {"trace", "0", "source", "retained", NULL};
	static const char *const folded[] = {"trace", "1", NULL};
	static const char *const none[] = {"trace", "7", NULL};
	struct hs_app app;
	json_t *j;

	(void)state;
	app_with_traces(&app);
	assert_int_equal(get_retained(&app, retained, &j), 200);
	assert_true(json_is_null(json_object_get(j, "retained")));
	json_decref(j);
	assert_int_equal(get_retained(&app, folded, &j), 200);
	assert_true(json_is_null(json_object_get(j, "retained")));
	json_decref(j);
	assert_int_equal(get_retained(&app, none, &j), 400);
	json_decref(j);
	hs_app_release(&app);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(retained_per_name),
		cmocka_unit_test(retained_per_row),
		cmocka_unit_test(null_for_other_views),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
