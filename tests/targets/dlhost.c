/*
 * dlhost - prints a line (stdout's buffer: a known exit-time allocation of
 * libc), then loads LIBRARY with dlopen and keeps it loaded (the dynamic
 * linker's data for it stays live: known exit-time allocations too).
 *   dlhost LIBRARY
 */
#include <dlfcn.h>
#include "target.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	printf("loading %s\n", argv[1]);
	if (!dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "dlhost: %s\n", dlerror());
		return 1;
	}
	return 0;
}
