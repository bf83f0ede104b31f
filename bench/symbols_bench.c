/*
 * symbols_bench - how fast src/symbols resolves addresses.
 *
 *   symbols_bench [FILE [MAX]]
 *
 * Takes up to MAX (default 20000) distinct addresses inside the functions
 * of FILE's .symtab (default: this program), in a fixed shuffled order:
 * every function's first byte, then one address every 16 bytes. Looks
 * them all up once in a fresh symbolizer (cold: DWARF read, nothing
 * cached), then again (warm: every answer from the cache), and prints
 * addresses per second for both and the frames found. The first lookup,
 * which opens the module and indexes its DWARF, is timed on its own.
 */
#include "symbols/symbols.h"
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Function addresses of @path from its symbol table, through libdwfl. */
static size_t collect(const char *path, uint64_t *addr, size_t max)
{
	static char *dpath;
	static const Dwfl_Callbacks cb = {
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &dpath,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *m;
	size_t n = 0, round, k;
	int i, nsym;

	m = dwfl ? dwfl_report_elf(dwfl, "x", path, -1, 0, true) : NULL;
	if (!m) {
		fprintf(stderr, "symbols_bench: cannot read '%s': %s\n", path,
			dwfl_errmsg(-1));
		exit(1);
	}
	dwfl_report_end(dwfl, NULL, NULL);
	nsym = dwfl_module_getsymtab(m);
	/* round 0: each function's entry; round r: entry + 16 r */
	for (round = 0; n < max && round < 4096; round++) {
		size_t before = n;

		for (i = 1; i < nsym && n < max; i++) {
			GElf_Sym sym;
			GElf_Addr a;
			const char *name = dwfl_module_getsym_info(m, i, &sym, &a,
								   NULL, NULL, NULL);

			if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || 16 * round >= sym.st_size)
				continue;
			addr[n++] = a + 16 * round;
		}
		if (n == before)
			break;
	}
	dwfl_end(dwfl);
	qsort(addr, n, sizeof(*addr), cmp_u64);
	for (k = 0; k + 1 < n;) {	/* aliases share addresses */
		if (addr[k] == addr[k + 1]) {
			memmove(addr + k, addr + k + 1, (n - k - 1) * sizeof(*addr));
			n--;
		} else {
			k++;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/proc/self/exe";
	size_t max = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000;
	struct hs_sym_module mod = { .path = path };
	struct hs_symbolizer_stats st;
	struct hs_symbolizer *s;
	struct hs_sym_result r;
	uint64_t *addr, seed = 42;
	size_t n, i, frames = 0, inl = 0, named = 0, lined = 0;
	double t0, t1, t2, t3;

	addr = malloc(max * sizeof(*addr));
	if (!addr || !max)
		return 1;
	n = collect(path, addr, max);
	for (i = n; i > 1; i--) {	/* Fisher-Yates with a fixed seed */
		size_t j;
		uint64_t t;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		j = (size_t)(seed >> 33) % i;
		t = addr[i - 1];
		addr[i - 1] = addr[j];
		addr[j] = t;
	}
	s = hs_symbolizer_new(HS_SYM_NO_DEBUGINFOD);
	if (!s)
		return 1;
	t0 = now();
	if (hs_symbolizer_lookup(s, &mod, addr[0], &r))
		return 1;
	t1 = now();
	for (i = 1; i < n; i++) {
		unsigned k;

		if (hs_symbolizer_lookup(s, &mod, addr[i], &r))
			return 1;
		frames += r.nr_frame;
		for (k = 0; k < r.nr_frame; k++) {
			inl += !!(r.frame[k].flags & HS_SYM_INLINE);
			named += r.frame[k].function != NULL;
			lined += r.frame[k].line != 0;
		}
	}
	t2 = now();
	for (i = 0; i < n; i++)
		if (hs_symbolizer_lookup(s, &mod, addr[i], &r))
			return 1;
	t3 = now();
	hs_symbolizer_stats(s, &st);
	printf("file: %s\n", path);
	printf("addresses: %zu distinct, %zu frames (%zu inline, %zu named, "
	       "%zu with a line)\n", n, frames, inl, named, lined);
	printf("first lookup (open module): %.1f ms\n", (t1 - t0) * 1e3);
	printf("cold: %.0f addresses/s (%.1f us each)\n",
	       (double)(n - 1) / (t2 - t1), (t2 - t1) * 1e6 / (double)(n - 1));
	printf("warm: %.0f lookups/s (%.3f us each)\n", (double)n / (t3 - t2),
	       (t3 - t2) * 1e6 / (double)n);
	printf("cache hits: %zu of %zu lookups; %zu strings\n", st.cache_hits,
	       st.lookups, st.strings);
	hs_symbolizer_free(s);
	free(addr);
	return 0;
}
