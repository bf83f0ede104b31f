#ifndef HS_ANALYSIS_GROUP_H
#define HS_ANALYSIS_GROUP_H
#include <stddef.h>
#include "analysis/pattern.h"
#include "common/buf.h"
#include "common/diag.h"

/*
 * group - GroupPats (perfview-semantics.md §2): which group a frame
 * belongs to, decided from its full name alone.
 *
 * Text: an optional leading "[description]" is dropped, the rest split at
 * ';'. Each trimmed entry is PATTERN=>TEMPLATE (entry group), PATTERN->TEMPLATE
 * (plain group) or PATTERN alone ("->$&"); "=>" is looked for first. The
 * pattern is the text before the arrow as written (not trimmed), the
 * template the text after it, trimmed. In a template "$1".."$9" stand for
 * captures ({} in the pattern) and "$&" for the whole match.
 *
 * Matching, patterns in order: a match whose template gives an empty name
 * means "not grouped" and stops; an "=>" match stops with that entry
 * group; a "->" match renames the frame and matching goes on with the new
 * name (the last rename wins). The entries "{%}!=>module $1" and
 * "{%}!->module $1" are recognised and done without PCRE2, with the
 * short module of model/frame_name.h (a C++ operator's '!' is no
 * module's; a Linux file name keeps the '-' and '+' that '%' does not
 * take: "module ld-linux-x86-64.so.2", "module libstdc++.so.6"), and so
 * is "^Process% {%}->$1" (a diff's Ignore PID/TID), which names a
 * "Process COMM (PID)" frame by its whole COMM ("demo-heap", where '%'
 * would stop at the '-'). A frame that no
 * pattern groups and whose full name ends in "!?" (an unresolved address) goes into a
 * plain group named by its short name, so a module's unknown frames collapse together.
 *
 * What happens along a stack (entry groups merging into their entry frame)
 * is the filter's business (filter.c).
 *
 * Ownership: struct hs_groups owns its patterns and templates and two
 * scratch buffers; matching is therefore not thread-safe.
 */

enum hs_group_kind {
	HS_GROUP_NONE,	/* not grouped */
	HS_GROUP_PLAIN, /* "->": every member shows the group name */
	HS_GROUP_ENTRY, /* "=>": shown as "NAME <<entry frame>>" */
};

enum hs_group_fast {
	HS_GROUP_FAST_NONE,    /* @pat is matched */
	HS_GROUP_FAST_MODULE,  /* "{%}!=>module $1", "{%}!->module $1" */
	HS_GROUP_FAST_PROCESS, /* "^Process% {%}->$1" */
};

struct hs_group_pat {
	struct hs_pattern *pat; /* owned; NULL for the fast paths */
	char *tmpl;		/* owned template, trimmed */
	int entry;		/* "=>" */
	enum hs_group_fast fast;
};

struct hs_groups {
	struct hs_group_pat *pat; /* owned */
	size_t nr, alloc;
	struct hs_buf cur, next; /* scratch for renames */
};
#define HS_GROUPS_INIT                                                                   \
	{                                                                                \
		.cur = HS_BUF_INIT, .next = HS_BUF_INIT                                  \
	}

/*
 * Parse GroupPats @text (NULL or blank for none) into @g, which must be
 * initialised (HS_GROUPS_INIT) and empty. Returns 0, -EINVAL with a message
 * in @diag (@g left empty), or -ENOMEM.
 */
int hs_groups_parse(struct hs_groups *g, const char *text, struct hs_diag *diag);
void hs_groups_release(struct hs_groups *g);

/*
 * Group of the frame named @full (its full name). Returns an
 * enum hs_group_kind with the group's name in @name (which is reset
 * first; untouched content for HS_GROUP_NONE is empty), or a negative
 * error: -EINVAL when a pattern hit its match limits (message in @diag),
 * -ENOMEM.
 */
int hs_groups_match(struct hs_groups *g, const char *full, struct hs_buf *name,
		    struct hs_diag *diag);

/*
 * Expand @tmpl for a match @m of a pattern against @subj, appending to
 * @out: exactly "$&" is the whole match; otherwise each "$<digit>" becomes
 * that capture (empty if missing), then each "$&" the whole match.
 * Returns 0 or -ENOMEM.
 */
int hs_group_expand(const char *tmpl, const char *subj, const struct hs_match *m,
		    struct hs_buf *out);
#endif
