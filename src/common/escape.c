/*
 * escape - control characters made visible (see escape.h).
 */
#include "common/escape.h"
#include "common/utf8.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

/*
 * The escape of the character at @s (@left bytes readable) into @out
 * (room for 7 bytes and a NUL): its length, 0 if it passes as it is; the
 * bytes it covers in *@used.
 */
static size_t escape_one(const unsigned char *s, size_t left, char *out, size_t *used)
{
	unsigned long cp;
	size_t n;

	*used = 1;
	if (s[0] < 0x20 || s[0] == 0x7f)
		return (size_t)snprintf(out, 8, "\\x%02x", s[0]);
	if (s[0] < 0x80)
		return 0;
	n = hs_utf8_seq_len(s, left, &cp);
	if (n) {
		*used = n;
		return cp <= 0x9f ? (size_t)snprintf(out, 8, "\\u%04lx", cp) : 0;
	}
	return s[0] <= 0x9f ? (size_t)snprintf(out, 8, "\\x%02x", s[0]) : 0;
}

/* Bytes at @s before the first one that may need escaping. */
static size_t plain_run(const unsigned char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f)
			break;
	return i;
}

int hs_escape_needed(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char tmp[8];
	size_t i = 0, used;

	while (i < len) {
		i += plain_run(p + i, len - i);
		if (i == len)
			break;
		if (escape_one(p + i, len - i, tmp, &used))
			return 1;
		i += used;
	}
	return 0;
}

int hs_escape_add(struct hs_buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char tmp[8];
	size_t i = 0, run, used, n;
	int err = 0;

	while (i < len && !err) {
		run = plain_run(p + i, len - i);
		if (run) {
			err = hs_buf_add(b, s + i, run);
			i += run;
			continue;
		}
		n = escape_one(p + i, len - i, tmp, &used);
		err = n ? hs_buf_add(b, tmp, n) : hs_buf_add(b, s + i, used);
		i += used;
	}
	return err;
}

size_t hs_escape_copy(char *dst, size_t size, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char tmp[8];
	size_t i = 0, out = 0, used, n;

	while (i < len) {
		n = escape_one(p + i, len - i, tmp, &used);
		if (!n) {
			n = used;
			memcpy(tmp, s + i, used);
		}
		if (out + n >= size)
			break;
		memcpy(dst + out, tmp, n);
		out += n;
		i += used;
	}
	dst[out] = '\0';
	return out;
}

int hs_escape_write(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char tmp[8];
	size_t i = 0, run, used, n;

	while (i < len) {
		run = plain_run(p + i, len - i);
		if (run) {
			if (fwrite(s + i, 1, run, f) != run)
				return EOF;
			i += run;
			continue;
		}
		n = escape_one(p + i, len - i, tmp, &used);
		if (!n)
			memcpy(tmp, s + i, n = used);
		if (fwrite(tmp, 1, n, f) != n)
			return EOF;
		i += used;
	}
	return 0;
}

void hs_escape_vprintf(FILE *f, const char *fmt, va_list ap)
{
	char msg[4096];
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);

	if (n < 0)
		return;
	hs_escape_write(f, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}
