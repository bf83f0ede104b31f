#ifndef HS_SERVER_SERVER_H
#define HS_SERVER_SERVER_H
#include <stddef.h>
#include "common/diag.h"
#include "server/app.h"

/*
 * server - the HTTP side of `heapscope view`: libmicrohttpd, listening on
 * 127.0.0.1 unless told otherwise, answering every request through
 * hs_app_handle() (app.h). Its one thread receives and sends; the API's
 * requests are answered by HS_HTTP_WORKERS worker threads (workers.h),
 * so that a slow request (Stats on a big trace, a first source switch)
 * never delays a fast one: one browser has at most 6 requests in flight
 * to a host, so with 8 workers a second client still finds one free.
 *
 * Limits: request headers and URL within 64 KiB (libmicrohttpd answers
 * 431 or 414 beyond), POST bodies within HS_APP_MAX_BODY (413), at most
 * 64 connections, 30 s idle timeout. A connection none of whose requests
 * has carried the token yet (a guest) has HS_HTTP_GUEST_DEADLINE seconds
 * in all, however slowly it sends; there are at most HS_HTTP_GUESTS
 * guests, HS_HTTP_GUESTS_PER_CLIENT from one address, the oldest closed
 * for a newcomer: the other slots are the user's. The token cookie is
 * named after the port, so that two servers on one host do not share it.
 *
 * Ownership: the server borrows @app, which must outlive it.
 */

#define HS_HTTP_GUEST_DEADLINE 10 /* seconds */
#define HS_HTTP_GUESTS 40
#define HS_HTTP_GUESTS_PER_CLIENT 24
#define HS_HTTP_WORKERS 8

struct hs_server_opts {
	const char *bind; /* numeric IPv4 or IPv6 address; NULL = 127.0.0.1 */
	unsigned port;	  /* 0 = any free port */
};

struct hs_server;

/*
 * Start serving @app. Returns 0 and the server in *@out, or -EINVAL (a bad
 * address; message in @diag) or another negative errno (the port is taken,
 * ...; message in @diag).
 */
int hs_server_start(struct hs_server **out, struct hs_app *app,
		    const struct hs_server_opts *o, struct hs_diag *diag);
/* The port it listens on. */
unsigned hs_server_port(const struct hs_server *s);
/* "http://HOST:PORT/?token=TOKEN" into @buf (size @n). Returns @buf. */
const char *hs_server_url(const struct hs_server *s, char *buf, size_t n);
/*
 * The address listened on when it is not a loopback one (0.0.0.0, ::,
 * a network address: the GUI is reachable from the network), else NULL.
 */
const char *hs_server_exposed(const struct hs_server *s);
/* Stop, closing every connection, and free @s. NULL-safe. */
void hs_server_stop(struct hs_server *s);
#endif
