#ifndef HS_TARGET_H
#define HS_TARGET_H
/*
 * target - what the test targets share: they print, on stdout, where their
 * functions are (so tests can name the frames of a trace without a
 * symbolizer) and what allocations they make, exactly:
 *
 *   sym NAME MODULE 0xSTART 0xEND     a function, as offsets in MODULE
 *   expect OP FN SIZE COUNT STACK     COUNT events at call sites whose
 *                                     innermost frame is a site_* function
 *
 * OP is alloc or free (a free is listed under the allocation it frees:
 * its function and size), STACK the target's own functions, outermost
 * first, joined by ';'. tests/integration/trace-check.awk computes the
 * same lines from `heapscope dump --events`.
 *
 * Targets are built without optimisations that would remove frames
 * (inlining, sibling calls) and with -rdynamic so dladdr() sees them.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SITE __attribute__((noinline, noclone, used))

static inline void target_sym(const char *name, void *fn)
{
	Dl_info info;
	struct link_map *lm = NULL;
	const ElfW(Sym) *sym = NULL;
	char exe[4096];
	const char *mod;
	uintptr_t start;

	if (!dladdr1(fn, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
		fprintf(stderr, "target: no symbol for %s\n", name);
		return;
	}
	mod = lm->l_name;
	if (!mod || !mod[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		mod = exe;
	}
	start = (uintptr_t)fn - lm->l_addr;
	printf("sym %s %s 0x%lx 0x%lx\n", name, mod, (unsigned long)start,
	       (unsigned long)(start + sym->st_size));
}

#define SYM(fn) target_sym(#fn, (void *)(fn))
#endif
