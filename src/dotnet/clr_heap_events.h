#ifndef HS_DOTNET_CLR_HEAP_EVENTS_H
#define HS_DOTNET_CLR_HEAP_EVENTS_H
#include <stdint.h>
#include "dotnet/nettrace.h"
#include "common/log.h"

/*
 * clr_heap_events - the payloads of the runtime's heap-dump events (the
 * GCHeapDump keyword): each is a header and an array of values, decoded
 * one value at a time so that a big batch needs no allocation (but a
 * type's name). Layouts from the runtime's manifest (ClrEtwAll.man), all
 * version 0 (later versions only append), packed, little-endian;
 * "pointer" fields are the trace's pointer size.
 *
 * hs_clr_bulk_begin() reads the header of any of them; the value decoders
 * then take the next value of that kind. They return 0, -ENOENT (another
 * event), -EINVAL (a payload shorter than its values), -ENOMEM.
 */

enum hs_clr_heap_event_id {
	HS_CLR_GC_BULK_TYPE = 15,
	HS_CLR_GC_BULK_ROOT_EDGE = 16,
	HS_CLR_GC_BULK_ROOT_CWT_EDGE = 17, /* ConditionalWeakTable elements */
	HS_CLR_GC_BULK_NODE = 18,
	HS_CLR_GC_BULK_EDGE = 19,
	HS_CLR_GC_BULK_ROOT_CCW = 36, /* COM interop: Windows only */
	HS_CLR_GC_BULK_RCW = 37,      /* COM interop: Windows only */
	HS_CLR_GC_BULK_ROOT_STATIC_VAR = 38,
};

/* The kinds of GCBulkRootEdge (the manifest's GCRootKind). */
enum hs_clr_root_kind {
	HS_CLR_ROOT_STACK = 0,
	HS_CLR_ROOT_FINALIZER = 1,
	HS_CLR_ROOT_HANDLE = 2,
	HS_CLR_ROOT_OLDER = 3,
	HS_CLR_ROOT_SIZED_REF = 4,
	HS_CLR_ROOT_OVERFLOW = 5,
	HS_CLR_ROOT_DEPENDENT_HANDLE = 6,
	HS_CLR_ROOT_NEW_FQ = 7,
	HS_CLR_ROOT_STEAL = 8,
	HS_CLR_ROOT_BGC = 9,
};
/* GCRootFlags. */
enum {
	HS_CLR_ROOT_PINNING = 1,
	HS_CLR_ROOT_WEAK = 2,
	HS_CLR_ROOT_INTERIOR = 4,
	HS_CLR_ROOT_REFCOUNTED = 8,
};

/* A batch: the header, and where the next value starts. */
struct hs_clr_bulk {
	uint32_t event_id;   /* enum hs_clr_heap_event_id */
	uint32_t index;	     /* the batch's number in the GC (nodes, edges, roots) */
	uint32_t count;	     /* values in the batch */
	uint64_t app_domain; /* static vars only */
	unsigned pointer_size;
	const unsigned char *next, *end;
};
HS_MUST_CHECK
int hs_clr_bulk_begin(const struct hs_nettrace_event *ev, unsigned pointer_size,
		      struct hs_clr_bulk *b);

struct hs_clr_heap_node { /* GCBulkNode */
	uint64_t address, size, type_id, nr_edges;
};
HS_MUST_CHECK int hs_clr_bulk_node(struct hs_clr_bulk *b, struct hs_clr_heap_node *out);

struct hs_clr_heap_edge { /* GCBulkEdge: the next edge of the nodes in order */
	uint64_t target;
	uint32_t field_id;
};
HS_MUST_CHECK int hs_clr_bulk_edge(struct hs_clr_bulk *b, struct hs_clr_heap_edge *out);

struct hs_clr_heap_root { /* GCBulkRootEdge */
	uint64_t address;
	uint32_t kind;	/* enum hs_clr_root_kind */
	uint32_t flags; /* HS_CLR_ROOT_PINNING, ... */
	uint64_t root_id;
};
HS_MUST_CHECK int hs_clr_bulk_root(struct hs_clr_bulk *b, struct hs_clr_heap_root *out);

struct hs_clr_heap_cwt { /* GCBulkRootConditionalWeakTableElementEdge */
	uint64_t key, value, root_id;
};
HS_MUST_CHECK int hs_clr_bulk_cwt(struct hs_clr_bulk *b, struct hs_clr_heap_cwt *out);

struct hs_clr_heap_static { /* GCBulkRootStaticVar */
	uint64_t root_id, object, type_id;
	uint32_t flags;
	char *field; /* owned, UTF-8 */
};
HS_MUST_CHECK int hs_clr_bulk_static(struct hs_clr_bulk *b,
				     struct hs_clr_heap_static *out);

struct hs_clr_heap_type { /* GCBulkType */
	uint64_t type_id, module_id;
	uint32_t name_id, flags;
	uint8_t element_type; /* CorElementType: 0x1d SZARRAY, 0x14 ARRAY, ... */
	char *name;	      /* owned, UTF-8: "System.Collections.Generic.List`1" */
	uint32_t nr_params;   /* type arguments, or an array's element type */
	const unsigned char *params; /* nr_params uint64s, borrowed from the event */
};
HS_MUST_CHECK int hs_clr_bulk_type(struct hs_clr_bulk *b, struct hs_clr_heap_type *out);
/* The @i-th type parameter of @t. */
uint64_t hs_clr_heap_type_param(const struct hs_clr_heap_type *t, uint32_t i);
#endif
