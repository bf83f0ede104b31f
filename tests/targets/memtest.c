/*
 * memtest - allocations whose memory views are known exactly: leaks, a
 * peak, temporary allocations, a large block, a realloc and an inlined
 * allocation site. Built with optimisation and debug information, so
 * that the inlined function is a real inline frame with its own line
 * (tests/integration/t5100-memviews-exact.bats checks every number and
 * the "LINE:" markers below against heapscope's file:line).
 *
 * Single-threaded; everything happens in run(), after the program's
 * first output (which allocates stdout's buffer). The totals, and why:
 *
 *   allocations  28: stdout's buffer, 3 leaks, 10 + 1 peak blocks,
 *                5 temporaries, 2 of a pair, 4 inline, malloc + realloc
 *   leaked       stdout's buffer and 3 x 77 bytes (231 after the default
 *                suppression of stdio's buffer)
 *   peak         stdout's buffer + 231 + 10 x 1000 + 200000 = 214327
 *   temporary    13: 5 site_temp, the large block, the pair's second
 *                block, 4 site_inline, the malloc before the realloc and
 *                the realloc'ed block
 *   mmap         3 pages mapped, the middle one unmapped; 1 page mapped
 *                and unmapped: 2 pages left in 1 mapping
 *
 * With the argument "slow" it pauses 50 ms after allocating the large
 * block and 50 ms after freeing the peak's blocks, so that time ranges
 * can fall between those moments.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "target.h"

static void *volatile sink;
static int slow;	/* "memtest slow": pauses of 50 ms around the peak */

SITE void *site_leak(size_t n)
{
	void *p = malloc(n);	/* LINE:site_leak */

	sink = p;
	return p;
}

SITE void *site_block(size_t n)
{
	void *p = malloc(n);	/* LINE:site_block */

	sink = p;
	return p;
}

SITE void *site_large(size_t n)
{
	void *p = malloc(n);	/* LINE:site_large */

	sink = p;
	return p;
}

SITE void *site_temp(size_t n)
{
	void *p = malloc(n);	/* LINE:site_temp */

	sink = p;
	return p;
}

SITE void *site_pair(size_t n)
{
	void *p = malloc(n);	/* LINE:site_pair */

	sink = p;
	return p;
}

static inline __attribute__((always_inline)) void *inl_alloc(size_t n)
{
	void *p = malloc(n);	/* LINE:inl_alloc */

	sink = p;
	return p;
}

SITE void *site_inline(size_t n)
{
	void *p = inl_alloc(n);	/* LINE:site_inline */

	sink = p;
	return p;
}

SITE void *site_grow(void)
{
	char *p = malloc(10);	/* LINE:site_grow_malloc */

	p[0] = 1;
	sink = p;
	p = realloc(p, 1000);	/* LINE:site_grow_realloc */
	sink = p;
	return p;
}

SITE void site_free(void *p)
{
	free(p);
	sink = NULL;
}

SITE void site_peak(void)
{
	void *blocks[10], *big;
	int i;

	for (i = 0; i < 10; i++)
		blocks[i] = site_block(1000);
	big = site_large(200000);
	if (slow)
		usleep(50000);
	site_free(big);
	for (i = 0; i < 10; i++)
		site_free(blocks[i]);
}

SITE void site_map(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,	/* LINE:site_map */
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *q = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	munmap(p + page, page);
	munmap(q, page);
	sink = p;
}

SITE void run(void)
{
	void *a, *b;
	int i;

	for (i = 0; i < 3; i++)
		site_leak(77);
	site_peak();
	if (slow)
		usleep(50000);
	for (i = 0; i < 5; i++)
		site_free(site_temp(64));
	a = site_pair(32);
	b = site_pair(48);
	site_free(b);
	site_free(a);
	for (i = 0; i < 4; i++)
		site_free(site_inline(24));
	site_free(site_grow());
	site_map();
}

int main(int argc, char **argv)
{
	slow = argc > 1 && !strcmp(argv[1], "slow");
	SYM(main);
	SYM(run);
	SYM(site_leak);
	SYM(site_block);
	SYM(site_large);
	SYM(site_temp);
	SYM(site_pair);
	SYM(site_inline);
	SYM(site_grow);
	SYM(site_peak);
	SYM(site_map);
	fflush(stdout);
	run();
	return 0;
}
