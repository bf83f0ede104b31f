/*
 * inlinedup - one function with an inlined and an out-of-line copy:
 * make_buf() is inlined into direct() and called through a pointer from
 * indirect(), so a trace has both "inlinedup!make_buf (inline)" and
 * "inlinedup!make_buf" frames; ByName merges them into one row by default
 * (t5180). Built -O2 -g, without sibling calls so that the out-of-line
 * copy keeps its frame.
 */
#include <stdio.h>
#include <stdlib.h>

#define USER __attribute__((noinline, noclone, used))

static void *volatile sink;

static void *make_buf(size_t n)
{
	char *p = malloc(n);

	if (p)
		p[0] = 1;
	return p;
}

static void *(*volatile make_buf_ptr)(size_t) = make_buf;

/* 3 blocks of 100 bytes, from the inlined copy */
USER void direct(void)
{
	for (int i = 0; i < 3; i++) {
		sink = make_buf(100);
		free(sink);
	}
}

/* 2 blocks of 200 bytes, from the out-of-line copy */
USER void indirect(void)
{
	for (int i = 0; i < 2; i++) {
		sink = make_buf_ptr(200);
		free(sink);
	}
}

int main(void)
{
	direct();
	indirect();
	printf("inc 700 5 make_buf\n");
	return 0;
}
