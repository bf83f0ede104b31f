/*
 * diag - first-error-wins diagnostics for parsers.
 */
#include "common/diag.h"
#include "common/escape.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

static void vset(struct hs_diag *d, const char *fmt, va_list ap)
{
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	d->set = 1;
}

void hs_diag_set(struct hs_diag *d, uint64_t line, const char *fmt, ...)
{
	va_list ap;

	if (!d || d->set)
		return;
	d->line = line;
	va_start(ap, fmt);
	vset(d, fmt, ap);
	va_end(ap);
}

void hs_diag_set_offset(struct hs_diag *d, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!d || d->set)
		return;
	d->line = 0;
	d->offset = offset;
	d->has_offset = 1;
	va_start(ap, fmt);
	vset(d, fmt, ap);
	va_end(ap);
}

const char *hs_diag_format(const struct hs_diag *d, char *out, unsigned n)
{
	const char *file = d->file ? d->file : "<input>";
	const char *msg = d->set ? d->msg : "unknown error";
	char raw[2048];
	int len;

	if (!n)
		return out;
	if (d->line)
		len =
		    snprintf(raw, sizeof(raw), "%s:%" PRIu64 ": %s", file, d->line, msg);
	else if (d->has_offset)
		len = snprintf(raw, sizeof(raw), "%s: offset %" PRIu64 ": %s", file,
			       d->offset, msg);
	else
		len = snprintf(raw, sizeof(raw), "%s: %s", file, msg);
	if (len < 0)
		len = 0;
	/* the file's name and the message may quote control characters */
	hs_escape_copy(out, n, raw,
		       (size_t)len < sizeof(raw) ? (size_t)len : sizeof(raw) - 1);
	return out;
}
