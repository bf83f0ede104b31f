/*
 * demangle - C++ and Rust names through libiberty's cplus_demangle().
 *
 * Debian's libiberty-dev ships only a static libiberty.a and its headers
 * under /usr/include/libiberty; cplus_demangle() in auto style tries Rust
 * (legacy and v0) first, then the Itanium C++ ABI, so one call covers the
 * languages heapscope meets. Its result comes from malloc() and is freed
 * here with free().
 */
#include "symbols/symbols.h"
#include "common/buf.h"
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

/* Only names that look mangled reach the demangler: plain C names never
 * do, which keeps "main" from being parsed as anything. */
static int looks_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

int hs_sym_demangle(const char *name, struct hs_buf *out)
{
	char *d;
	int err;

	if (!name || !looks_mangled(name))
		return 0;
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (!d)
		return 0;
	err = hs_buf_adds(out, d);
	free(d);
	return err ? err : 1;
}
