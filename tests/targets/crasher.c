/*
 * crasher - allocates, then dies: crasher abort|segv|overflow|kill|kill-soon|
 * exit7|_exit7 (overflow: unbounded recursion overflows the stack; kill:
 * waits 1 s, ten times what the collector needs to write its last
 * events, then SIGKILL; kill-soon: the same after 300 ms).
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

static volatile int forever = 1;

SITE int recurse(int n)
{
	volatile char frame[512];

	frame[0] = (char)n;
	return forever ? recurse(n + 1) + frame[0] : n;
}

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
	if (!strcmp(how, "overflow"))
		return recurse(0);
	if (!strcmp(how, "kill-soon")) {
		ts.tv_sec = 0;
		ts.tv_nsec = 300 * 1000000;
		nanosleep(&ts, NULL);
		raise(SIGKILL);
	}
	if (!strcmp(how, "kill")) {
		nanosleep(&ts, NULL);
		raise(SIGKILL);
	}
	if (!strcmp(how, "_exit7"))
		_exit(7);
	return 7;
}
