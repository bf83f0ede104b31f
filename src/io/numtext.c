/*
 * numtext - exact decimal milliseconds <-> int64 nanoseconds, and doubles
 * that survive a trip through text.
 */
#include "io/numtext.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIG 19   /* significant digits kept exactly in a uint64 */
#define MAX_TEXT 512 /* longer "numbers" are rejected */

/* A decimal number split into its parts: value = mant * 10^exp10. */
struct decimal {
	int neg;
	uint64_t mant;
	long exp10;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

void hs_text_trim(const char **s, size_t *len)
{
	while (*len && is_blank(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
}

/*
 * Scan [+-]digits[.digits][(e|E)[+-]digits] filling @d; digits beyond the
 * 19th significant one only move the exponent (integer part) or are
 * dropped (fraction). Returns 0 or -EINVAL.
 */
static int scan_decimal(const char *s, size_t len, struct decimal *d)
{
	size_t i = 0, nsig = 0, ndigits = 0;
	long exp = 0;

	memset(d, 0, sizeof(*d));
	if (i < len && (s[i] == '+' || s[i] == '-'))
		d->neg = s[i++] == '-';
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndigits++) {
		if (nsig < MAX_SIG) {
			d->mant = d->mant * 10 + (uint64_t)(s[i] - '0');
			if (d->mant)
				nsig++;
		} else {
			exp++;
		}
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndigits++) {
			if (nsig < MAX_SIG) {
				d->mant = d->mant * 10 + (uint64_t)(s[i] - '0');
				if (d->mant)
					nsig++;
				exp--;
			}
		}
	}
	if (!ndigits)
		return -EINVAL;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		int eneg = 0;
		long e = 0;
		size_t start;

		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		start = i;
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
		if (i == start)
			return -EINVAL;
		exp += eneg ? -e : e;
	}
	if (i != len)
		return -EINVAL;
	d->exp10 = exp;
	return 0;
}

int hs_numtext_parse_ms(const char *s, size_t len, int64_t *ns)
{
	struct decimal d;
	long e;
	uint64_t v;
	int err;

	hs_text_trim(&s, &len);
	err = scan_decimal(s, len, &d);
	if (err)
		return err;
	e = d.exp10 + 6; /* ms -> ns */
	v = d.mant;
	if (!v) {
		*ns = 0;
		return 0;
	}
	if (e >= 0) {
		for (; e > 0; e--) {
			if (v > UINT64_MAX / 10)
				return -ERANGE;
			v *= 10;
		}
	} else if (e < -19) {
		v = 0; /* below half a nanosecond: mant < 10^19 */
	} else {
		uint64_t p = 1, r;

		for (; e < 0; e++)
			p *= 10;
		r = v % p;
		v /= p;
		if (r >= p - r)
			v++; /* half away from zero */
	}
	if (v > (uint64_t)INT64_MAX + (uint64_t)d.neg)
		return -ERANGE;
	*ns = d.neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int hs_numtext_parse_double(const char *s, size_t len, double *v)
{
	struct decimal d;
	char buf[MAX_TEXT];
	double x;
	int err;

	hs_text_trim(&s, &len);
	err = scan_decimal(s, len, &d);
	if (err)
		return err;
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	x = strtod(buf, NULL);
	if (!isfinite(x))
		return -ERANGE;
	*v = x;
	return 0;
}

int hs_numtext_parse_metric(const char *s, size_t len, double *v)
{
	double x;
	int err = hs_numtext_parse_double(s, len, &x);

	if (err)
		return err;
	if (fabs(x) > HS_NUMTEXT_METRIC_MAX)
		return -ERANGE;
	*v = x;
	return 0;
}

size_t hs_numtext_ms(char *out, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	unsigned frac = (unsigned)(a % 1000000);
	int n;

	n = snprintf(out, HS_NUMTEXT_MAX, "%s%" PRIu64, ns < 0 ? "-" : "", a / 1000000);
	if (frac) {
		int digits = 6;

		while (frac % 10 == 0) {
			frac /= 10;
			digits--;
		}
		n += snprintf(out + n, HS_NUMTEXT_MAX - (size_t)n, ".%0*u", digits, frac);
	}
	return (size_t)n;
}

size_t hs_numtext_double(char *out, double v)
{
	int prec;

	if (v == 0)
		return (size_t)snprintf(out, HS_NUMTEXT_MAX, "0");
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return (size_t)snprintf(out, HS_NUMTEXT_MAX, "%.0f", v);
	for (prec = 15; prec < 17; prec++) {
		snprintf(out, HS_NUMTEXT_MAX, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return strlen(out);
	}
	return (size_t)snprintf(out, HS_NUMTEXT_MAX, "%.17g", v);
}
