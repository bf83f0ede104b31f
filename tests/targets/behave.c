/*
 * behave - checks from inside that the collector changes nothing the
 * program can see: errno across allocations, signal dispositions, the
 * first free file descriptor, its own output and exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target.h"

int main(void)
{
	struct sigaction sa;
	void *p;
	int fd;

	errno = 1234;
	p = malloc(100);
	printf("errno after malloc: %d\n", errno);
	free(p);
	printf("errno after free: %d\n", errno);
	sigaction(SIGSEGV, NULL, &sa);
	printf("SIGSEGV handler is default: %s\n", sa.sa_handler == SIG_DFL ? "yes" : "no");
	sigaction(SIGTERM, NULL, &sa);
	printf("SIGTERM handler is default: %s\n", sa.sa_handler == SIG_DFL ? "yes" : "no");
	printf("SIGINT handler: %s\n", signal(SIGINT, SIG_IGN) == SIG_DFL ? "default" : "other");
	fd = open("/dev/null", O_RDONLY);
	printf("first fd: %d\n", fd);
	fprintf(stderr, "a line on stderr\n");
	return 42;
}
