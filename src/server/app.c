/*
 * app - traces, token and the first look at a request: the token, then
 * an embedded asset or the API (see app.h).
 */
#include "server/app.h"
#include "analysis/views.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "server/assets.h"
#include "analysis/memviews.h"
#include "analysis/heap_history.h"
#include "analysis/stats.h"
#include "common/log.h"
#include "format/trace_reader.h"
#include "model/source_merge.h"
#include "analysis/exec_chain.h"
#include <errno.h>
#include <jansson.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * How long the read ahead (hs_app_prefetch()) still waits after the last
 * request was answered: the browser draws the answer and sends the next
 * request meanwhile (Chromium's own work after an Update's answers is
 * 40-80 ms on two shared cores, bench/README.md), and the read ahead,
 * which runs at the requests' priority, should not take a core from it.
 */
#define READ_AHEAD_QUIET_NS (150 * 1000000LL)

/* CLOCK_MONOTONIC in ns: the clock of @changed's timed waits. */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The server's allocator (hs_alloc_map_large()): glibc's moving mmap
 * threshold would let a call tree's arrays of millions of nodes (4 to 20
 * MiB each) come from the arena of the worker that built them: freed,
 * they stay in the process and only that worker can reuse them, so each
 * Update's tree could land in memory another worker's freed tree still
 * held.
 */
static void malloc_policy(void)
{
	if (hs_alloc_map_large())
		pr_debug("mallopt(M_MMAP_THRESHOLD) refused");
}

int hs_app_init(struct hs_app *a, const char *token)
{
	unsigned char raw[HS_APP_TOKEN_LEN / 2];
	pthread_condattr_t attr;
	size_t i;
	ssize_t n;

	memset(a, 0, sizeof(*a));
	if (token) {
		if (strlen(token) != HS_APP_TOKEN_LEN ||
		    strspn(token, "0123456789abcdef") != HS_APP_TOKEN_LEN)
			return -EINVAL;
		memcpy(a->token, token, HS_APP_TOKEN_LEN + 1);
	} else {
		n = getrandom(raw, sizeof(raw), 0);
		if (n != (ssize_t)sizeof(raw))
			return n < 0 ? -errno : -EIO;
		for (i = 0; i < sizeof(raw); i++)
			snprintf(a->token + 2 * i, 3, "%02x", raw[i]);
	}
	malloc_policy();
	hs_cache_init(&a->cache);
	pthread_mutex_init(&a->lock, NULL);
	/* app_pace() waits until a time of now_ns()'s clock */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&a->changed, &attr);
	pthread_condattr_destroy(&attr);
	a->quiet_ns = READ_AHEAD_QUIET_NS;
	a->trim_answer_bytes = HS_APP_TRIM_ANSWER_BYTES;
	return 0;
}

/*
 * Start @fn(@arg) on a thread of the app's own (reading a file) that
 * leaves the signals which end a front end to the threads that wait for
 * them (`heapscope view` sigwait()s for SIGINT and SIGTERM): it may
 * still run when serving starts. 0 or the error of pthread_create().
 */
static int start_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t quiet, old;
	int err;

	sigemptyset(&quiet);
	sigaddset(&quiet, SIGINT);
	sigaddset(&quiet, SIGTERM);
	sigaddset(&quiet, SIGHUP);
	sigaddset(&quiet, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	err = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/*
 * A heap trace's history (analysis/heap_history.h), read on a thread of
 * its own from hs_app_open() on: beside the first source's pass, and on
 * while the app serves (hs_app_heap_history() waits for it). The job is
 * the thread's until @done is set (under the app's lock), read-only
 * after; its address stays the same when the list of traces grows.
 */
struct hs_app_history {
	struct hs_app *app; /* its lock and condition */
	char *path;	    /* owned copy */
	struct hs_heap_history h;
	struct hs_diag diag;
	int err;
	int done;    /* the read is over (under the app's lock) */
	int warned;  /* its failure was logged (under the app's lock) */
	int started; /* a thread reads it: join it */
	pthread_t thread;
};

/* Whether hs_app_release() began: reads that may wait give up. */
static int app_stopping(void *arg)
{
	struct hs_app *a = arg;
	int stop;

	pthread_mutex_lock(&a->lock);
	stop = a->stopping;
	pthread_mutex_unlock(&a->lock);
	return stop;
}

static void *history_read(void *arg)
{
	struct hs_app_history *j = arg;

	j->err = hs_heap_history_path(j->path, &j->h, app_stopping, j->app, &j->diag);
	pthread_mutex_lock(&j->app->lock);
	j->done = 1;
	j->app->kept++;
	pthread_cond_broadcast(&j->app->changed);
	pthread_mutex_unlock(&j->app->lock);
	return NULL;
}

/* Whether trace @t at @path is a heap trace in a file that can be read twice. */
static int heap_regular_file(const struct hs_app_trace *t, const char *path)
{
	struct stat st;

	return hs_format_has(t->fmt, HS_FORMAT_HAS_HEAP) && !stat(path, &st) &&
	       S_ISREG(st.st_mode);
}

/* A new history job for the file at @path, not read yet; NULL: no memory. */
static struct hs_app_history *history_new(struct hs_app *a, const char *path)
{
	struct hs_app_history *j = hs_calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->app = a;
	j->path = hs_strdup(path);
	if (!j->path) {
		hs_free(j);
		return NULL;
	}
	j->diag = (struct hs_diag)HS_DIAG_INIT(j->path);
	return j;
}

/*
 * Start reading the history of trace @t at @path when it is a heap trace
 * in a file that can be read twice (not a pipe: its importer spools it).
 * Returns the job, or NULL: none (or no memory for one: the trace is
 * then served without heap and RSS timelines).
 */
static struct hs_app_history *
history_start(struct hs_app *a, const struct hs_app_trace *t, const char *path)
{
	struct hs_app_history *j;

	if (!heap_regular_file(t, path))
		return NULL;
	j = history_new(a, path);
	if (!j)
		return NULL;
	j->started = !start_thread(&j->thread, history_read, j);
	if (!j->started)
		history_read(j);
	return j;
}

/* Wait for @j's thread and free it (NULL is fine). */
static void history_free(struct hs_app_history *j)
{
	if (!j)
		return;
	if (j->started)
		pthread_join(j->thread, NULL);
	hs_heap_history_release(&j->h);
	hs_free(j->path);
	hs_free(j);
}

static void trace_release(struct hs_app_trace *t)
{
	size_t k;

	for (k = 0; k < t->nr_sources; k++) {
		hs_free(t->sources[k].name);
		hs_source_release(&t->sources[k].src);
	}
	hs_free(t->sources);
	hs_free(t->name);
	hs_free(t->path);
	history_free(t->history);
	free(t->heap_stats);
	hs_free(t->members);
	memset(t, 0, sizeof(*t));
}

void hs_app_release(struct hs_app *a)
{
	size_t i;

	/* a read under way ends first (a history's gives up at once) */
	pthread_mutex_lock(&a->lock);
	a->stopping = 1;
	pthread_cond_broadcast(&a->changed); /* a paced read waits no more */
	pthread_mutex_unlock(&a->lock);
	if (a->prefetching)
		pthread_join(a->prefetch, NULL);
	hs_app_warm_wait(a);
	hs_cache_release(&a->cache);
	for (i = 0; i < a->nr_traces; i++)
		trace_release(&a->traces[i]);
	hs_free(a->traces);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	memset(a, 0, sizeof(*a));
}

/* The name of a source when the format offers no choice. */
static const char *only_source_name(const struct hs_stack_source *src)
{
	return src->kind == HS_METRIC_TIME ? "cpu" : "samples";
}

/* Append an empty source named @name to @t. 0 or -ENOMEM. */
static int push_source(struct hs_app_trace *t, const char *name, const char *summary)
{
	struct hs_app_source *ns =
	    hs_realloc(t->sources, (t->nr_sources + 1) * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	t->sources = ns;
	ns += t->nr_sources;
	memset(ns, 0, sizeof(*ns));
	ns->name = hs_strdup(name);
	if (!ns->name)
		return -ENOMEM;
	ns->summary = summary;
	hs_source_init(&ns->src);
	t->nr_sources++;
	return 0;
}

/*
 * Adding trace @t (new_trace(), not counted yet; NULL: not even made)
 * failed with @err: @t is released, @diag says out of memory when
 * nothing said more. Returns @err.
 */
static int drop_new_trace(struct hs_app_trace *t, int err, struct hs_diag *diag)
{
	if (t)
		trace_release(t);
	if (err == -ENOMEM && !diag->set)
		hs_diag_set(diag, 0, "out of memory");
	return err;
}

/* A new empty trace named @name at the end of @a (not counted yet). */
static struct hs_app_trace *new_trace(struct hs_app *a, const char *name)
{
	struct hs_app_trace *t;

	if (HS_GROW(a->traces, a->nr_traces + 1, a->alloc_traces))
		return NULL;
	t = &a->traces[a->nr_traces];
	memset(t, 0, sizeof(*t));
	t->name = hs_strdup(name);
	return t->name ? t : NULL;
}

int hs_app_add_source(struct hs_app *a, size_t trace, const char *name,
		      struct hs_stack_source *src)
{
	struct hs_app_trace *t = trace < a->nr_traces ? &a->traces[trace] : NULL;
	struct hs_app_source *s;
	int err = -EINVAL;

	if (!t)
		goto fail;
	err = -EEXIST;
	if (*name && hs_app_source(a, trace, name))
		goto fail;
	err = push_source(t, name, NULL);
	if (err)
		goto fail;
	s = &t->sources[t->nr_sources - 1];
	s->src = *src;
	s->loaded = 1;
	hs_cache_count_outside(&a->cache, hs_source_memory(&s->src));
	hs_source_init(src);
	return 0;
fail:
	hs_source_release(src);
	return err;
}

int hs_app_add_trace(struct hs_app *a, const char *name, const char *format,
		     struct hs_stack_source *src)
{
	struct hs_app_trace *t = new_trace(a, name);
	int err = -ENOMEM;

	if (!t)
		goto fail;
	t->format = format;
	t->fmt = HS_FORMAT_UNKNOWN;
	err = push_source(t, only_source_name(src), NULL);
	if (err) {
		trace_release(t);
		goto fail;
	}
	t->sources[0].src = *src;
	t->sources[0].loaded = 1;
	hs_cache_count_outside(&a->cache, hs_source_memory(&t->sources[0].src));
	hs_source_init(src);
	a->nr_traces++;
	return 0;
fail:
	hs_source_release(src);
	return err;
}

/*
 * Source 0 of heap trace @t at @path, view @kind, and @t's history, from
 * one pass over the file (hs_heap_history_path_view()): the first Update
 * then finds the heap curve read. 0 or a negative errno with @diag filled.
 */
static int open_heap_file(struct hs_app *a, struct hs_app_trace *t, const char *path,
			  enum hs_memview_kind kind, struct hs_diag *diag)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	struct hs_app_history *j = history_new(a, path);
	struct hs_stack_source *src = &t->sources[0].src;
	int err;

	if (!j)
		return -ENOMEM;
	o.kind = kind;
	hs_source_release(src);
	err = hs_heap_history_path_view(path, &o, src, &j->h, diag);
	if (err) {
		history_free(j);
		return err;
	}
	hs_source_check(src); /* as hs_import_path_source() does */
	j->done = 1;	      /* no thread: before serving, read-only after */
	t->history = j;
	return 0;
}

int hs_app_open(struct hs_app *a, const char *path, const char *name, enum hs_format fmt,
		struct hs_diag *diag)
{
	enum hs_memview_kind kind;
	struct hs_source_info list[HS_SOURCES_MAX];
	struct hs_app_trace *t;
	size_t i, n;
	int err;

	err = hs_path_format(path, fmt, &fmt, diag);
	if (err)
		return err;
	t = new_trace(a, name);
	err = -ENOMEM;
	if (!t || !(t->path = hs_strdup(path)))
		goto fail;
	t->fmt = fmt;
	t->format = hs_format_name(fmt);
	n = hs_path_sources(path, fmt, list);
	for (i = 0; i < n; i++)
		if (push_source(t, list[i].name, list[i].summary))
			goto fail;
	if (!n && push_source(t, "", NULL))
		goto fail;
	if (n && heap_regular_file(t, path) && !hs_memview_parse(list[0].name, &kind)) {
		err = open_heap_file(a, t, path, kind, diag);
	} else {
		t->history = history_start(a, t, path);
		err = hs_import_path_source(path, fmt, n ? list[0].name : NULL,
					    &t->sources[0].src, diag);
	}
	if (err)
		goto fail;
	t->sources[0].loaded = 1;
	hs_cache_count_outside(&a->cache, hs_source_memory(&t->sources[0].src));
	if (!n) {
		hs_free(t->sources[0].name);
		t->sources[0].name = hs_strdup(only_source_name(&t->sources[0].src));
		if (!t->sources[0].name) {
			err = -ENOMEM;
			goto fail;
		}
	}
	a->nr_traces++;
	return 0;
fail:
	return drop_new_trace(t, err, diag);
}

struct hs_app_source *hs_app_source(const struct hs_app *a, size_t trace,
				    const char *name)
{
	const struct hs_app_trace *t = trace < a->nr_traces ? &a->traces[trace] : NULL;
	size_t k;

	if (!t || !t->nr_sources)
		return NULL;
	if (!name || !*name)
		return &t->sources[0];
	for (k = 0; k < t->nr_sources; k++)
		if (!strcmp(t->sources[k].name, name))
			return &t->sources[k];
	return NULL;
}

/*
 * Wait under @a->lock while *@busy (another request computes the thing);
 * then, unless *@done, claim it: set *@busy and return 1 (the caller
 * computes without the lock and calls finish()). 0 when it is done.
 */
static int begin_once(struct hs_app *a, int *busy, const int *done)
{
	if (*busy) {
		/* what the app reads on its own goes at full pace meanwhile */
		a->awaited++;
		pthread_cond_broadcast(&a->changed);
		while (*busy)
			pthread_cond_wait(&a->changed, &a->lock);
		a->awaited--;
	}
	if (*done)
		return 0;
	*busy = 1;
	return 1;
}

/* The claimer of begin_once() is through (under @a->lock). */
static void finish_once(struct hs_app *a, int *busy)
{
	HS_BUG_ON(!*busy);
	*busy = 0;
	a->kept++; /* what it computed is kept, what it read meanwhile freed */
	pthread_cond_broadcast(&a->changed);
}

/* A copy of @s, or NULL for NULL; *@err becomes -ENOMEM when it fails. */
static char *dup_or_null(const char *s, int *err)
{
	char *d = s ? hs_strdup(s) : NULL;

	if (s && !d)
		*err = -ENOMEM;
	return d;
}

/* @d's texts copied into @out (which holds none). 0 or -ENOMEM. */
static int defaults_copy(struct hs_source_defaults *out,
			 const struct hs_source_defaults *d)
{
	int err = 0;

	out->start = dup_or_null(d->start, &err);
	out->end = dup_or_null(d->end, &err);
	out->group = dup_or_null(d->group, &err);
	out->fold = dup_or_null(d->fold, &err);
	out->fold_pct = dup_or_null(d->fold_pct, &err);
	out->inc = dup_or_null(d->inc, &err);
	out->exc = dup_or_null(d->exc, &err);
	out->notes = dup_or_null(d->notes, &err);
	return err;
}

/*
 * Load source @name of every member of merged trace @t, each through
 * hs_app_load_source() (its own once-only claim). Called with nothing
 * held: neither @a->lock nor a claim of @t's source, so that a request
 * that waits here for a member another request is reading holds up
 * nobody else (see Threads in app.h).
 */
static int load_members(struct hs_app *a, const struct hs_app_trace *t, const char *name,
			struct hs_diag *diag)
{
	size_t i;
	int err = 0;

	for (i = 0; i < t->nr_members && !err; i++) {
		const struct hs_app_trace *m = &a->traces[t->members[i]];
		struct hs_app_source *ms = hs_app_source(a, t->members[i], name);

		if (!ms) {
			hs_diag_set(diag, 0, "'%s' has no source '%s'", m->name, name);
			err = -EINVAL;
		} else {
			err = hs_app_load_source(a, t->members[i], ms, diag);
		}
	}
	return err;
}

/*
 * Which members merged trace @t's source @name keeps, in @keep: all but,
 * for the peak view, the images of a chain other than its highest peak's
 * (hs_exec_chain_peak_images(), as report's). Returns 0 or -ENOMEM.
 */
static int members_kept(struct hs_app *a, const struct hs_app_trace *t, const char *name,
			const char *const *paths, int *keep)
{
	enum hs_memview_kind kind;
	double *peak, count;
	size_t i;
	int err;

	for (i = 0; i < t->nr_members; i++)
		keep[i] = 1;
	if (hs_memview_parse(name, &kind) || kind != HS_MEM_PEAK)
		return 0;
	peak = hs_calloc(t->nr_members, sizeof(*peak));
	if (!peak)
		return -ENOMEM;
	for (i = 0; i < t->nr_members; i++)
		hs_source_totals(&hs_app_source(a, t->members[i], name)->src, &peak[i],
				 &count);
	err = hs_exec_chain_peak_images(paths, t->nr_members, peak, keep);
	hs_free(peak);
	return err;
}

/*
 * Source @name of merged trace @t into @out (initialised here): that
 * source of every member, appended; the images of a process that exec'd
 * under its last image's frame, and only its highest image's peak for
 * the peak view (members_kept()). The members' sources are loaded
 * already (load_members()), hence read-only: read without the lock.
 */
static int build_merged(struct hs_app *a, const struct hs_app_trace *t, const char *name,
			struct hs_stack_source *out, struct hs_diag *diag)
{
	const char **paths = hs_calloc(t->nr_members + 1, sizeof(*paths));
	char **process = hs_calloc(t->nr_members + 1, sizeof(*process));
	int *keep = hs_calloc(t->nr_members + 1, sizeof(*keep));
	struct hs_stack_source all;
	size_t i;
	int err = 0;

	hs_source_init(&all);
	if (!paths || !process || !keep) {
		err = -ENOMEM;
	} else {
		for (i = 0; i < t->nr_members; i++) {
			const char *path = a->traces[t->members[i]].path;

			paths[i] = path ? path : "-";
		}
		err = hs_exec_chain_frames(paths, t->nr_members, process);
		if (!err)
			err = members_kept(a, t, name, paths, keep);
	}
	for (i = 0; i < t->nr_members && !err; i++) {
		const struct hs_app_trace *m = &a->traces[t->members[i]];
		const struct hs_app_source *ms = hs_app_source(a, t->members[i], name);
		struct hs_buf top = HS_BUF_INIT;

		HS_BUG_ON(!ms || !ms->loaded);
		if (!keep[i]) {
			if (!i)
				err = defaults_copy(&all.defaults, &ms->src.defaults);
			continue;
		}
		if (!hs_source_has_process_frames(&ms->src))
			err = hs_buf_addf(&top, "Trace %s", m->name);
		if (!err && process[i] && !top.len)
			err = hs_source_append_as(&all, &ms->src, process[i]);
		else if (!err)
			err = hs_source_append(&all, &ms->src, top.len ? top.s : NULL);
		if (err == -EINVAL)
			hs_diag_set(diag, 0, "'%s' is in %s, the first file in %s",
				    m->name,
				    ms->src.metric_unit ? ms->src.metric_unit : "no unit",
				    all.metric_unit ? all.metric_unit : "no unit");
		if (!err && !i)
			err = defaults_copy(&all.defaults, &ms->src.defaults);
		hs_buf_release(&top);
	}
	if (process)
		hs_exec_chain_release(process, t->nr_members);
	hs_free(paths);
	hs_free(process);
	hs_free(keep);
	if (err) {
		hs_source_release(&all);
		if (err == -ENOMEM && !diag->set)
			hs_diag_set(diag, 0, "out of memory");
		return err;
	}
	*out = all;
	return 0;
}

int hs_app_merge(struct hs_app *a, const char *name, size_t n, int first,
		 struct hs_diag *diag)
{
	struct hs_app_trace *t, merged;
	size_t i;
	int err = -EINVAL;

	if (n < 2 || n > a->nr_traces) {
		hs_diag_set(diag, 0, "a merged trace needs two traces or more");
		return -EINVAL;
	}
	t = new_trace(a, name);
	err = -ENOMEM;
	if (!t || !(t->members = hs_calloc(n, sizeof(*t->members))))
		goto fail;
	t->nr_members = n;
	for (i = 0; i < n; i++)
		t->members[i] = i;
	t->fmt = HS_FORMAT_UNKNOWN;
	t->format = "merged";
	for (i = 0; i < a->traces[0].nr_sources; i++)
		if (push_source(t, a->traces[0].sources[i].name,
				a->traces[0].sources[i].summary))
			goto fail;
	/* @t is a->traces[a->nr_traces] until it is counted in below */
	err = hs_app_load_source(a, a->nr_traces, &t->sources[0], diag);
	if (err)
		goto fail;
	if (first) {
		size_t k;

		merged = *t;
		memmove(a->traces + 1, a->traces, a->nr_traces * sizeof(*a->traces));
		a->traces[0] = merged;
		/* every merged trace's members are one further now */
		for (k = 0; k <= a->nr_traces; k++)
			for (i = 0; i < a->traces[k].nr_members; i++)
				a->traces[k].members[i]++;
	}
	a->nr_traces++;
	return 0;
fail:
	return drop_new_trace(t, err, diag);
}

/*
 * The pace of what the app reads on its own (hs_app_prefetch()): it
 * waits while requests are served and for @quiet_ns after the last one
 * (the browser draws its answer, the next one comes), unless a request
 * waits for something being read: then it goes on at once. So it takes
 * no CPU from an Update on few cores, and needs no lower priority than
 * the requests', which would slow down the request that waits for it.
 * 1 (give up) once hs_app_release() began.
 */
static int app_pace(void *arg)
{
	struct hs_app *a = arg;
	struct timespec until;
	int64_t end;
	int stop;

	pthread_mutex_lock(&a->lock);
	while (!a->stopping && !a->awaited) {
		if (a->serving) {
			pthread_cond_wait(&a->changed, &a->lock);
			continue;
		}
		end = a->quiet_since + a->quiet_ns;
		if (now_ns() >= end)
			break;
		until.tv_sec = (time_t)(end / 1000000000LL);
		until.tv_nsec = (long)(end % 1000000000LL);
		pthread_cond_timedwait(&a->changed, &a->lock, &until);
	}
	stop = a->stopping;
	pthread_mutex_unlock(&a->lock);
	return stop;
}

/* Trace @t's history once read (no waiting), or NULL. */
static const struct hs_heap_history *history_if_read(struct hs_app *a,
						     const struct hs_app_trace *t)
{
	const struct hs_heap_history *h = NULL;

	pthread_mutex_lock(&a->lock);
	if (t->history && t->history->done && !t->history->err)
		h = &t->history->h;
	pthread_mutex_unlock(&a->lock);
	return h;
}

/*
 * Read source @s of trace @t (not merged) into @fresh: a heap trace's
 * memory views through hs_heap_history_view() (at @pace: NULL for a
 * request; the peak view reads its events only up to the history's
 * peak), the rest through its importer.
 */
static int read_source(struct hs_app *a, const struct hs_app_trace *t,
		       const struct hs_app_source *s, int (*pace)(void *ctx),
		       struct hs_stack_source *fresh, struct hs_diag *diag)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;
	int err;

	/* a history is made only for a heap trace in a file (history_start()) */
	if (!t->history || hs_memview_parse(s->name, &o.kind))
		return hs_import_path_source(t->path, t->fmt, s->name, fresh, diag);
	err = hs_heap_history_view(t->path, history_if_read(a, t), &o, fresh, pace, a,
				   diag);
	if (!err)
		hs_source_check(fresh);
	return err;
}

/* hs_app_load_source() at @pace (NULL: a request's, at full pace). */
static int load_source(struct hs_app *a, size_t trace, struct hs_app_source *s,
		       int (*pace)(void *ctx), struct hs_diag *diag)
{
	struct hs_app_trace *t = &a->traces[trace];
	struct hs_stack_source fresh;
	int err;

	/*
	 * A merged trace's members first, before the claim below: a claim is
	 * never held while waiting for another (app.h, Threads).
	 */
	pthread_mutex_lock(&a->lock);
	err = s->loaded;
	pthread_mutex_unlock(&a->lock);
	if (err)
		return 0;
	if (t->members) {
		err = load_members(a, t, s->name, diag);
		if (err)
			return err;
	}
	pthread_mutex_lock(&a->lock);
	if (!begin_once(a, &s->loading, &s->loaded)) {
		pthread_mutex_unlock(&a->lock);
		return 0;
	}
	pthread_mutex_unlock(&a->lock);
	/*
	 * Read without the lock: other requests go on meanwhile. A heap
	 * trace's views are streamed from the file (memory: the live blocks
	 * and the stacks); a merged trace's come from its members' (loaded
	 * above).
	 */
	hs_source_init(&fresh);
	if (t->members) {
		err = build_merged(a, t, s->name, &fresh, diag);
	} else if (!t->path) {
		hs_diag_set(diag, 0, "'%s' cannot be read again for source '%s'", t->name,
			    s->name);
		err = -ENOENT;
	} else {
		err = read_source(a, t, s, pace, &fresh, diag);
	}
	if (err)
		hs_source_release(&fresh);
	pthread_mutex_lock(&a->lock);
	if (!err) {
		hs_source_release(&s->src);
		s->src = fresh;
		s->loaded = 1;
	}
	finish_once(a, &s->loading);
	pthread_mutex_unlock(&a->lock);
	/* the cache leaves room for it (after the app's lock: never both) */
	if (!err)
		hs_cache_count_outside(&a->cache, hs_source_memory(&s->src));
	return err;
}

int hs_app_load_source(struct hs_app *a, size_t trace, struct hs_app_source *s,
		       struct hs_diag *diag)
{
	return load_source(a, trace, s, NULL, diag);
}

const struct hs_heap_history *hs_app_heap_history(struct hs_app *a, size_t trace)
{
	struct hs_app_history *j = trace < a->nr_traces ? a->traces[trace].history : NULL;
	int err, warn = 0;

	if (!j)
		return NULL;
	pthread_mutex_lock(&a->lock);
	if (!j->done) {
		a->awaited++; /* see begin_once() */
		pthread_cond_broadcast(&a->changed);
		while (!j->done)
			pthread_cond_wait(&a->changed, &a->lock);
		a->awaited--;
	}
	err = j->err;
	/* given up at the release: nothing to say */
	if (err && err != -ECANCELED && !j->warned)
		warn = j->warned = 1;
	pthread_mutex_unlock(&a->lock);
	if (warn)
		hs_log(HS_LOG_WARN, "%s: no heap timeline: %s", a->traces[trace].name,
		       j->diag.msg);
	return err ? NULL : &j->h;
}

/* Whether trace @t is a heap trace that can be read again; else @diag says why. */
static int heap_file(const struct hs_app_trace *t, struct hs_diag *diag)
{
	if (hs_format_has(t->fmt, HS_FORMAT_HAS_HEAP) && t->path)
		return 1;
	hs_diag_set(diag, 0, "'%s' is not a heapscope trace", t->name);
	return 0;
}

/*
 * hs_app_prefetch()'s thread: each heap trace's peak source, in turn, at
 * app_pace(). At the requests' own priority: a request that wants the
 * peak waits for this thread and the reading threads its stream starts
 * (they inherit its nice value), and a nice value above the requests'
 * (10 before) cannot be taken back by an unprivileged process once a
 * request waits, so on a busy machine that request waited for threads
 * that got a tenth of a core's share (bench/README.md, gui/bench.mjs).
 * app_pace() alone keeps it from the requests' way.
 */
static void *prefetch_run(void *arg)
{
	struct hs_app *a = arg;
	struct hs_app_source *s;
	size_t i;

	for (i = 0; i < a->nr_traces && !app_stopping(a); i++) {
		struct hs_diag d = HS_DIAG_INIT(a->traces[i].name);

		/* after the trace's history: one pass over a file at a time */
		s = hs_app_heap_history(a, i) && !app_stopping(a)
			? hs_app_source(a, i, hs_memview_name(HS_MEM_PEAK))
			: NULL;
		/* on failure the request that asks for it reads it, and says why */
		if (s && load_source(a, i, s, app_pace, &d))
			hs_log(HS_LOG_DEBUG, "%s: peak not read ahead: %s",
			       a->traces[i].name, d.msg);
	}
	return NULL;
}

int hs_app_prefetch(struct hs_app *a)
{
	int err;

	HS_BUG_ON(a->prefetching);
	err = start_thread(&a->prefetch, prefetch_run, a);
	if (err)
		return -err;
	a->prefetching = 1;
	return 0;
}

/*
 * ---- The first view asked ahead (hs_app_warm()) ----
 *
 * The page's first questions, as web/js/main.js asks them on opening
 * (history.js initialState(): ByName, the first trace's first source, its
 * saved defaults as the boxes' texts): ByName's first page of rows and the
 * timeline of 600 buckets. Each is answered by hs_app_handle() on a thread
 * of its own, as two workers would answer the page, and the answer is
 * dropped: what stays is the cache's call tree, filter result, ByName
 * parts and timeline text, which the page's own requests then find (or
 * wait for, as for another request's build: hs_cache_claim()). A query
 * that the page does not send (other defaults, another tab) costs only
 * this CPU: the cache keys the results by their parameters.
 */
#define WARM_ROWS 60	 /* main.js PAGE */
#define WARM_BUCKETS 600 /* main.js's timeline */

static void *warm_run(void *arg)
{
	struct hs_app_warm *w = arg;
	struct hs_request req = {
	    .method = "POST",
	    .path = w->path,
	    .ctx = w->app,
	    .cookie_token = w->app->token,
	    .body = w->body,
	    .body_len = strlen(w->body),
	    .superseded = app_stopping, /* checked before each build */
	};
	struct hs_response resp;

	hs_app_handle(w->app, &req, &resp);
	if (resp.status >= 400)
		hs_log(HS_LOG_DEBUG, "%s not asked ahead: %.*s", w->path, (int)resp.len,
		       (const char *)resp.data);
	/* the last of a burst: its build's temporaries go back as http.c's do */
	if (resp.trim)
		hs_app_trim();
	hs_response_release(&resp);
	return NULL;
}

/* The page's "params" for source @s: its saved defaults' texts, else "". */
static json_t *warm_params(const struct hs_stack_source *s)
{
	const struct hs_source_defaults *d = &s->defaults;
#define TEXT(x) ((x) ? (x) : "")
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "start", TEXT(d->start),
			 "end", TEXT(d->end), "group", TEXT(d->group), "fold",
			 TEXT(d->fold), "fold_pct", TEXT(d->fold_pct), "inc",
			 TEXT(d->inc), "exc", TEXT(d->exc));
#undef TEXT
}

/* The query of warm request @k (0: rows, 1: the timeline) as JSON text. */
static char *warm_body(const struct hs_stack_source *s, int k)
{
	json_t *params = warm_params(s), *q;
	char *text;

	if (!params)
		return NULL;
	q = k ? json_pack("{s:i, s:o, s:i}", "trace", 0, "params", params, "buckets",
			  WARM_BUCKETS)
	      : json_pack("{s:i, s:o, s:s, s:i, s:i, s:n, s:n}", "trace", 0, "params",
			  params, "view", "byname", "offset", 0, "count", WARM_ROWS,
			  "sort", "order");
	if (!q)
		return NULL;
	text = json_dumps(q, JSON_COMPACT);
	json_decref(q);
	return text;
}

int hs_app_warm(struct hs_app *a)
{
	static const char *const paths[HS_APP_WARM] = {"/api/rows", "/api/timeline"};
	size_t k;
	int err = 0;

	HS_BUG_ON(a->nr_warm);
	if (!a->nr_traces || !a->traces[0].nr_sources || !a->traces[0].sources[0].loaded)
		return 0;
	for (k = 0; k < HS_APP_WARM && !err; k++) {
		struct hs_app_warm *w = &a->warm[k];

		w->app = a;
		w->path = paths[k];
		w->body = warm_body(&a->traces[0].sources[0].src, (int)k);
		if (!w->body) {
			err = -ENOMEM;
			break;
		}
		err = -start_thread(&w->thread, warm_run, w);
		if (err) {
			free(w->body);
			w->body = NULL;
			break;
		}
		a->nr_warm++;
	}
	return err;
}

void hs_app_warm_wait(struct hs_app *a)
{
	size_t k;

	for (k = 0; k < a->nr_warm; k++) {
		pthread_join(a->warm[k].thread, NULL);
		free(a->warm[k].body);
	}
	a->nr_warm = 0;
}

int hs_app_heap_view(struct hs_app *a, size_t trace, const struct hs_memview_opts *mo,
		     struct hs_stack_source *out, struct hs_diag *diag)
{
	if (!heap_file(&a->traces[trace], diag)) {
		hs_source_init(out);
		return -ENOENT;
	}
	return hs_memview_build_path(a->traces[trace].path, mo, out, NULL, diag);
}

json_t *hs_app_heap_stats(struct hs_app *a, size_t trace, struct hs_diag *diag)
{
	struct hs_app_trace *t = &a->traces[trace];
	struct hs_heap_stats hs;
	struct hs_trace read;
	json_t *o = NULL;
	char *text = NULL;
	int have;

	if (!hs_format_has(t->fmt, HS_FORMAT_HAS_HEAP))
		return NULL;
	pthread_mutex_lock(&a->lock);
	while (t->stats_computing)
		pthread_cond_wait(&a->changed, &a->lock);
	have = t->heap_stats != NULL;
	if (!begin_once(a, &t->stats_computing, &have)) {
		pthread_mutex_unlock(&a->lock);
		/* each request gets its own copy: jansson objects are not shared */
		return json_loads(t->heap_stats, 0, NULL);
	}
	pthread_mutex_unlock(&a->lock);
	/*
	 * The slowest thing the server does: never under the lock. Streamed
	 * from the file, as `heapscope stats` computes them.
	 */
	if (heap_file(t, diag) &&
	    !hs_heap_stats_compute_path(t->path, &(struct hs_stats_opts){0}, &read, &hs,
					diag)) {
		o = hs_heap_stats_json(&hs);
		hs_heap_stats_release(&hs);
		hs_trace_release(&read);
	}
	if (o)
		text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
	pthread_mutex_lock(&a->lock);
	t->heap_stats = text;
	finish_once(a, &t->stats_computing);
	pthread_mutex_unlock(&a->lock);
	return o;
}

int hs_app_token_ok(const struct hs_app *a, const char *given)
{
	unsigned diff = 0;
	size_t i;

	if (!given || strlen(given) != HS_APP_TOKEN_LEN)
		return 0;
	for (i = 0; i < HS_APP_TOKEN_LEN; i++)
		diff |= (unsigned)(given[i] ^ a->token[i]);
	return diff == 0;
}

void hs_response_release(struct hs_response *r)
{
	if (r->owned)
		hs_free((void *)r->data);
	memset(r, 0, sizeof(*r));
}

int hs__reply_error(struct hs_response *resp, unsigned status, const char *fmt, ...)
{
	static const char fallback[] = "{\"error\":\"out of memory\"}\n";
	char msg[600];
	json_t *o;
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hs_response_release(resp);
	resp->status = status;
	resp->type = "application/json";
	/* the message may quote a name that is not UTF-8, or cut one short */
	o = json_pack("{s:o}", "error", hs_view_json_text(msg));
	if (o)
		s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	if (s) {
		resp->data = hs_strdup(s);
		free(s);
	}
	if (resp->data) {
		resp->len = strlen(resp->data);
		resp->owned = 1;
	} else {
		resp->status = 503;
		resp->data = fallback;
		resp->len = sizeof(fallback) - 1;
	}
	return 0;
}

int hs__reply_json_text(struct hs_response *resp, char *s, size_t len)
{
	char *grown = s ? hs_realloc(s, len + 2) : NULL;

	if (!grown) {
		hs_free(s);
		return hs__reply_error(resp, 503, "out of memory");
	}
	hs_response_release(resp);
	grown[len++] = '\n';
	grown[len] = '\0';
	resp->status = 200;
	resp->type = "application/json";
	resp->data = grown;
	resp->len = len;
	resp->owned = 1;
	return 0;
}

static void serve_asset(const struct hs_request *req, struct hs_response *resp)
{
	const struct hs_asset *as;

	if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
		hs__reply_error(resp, 405, "method %s is not allowed here", req->method);
		return;
	}
	as = hs_asset_find(!strcmp(req->path, "/") ? "/index.html" : req->path);
	if (!as) {
		hs__reply_error(resp, 404, "no such page");
		return;
	}
	resp->status = 200;
	resp->type = as->type;
	resp->data = as->data;
	resp->len = as->len;
}

void hs_app_trim(void)
{
	int64_t t0 = now_ns();

	/* what the temporaries left below the mmap threshold (HS_MAP_LARGE) */
	malloc_trim(0);
	pr_debug("server: malloc_trim() after a burst took %.1f ms",
		 (double)(now_ns() - t0) / 1e6);
}

/*
 * The requests served now go up or down by @d (app_pace() waits for 0,
 * then for @quiet_ns from the moment it was 0 again); a request done
 * answered @answered bytes. 1 when none is served any more: the end of a
 * burst, whose answers' bytes are then in *@burst_bytes.
 */
static int count_serving(struct hs_app *a, int d, size_t answered, size_t *burst_bytes)
{
	int idle;

	pthread_mutex_lock(&a->lock);
	a->serving += d;
	a->burst_bytes += answered;
	idle = !a->serving;
	if (idle) {
		a->quiet_since = now_ns();
		*burst_bytes = a->burst_bytes;
		a->burst_bytes = 0;
		pthread_cond_broadcast(&a->changed);
	}
	pthread_mutex_unlock(&a->lock);
	return idle;
}

/*
 * Whether the burst that just ended, having answered @burst_bytes, is
 * worth a malloc_trim() (see hs_app_trim() and struct hs_app): it built
 * or dropped cache entries, the app computed something it keeps, or its
 * answers were long. Then what it saw is the new mark.
 */
static int burst_freed_much(struct hs_app *a, size_t burst_bytes)
{
	size_t entries, hits, misses;
	int changed;

	/* the cache's lock is never taken under the app's */
	hs_cache_counts(&a->cache, &entries, &hits, &misses);
	pthread_mutex_lock(&a->lock);
	changed = misses != a->trimmed_misses || entries != a->trimmed_entries ||
		  a->kept != a->trimmed_kept || burst_bytes >= a->trim_answer_bytes;
	if (changed) {
		a->trimmed_misses = misses;
		a->trimmed_entries = entries;
		a->trimmed_kept = a->kept;
	}
	pthread_mutex_unlock(&a->lock);
	if (!changed)
		pr_debug("server: no malloc_trim() after a burst of %zu bytes that "
			 "built nothing",
			 burst_bytes);
	return changed;
}

void hs_app_handle(struct hs_app *a, const struct hs_request *req,
		   struct hs_response *resp)
{
	const char *arg_token = req->arg ? req->arg(req->ctx, "token") : NULL;
	size_t burst_bytes = 0;
	int api;

	memset(resp, 0, sizeof(*resp));
	if (arg_token ? !hs_app_token_ok(a, arg_token)
		      : !hs_app_token_ok(a, req->cookie_token)) {
		hs__reply_error(resp, 403,
				"forbidden: open the URL heapscope printed "
				"(with its token)");
		return;
	}
	count_serving(a, 1, 0, NULL);
	api = !strncmp(req->path, "/api/", 5);
	if (api)
		hs__routes_handle(a, req, resp);
	else
		serve_asset(req, resp);
	/* the last API request of a burst (an Update's three) that built,
	 * dropped or answered much */
	resp->trim = count_serving(a, -1, api ? resp->len : 0, &burst_bytes) && api &&
		     burst_freed_much(a, burst_bytes);
	resp->set_cookie = arg_token != NULL && resp->status < 400;
}
