#ifndef HS_SERVER_APP_H
#define HS_SERVER_APP_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "analysis/heap_history.h"
#include "analysis/memviews.h"
#include "io/io.h"
#include "model/stack_source.h"
#include "server/cache.h"

/*
 * app - `heapscope view` without the HTTP: the loaded traces, the access
 * token, the cache of results, and one function that answers a request,
 * so that the whole API (docs/json-api.md) and the embedded web GUI can be
 * tested without a socket. http.c puts libmicrohttpd in front of it.
 *
 * Every request must carry the token, as the URL's "token" argument (the
 * response then asks for it to be kept in a cookie) or as that cookie;
 * otherwise 403. Paths under /api/ are the API (routes.c); any other path
 * is an embedded asset ("/" is /index.html) or 404: no file outside the
 * embedded assets is ever served. Bad requests get a 4xx status with a
 * JSON body {"error": "..."}.
 *
 * A trace is a loaded file with one or more stack sources, each with a
 * name (the GUI's Source selector): the sources its format offers
 * (io.h: perf script "cpu" and "thread-time", a heapscope trace's memory
 * views "alloc", "net", "leaks", "peak", "temporary", "mmap"), the first
 * loaded at once and the others read from the file on first use; a
 * format without a choice has one, "cpu" for CPU samples, "samples"
 * otherwise. A heapscope trace is never loaded whole: every view of it,
 * its stats (as `heapscope stats`) and the leaks and peak views of a time
 * range are streamed from the file when they are first asked for
 * (memory: the live blocks and the stacks), and its heap and RSS over
 * time (analysis/heap_history.h: a point per clock tick, not per event)
 * are read once, by hs_app_open() in the first source's pass (a file
 * that is not a heap trace's first source: on a thread of its own
 * beside it). Its peak source, the costliest to read, may be read ahead
 * once serving starts (hs_app_prefetch(), which `heapscope view` calls),
 * at a pace that leaves the CPU to requests; read when the history is,
 * the peak view reads its events only up to the history's peak.
 *
 * Ownership: the app owns its traces (hs_app_add_trace() and
 * hs_app_add_source() take the sources) and its cache. A response owns
 * its body when @owned.
 *
 * Threads. hs_app_open(), hs_app_add_trace() and hs_app_add_source() come
 * first, from one thread; after that hs_app_handle() may run on several
 * threads at once (the server's workers), so that a slow request (Stats,
 * a first source switch) never holds a fast one. What they share:
 *   - the list of traces and of their sources' names: fixed once serving
 *     starts, read without a lock;
 *   - a trace's @history: the pointer fixed once serving starts; what it
 *     points to is its reading thread's until that is done (under
 *     @lock), read-only after;
 *   - a source's @loaded and @loading, a trace's @heap_stats and
 *     @stats_computing: under @lock. Each is computed once, by the first
 *     request that needs it, without the lock (others wait on @changed);
 *     once set, what it points to is read-only;
 *   - the cache: its own lock (cache.h).
 * Nothing is computed under @lock, and no other lock is taken under it.
 *
 * A merged trace (hs_app_merge()) owns its @members list (indexes, fixed
 * once serving starts) and its own sources; the members' sources stay
 * owned by the members. A source of the merged trace is loaded in two
 * steps: first that source of every member, each through
 * hs_app_load_source() with its own once-only claim, holding neither
 * @lock nor any claim; only then the merged source's claim, under which
 * the members' sources (loaded, hence read-only) are appended without
 * @lock. So no request ever holds a claim while it waits for another,
 * and claims cannot wait on each other in a cycle.
 */

#define HS_APP_TOKEN_LEN 32	   /* hex digits */
#define HS_APP_MAX_BODY (1u << 20) /* bytes of a POST body */
/* A burst's answers this long (JSON text) left at least as much in the
 * small blocks of the JSON trees they were dumped from (struct hs_app) */
#define HS_APP_TRIM_ANSWER_BYTES ((size_t)1 << 20)

struct hs_app_source {
	char *name;		    /* "cpu", "samples", "alloc", ... (owned) */
	const char *summary;	    /* static one-line description, or NULL */
	int loaded;		    /* @src holds the source (under @lock) */
	int loading;		    /* a request is reading it (under @lock) */
	struct hs_stack_source src; /* owned; its defaults fill the GUI's boxes */
};

struct hs_app_history;
struct hs_app_trace {
	char *name; /* the file's name as shown (owned) */
	char *path; /* owned; NULL: cannot be read again */
	enum hs_format fmt;
	const char *format;	       /* static format name ("perf-script", ...) */
	struct hs_app_source *sources; /* the first is the default */
	size_t nr_sources;
	/* owned; a heap trace's heap and RSS over time (read, or being read
	 * on a thread of its own: hs_app_heap_history()), or NULL */
	struct hs_app_history *history;
	char *heap_stats;    /* its stats' JSON text (malloc()ed), or NULL */
	int stats_computing; /* a request is computing @heap_stats */
	size_t nr_members;   /* a merged trace (hs_app_merge()): traces */
	size_t *members;     /* [0, nr_members) are its members (owned) */
};

/* hs_app_warm(): one question asked ahead (app.c) */
#define HS_APP_WARM 2
struct hs_app_warm {
	struct hs_app *app;
	const char *path;
	char *body; /* the query's JSON text (malloc()ed) */
	pthread_t thread;
};

struct hs_app {
	struct hs_app_trace *traces;
	size_t nr_traces, alloc_traces;
	char token[HS_APP_TOKEN_LEN + 1];
	struct hs_cache cache;
	pthread_mutex_t lock;	/* the lazily computed state above */
	pthread_cond_t changed; /* some of it was computed (or failed) */
	pthread_t prefetch;	/* hs_app_prefetch()'s thread, */
	int prefetching;	/* when it was started (joined at the release) */
	struct hs_app_warm warm[HS_APP_WARM]; /* hs_app_warm()'s threads: */
	size_t nr_warm;			      /* those started (joined at the release) */
	int stopping;			      /* hs_app_release() began (under @lock) */
	/* requests in hs_app_handle(), and those of them waiting for
	 * something another thread reads (under @lock): the app's own reads
	 * wait while the first is not 0 and the second is (app.c app_pace()) */
	int serving, awaited;
	/* when @serving last fell to 0 (CLOCK_MONOTONIC ns), and how long
	 * after it the app's own reads still wait (under @lock; tests may
	 * change @quiet_ns, hs_app_init() sets 150 ms) */
	int64_t quiet_since, quiet_ns;
	/*
	 * Whether a burst of requests ends with a malloc_trim() (under
	 * @lock; see hs_app_trim()): @kept counts what the app computed once
	 * and keeps (sources read, stats, histories); @burst_bytes the text
	 * of the API answers since @serving was last 0; @trimmed_* what the
	 * cache's misses and entries and @kept were when the last burst that
	 * trimmed ended. A burst trims when it answered @trim_answer_bytes
	 * or more (hs_app_init() sets HS_APP_TRIM_ANSWER_BYTES; tests may
	 * change it), or when any of the three changed since.
	 */
	uint64_t kept;
	size_t burst_bytes, trim_answer_bytes;
	size_t trimmed_misses, trimmed_entries;
	uint64_t trimmed_kept;
};

struct hs_request {
	const char *method; /* "GET", "HEAD", "POST", ... */
	const char *path;   /* the URL's path, without the query */
	/* the URL's query arguments, decoded; NULL when absent */
	const char *(*arg)(void *ctx, const char *key);
	void *ctx;
	const char *cookie_token; /* the token cookie's value, or NULL */
	const char *body;	  /* POST body (not NUL-terminated) or NULL */
	size_t body_len;
	int body_too_large; /* the body was over HS_APP_MAX_BODY */
	/*
	 * Whether the client has since cancelled this request (a newer
	 * generation came from it; http.c), or NULL: checked before each
	 * long computation, which is then skipped (409).
	 */
	int (*superseded)(void *ctx);
};

struct hs_response {
	unsigned status;
	const char *type; /* static content type */
	const void *data; /* the body */
	size_t len;
	int owned;	/* @data is hs_malloc()ed, for hs_free() */
	int set_cookie; /* keep the token in a cookie */
	int trim;	/* the last API request being served, of a burst
			 * that built or dropped what the app keeps, or that
			 * answered much: once the answer is sent,
			 * hs_app_trim() hands back the free memory of its
			 * burst */
};

/*
 * Initialise @a with @token (HS_APP_TOKEN_LEN hex digits) or, when NULL,
 * a random one from getrandom(2). Returns 0, -EINVAL (a malformed token)
 * or the error of getrandom().
 */
int hs_app_init(struct hs_app *a, const char *token);
/*
 * Free everything. The app's own threads are told to stop first and
 * waited for: a history still being read gives up, the read-ahead starts
 * nothing more (a source it reads is read to the end).
 */
void hs_app_release(struct hs_app *a);
/*
 * Open the file @path (format @fmt; HS_FORMAT_UNKNOWN: by name, then
 * content) as a new trace named @name (copied), with its default source
 * loaded; for a heap trace its history is read on a thread of its own,
 * started here and going on after the return (hs_app_heap_history()).
 * Returns 0 or a negative errno with @diag filled (naming the file and
 * line).
 */
int hs_app_open(struct hs_app *a, const char *path, const char *name, enum hs_format fmt,
		struct hs_diag *diag);
/*
 * Add a trace named @name (copied) read in @format (static) with one
 * source, named after the format and metric; takes @src, which is left
 * empty. For sources not from a file (standard input, tests). Returns 0
 * or -ENOMEM (then @src is released).
 */
int hs_app_add_trace(struct hs_app *a, const char *name, const char *format,
		     struct hs_stack_source *src);
/*
 * Add a trace named @name (copied) that is traces [0, @n) as one, as
 * `report a b c` has them (model/source_merge.h): each of its sources,
 * named as the first trace's, is that source of every member appended,
 * under the member's process frames (or a "Trace NAME" frame), with the
 * first member's defaults. Its first source is loaded now (its members'
 * too), the others when they are asked for. It is the last trace, or
 * with @first the first one (every other trace one further). Returns 0,
 * -EINVAL (fewer than two traces, or sources that do not add up: @diag
 * says which) or -ENOMEM. Call it before the app answers requests.
 */
int hs_app_merge(struct hs_app *a, const char *name, size_t n, int first,
		 struct hs_diag *diag);
/*
 * Add source @name (copied) to trace @trace; takes @src as above. Returns
 * 0, -EEXIST (a source of that name exists), -EINVAL (no such trace) or
 * -ENOMEM; on error @src is released.
 */
int hs_app_add_source(struct hs_app *a, size_t trace, const char *name,
		      struct hs_stack_source *src);
/* Source @name of trace @trace (NULL or "" = its first), or NULL. */
struct hs_app_source *hs_app_source(const struct hs_app *a, size_t trace,
				    const char *name);
/*
 * Start reading, on a thread of its own, what costs most to read and is
 * likely to be asked for: each heap trace's peak source (a pass that
 * holds every live block), so that a first switch to it finds it read,
 * or waits only for the rest of that read (hs_app_load_source()'s claim,
 * as for a source another request reads). It reads once no request has
 * been served for @quiet_ns, or while one waits for what it reads (so
 * that on few cores an Update is not slowed down by it), at the
 * requests' priority (the request that waits for it is not held up by a
 * lower one). Call it once, after the last
 * trace is added (it reads the list of traces), when requests may come;
 * hs_app_release() waits for the thread. Returns 0, or the error of
 * pthread_create() (then nothing is read ahead).
 */
int hs_app_prefetch(struct hs_app *a);
/*
 * Ask, each on a thread of its own, the questions the page asks first when
 * it opens (web/js/main.js: ByName's first rows and the timeline of the
 * first trace's first source, with its saved defaults), so that the call
 * tree and what else they need are built while the browser starts and
 * loads the page, and are in the cache when the page asks: the page's
 * requests find them there, or wait for the build under way. The answers
 * are dropped. Call it once, after the last trace is added, when requests
 * may come (the threads count as requests being served, so
 * hs_app_prefetch()'s read waits for them); hs_app_release() waits for
 * the threads, which skip what they have not started once it begins.
 * Returns 0, -ENOMEM or the error of pthread_create() (then fewer
 * questions are asked ahead).
 */
int hs_app_warm(struct hs_app *a);
/* Wait for hs_app_warm()'s threads (hs_app_release() does). */
void hs_app_warm_wait(struct hs_app *a);
/*
 * Make sure source @s of trace @trace is loaded (reading the file again
 * when it is not). Returns 0, -ENOENT when the file cannot be read again,
 * or the importer's error, with @diag filled.
 */
int hs_app_load_source(struct hs_app *a, size_t trace, struct hs_app_source *s,
		       struct hs_diag *diag);
/*
 * The heap and RSS over time of heap trace @trace, once the read that
 * hs_app_open() started is over (waiting for it; borrowed, read-only),
 * or NULL: not a heap trace, or not readable (a warning says why, once).
 */
const struct hs_heap_history *hs_app_heap_history(struct hs_app *a, size_t trace);
/*
 * Build view @mo of heap trace @trace from its file into @out
 * (initialised here), streamed as hs_memview_build_path() does (for the
 * leaks and peak views of a time range). Returns 0, -ENOENT (not a heap
 * trace, or not readable again) or the reader's error, with @diag filled.
 */
int hs_app_heap_view(struct hs_app *a, size_t trace, const struct hs_memview_opts *mo,
		     struct hs_stack_source *out, struct hs_diag *diag);
/*
 * The stats of heap trace @trace (hs_heap_stats_json()), computed on first
 * use from the file as `heapscope stats` computes them; a new reference,
 * or NULL (not a heap trace, or they cannot be computed: message in
 * @diag).
 */
struct json_t *hs_app_heap_stats(struct hs_app *a, size_t trace, struct hs_diag *diag);
/* Whether @given is the token (constant time). */
int hs_app_token_ok(const struct hs_app *a, const char *given);
/*
 * Hand the free pages of every malloc arena back to the system
 * (malloc_trim()): what a burst of requests' temporaries and the cache
 * entries they evicted left free. For the server, after sending an
 * answer marked @trim, so that no answer waits for it. Only such bursts
 * trim: malloc_trim() walks every free block of every arena holding its
 * lock (tens of ms, up to seconds, on hundreds of MB of half-freed small
 * blocks), and a burst that only read what the cache holds (scrolling,
 * expanding a row) freed little that the next one does not reuse. With
 * HS_LOG=debug each trim logs the time it took.
 */
void hs_app_trim(void);
/*
 * Answer @req in @resp (always filled; release with hs_response_release()).
 * Thread-safe (see Threads above).
 */
void hs_app_handle(struct hs_app *a, const struct hs_request *req,
		   struct hs_response *resp);
void hs_response_release(struct hs_response *r);

/* For routes.c: answer a request for a path under /api/. */
void hs__routes_handle(struct hs_app *a, const struct hs_request *req,
		       struct hs_response *resp);
/*
 * Fill @resp with status @status and the JSON {"error": msg}; returns 0,
 * so that `return hs__reply_error(...)` ends a handler.
 */
int hs__reply_error(struct hs_response *resp, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * Fill @resp with status 200 and the JSON text @s of @len bytes (taken:
 * hs_malloc()ed), a newline added; NULL @s (out of memory) is a 503.
 * Returns 0.
 */
int hs__reply_json_text(struct hs_response *resp, char *s, size_t len);
#endif
