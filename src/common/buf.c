/*
 * buf - growable NUL-terminated byte buffer.
 */
#include "common/buf.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

char hs_buf_empty[1];

void hs_buf_init(struct hs_buf *b)
{
	b->s = hs_buf_empty;
	b->len = 0;
	b->alloc = 0;
}

void hs_buf_release(struct hs_buf *b)
{
	if (b->alloc)
		hs_free(b->s);
	hs_buf_init(b);
}

int hs_buf_grow(struct hs_buf *b, size_t extra)
{
	char *p;
	size_t alloc = b->alloc;

	if (extra >= (size_t)-1 - b->len - 1)
		return -ENOMEM;
	if (b->len + extra + 1 <= b->alloc)
		return 0;
	p = hs_grow(b->alloc ? b->s : NULL, 1, b->len + extra + 1, &alloc);
	if (!p)
		return -ENOMEM;
	if (!b->alloc)
		p[0] = '\0';
	b->s = p;
	b->alloc = alloc;
	return 0;
}

int hs_buf_add(struct hs_buf *b, const void *p, size_t n)
{
	if (hs_buf_grow(b, n))
		return -ENOMEM;
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int hs_buf_adds(struct hs_buf *b, const char *s)
{
	return hs_buf_add(b, s, strlen(s));
}

int hs_buf_addc(struct hs_buf *b, char c)
{
	return hs_buf_add(b, &c, 1);
}

int hs_buf_vaddf(struct hs_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(b->s + b->len, b->alloc ? b->alloc - b->len : 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -EINVAL;
	if (b->len + (size_t)n + 1 > b->alloc) {
		if (hs_buf_grow(b, (size_t)n))
			return -ENOMEM;
		vsnprintf(b->s + b->len, b->alloc - b->len, fmt, ap);
	}
	b->len += (size_t)n;
	return 0;
}

int hs_buf_addf(struct hs_buf *b, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = hs_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return ret;
}

char *hs_buf_detach(struct hs_buf *b)
{
	char *s = b->alloc ? b->s : hs_strdup("");

	hs_buf_init(b);
	return s;
}
