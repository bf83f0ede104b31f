/*
 * wrappers - allocation wrappers as git has them (do_xmalloc under xmalloc
 * and xmallocz, xcalloc, xrealloc, xstrdup): static, never inlined, each
 * only calling an allocation function or another wrapper, and called from
 * two user functions or more. With the wrappers folded (the heap views'
 * automatic wrapper fold, or --fold +PATS) ByName's Exc names the user
 * functions, with what they allocated: the "exc BYTES BLOCKS FUNCTION"
 * lines this prints, and its one leak ("leak BYTES BLOCKS FUNCTION") (t5170).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRAPPER __attribute__((noinline, noclone))
#define USER __attribute__((noinline, noclone, used))

static void *volatile sink;

static WRAPPER void *do_xmalloc(size_t size, int gentle)
{
	void *p = malloc(size ? size : 1);

	if (!p && !gentle) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

static WRAPPER void *xmalloc(size_t size)
{
	return do_xmalloc(size, 0);
}

static WRAPPER void *xmallocz(size_t size)
{
	char *p = do_xmalloc(size + 1, 0);

	p[size] = '\0';
	return p;
}

static WRAPPER void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		exit(1);
	return p;
}

static WRAPPER void *xrealloc(void *old, size_t size)
{
	void *p = realloc(old, size);

	if (!p)
		exit(1);
	return p;
}

static WRAPPER char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		exit(1);
	return p;
}

/* 10 blocks of 100 bytes and one of 800 zeroed: 1800 bytes in 11 */
USER void load_items(void)
{
	void **items = xcalloc(100, 8);

	for (int i = 0; i < 10; i++)
		items[i] = xmalloc(100);
	for (int i = 0; i < 10; i++)
		free(items[i]);
	free(items);
}

/* 64, then grown to 128, 256, 512: 960 bytes in 4 */
USER void grow_text(void)
{
	char *text = xmalloc(64);

	for (size_t n = 128; n <= 512; n *= 2)
		text = xrealloc(text, n);
	sink = text;
	free(text);
}

/* 3 strdup'd names of 6 bytes and one 41-byte buffer: 59 bytes in 4; the
 * buffer is the program's one leak */
USER void parse_names(void)
{
	static const char *const names[] = { "alpha", "bravo", "delta" };
	char *copies[3];
	char *buf = xmallocz(40);

	for (int i = 0; i < 3; i++)
		copies[i] = xstrdup(names[i]);
	for (int i = 0; i < 3; i++)
		free(copies[i]);
	sink = buf;	/* leaked: 41 bytes */
}

/* the other wrappers' second caller: 32 + 5 + 16 + 10 = 63 bytes in 4 */
USER void join_words(void)
{
	char **parts = xcalloc(4, 8);
	char *word = xstrdup("join");
	char *tail;

	word = xrealloc(word, 16);
	tail = xmallocz(9);
	free(tail);
	free(word);
	free(parts);
}

/* a user function allocating directly, called once: 4000 bytes in 1 */
USER void keep_table(void)
{
	sink = malloc(4000);
	free(sink);
}

int main(void)
{
	load_items();
	grow_text();
	parse_names();
	keep_table();
	grow_text();
	join_words();
	printf("exc 1800 11 load_items\n");
	printf("exc 1920 8 grow_text\n");
	printf("exc 59 4 parse_names\n");
	printf("exc 4000 1 keep_table\n");
	printf("exc 63 4 join_words\n");
	printf("leak 41 1 parse_names\n");
	return 0;
}
