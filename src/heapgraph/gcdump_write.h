#ifndef HS_HEAPGRAPH_GCDUMP_WRITE_H
#define HS_HEAPGRAPH_GCDUMP_WRITE_H
#include <stdint.h>
#include <stdio.h>
#include "common/diag.h"
#include "heapgraph/graph.h"
#include "common/log.h"

/*
 * gcdump_write - the .gcdump writer: a heap graph (graph.h) as PerfView's
 * GCHeapDump object (version 10) holding a MemoryGraph, in
 * FastSerialization, the layout heapgraph/gcdump.c reads and that
 * dotnet-gcdump and PerfView read. The graph is borrowed; the writer
 * holds only the node blob (a few bytes per node and edge) while writing.
 */

/* What the file says about where the snapshot came from (all optional). */
struct hs_gcdump_origin {
	int32_t pid;		   /* 0: unknown */
	const char *process_name;  /* NULL: none */
	const char *creation_tool; /* NULL: "heapscope" */
};

/*
 * Write @g (it must have a root) to @f. Returns 0, -EINVAL (no root, or a
 * graph too large for the format's 32-bit offsets, with @diag), -ENOMEM,
 * or -EIO (a write error, with @diag).
 */
HS_MUST_CHECK
int hs_gcdump_write(FILE *f, const struct hs_heapgraph *g,
		    const struct hs_gcdump_origin *origin, struct hs_diag *diag);
/* The same into the file at @path (created or truncated). */
HS_MUST_CHECK
int hs_gcdump_write_path(const char *path, const struct hs_heapgraph *g,
			 const struct hs_gcdump_origin *origin, struct hs_diag *diag);
#endif
