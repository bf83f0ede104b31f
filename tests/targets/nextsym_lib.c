/*
 * nextsym_lib - two libraries of nextsym, from this one file: the outer
 * one (HS_NEXT_OUTER) wraps hs_next_probe() and reaches the inner one's
 * with dlsym(RTLD_NEXT), as interposing libraries do. RTLD_NEXT searches
 * after the library that called dlsym(): if that were the collector (its
 * own dlsym() calling the real one), the outer library would find itself.
 */
#ifdef HS_NEXT_OUTER
#include <dlfcn.h>
#include <stddef.h>

/* the inner library's: so that the outer one is linked against it */
extern int hs_next_inner_loaded;
int hs_next_probe(void);

int hs_next_probe(void)
{
	int (*next)(void) = NULL;

	*(void **)&next = dlsym(RTLD_NEXT, "hs_next_probe");
	if (!hs_next_inner_loaded || !next || next == hs_next_probe)
		return -1;
	return next() + 1;
}
#else
int hs_next_inner_loaded = 1;
int hs_next_probe(void);

int hs_next_probe(void)
{
	return 41;
}
#endif
