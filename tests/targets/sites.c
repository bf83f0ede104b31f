/*
 * sites - allocations whose every call site, count, size and stack is
 * known: each allocation function, a realloc chain, leaks, nested calls
 * and anonymous mmap.
 */
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "target.h"

static void *volatile sink;

SITE void *site_malloc(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_calloc(size_t a, size_t b) { void *p = calloc(a, b); sink = p; return p; }
SITE void *site_posix_memalign(size_t align, size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, align, n))
		return NULL;
	sink = p;
	return p;
}
SITE void *site_aligned_alloc(size_t a, size_t n) { void *p = aligned_alloc(a, n); sink = p; return p; }
SITE void *site_memalign(size_t a, size_t n) { void *p = memalign(a, n); sink = p; return p; }
SITE void *site_valloc(size_t n) { void *p = valloc(n); sink = p; return p; }
SITE void *site_pvalloc(size_t n) { void *p = pvalloc(n); sink = p; return p; }
SITE void *site_reallocarray(void *q, size_t a, size_t b)
{
	void *p = reallocarray(q, a, b);

	sink = p;
	return p;
}

static void *volatile null;

/* A realloc chain: four call sites of realloc in one function. */
SITE void *site_realloc_chain(void)
{
	char *p = realloc(null, 10);	/* not NULL itself: gcc makes that malloc */

	p[0] = 1;
	p = realloc(p, 20);
	p[1] = 2;
	p = realloc(p, 4000);
	p[2] = 3;
	p = realloc(p, 100000);
	sink = p;
	return p;
}

SITE void site_free(void *p) { free(p); sink = NULL; }

SITE void *site_leak(size_t n) { void *p = malloc(n); sink = p; return p; }

SITE void *site_deep(void) { void *p = malloc(1234); sink = p; return p; }
SITE void *middle(void) { void *p = site_deep(); sink = p; return p; }
SITE void *outer(void) { void *p = middle(); sink = p; return p; }

SITE void *site_mmap(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	sink = p;
	return p;
}

SITE void *site_mremap(void *p, size_t from, size_t to)
{
	void *q = mremap(p, from, to, MREMAP_MAYMOVE);

	sink = q;
	return q;
}

SITE void run_sites(void)
{
	void *p[16];
	int i;

	for (i = 0; i < 10; i++)
		p[i] = site_malloc(100);
	for (i = 0; i < 10; i++)
		site_free(p[i]);
	for (i = 0; i < 5; i++)
		p[i] = site_calloc(4, 25);
	for (i = 0; i < 5; i++)
		site_free(p[i]);
	site_free(site_posix_memalign(64, 200));
	site_free(site_aligned_alloc(128, 256));
	site_free(site_memalign(32, 50));
	site_free(site_valloc(300));
	site_free(site_pvalloc(5000));
	p[0] = site_reallocarray(NULL, 3, 7);
	site_free(site_reallocarray(p[0], 5, 7));
	site_free(site_realloc_chain());
	for (i = 0; i < 3; i++)
		site_leak(77);
	site_free(outer());
	site_free(outer());
	p[0] = site_mmap(65536);
	munmap(p[0], 65536);
	/* a mapping that grows, then goes */
	p[0] = site_mremap(site_mmap(8192), 8192, 262144);
	munmap(p[0], 262144);
	/* an overflowing reallocarray fails and leaves its block alone */
	p[0] = site_reallocarray(NULL, 2, 8);
	if (!site_reallocarray(p[0], (size_t)1 << 32, (size_t)1 << 32))
		site_free(p[0]);
}

int main(void)
{
	SYM(main);
	SYM(run_sites);
	SYM(site_malloc);
	SYM(site_calloc);
	SYM(site_posix_memalign);
	SYM(site_aligned_alloc);
	SYM(site_memalign);
	SYM(site_valloc);
	SYM(site_pvalloc);
	SYM(site_reallocarray);
	SYM(site_realloc_chain);
	SYM(site_free);
	SYM(site_leak);
	SYM(site_deep);
	SYM(middle);
	SYM(outer);
	SYM(site_mmap);
	SYM(site_mremap);
	fflush(stdout);
	run_sites();
	printf("expect alloc malloc 100 10 main;run_sites;site_malloc\n");
	printf("expect free malloc 100 10 main;run_sites;site_malloc\n");
	printf("expect alloc calloc 100 5 main;run_sites;site_calloc\n");
	printf("expect free calloc 100 5 main;run_sites;site_calloc\n");
	printf("expect alloc posix_memalign 200 1 main;run_sites;site_posix_memalign\n");
	printf("expect free posix_memalign 200 1 main;run_sites;site_posix_memalign\n");
	printf("expect alloc aligned_alloc 256 1 main;run_sites;site_aligned_alloc\n");
	printf("expect free aligned_alloc 256 1 main;run_sites;site_aligned_alloc\n");
	printf("expect alloc memalign 50 1 main;run_sites;site_memalign\n");
	printf("expect free memalign 50 1 main;run_sites;site_memalign\n");
	printf("expect alloc valloc 300 1 main;run_sites;site_valloc\n");
	printf("expect free valloc 300 1 main;run_sites;site_valloc\n");
	printf("expect alloc pvalloc 5000 1 main;run_sites;site_pvalloc\n");
	printf("expect free pvalloc 5000 1 main;run_sites;site_pvalloc\n");
	printf("expect alloc reallocarray 21 1 main;run_sites;site_reallocarray\n");
	printf("expect free reallocarray 21 1 main;run_sites;site_reallocarray\n");
	printf("expect alloc reallocarray 35 1 main;run_sites;site_reallocarray\n");
	printf("expect free reallocarray 35 1 main;run_sites;site_reallocarray\n");
	printf("expect alloc realloc 10 1 main;run_sites;site_realloc_chain\n");
	printf("expect free realloc 10 1 main;run_sites;site_realloc_chain\n");
	printf("expect alloc realloc 20 1 main;run_sites;site_realloc_chain\n");
	printf("expect free realloc 20 1 main;run_sites;site_realloc_chain\n");
	printf("expect alloc realloc 4000 1 main;run_sites;site_realloc_chain\n");
	printf("expect free realloc 4000 1 main;run_sites;site_realloc_chain\n");
	printf("expect alloc realloc 100000 1 main;run_sites;site_realloc_chain\n");
	printf("expect free realloc 100000 1 main;run_sites;site_realloc_chain\n");
	printf("expect alloc malloc 77 3 main;run_sites;site_leak\n");
	printf("expect alloc malloc 1234 2 main;run_sites;outer;middle;site_deep\n");
	printf("expect free malloc 1234 2 main;run_sites;outer;middle;site_deep\n");
	printf("expect mmap mmap 65536 1 main;run_sites;site_mmap\n");
	printf("expect munmap mmap 65536 1 main;run_sites;site_mmap\n");
	printf("expect mmap mmap 8192 1 main;run_sites;site_mmap\n");
	printf("expect munmap mmap 8192 1 main;run_sites;site_mmap\n");
	printf("expect mmap mremap 262144 1 main;run_sites;site_mremap\n");
	printf("expect munmap mremap 262144 1 main;run_sites;site_mremap\n");
	printf("expect alloc reallocarray 16 1 main;run_sites;site_reallocarray\n");
	printf("expect free reallocarray 16 1 main;run_sites;site_reallocarray\n");
	return 0;
}
