/*
 * clr_events - the built-in payload layouts of the runtime's events (see
 * clr_events.h). Offsets follow the manifest; a version only appends
 * fields, so a longer payload than a layout needs is accepted.
 */
#include "dotnet/clr_events.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <errno.h>
#include <math.h>
#include <string.h>
#include <strings.h>

/* A bounded cursor over a payload. */
struct cursor {
	const unsigned char *p, *end;
	int bad; /* a read ran past the end */
};

static void cursor_init(struct cursor *c, const struct hs_nettrace_event *ev)
{
	c->p = ev->payload;
	c->end = ev->payload + ev->payload_size;
	c->bad = 0;
}

static uint64_t take(struct cursor *c, unsigned bytes)
{
	uint64_t v = 0;
	unsigned i;

	if (c->bad || (size_t)(c->end - c->p) < bytes) {
		c->bad = 1;
		return 0;
	}
	for (i = 0; i < bytes; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += bytes;
	return v;
}

/* A UTF-16 string into *@out; -ENOMEM, or 0 (a bad one sets c->bad). */
static int take_string(struct cursor *c, char **out)
{
	int err;

	*out = NULL;
	if (c->bad)
		return 0;
	err = hs_nettrace_utf16(&c->p, c->end, out);
	if (err == -EINVAL)
		c->bad = 1;
	return err == -ENOMEM ? -ENOMEM : 0;
}

int hs_clr_is(const struct hs_nettrace_event *ev, const char *provider, uint32_t id)
{
	return ev->meta->event_id == id && !strcmp(ev->meta->provider, provider);
}

/* The common end of a decoder: 0, or -EINVAL when the payload ran out. */
static int finish(const struct cursor *c)
{
	return c->bad ? -EINVAL : 0;
}

int hs_clr_alloc_tick(const struct hs_nettrace_event *ev, unsigned pointer_size,
		      struct hs_clr_alloc_tick *out)
{
	struct cursor c;
	int err;

	memset(out, 0, sizeof(*out));
	if (!hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_GC_ALLOCATION_TICK) ||
	    ev->meta->version < 2)
		return -ENOENT;
	cursor_init(&c, ev);
	out->amount = (uint32_t)take(&c, 4);
	out->kind = (uint32_t)take(&c, 4);
	take(&c, 2); /* CLR instance id */
	out->amount64 = take(&c, 8);
	out->type_id = take(&c, pointer_size);
	err = take_string(&c, &out->type_name);
	out->heap_index = (uint32_t)take(&c, 4);
	if (ev->meta->version >= 3)
		out->address = take(&c, pointer_size);
	if (ev->meta->version >= 4)
		out->object_size = take(&c, 8);
	if (!err)
		err = finish(&c);
	if (err)
		hs_clr_alloc_tick_release(out);
	return err;
}

void hs_clr_alloc_tick_release(struct hs_clr_alloc_tick *t)
{
	hs_free(t->type_name);
	t->type_name = NULL;
}

int hs_clr_alloc_sampled(const struct hs_nettrace_event *ev, unsigned pointer_size,
			 struct hs_clr_alloc_sampled *out)
{
	struct cursor c;
	int err;

	memset(out, 0, sizeof(*out));
	if (!hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_ALLOCATION_SAMPLED))
		return -ENOENT;
	cursor_init(&c, ev);
	out->kind = (uint32_t)take(&c, 4);
	take(&c, 2); /* CLR instance id */
	out->type_id = take(&c, pointer_size);
	err = take_string(&c, &out->type_name);
	out->address = take(&c, pointer_size);
	out->object_size = take(&c, 8);
	out->sampled_byte_offset = take(&c, 8);
	if (!err)
		err = finish(&c);
	if (err)
		hs_clr_alloc_sampled_release(out);
	return err;
}

void hs_clr_alloc_sampled_release(struct hs_clr_alloc_sampled *s)
{
	hs_free(s->type_name);
	s->type_name = NULL;
}

double hs_clr_alloc_sampled_weight(uint64_t size)
{
	double q;

	if (!size)
		return 0;
	q = -expm1((double)size * log1p(-1.0 / 102400.0));
	return (double)size / q;
}

int hs_clr_method(const struct hs_nettrace_event *ev, struct hs_clr_method *out)
{
	const struct hs_nettrace_meta *m = ev->meta;
	struct cursor c;
	int err;

	memset(out, 0, sizeof(*out));
	if (!((m->event_id == HS_CLR_METHOD_LOAD_VERBOSE ||
	       m->event_id == HS_CLR_METHOD_UNLOAD_VERBOSE) &&
	      (!strcmp(m->provider, HS_CLR_PROVIDER) ||
	       !strcmp(m->provider, HS_CLR_RUNDOWN_PROVIDER))))
		return -ENOENT;
	cursor_init(&c, ev);
	out->method_id = take(&c, 8);
	out->module_id = take(&c, 8);
	out->start = take(&c, 8);
	out->size = (uint32_t)take(&c, 4);
	out->token = (uint32_t)take(&c, 4);
	out->flags = (uint32_t)take(&c, 4);
	err = take_string(&c, &out->namespace_);
	if (!err)
		err = take_string(&c, &out->name);
	if (!err)
		err = take_string(&c, &out->signature);
	if (!err)
		err = finish(&c);
	if (err)
		hs_clr_method_release(out);
	return err;
}

void hs_clr_method_release(struct hs_clr_method *m)
{
	hs_free(m->namespace_);
	hs_free(m->name);
	hs_free(m->signature);
	m->namespace_ = m->name = m->signature = NULL;
}

char *hs_clr_method_frame(const struct hs_clr_method *m, const char *assembly)
{
	const char *args = m->signature ? strchr(m->signature, '(') : NULL;
	struct hs_buf b = HS_BUF_INIT;

	if (hs_buf_adds(&b, assembly && *assembly ? assembly : "?") ||
	    hs_buf_addc(&b, '!') ||
	    (m->namespace_ && *m->namespace_ &&
	     (hs_buf_adds(&b, m->namespace_) || hs_buf_addc(&b, '.'))) ||
	    hs_buf_adds(&b, m->name ? m->name : "?") || (args && hs_buf_adds(&b, args))) {
		hs_buf_release(&b);
		return NULL;
	}
	return hs_buf_detach(&b);
}

int hs_clr_module(const struct hs_nettrace_event *ev, struct hs_clr_module *out)
{
	const struct hs_nettrace_meta *m = ev->meta;
	struct cursor c;
	int err;

	memset(out, 0, sizeof(*out));
	if (!(((m->event_id == HS_CLR_MODULE_LOAD ||
		m->event_id == HS_CLR_MODULE_UNLOAD) &&
	       !strcmp(m->provider, HS_CLR_PROVIDER)) ||
	      ((m->event_id == HS_CLR_RUNDOWN_MODULE_DC_START ||
		m->event_id == HS_CLR_RUNDOWN_MODULE_DC_END) &&
	       !strcmp(m->provider, HS_CLR_RUNDOWN_PROVIDER))))
		return -ENOENT;
	cursor_init(&c, ev);
	out->module_id = take(&c, 8);
	out->assembly_id = take(&c, 8);
	out->flags = (uint32_t)take(&c, 4);
	take(&c, 4); /* reserved */
	err = take_string(&c, &out->il_path);
	if (!err)
		err = take_string(&c, &out->native_path);
	if (!err)
		err = finish(&c);
	if (err)
		hs_clr_module_release(out);
	return err;
}

void hs_clr_module_release(struct hs_clr_module *m)
{
	hs_free(m->il_path);
	hs_free(m->native_path);
	m->il_path = m->native_path = NULL;
}

char *hs_clr_module_name(const char *il_path)
{
	const char *base = il_path, *s, *dot;

	for (s = il_path; *s; s++)
		if (*s == '/' || *s == '\\')
			base = s + 1;
	dot = strrchr(base, '.');
	if (dot && (!strcasecmp(dot, ".dll") || !strcasecmp(dot, ".exe")))
		return hs_strndup(base, (size_t)(dot - base));
	return hs_strdup(base);
}

int hs_clr_alloc_amount(const struct hs_nettrace_event *ev, uint64_t *amount,
			uint32_t *kind)
{
	struct cursor c;
	uint64_t amount64 = 0;
	uint32_t amount32;

	*amount = 0;
	*kind = HS_CLR_ALLOC_SMALL;
	if (!hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_GC_ALLOCATION_TICK))
		return -ENOENT;
	cursor_init(&c, ev);
	amount32 = (uint32_t)take(&c, 4);
	*kind = (uint32_t)take(&c, 4);
	if (ev->meta->version >= 2) {
		take(&c, 2); /* CLR instance id */
		amount64 = take(&c, 8);
	}
	*amount = amount64 ? amount64 : amount32;
	return finish(&c);
}

int hs_clr_gc_start(const struct hs_nettrace_event *ev, struct hs_clr_gc_start *out)
{
	struct cursor c;

	memset(out, 0, sizeof(*out));
	if (!hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_GC_START))
		return -ENOENT;
	cursor_init(&c, ev);
	out->count = (uint32_t)take(&c, 4);
	if (ev->payload_size >= 16) {
		out->depth = (uint32_t)take(&c, 4);
		out->reason = (uint32_t)take(&c, 4);
		out->type = (uint32_t)take(&c, 4);
	} else {
		out->reason = (uint32_t)take(&c, 4); /* version 0 had no depth */
	}
	return finish(&c);
}

int hs_clr_gc_end(const struct hs_nettrace_event *ev, struct hs_clr_gc_end *out)
{
	struct cursor c;

	memset(out, 0, sizeof(*out));
	if (!hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_GC_END))
		return -ENOENT;
	cursor_init(&c, ev);
	out->count = (uint32_t)take(&c, 4);
	out->depth = (uint32_t)take(&c, ev->meta->version >= 1 ? 4 : 2);
	return finish(&c);
}

int hs_clr_gc_heap_stats(const struct hs_nettrace_event *ev,
			 struct hs_clr_gc_heap_stats *out)
{
	struct cursor c;
	int i;

	memset(out, 0, sizeof(*out));
	if (!hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_GC_HEAP_STATS))
		return -ENOENT;
	cursor_init(&c, ev);
	for (i = 0; i < 4; i++) {
		out->gen_size[i] = take(&c, 8);
		out->promoted[i] = take(&c, 8);
	}
	out->finalization_promoted_size = take(&c, 8);
	out->finalization_promoted_count = take(&c, 8);
	out->pinned_objects = (uint32_t)take(&c, 4);
	out->sink_blocks = (uint32_t)take(&c, 4);
	out->gc_handles = (uint32_t)take(&c, 4);
	if (ev->meta->version >= 2) {
		take(&c, 2); /* CLR instance id */
		out->gen_size[4] = take(&c, 8);
		out->promoted[4] = take(&c, 8);
	}
	return finish(&c);
}

int hs_clr_gc_per_heap(const struct hs_nettrace_event *ev, unsigned pointer_size,
		       struct hs_clr_gc_per_heap *out)
{
	struct cursor c;
	uint32_t count, g, k;

	memset(out, 0, sizeof(*out));
	if (!hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_GC_PER_HEAP_HISTORY) ||
	    ev->meta->version < 3)
		return -ENOENT;
	cursor_init(&c, ev);
	take(&c, 2);		/* CLR instance id */
	for (k = 0; k < 6; k++) /* free list allocated and rejected, ... pinned advance */
		take(&c, pointer_size);
	for (k = 0; k < 5; k++) /* efficiency, condemn reasons 0 and 1, mechanisms */
		take(&c, 4);
	out->heap_index = (uint32_t)take(&c, 4);
	take(&c, pointer_size); /* extra gen0 commit */
	count = (uint32_t)take(&c, 4);
	out->nr_gens = count;
	for (g = 0; g < count && !c.bad; g++) {
		uint64_t before = take(&c, pointer_size);

		take(&c, pointer_size); /* free list space before */
		take(&c, pointer_size); /* free object space before */
		if (g < HS_CLR_GC_MAX_GENS) {
			out->size_before[g] = before;
			out->size_after[g] = take(&c, pointer_size);
		} else {
			take(&c, pointer_size);
		}
		for (k = 0; k < 6;
		     k++) /* free after, in, pinned and not pinned survived, budget */
			take(&c, pointer_size);
	}
	return finish(&c);
}

int hs_clr_gc_suspend(const struct hs_nettrace_event *ev, struct hs_clr_gc_suspend *out)
{
	struct cursor c;

	memset(out, 0, sizeof(*out));
	if (!hs_clr_is(ev, HS_CLR_PROVIDER, HS_CLR_GC_SUSPEND_EE_BEGIN))
		return -ENOENT;
	cursor_init(&c, ev);
	if (ev->meta->version >= 1) {
		out->reason = (uint32_t)take(&c, 4);
		out->count = (uint32_t)take(&c, 4);
	} else {
		out->reason = (uint32_t)take(&c, 2);
	}
	return finish(&c);
}

int hs_clr_thread_sample(const struct hs_nettrace_event *ev, uint32_t *type)
{
	struct cursor c;

	*type = HS_CLR_SAMPLE_ERROR;
	if (!hs_clr_is(ev, HS_CLR_SAMPLE_PROFILER, 0))
		return -ENOENT;
	cursor_init(&c, ev);
	*type = (uint32_t)take(&c, 4);
	return finish(&c);
}

/* TraceEvent's task/opcode names of the runtime provider's events. */
static const struct {
	uint32_t id;
	const char *name;
} clr_event_names[] = {
    {1, "GC/Start"},
    {2, "GC/Stop"},
    {3, "GC/RestartEEStop"},
    {4, "GC/HeapStats"},
    {5, "GC/CreateSegment"},
    {6, "GC/FreeSegment"},
    {7, "GC/RestartEEStart"},
    {8, "GC/SuspendEEStop"},
    {9, "GC/SuspendEEStart"},
    {10, "GC/AllocationTick"},
    {11, "GC/CreateConcurrentThread"},
    {12, "GC/TerminateConcurrentThread"},
    {13, "GC/FinalizersStop"},
    {14, "GC/FinalizersStart"},
    {15, "Type/BulkType"},
    {16, "GC/BulkRootEdge"},
    {17, "GC/BulkRootConditionalWeakTableElementEdge"},
    {18, "GC/BulkNode"},
    {19, "GC/BulkEdge"},
    {20, "GC/SampledObjectAllocation"},
    {21, "GC/BulkSurvivingObjectRanges"},
    {22, "GC/BulkMovedObjectRanges"},
    {23, "GC/GenerationRange"},
    {25, "GC/MarkStackRoots"},
    {26, "GC/MarkFinalizeQueueRoots"},
    {27, "GC/MarkHandles"},
    {28, "GC/MarkCards"},
    {29, "GC/FinalizeObject"},
    {30, "GC/SetGCHandle"},
    {31, "GC/DestoryGCHandle"},
    {32, "GC/SampledObjectAllocation"},
    {33, "GC/PinObjectAtGCTime"},
    {34, "GC/PinPlugAtGCTime"},
    {35, "GC/Triggered"},
    {36, "GC/BulkRootCCW"},
    {37, "GC/BulkRCW"},
    {38, "GC/BulkRootStaticVar"},
    {44, "IOThreadCreation/Start"},
    {45, "IOThreadCreation/Stop"},
    {46, "IOThreadRetirement/Start"},
    {47, "IOThreadRetirement/Stop"},
    {50, "ThreadPoolWorkerThread/Start"},
    {51, "ThreadPoolWorkerThread/Stop"},
    {52, "ThreadPoolWorkerThreadRetirement/Start"},
    {53, "ThreadPoolWorkerThreadRetirement/Stop"},
    {54, "ThreadPoolWorkerThreadAdjustment/Sample"},
    {55, "ThreadPoolWorkerThreadAdjustment/Adjustment"},
    {56, "ThreadPoolWorkerThreadAdjustment/Stats"},
    {58, "YieldProcessorMeasurement/Info"},
    {59, "ThreadPoolMinMaxThreads/Info"},
    {60, "ThreadPoolWorkingThreadCount/Start"},
    {61, "ThreadPool/Enqueue"},
    {62, "ThreadPool/Dequeue"},
    {63, "ThreadPool/IOEnqueue"},
    {64, "ThreadPool/IODequeue"},
    {65, "ThreadPool/IOPack"},
    {70, "Thread/Creating"},
    {71, "Thread/Running"},
    {72, "Method/MethodDetails"},
    {73, "TypeLoad/Start"},
    {74, "TypeLoad/Stop"},
    {80, "Exception/Start"},
    {81, "Contention/Start"},
    {82, "ClrStack/Walk"},
    {83, "AppDomainResourceManagement/MemAllocated"},
    {84, "AppDomainResourceManagement/MemSurvived"},
    {85, "AppDomainResourceManagement/ThreadCreated"},
    {86, "AppDomainResourceManagement/ThreadTerminated"},
    {87, "AppDomainResourceManagement/DomainEnter"},
    {88, "ILStub/StubGenerated"},
    {89, "ILStub/StubCacheHit"},
    {90, "Contention/LockCreated"},
    {91, "Contention/Stop"},
    {135, "Method/DCStartCompleteV2"},
    {136, "Method/DCStopCompleteV2"},
    {137, "Method/DCStartV2"},
    {138, "Method/DCStopV2"},
    {139, "Method/DCStartVerboseV2"},
    {140, "Method/DCStopVerboseV2"},
    {141, "Method/Load"},
    {142, "Method/Unload"},
    {143, "Method/LoadVerbose"},
    {144, "Method/UnloadVerbose"},
    {145, "Method/JittingStarted"},
    {146, "Method/MemoryAllocatedForJitCode"},
    {149, "Loader/ModuleDCStartV2"},
    {150, "Loader/ModuleDCStopV2"},
    {151, "Loader/DomainModuleLoad"},
    {152, "Loader/ModuleLoad"},
    {153, "Loader/ModuleUnload"},
    {154, "Loader/AssemblyLoad"},
    {155, "Loader/AssemblyUnload"},
    {156, "Loader/AppDomainLoad"},
    {157, "Loader/AppDomainUnload"},
    {181, "StrongNameVerification/Start"},
    {182, "StrongNameVerification/Stop"},
    {183, "AuthenticodeVerification/Start"},
    {184, "AuthenticodeVerification/Stop"},
    {185, "Method/InliningSucceeded"},
    {186, "Method/InliningFailedAnsi"},
    {187, "Runtime/Start"},
    {188, "Method/TailCallSucceeded"},
    {189, "Method/TailCallFailed"},
    {190, "Method/ILToNativeMap"},
    {192, "Method/InliningFailed"},
    {202, "GC/MarkWithType"},
    {203, "GC/Join"},
    {204, "GC/PerHeapHistory"},
    {205, "GC/GlobalHeapHistory"},
    {206, "GC/GenAwareBegin"},
    {207, "GC/GenAwareEnd"},
    {208, "GC/LOHCompact"},
    {209, "GC/FitBucketInfo"},
    {250, "ExceptionCatch/Start"},
    {251, "ExceptionCatch/Stop"},
    {252, "ExceptionFinally/Start"},
    {253, "ExceptionFinally/Stop"},
    {254, "ExceptionFilter/Start"},
    {255, "ExceptionFilter/Stop"},
    {256, "Exception/Stop"},
    {260, "CodeSymbols/Start"},
    {280, "TieredCompilation/Settings"},
    {281, "TieredCompilation/Pause"},
    {282, "TieredCompilation/Resume"},
    {283, "TieredCompilation/BackgroundJitStart"},
    {284, "TieredCompilation/BackgroundJitStop"},
    {290, "AssemblyLoader/Start"},
    {291, "AssemblyLoader/Stop"},
    {292, "AssemblyLoader/ResolutionAttempted"},
    {293, "AssemblyLoader/AssemblyLoadContextResolvingHandlerInvoked"},
    {294, "AssemblyLoader/AppDomainAssemblyResolveHandlerInvoked"},
    {295, "AssemblyLoader/AssemblyLoadFromResolveHandlerInvoked"},
    {296, "AssemblyLoader/KnownPathProbed"},
    {297, "JitInstrumentationData/InstrumentationData"},
    {298, "JitInstrumentationDataVerbose/InstrumentationData"},
    {300, "ExecutionCheckpoint/ExecutionCheckpoint"},
    {301, "WaitHandleWait/Start"},
    {302, "WaitHandleWait/Stop"},
    {303, "AllocationSampling/AllocationSampled"},
};

const char *hs_clr_event_name(uint32_t event_id)
{
	size_t lo = 0, hi = sizeof(clr_event_names) / sizeof(clr_event_names[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (clr_event_names[mid].id == event_id)
			return clr_event_names[mid].name;
		if (clr_event_names[mid].id < event_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
