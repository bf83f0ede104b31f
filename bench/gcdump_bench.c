/*
 * gcdump_bench - a large synthetic .NET heap snapshot, and the time and
 * memory to open it and compute its heap and retained views (issue 16
 * item 6: 10M objects in under 10 s on one core, memory under 3x the
 * file's size).
 *
 *   gcdump_bench gen FILE [OBJECTS]   write a snapshot (default 10000000)
 *   gcdump_bench open FILE            time each step on FILE
 *
 * The generated heap is shaped like an application's rather than a random
 * graph: static variables and handles root collections (List<T> -> T[] ->
 * items, Dictionary<K,V> -> Entry[] -> keys and values), items hold
 * strings and byte arrays, some items are linked lists and trees (a few
 * thousand objects deep), a tenth of the items also point at a shared
 * object elsewhere (so dominators differ from the spanning tree), half
 * the items point at a recent object (an interned string, a shared
 * value), some items point back at their owner (cycles), and 1% of the
 * objects are garbage no root reaches. 1,500 types; 1.3 references an
 * object (tests/data/dotnet/heap-1000.gcdump, a real one, has 1.8: more
 * references make the file larger and the ratio of memory to it lower). The
 * random numbers are a fixed xorshift, so a size gives the same file.
 *
 * `open` makes each view as `report FILE --source NAME` and the GUI do
 * (read the file, build the source, free the graph, build the call tree
 * the views are read off) and prints, per step, the CPU seconds of this
 * process and its peak resident size during the step (VmHWM, reset after
 * each). bench/README.md has the figures.
 */
#include "analysis/calltree.h"
#include "heapgraph/gcdump.h"
#include "heapgraph/gcdump_write.h"
#include "common/alloc.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define NR_TYPES 2000
#define NR_STATICS 2000

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "gcdump_bench: %s: %s\n", what, strerror(-err));
	exit(1);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The peak resident size (VmHWM) since the last reset_peak(), in MB. */
static double peak_mb(void)
{
	char line[256];
	double kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = strtod(line + 6, NULL);
	if (f)
		fclose(f);
	return kb / 1024.0;
}

/* Start a new peak (Linux 4.0+: "5" to clear_refs resets VmHWM). */
static void reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

/* ---- gen ---- */

enum kind { K_LIST, K_ARRAY, K_ITEM, K_STRING, K_BYTES, K_DICT, K_ENTRIES, K_LINK };

/* The edges of the graph being made, as (from, to) pairs, sorted at the end. */
struct edges {
	uint64_t *v; /* from << 32 | to */
	size_t nr, alloc;
};

static void edge(struct edges *e, uint32_t from, uint32_t to)
{
	if (e->nr == e->alloc) {
		e->alloc = e->alloc ? 2 * e->alloc : 1 << 20;
		e->v = realloc(e->v, e->alloc * sizeof(*e->v));
		if (!e->v)
			die("edges", -ENOMEM);
	}
	e->v[e->nr++] = (uint64_t)from << 32 | to;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct gen {
	uint32_t n, next;	/* nodes wanted, next node number */
	uint32_t *type, *size;
	struct edges e;
	uint32_t types[8][NR_TYPES / 8]; /* graph types per kind */
};

static uint32_t node(struct gen *g, enum kind k, uint32_t size)
{
	uint32_t i = g->next++;

	/* items of any of their types, collections of a few; one String, one Byte[] */
	if (k == K_STRING || k == K_BYTES)
		g->type[i] = g->types[k][0];
	else
		g->type[i] = g->types[k][below(k == K_ITEM ? NR_TYPES / 8 : 32)];
	g->size[i] = size;
	return i;
}

/* An item and what it holds: a string, sometimes a byte array, a link chain. */
static uint32_t item(struct gen *g, uint32_t owner, uint32_t budget)
{
	uint32_t it = node(g, K_ITEM, 24 + 8 * below(8)), n = 1;

	if (g->next < g->n && budget > n) {
		edge(&g->e, it, node(g, K_STRING, 26 + 2 * below(40)));
		n++;
	}
	if (g->next < g->n && budget > n && below(4) == 0) {
		edge(&g->e, it, node(g, K_BYTES, 24 + below(2000)));
		n++;
	}
	/* interned strings and shared objects: held by many */
	if (below(2) == 0 && g->next > 100000)
		edge(&g->e, it, g->next - 1 - below(100000));
	if (below(8) == 0)
		edge(&g->e, it, owner); /* a back pointer: a cycle */
	return it;
}

/* A collection of @count items under @holder: List<T> or Dictionary<K,V>. */
static void collection(struct gen *g, uint32_t holder, uint32_t count)
{
	int dict = below(3) == 0;
	uint32_t c = node(g, dict ? K_DICT : K_LIST, dict ? 80 : 32);
	uint32_t arr = node(g, dict ? K_ENTRIES : K_ARRAY, 24 + 8 * count);
	uint32_t i;

	edge(&g->e, holder, c);
	edge(&g->e, c, arr);
	for (i = 0; i < count && g->next + 4 < g->n; i++) {
		uint32_t it = item(g, c, 4);

		edge(&g->e, arr, it);
		if (dict) {
			uint32_t key = node(g, K_STRING, 30 + 2 * below(20));

			edge(&g->e, arr, key);
		}
	}
}

/* A linked list (or a binary tree) of @count items under @holder. */
static void chain(struct gen *g, uint32_t holder, uint32_t count, int tree)
{
	uint32_t first = g->next, i;

	for (i = 0; i < count && g->next + 4 < g->n; i++) {
		uint32_t at = node(g, K_LINK, 40);

		if (i == 0)
			edge(&g->e, holder, at);
		else if (tree)
			edge(&g->e, first + (at - first - 1) / 2, at);
		else
			edge(&g->e, at - 1, at);
		if (g->next + 2 < g->n)
			edge(&g->e, at, node(g, K_STRING, 26 + 2 * below(30)));
	}
}

static int gen(const char *path, uint32_t n)
{
	static const struct {
		const char *pre, *post; /* the type's name: PRE NUMBER POST */
	} kinds[8] = {
	    {"System.Collections.Generic.List<App.T", ">"},
	    {"App.T", "[]"},
	    {"App.Item", ""},
	    {"System.String", NULL},
	    {"System.Byte[]", NULL},
	    {"System.Collections.Generic.Dictionary<System.String,App.T", ">"},
	    {"Entry<System.String,App.T", ">[]"},
	    {"App.Link", ""},
	};
	static const char *const categories[] = {"[static vars]", "[local vars]",
						 "[strong Handles]", "[other roots]"};
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_heapgraph hg;
	struct gen g = {.n = n};
	uint32_t *first, cat_type[4], static_type, root_type, i, k, objects, garbage;
	uint32_t *kids = NULL;
	size_t e, nkids = 0;
	char name[160];
	int err;

	if (n < 100000)
		die("at least 100000 objects", -EINVAL);
	g.type = malloc((size_t)n * sizeof(*g.type));
	g.size = malloc((size_t)n * sizeof(*g.size));
	if (!g.type || !g.size)
		die("gen", -ENOMEM);
	hs_heapgraph_init(&hg);
	err = hs_heapgraph_add_type(&hg, "[.NET Roots]", NULL, 0, &root_type);
	for (i = 0; i < 4 && !err; i++)
		err = hs_heapgraph_add_type(&hg, categories[i], NULL, 0, &cat_type[i]);
	if (!err)
		err = hs_heapgraph_add_type(&hg, "[static var App.Program.s_field]", NULL, 0,
					    &static_type);
	for (k = 0; k < 8 && !err; k++)
		for (i = 0; i < NR_TYPES / 8 && !err; i++) {
			if (kinds[k].post)
				snprintf(name, sizeof(name), "%s%" PRIu32 "%s", kinds[k].pre,
					 i, kinds[k].post);
			else if (i == 0)
				snprintf(name, sizeof(name), "%s", kinds[k].pre);
			else
				break;
			err = hs_heapgraph_add_type(
			    &hg, name,
			    k == K_STRING || k == K_BYTES || k < K_ITEM || k >= K_DICT
				? "System.Private.CoreLib.dll"
				: "App.dll",
			    0, &g.types[k][i]);
		}
	if (err)
		die("types", err);
	/* node 0 the root, 1..4 the categories, then the static vars */
	for (i = 0; i < 5 + NR_STATICS; i++) {
		g.type[i] = i == 0 ? root_type : i < 5 ? cat_type[i - 1] : static_type;
		g.size[i] = 0;
	}
	g.next = 5 + NR_STATICS;
	for (i = 0; i < 4; i++)
		edge(&g.e, 0, 1 + i);
	garbage = n / 100;
	objects = n - garbage;
	/* the statics hold collections of all sizes and some chains */
	while (g.next + 8 < objects) {
		uint32_t st = 5 + below(NR_STATICS), r = below(100);

		if (r < 2)
			chain(&g, st, 1000 + below(4000), r == 0);
		else
			collection(&g, st, r < 80 ? 1 + below(30) : 100 + below(3000));
	}
	for (i = 5; i < 5 + NR_STATICS; i++)
		edge(&g.e, 1, i);
	/* locals and handles root some objects directly */
	for (i = 0; i < 5000; i++)
		edge(&g.e, 2 + below(3), 5 + NR_STATICS + below(objects - 5 - NR_STATICS));
	/* shared objects: a tenth of the objects point at one elsewhere */
	for (i = 5 + NR_STATICS; i < objects; i += 10)
		edge(&g.e, i, 5 + NR_STATICS + below(objects - 5 - NR_STATICS));
	/* garbage: small graphs no root reaches */
	while (g.next < n) {
		uint32_t at = node(&g, K_ITEM, 24 + 8 * below(8));

		if (g.next < n && below(2))
			edge(&g.e, at, node(&g, K_STRING, 26 + 2 * below(30)));
	}
	qsort(g.e.v, g.e.nr, sizeof(*g.e.v), cmp_u64);
	first = calloc((size_t)n + 1, sizeof(*first));
	if (!first)
		die("gen", -ENOMEM);
	for (e = 0; e < g.e.nr; e++)
		first[(g.e.v[e] >> 32) + 1]++;
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	for (i = 0; i < n; i++) {
		uint32_t nr = first[i + 1] - first[i], j;

		if (nr > nkids) {
			nkids = nr;
			kids = realloc(kids, nkids * sizeof(*kids));
			if (!kids)
				die("gen", -ENOMEM);
		}
		for (j = 0; j < nr; j++)
			kids[j] = (uint32_t)g.e.v[first[i] + j];
		err = hs_heapgraph_add_node(&hg, g.type[i], g.size[i],
					    i >= 5 + NR_STATICS ? 0x10000000ull + 64ull * i : 0,
					    kids, nr);
		if (err)
			die("nodes", err);
	}
	hg.root = 0;
	free(first);
	free(kids);
	free(g.e.v);
	free(g.type);
	free(g.size);
	err = hs_gcdump_write_path(path, &hg, NULL, &diag);
	if (err) {
		char msg[600];

		fprintf(stderr, "gcdump_bench: %s\n", hs_diag_format(&diag, msg, sizeof(msg)));
		return 1;
	}
	printf("%s: %" PRIu32 " objects, %zu references, %" PRIu32 " types\n", path,
	       hg.nr_nodes, hg.nr_edges, hg.nr_types);
	hs_heapgraph_release(&hg);
	return 0;
}

/* ---- open ---- */

static double max_peak;

/* Print the CPU time and peak of a step; the next one starts afresh. */
static void step(const char *what, double *t0)
{
	double t = cpu_now(), peak = peak_mb();

	printf("  %-26s %6.2f s cpu  peak RSS %5.0f MB\n", what, t - *t0, peak);
	fflush(stdout);
	if (peak > max_peak)
		max_peak = peak;
	reset_peak();
	*t0 = cpu_now();
}

/*
 * One view as `heapscope report FILE --source NAME` and the GUI make it:
 * read the file into the graph, build the source, free the graph, build
 * the call tree (ByName, CallTree and the others are read off it).
 */
static void one_view(const char *path, int retained, double *t0)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_heapgraph g;
	struct hs_stack_source src;
	struct hs_calltree ct;
	int err;

	hs_heapgraph_init(&g);
	err = hs_gcdump_read_path(path, &g, &diag);
	if (err)
		die("read", err);
	if (!retained)
		printf("  %" PRIu32 " objects, %zu references, graph %.0f MB\n", g.nr_nodes,
		       g.nr_edges, (double)hs_heapgraph_memory(&g) / 1e6);
	step("read", t0);
	/* as hs_import_gcdump() does: the views use no addresses */
	hs_free(g.address);
	g.address = NULL;
	hs_source_init(&src);
	err = retained ? hs_heapgraph_retained_source(&g, &src)
		       : hs_heapgraph_heap_source(&g, &src);
	if (err)
		die("source", err);
	hs_heapgraph_release(&g);
	printf("  %s: %zu samples, %zu stacks\n", retained ? "retained" : "heap",
	       src.nr_samples, src.nr_stacks);
	step(retained ? "retained source" : "heap source", t0);
	err = hs_calltree_build(&ct, &src, &p, &diag);
	if (err)
		die("calltree", err);
	hs_calltree_release(&ct);
	hs_source_release(&src);
	step(retained ? "retained call tree" : "heap call tree", t0);
}

static int open_file(const char *path)
{
	struct stat st;
	double t0, start;

	if (stat(path, &st))
		die(path, -errno);
	printf("%s: %.0f MB\n", path, (double)st.st_size / 1e6);
	reset_peak();
	start = t0 = cpu_now();
	one_view(path, 0, &t0);
	one_view(path, 1, &t0);
	printf("  total %.2f s cpu, peak RSS %.0f MB = %.2fx the file\n", cpu_now() - start,
	       max_peak, max_peak * 1048576.0 / (double)st.st_size);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "gen"))
		return gen(argv[2], argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 10000000);
	if (argc == 3 && !strcmp(argv[1], "open"))
		return open_file(argv[2]);
	fprintf(stderr, "usage: gcdump_bench gen FILE [OBJECTS] | open FILE\n");
	return 2;
}
