/*
 * fuzz_nettrace - libFuzzer target for the .nettrace reader
 * (dotnet/nettrace.c), the runtime's payload layouts (dotnet/clr_events.c)
 * and the stack sources built from them (io/import_nettrace.c): any bytes
 * either read, cut off or rejected with a message naming an offset;
 * nothing may crash, leak or hang.
 *
 * Each input is read once with a consumer that runs every payload decoder
 * on every event, then imported as each source. The seed corpus is
 * tests/fuzz/corpus/fuzz_nettrace/ (a trace recorded from tests/targets/dotnet);
 * tests/fuzz/meson.build builds it like every other target.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/diag.h"
#include "dotnet/clr_events.h"
#include "dotnet/nettrace.h"
#include "io/import_nettrace.h"
#include "model/stack_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned pointer_size = 8;

static int on_header(void *ctx, const struct hs_nettrace_header *h)
{
	(void)ctx;
	pointer_size = h->pointer_size;
	return 0;
}

/* Every decoder on every event: each must stay inside the payload. */
static int on_event(void *ctx, const struct hs_nettrace_event *ev)
{
	struct hs_clr_alloc_tick tick;
	struct hs_clr_alloc_sampled sampled;
	struct hs_clr_method method;
	struct hs_clr_module module;
	struct hs_clr_gc_start start;
	struct hs_clr_gc_end end;
	struct hs_clr_gc_heap_stats stats;
	struct hs_clr_gc_suspend suspend;
	uint32_t type, i;
	uint64_t *sum = ctx;

	if (!hs_clr_alloc_tick(ev, pointer_size, &tick))
		hs_clr_alloc_tick_release(&tick);
	if (!hs_clr_alloc_sampled(ev, pointer_size, &sampled))
		hs_clr_alloc_sampled_release(&sampled);
	if (!hs_clr_method(ev, &method)) {
		char *name = hs_clr_method_frame(&method, "fuzz");

		free(name);
		hs_clr_method_release(&method);
	}
	if (!hs_clr_module(ev, &module))
		hs_clr_module_release(&module);
	(void)hs_clr_gc_start(ev, &start);
	(void)hs_clr_gc_end(ev, &end);
	(void)hs_clr_gc_heap_stats(ev, &stats);
	(void)hs_clr_gc_suspend(ev, &suspend);
	(void)hs_clr_thread_sample(ev, &type);
	(void)hs_clr_event_name(ev->meta->event_id);
	for (i = 0; i < ev->stack_depth; i++)	/* every frame must be readable */
		*sum += ev->stack[i];
	for (i = 0; i < ev->payload_size; i++)
		*sum += ev->payload[i];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const sources[] = {
		"gc-alloc", "gc-alloc-sampled", "thread-time", "events",
		"events:Microsoft-Windows-DotNETRuntime/Exception/Start",
	};
	struct hs_nettrace_ops ops;
	uint64_t sum = 0;
	size_t i;
	FILE *f;

	if (!size)
		return 0;
	ops.ctx = &sum;
	ops.header = on_header;
	ops.event = on_event;
	f = fmemopen((void *)data, size, "rb");
	if (!f)
		return 0;
	{
		struct hs_diag d = HS_DIAG_INIT("fuzz");

		if (hs_nettrace_read(f, &ops, NULL, &d) < 0 && !d.set)
			abort();	/* an error always says where */
	}
	fclose(f);
	for (i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		struct hs_diag d = HS_DIAG_INIT("fuzz");
		struct hs_stack_source src;
		size_t view;

		f = fmemopen((void *)data, size, "rb");
		if (!f)
			return 0;
		hs_source_init(&src);
		if (hs_nettrace_source_index(sources[i], &view))
			abort();
		(void)hs_import_nettrace(f, view, sources[i], &src, &d);
		hs_source_release(&src);
		fclose(f);
	}
	return 0;
}
