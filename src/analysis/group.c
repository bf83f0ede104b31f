/*
 * group - GroupPats parsing and per-frame matching (see group.h).
 */
#include "analysis/group.h"
#include "common/alloc.h"
#include "model/frame_name.h"
#include "model/stack_source.h"
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#define MODULE_ENTRY "{%}!=>module $1"
#define MODULE_GROUP "{%}!->module $1"
#define PROCESS_NAME "^Process% {%}->$1"

void hs_groups_release(struct hs_groups *g)
{
	size_t i;

	for (i = 0; i < g->nr; i++) {
		hs_pattern_free(g->pat[i].pat);
		hs_free(g->pat[i].tmpl);
	}
	hs_free(g->pat);
	hs_buf_release(&g->cur);
	hs_buf_release(&g->next);
	g->pat = NULL;
	g->nr = g->alloc = 0;
}

struct parse_ctx {
	struct hs_groups *g;
	struct hs_diag *diag;
};

static int parse_entry(const char *e, size_t len, void *arg)
{
	struct parse_ctx *c = arg;
	struct hs_groups *g = c->g;
	struct hs_group_pat *gp;
	struct hs_diag sub = HS_DIAG_INIT(NULL);
	const char *arrow = memmem(e, len, "=>", 2);
	const char *t, *te = e + len;
	size_t plen = len;
	int err;

	if (g->nr >= HS_PATTERN_MAX_LIST) {
		hs_diag_set(c->diag, 0, "GroupPats: more than %d patterns",
			    HS_PATTERN_MAX_LIST);
		return -EINVAL;
	}
	if (HS_GROW(g->pat, g->nr + 1, g->alloc))
		return -ENOMEM;
	gp = &g->pat[g->nr];
	memset(gp, 0, sizeof(*gp));
	gp->entry = arrow != NULL;
	if (!arrow)
		arrow = memmem(e, len, "->", 2);
	if (arrow) {
		plen = (size_t)(arrow - e);
		for (t = arrow + 2; t < te && isspace((unsigned char)*t); t++)
			;
		while (te > t && isspace((unsigned char)te[-1]))
			te--;
		gp->tmpl = hs_strndup(t, (size_t)(te - t));
	} else {
		gp->tmpl = hs_strdup("$&");
	}
	if (!gp->tmpl)
		return -ENOMEM;
	if ((len == strlen(MODULE_ENTRY) && !memcmp(e, MODULE_ENTRY, len)) ||
	    (len == strlen(MODULE_GROUP) && !memcmp(e, MODULE_GROUP, len)))
		gp->fast = HS_GROUP_FAST_MODULE;
	else if (len == strlen(PROCESS_NAME) && !memcmp(e, PROCESS_NAME, len))
		gp->fast = HS_GROUP_FAST_PROCESS;
	if (gp->fast) {
		g->nr++; /* fast path: no regex */
		return 0;
	}
	err = hs_pattern_compile(e, plen, &gp->pat, &sub);
	if (err) {
		hs_free(gp->tmpl);
		if (sub.set)
			hs_diag_set(c->diag, 0, "GroupPats: %s", sub.msg);
		return err;
	}
	g->nr++;
	return 0;
}

int hs_groups_parse(struct hs_groups *g, const char *text, struct hs_diag *diag)
{
	struct parse_ctx c = {.g = g, .diag = diag};
	const char *p = text, *close;
	int err;

	if (!text)
		return 0;
	/* one leading "[description]" on the first line is a comment */
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '[') {
		close = p + strcspn(p, "]\n");
		if (*close == ']')
			p = close + 1;
	}
	err = hs_pattern_split(p, parse_entry, &c);
	if (err)
		hs_groups_release(g);
	return err;
}

int hs_group_expand(const char *tmpl, const char *subj, const struct hs_match *m,
		    struct hs_buf *out)
{
	struct hs_buf tmp = HS_BUF_INIT;
	const char *p;
	int err = 0;

	if (!strchr(tmpl, '$'))
		return hs_buf_adds(out, tmpl);
	if (!strcmp(tmpl, "$&"))
		return hs_buf_add(out, subj + m->start[0], m->end[0] - m->start[0]);
	/* first the numbered captures ... */
	for (p = tmpl; *p && !err; p++) {
		if (p[0] == '$' && p[1] >= '0' && p[1] <= '9') {
			unsigned n = (unsigned)(p[1] - '0');

			if (n < m->nr)
				err = hs_buf_add(&tmp, subj + m->start[n],
						 m->end[n] - m->start[n]);
			p++;
		} else {
			err = hs_buf_addc(&tmp, *p);
		}
	}
	/* ... then "$&" in what that gave */
	for (p = tmp.s; *p && !err; p++) {
		if (p[0] == '$' && p[1] == '&') {
			err =
			    hs_buf_add(out, subj + m->start[0], m->end[0] - m->start[0]);
			p++;
		} else {
			err = hs_buf_addc(out, *p);
		}
	}
	hs_buf_release(&tmp);
	return err;
}

/* What '%' takes: letters and digits (any non-ASCII byte counts as a letter), '.', '_',
 * '?' */
static int is_pct_char(unsigned char c)
{
	return isalnum(c) || c == '.' || c == '_' || c == '?' || c >= 0x80;
}

/*
 * "{%}!=>module $1" and "{%}!->module $1" without PCRE2: the module as
 * the viewer shows it (frame_name.h: it ends at a '!' that is not an
 * operator's, as "operator!=", and loses its directories), so that the
 * two presets agree on every name and a Linux file name stays whole:
 * "/lib/ld-linux-x86-64.so.2!f" is in "module ld-linux-x86-64.so.2", not
 * in "module 64.so.2" as '%' (which takes no '-' nor '+') would put it.
 */
static int module_entry(const char *s, struct hs_buf *name)
{
	size_t mlen;
	const char *m = hs_frame_name_short_module(s, strlen(s), &mlen);

	if (!m)
		return 0;
	if (hs_buf_adds(name, "module ") || hs_buf_add(name, m, mlen))
		return -ENOMEM;
	return 1;
}

/*
 * "^Process% {%}->$1" without PCRE2: a process frame "Process COMM (PID)"
 * as its whole COMM ("demo-heap", where '%' would stop at the '-'); a name
 * "Process% X" without " (PID)" as the pattern names it (the run of '%'
 * characters of X). 0 when it does not match.
 */
static int process_name(const char *s, struct hs_buf *name)
{
	const char *c = s + 7, *end, *open;

	if (strncasecmp(s, "Process", 7))
		return 0;
	while (is_pct_char((unsigned char)*c))
		c++;
	if (*c++ != ' ')
		return 0;
	end = c + strlen(c);
	open = end > c && end[-1] == ')' ? strstr(c, " (") : NULL;
	if (open) {
		const char *next;

		while ((next = strstr(open + 2, " (")))
			open = next;
		end = open;
	} else {
		for (end = c; is_pct_char((unsigned char)*end); end++)
			;
	}
	if (hs_buf_add(name, c, (size_t)(end - c)))
		return -ENOMEM;
	return 1;
}

static void swap_bufs(struct hs_buf *a, struct hs_buf *b)
{
	struct hs_buf t = *a;

	*a = *b;
	*b = t;
}

static int match_patterns(struct hs_groups *g, const char *full, struct hs_buf *name,
			  struct hs_diag *diag)
{
	const char *cur = full;
	int kind = HS_GROUP_NONE;
	size_t i;

	for (i = 0; i < g->nr; i++) {
		struct hs_group_pat *gp = &g->pat[i];
		struct hs_match m;
		int rc;

		if (gp->fast) {
			hs_buf_reset(&g->next);
			rc = gp->fast == HS_GROUP_FAST_MODULE
				 ? module_entry(cur, &g->next)
				 : process_name(cur, &g->next);
			if (rc < 0)
				return rc;
			if (!rc)
				continue;
			if (!g->next.len)
				return HS_GROUP_NONE; /* the "exclusion group" */
			hs_buf_reset(name);
			if (hs_buf_add(name, g->next.s, g->next.len))
				return -ENOMEM;
			if (gp->entry)
				return HS_GROUP_ENTRY;
			kind = HS_GROUP_PLAIN; /* a rename, as below */
			swap_bufs(&g->cur, &g->next);
			cur = g->cur.s;
			continue;
		}
		rc = hs_pattern_match(gp->pat, cur, strlen(cur), &m);
		if (rc < 0) {
			hs_pattern_match_error(diag, "GroupPats", gp->pat, rc, full);
			return rc == -ENOMEM ? rc : -EINVAL;
		}
		if (!rc)
			continue;
		hs_buf_reset(&g->next);
		if (hs_group_expand(gp->tmpl, cur, &m, &g->next))
			return -ENOMEM;
		if (!g->next.len)
			return HS_GROUP_NONE; /* the "exclusion group" */
		hs_buf_reset(name);
		if (hs_buf_add(name, g->next.s, g->next.len))
			return -ENOMEM;
		if (gp->entry)
			return HS_GROUP_ENTRY;
		/* a rename: later patterns see the new name */
		kind = HS_GROUP_PLAIN;
		swap_bufs(&g->cur, &g->next);
		cur = g->cur.s;
	}
	return kind;
}

int hs_groups_match(struct hs_groups *g, const char *full, struct hs_buf *name,
		    struct hs_diag *diag)
{
	size_t len = strlen(full);
	int kind;

	hs_buf_reset(name);
	kind = match_patterns(g, full, name, diag);
	if (kind < 0)
		return kind;
	if (kind == HS_GROUP_NONE) {
		hs_buf_reset(name);
		/* unresolved addresses of a module group by its short name */
		if (len >= 2 && !strcmp(full + len - 2, "!?")) {
			if (hs_buf_adds(name, hs_frame_display(full)))
				return -ENOMEM;
			kind = HS_GROUP_PLAIN;
		}
	}
	return kind;
}
