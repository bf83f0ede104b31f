/*
 * dlopener - loads the library dlib with dlopen, calls it, unloads it.
 *   dlopener LIBRARY
 */
#include <dlfcn.h>
#include <stdlib.h>
#include "target.h"

int main(int argc, char **argv)
{
	void (*work)(int), (*syms)(void);
	void *h;

	if (argc < 2)
		return 2;
	SYM(main);
	fflush(stdout);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 1;
	}
	*(void **)&work = dlsym(h, "lib_work");
	*(void **)&syms = dlsym(h, "lib_syms");
	syms();
	work(6);
	printf("expect alloc malloc 4321 1 main;site_lib_ctor\n");
	printf("expect free malloc 4321 1 main;site_lib_ctor\n");
	printf("expect alloc malloc 999 6 main;lib_work;site_lib\n");
	printf("expect free malloc 999 6 main;lib_work;site_lib\n");
	fflush(stdout);
	dlclose(h);
	return 0;
}
