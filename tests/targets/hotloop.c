/*
 * hotloop - a CPU-bound test target with known shares: hot_function()
 * runs the same loop as cold_function() three times as often, so a
 * profile should charge 75% of their time to hot_function and 25% to
 * cold_function.
 *
 *	hotloop [ROUNDS]	(default 60; a round takes a few milliseconds)
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

void hot_function(unsigned long n);
void cold_function(unsigned long n);

/* noinline + noipa: two real, separate functions in every build */
__attribute__((noinline, noipa)) void hot_function(unsigned long n)
{
	unsigned long i, x = 1, end = 3 * n;

	for (i = 0; i < end; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink = x;
	}
}

__attribute__((noinline, noipa)) void cold_function(unsigned long n)
{
	unsigned long i, x = 2, end = n;

	for (i = 0; i < end; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink = x;
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 60;
	long r;

	for (r = 0; r < rounds; r++) {
		hot_function(1000000);
		cold_function(1000000);
	}
	printf("%lu\n", (unsigned long)sink);
	return 0;
}
