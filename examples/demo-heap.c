/*
 * demo-heap - a small program with the memory habits heapscope is made to
 * find: a cache that never frees (a leak), short-lived buffers (temporary
 * allocations), a growing array (realloc) and one large block.
 *
 *   heapscope run -- build/examples/demo-heap
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct record {
	int id;
	char *name;
};

static struct record **cache;
static size_t cache_len;

/* Every record is kept: the cache is never freed, so it leaks at exit. */
static __attribute__((noinline)) void cache_insert(int id, const char *name)
{
	struct record *r = malloc(sizeof(*r));

	r->id = id;
	r->name = strdup(name);
	cache = realloc(cache, (cache_len + 1) * sizeof(*cache));
	cache[cache_len++] = r;
}

/* A scratch buffer per line, freed at once: temporary allocations. */
static __attribute__((noinline)) int parse_line(int i)
{
	char *line = malloc(256);
	int sum = 0;

	snprintf(line, 256, "record-%d,%d,%d", i, i * 7, i % 13);
	for (char *p = line; *p; p++)
		sum += *p;
	free(line);
	return sum;
}

/* One large block (>= 128 KiB), used and released. */
static __attribute__((noinline)) long build_index(int n)
{
	int *index = calloc((size_t)n, sizeof(*index));
	long total = 0;

	for (int i = 0; i < n; i++)
		index[i] = i * 31 % n;
	for (int i = 0; i < n; i++)
		total += index[i];
	free(index);
	return total;
}

static __attribute__((noinline)) void load_records(int n)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		int sum = parse_line(i);

		if (sum % 4 == 0) {
			snprintf(name, sizeof(name), "rec%d", i);
			cache_insert(i, name);
		}
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	long total;

	load_records(n);
	total = build_index(64 * 1024);
	printf("demo-heap: %zu records cached, index sum %ld\n", cache_len, total);
	return 0;
}
