/*
 * dlswap_b - one of the two libraries dlswap loads in turn at one address
 * (dlswap_a is the other): it allocates when loaded and when called.
 */
#include <stdlib.h>
#include "target.h"

static void *volatile sink;

SITE void *site_b_ctor(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_b(size_t n) { void *p = malloc(n); sink = p; return p; }

__attribute__((constructor)) static void lib_init(void)
{
	free(site_b_ctor(601));
}

SITE void work_b(void)
{
	free(site_b(602));
}

SITE void lib_syms(void)
{
	SYM(site_b_ctor);
	SYM(site_b);
	SYM(work_b);
}

void (*lib_work)(void) = work_b;
