/*
 * pattern - simplified patterns compiled to PCRE2 (see pattern.h).
 *
 * PCRE2 runs in UTF mode with Unicode properties, so '%' (\w, \d) and
 * caseless matching treat non-ASCII letters as letters, as .NET does.
 * Frame names are not guaranteed to be valid UTF-8, so each pattern is
 * also compiled in byte mode, which matches names that are not UTF-8 (as
 * .NET would after decoding them, '*' then crosses any byte).
 * Every PCRE2 allocation goes through hs_malloc().
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analysis/pattern.h"
#include "common/alloc.h"
#include <ctype.h>
#include <errno.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Bounds on the work PCRE2 may do (untrusted patterns). */
#define MAX_REGEX_LEN (16 * HS_PATTERN_MAX_LEN) /* '%' grows 10 times */
#define MAX_NEST 64				/* nested parentheses */
#define MATCH_LIMIT 200000			/* backtracking steps per match */
#define DEPTH_LIMIT 10000			/* interpreter backtracking depth */
#define HEAP_LIMIT_KB 8192			/* interpreter heap per match */

struct hs_pattern {
	char *text;	     /* as written, NUL-terminated */
	pcre2_code *code[2]; /* UTF mode; byte mode (NULL if it failed) */
	int jit;	     /* code[0] was compiled by the JIT */
	pcre2_match_data *md[2];
	pcre2_match_context *mctx;
};

static void *pcre_alloc(PCRE2_SIZE size, void *data)
{
	(void)data;
	return hs_malloc(size);
}

static void pcre_free(void *p, void *data)
{
	(void)data;
	hs_free(p);
}

static int add_mapped(struct hs_buf *out, const char *s, size_t src, size_t **map,
		      size_t *alloc)
{
	size_t n = strlen(s), i, at = out->len;

	if (hs_buf_add(out, s, n))
		return -ENOMEM;
	if (!map)
		return 0;
	if (HS_GROW(*map, out->len, *alloc))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		(*map)[at + i] = src;
	return 0;
}

int hs_pattern_translate(const char *pat, size_t len, struct hs_buf *out, size_t **src_of)
{
	size_t *map = NULL, alloc = 0, i;
	size_t **m = src_of ? &map : NULL;
	int err = 0;

	if (len && pat[0] == '@') {
		for (i = 1; i < len && !err; i++) {
			char one[2] = {pat[i], 0};

			err = add_mapped(out, one, i, m, &alloc);
		}
		goto done;
	}
	for (i = 0; i < len && !err; i++) {
		unsigned char c = (unsigned char)pat[i];
		char lit[3] = {'\\', (char)c, 0};
		const char *t = lit;

		switch (c) {
		case '*':
			t = ".*";
			break;
		case '%':
			t = "[.\\w\\d?]*";
			break;
		case '^':
			t = "^";
			break;
		case '|':
			t = "|";
			break;
		case '{':
			t = "(";
			break;
		case '}':
			t = ")";
			break;
		default:
			/* letters, digits and non-ASCII bytes are literal as they are */
			if (c >= 0x80 || isalnum(c))
				t = lit + 1;
			break;
		}
		err = add_mapped(out, t, i, m, &alloc);
	}
done:
	if (err) {
		hs_free(map);
		return err;
	}
	if (src_of)
		*src_of = map;
	return 0;
}

void hs_pattern_free(struct hs_pattern *p)
{
	if (!p)
		return;
	pcre2_match_data_free(p->md[0]);
	pcre2_match_data_free(p->md[1]);
	pcre2_match_context_free(p->mctx);
	pcre2_code_free(p->code[0]);
	pcre2_code_free(p->code[1]);
	hs_free(p->text);
	hs_free(p);
}

const char *hs_pattern_text(const struct hs_pattern *p)
{
	return p->text;
}

/* Short form of a pattern or name for messages. */
static int clip(const char *s)
{
	size_t n = strlen(s);

	return n > 120 ? 120 : (int)n;
}

static int compile_regex(struct hs_pattern *p, const char *regex, size_t rlen,
			 const size_t *src_of, struct hs_diag *diag)
{
	pcre2_general_context *gctx;
	pcre2_compile_context *cctx;
	uint32_t opts = PCRE2_CASELESS | PCRE2_UTF | PCRE2_UCP;
	PCRE2_SIZE off = 0;
	int code = 0, err = -ENOMEM;

	gctx = pcre2_general_context_create(pcre_alloc, pcre_free, NULL);
	if (!gctx)
		return -ENOMEM;
	cctx = pcre2_compile_context_create(gctx);
	if (!cctx)
		goto out;
	pcre2_set_max_pattern_length(cctx, MAX_REGEX_LEN);
	pcre2_set_parens_nest_limit(cctx, MAX_NEST);
	p->code[0] = pcre2_compile((PCRE2_SPTR)regex, rlen, opts, &code, &off, cctx);
	if (!p->code[0]) {
		PCRE2_UCHAR msg[160];
		size_t at;

		if (code == PCRE2_ERROR_HEAP_FAILED)
			goto out;
		pcre2_get_error_message(code, msg, sizeof(msg));
		at = !src_of ? off : off < rlen ? src_of[off] : strlen(p->text);
		hs_diag_set(diag, 0, "bad pattern '%.*s': %s at offset %zu",
			    clip(p->text), p->text, (const char *)msg, at);
		err = -EINVAL;
		goto out;
	}
	p->code[1] =
	    pcre2_compile((PCRE2_SPTR)regex, rlen, PCRE2_CASELESS, &code, &off, cctx);
	if (!p->code[1] && code == PCRE2_ERROR_HEAP_FAILED)
		goto out;
	/* JIT is an optimisation: without it the interpreter does the work */
	p->jit = pcre2_jit_compile(p->code[0], PCRE2_JIT_COMPLETE) == 0;
	p->md[0] = pcre2_match_data_create_from_pattern(p->code[0], gctx);
	if (p->code[1]) {
		pcre2_jit_compile(p->code[1], PCRE2_JIT_COMPLETE);
		p->md[1] = pcre2_match_data_create_from_pattern(p->code[1], gctx);
		if (!p->md[1])
			goto out;
	}
	p->mctx = pcre2_match_context_create(gctx);
	if (!p->md[0] || !p->mctx)
		goto out;
	pcre2_set_match_limit(p->mctx, MATCH_LIMIT);
	pcre2_set_depth_limit(p->mctx, DEPTH_LIMIT);
	pcre2_set_heap_limit(p->mctx, HEAP_LIMIT_KB);
	err = 0;
out:
	pcre2_compile_context_free(cctx);
	pcre2_general_context_free(gctx);
	return err;
}

/* A simplified pattern (@raw 0) or a regular expression as written. */
static int compile(const char *pat, size_t len, int raw, struct hs_pattern **out,
		   struct hs_diag *diag)
{
	struct hs_buf regex = HS_BUF_INIT;
	struct hs_pattern *p;
	size_t *src_of = NULL;
	int err;

	*out = NULL;
	p = hs_calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->text = hs_strndup(pat, len);
	if (!p->text) {
		hs_free(p);
		return -ENOMEM;
	}
	if (len > HS_PATTERN_MAX_LEN || memchr(pat, 0, len)) {
		hs_diag_set(diag, 0, "bad pattern '%.*s...': longer than %d bytes",
			    clip(p->text), p->text, HS_PATTERN_MAX_LEN);
		hs_pattern_free(p);
		return -EINVAL;
	}
	err = raw ? hs_buf_add(&regex, pat, len)
		  : hs_pattern_translate(pat, len, &regex, &src_of);
	if (!err)
		err = compile_regex(p, regex.s, regex.len, src_of, diag);
	hs_free(src_of);
	hs_buf_release(&regex);
	if (err) {
		hs_pattern_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int hs_pattern_compile(const char *pat, size_t len, struct hs_pattern **out,
		       struct hs_diag *diag)
{
	return compile(pat, len, 0, out, diag);
}

int hs_pattern_compile_regex(const char *re, size_t len, struct hs_pattern **out,
			     struct hs_diag *diag)
{
	return compile(re, len, 1, out, diag);
}

/* Are the @len bytes at @s all ASCII (and so valid UTF-8)? */
static int all_ascii(const char *s, size_t len)
{
	uint64_t w, any = 0;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		any |= w;
	}
	for (; i < len; i++)
		any |= (unsigned char)s[i];
	return !(any & UINT64_C(0x8080808080808080));
}

/*
 * hs_pattern_match() knowing whether @s is @ascii: ASCII is valid UTF-8,
 * so PCRE2 need not check it again for every pattern of a list (its check
 * costs more than a JIT-compiled match of a frame name), and the JIT's
 * code runs directly (pcre2_match() would call it after its checks). Any
 * other text goes through pcre2_match() and its UTF check as before.
 */
static int match_known(struct hs_pattern *p, const char *s, size_t len, int ascii,
		       struct hs_match *m)
{
	PCRE2_SIZE *ov;
	int rc, mode = 0;
	unsigned i;

	if (ascii && p->jit)
		rc = pcre2_jit_match(p->code[0], (PCRE2_SPTR)s, len, 0, 0, p->md[0],
				     p->mctx);
	else
		rc = pcre2_match(p->code[0], (PCRE2_SPTR)s, len, 0,
				 ascii ? PCRE2_NO_UTF_CHECK : 0, p->md[0], p->mctx);
	if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
		/* not UTF-8: match the bytes */
		if (!p->code[1])
			return 0;
		mode = 1;
		rc = pcre2_match(p->code[1], (PCRE2_SPTR)s, len, 0, 0, p->md[1], p->mctx);
	}
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc == PCRE2_ERROR_NOMEMORY)
		return -ENOMEM;
	if (rc < 0)
		return -ERANGE;
	if (!m)
		return 1;
	ov = pcre2_get_ovector_pointer(p->md[mode]);
	m->nr = pcre2_get_ovector_count(p->md[mode]);
	if (m->nr > HS_PATTERN_MAX_GROUPS)
		m->nr = HS_PATTERN_MAX_GROUPS;
	for (i = 0; i < m->nr; i++) {
		if (ov[2 * i] == PCRE2_UNSET || (int)i >= rc) {
			m->start[i] = m->end[i] = 0;
		} else {
			m->start[i] = ov[2 * i];
			m->end[i] = ov[2 * i + 1];
		}
	}
	return 1;
}

int hs_pattern_match(struct hs_pattern *p, const char *s, size_t len, struct hs_match *m)
{
	return match_known(p, s, len, all_ascii(s, len), m);
}

void hs_pattern_match_error(struct hs_diag *diag, const char *what,
			    const struct hs_pattern *p, int err, const char *s)
{
	if (err == -ENOMEM)
		return;
	hs_diag_set(diag, 0,
		    "%s: pattern '%.*s' is too complex (match limit "
		    "reached on '%.*s')",
		    what, clip(p->text), p->text, clip(s), s);
}

int hs_pattern_split(const char *text,
		     int (*fn)(const char *entry, size_t len, void *arg), void *arg)
{
	const char *p = text;

	if (!text)
		return 0;
	for (;;) {
		const char *end = strchr(p, ';');
		const char *e = end ? end : p + strlen(p);
		const char *b = p;
		int rc;

		while (b < e && isspace((unsigned char)*b))
			b++;
		while (e > b && isspace((unsigned char)e[-1]))
			e--;
		if (e > b) {
			rc = fn(b, (size_t)(e - b), arg);
			if (rc)
				return rc;
		}
		if (!end)
			return 0;
		p = end + 1;
	}
}

struct parse_ctx {
	struct hs_patlist *l;
	size_t alloc;
	const char *what;
	struct hs_diag *diag;
};

static int parse_one(const char *entry, size_t len, void *arg)
{
	struct parse_ctx *c = arg;
	struct hs_diag sub = HS_DIAG_INIT(NULL);
	struct hs_pattern *p;
	int err;

	if (c->l->nr >= HS_PATTERN_MAX_LIST) {
		hs_diag_set(c->diag, 0, "%s: more than %d patterns", c->what,
			    HS_PATTERN_MAX_LIST);
		return -EINVAL;
	}
	if (HS_GROW(c->l->pat, c->l->nr + 1, c->alloc))
		return -ENOMEM;
	err = hs_pattern_compile(entry, len, &p, &sub);
	if (err) {
		if (sub.set)
			hs_diag_set(c->diag, 0, "%s: %s", c->what, sub.msg);
		return err;
	}
	c->l->pat[c->l->nr++] = p;
	return 0;
}

int hs_patlist_parse(struct hs_patlist *l, const char *text, const char *what,
		     struct hs_diag *diag)
{
	struct parse_ctx c = {.l = l, .what = what, .diag = diag};
	int err = hs_pattern_split(text, parse_one, &c);

	if (err)
		hs_patlist_release(l);
	return err;
}

void hs_patlist_release(struct hs_patlist *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		hs_pattern_free(l->pat[i]);
	hs_free(l->pat);
	l->pat = NULL;
	l->nr = 0;
}

int hs_patlist_match_any(const struct hs_patlist *l, const char *s, size_t len,
			 size_t *which)
{
	size_t i;
	int ascii = l->nr ? all_ascii(s, len) : 0;

	for (i = 0; i < l->nr; i++) {
		int rc = match_known(l->pat[i], s, len, ascii, NULL);

		if (rc) {
			*which = i;
			return rc;
		}
	}
	return 0;
}

int hs_patlist_match_set(const struct hs_patlist *l, const char *s, size_t len,
			 uint64_t *bits, size_t *bad)
{
	size_t i;
	int ascii = l->nr ? all_ascii(s, len) : 0;

	for (i = 0; i < l->nr; i++) {
		int rc = match_known(l->pat[i], s, len, ascii, NULL);

		if (rc < 0) {
			*bad = i;
			return rc;
		}
		if (rc)
			bits[i / 64] |= (uint64_t)1 << (i % 64);
	}
	return 0;
}

const char *hs_patterns_extend(const char *given, const char *base, char **joined)
{
	const char *add = given;
	size_t n;

	*joined = NULL;
	if (!given)
		return NULL;
	while (isspace((unsigned char)*add))
		add++;
	if (*add != '+')
		return given;
	add++;
	if (!base || !base[strspn(base, " \t;")])
		return add;
	n = strlen(base) + 1 + strlen(add) + 1;
	*joined = hs_malloc(n);
	if (!*joined)
		return NULL;
	snprintf(*joined, n, "%s;%s", base, add);
	return *joined;
}
