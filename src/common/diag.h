#ifndef HS_COMMON_DIAG_H
#define HS_COMMON_DIAG_H
#include <stdint.h>

/*
 * diag - where a parser or importer went wrong, for a message of the form
 * "FILE:LINE: what is wrong" (or "FILE: offset N: ..." for binary input).
 *
 * The caller owns the struct (usually on its stack) and sets @file; the
 * library fills @line or @offset and @msg on failure. Only the first error
 * is kept: later hs_diag_set() calls on a set diag are ignored.
 */
struct hs_diag {
	const char *file; /* borrowed name for messages, or NULL */
	uint64_t line;	  /* 1-based line, 0 if not a text position */
	uint64_t offset;  /* byte offset, meaningful when line == 0 */
	int has_offset;	  /* offset is set */
	int set;	  /* a message was recorded */
	char msg[512];
};
#define HS_DIAG_INIT(name)                                                               \
	{                                                                                \
		.file = (name)                                                           \
	}

/* Record an error at text line @line (0 for none). */
void hs_diag_set(struct hs_diag *d, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record an error at byte offset @offset of a binary input. */
void hs_diag_set_offset(struct hs_diag *d, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * Format the diagnostic into @out (size @n) as "FILE:LINE: msg",
 * "FILE: offset N: msg", or "FILE: msg", control characters escaped
 * (common/escape.h). Returns @out.
 */
const char *hs_diag_format(const struct hs_diag *d, char *out, unsigned n);
#endif
