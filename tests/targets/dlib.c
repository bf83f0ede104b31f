/* dlib - a library loaded with dlopen: it allocates when loaded and when called. */
#include <stdlib.h>
#include "target.h"

static void *volatile sink;

SITE void *site_lib_ctor(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_lib(size_t n) { void *p = malloc(n); sink = p; return p; }

__attribute__((constructor)) static void lib_init(void)
{
	free(site_lib_ctor(4321));
}

SITE void lib_work(int times)
{
	int i;

	for (i = 0; i < times; i++)
		free(site_lib(999));
}

SITE void lib_syms(void)
{
	SYM(site_lib_ctor);
	SYM(site_lib);
	SYM(lib_work);
}
