/*
 * fuzz_gcdump - libFuzzer target for the .gcdump reader
 * (heapgraph/gcdump.c) and what is computed from the graph it reads
 * (heapgraph/graph.c: the spanning tree, the dominators, retained sizes,
 * the type table and both views): any bytes either read or rejected with
 * a message naming an offset; nothing may crash, leak or hang.
 *
 * The seed corpus is tests/fuzz/corpus/fuzz_gcdump/ (a small hand-made graph
 * with a cycle, in the layout dotnet-gcdump writes). Build it with clang
 * -fsanitize=fuzzer against src/heapgraph, src/model and src/common.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/alloc.h"
#include "common/diag.h"
#include "heapgraph/gcdump.h"
#include "heapgraph/graph.h"
#include "model/stack_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Everything a reader of the graph computes, on a graph that was read. */
static void exercise(const struct hs_heapgraph *g)
{
	struct hs_heapgraph_type_total *rows;
	struct hs_stack_source s;
	uint32_t *idom = malloc(((size_t)g->nr_nodes + 1) * sizeof(*idom));
	uint64_t *retained = malloc(((size_t)g->nr_nodes + 1) * sizeof(*retained));
	int err;

	if (idom && retained && !hs_heapgraph_dominators(g, idom))
		(void)hs_heapgraph_retained(g, idom, retained);
	free(idom);
	free(retained);
	(void)hs_heapgraph_type_totals(g, &rows, &err);
	hs_free(rows);
	hs_source_init(&s);
	(void)hs_heapgraph_heap_source(g, &s);
	hs_source_release(&s);
	hs_source_init(&s);
	(void)hs_heapgraph_retained_source(g, &s);
	hs_source_release(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_heapgraph g;
	FILE *f;
	int err;

	if (!size)
		return 0;
	(void)hs_gcdump_sniff(data, size);
	f = fmemopen((void *)data, size, "rb");
	if (!f)
		return 0;
	hs_heapgraph_init(&g);
	err = hs_gcdump_read(f, size, &g, &diag);
	fclose(f);
	if (err && !diag.set)
		abort();	/* every rejection says why */
	if (!err)
		exercise(&g);
	hs_heapgraph_release(&g);
	return 0;
}
