#ifndef HS_COMMON_BUF_H
#define HS_COMMON_BUF_H
#include <stdarg.h>
#include <stddef.h>

/*
 * buf - a growable byte buffer that is always NUL-terminated (git's strbuf).
 *
 * Invariants: @s is never NULL after hs_buf_init() (it points at a static
 * empty string until the first append) and s[len] == '\0'.
 * Appends return 0 or -ENOMEM; on failure the buffer keeps its old content.
 * hs_buf_detach() hands the string to the caller (free with hs_free()).
 */
struct hs_buf {
	char *s;
	size_t len, alloc;
};
extern char hs_buf_empty[];
#define HS_BUF_INIT                                                                      \
	{                                                                                \
		.s = hs_buf_empty                                                        \
	}

void hs_buf_init(struct hs_buf *b);
void hs_buf_release(struct hs_buf *b);
static inline void hs_buf_reset(struct hs_buf *b)
{
	if (b->alloc) {
		b->len = 0;
		b->s[0] = '\0';
	}
}
int hs_buf_add(struct hs_buf *b, const void *p, size_t n);
int hs_buf_adds(struct hs_buf *b, const char *s);
int hs_buf_addc(struct hs_buf *b, char c);
int hs_buf_addf(struct hs_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int hs_buf_vaddf(struct hs_buf *b, const char *fmt, va_list ap);
/* Make room for @extra more bytes without changing the content. */
int hs_buf_grow(struct hs_buf *b, size_t extra);
/* Owned string (never NULL unless out of memory); @b is reset. */
char *hs_buf_detach(struct hs_buf *b);
#endif
