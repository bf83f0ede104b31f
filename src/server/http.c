/*
 * http - libmicrohttpd in front of the app (see server.h): collects a
 * request (path, arguments, token cookie, bounded body), lets
 * hs_app_handle() answer it and sends the answer with safe headers.
 *
 * Slow clients. libmicrohttpd's timeout restarts with every byte, so
 * sockets that trickle header bytes held all 64 connection slots and
 * locked the user out. A connection is trusted once one of its requests
 * carries the token; until then it is a guest, and guests are bounded
 * (docs/gui.md): each has HS_HTTP_GUEST_DEADLINE seconds in all, at most
 * HS_HTTP_GUESTS_PER_CLIENT come from one address and HS_HTTP_GUESTS in
 * all, the oldest giving way to a newcomer, so that slots stay free for
 * the user's browser. The guard runs when a connection opens (on
 * libmicrohttpd's thread) and every second (on the server's watch
 * thread); @lock covers the list, and a connection leaves it before
 * libmicrohttpd closes its descriptor.
 *
 * Workers. libmicrohttpd's one thread only receives and sends: an API
 * request, once received, is copied (method, path, arguments, cookie,
 * body) into its struct pending, its connection suspended and the request
 * handed to the worker pool (workers.h), whose threads call
 * hs_app_handle() concurrently (app.h says what they share). The worker
 * that answered resumes the connection; libmicrohttpd then calls
 * handle() again, which sends the answer. A pending request belongs to
 * libmicrohttpd's thread until it is submitted, to its worker until
 * state becomes ANSWERED (written under @lock, with the resume after
 * it), then to libmicrohttpd's thread again, which frees it when the
 * request completes; a suspended connection is never closed or timed out
 * by libmicrohttpd, so a worker never sees its request freed. Assets are
 * answered on libmicrohttpd's thread: they are in memory.
 */
#include "server/server.h"
#include "server/workers.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/log.h"
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

/* One open connection, in the guard's list (oldest first). */
struct conn {
	struct conn *prev, *next;
	int fd;
	int trusted; /* a request of it carried the token */
	int evicted; /* shut down, waiting for libmicrohttpd to close it */
	struct timespec start;
	struct sockaddr_storage addr;
	socklen_t addr_len;
};

struct hs_server {
	struct MHD_Daemon *d;
	struct hs_app *app;
	unsigned port;
	char host[INET6_ADDRSTRLEN + 2]; /* as it goes in a URL */
	char cookie[32];		 /* "hs_token_PORT" */
	char bound[INET6_ADDRSTRLEN];	 /* the address listened on */
	int exposed;			 /* not a loopback address */
	struct conn *oldest, *newest;	 /* the guard's list */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t watch;
	int watching, stopping;
	struct hs_workers *workers; /* the API's requests run here */
	/* the newest generation each client sent (under @lock), see superseded() */
	struct {
		char client[33];
		unsigned long gen;
	} gens[16];
	unsigned next_gen; /* the slot a new client takes (oldest first) */
};

/*
 * The token cookie's name into @buf: written once the port is known,
 * after libmicrohttpd's thread started, hence read under @lock.
 */
static const char *cookie_name(struct hs_server *s, char buf[32])
{
	pthread_mutex_lock(&s->lock);
	memcpy(buf, s->cookie, 32);
	pthread_mutex_unlock(&s->lock);
	return buf;
}

static double seconds_since(const struct timespec *t, const struct timespec *now)
{
	return (double)(now->tv_sec - t->tv_sec) +
	       (double)(now->tv_nsec - t->tv_nsec) / 1e9;
}

static int same_client(const struct conn *a, const struct conn *b)
{
	const struct sockaddr *x = (const void *)&a->addr, *y = (const void *)&b->addr;

	if (x->sa_family != y->sa_family)
		return 0;
	if (x->sa_family == AF_INET)
		return ((const struct sockaddr_in *)x)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)y)->sin_addr.s_addr;
	if (x->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)x)->sin6_addr,
			       &((const struct sockaddr_in6 *)y)->sin6_addr, 16);
	return 0;
}

/* End a guest's connection: libmicrohttpd sees it closed and cleans up. */
static void evict(struct conn *k, const char *why)
{
	pr_debug("http: closing a connection without the token (%s)", why);
	shutdown(k->fd, SHUT_RDWR);
	k->evicted = 1;
}

/*
 * Guests past their deadline go; then, before @fresh (NULL: none) takes a
 * slot, the oldest guests of its address and of all while over their
 * limits. Called with @s->lock held.
 */
static void guard(struct hs_server *s, const struct conn *fresh)
{
	struct timespec now;
	struct conn *k;
	unsigned guests = 0, mine = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (k = s->oldest; k; k = k->next) {
		if (k->trusted || k->evicted || k == fresh)
			continue;
		if (seconds_since(&k->start, &now) > HS_HTTP_GUEST_DEADLINE) {
			evict(k, "deadline");
			continue;
		}
		guests++;
		mine += fresh && same_client(k, fresh);
	}
	if (!fresh)
		return;
	for (k = s->oldest;
	     k && (guests >= HS_HTTP_GUESTS || mine >= HS_HTTP_GUESTS_PER_CLIENT);
	     k = k->next) {
		if (k->trusted || k->evicted || k == fresh)
			continue;
		if (mine >= HS_HTTP_GUESTS_PER_CLIENT && !same_client(k, fresh) &&
		    guests < HS_HTTP_GUESTS)
			continue;
		evict(k, "too many");
		guests--;
		mine -= same_client(k, fresh);
	}
}

static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			      enum MHD_ConnectionNotificationCode code)
{
	struct hs_server *s = cls;
	struct conn *k = *socket_context;
	const union MHD_ConnectionInfo *fd, *addr;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!k)
			return;
		pthread_mutex_lock(&s->lock);
		*(k->prev ? &k->prev->next : &s->oldest) = k->next;
		*(k->next ? &k->next->prev : &s->newest) = k->prev;
		pthread_mutex_unlock(&s->lock);
		hs_free(k);
		*socket_context = NULL;
		return;
	}
	fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	k = fd ? hs_calloc(1, sizeof(*k)) : NULL;
	if (!k)
		return; /* unguarded: the idle timeout still applies */
	k->fd = fd->connect_fd;
	clock_gettime(CLOCK_MONOTONIC, &k->start);
	if (addr && addr->client_addr) {
		k->addr_len = addr->client_addr->sa_family == AF_INET6
				  ? sizeof(struct sockaddr_in6)
				  : sizeof(struct sockaddr_in);
		memcpy(&k->addr, addr->client_addr, k->addr_len);
	}
	pthread_mutex_lock(&s->lock);
	k->prev = s->newest;
	*(s->newest ? &s->newest->next : &s->oldest) = k;
	s->newest = k;
	*socket_context = k;
	guard(s, k);
	pthread_mutex_unlock(&s->lock);
}

/* The watch thread: the guests' deadline, checked every second. */
static void *watch(void *arg)
{
	struct hs_server *s = arg;
	struct timespec until;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec++;
		pthread_cond_timedwait(&s->wake, &s->lock, &until);
		if (!s->stopping)
			guard(s, NULL);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Whether @c's current request carries the token (cookie or ?token=). */
static void note_token(struct hs_server *s, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;
	const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	char name[32];
	const char *cookie =
	    MHD_lookup_connection_value(c, MHD_COOKIE_KIND, cookie_name(s, name));

	if (k && !k->trusted) {
		int ok = hs_app_token_ok(s->app, arg ? arg : cookie);

		pthread_mutex_lock(&s->lock);
		k->trusted = ok;
		pthread_mutex_unlock(&s->lock);
	}
}

/* One GET argument of a request, copied for its worker. */
struct arg {
	char *key, *value;
};

enum pending_state { RECEIVING, QUEUED, ANSWERED };

/* One request: being received, answered by a worker, then sent. */
struct pending {
	struct hs_buf body;
	int too_large;
	enum pending_state state; /* under the server's @lock once QUEUED */
	struct hs_job job;
	struct hs_server *s;
	struct MHD_Connection *c;
	char *method, *path, *cookie; /* copies for the worker */
	struct arg *args;
	size_t nr_args, alloc_args;
	int copy_failed;
	char client[33]; /* its X-Heapscope-Generation: CLIENT:GEN, if any */
	unsigned long gen;
	struct hs_response resp; /* the worker's answer */
};

static void pending_free(struct pending *p)
{
	size_t i;

	hs_buf_release(&p->body);
	for (i = 0; i < p->nr_args; i++) {
		hs_free(p->args[i].key);
		hs_free(p->args[i].value);
	}
	hs_free(p->args);
	hs_free(p->method);
	hs_free(p->path);
	hs_free(p->cookie);
	hs_response_release(&p->resp);
	hs_free(p);
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	pr_debug("http: %s", msg);
}

static const char *get_arg(void *ctx, const char *key)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* A copied argument of the pending request @ctx (the last of that key). */
static const char *copied_arg(void *ctx, const char *key)
{
	const struct pending *p = ctx;
	size_t i;

	for (i = p->nr_args; i > 0; i--)
		if (!strcmp(p->args[i - 1].key, key))
			return p->args[i - 1].value;
	return NULL;
}

static enum MHD_Result copy_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	struct pending *p = cls;
	struct arg *a;

	(void)kind;
	if (HS_GROW(p->args, p->nr_args + 1, p->alloc_args)) {
		p->copy_failed = 1;
		return MHD_NO;
	}
	a = &p->args[p->nr_args];
	a->key = hs_strdup(key);
	a->value = hs_strdup(value ? value : "");
	if (!a->key || !a->value) {
		hs_free(a->key);
		hs_free(a->value);
		p->copy_failed = 1;
		return MHD_NO;
	}
	p->nr_args++;
	return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct pending *p = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (p) {
		/* never while a worker has it: its connection is suspended */
		HS_BUG_ON(p->state == QUEUED);
		pending_free(p);
		*con_cls = NULL;
	}
}

/*
 * Generations. The GUI sends "X-Heapscope-Generation: CLIENT:N" with each
 * call, CLIENT a random id of the page and N the number of times the user
 * pressed Cancel there. A request whose N is below the newest N of its
 * client was cancelled: routes skip its long computations (app.h). The
 * table keeps the newest N of the last 16 clients, under @lock.
 */
static void note_generation(struct hs_server *s, struct MHD_Connection *c,
			    struct pending *p)
{
	const char *h =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Heapscope-Generation");
	const char *colon = h ? strchr(h, ':') : NULL;
	size_t n = colon ? (size_t)(colon - h) : 0, i;
	char *end;

	if (!n || n >= sizeof(p->client) || strspn(h, "0123456789abcdef") != n)
		return;
	p->gen = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1)
		return;
	memcpy(p->client, h, n);
	p->client[n] = '\0';
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < 16 && strcmp(s->gens[i].client, p->client); i++)
		;
	if (i == 16) {
		i = s->next_gen++ % 16;
		memcpy(s->gens[i].client, p->client, n + 1);
		s->gens[i].gen = p->gen;
	} else if (p->gen > s->gens[i].gen) {
		s->gens[i].gen = p->gen;
	}
	pthread_mutex_unlock(&s->lock);
}

/* Whether the client of pending request @ctx has cancelled it since. */
static int superseded(void *ctx)
{
	struct pending *p = ctx;
	struct hs_server *s = p->s;
	int stale = 0;
	size_t i;

	if (!p->client[0])
		return 0;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < 16; i++)
		if (!strcmp(s->gens[i].client, p->client))
			stale = s->gens[i].gen > p->gen;
	pthread_mutex_unlock(&s->lock);
	return stale;
}

/* The worker's side: answer the request, then wake its connection. */
static void run_request(struct hs_job *j)
{
	struct pending *p = (struct pending *)((char *)j - offsetof(struct pending, job));
	struct hs_request req = {
	    .method = p->method,
	    .path = p->path,
	    .arg = copied_arg,
	    .ctx = p,
	    .cookie_token = p->cookie,
	    .body = p->body.len ? p->body.s : NULL,
	    .body_len = p->body.len,
	    .body_too_large = p->too_large,
	    .superseded = superseded,
	};
	struct hs_server *s = p->s;
	int trim;

	hs_app_handle(s->app, &req, &p->resp);
	trim = p->resp.trim; /* @p is the connection's once it resumes */
	pthread_mutex_lock(&s->lock);
	p->state = ANSWERED;
	pthread_mutex_unlock(&s->lock);
	MHD_resume_connection(p->c);
	if (trim)
		hs_app_trim();
}

/* The pool stops before the request started: answer that. */
static void drop_request(struct hs_job *j)
{
	struct pending *p = (struct pending *)((char *)j - offsetof(struct pending, job));
	struct hs_server *s = p->s;

	hs__reply_error(&p->resp, 503, "heapscope view is stopping");
	pthread_mutex_lock(&s->lock);
	p->state = ANSWERED;
	pthread_mutex_unlock(&s->lock);
	MHD_resume_connection(p->c);
}

/*
 * Copy what the worker needs of @c's request into @p, suspend @c and
 * queue @p. MHD_YES, or MHD_NO (out of memory: the connection closes).
 */
static enum MHD_Result submit(struct hs_server *s, struct MHD_Connection *c,
			      struct pending *p, const char *url, const char *method)
{
	char name[32];
	const char *cookie =
	    MHD_lookup_connection_value(c, MHD_COOKIE_KIND, cookie_name(s, name));

	p->method = hs_strdup(method);
	p->path = hs_strdup(url);
	p->cookie = cookie ? hs_strdup(cookie) : NULL;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, copy_arg, p);
	if (!p->method || !p->path || (cookie && !p->cookie) || p->copy_failed)
		return MHD_NO;
	p->s = s;
	p->c = c;
	note_generation(s, c, p);
	p->job.run = run_request;
	p->job.drop = drop_request;
	pthread_mutex_lock(&s->lock);
	p->state = QUEUED;
	pthread_mutex_unlock(&s->lock);
	/* suspended first, so that the worker's resume always finds it so */
	MHD_suspend_connection(c);
	hs_workers_submit(s->workers, &p->job);
	return MHD_YES;
}

static enum MHD_Result send_answer(struct hs_server *s, struct MHD_Connection *c,
				   struct hs_response *r)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;
	char cookie[128], name[32];

	if (r->owned) {
		mr = MHD_create_response_from_buffer_with_free_callback(
		    r->len, (void *)r->data, hs_free);
		if (mr)
			r->owned = 0; /* the response frees it now */
	} else {
		mr = MHD_create_response_from_buffer(r->len, (void *)r->data,
						     MHD_RESPMEM_PERSISTENT);
	}
	if (!mr)
		return MHD_NO;
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(mr, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(mr, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(mr, "X-Frame-Options", "DENY");
	MHD_add_response_header(
	    mr, "Content-Security-Policy",
	    "default-src 'self'; img-src 'self' data: blob:; "
	    "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
	if (r->set_cookie) {
		snprintf(cookie, sizeof(cookie),
			 "%s=%s; Path=/; HttpOnly; SameSite=Strict", cookie_name(s, name),
			 s->app->token);
		MHD_add_response_header(mr, MHD_HTTP_HEADER_SET_COOKIE, cookie);
	}
	ret = MHD_queue_response(c, r->status, mr);
	MHD_destroy_response(mr);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version,
			      const char *upload_data, size_t *upload_data_size,
			      void **con_cls)
{
	struct hs_server *s = cls;
	struct pending *p = *con_cls;
	struct hs_request req = {0};
	struct hs_response resp;
	enum pending_state state;
	char name[32];
	enum MHD_Result ret;

	(void)version;
	if (!p) {
		/* headers only so far: keep a place for the body */
		note_token(s, c);
		p = hs_calloc(1, sizeof(*p));
		if (!p)
			return MHD_NO;
		hs_buf_init(&p->body);
		*con_cls = p;
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (!p->too_large && p->body.len + *upload_data_size > HS_APP_MAX_BODY)
			p->too_large = 1;
		if (!p->too_large && hs_buf_add(&p->body, upload_data, *upload_data_size))
			p->too_large = 1;
		*upload_data_size = 0;
		return MHD_YES;
	}
	pthread_mutex_lock(&s->lock);
	state = p->state;
	pthread_mutex_unlock(&s->lock);
	if (state == ANSWERED) {
		ret = send_answer(s, c, &p->resp);
		hs_response_release(&p->resp);
		return ret;
	}
	HS_BUG_ON(state != RECEIVING);
	if (!strncmp(url, "/api/", 5))
		return submit(s, c, p, url, method);
	/* an embedded asset, or a refusal: nothing to compute */
	req.method = method;
	req.path = url;
	req.arg = get_arg;
	req.ctx = c;
	req.cookie_token =
	    MHD_lookup_connection_value(c, MHD_COOKIE_KIND, cookie_name(s, name));
	req.body = p->body.len ? p->body.s : NULL;
	req.body_len = p->body.len;
	req.body_too_large = p->too_large;
	hs_app_handle(s->app, &req, &resp);
	ret = send_answer(s, c, &resp);
	hs_response_release(&resp);
	return ret;
}

static void free_server(struct hs_server *s)
{
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	hs_free(s);
}

int hs_server_start(struct hs_server **out, struct hs_app *app,
		    const struct hs_server_opts *o, struct hs_diag *diag)
{
	const char *bind = o->bind ? o->bind : "127.0.0.1";
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
	struct sockaddr_in a4 = {.sin_family = AF_INET};
	const union MHD_DaemonInfo *info;
	struct sockaddr *sa;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
			 MHD_ALLOW_SUSPEND_RESUME;
	struct hs_server *s;
	int err;

	*out = NULL;
	if (o->port > 65535) {
		hs_diag_set(diag, 0, "port %u is out of range", o->port);
		return -EINVAL;
	}
	s = hs_calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->app = app;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	/* the URL names the loopback address when every address is bound */
	if (inet_pton(AF_INET, bind, &a4.sin_addr) == 1) {
		a4.sin_port = htons((uint16_t)o->port);
		sa = (struct sockaddr *)&a4;
		s->exposed = (ntohl(a4.sin_addr.s_addr) >> 24) != 127;
		snprintf(s->host, sizeof(s->host), "%s",
			 a4.sin_addr.s_addr == htonl(INADDR_ANY) ? "127.0.0.1" : bind);
	} else if (inet_pton(AF_INET6, bind, &a6.sin6_addr) == 1) {
		a6.sin6_port = htons((uint16_t)o->port);
		sa = (struct sockaddr *)&a6;
		flags |= MHD_USE_IPv6;
		s->exposed = !IN6_IS_ADDR_LOOPBACK(&a6.sin6_addr);
		snprintf(s->host, sizeof(s->host), "[%s]",
			 IN6_IS_ADDR_UNSPECIFIED(&a6.sin6_addr) ? "::1" : bind);
	} else {
		free_server(s);
		hs_diag_set(diag, 0, "'%s' is not a numeric IPv4 or IPv6 address", bind);
		return -EINVAL;
	}
	errno = 0;
	s->d = MHD_start_daemon(
	    flags, (uint16_t)o->port, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, sa,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
	    MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_NOTIFY_CONNECTION,
	    notify_connection, s, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
	    MHD_OPTION_END);
	if (!s->d) {
		err = errno ? -errno : -EADDRINUSE;
		hs_diag_set(diag, 0, "cannot listen on %s port %u: %s", bind, o->port,
			    strerror(-err));
		free_server(s);
		return err;
	}
	err = hs_workers_start(&s->workers, HS_HTTP_WORKERS);
	if (err) {
		MHD_stop_daemon(s->d);
		free_server(s);
		hs_diag_set(diag, 0, "cannot start the workers: %s", strerror(-err));
		return err;
	}
	err = pthread_create(&s->watch, NULL, watch, s);
	if (err) {
		hs_workers_stop(s->workers);
		MHD_stop_daemon(s->d);
		free_server(s);
		hs_diag_set(diag, 0, "cannot start a thread: %s", strerror(err));
		return -err;
	}
	s->watching = 1;
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : o->port;
	pthread_mutex_lock(&s->lock);
	snprintf(s->cookie, sizeof(s->cookie), "hs_token_%u", s->port);
	pthread_mutex_unlock(&s->lock);
	snprintf(s->bound, sizeof(s->bound), "%s", bind);
	*out = s;
	return 0;
}

unsigned hs_server_port(const struct hs_server *s)
{
	return s->port;
}

const char *hs_server_url(const struct hs_server *s, char *buf, size_t n)
{
	snprintf(buf, n, "http://%s:%u/?token=%s", s->host, s->port, s->app->token);
	return buf;
}

const char *hs_server_exposed(const struct hs_server *s)
{
	return s->exposed ? s->bound : NULL;
}

void hs_server_stop(struct hs_server *s)
{
	if (!s)
		return;
	if (s->watching) {
		pthread_mutex_lock(&s->lock);
		s->stopping = 1;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->watch, NULL);
	}
	/* every suspended connection is answered and resumed before the daemon goes */
	hs_workers_stop(s->workers);
	MHD_stop_daemon(s->d);
	free_server(s);
}
