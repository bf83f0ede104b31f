/*
 * linereader - block-buffered line splitting with memchr().
 */
#include "common/linereader.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

#define BLOCK (1u << 20)

int hs_linereader_init(struct hs_linereader *r, FILE *f, size_t max_line)
{
	memset(r, 0, sizeof(*r));
	r->f = f;
	r->max_line = max_line;
	r->size = (max_line > BLOCK ? max_line : BLOCK) + BLOCK + 1;
	r->buf = hs_malloc(r->size);
	return r->buf ? 0 : -ENOMEM;
}

void hs_linereader_release(struct hs_linereader *r)
{
	hs_free(r->buf);
	r->buf = NULL;
}

/* Move unread bytes to the front and read more; 0 when nothing came. */
static size_t refill(struct hs_linereader *r)
{
	size_t n;

	if (r->eof)
		return 0;
	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	n = fread(r->buf + r->end, 1, r->size - 1 - r->end, r->f);
	if (n == 0) {
		r->eof = 1;
		r->error = ferror(r->f);
	}
	r->end += n;
	return n;
}

int hs_linereader_next(struct hs_linereader *r, char **line, size_t *len)
{
	size_t scanned = 0;
	char *nl;
	size_t n;

	for (;;) {
		char *from = r->buf + r->start + scanned;

		nl = memchr(from, '\n', r->end - r->start - scanned);
		if (nl)
			break;
		scanned = r->end - r->start;
		if (scanned > r->max_line)
			return -E2BIG;
		if (!refill(r)) {
			if (r->error)
				return -EIO;
			if (r->start == r->end)
				return 0;
			nl = r->buf + r->end; /* last line, no newline */
			break;
		}
	}
	n = (size_t)(nl - (r->buf + r->start));
	if (n > r->max_line)
		return -E2BIG;
	r->last_had_newline = nl < r->buf + r->end;
	*line = r->buf + r->start;
	r->offset += n + (size_t)r->last_had_newline;
	r->start += n + (size_t)r->last_had_newline;
	if (r->start > r->end)
		r->start = r->end;
	if (n && (*line)[n - 1] == '\r')
		n--;
	(*line)[n] = '\0';
	*len = n;
	r->lineno++;
	return 1;
}
