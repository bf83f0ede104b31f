/*
 * Tests of the server's app (server/app.h) on a heap trace, which it
 * never loads whole: the heap and RSS timelines cut from the history read
 * at the open equal the loaded trace's (hs_heap_timelines()), the stats
 * are `heapscope stats`'s, the leaks and peak views of a time range are
 * the views `report` builds for it, the peak source read ahead
 * (hs_app_prefetch()) is `report`'s, and a trace that is not a heap trace
 * has no history and no heap series. The read ahead waits while requests
 * are served and for a quiet time after them, and goes on when one of
 * them waits for it, at the requests' priority.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "analysis/memviews.h"
#include "analysis/stats.h"
#include "format/trace_reader.h"
#include "server/app.h"
#include "app_request.h"
#include "trace_builder.h"

#define MS 1000000

/* RSS at 0, 5 and 9 ms around put_heap_program() (trace_builder.h). */
static void write_trace(char *path)
{
	struct tb b;
	uint8_t *p;
	FILE *f;

	tb_init(&b);
	p = tb_p(&b);
	p = put_process(p);
	p = put_sized2(p, HS_TAG_RSS, 0, 1000);
	p = put_sized2(p, HS_TAG_RSS, 5 * MS, 3000);
	p = put_sized2(p, HS_TAG_RSS, 9 * MS, 2000);
	p = put_heap_program(&b, p);
	tb_end(&b, p);
	tb_chunk(&b, HS_CHUNK_EVENTS, 1);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.buf, 1, b.len, f), b.len);
	fclose(f);
	free(b.buf);
}

struct fixture {
	char path[64];
	struct hs_app app;
	struct hs_trace t; /* the same file loaded, to compare with */
};

/* @app made, with the file at @path open in it as trace 0. */
static void open_app(struct hs_app *app, const char *path)
{
	struct hs_diag d = HS_DIAG_INIT("t");

	assert_int_equal(hs_app_init(app, APP_TEST_TOKEN), 0);
	assert_int_equal(hs_app_open(app, path, "m.heapscope", HS_FORMAT_UNKNOWN, &d), 0);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct hs_diag d = HS_DIAG_INIT("t");
	struct hs_stack_source src;

	assert_non_null(fx);
	snprintf(fx->path, sizeof(fx->path), "/tmp/hs-app-heap-%d.heapscope", (int)getpid());
	write_trace(fx->path);
	open_app(&fx->app, fx->path);
	recursion_source(&src);
	assert_int_equal(hs_app_add_trace(&fx->app, "rec.folded", "folded", &src), 0);
	assert_int_equal(hs_trace_load(fx->path, &fx->t, &d), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	hs_app_release(&fx->app);
	hs_trace_release(&fx->t);
	unlink(fx->path);
	free(fx);
	return 0;
}

/* @series ([[ms, bytes], ...]) is @tl point by point. */
static void series_is(json_t *series, const struct hs_timeline *tl)
{
	size_t i;

	assert_true(json_is_array(series));
	assert_int_equal(json_array_size(series), tl->n);
	for (i = 0; i < tl->n; i++) {
		json_t *p = json_array_get(series, i);

		assert_true(json_number_value(json_array_get(p, 0)) == tl->ms[i]);
		assert_true(json_number_value(json_array_get(p, 1)) == tl->bytes[i]);
	}
}

static void timelines_are_the_loaded_traces(void **state)
{
	struct fixture *fx = *state;
	static const char *const bodies[] = {
	    "{\"trace\":0,\"buckets\":9}",
	    "{\"trace\":0,\"buckets\":2,\"source\":\"net\"}",
	    "{\"trace\":0,\"buckets\":600,\"params\":{\"inc\":\"app\"}}",
	};
	static const size_t points[] = {9, 2, 600};
	struct hs_timeline heap, rss;
	size_t k;
	json_t *o;

	(void)state;
	assert_non_null(hs_app_heap_history(&fx->app, 0));
	for (k = 0; k < 3; k++) {
		assert_int_equal(app_ask_json(&fx->app, "POST", "/api/timeline", NULL,
					      bodies[k], &o),
				 200);
		assert_int_equal(hs_heap_timelines(&fx->t, points[k], &heap, &rss), 0);
		series_is(json_object_get(o, "heap"), &heap);
		series_is(json_object_get(o, "rss"), &rss);
		/* the timeline spans the whole run */
		assert_true(json_number_value(json_object_get(o, "end_ms")) >= 9);
		hs_timeline_release(&heap);
		hs_timeline_release(&rss);
		json_decref(o);
	}
	/* not a heap trace: no history, no heap series */
	assert_null(hs_app_heap_history(&fx->app, 1));
	assert_null(hs_app_heap_history(&fx->app, 2));
	assert_int_equal(
	    app_ask_json(&fx->app, "POST", "/api/timeline", NULL, "{\"trace\":1}", &o), 200);
	assert_null(json_object_get(o, "heap"));
	assert_null(json_object_get(o, "rss"));
	json_decref(o);
}

static void stats_are_heapscope_stats(void **state)
{
	struct fixture *fx = *state;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct hs_heap_stats s;
	struct hs_trace read;
	json_t *o, *want;
	char *text;
	int k;

	assert_int_equal(
	    hs_heap_stats_compute_path(fx->path, &(struct hs_stats_opts){0}, &read, &s, &d), 0);
	/* as the API writes numbers: 15 digits */
	o = hs_heap_stats_json(&s);
	text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(o);
	assert_non_null(text);
	want = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(want);
	/* computed, then from what the first computed */
	for (k = 0; k < 2; k++) {
		assert_int_equal(
		    app_ask_json(&fx->app, "POST", "/api/stats", NULL, "{\"trace\":0}", &o), 200);
		assert_true(json_equal(json_object_get(o, "heap"), want));
		json_decref(o);
	}
	assert_true(json_number_value(json_object_get(want, "peak_heap_bytes")) == 500016);
	json_decref(want);
	hs_heap_stats_release(&s);
	hs_trace_release(&read);
}

/* The total of view @kind of the loaded trace over [@start, @end] ms. */
static double view_total(struct fixture *fx, enum hs_memview_kind kind, double start,
			 double end)
{
	struct hs_memview_opts mo = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct hs_stack_source src;
	double metric, count;

	mo.kind = kind;
	mo.start_ms = start;
	mo.end_ms = end;
	assert_int_equal(hs_memview_build(&fx->t, &mo, &src, NULL, &d), 0);
	hs_source_totals(&src, &metric, &count);
	hs_source_release(&src);
	return metric;
}

static void ranged_views_from_the_file(void **state)
{
	struct fixture *fx = *state;
	static const struct {
		const char *source;
		enum hs_memview_kind kind;
		double start, end;
	} cases[] = {
	    {"leaks", HS_MEM_LEAKS, 0, 3.5},
	    {"leaks", HS_MEM_LEAKS, 4, 9},
	    {"peak", HS_MEM_PEAK, 0, 4.5},
	    {"peak", HS_MEM_PEAK, 6, 7.5},
	};
	char body[256];
	size_t k;
	json_t *o;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		double want = view_total(fx, cases[k].kind, cases[k].start, cases[k].end);

		snprintf(body, sizeof(body),
			 "{\"trace\":0,\"source\":\"%s\",\"view\":\"byname\","
			 "\"params\":{\"fold_pct\":0,\"start\":%g,\"end\":%g}}",
			 cases[k].source, cases[k].start, cases[k].end);
		assert_int_equal(app_ask_json(&fx->app, "POST", "/api/view", NULL, body, &o),
				 200);
		assert_true(json_number_value(json_object_get(
				json_object_get(o, "summary"), "metric")) == want);
		json_decref(o);
	}
	/* the ranges chose different blocks */
	assert_true(view_total(fx, HS_MEM_PEAK, 0, 4.5) != view_total(fx, HS_MEM_PEAK, 6, 7.5));
}

/* Whether source @name of trace 0 of @app is loaded (as a request sees it). */
static int loaded(struct hs_app *app, const char *name)
{
	const struct hs_app_source *s = hs_app_source(app, 0, name);
	int done;

	pthread_mutex_lock(&app->lock);
	done = s->loaded;
	pthread_mutex_unlock(&app->lock);
	return done;
}

/* Wait (ten seconds at the most) until source @name of trace 0 is loaded. */
static void wait_loaded(struct hs_app *app, const char *name)
{
	int i;

	for (i = 0; i < 1000 && !loaded(app, name); i++)
		usleep(10000);
	assert_true(loaded(app, name));
}

/*
 * hs_app_prefetch() reads the peak source ahead, with no request for it:
 * the source `report --source peak` builds. A release right after the
 * open and the start stops the reads under way and frees everything (the
 * ASan build checks that nothing leaks).
 */
static void peak_read_ahead(void **state)
{
	struct fixture *fx = *state;
	struct hs_app app;
	json_t *o;

	open_app(&app, fx->path);
	assert_false(loaded(&app, "peak"));
	assert_int_equal(hs_app_prefetch(&app), 0);
	wait_loaded(&app, "peak");
	assert_false(loaded(&app, "temporary")); /* only what costs most */
	assert_int_equal(app_ask_json(&app, "POST", "/api/view", NULL,
				      "{\"trace\":0,\"source\":\"peak\",\"view\":\"byname\","
				      "\"params\":{\"fold_pct\":0}}",
				      &o),
			 200);
	assert_true(json_number_value(json_object_get(json_object_get(o, "summary"),
						      "metric")) ==
		    view_total(fx, HS_MEM_PEAK, NAN, NAN));
	assert_true(view_total(fx, HS_MEM_PEAK, NAN, NAN) == 500016);
	json_decref(o);
	hs_app_release(&app);
	/* released at once: the reads stop, or end, first */
	open_app(&app, fx->path);
	assert_int_equal(hs_app_prefetch(&app), 0);
	hs_app_release(&app);
}

/* Whether a request or the read ahead is reading source @name of trace 0. */
static int loading(struct hs_app *app, const char *name)
{
	const struct hs_app_source *s = hs_app_source(app, 0, name);
	int busy;

	pthread_mutex_lock(&app->lock);
	busy = s->loading;
	pthread_mutex_unlock(&app->lock);
	return busy;
}

/* Wait (a second at the most) until source @name of trace 0 is being read. */
static void wait_loading(struct hs_app *app, const char *name)
{
	int i;

	for (i = 0; i < 1000 && !loading(app, name); i++)
		usleep(1000);
	assert_true(loading(app, name));
}

/*
 * The app serves @d more requests (as hs_app_handle() counts them, and
 * when none is left the quiet time starts).
 */
static void serving(struct hs_app *app, int d)
{
	struct timespec now;

	pthread_mutex_lock(&app->lock);
	app->serving += d;
	if (!app->serving) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		app->quiet_since = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	}
	pthread_cond_broadcast(&app->changed);
	pthread_mutex_unlock(&app->lock);
}

/*
 * How many threads of this process run at another nice value than
 * @nice (/proc).
 */
static int threads_not_at_nice(int nice)
{
	char path[300], line[1024], *p;
	struct dirent *de;
	int other = 0, k;
	DIR *dir = opendir("/proc/self/task");

	assert_non_null(dir);
	while ((de = readdir(dir))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		/* after the command's ')': state is field 3, nice field 19 */
		for (k = 3; p && k <= 19; k++)
			p = strchr(p + 1, ' ');
		other += p && atoi(p + 1) != nice;
	}
	closedir(dir);
	return other;
}

/* Set how long @app's read ahead waits after the last request. */
static void quiet_for(struct hs_app *app, int64_t ns)
{
	pthread_mutex_lock(&app->lock);
	app->quiet_ns = ns;
	pthread_cond_broadcast(&app->changed);
	pthread_mutex_unlock(&app->lock);
}

/*
 * The read ahead waits while a request is served, and after the last
 * one for the quiet time (the browser draws the answer); a request that
 * then asks for what it reads gets it (the read goes on for it at once,
 * quiet time or not), and the read ahead goes on by itself once no
 * request has been served for the quiet time. It waits at the requests'
 * priority, not at a lower one (nice 10 before): the request that waits
 * for it would otherwise wait at that priority, which an unprivileged
 * process cannot raise again.
 */
static void read_ahead_yields_to_requests(void **state)
{
	struct fixture *fx = *state;
	struct hs_diag d = HS_DIAG_INIT("t");
	struct hs_app app;
	double metric, count;
	int round;

	for (round = 0; round < 2; round++) {
		open_app(&app, fx->path);
		quiet_for(&app, 3600 * 1000000000LL);
		serving(&app, 1);
		assert_int_equal(hs_app_prefetch(&app), 0);
		wait_loading(&app, "peak");
		usleep(200000); /* a few ms of work at most, were it not waiting */
		assert_false(loaded(&app, "peak"));
		/* every thread, the read ahead's too, at the requests' priority */
		assert_int_equal(threads_not_at_nice(getpriority(PRIO_PROCESS, 0)), 0);
		if (!round) {
			/* a request waits for it: not held by the quiet time */
			assert_int_equal(hs_app_load_source(&app, 0,
							    hs_app_source(&app, 0, "peak"), &d),
					 0);
			assert_true(loaded(&app, "peak"));
		} else {
			/* the request ends: the read ahead still waits, quiet */
			serving(&app, -1);
			usleep(200000);
			assert_false(loaded(&app, "peak"));
			/* then goes on once no request came for the quiet time */
			quiet_for(&app, 50 * 1000000LL);
			wait_loaded(&app, "peak");
			serving(&app, 1);
		}
		hs_source_totals(&hs_app_source(&app, 0, "peak")->src, &metric, &count);
		assert_true(metric == view_total(fx, HS_MEM_PEAK, NAN, NAN));
		serving(&app, -1);
		hs_app_release(&app);
	}
}

/*
 * A request answered (hs_app_handle()) starts the quiet time: the read
 * ahead started right after it waits for that time to pass, then reads.
 */
static void read_ahead_quiet_after_a_request(void **state)
{
	struct fixture *fx = *state;
	struct hs_app app;
	json_t *o;

	open_app(&app, fx->path);
	quiet_for(&app, 3600 * 1000000000LL);
	assert_int_equal(
	    app_ask_json(&app, "POST", "/api/info", NULL, "{}", &o), 200);
	json_decref(o);
	assert_int_equal(hs_app_prefetch(&app), 0);
	wait_loading(&app, "peak");
	usleep(200000);
	assert_false(loaded(&app, "peak"));
	quiet_for(&app, 0);
	wait_loaded(&app, "peak");
	hs_app_release(&app);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(timelines_are_the_loaded_traces),
	    cmocka_unit_test(stats_are_heapscope_stats),
	    cmocka_unit_test(ranged_views_from_the_file),
	    cmocka_unit_test(peak_read_ahead),
	    cmocka_unit_test(read_ahead_yields_to_requests),
	    cmocka_unit_test(read_ahead_quiet_after_a_request),
	};

	return cmocka_run_group_tests_name("app_heap", tests, setup, teardown);
}
