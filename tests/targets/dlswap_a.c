/*
 * dlswap_a - one of the two libraries dlswap loads in turn at one address
 * (dlswap_b is the other): it allocates when loaded and when called.
 */
#include <stdlib.h>
#include "target.h"

static void *volatile sink;

SITE void *site_a_ctor(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_a(size_t n) { void *p = malloc(n); sink = p; return p; }

__attribute__((constructor)) static void lib_init(void)
{
	free(site_a_ctor(501));
}

SITE void work_a(void)
{
	free(site_a(502));
}

SITE void lib_syms(void)
{
	SYM(site_a_ctor);
	SYM(site_a);
	SYM(work_a);
}

void (*lib_work)(void) = work_a;
