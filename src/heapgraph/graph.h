#ifndef HS_HEAPGRAPH_GRAPH_H
#define HS_HEAPGRAPH_GRAPH_H
#include <stddef.h>
#include <stdint.h>
#include "model/stack_source.h"
#include "common/log.h"

/*
 * heapgraph - a heap snapshot as a graph: objects (nodes) with a size, a
 * type and an address, and the references between them (edges). It sits
 * beside the stack source: a .gcdump (heapgraph/gcdump.h) is read into one,
 * and the heap views (hs_heapgraph_heap_source(), ..._retained_source())
 * turn it into stack sources. A native heap snapshot can use it too.
 *
 * Layout (columnar, so that 10M+ objects stay compact):
 *   per node  address (8 bytes), size (4), type (4), first edge (4):
 *             20 bytes a node
 *   per edge  child node index (4 bytes): CSR, the children of node i
 *             are children[first_child[i] .. first_child[i + 1])
 *   per type  its name and module (owned strings)
 * A 10M-object graph with 25M references takes 300 MB.
 *
 * Roots: the graph has one root node (.gcdump's "[.NET Roots]"); its
 * children are pseudo-nodes of size 0 whose type names a kind of root
 * ("[static vars]", "[local vars]", "[other roots]", ...), and theirs are
 * the objects each kind holds. hs_heapgraph_root_kind() groups those names.
 *
 * Ownership: the graph owns every array and string; names handed out are
 * borrowed until hs_heapgraph_release(). Built once by one thread (nodes
 * added in index order), then read by any number.
 */

#define HS_HEAPGRAPH_NONE UINT32_MAX
/* The spanning-tree parent of a node no root reaches that heads others. */
#define HS_HEAPGRAPH_ORPHAN (UINT32_MAX - 1)
/* The frame above them in the views (PerfView's name). */
#define HS_HEAPGRAPH_ORPHANS_FRAME "[not reachable from roots]"

struct hs_heapgraph_type {
	char *name;    /* "System.Byte[]" */
	char *module;  /* "/path/System.Private.CoreLib.dll", or NULL */
	uint32_t size; /* the usual size of its objects (informative) */
};

struct hs_heapgraph {
	uint32_t nr_nodes;
	uint64_t *address;     /* node -> address (0 for pseudo-nodes); NULL when
				  dropped (hs_import_gcdump(): views use none) */
	uint32_t *size;	       /* node -> bytes */
	uint32_t *type;	       /* node -> type index */
	uint32_t *first_child; /* node -> first edge; [nr_nodes] = nr_edges */
	uint32_t *children;    /* edge -> child node */
	size_t nr_edges;
	size_t alloc_nodes, alloc_edges;

	struct hs_heapgraph_type *types;
	uint32_t nr_types;
	size_t alloc_types;

	uint32_t root; /* the root node, or HS_HEAPGRAPH_NONE */
	/*
	 * Sampling (a graph of a sample of the heap's objects): each object
	 * of type t stands for count_multiplier[t] objects (NULL: none per
	 * type), else for avg_count_multiplier. 1 when not sampled.
	 */
	float *count_multiplier;
	float avg_count_multiplier;
	float avg_size_multiplier;
};

/* Kinds of roots, told by the name of a root category's type. */
enum hs_heap_root_kind {
	HS_HEAP_ROOT_STATIC,	/* "[static vars]" */
	HS_HEAP_ROOT_LOCAL,	/* "[local vars]" */
	HS_HEAP_ROOT_HANDLE,	/* "[strong handles]", "[pinning handles]", ... */
	HS_HEAP_ROOT_FINALIZER, /* "[finalization handles]", "[finalizer queue]" */
	HS_HEAP_ROOT_OTHER,	/* "[other roots]" and anything else */
};
enum hs_heap_root_kind hs_heapgraph_root_kind(const char *type_name);

void hs_heapgraph_init(struct hs_heapgraph *g);
/* Free everything (NULL-safe); @g may be initialised again. */
void hs_heapgraph_release(struct hs_heapgraph *g);

/*
 * Add a type (@name copied, @module copied or NULL); its index in *@index.
 * Returns 0, -ENOMEM or -E2BIG.
 */
HS_MUST_CHECK
int hs_heapgraph_add_type(struct hs_heapgraph *g, const char *name, const char *module,
			  uint32_t size, uint32_t *index);
/*
 * Add node number g->nr_nodes with @nr children at @children (indexes of
 * nodes added before or after; hs_heapgraph_check() checks them). Returns
 * 0, -ENOMEM, -E2BIG or -EINVAL (an unknown type).
 */
HS_MUST_CHECK
int hs_heapgraph_add_node(struct hs_heapgraph *g, uint32_t type, uint32_t size,
			  uint64_t address, const uint32_t *children, uint32_t nr);
/*
 * Make room for @nodes nodes in all (so that adding them reallocates
 * nothing): 0 or -ENOMEM. A reader that knows the count saves the
 * growth's slack and copies, and may fill g->address in place before it
 * adds the nodes (hs_heapgraph_add_node() writes the same value back).
 */
HS_MUST_CHECK int hs_heapgraph_reserve(struct hs_heapgraph *g, size_t nodes);
/* Whether every child and the root are nodes: 0 or -EINVAL. */
HS_MUST_CHECK int hs_heapgraph_check(const struct hs_heapgraph *g);

static inline uint32_t hs_heapgraph_nr_children(const struct hs_heapgraph *g,
						uint32_t node)
{
	return g->first_child[node + 1] - g->first_child[node];
}
/* Bytes of memory the graph holds. */
size_t hs_heapgraph_memory(const struct hs_heapgraph *g);
/* The objects one node stands for (its type's count multiplier). */
double hs_heapgraph_multiplier(const struct hs_heapgraph *g, uint32_t node);

/*
 * PerfView's spanning tree: breadth first from the root, the queue
 * ordered by priority (the child's type priority plus a tenth of its
 * parent's; first come first served among equals), with PerfView's
 * default type priorities ("[*local vars]" -1000, ConditionalWeakTable
 * -10000, "[COM/WinRT Objects]" -1000000, "[*handles]" and "[other roots]"
 * -2000000, everything else 0). Then, as PerfView does, the nodes no root
 * reaches: the first not yet visited (by index) heads a tree of orphans
 * (its parent is HS_HEAPGRAPH_ORPHAN), walked the same way, and so on.
 * Fills @parent (room for nr_nodes; the root's is HS_HEAPGRAPH_NONE) and
 * @order (room for nr_nodes) with every node in visit order, the root
 * first; returns how many (nr_nodes, or 0 without a root), or 0 with
 * -ENOMEM in *@err.
 */
uint32_t hs_heapgraph_spanning_tree(const struct hs_heapgraph *g, uint32_t *parent,
				    uint32_t *order, int *err);
/*
 * The immediate dominators (Semi-NCA: Lengauer and Tarjan's
 * semidominators with path compression, then nearest common ancestors;
 * no recursion; 5 words a node and one an edge besides @idom): @idom
 * (room for nr_nodes) gets each reachable node's immediate dominator, the
 * root's is itself, unreachable nodes' HS_HEAPGRAPH_NONE. Returns 0 or
 * -ENOMEM.
 */
HS_MUST_CHECK int hs_heapgraph_dominators(const struct hs_heapgraph *g, uint32_t *idom);
/*
 * Retained sizes: @retained (room for nr_nodes) gets, for each reachable
 * node, the bytes freed if it were gone (its size plus that of every node
 * it dominates); 0 for unreachable ones. @idom from
 * hs_heapgraph_dominators(); the dominator tree is summed from its leaves
 * up. Returns 0 or -ENOMEM.
 */
HS_MUST_CHECK
int hs_heapgraph_retained(const struct hs_heapgraph *g, const uint32_t *idom,
			  uint64_t *retained);

/* One row of the type table. */
struct hs_heapgraph_type_total {
	uint32_t type;
	double count; /* objects (scaled by the sampling multipliers) */
	double bytes;
};
/*
 * The type table: objects and bytes per type, every node counted (the
 * pseudo-nodes of size 0 too, as `dotnet-gcdump report` counts them),
 * largest bytes first (then most objects, then type index). *@out (owned,
 * hs_free()) gets one row per type that has nodes; returns how many, or
 * 0 with -ENOMEM in *@err.
 */
size_t hs_heapgraph_type_totals(const struct hs_heapgraph *g,
				struct hs_heapgraph_type_total **out, int *err);

/*
 * The views as stack sources (@out initialised by the caller; metric
 * bytes, count objects, both scaled by the sampling multipliers; no
 * times). Each object with a size counts once; its leaf frame is its
 * type ("MODULE!TYPE", or TYPE without a module). The objects of one
 * stack are one sample (their bytes, and their number as its count), so
 * that a heap of 10M objects but 2M distinct paths of types makes 2M
 * samples.
 *   heap      the stack is the object's path in the spanning tree, from
 *             the root down ("[.NET Roots]", "[static vars]", ...):
 *             PerfView's heap view
 *   retained  the stack is its chain of dominators from the root down, so
 *             that a frame's inclusive cost is the retained size of the
 *             objects it names
 * Objects no root reaches (the runtime reported them, but only dead
 * objects or a lost event point at them) go under one frame
 * "[not reachable from roots]": in the heap view with their own spanning
 * trees below, in the retained view each on its own. Returns 0 or
 * -ENOMEM, -E2BIG.
 */
HS_MUST_CHECK
int hs_heapgraph_heap_source(const struct hs_heapgraph *g, struct hs_stack_source *out);
HS_MUST_CHECK
int hs_heapgraph_retained_source(const struct hs_heapgraph *g,
				 struct hs_stack_source *out);
/*
 * The heap view's stacks, stack for stack (the same ids, frames and
 * order as hs_heapgraph_heap_source()'s), with each object's retained
 * size as its bytes: a stack's sample holds the retained bytes of the
 * objects whose spanning-tree path ends there. As an object's dominators
 * lie on its spanning-tree path, above it, no object of a stack
 * dominates another of it: their sum is what freeing all of them would
 * free. The Retained column of the heap view's CallTree. Returns 0 or
 * -ENOMEM, -E2BIG.
 */
HS_MUST_CHECK
int hs_heapgraph_heap_retained_source(const struct hs_heapgraph *g,
				      struct hs_stack_source *out);
#endif
