/*
 * import_heapscope - a .heapscope trace as a stack source: its default
 * memory view, "alloc" (analysis/memviews.h): one sample per heap
 * allocation, its bytes as the metric, stacks rooted in the process and
 * thread pseudo-frames (design.md "The stack source").
 */
#include "io/io.h"
#include "analysis/memviews.h"
#include "format/trace_reader.h"
#include <errno.h>
#include <math.h>
#include <string.h>

int hs_trace_to_source(const struct hs_trace *t, struct hs_stack_source *out,
		       struct hs_diag *diag)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;

	hs_source_release(out);
	return hs_memview_build(t, &o, out, NULL, diag);
}

int hs_import_heapscope(const char *path, struct hs_stack_source *out,
			struct hs_diag *diag)
{
	return hs_import_heapscope_source(path, HS_MEM_ALLOC, out, diag);
}

int hs_import_heapscope_source(const char *path, size_t view, struct hs_stack_source *out,
			       struct hs_diag *diag)
{
	struct hs_memview_opts o = HS_MEMVIEW_OPTS_INIT;

	o.kind = (enum hs_memview_kind)view;
	hs_source_release(out);
	return hs_memview_build_path(path, &o, out, NULL, diag);
}
