#ifndef HS_HEAPGRAPH_GCDUMP_H
#define HS_HEAPGRAPH_GCDUMP_H
#include <stdio.h>
#include <stdint.h>
#include "common/diag.h"
#include "heapgraph/graph.h"
#include "io/io.h"
#include "model/stack_source.h"
#include "common/log.h"

/*
 * gcdump - the reader of .gcdump heap snapshots (dotnet-gcdump, PerfView):
 * PerfView's GCHeapDump object, which holds a MemoryGraph, in
 * FastSerialization (docs/dotnet.md has the layout).
 *
 * The file is read once, front to back; the node records' blob is held
 * while the graph is built (about the file's size), then freed. Counts are
 * checked against the bytes the file has left before anything is
 * allocated for them, so a garbage or cut-off file fails with -EINVAL and
 * @diag naming the offset, never with a huge allocation or a crash.
 */

enum hs_gcdump_view {
	HS_GCDUMP_HEAP,		 /* PerfView's heap view (the default) */
	HS_GCDUMP_RETAINED,	 /* the dominator tree: retained sizes */
	HS_GCDUMP_HEAP_RETAINED, /* the heap view's paths, retained sizes as bytes */
	HS_GCDUMP__COUNT
};

/* The sources, in enum order (static). */
extern const struct hs_source_info hs_gcdump_sources[HS_GCDUMP__COUNT];

/* Whether the first @n bytes look like a .gcdump (the header and "GCHeapDump"). */
int hs_gcdump_sniff(const unsigned char *head, size_t n);

/*
 * Read the .gcdump stream @f (borrowed; at most @limit bytes are read) into
 * @g (initialised by the caller). Returns 0, -EINVAL (bad or cut-off
 * file, or a variant heapscope does not read, with @diag), -ENOMEM, -E2BIG.
 */
HS_MUST_CHECK
int hs_gcdump_read(FILE *f, uint64_t limit, struct hs_heapgraph *g, struct hs_diag *diag);
/* The same for the file at @path. */
HS_MUST_CHECK
int hs_gcdump_read_path(const char *path, struct hs_heapgraph *g, struct hs_diag *diag);
/* Import the file at @path as @view (an enum hs_gcdump_view). */
HS_MUST_CHECK
int hs_import_gcdump(const char *path, size_t view, struct hs_stack_source *out,
		     struct hs_diag *diag);
#endif
