#ifndef HS_IO_IMPORT_NETTRACE_H
#define HS_IO_IMPORT_NETTRACE_H
#include <stdio.h>
#include "common/diag.h"
#include "io/io.h"
#include "model/stack_source.h"
#include "common/log.h"

/*
 * import_nettrace - the stack sources of a .NET EventPipe trace
 * (.nettrace, or a .nettrace.zip holding one), read with dotnet/nettrace:
 *
 *   gc-alloc          one sample per GCAllocationTick: its bytes (about
 *                     100 KB each), the managed stack, then a leaf frame
 *                     "Type NAME", then "LargeObject" / "PinnedObject" for
 *                     the large and pinned object heaps (PerfView's "GC
 *                     Heap Alloc Ignore Free (Coarse Sampling)")
 *   gc-alloc-sampled  one sample per AllocationSampled (.NET 10), weighted
 *                     by its unbiased estimator, with the same leaf frames
 *   thread-time       the SampleProfiler's samples: each weighs the ms to
 *                     the thread's next sample (the sampling interval for
 *                     its last); CPU_TIME leaf in managed code,
 *                     UNMANAGED_CODE_TIME outside it (PerfView's
 *                     EventPipe Thread Time)
 *   events            every other event with a stack, with a leaf frame
 *                     "Event PROVIDER/EVENT" (PerfView's "Any Stacks");
 *                     "events:PROVIDER/EVENT" keeps one kind only
 *
 * Every stack starts with "Process NAME (PID)" and "Thread (TID)"; managed
 * frames are "Assembly!Namespace.Type.Method(args)" from the method
 * events (MethodLoadVerbose, the rundown's MethodDC*Verbose), an address
 * in no known method "?!0xADDR". docs/dotnet.md has the details.
 *
 * Memory: the distinct stacks, methods and threads, and the samples.
 */

enum hs_nettrace_view {
	HS_NETTRACE_GC_ALLOC,
	HS_NETTRACE_GC_ALLOC_SAMPLED,
	HS_NETTRACE_THREAD_TIME,
	HS_NETTRACE_EVENTS,
	HS_NETTRACE__COUNT
};

/* The sources, in enum order: name and one line each (static). */
extern const struct hs_source_info hs_nettrace_sources[HS_NETTRACE__COUNT];

/*
 * The index of source @name (NULL: gc-alloc) in *@view; "events:P/E"
 * gives HS_NETTRACE_EVENTS. Returns 0 or -ENOENT.
 */
int hs_nettrace_source_index(const char *name, size_t *view);

/*
 * Import the nettrace stream @f (borrowed) as @view; @source is the name
 * asked for (for "events:PROVIDER/EVENT"; NULL or "events" keeps every
 * event). @out must be initialised. A stream cut off imports what it
 * holds and logs a warning naming the offset; a corrupt one fails with
 * -EINVAL and @diag naming the offset. "events:" naming an event the trace
 * has no stacks of is -ENOENT.
 */
HS_MUST_CHECK
int hs_import_nettrace(FILE *f, size_t view, const char *source,
		       struct hs_stack_source *out, struct hs_diag *diag);
/* The same for the .nettrace entry of the zip at @path. */
HS_MUST_CHECK
int hs_import_nettrace_zip(const char *path, size_t view, const char *source,
			   struct hs_stack_source *out, struct hs_diag *diag);
/*
 * The sources the trace at @path (zipped when @zipped) offers, default
 * first, into @out (room for HS_SOURCES_MAX): gc-alloc, gc-alloc-sampled
 * only when it has AllocationSampled events, thread-time only with
 * SampleProfiler samples, events only with other stacks. Reads the whole
 * file; on a read error it offers all of them. Returns how many.
 */
size_t hs_nettrace_path_sources(const char *path, int zipped, struct hs_source_info *out);
#endif
