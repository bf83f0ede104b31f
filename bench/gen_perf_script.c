/*
 * gen_perf_script - write a realistic `perf script` text of about N bytes
 * for benchmarking the importer.
 *
 *	gen_perf_script BYTES [SEED] > out.data.txt
 *
 * The text looks like `perf record -g -a` output printed with
 * `perf script -F comm,pid,tid,cpu,time,period,event,ip,sym,dso,symoff`:
 * a dozen processes with a few threads each (some command names with
 * spaces, digits and slashes), 8 CPUs, a program of 20000 functions in
 * 40 modules whose call graph is walked at random (stacks 4 to 60 deep,
 * so there are very many distinct stacks), kernel frames on top of a
 * fifth of the samples, C++-like symbol names with +0x offsets, and a
 * sched_switch tracepoint every 20 samples. Deterministic for a seed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR_FUNCS 20000
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

static struct func funcs[NR_FUNCS];
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
	for (i = 0; i < NR_FUNCS; i++) {
		struct func *f = &funcs[i];

		make_name(f->name, sizeof(f->name), i);
		f->module = i < 100 ? 0 : (int)below(NR_MODULES);
		f->base = 0x1000 + (uint64_t)i * 0x400;
		for (j = 0; j < NR_CALLEES; j++) {
			/* mostly call "later" functions, so walks get deeper */
			f->callee[j] = (int)((i + 1 + below(NR_FUNCS / 8)) % NR_FUNCS);
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

int main(int argc, char **argv)
{
	unsigned long long want, written = 0;
	uint64_t t_us = 1000000ull * 12345;	/* microseconds */
	unsigned long sample = 0;
	char line[512];
	int chain[64], kchain[16];
	static char obuf[1 << 20];

	if (argc < 2) {
		fprintf(stderr, "usage: gen_perf_script BYTES [SEED]\n");
		return 2;
	}
	want = strtoull(argv[1], NULL, 10);
	rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) | 1 : 88172645463325252ull;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	setup();

	while (written < want) {
		const struct proc *p = &procs[below(sizeof(procs) / sizeof(procs[0]))];
		int tid = p->pid + (int)below((unsigned)p->nr_threads);
		int cpu = (int)below(NR_CPUS), depth, kdepth = 0, i, n;
		unsigned long long sec, usec;
		unsigned f;

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
			for (i = 0; i < 3; i++) {
				const struct func *k = &kfuncs[i];

				n = printf("\t%16llx %s+0x40 ([kernel.kallsyms])\n",
					   (unsigned long long)(k->base + 0x40), k->name);
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

		/* a random walk down the call graph from this process's main */
		depth = 4 + (int)below(57);
		f = (unsigned)(p - procs) * 7;
		for (i = 0; i < depth; i++) {
			chain[i] = (int)f;
			f = (unsigned)funcs[f].callee[below(NR_CALLEES)];
		}
		if (below(5) == 0) {
			kdepth = 3 + (int)below(8);
			f = below(NR_KFUNCS);
			for (i = 0; i < kdepth; i++) {
				kchain[i] = (int)f;
				f = (unsigned)kfuncs[f].callee[below(NR_CALLEES)];
			}
		}
		/* leaf first: kernel frames, then user frames */
		for (i = kdepth - 1; i >= 0; i--) {
			const struct func *k = &kfuncs[kchain[i]];
			unsigned off = i == kdepth - 1 ? 0x8 * below(32) : k->callsite[0];

			n = printf("\t%16llx %s+0x%x ([kernel.kallsyms])\n",
				   (unsigned long long)(k->base + off), k->name, off);
			written += (unsigned long long)n;
		}
		for (i = depth - 1; i >= 0; i--) {
			const struct func *u = &funcs[chain[i]];
			unsigned off;

			if (i == depth - 1)
				off = 0x4 * below(64);	/* leaf: the sampled IP */
			else	/* return address into the caller */
				off = u->callsite[(chain[i + 1] + i) % NR_CALLEES];
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
	return fflush(stdout) ? 1 : 0;
}
