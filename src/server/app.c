/*
 * app - traces, token and the first look at a request: the token, then
 * an embedded asset or the API (see app.h).
 */
#include "server/app.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "server/assets.h"
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int hs_app_init(struct hs_app *a, const char *token)
{
	unsigned char raw[HS_APP_TOKEN_LEN / 2];
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
	hs_cache_init(&a->cache);
	pthread_mutex_init(&a->lock, NULL);
	return 0;
}

void hs_app_release(struct hs_app *a)
{
	size_t i, k;

	hs_cache_release(&a->cache);
	for (i = 0; i < a->nr_traces; i++) {
		for (k = 0; k < a->traces[i].nr_sources; k++) {
			hs_free(a->traces[i].sources[k].name);
			hs_source_release(&a->traces[i].sources[k].src);
		}
		hs_free(a->traces[i].sources);
		hs_free(a->traces[i].name);
	}
	hs_free(a->traces);
	hs_free(a->defaults);
	pthread_mutex_destroy(&a->lock);
	memset(a, 0, sizeof(*a));
}

/* The name of an imported file's one source. */
static const char *first_source_name(const char *format, const struct hs_stack_source *src)
{
	if (!strcmp(format, "heapscope"))
		return "alloc";
	return src->kind == HS_METRIC_TIME ? "cpu" : "samples";
}

int hs_app_add_source(struct hs_app *a, size_t trace, const char *name,
		      struct hs_stack_source *src)
{
	struct hs_app_trace *t = trace < a->nr_traces ? &a->traces[trace] : NULL;
	struct hs_app_source *ns;
	int err = -EINVAL;

	if (!t)
		goto fail;
	err = -EEXIST;
	if (hs_app_source(a, trace, name) && *name)
		goto fail;
	err = -ENOMEM;
	ns = hs_realloc(t->sources, (t->nr_sources + 1) * sizeof(*ns));
	if (!ns)
		goto fail;
	t->sources = ns;
	ns[t->nr_sources].name = hs_strdup(name);
	if (!ns[t->nr_sources].name)
		goto fail;
	ns[t->nr_sources].src = *src;
	hs_source_init(src);
	t->nr_sources++;
	a->defaults[trace] = &t->sources[0].src.defaults;
	return 0;
fail:
	hs_source_release(src);
	return err;
}

int hs_app_add_trace(struct hs_app *a, const char *name, const char *format,
		     struct hs_stack_source *src)
{
	const struct hs_source_defaults **d;
	struct hs_app_trace *t;
	int err;

	d = hs_realloc(a->defaults, (a->nr_traces + 1) * sizeof(*d));
	if (d)
		a->defaults = d;
	if (!d || HS_GROW(a->traces, a->nr_traces + 1, a->alloc_traces))
		goto nomem;
	t = &a->traces[a->nr_traces];
	memset(t, 0, sizeof(*t));
	t->name = hs_strdup(name);
	if (!t->name)
		goto nomem;
	t->format = format;
	a->nr_traces++;
	err = hs_app_add_source(a, a->nr_traces - 1, first_source_name(format, src), src);
	if (err) {
		a->nr_traces--;
		hs_free(t->name);
	}
	return err;
nomem:
	hs_source_release(src);
	return -ENOMEM;
}

const struct hs_app_source *hs_app_source(const struct hs_app *a, size_t trace,
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
	o = json_pack("{s:s}", "error", msg);
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

void hs_app_handle(struct hs_app *a, const struct hs_request *req, struct hs_response *resp)
{
	const char *arg_token = req->arg ? req->arg(req->ctx, "token") : NULL;

	memset(resp, 0, sizeof(*resp));
	if (arg_token ? !hs_app_token_ok(a, arg_token) : !hs_app_token_ok(a, req->cookie_token)) {
		hs__reply_error(resp, 403, "forbidden: open the URL heapscope printed "
				"(with its token)");
		return;
	}
	if (!strncmp(req->path, "/api/", 5)) {
		pthread_mutex_lock(&a->lock);
		hs_cache_begin(&a->cache);
		hs__routes_handle(a, req, resp);
		pthread_mutex_unlock(&a->lock);
	} else {
		serve_asset(req, resp);
	}
	resp->set_cookie = arg_token != NULL && resp->status < 400;
}
