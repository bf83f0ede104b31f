/*
 * http - libmicrohttpd in front of the app (see server.h): collects a
 * request (path, arguments, token cookie, bounded body), lets
 * hs_app_handle() answer it and sends the answer with safe headers.
 */
#include "server/server.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/log.h"
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

struct hs_server {
	struct MHD_Daemon *d;
	struct hs_app *app;
	unsigned port;
	char host[INET6_ADDRSTRLEN + 2];	/* as it goes in a URL */
	char cookie[32];			/* "hs_token_PORT" */
	char bound[INET6_ADDRSTRLEN];		/* the address listened on */
	int exposed;				/* not a loopback address */
};

/* One request being received. */
struct pending {
	struct hs_buf body;
	int too_large;
};

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

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct pending *p = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (p) {
		hs_buf_release(&p->body);
		hs_free(p);
		*con_cls = NULL;
	}
}

static enum MHD_Result send_answer(struct hs_server *s, struct MHD_Connection *c,
				   struct hs_response *r)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;
	char cookie[128];

	if (r->owned) {
		mr = MHD_create_response_from_buffer_with_free_callback(
		    r->len, (void *)r->data, hs_free);
		if (mr)
			r->owned = 0;	/* the response frees it now */
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
	MHD_add_response_header(mr, "Content-Security-Policy",
				"default-src 'self'; img-src 'self' data: blob:; "
				"style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
	if (r->set_cookie) {
		snprintf(cookie, sizeof(cookie), "%s=%s; Path=/; HttpOnly; SameSite=Strict",
			 s->cookie, s->app->token);
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
	struct hs_request req = { 0 };
	struct hs_response resp;
	enum MHD_Result ret;

	(void)version;
	if (!p) {
		/* headers only so far: keep a place for the body */
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
	req.method = method;
	req.path = url;
	req.arg = get_arg;
	req.ctx = c;
	req.cookie_token = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, s->cookie);
	req.body = p->body.len ? p->body.s : NULL;
	req.body_len = p->body.len;
	req.body_too_large = p->too_large;
	hs_app_handle(s->app, &req, &resp);
	ret = send_answer(s, c, &resp);
	hs_response_release(&resp);
	return ret;
}

int hs_server_start(struct hs_server **out, struct hs_app *app,
		    const struct hs_server_opts *o, struct hs_diag *diag)
{
	const char *bind = o->bind ? o->bind : "127.0.0.1";
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;
	struct sockaddr *sa;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
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
		hs_free(s);
		hs_diag_set(diag, 0, "'%s' is not a numeric IPv4 or IPv6 address", bind);
		return -EINVAL;
	}
	errno = 0;
	s->d = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, handle, s,
				MHD_OPTION_SOCK_ADDR, sa,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
				MHD_OPTION_CONNECTION_LIMIT, 64u,
				MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
				MHD_OPTION_END);
	if (!s->d) {
		err = errno ? -errno : -EADDRINUSE;
		hs_diag_set(diag, 0, "cannot listen on %s port %u: %s", bind, o->port,
			    strerror(-err));
		hs_free(s);
		return err;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : o->port;
	snprintf(s->cookie, sizeof(s->cookie), "hs_token_%u", s->port);
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
	MHD_stop_daemon(s->d);
	hs_free(s);
}
