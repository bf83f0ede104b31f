/*
 * utf8 - checking and repairing UTF-8 (see utf8.h).
 */
#include "common/utf8.h"
#include "common/alloc.h"
#include "common/buf.h"

size_t hs_utf8_seq_len(const unsigned char *p, size_t left, unsigned long *cp)
{
	unsigned c = p[0];
	size_t n, i;
	unsigned long v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

int hs_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;
	unsigned long cp;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		n = hs_utf8_seq_len(s + i, len - i, &cp);
		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

char *hs_utf8_repair(const char *str, size_t len, size_t *out_len)
{
	const unsigned char *s = (const unsigned char *)str;
	struct hs_buf b = HS_BUF_INIT;
	size_t i = 0, run = 0, n;
	unsigned long cp;
	int err = hs_buf_grow(&b, len + 1);

	while (!err && i < len) {
		n = s[i] < 0x80 ? 1 : hs_utf8_seq_len(s + i, len - i, &cp);
		if (n) {
			i += n;
			continue;
		}
		err = hs_buf_add(&b, s + run, i - run);
		if (!err)
			err = hs_buf_adds(&b, HS_UTF8_REPLACEMENT);
		run = ++i;
	}
	if (!err)
		err = hs_buf_add(&b, s + run, len - run);
	if (err) {
		hs_buf_release(&b);
		return NULL;
	}
	*out_len = b.len;
	return hs_buf_detach(&b);
}
