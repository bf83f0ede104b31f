#ifndef HS_COMMON_UTF8_H
#define HS_COMMON_UTF8_H
#include <stddef.h>

/*
 * utf8 - checking and repairing UTF-8. Frame names come from files and
 * programs that promise nothing about their encoding; JSON and XML output
 * must be valid UTF-8, so a byte that does not belong to a valid sequence
 * is written as U+FFFD.
 *
 * Nothing here keeps state; hs_utf8_repair() returns memory the caller owns.
 */

/* U+FFFD REPLACEMENT CHARACTER, as UTF-8 */
#define HS_UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * Length (1-4) of the valid UTF-8 sequence at @p, of which @left bytes are
 * readable, with its code point in *@cp; 0 if @p does not start one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid).
 */
size_t hs_utf8_seq_len(const unsigned char *p, size_t left, unsigned long *cp);

/* Whether the @len bytes at @s are valid UTF-8 (NUL bytes included). */
int hs_utf8_valid(const char *s, size_t len);

/*
 * A copy of the @len bytes at @s with every byte that is not part of a
 * valid sequence replaced by U+FFFD, NUL-terminated; its length in *@out_len.
 * Returns the new string (free with hs_free()) or NULL when out of memory.
 */
char *hs_utf8_repair(const char *s, size_t len, size_t *out_len);
#endif
