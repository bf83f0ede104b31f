/*
 * execer - allocates, then replaces itself (exec) with "execer second",
 * which allocates at another site.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target.h"

static void *volatile sink;

SITE void *site_first(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_second(size_t n) { void *p = malloc(n); sink = p; return p; }

int main(int argc, char **argv)
{
	int i;

	SYM(main);
	SYM(site_first);
	SYM(site_second);
	if (argc > 1 && !strcmp(argv[1], "second")) {
		for (i = 0; i < 4; i++)
			free(site_second(222));
		printf("second %d\n", (int)getpid());
		printf("expect alloc malloc 222 4 main;site_second\n");
		printf("expect free malloc 222 4 main;site_second\n");
		return 5;
	}
	for (i = 0; i < 3; i++)
		free(site_first(111));
	printf("expect alloc malloc 111 3 main;site_first\n");
	printf("expect free malloc 111 3 main;site_first\n");
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "second", (char *)NULL);
	return 99;
}
