/*
 * ungroup - exact Ungroup of a template's group or an entry group (see
 * ungroup.h).
 */
#include "analysis/ungroup.h"
#include "analysis/group.h"
#include "common/alloc.h"
#include "common/strtab.h"
#include "model/frame_name.h"
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#define ROW_NAMES_MAX ((size_t)1 << 30) /* bytes of the rows' names */
#define MAX_ENTRIES 32			/* entries a candidate may add */
#define CHUNK_BYTES 960 /* a regular expression's, under HS_PATTERN_MAX_LEN */

/* What GroupPats make of the source's frames: each frame's row. */
struct rows {
	uint8_t *kind; /* frame -> enum hs_group_kind */
	uint32_t *row; /* frame -> its row's name in @names */
	struct hs_strtab names;
};

struct ungroup_ctx {
	const struct hs_stack_source *src;
	const char *module; /* Ungroup Module's, or NULL for a row's Ungroup */
	const char *desc;   /* the leading "[description]" of the GroupPats */
	size_t desc_len;
	const char *rest; /* the entries after it, without blanks at the end */
	size_t rest_len;
	struct rows old;
	uint8_t *target; /* frame -> it is in the row to ungroup */
	size_t nr_frames, nr_target;
	struct hs_groups groups;
	struct hs_buf name, shown, text;
	struct hs_diag *diag;
};

/*
 * The row @full's frame lands in with @g: a plain group's name, an entry
 * group's "GROUP <<frame>>", else the frame's short name; into @out, the
 * kind returned (a negative errno on error).
 */
static int row_of(struct ungroup_ctx *c, struct hs_groups *g, const char *full,
		  struct hs_buf *out)
{
	int kind = hs_groups_match(g, full, &c->name, c->diag);

	hs_buf_reset(out);
	if (kind < 0)
		return kind;
	if (kind == HS_GROUP_NONE)
		return hs_buf_adds(out, hs_frame_display(full)) ? -ENOMEM : kind;
	if (hs_buf_add(out, c->name.s, c->name.len))
		return -ENOMEM;
	if (kind == HS_GROUP_ENTRY && hs_buf_addf(out, " <<%s>>", hs_frame_display(full)))
		return -ENOMEM;
	return kind;
}

/* Split @text into its leading "[description]" and its entries, as group.c reads it. */
static void split_desc(struct ungroup_ctx *c, const char *text)
{
	const char *p = text ? text : "", *close;

	while (isspace((unsigned char)*p))
		p++;
	c->desc = p;
	c->desc_len = 0;
	if (*p == '[') {
		close = p + strcspn(p, "]\n");
		if (*close == ']') {
			c->desc_len = (size_t)(close + 1 - p);
			p = close + 1;
		}
	}
	while (isspace((unsigned char)*p))
		p++;
	c->rest = p;
	c->rest_len = strlen(p);
	while (c->rest_len > 0 && isspace((unsigned char)p[c->rest_len - 1]))
		c->rest_len--;
}

/*
 * Whether frame @full, in a group of kind @kind as row @row, is one to
 * take out: in row @name, or (Ungroup Module) of c->module.
 */
static int is_target(const struct ungroup_ctx *c, const char *full, int kind,
		     const char *row, const char *name)
{
	const char *m;
	size_t mlen;

	if (kind == HS_GROUP_NONE)
		return 0;
	if (!c->module)
		return !strcmp(row, name);
	m = hs_frame_name_short_module(full, strlen(full), &mlen);
	return m && mlen == strlen(c->module) && !memcmp(m, c->module, mlen);
}

/* Each frame's row with the GroupPats as given, and which are to be taken out. */
static int old_rows(struct ungroup_ctx *c, const char *group_text, const char *name)
{
	struct hs_buf row = HS_BUF_INIT;
	size_t i;
	int kind, err;

	err = hs_groups_parse(&c->groups, group_text, c->diag);
	if (err)
		return err;
	c->old.kind = hs_calloc(c->nr_frames + 1, 1);
	c->old.row = hs_calloc(c->nr_frames + 1, sizeof(uint32_t));
	c->target = hs_calloc(c->nr_frames + 1, 1);
	if (!c->old.kind || !c->old.row || !c->target)
		return -ENOMEM;
	for (i = 0; i < c->nr_frames; i++) {
		const char *full = hs_source_frame_name(c->src, (uint32_t)i);

		kind = row_of(c, &c->groups, full, &row);
		if (kind < 0) {
			err = kind;
			break;
		}
		err = hs_strtab_intern(&c->old.names, row.s, row.len, &c->old.row[i]);
		if (err)
			break;
		c->old.kind[i] = (uint8_t)kind;
		c->target[i] = (uint8_t)is_target(c, full, kind, row.s, name);
		c->nr_target += c->target[i];
	}
	hs_buf_release(&row);
	hs_groups_release(&c->groups);
	return err;
}

/*
 * Append @n bytes at @s to the regular expression in @out, each
 * character matching itself: ';' (which ends an entry), blanks (which an
 * entry loses at its ends) and control characters as hex escapes; the
 * regular expressions' special characters, and '-', '=' and '>' (so that
 * no "->" or "=>" is read as an arrow), after a backslash; the rest
 * (letters, digits, '!', ':', '/', UTF-8) as they are.
 */
static int add_escaped(struct hs_buf *out, const char *s, size_t n)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == ';' || isspace(ch) || iscntrl(ch))
			err = hs_buf_addf(out, "\\x%02x", ch);
		else if (ch < 0x80 && strchr("\\^$.|?*+()[]{}#-=>", ch))
			err = hs_buf_addc(out, '\\') || hs_buf_addc(out, (char)ch);
		else
			err = hs_buf_addc(out, (char)ch);
	}
	return err ? -ENOMEM : 0;
}

static int add_plain(struct hs_buf *out, const char *s, size_t n)
{
	size_t i;
	int plain =
	    n > 0 && !isspace((unsigned char)s[0]) && !isspace((unsigned char)s[n - 1]);

	for (i = 0; plain && i < n; i++)
		if (strchr("*%^|{}@;", s[i]) ||
		    (i + 1 < n && s[i + 1] == '>' && (s[i] == '-' || s[i] == '=')))
			plain = 0;
	if (plain)
		return hs_buf_add(out, s, n) ? -ENOMEM : 0;
	return hs_buf_addc(out, '@') ? -ENOMEM : add_escaped(out, s, n);
}

/*
 * Append to @out a pattern that matches the @n bytes at @s literally:
 * anywhere in a name (@anchored 0), as the text itself when it has no
 * special character, no arrow and no blank at an end, else as a raw
 * regular expression; or (@anchored 1) only at the start of a name or
 * after a '/' (where a module's directory ends), always as a regular
 * expression.
 */
static int add_literal(struct hs_buf *out, const char *s, size_t n, int anchored)
{
	if (anchored)
		return hs_buf_adds(out, "@(?:^|/)") ? -ENOMEM : add_escaped(out, s, n);
	return add_plain(out, s, n);
}

/*
 * Whether the entries in @cand, put first, change exactly the target
 * frames' rows: 1 yes, 0 no, or a negative errno.
 */
static int exact(struct ungroup_ctx *c, const char *cand)
{
	struct hs_diag quiet = HS_DIAG_INIT(NULL);
	struct hs_diag *diag = c->diag;
	struct hs_buf row = HS_BUF_INIT;
	size_t i;
	int kind, ok = 1, err;

	hs_buf_reset(&c->text);
	if (hs_buf_add(&c->text, c->desc, c->desc_len) ||
	    hs_buf_adds(&c->text, c->desc_len ? " " : "") ||
	    hs_buf_adds(&c->text, cand) ||
	    hs_buf_adds(&c->text, c->rest_len ? ";" : "") ||
	    hs_buf_add(&c->text, c->rest, c->rest_len))
		return -ENOMEM;
	/* a candidate that does not parse (a name too long) is no answer */
	err = hs_groups_parse(&c->groups, c->text.s, &quiet);
	if (err)
		return err == -ENOMEM ? err : 0;
	c->diag = &quiet;
	for (i = 0; ok && i < c->nr_frames; i++) {
		kind = row_of(c, &c->groups, hs_source_frame_name(c->src, (uint32_t)i),
			      &row);
		if (kind < 0) {
			ok = kind == -ENOMEM ? kind : 0;
			break;
		}
		if (c->target[i])
			ok = kind != c->old.kind[i] ||
			     strcmp(row.s, hs_strtab_get(&c->old.names, c->old.row[i]));
		else
			ok = kind == c->old.kind[i] &&
			     !strcmp(row.s, hs_strtab_get(&c->old.names, c->old.row[i]));
	}
	c->diag = diag;
	hs_buf_release(&row);
	hs_groups_release(&c->groups);
	return ok;
}

/*
 * Candidate 1: the module all target frames share (Ungroup Module's
 * own), "mod!->"; none: empty.
 */
static int module_candidate(struct ungroup_ctx *c, int anchored, struct hs_buf *cand)
{
	const char *mod = c->module, *m;
	size_t i, len = mod ? strlen(mod) : 0, mlen;

	for (i = 0; !c->module && i < c->nr_frames; i++) {
		const char *full = hs_source_frame_name(c->src, (uint32_t)i);

		if (!c->target[i])
			continue;
		m = hs_frame_name_short_module(full, strlen(full), &mlen);
		if (!m || (mod && (mlen != len || memcmp(m, mod, len))))
			return 0;
		mod = m;
		len = mlen;
	}
	if (!mod)
		return 0;
	hs_buf_reset(&c->shown);
	if (hs_buf_add(&c->shown, mod, len) || hs_buf_addc(&c->shown, '!') ||
	    add_literal(cand, c->shown.s, c->shown.len, anchored) ||
	    hs_buf_adds(cand, "->"))
		return -ENOMEM;
	return 0;
}

/* Candidate 2: the start the target frames' short names share, "PREFIX->". */
static int prefix_candidate(struct ungroup_ctx *c, int anchored, struct hs_buf *cand)
{
	const char *first = NULL, *s;
	size_t i, len = 0, k;

	for (i = 0; i < c->nr_frames; i++) {
		if (!c->target[i])
			continue;
		s = hs_frame_display(hs_source_frame_name(c->src, (uint32_t)i));
		if (!first) {
			first = s;
			len = strlen(s);
			continue;
		}
		for (k = 0; k < len && s[k] == first[k]; k++)
			;
		len = k;
	}
	/* a UTF-8 character is not cut in two */
	while (len > 0 && ((unsigned char)first[len] & 0xc0) == 0x80)
		len--;
	if (!len)
		return 0;
	return add_literal(cand, first, len, anchored) || hs_buf_adds(cand, "->")
		   ? -ENOMEM
		   : 0;
}

/*
 * Candidates 3 and 4: the target frames' names, short (@full 0: after a
 * '/' or at the start) or full, as regular expressions anchored at both
 * ends, in as few entries as fit; nothing when they need too many.
 */
static int names_candidate(struct ungroup_ctx *c, int full, struct hs_buf *cand)
{
	const char *head = full ? "@^(?:" : "@(?:^|/)(?:", *tail = ")$->";
	size_t i, entries = 0, chunk = 0;
	int open = 0, err = 0;

	for (i = 0; !err && i < c->nr_frames; i++) {
		const char *name = hs_source_frame_name(c->src, (uint32_t)i);

		if (!c->target[i])
			continue;
		hs_buf_reset(&c->shown);
		err = add_escaped(&c->shown, full ? name : hs_frame_display(name),
				  strlen(full ? name : hs_frame_display(name)));
		if (err)
			break;
		if (c->shown.len > CHUNK_BYTES)
			goto none;
		if (open && cand->len - chunk + 1 + c->shown.len > CHUNK_BYTES) {
			err = hs_buf_adds(cand, tail);
			open = 0;
		}
		if (!err && !open) {
			if (++entries > MAX_ENTRIES)
				goto none;
			err = hs_buf_adds(cand, entries > 1 ? ";" : "");
			chunk = cand->len;
			err = err || hs_buf_adds(cand, head);
			open = 1;
		} else if (!err) {
			err = hs_buf_addc(cand, '|');
		}
		err = err || hs_buf_add(cand, c->shown.s, c->shown.len);
	}
	if (!err && open)
		err = hs_buf_adds(cand, tail);
	return err ? -ENOMEM : 0;
none:
	hs_buf_reset(cand);
	return 0;
}

static void ctx_release(struct ungroup_ctx *c)
{
	hs_free(c->old.kind);
	hs_free(c->old.row);
	hs_strtab_release(&c->old.names);
	hs_free(c->target);
	hs_groups_release(&c->groups);
	hs_buf_release(&c->name);
	hs_buf_release(&c->shown);
	hs_buf_release(&c->text);
}

/*
 * hs_ungroup() of row @name, or (@module set) hs_ungroup_module() of
 * @module: the candidates in turn until one is exact.
 */
static int ungroup(const struct hs_stack_source *src, const char *group_text,
		   const char *name, const char *module, struct hs_buf *out,
		   struct hs_diag *diag)
{
	struct ungroup_ctx c = {.src = src,
				.module = module,
				.groups = HS_GROUPS_INIT,
				.name = HS_BUF_INIT,
				.shown = HS_BUF_INIT,
				.text = HS_BUF_INIT,
				.diag = diag};
	int (*const make[])(struct ungroup_ctx *, int, struct hs_buf *) = {
	    module_candidate, module_candidate, prefix_candidate,
	    prefix_candidate, names_candidate,	names_candidate};
	struct hs_buf cand = HS_BUF_INIT;
	size_t i, k = 0;
	int err, ok = 0;

	c.nr_frames = hs_source_nr_frames(src);
	hs_strtab_init(&c.old.names, ROW_NAMES_MAX);
	split_desc(&c, group_text);
	err = old_rows(&c, group_text, name);
	/* a module none of whose frames is grouped still gets "mod!->": it keeps them so
	 */
	if (!err && !c.nr_target && !module) {
		hs_diag_set(diag, 0, "'%s' is no group of these GroupPats", name);
		err = -ENOENT;
	}
	/*
	 * each kind plain (or short), then anchored (or full); an entry group
	 * stands for its entry frame, whose own name comes first; a module's
	 * frames share no start but the module's
	 */
	for (i = 0; !err && !ok && !module && i < c.nr_frames; i++)
		if (c.target[i]) {
			k = c.old.kind[i] == HS_GROUP_ENTRY ? 2 : 0;
			break;
		}
	for (; !err && !ok && k < sizeof(make) / sizeof(make[0]); k++) {
		if (module && make[k] == prefix_candidate)
			continue;
		hs_buf_reset(&cand);
		err = make[k](&c, (int)(k % 2), &cand);
		if (!err && cand.len)
			ok = exact(&c, cand.s);
		if (ok < 0)
			err = ok;
	}
	if (!err && ok <= 0) {
		hs_diag_set(
		    diag, 0,
		    "'%s' cannot be ungrouped alone: no pattern takes out only its "
		    "frames",
		    module ? module : name);
		err = -EINVAL;
	}
	if (!err && hs_buf_add(out, c.text.s, c.text.len))
		err = -ENOMEM;
	hs_buf_release(&cand);
	ctx_release(&c);
	return err;
}

int hs_ungroup(const struct hs_stack_source *src, const char *group_text,
	       const char *name, struct hs_buf *out, struct hs_diag *diag)
{
	return ungroup(src, group_text, name, NULL, out, diag);
}

int hs_ungroup_module(const struct hs_stack_source *src, const char *group_text,
		      const char *module, struct hs_buf *out, struct hs_diag *diag)
{
	return ungroup(src, group_text, NULL, module, out, diag);
}
