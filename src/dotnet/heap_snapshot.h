#ifndef HS_DOTNET_HEAP_SNAPSHOT_H
#define HS_DOTNET_HEAP_SNAPSHOT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "dotnet/clr_heap_events.h"
#include "dotnet/nettrace.h"
#include "heapgraph/graph.h"
#include "common/log.h"

/*
 * heap_snapshot - a heap graph from the runtime's heap-dump events, as
 * `heapscope gcdump` receives them from a session with the GCHeapDump
 * keyword: the session makes the runtime run a blocking gen2 GC that
 * reports its heap (GCBulkType, GCBulkNode, GCBulkEdge, GCBulkRootEdge,
 * GCBulkRootStaticVar, GCBulkRootConditionalWeakTableElementEdge) between
 * its GCStart and GCEnd.
 *
 * The builder takes events in order (hs_heap_snapshot_event()); it picks
 * the first blocking gen2 GC that reports nodes, keeps its values (about
 * 40 bytes a node and 8 an edge), and says when its GCEnd came. Then
 * hs_heap_snapshot_build() makes the graph: a root "[.NET Roots]" over
 * the kinds of roots ("[static vars]" with one "[static var TYPE.FIELD]"
 * each, "[local vars]", "[strong Handles]", "[pinning Handles]",
 * "[finalizer queue]", "[other roots]"), over the objects, each with its
 * references (and a ConditionalWeakTable value as a reference of its
 * key). Weak handles root nothing. Types are named as PerfView spells
 * them ("List<Node>"; an object of more than 1,000 bytes gets a type
 * of its own, "System.Byte[] (Bytes > 1K)", 10K, 100K, 1M, as PerfView's
 * do), with the IL path of their module when a module
 * event (ModuleLoad, or the rundown's ModuleDCStart/End, which may come
 * after the GC) named it.
 *
 * The builder owns what it keeps; the graph belongs to the caller.
 */

struct hs_heap_snapshot_type {
	uint64_t id;
	uint64_t module;
	char *name;	  /* owned */
	uint64_t *params; /* owned; nr_params */
	uint32_t nr_params;
	uint8_t element_type;
};

struct hs_heap_snapshot_root {
	uint64_t address;
	uint32_t category;     /* enum in heap_snapshot.c */
	uint32_t static_index; /* statics[] for a static var */
};

struct hs_heap_snapshot {
	int state;		/* waiting, in the dump GC, done */
	uint32_t gc_count;	/* the dump GC's number */
	uint64_t nr_lost_edges; /* edges the nodes announced but no event brought */

	struct hs_clr_heap_node *nodes;
	size_t nr_nodes, alloc_nodes;
	uint64_t *edges; /* targets, in the nodes' order */
	size_t nr_edges, alloc_edges;
	struct hs_heap_snapshot_root *roots;
	size_t nr_roots, alloc_roots;
	struct hs_clr_heap_static *statics; /* field names owned */
	size_t nr_statics, alloc_statics;
	struct hs_clr_heap_cwt *cwts;
	size_t nr_cwts, alloc_cwts;
	struct hs_heap_snapshot_type *types;
	size_t nr_types, alloc_types;
	struct hs_heap_snapshot_module {
		uint64_t id;
		char *path; /* owned */
	} * modules;
	size_t nr_modules, alloc_modules;
};

void hs_heap_snapshot_init(struct hs_heap_snapshot *s);
void hs_heap_snapshot_release(struct hs_heap_snapshot *s);
/*
 * Take one event (any; the others are ignored) of a trace whose pointers
 * are @pointer_size bytes. Returns 0, -EINVAL (a heap event too short for
 * its values) or -ENOMEM.
 */
HS_MUST_CHECK
int hs_heap_snapshot_event(struct hs_heap_snapshot *s, const struct hs_nettrace_event *ev,
			   unsigned pointer_size);
/* Whether the dump GC has ended (its events are all in). */
int hs_heap_snapshot_done(const struct hs_heap_snapshot *s);
/* Whether the dump GC has begun reporting. */
int hs_heap_snapshot_started(const struct hs_heap_snapshot *s);
/*
 * The graph (@g initialised by the caller). Returns 0, -ENODATA (no GC
 * reported a heap), -ENOMEM or -E2BIG.
 */
HS_MUST_CHECK int hs_heap_snapshot_build(struct hs_heap_snapshot *s,
					 struct hs_heapgraph *g);
/*
 * The types of earlier snapshots of the same process. A runtime describes
 * each type (GCBulkType) once while its event provider stays enabled: a
 * second snapshot taken while another session (`run --dotnet`'s, a
 * dotnet-trace) holds the provider gets objects of types it never names.
 * Type ids are the runtime's and hold for the life of the process, so
 * the types one snapshot received can name those of the next.
 *
 * hs_heap_snapshot_save_types() writes the types @s knows to @f, one a
 * line ("ID MODULE ELEMENT NR_PARAMS PARAM... NAME", numbers in hex; the
 * name runs to the end of the line): 0 or -EIO.
 * hs_heap_snapshot_load_types() reads such lines and adds each type @s
 * does not know yet (call it after the events, before the build): 0,
 * -EINVAL (a line that is not one; nothing of it is added), -ENOMEM.
 */
HS_MUST_CHECK
int hs_heap_snapshot_save_types(const struct hs_heap_snapshot *s, FILE *f);
HS_MUST_CHECK int hs_heap_snapshot_load_types(struct hs_heap_snapshot *s, FILE *f);
#endif
