#ifndef HS_IO_NUMTEXT_H
#define HS_IO_NUMTEXT_H
#include <stddef.h>
#include <stdint.h>
#include "common/log.h"

/*
 * numtext - numbers as the text formats spell them: culture-invariant
 * decimals ("12.345", "-3", "1e3"), times in milliseconds that must map to
 * the model's int64 nanoseconds exactly, and doubles printed so that they
 * read back bit for bit.
 *
 * Nothing here allocates or depends on the locale's decimal point beyond
 * strtod() (heapscope never calls setlocale(), so it is always '.').
 */

/* Narrow [*@s, *@s + *@len) to leave out ASCII blanks at both ends. */
void hs_text_trim(const char **s, size_t *len);

/* Longest text hs_numtext_ms() or hs_numtext_double() writes, with NUL. */
#define HS_NUMTEXT_MAX 40

/*
 * Parse @len bytes at @s (surrounding ASCII blanks allowed) as a decimal
 * number of milliseconds and store it in *@ns as nanoseconds, rounded to
 * the nearest (half away from zero). Returns 0, -EINVAL when the text is
 * not a decimal number, -ERANGE when it does not fit in int64 ns.
 */
HS_MUST_CHECK int hs_numtext_parse_ms(const char *s, size_t len, int64_t *ns);
/*
 * Parse @len bytes at @s (surrounding ASCII blanks allowed) as a finite
 * decimal number. Returns 0, -EINVAL (not a number, NaN, infinite) or
 * -ERANGE (overflows a double).
 */
HS_MUST_CHECK int hs_numtext_parse_double(const char *s, size_t len, double *v);
/*
 * The largest magnitude of a sample's metric or count: PerfView keeps them
 * as single-precision floats, and this bound keeps any sum of them finite.
 */
#define HS_NUMTEXT_METRIC_MAX 3.4e38
/*
 * hs_numtext_parse_double() for a sample's metric or count: also -ERANGE
 * when the magnitude is above HS_NUMTEXT_METRIC_MAX.
 */
HS_MUST_CHECK int hs_numtext_parse_metric(const char *s, size_t len, double *v);
/*
 * Write @ns as milliseconds with as many decimals as needed (0 to 6):
 * 12345678 -> "12.345678", 12000000 -> "12". @out holds HS_NUMTEXT_MAX.
 * Returns the length written.
 */
size_t hs_numtext_ms(char *out, int64_t ns);
/*
 * Write @v in the shortest of %.15g/%.16g/%.17g that reads back as the same
 * double; integral values below 2^53 as plain integers. @out holds
 * HS_NUMTEXT_MAX. Returns the length written.
 */
size_t hs_numtext_double(char *out, double v);
#endif
