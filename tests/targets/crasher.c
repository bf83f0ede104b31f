/*
 * crasher - allocates, then dies: crasher abort|segv|kill|exit7|_exit7
 * (kill: waits 1 s, ten times what the collector needs to write its
 * last events, then SIGKILL).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "target.h"

static void *volatile sink;
static int *volatile nowhere;

SITE void *site_before(size_t n) { void *p = malloc(n); sink = p; return p; }

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "abort";
	struct timespec ts = { 1, 0 };
	int i;

	SYM(main);
	SYM(site_before);
	for (i = 0; i < 50; i++)
		site_before(64);
	printf("expect alloc malloc 64 50 main;site_before\n");
	fflush(stdout);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv"))
		return *nowhere;
	if (!strcmp(how, "kill")) {
		nanosleep(&ts, NULL);
		raise(SIGKILL);
	}
	if (!strcmp(how, "_exit7"))
		_exit(7);
	return 7;
}
