/*
 * test_routes_counts - /api/counts (server/routes_counts.c) without
 * sockets: the samples' counts per bucket, all and kept by IncPats, on
 * the buckets the request names (samples outside them in the first or
 * last bucket), and the refusals of bad buckets.
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

/* POST @body to /api/counts; the status, and the body parsed into *@out. */
static unsigned post_counts(struct hs_app *app, const char *body, json_t **out)
{
	return app_ask_json(app, "POST", "/api/counts", NULL, body, out);
}

/* @v printed compactly is @text. */
static void expect_json(const json_t *v, const char *text)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	assert_non_null(s);
	assert_string_equal(s, text);
	free(s);
}

/* Counts 3, 5, 2 and 7 at 1, 12, 14 and 40 ms; X on the first and third. */
static void app_with_counts(struct hs_app *app)
{
	struct hs_stack_source src;

	assert_int_equal(hs_app_init(app, APP_TEST_TOKEN), 0);
	hs_source_init(&src);
	add(&src, 1, 100, 3, "A;X");
	add(&src, 12, 200, 5, "A;Y");
	add(&src, 14, 300, 2, "A;X");
	add(&src, 40, 400, 7, "A;Y");
	assert_int_equal(hs_app_add_trace(app, "counts.folded", "folded", &src), 0);
}

static void counts_per_bucket(void **state)
{
	struct hs_app app;
	json_t *j;

	(void)state;
	app_with_counts(&app);
	/* 0-10, 10-20, 20-30 ms: the sample at 40 ms counts in the last */
	assert_int_equal(post_counts(&app, "{\"buckets\":3,\"start_ms\":0,\"bucket_ms\":10,"
				     "\"params\":{\"inc\":\"X\"}}", &j), 200);
	expect_json(json_object_get(j, "all"), "[3.0,7.0,7.0]");
	expect_json(json_object_get(j, "filtered"), "[3.0,2.0,0.0]");
	json_decref(j);
	/* from 5 ms: the sample at 1 ms counts in the first bucket */
	assert_int_equal(post_counts(&app, "{\"buckets\":2,\"start_ms\":5,\"bucket_ms\":20}", &j),
			 200);
	expect_json(json_object_get(j, "all"), "[10.0,7.0]");
	expect_json(json_object_get(j, "filtered"), "[10.0,7.0]");
	assert_true(json_number_value(json_object_get(j, "bucket_ms")) == 20);
	json_decref(j);
	hs_app_release(&app);
}

static void refusals(void **state)
{
	static const char *const bad[] = {
		"{\"buckets\":3,\"bucket_ms\":0}",
		"{\"buckets\":3}",
		"{\"buckets\":0,\"bucket_ms\":1}",
		"{\"buckets\":5000,\"bucket_ms\":1}",
		"{\"buckets\":3,\"bucket_ms\":\"10\"}",
		"{\"buckets\":3,\"bucket_ms\":-1}",
		"{\"buckets\":3,\"bucket_ms\":1,\"start_ms\":[]}",
	};
	struct hs_app app;
	size_t i;
	json_t *j;

	(void)state;
	app_with_counts(&app);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (post_counts(&app, bad[i], &j) != 400)
			fail_msg("%s: not refused", bad[i]);
		assert_non_null(json_string_value(json_object_get(j, "error")));
		json_decref(j);
	}
	hs_app_release(&app);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_per_bucket),
		cmocka_unit_test(refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
