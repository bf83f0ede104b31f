#ifndef HS_COMMON_LINEREADER_H
#define HS_COMMON_LINEREADER_H
#include <stdint.h>
#include <stdio.h>

/*
 * linereader - stream a text file line by line in bounded memory.
 *
 * Reads big blocks with fread() and hands out lines that point into its
 * own buffer: a line is borrowed until the next hs_linereader_next().
 * The trailing '\n' (and a '\r' before it) is removed and the line is
 * NUL-terminated. A line longer than @max_line is an error (-E2BIG), so
 * hostile input cannot make the buffer grow without bound.
 *
 * The FILE is borrowed; the reader never closes it.
 */
struct hs_linereader {
	FILE *f;
	char *buf;	   /* owned */
	size_t size;	   /* capacity of buf */
	size_t start, end; /* unread bytes are buf[start, end) */
	size_t max_line;
	uint64_t lineno;      /* number of the line last returned, 1-based */
	uint64_t offset;      /* bytes consumed before buf[start] */
	int eof;	      /* fread() reported end of file or error */
	int error;	      /* ferror() was seen */
	int last_had_newline; /* the line last returned ended in '\n' */
};

/* Returns 0 or -ENOMEM. */
int hs_linereader_init(struct hs_linereader *r, FILE *f, size_t max_line);
void hs_linereader_release(struct hs_linereader *r);
/*
 * Next line in *@line (length *@len). Returns 1 for a line, 0 at end of
 * input, -E2BIG for an overlong line, -EIO on a read error.
 */
int hs_linereader_next(struct hs_linereader *r, char **line, size_t *len);
#endif
