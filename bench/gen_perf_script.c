/*
 * gen_perf_script - write a realistic `perf script` text of about N bytes
 * for benchmarking the importer.
 *
 *	gen_perf_script BYTES [SEED [FUNCS [PATHS]]] > out.data.txt
 *
 * The text looks like `perf record -g -a` output printed with
 * `perf script -F comm,pid,tid,cpu,time,period,event,ip,sym,dso,symoff`:
 * a dozen processes with a few threads each (some command names with
 * spaces, digits and slashes), 8 CPUs, a program of FUNCS functions
 * (default 20000) in 40 modules whose call graph is walked at random
 * (stacks 4 to 60 deep), kernel frames on top of a fifth of the samples,
 * C++-like symbol names with +0x offsets, and a sched_switch tracepoint
 * every 20 samples. Deterministic for a seed.
 *
 * PATHS 0 (the default) walks the call graph afresh for every sample, so
 * nearly every sample brings stacks of its own below its first few
 * frames: about 26 new interned stacks per sample, the worst case for
 * memory. PATHS N > 0 makes N walks (user and kernel frames) up front and
 * gives each sample one of them, the low-numbered ones far more often,
 * as a program's hot paths are: a profile whose distinct stacks stop
 * growing with its samples. The defaults write the same text as before
 * these parameters existed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FUNCS 20000
#define MAX_FUNCS 1000000
#define NR_KFUNCS 2000
#define NR_MODULES 40
#define NR_CALLEES 4
#define NR_CPUS 8

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

struct func {
	char name[96];
	int module;
	uint64_t base;
	int callee[NR_CALLEES];
	unsigned callsite[NR_CALLEES];	/* return-address offsets */
};

static struct func *funcs;
static unsigned nr_funcs = DEFAULT_FUNCS;
static struct func kfuncs[NR_KFUNCS];
static char modules[NR_MODULES][64];

static const char *const words[] = {
	"parse", "render", "Buffer", "Node", "update", "hash", "Table", "insert",
	"lookup", "std", "vector", "map", "string", "alloc", "free", "Engine",
	"Layout", "Style", "compute", "visit", "Tree", "Json", "Http", "Request",
	"read", "write", "flush", "Cache", "Index", "sort", "merge", "encode",
};

static void make_name(char *out, size_t n, unsigned i)
{
	unsigned a = below(32), b = below(32), c = below(32);

	switch (i % 4) {
	case 0:
		snprintf(out, n, "%s::%s<%s>::%s_%u", words[a], words[b], words[c],
			 words[(a + b) % 32], i);
		break;
	case 1:
		snprintf(out, n, "%s_%s_%u", words[a], words[b], i);
		break;
	case 2:
		snprintf(out, n, "%s::%s::%s%u", words[a], words[b], words[c], i);
		break;
	default:
		snprintf(out, n, "_ZN%zu%s%zu%sE%u", strlen(words[a]), words[a],
			 strlen(words[b]), words[b], i);
	}
}

static void setup(void)
{
	unsigned i, j;

	for (i = 0; i < NR_MODULES; i++) {
		if (i == 0)
			snprintf(modules[i], sizeof(modules[i]), "/usr/bin/server");
		else if (i == 1)
			snprintf(modules[i], sizeof(modules[i]),
				 "/usr/lib/x86_64-linux-gnu/libc.so.6");
		else
			snprintf(modules[i], sizeof(modules[i]),
				 "/usr/lib/x86_64-linux-gnu/lib%s%u.so.%u",
				 words[i % 32], i, 1 + i % 3);
	}
	for (i = 0; i < nr_funcs; i++) {
		struct func *f = &funcs[i];

		make_name(f->name, sizeof(f->name), i);
		f->module = i < 100 ? 0 : (int)below(NR_MODULES);
		f->base = 0x1000 + (uint64_t)i * 0x400;
		for (j = 0; j < NR_CALLEES; j++) {
			/* mostly call "later" functions, so walks get deeper */
			f->callee[j] = (int)((i + 1 + below(nr_funcs / 8)) % nr_funcs);
			f->callsite[j] = 0x10 + below(0x300);
		}
	}
	for (i = 0; i < NR_KFUNCS; i++) {
		struct func *f = &kfuncs[i];

		snprintf(f->name, sizeof(f->name), "%s_%s_k%u", words[below(32)],
			 words[below(32)], i);
		f->base = 0xffffffff81000000ull + (uint64_t)i * 0x800;
		for (j = 0; j < NR_CALLEES; j++) {
			f->callee[j] = (int)((i + 1 + below(64)) % NR_KFUNCS);
			f->callsite[j] = 0x10 + below(0x200);
		}
	}
}

struct proc {
	const char *comm;
	int pid;
	int nr_threads;
};

static const struct proc procs[] = {
	{ "server", 1201, 6 },	{ "server worker", 1202, 4 }, { "kworker/3:1", 87, 1 },
	{ "rs:main Q:Reg", 640, 2 }, { "java", 2300, 8 }, { "python3.11", 3100, 1 },
	{ "node", 4400, 3 }, { "sshd", 900, 1 }, { "swapper/0", 0, 1 },
	{ "postgres", 5100, 2 }, { "my app 2", 6200, 2 }, { "gcc", 7300, 1 },
};
#define NR_PROCS (sizeof(procs) / sizeof(procs[0]))

/* One sample's call chain: user frames from main down, kernel frames. */
struct walk {
	int depth, kdepth;
	int chain[60], kchain[10];
};

/* A random walk down the call graph from the main of process @proc. */
static void make_walk(struct walk *w, unsigned proc)
{
	unsigned f;
	int i;

	w->depth = 4 + (int)below(57);
	w->kdepth = 0;
	f = proc * 7;
	for (i = 0; i < w->depth; i++) {
		w->chain[i] = (int)f;
		f = (unsigned)funcs[f].callee[below(NR_CALLEES)];
	}
	if (below(5) == 0) {
		w->kdepth = 3 + (int)below(8);
		f = below(NR_KFUNCS);
		for (i = 0; i < w->kdepth; i++) {
			w->kchain[i] = (int)f;
			f = (unsigned)kfuncs[f].callee[below(NR_CALLEES)];
		}
	}
}

/* A walk of the pool and its process: low indexes far more often. */
struct pooled {
	unsigned proc;
	struct walk w;
};

static const struct pooled *pick(const struct pooled *pool, unsigned nr)
{
	uint64_t a = below(nr), b = below(nr);

	return &pool[a * b / nr];
}

static int parse_count(const char *s, unsigned long min, unsigned long max,
		       unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long want, written = 0;
	uint64_t t_us = 1000000ull * 12345;	/* microseconds */
	unsigned long sample = 0;
	char line[512];
	unsigned nr_paths = 0, i;
	struct pooled *pool = NULL;
	struct walk fresh;
	static char obuf[1 << 20];

	if (argc < 2 || argc > 5 ||
	    (argc > 3 && parse_count(argv[3], 100, MAX_FUNCS, &nr_funcs)) ||
	    (argc > 4 && parse_count(argv[4], 0, 10000000, &nr_paths))) {
		fprintf(stderr, "usage: gen_perf_script BYTES [SEED [FUNCS [PATHS]]]\n"
				"  FUNCS: 100 to %d (default %d); PATHS: distinct "
				"walks, 0 = a new one per sample (default)\n",
			MAX_FUNCS, DEFAULT_FUNCS);
		return 2;
	}
	want = strtoull(argv[1], NULL, 10);
	rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) | 1 : 88172645463325252ull;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	funcs = calloc(nr_funcs, sizeof(*funcs));
	if (nr_paths)
		pool = calloc(nr_paths, sizeof(*pool));
	if (!funcs || (nr_paths && !pool)) {
		fprintf(stderr, "gen_perf_script: out of memory\n");
		return 1;
	}
	setup();
	for (i = 0; i < nr_paths; i++) {
		pool[i].proc = below(NR_PROCS);
		make_walk(&pool[i].w, pool[i].proc);
	}

	while (written < want) {
		const struct pooled *from = pool ? pick(pool, nr_paths) : NULL;
		const struct proc *p = &procs[from ? from->proc : below(NR_PROCS)];
		int tid = p->pid + (int)below((unsigned)p->nr_threads);
		int cpu = (int)below(NR_CPUS), n, k;
		unsigned long long sec, usec;
		const struct walk *w;

		t_us += 1 + below(250);
		sec = (unsigned long long)(t_us / 1000000);
		usec = (unsigned long long)(t_us % 1000000);
		if (sample++ % 20 == 19) {
			n = snprintf(line, sizeof(line),
				     "%16s %5d/%-5d [%03d] %llu.%06llu:          1 "
				     "sched:sched_switch: prev_comm=%s prev_pid=%d "
				     "prev_prio=120 prev_state=S ==> "
				     "next_comm=swapper/%d next_pid=0 next_prio=120\n",
				     p->comm, p->pid, tid, cpu, sec, usec, p->comm, tid,
				     cpu);
			fwrite(line, 1, (size_t)n, stdout);
			written += (unsigned long long)n;
			for (k = 0; k < 3; k++) {
				const struct func *kf = &kfuncs[k];

				n = printf("\t%16llx %s+0x40 ([kernel.kallsyms])\n",
					   (unsigned long long)(kf->base + 0x40), kf->name);
				written += (unsigned long long)n;
			}
			written += (unsigned long long)printf("\n");
			continue;
		}
		n = snprintf(line, sizeof(line),
			     "%16s %5d/%-5d [%03d] %llu.%06llu:     250000 "
			     "cpu-clock:ppp: \n", p->comm, p->pid, tid, cpu, sec, usec);
		fwrite(line, 1, (size_t)n, stdout);
		written += (unsigned long long)n;

		if (from) {
			w = &from->w;
		} else {
			make_walk(&fresh, (unsigned)(p - procs));
			w = &fresh;
		}
		/* leaf first: kernel frames, then user frames */
		for (k = w->kdepth - 1; k >= 0; k--) {
			const struct func *kf = &kfuncs[w->kchain[k]];
			unsigned off = k == w->kdepth - 1 ? 0x8 * below(32) : kf->callsite[0];

			n = printf("\t%16llx %s+0x%x ([kernel.kallsyms])\n",
				   (unsigned long long)(kf->base + off), kf->name, off);
			written += (unsigned long long)n;
		}
		for (k = w->depth - 1; k >= 0; k--) {
			const struct func *u = &funcs[w->chain[k]];
			unsigned off;

			if (k == w->depth - 1)
				off = 0x4 * below(64);	/* leaf: the sampled IP */
			else	/* return address into the caller */
				off = u->callsite[(w->chain[k + 1] + k) % NR_CALLEES];
			if (below(400) == 0)
				n = printf("\t%16llx [unknown] ([unknown])\n",
					   0x7f0000000000ull + rnd() % 0xfffff);
			else
				n = printf("\t%16llx %s+0x%x (%s)\n",
					   (unsigned long long)(u->base + off), u->name,
					   off, modules[u->module]);
			written += (unsigned long long)n;
		}
		written += (unsigned long long)printf("\n");
	}
	free(pool);
	free(funcs);
	return fflush(stdout) ? 1 : 0;
}
