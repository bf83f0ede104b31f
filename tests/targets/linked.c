/*
 * linked - linked with dlib at build time, so the library's constructor
 * allocates before main, while the loader initializes libraries.
 */
#include <stdlib.h>
#include "target.h"

void lib_work(int times);
void lib_syms(void);

int main(void)
{
	SYM(main);
	lib_syms();
	lib_work(2);
	printf("expect alloc malloc 4321 1 site_lib_ctor\n");
	printf("expect free malloc 4321 1 site_lib_ctor\n");
	printf("expect alloc malloc 999 2 main;lib_work;site_lib\n");
	printf("expect free malloc 999 2 main;lib_work;site_lib\n");
	return 0;
}
