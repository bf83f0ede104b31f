#ifndef HS_COMMON_ESCAPE_H
#define HS_COMMON_ESCAPE_H
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include "common/buf.h"

/*
 * escape - control characters made visible in what heapscope prints for
 * people: text views, folded stacks, CSV and every message. Frame names,
 * file names and excerpts of files come from untrusted input, and a raw
 * ESC in them could clear the terminal, recolour it or set its title.
 *
 * What is escaped: C0 controls and DEL (bytes 0x00-0x1f, 0x7f) as \xHH;
 * the C1 controls U+0080-U+009F as \u0080-\u009f; a byte 0x80-0x9f that
 * is not part of a valid UTF-8 sequence (a C1 control to a terminal that
 * reads 8-bit characters) as \xHH. Everything else passes as it is,
 * backslashes included, so escaping an escaped string changes nothing.
 * JSON output does not need this: JSON escapes controls its own way.
 *
 * Nothing here keeps state; nothing allocates except through @b.
 */

/* Whether any of the @len bytes at @s would be escaped. */
int hs_escape_needed(const char *s, size_t len);

/* Append the @len bytes at @s, escaped, to @b. Returns 0 or -ENOMEM. */
int hs_escape_add(struct hs_buf *b, const char *s, size_t len);

/*
 * The @len bytes at @s, escaped, into @dst of @size bytes (@size > 0),
 * NUL-terminated, cut at an escape's boundary when it does not fit.
 * Returns the length written. @dst and @s must not overlap.
 */
size_t hs_escape_copy(char *dst, size_t size, const char *s, size_t len);

/* Write the @len bytes at @s, escaped, to @f; returns 0 or EOF. */
int hs_escape_write(FILE *f, const char *s, size_t len);

/*
 * Format @fmt with @ap and write the result, escaped, to @f: for messages
 * whose arguments quote names or files. Allocates nothing (a message is
 * cut at 4 KiB).
 */
void hs_escape_vprintf(FILE *f, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
#endif
