#ifndef HS_IO_PERF_SCRIPT_H
#define HS_IO_PERF_SCRIPT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "common/diag.h"
#include "io/io.h"
#include "model/stack_source.h"
#include "common/log.h"

/*
 * perf_script - what the `perf script` importer (import_perf_script.c)
 * shares with the .trace.zip importer (import_trace_zip.c): a hook that
 * names frames perf left unknown from symbol files shipped beside the
 * trace (perf-<pid>.map, perfinfo-<pid>.map and the maps they point to).
 * Internal to src/io.
 */
struct hs__perf_symbols {
	/*
	 * Look up the code address @addr of process @pid for a frame whose
	 * module or symbol is "unknown"; @module (@module_len bytes) is the
	 * frame's module file name. On a hit return 1, point *@sym at the
	 * symbol text of the map file and *@module_out at the module to use
	 * when that text names no "[Assembly]" (both borrowed until the next
	 * call); return 0 when nothing is known, or a negative errno, in
	 * which case the import fails with that error.
	 */
	int (*lookup)(void *ctx, uint32_t pid, uint64_t addr, const char *module,
		      size_t module_len, const char **sym, size_t *sym_len,
		      const char **module_out, size_t *module_out_len);
	void *ctx;
};

/*
 * hs_import_perf_script_view() with an optional symbol hook (@syms may be
 * NULL). Borrows @f and @syms; appends to @out; fills @diag on error.
 */
HS_MUST_CHECK
int hs__import_perf_script(FILE *f, enum hs_perf_view view, struct hs_stack_source *out,
			   struct hs_diag *diag, const struct hs__perf_symbols *syms);

/*
 * The bytes of a @bytes text that the calling thread of a @threads-part
 * import parses itself (the others' parts about @part_bytes each): less
 * than a part, since it also merges the others'. For @threads >= 2.
 */
size_t hs__ps_first_part_bytes(size_t bytes, size_t threads, size_t part_bytes);
#endif
