#ifndef HS_DOTNET_CLR_EVENTS_H
#define HS_DOTNET_CLR_EVENTS_H
#include <stddef.h>
#include <stdint.h>
#include "dotnet/nettrace.h"
#include "common/log.h"

/*
 * clr_events - the payload layouts of the .NET runtime's own events.
 *
 * The runtime's metadata records carry no field descriptions, so the
 * layouts are built in here, keyed by (provider, event id, version), from
 * the runtime's manifest (ClrEtwAll.man, as TraceEvent's
 * ClrTraceEventParser reads it). Fields are packed, little-endian; strings
 * are NUL-terminated UTF-16; "pointer" fields are the trace's pointer size.
 *
 * Each decoder takes an event and the trace's pointer size, checks the
 * provider, id and version, and fills its struct. It returns 0, -ENOENT
 * when the event is not of its kind (another provider, id or version),
 * -EINVAL when the payload is too short for its layout, or -ENOMEM.
 * Strings in the structs are owned by the caller after a 0 return: free
 * them with the matching _release() function (NULL-safe, idempotent).
 */

#define HS_CLR_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define HS_CLR_RUNDOWN_PROVIDER "Microsoft-Windows-DotNETRuntimeRundown"
#define HS_CLR_SAMPLE_PROFILER "Microsoft-DotNETCore-SampleProfiler"

/* Event ids of the runtime provider. */
enum hs_clr_event_id {
	HS_CLR_GC_START = 1,
	HS_CLR_GC_END = 2,
	HS_CLR_GC_RESTART_EE_END = 3,
	HS_CLR_GC_HEAP_STATS = 4,
	HS_CLR_GC_RESTART_EE_BEGIN = 7,
	HS_CLR_GC_SUSPEND_EE_END = 8,
	HS_CLR_GC_SUSPEND_EE_BEGIN = 9,
	HS_CLR_GC_ALLOCATION_TICK = 10,
	HS_CLR_METHOD_LOAD_VERBOSE = 143,
	HS_CLR_METHOD_UNLOAD_VERBOSE = 144,
	HS_CLR_MODULE_LOAD = 152,
	HS_CLR_MODULE_UNLOAD = 153,
	HS_CLR_GC_PER_HEAP_HISTORY = 204,
	HS_CLR_ALLOCATION_SAMPLED = 303,
};

/* Event ids of the rundown provider. */
enum hs_clr_rundown_event_id {
	HS_CLR_RUNDOWN_METHOD_DC_START_VERBOSE = 143,
	HS_CLR_RUNDOWN_METHOD_DC_END_VERBOSE = 144,
	HS_CLR_RUNDOWN_MODULE_DC_START = 153,
	HS_CLR_RUNDOWN_MODULE_DC_END = 154,
};

/* Which heap an allocation went to (GCAllocationTick, AllocationSampled). */
enum hs_clr_alloc_kind {
	HS_CLR_ALLOC_SMALL = 0,
	HS_CLR_ALLOC_LARGE = 1,
	HS_CLR_ALLOC_PINNED = 2,
};

/* GCAllocationTick, versions 2 to 4 (and later, which only append). */
struct hs_clr_alloc_tick {
	uint32_t amount;   /* bytes since the previous tick, 32-bit */
	uint32_t kind;	   /* enum hs_clr_alloc_kind */
	uint64_t amount64; /* the same, 64-bit */
	uint64_t type_id;
	char *type_name; /* owned, UTF-8 */
	uint32_t heap_index;
	uint64_t address;     /* v3 and later, else 0 */
	uint64_t object_size; /* v4 and later, else 0 */
};
HS_MUST_CHECK
int hs_clr_alloc_tick(const struct hs_nettrace_event *ev, unsigned pointer_size,
		      struct hs_clr_alloc_tick *out);
void hs_clr_alloc_tick_release(struct hs_clr_alloc_tick *t);
/*
 * Only the amount and kind of a GCAllocationTick (any version), without
 * the type name: for consumers that count bytes per tick and must not
 * allocate. *@amount is AllocationAmount64, or AllocationAmount where that
 * is 0 or absent (version 0 and 1).
 */
HS_MUST_CHECK
int hs_clr_alloc_amount(const struct hs_nettrace_event *ev, uint64_t *amount,
			uint32_t *kind);

/* AllocationSampled (.NET 10): one randomly sampled allocation. */
struct hs_clr_alloc_sampled {
	uint32_t kind; /* enum hs_clr_alloc_kind */
	uint64_t type_id;
	char *type_name; /* owned, UTF-8 */
	uint64_t address;
	uint64_t object_size;
	uint64_t sampled_byte_offset;
};
HS_MUST_CHECK
int hs_clr_alloc_sampled(const struct hs_nettrace_event *ev, unsigned pointer_size,
			 struct hs_clr_alloc_sampled *out);
void hs_clr_alloc_sampled_release(struct hs_clr_alloc_sampled *s);
/*
 * How many bytes one sample of @size bytes stands for: the runtime samples
 * each byte with probability 1/102400, so an object is sampled with
 * probability q = 1 - (1 - 1/102400)^size and size / q is unbiased.
 */
double hs_clr_alloc_sampled_weight(uint64_t size);

/*
 * MethodLoadVerbose / MethodUnloadVerbose (runtime) and
 * MethodDCStartVerbose / MethodDCEndVerbose (rundown).
 */
struct hs_clr_method {
	uint64_t method_id, module_id;
	uint64_t start; /* the code's address */
	uint32_t size;	/* its length in bytes */
	uint32_t token, flags;
	char *namespace_; /* owned, UTF-8: the type, "Allocs.Program" */
	char *name;	  /* owned: "AllocateFoos" */
	char *signature;  /* owned: "void  (int32)" */
};
HS_MUST_CHECK int hs_clr_method(const struct hs_nettrace_event *ev,
				struct hs_clr_method *out);
void hs_clr_method_release(struct hs_clr_method *m);
/*
 * The frame name of @m in module @assembly (NULL: unknown):
 * "Assembly!Namespace.Name(args)", the args being the signature from its
 * '(' on, as PerfView names managed methods. Owned, or NULL (no memory).
 */
HS_MUST_CHECK char *hs_clr_method_frame(const struct hs_clr_method *m,
					const char *assembly);

/* ModuleLoad / ModuleUnload (runtime), ModuleDCStart / ModuleDCEnd (rundown). */
struct hs_clr_module {
	uint64_t module_id, assembly_id;
	uint32_t flags;
	char *il_path;	   /* owned, UTF-8 */
	char *native_path; /* owned, UTF-8, often "" */
};
HS_MUST_CHECK int hs_clr_module(const struct hs_nettrace_event *ev,
				struct hs_clr_module *out);
void hs_clr_module_release(struct hs_clr_module *m);
/*
 * The assembly name PerfView shows for a module: the IL path's file name
 * without its directory and extension ("/x/System.Private.CoreLib.dll" ->
 * "System.Private.CoreLib"). Owned, or NULL (no memory).
 */
HS_MUST_CHECK char *hs_clr_module_name(const char *il_path);

/* GCStart, versions 0 to 2. */
struct hs_clr_gc_start {
	uint32_t count, depth, reason, type;
};
HS_MUST_CHECK int hs_clr_gc_start(const struct hs_nettrace_event *ev,
				  struct hs_clr_gc_start *out);

/* GCEnd, versions 0 and 1. */
struct hs_clr_gc_end {
	uint32_t count, depth;
};
HS_MUST_CHECK int hs_clr_gc_end(const struct hs_nettrace_event *ev,
				struct hs_clr_gc_end *out);

/* GCHeapStats, versions 0 to 2: the heap after a GC. */
struct hs_clr_gc_heap_stats {
	uint64_t gen_size[5]; /* gen0, gen1, gen2, LOH, POH (v2) */
	uint64_t promoted[5]; /* bytes that survived each */
	uint64_t finalization_promoted_size, finalization_promoted_count;
	uint32_t pinned_objects, sink_blocks, gc_handles;
};
HS_MUST_CHECK
int hs_clr_gc_heap_stats(const struct hs_nettrace_event *ev,
			 struct hs_clr_gc_heap_stats *out);

/*
 * GCPerHeapHistory, version 3 (what .NET Core writes): one heap's view of
 * a GC, fired once per heap. Of its per-generation records (gen0, gen1,
 * gen2, LOH, POH; ten pointer-sized values each) the sizes before and
 * after are kept.
 */
#define HS_CLR_GC_MAX_GENS 5
struct hs_clr_gc_per_heap {
	uint32_t heap_index;
	uint32_t nr_gens; /* records present, at most HS_CLR_GC_MAX_GENS kept */
	uint64_t size_before[HS_CLR_GC_MAX_GENS];
	uint64_t size_after[HS_CLR_GC_MAX_GENS];
};
HS_MUST_CHECK
int hs_clr_gc_per_heap(const struct hs_nettrace_event *ev, unsigned pointer_size,
		       struct hs_clr_gc_per_heap *out);

/* GCSuspendEEBegin, versions 0 and 1; the other pause events carry nothing. */
struct hs_clr_gc_suspend {
	uint32_t reason, count;
};
HS_MUST_CHECK
int hs_clr_gc_suspend(const struct hs_nettrace_event *ev, struct hs_clr_gc_suspend *out);

/* The SampleProfiler's thread sample: where the thread was. */
enum hs_clr_sample_type {
	HS_CLR_SAMPLE_ERROR = 0,
	HS_CLR_SAMPLE_EXTERNAL = 1, /* outside managed code */
	HS_CLR_SAMPLE_MANAGED = 2,
};
HS_MUST_CHECK int hs_clr_thread_sample(const struct hs_nettrace_event *ev,
				       uint32_t *type);

/*
 * A name for an event of the runtime provider, whose metadata has none:
 * "GC/AllocationTick", "Exception/Start" (TraceEvent's task/opcode names),
 * or NULL when the id is not known.
 */
const char *hs_clr_event_name(uint32_t event_id);
/* Whether @ev is of @provider's event @id (any version). */
int hs_clr_is(const struct hs_nettrace_event *ev, const char *provider, uint32_t id);
#endif
