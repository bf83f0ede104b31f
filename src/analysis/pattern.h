#ifndef HS_ANALYSIS_PATTERN_H
#define HS_ANALYSIS_PATTERN_H
#include <stddef.h>
#include <stdint.h>
#include "common/buf.h"
#include "common/diag.h"

/*
 * pattern - the stack viewer's simplified patterns (perfview-semantics.md
 * §1), compiled to PCRE2 with JIT.
 *
 * A simplified pattern is literal text with a few specials:
 *   *    any characters (".*")
 *   %    zero or more letters, digits, '_', '.' or '?' ("[.\w\d?]*")
 *   ^    anchor at the start of the name
 *   |    alternation
 *   {}   a capture group, for $1..$9 in a GroupPats template
 * Everything else is literal; there is no escape character and no end
 * anchor. A leading '@' makes the rest a raw PCRE2 regular expression.
 * Matching is always caseless and finds the pattern anywhere in the name.
 * In a list, entries are separated by ';' (so ';' can never be part of a
 * pattern), trimmed, and empty entries are ignored.
 *
 * Patterns may come from untrusted users (the HTTP API), so their length,
 * the size of a list and the work of one match are bounded; a match that
 * runs into a bound fails with -ERANGE instead of taking forever.
 *
 * Ownership: a compiled pattern owns its text and its PCRE2 code; a list
 * owns its patterns. Matching writes into a per-pattern match block, so a
 * pattern must not be matched from two threads at once.
 */

#define HS_PATTERN_MAX_LEN 1024	 /* bytes in one pattern */
#define HS_PATTERN_MAX_LIST 256	 /* entries in one ';' list */
#define HS_PATTERN_MAX_GROUPS 10 /* $0 (whole match) .. $9 */

struct hs_pattern; /* opaque */

/* Captures of a successful match: byte offsets into the subject. */
struct hs_match {
	size_t start[HS_PATTERN_MAX_GROUPS], end[HS_PATTERN_MAX_GROUPS];
	unsigned nr; /* groups filled in (>= 1 after a match) */
};

/*
 * Translate the simplified pattern @pat (@len bytes) to PCRE2 syntax,
 * appended to @out. When @src_of is not NULL it receives an owned array
 * (hs_free) that gives, for each byte of the translation, the offset in
 * @pat it came from. Returns 0 or -ENOMEM.
 */
int hs_pattern_translate(const char *pat, size_t len, struct hs_buf *out,
			 size_t **src_of);

/*
 * Compile @pat (@len bytes, taken as given: callers trim). Returns 0 and an
 * owned pattern in *@out; -EINVAL for a bad or over-long pattern, with a
 * message in @diag naming the pattern, PCRE2's error and the offset in
 * @pat; -ENOMEM.
 */
int hs_pattern_compile(const char *pat, size_t len, struct hs_pattern **out,
		       struct hs_diag *diag);
/*
 * Compile @re (@len bytes) as a PCRE2 regular expression, as the text
 * after a leading '@' is: caseless, with the same bounds. Same returns.
 */
int hs_pattern_compile_regex(const char *re, size_t len, struct hs_pattern **out,
			     struct hs_diag *diag);
void hs_pattern_free(struct hs_pattern *p);
/* The pattern as written (borrowed). */
const char *hs_pattern_text(const struct hs_pattern *p);

/*
 * Match @p against @len bytes at @s. Returns 1 (captures in @m when it is
 * not NULL; a group that did not take part has start == end), 0 for no
 * match, -ERANGE when the match limits were hit, -ENOMEM.
 */
int hs_pattern_match(struct hs_pattern *p, const char *s, size_t len, struct hs_match *m);

/* A ';'-separated list of patterns. */
struct hs_patlist {
	struct hs_pattern **pat; /* owned */
	size_t nr;
};
#define HS_PATLIST_INIT                                                                  \
	{                                                                                \
		0                                                                        \
	}

/*
 * Parse @text (NULL is empty) into @l, which must be initialised and
 * empty. @what names the list in messages ("FoldPats"). Returns 0, -EINVAL
 * (message in @diag; @l left empty) or -ENOMEM.
 */
int hs_patlist_parse(struct hs_patlist *l, const char *text, const char *what,
		     struct hs_diag *diag);
void hs_patlist_release(struct hs_patlist *l);

/*
 * Does any pattern of @l match @s? Returns 1 (*@which = the first that
 * does), 0, or a negative error of hs_pattern_match() (*@which = the
 * pattern that failed).
 */
int hs_patlist_match_any(const struct hs_patlist *l, const char *s, size_t len,
			 size_t *which);
/*
 * Set bit i of @bits (an array of (nr + 63) / 64 words) for each pattern i
 * of @l that matches @s. Returns 0, or a negative error of
 * hs_pattern_match() with *@bad = the pattern that failed.
 */
int hs_patlist_match_set(const struct hs_patlist *l, const char *s, size_t len,
			 uint64_t *bits, size_t *bad);

/*
 * Split @text at ';' and call @fn on each trimmed non-empty entry (a
 * pointer into @text and its length). Stops at and returns the first
 * non-zero value of @fn; 0 otherwise.
 */
int hs_pattern_split(const char *text,
		     int (*fn)(const char *entry, size_t len, void *arg), void *arg);

/*
 * A pattern list given as "+PATS" extends @base (a default list, may be
 * NULL) instead of replacing it: the patterns of @base, then PATS's
 * (`--fold +PATS`, docs/patterns.md). Returns @given itself when it does
 * not start with '+' (after blanks), PATS when @base has no pattern, else
 * "@base;PATS" in a new string also put in *@joined (hs_free; *@joined is
 * NULL otherwise). NULL when @given is NULL or out of memory.
 */
const char *hs_patterns_extend(const char *given, const char *base, char **joined);

/* Complete an error message for a failed match of @p against @s. */
void hs_pattern_match_error(struct hs_diag *diag, const char *what,
			    const struct hs_pattern *p, int err, const char *s);
#endif
