/*
 * forker - allocations before a fork, in the child and in the parent after
 * it; the child's are at site_child, the parent's at site_parent.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "target.h"

static void *volatile sink;

SITE void *site_parent(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_child(size_t n) { void *p = malloc(n); sink = p; return p; }

int main(void)
{
	pid_t pid;
	int i, status;

	SYM(main);
	SYM(site_parent);
	SYM(site_child);
	for (i = 0; i < 3; i++)
		free(site_parent(300));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < 5; i++)
			free(site_child(500));
		printf("child %d\n", (int)getpid());
		printf("expect alloc malloc 500 5 main;site_child\n");
		printf("expect free malloc 500 5 main;site_child\n");
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	for (i = 0; i < 2; i++)
		free(site_parent(300));
	printf("expect alloc malloc 300 5 main;site_parent\n");
	printf("expect free malloc 300 5 main;site_parent\n");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
