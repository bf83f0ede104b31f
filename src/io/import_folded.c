/*
 * import_folded - folded ("collapsed") stacks as written by Brendan Gregg's
 * stackcollapse scripts, inferno, async-profiler and heapscope itself:
 *
 *   main;parse;malloc 42
 *
 * one line per stack, frames root first separated by ';', then blanks and
 * a number (integer or decimal, sign allowed). Each line becomes one
 * sample at time 0 whose metric and count are both the number (other
 * tools write sample counts there). A line that is only a number is a
 * sample on ROOT itself. Empty lines are skipped; a line without a number
 * is an error naming the line.
 */
#include "io/io.h"
#include "io/numtext.h"
#include "common/alloc.h"
#include "common/linereader.h"
#include <errno.h>
#include <string.h>

#define MAX_LINE (4u << 20)
#define NAME_MAX_BYTES (64u << 10)

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Split @s (@len bytes) at ';' into frames, root first, and intern the path. */
static int intern_line(struct hs_stack_source *out, const char *s, size_t len,
		       uint32_t **frames, size_t *alloc, uint32_t *stack,
		       struct hs_diag *diag, uint64_t lineno)
{
	size_t n = 0, start = 0, i;
	int err;

	if (!len) {
		*stack = HS_NO_STACK;
		return 0;
	}
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != ';')
			continue;
		if (i - start > NAME_MAX_BYTES) {
			hs_diag_set(diag, lineno, "a frame name longer than %u bytes",
				    NAME_MAX_BYTES);
			return -E2BIG;
		}
		if (HS_GROW(*frames, n + 1, *alloc))
			return -ENOMEM;
		err = hs_source_intern_frame(out, s + start, i - start, &(*frames)[n]);
		if (err)
			return err;
		n++;
		start = i + 1;
	}
	return hs_source_intern_path(out, *frames, n, stack);
}

int hs_import_folded(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{
	struct hs_linereader r;
	uint32_t *frames = NULL;
	size_t alloc = 0;
	char *line;
	size_t len;
	int ret, err = 0;

	err = hs_linereader_init(&r, f, MAX_LINE);
	if (err) {
		hs_diag_set(diag, 0, "out of memory");
		return err;
	}
	while ((ret = hs_linereader_next(&r, &line, &len)) > 0) {
		size_t end = len, start;
		uint32_t stack;
		double v;

		if (r.lineno == 1 && len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3)) {
			line += 3; /* a UTF-8 byte order mark */
			len -= 3;
			end = len;
		}
		while (end && is_blank(line[end - 1]))
			end--;
		while (len && end && is_blank(line[0])) {
			line++;
			len--;
			end--;
		}
		if (!end)
			continue;
		if (memchr(line, '\0', end)) {
			hs_diag_set(diag, r.lineno, "a NUL character in the line");
			err = -EINVAL;
			break;
		}
		start = end;
		while (start && !is_blank(line[start - 1]))
			start--;
		err = hs_numtext_parse_metric(line + start, end - start, &v);
		if (err) {
			if (err == -ERANGE)
				hs_diag_set(diag, r.lineno,
					    "the number '%.*s' is out "
					    "of range",
					    (int)(end - start > 40 ? 40 : end - start),
					    line + start);
			else
				hs_diag_set(diag, r.lineno,
					    "expected a number at the end of the "
					    "line, found '%.*s'",
					    (int)(end - start > 40 ? 40 : end - start),
					    line + start);
			err = -EINVAL;
			break;
		}
		end = start;
		while (end && is_blank(line[end - 1]))
			end--;
		err =
		    intern_line(out, line, end, &frames, &alloc, &stack, diag, r.lineno);
		if (!err)
			err = hs_source_add_sample(out, 0, v, v, stack);
		if (err) {
			hs_diag_set(diag, r.lineno, "%s",
				    err == -ENOMEM ? "out of memory"
						   : "too many frames or stacks");
			break;
		}
	}
	if (!err && ret < 0) {
		err = ret;
		if (ret == -E2BIG)
			hs_diag_set(diag, r.lineno + 1, "a line longer than %u bytes",
				    MAX_LINE);
		else
			hs_diag_set(diag, r.lineno + 1, "read error");
	}
	hs_free(frames);
	hs_linereader_release(&r);
	return err;
}
