/*
 * dlswap - loads library A with dlopen, calls it, unloads it, then
 * library B, which the loader puts at the addresses A had; twice.
 *   dlswap LIBRARY_A LIBRARY_B     (libhsdlswap_a.so, libhsdlswap_b.so)
 * Prints where each load put the library ("base 0x..."), for the test
 * to check that they shared it.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include "target.h"

static int load(const char *path, int syms)
{
	struct link_map *lm;
	void (**work)(void), (*lib_syms)(void);
	void *h = dlopen(path, RTLD_NOW);

	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm)) {
		fprintf(stderr, "dlswap: %s\n", dlerror());
		return 1;
	}
	*(void **)&work = dlsym(h, "lib_work");
	*(void **)&lib_syms = dlsym(h, "lib_syms");
	if (!work || !lib_syms) {
		fprintf(stderr, "dlswap: %s\n", dlerror());
		return 1;
	}
	printf("base 0x%lx\n", (unsigned long)lm->l_addr);
	if (syms)
		lib_syms();
	(*work)();
	fflush(stdout);
	dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	int round;

	if (argc < 3)
		return 2;
	SYM(main);
	for (round = 0; round < 2; round++)
		if (load(argv[1], !round) || load(argv[2], !round))
			return 1;
	printf("expect alloc malloc 501 2 main;site_a_ctor\n");
	printf("expect free malloc 501 2 main;site_a_ctor\n");
	printf("expect alloc malloc 502 2 main;work_a;site_a\n");
	printf("expect free malloc 502 2 main;work_a;site_a\n");
	printf("expect alloc malloc 601 2 main;site_b_ctor\n");
	printf("expect free malloc 601 2 main;site_b_ctor\n");
	printf("expect alloc malloc 602 2 main;work_b;site_b\n");
	printf("expect free malloc 602 2 main;work_b;site_b\n");
	return 0;
}
