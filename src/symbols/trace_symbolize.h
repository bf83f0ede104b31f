#ifndef HS_SYMBOLS_TRACE_SYMBOLIZE_H
#define HS_SYMBOLS_TRACE_SYMBOLIZE_H
#include <stddef.h>
#include <stdint.h>
#include "common/log.h"

struct hs_diag;

/*
 * trace_symbolize - resolve every code address of a trace's stack tree
 * (symbols.h) and store the result in the trace as its symbol section
 * (docs/trace-format.md, "Symbols"), so that the trace shows names and
 * lines on a machine without the program. What `heapscope run` does at
 * the end and `heapscope symbolize` does again offline.
 *
 * Each distinct (module, address) of the stack tree is looked up once:
 * in its module (by the recorded path and build id, the debug
 * directories, debuginfod), and an address outside every module in the
 * process's perf map (/tmp/perf-PID.map) when there is one.
 *
 * The section replaces the one the trace had (if any) at the end of the
 * file; a chunk the program left half-written is dropped. Ownership: the
 * options are borrowed; a result owns its lists (release it).
 */

struct hs_symbolize_opts {
	const char *const *debug_dirs; /* searched before /usr/lib/debug */
	size_t nr_debug_dirs;
	unsigned flags;	      /* enum hs_symbolizer_flags */
	const char *perf_map; /* a perf map to read; NULL: /tmp/perf-PID.map */
	int no_perf_map;      /* read no perf map */
};

struct hs_symbolize_module {
	char *path; /* owned: the module as recorded */
	char *why;  /* owned: why no symbols were found */
};

struct hs_symbolize_result {
	size_t addresses;  /* distinct addresses looked up */
	size_t found;	   /* ... that name a function */
	size_t with_lines; /* ... with file:line (DWARF) */
	size_t inlined;	   /* ... inside inlined code */
	size_t no_symbol, bad_module, no_module, jit;
	size_t chunks;			 /* SYMBOLS chunks written */
	uint64_t bytes;			 /* their size in the file */
	struct hs_symbolize_module *bad; /* modules without a usable file */
	size_t nr_bad, alloc_bad;
	char *perf_map_error; /* owned: a perf map that could not be read */
};

/*
 * Symbolize the trace at @path. With @out NULL (or equal to @path) the
 * section is written into @path itself; otherwise @out is created (an
 * existing file is replaced) holding @path's data and the new section.
 * Fills @res (always initialised; release it). Returns 0, or a negative
 * errno with @diag filled (an unreadable trace, a write error).
 */
HS_MUST_CHECK int hs_trace_symbolize(const char *path, const char *out,
				     const struct hs_symbolize_opts *o,
				     struct hs_symbolize_result *res,
				     struct hs_diag *diag);
void hs_symbolize_result_release(struct hs_symbolize_result *res);
#endif
