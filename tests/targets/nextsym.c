/*
 * nextsym - prints what hs_next_probe() returns through its two libraries
 * (nextsym_lib.c): 42 when dlsym(RTLD_NEXT) in the outer one finds the
 * inner one, -1 when it finds the outer one itself.
 */
#include "target.h"

int hs_next_probe(void);

int main(void)
{
	int v = hs_next_probe();

	printf("probe %d\n", v);
	return v == 42 ? 0 : 1;
}
