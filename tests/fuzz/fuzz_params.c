/*
 * fuzz_params - libFuzzer target for the HTTP API's query parsers
 * (server/params.c): the report-style GET arguments
 * (hs_api_query_from_args()) and the JSON query of a POST body
 * (hs_api_query_parse()), then the parsed query run over a small stack
 * source as the server runs it (Drill Into and Flatten steps, the filter's
 * patterns, the view and its focus). A request either gives a view or is
 * refused with a message; nothing may crash, leak or hang.
 *
 * Each input is read both ways: as a URL query string ("view=calltree&
 * group=...", '&' between arguments, '+' and %XX decoded as libmicrohttpd
 * decodes them, the first of a repeated name wins), and as a POST body.
 * Seeds: tests/fuzz/corpus/fuzz_params/.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/query.h"
#include "fuzz_util.h"
#include "io/io.h"
#include "server/params.h"

#define MAX_ARGS 32

struct args {
	char *key[MAX_ARGS], *value[MAX_ARGS];
	size_t nr;
	char *text;	/* owned: keys and values point into it */
};

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode @s in place ('+' is a space, %XX a byte); stops at a NUL byte made. */
static void url_decode(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (*s == '+') {
			*out++ = ' ';
		} else if (*s == '%' && hex_digit(s[1]) >= 0 && hex_digit(s[2]) >= 0) {
			*out++ = (char)(hex_digit(s[1]) << 4 | hex_digit(s[2]));
			s += 2;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

static void args_parse(struct args *a, const uint8_t *data, size_t size)
{
	char *p, *amp, *eq;

	a->nr = 0;
	a->text = malloc(size + 1);
	if (!a->text)
		abort();
	memcpy(a->text, data, size);
	a->text[size] = '\0';
	for (p = a->text; p && *p && a->nr < MAX_ARGS; p = amp) {
		amp = strchr(p, '&');
		if (amp)
			*amp++ = '\0';
		eq = strchr(p, '=');
		if (eq)
			*eq++ = '\0';
		url_decode(p);
		if (eq)
			url_decode(eq);
		a->key[a->nr] = p;
		a->value[a->nr++] = eq ? eq : p + strlen(p);
	}
}

static const char *arg(void *ctx, const char *key)
{
	const struct args *a = ctx;
	size_t i;

	for (i = 0; i < a->nr; i++)
		if (!strcmp(a->key[i], key))
			return a->value[i];
	return NULL;
}

/* The saved view state of trace 0, as a .perfView.xml would give it. */
static const struct hs_source_defaults *defaults(void *ctx, size_t trace, const char *source)
{
	static char group[] = "{%}!->module $1", fold_pct[] = "1", start[] = "0.5";
	static const struct hs_source_defaults d = {
		.group = group, .fold_pct = fold_pct, .start = start,
	};

	(void)ctx;
	(void)source;
	return trace == 0 ? &d : NULL;
}

/* The stack source queries run over: a few stacks of two modules. */
static const struct hs_stack_source *source(void)
{
	static const char text[] =
		"ld.so!_start;app!main;app!parse;libc.so.6!malloc 5\n"
		"ld.so!_start;app!main;app!parse;app!parse;libc.so.6!free 3\n"
		"ld.so!_start;app!main;app!Foo::operator!=;libc.so.6!memcmp 2\n"
		"ld.so!_start;app!main 1\n";
	static struct hs_stack_source src;
	static int loaded;
	struct hs_diag diag = HS_DIAG_INIT("fuzz");

	if (!loaded) {
		FILE *f = fuzz_open_mem((const uint8_t *)text, sizeof(text) - 1);

		hs_source_init(&src);
		if (hs_import_folded(f, &src, &diag))
			abort();
		fclose(f);
		loaded = 1;
	}
	return &src;
}

/* Parse @q as the server does, then run it as a view of trace 0. */
static void run_query(const json_t *q)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_api_query aq;
	struct hs_query_result r;
	struct hs_query query;

	if (hs_api_query_parse(q, 2, 0, &aq, &diag))
		return;
	if (aq.src.kind == HS_API_SRC_TRACE && aq.src.trace == 0) {
		query = (struct hs_query){
			.steps = aq.src.steps, .nr_steps = aq.src.nr_steps,
			.params = aq.params.vp, .view = aq.view,
		};
		if (!hs_query_run(source(), &query, &r, &diag)) {
			json_decref(hs_view_json(&r.view));
			hs_query_result_release(&r);
		}
	}
	hs_api_query_release(&aq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct args a;
	json_t *q;

	/* GET: the URL's arguments */
	args_parse(&a, data, size);
	q = hs_api_query_from_args(arg, &a, defaults, NULL, &diag);
	if (q) {
		run_query(q);
		json_decref(q);
	}
	free(a.text);
	/* POST: the body */
	q = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (q) {
		run_query(q);
		json_decref(q);
	}
	return 0;
}
