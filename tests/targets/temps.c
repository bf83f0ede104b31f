/*
 * temps - a program whose temporary allocations are known exactly, for
 * the temporary view of full and sampled traces (t5200). Each of N
 * rounds (argument, default 50000):
 *
 *   site_temp      malloc(256), free          temporary
 *   site_between   malloc(4096), then         not temporary: the next
 *   site_small     malloc(64), free both      allocation came first;
 *                                             the 64 bytes are temporary
 *   site_grow      malloc(128), realloc to    both temporary: the
 *                  1024, free                 realloc frees the latest
 *                                             block, then allocates
 *   site_kept      malloc(512)                freed after the rounds
 *
 * then site_end's malloc(32), the kept blocks freed, and it freed last:
 * temporary. So 4N + 1 temporary allocations of N * (256 + 64 + 128 +
 * 1024) + 32 bytes. Under --sample-bytes a sampled 4096-byte block is almost
 * always followed by an unsampled 64-byte one: a test on the recorded
 * allocations alone would count it temporary.
 */
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) static void *site_temp(void) { return malloc(256); }
__attribute__((noinline)) static void *site_between(void) { return malloc(4096); }
__attribute__((noinline)) static void *site_small(void) { return malloc(64); }
__attribute__((noinline)) static void *site_grow(void)
{
	void *p = malloc(128);

	sink = p;
	return p ? realloc(p, 1024) : NULL;
}
__attribute__((noinline)) static void *site_kept(void) { return malloc(512); }
__attribute__((noinline)) static void *site_end(void) { return malloc(32); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000, i;
	void **kept = calloc((size_t)n, sizeof(*kept)), *end;
	void *big, *small;

	if (!kept)
		return 1;
	for (i = 0; i < n; i++) {
		sink = site_temp();
		free(sink);
		big = site_between();
		small = site_small();
		sink = big;
		free(big);
		sink = small;
		free(small);
		sink = site_grow();
		free(sink);
		kept[i] = site_kept();
	}
	end = site_end();
	sink = end;
	for (i = 0; i < n; i++)
		free(kept[i]);
	free(kept);
	free(end);
	return 0;
}
