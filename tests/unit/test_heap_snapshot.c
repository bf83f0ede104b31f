/*
 * test_heap_snapshot - the heap graph from heap-dump events
 * (dotnet/heap_snapshot.c): a GC's events built byte by byte (a static
 * List<Node> whose nodes hold byte arrays, a strong and a weak handle, a
 * ConditionalWeakTable entry, an edge to an object never reported) become
 * the graph PerfView makes: root categories, static var names, type names
 * in PerfView's spelling with their module, the list's retained size; a gen2 GC that reports nothing is
 * skipped, and events outside the dump GC are ignored.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "dotnet/heap_snapshot.h"
#include "heap_events_build.h"

enum {
	T_LIST = 0x100, T_NODE = 0x200, T_BYTES = 0x300, T_NODES = 0x400, T_DICT = 0x500,
	T_BYTE = 0x600,
	A_LIST = 0x1000, A_NODES = 0x1100, A_NODE = 0x2000, A_BYTES = 0x3000, A_DICT = 0x4000,
	A_WEAK = 0x5000, A_CWT_VALUE = 0x6000,
};
#define NR_NODES 3

static void feed(struct hs_heap_snapshot *s, const struct hs_nettrace_event *ev)
{
	assert_int_equal(hs_heap_snapshot_event(s, ev, 8), 0);
}

static void feed_types(struct hs_heap_snapshot *s)
{
	static const uint64_t node_arg = T_NODE, byte_arg = T_BYTE;
	struct payload p;

	pl_start(&p, HS_CLR_GC_BULK_TYPE);
	pl_put(&p, 6, 4);
	pl_put(&p, 7, 2);
	pl_type(&p, T_LIST, 0x15, "System.Collections.Generic.List`1[Node]", 1, &node_arg);
	pl_type(&p, T_NODE, 0x12, "Node", 0, NULL);
	pl_type(&p, T_BYTES, 0x1d, "", 1, &byte_arg);
	pl_type(&p, T_NODES, 0x1d, "Node[]", 1, &node_arg);
	pl_type(&p, T_DICT, 0x12, "Entry[System.Func`1[Node],System.String[,]][]", 0, NULL);
	pl_type(&p, T_BYTE, 0x05, "System.Byte", 0, NULL);
	feed(s, pl_event(&p));
	/* the module of the types (pl_type() says 0xabc): ModuleLoad */
	pl_start(&p, 152);
	p.meta.version = 2;
	pl_put(&p, 0xabc, 8);
	pl_put(&p, 0xdef, 8);
	pl_put(&p, 0, 4);
	pl_put(&p, 0, 4);
	pl_utf16(&p, "/app/dotnet-heap.dll");
	pl_utf16(&p, "");
	pl_put(&p, 7, 2);
	feed(s, pl_event(&p));
}

/*
 * The dump GC: number 7, gen2, blocking; @with_types 0: the runtime
 * describes none of its types (it did to an earlier session).
 */
static void feed_dump_types(struct hs_heap_snapshot *s, int with_types)
{
	struct payload p;
	int i;

	feed(s, pl_gc_start(&p, 7, 2, 0));
	if (with_types)
		feed_types(s);
	pl_indexed(&p, HS_CLR_GC_BULK_NODE, 0, 4 + 2 * NR_NODES);
	pl_node(&p, A_LIST, 32, T_LIST, 1);
	pl_node(&p, A_NODES, 8 * NR_NODES + 24, T_NODES, NR_NODES);
	for (i = 0; i < NR_NODES; i++) {
		pl_node(&p, A_NODE + 0x10 * i, 32, T_NODE, 1);
		pl_node(&p, A_BYTES + 0x10 * i, 1024, T_BYTES, 0);
	}
	pl_node(&p, A_DICT, 80, T_DICT, 2);
	pl_node(&p, A_CWT_VALUE, 40, T_NODE, 0);
	feed(s, pl_event(&p));
	pl_indexed(&p, HS_CLR_GC_BULK_EDGE, 0, 1 + NR_NODES + NR_NODES + 2);
	pl_edge(&p, A_NODES);
	for (i = 0; i < NR_NODES; i++)
		pl_edge(&p, A_NODE + 0x10 * i);
	for (i = 0; i < NR_NODES; i++)
		pl_edge(&p, A_BYTES + 0x10 * i);
	pl_edge(&p, A_NODE);	/* the cache shares the first node */
	pl_edge(&p, 0x9999);	/* an object never reported */
	feed(s, pl_event(&p));
	pl_indexed(&p, HS_CLR_GC_BULK_ROOT_EDGE, 0, 2);
	pl_root(&p, A_DICT, 2, 0);			/* a strong handle */
	pl_root(&p, A_WEAK, 2, 2);			/* a weak one: no root */
	feed(s, pl_event(&p));
	pl_indexed(&p, HS_CLR_GC_BULK_ROOT_CWT_EDGE, 0, 1);
	pl_put(&p, A_DICT, 8);
	pl_put(&p, A_CWT_VALUE, 8);
	pl_put(&p, 0x1, 8);
	feed(s, pl_event(&p));
	pl_start(&p, HS_CLR_GC_BULK_ROOT_STATIC_VAR);
	pl_put(&p, 1, 4);
	pl_put(&p, 0xd0, 8);
	pl_put(&p, 7, 2);
	pl_static(&p, A_LIST, T_LIST, "Nodes");
	feed(s, pl_event(&p));
	assert_true(hs_heap_snapshot_started(s));
	assert_false(hs_heap_snapshot_done(s));
	feed(s, pl_gc_end(&p, 7, 2));
}

static void feed_dump(struct hs_heap_snapshot *s)
{
	feed_dump_types(s, 1);
}

static uint32_t node_at(const struct hs_heapgraph *g, uint64_t address)
{
	uint32_t i;

	for (i = 0; i < g->nr_nodes; i++)
		if (g->address[i] == address)
			return i;
	fail_msg("no node at %#llx", (unsigned long long)address);
	return 0;
}

static const char *type_of(const struct hs_heapgraph *g, uint32_t node)
{
	return g->types[g->type[node]].name;
}

static void test_graph(void **state)
{
	struct hs_heap_snapshot s;
	struct hs_heapgraph g;
	struct payload p;
	uint32_t *idom, i, list, dict, cwt_value, statics = HS_HEAPGRAPH_NONE;
	uint64_t *retained;

	(void)state;
	hs_heap_snapshot_init(&s);
	/* before: a gen1 GC and a background gen2 GC are not the dump */
	feed(&s, pl_gc_start(&p, 5, 1, 0));
	pl_indexed(&p, HS_CLR_GC_BULK_NODE, 0, 1);
	pl_node(&p, 0xdead, 64, T_NODE, 0);
	feed(&s, pl_event(&p));		/* outside the dump GC: ignored */
	feed(&s, pl_gc_end(&p, 5, 1));
	feed(&s, pl_gc_start(&p, 6, 2, 1));
	feed(&s, pl_gc_end(&p, 6, 2));
	assert_false(hs_heap_snapshot_started(&s));
	feed_dump(&s);
	assert_true(hs_heap_snapshot_done(&s));
	/* after: nothing changes */
	pl_indexed(&p, HS_CLR_GC_BULK_NODE, 0, 1);
	pl_node(&p, 0xbeef, 64, T_NODE, 0);
	feed(&s, pl_event(&p));

	hs_heapgraph_init(&g);
	assert_int_equal(hs_heap_snapshot_build(&s, &g), 0);
	/* root, [static vars], [strong Handles], the static var, 10 objects */
	assert_int_equal(g.nr_nodes, 1 + 2 + 1 + 4 + 2 * NR_NODES);
	assert_int_equal(g.root, 0);
	assert_string_equal(type_of(&g, 0), "[.NET Roots]");
	assert_int_equal(hs_heapgraph_nr_children(&g, 0), 2);
	assert_string_equal(type_of(&g, g.children[g.first_child[0]]), "[static vars]");
	assert_string_equal(type_of(&g, g.children[g.first_child[0] + 1]), "[strong Handles]");
	for (i = 0; i < g.nr_nodes; i++)
		if (!strncmp(type_of(&g, i), "[static var ", 12))
			statics = i;
	assert_int_not_equal(statics, HS_HEAPGRAPH_NONE);
	assert_string_equal(type_of(&g, statics),
			    "[static var System.Collections.Generic.List<Node>.Nodes]");
	list = node_at(&g, A_LIST);
	assert_int_equal(g.children[g.first_child[statics]], list);
	assert_string_equal(type_of(&g, list), "System.Collections.Generic.List<Node>");
	assert_string_equal(type_of(&g, node_at(&g, A_BYTES)), "System.Byte[] (Bytes > 1K)");
	assert_string_equal(type_of(&g, node_at(&g, A_NODE)), "Node");
	assert_string_equal(type_of(&g, node_at(&g, A_NODES)), "Node[]");
	assert_string_equal(type_of(&g, node_at(&g, A_DICT)),
			    "Entry<System.Func<Node>,System.String<,>>[]");
	assert_string_equal(g.types[g.type[list]].module, "/app/dotnet-heap.dll");
	assert_null(g.types[0].module);	/* "[.NET Roots]" */
	assert_int_equal(g.size[node_at(&g, A_BYTES)], 1024);
	/* the cache: its node, the never-reported object dropped, the CWT value */
	dict = node_at(&g, A_DICT);
	cwt_value = node_at(&g, A_CWT_VALUE);
	assert_int_equal(hs_heapgraph_nr_children(&g, dict), 2);
	assert_int_equal(g.children[g.first_child[dict]], node_at(&g, A_NODE));
	assert_int_equal(g.children[g.first_child[dict] + 1], cwt_value);
	for (i = 0; i < g.nr_nodes; i++)
		assert_int_not_equal(g.address[i], A_WEAK);

	/* the list retains its array and nodes but the shared first one */
	idom = malloc(g.nr_nodes * sizeof(*idom));
	retained = malloc(g.nr_nodes * sizeof(*retained));
	assert_non_null(idom);
	assert_non_null(retained);
	assert_int_equal(hs_heapgraph_dominators(&g, idom), 0);
	assert_int_equal(hs_heapgraph_retained(&g, idom, retained), 0);
	assert_int_equal(retained[list], 32 + (8 * NR_NODES + 24) + (NR_NODES - 1) * (32 + 1024));
	assert_int_equal(retained[dict], 80 + 40);
	free(idom);
	free(retained);
	hs_heapgraph_release(&g);
	hs_heap_snapshot_release(&s);
}

static void test_gen2_without_heap(void **state)
{
	struct hs_heap_snapshot s;
	struct hs_heapgraph g;
	struct payload p;

	(void)state;
	hs_heap_snapshot_init(&s);
	/* a blocking gen2 GC that reports no node: the next one is the dump */
	feed(&s, pl_gc_start(&p, 4, 2, 0));
	feed(&s, pl_gc_end(&p, 4, 2));
	assert_false(hs_heap_snapshot_done(&s));
	hs_heapgraph_init(&g);
	assert_int_equal(hs_heap_snapshot_build(&s, &g), -ENODATA);
	feed_dump(&s);
	assert_true(hs_heap_snapshot_done(&s));
	assert_int_equal(hs_heap_snapshot_build(&s, &g), 0);
	assert_int_equal(g.nr_nodes, 1 + 2 + 1 + 4 + 2 * NR_NODES);
	hs_heapgraph_release(&g);
	hs_heap_snapshot_release(&s);
}

/* A file holding @text, read from its start. */
static FILE *file_of(const char *text)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	fputs(text, f);
	rewind(f);
	return f;
}

/*
 * The types of one snapshot, saved, name the objects of a second whose
 * runtime described none; a type the second has keeps its own name;
 * damaged files are refused.
 */
static void test_saved_types(void **state)
{
	struct hs_heap_snapshot s1, s2;
	struct hs_heapgraph g;
	FILE *f;
	long k;
	int err;

	(void)state;
	hs_heap_snapshot_init(&s1);
	feed_dump(&s1);
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(hs_heap_snapshot_save_types(&s1, f), 0);
	rewind(f);

	hs_heap_snapshot_init(&s2);
	feed_dump_types(&s2, 0);
	hs_heapgraph_init(&g);
	assert_int_equal(hs_heap_snapshot_build(&s2, &g), 0);
	assert_string_not_equal(type_of(&g, node_at(&g, A_LIST)),
				"System.Collections.Generic.List<Node>");
	hs_heapgraph_release(&g);
	assert_int_equal(hs_heap_snapshot_load_types(&s2, f), 0);
	assert_int_equal(s2.nr_types, 6);
	hs_heapgraph_init(&g);
	assert_int_equal(hs_heap_snapshot_build(&s2, &g), 0);
	assert_string_equal(type_of(&g, node_at(&g, A_LIST)),
			    "System.Collections.Generic.List<Node>");
	assert_string_equal(type_of(&g, node_at(&g, A_BYTES)), "System.Byte[] (Bytes > 1K)");
	assert_string_equal(type_of(&g, node_at(&g, A_DICT)),
			    "Entry<System.Func<Node>,System.String<,>>[]");
	hs_heapgraph_release(&g);
	hs_heap_snapshot_release(&s2);

	/* the snapshot's own description wins over a saved one */
	hs_heap_snapshot_init(&s2);
	feed_dump(&s2);
	fclose(f);
	f = file_of("200 abc 12 0 OldNode\n900 0 12 0 Extra\n");
	assert_int_equal(hs_heap_snapshot_load_types(&s2, f), 0);
	fclose(f);
	assert_int_equal(s2.nr_types, 7);
	hs_heapgraph_init(&g);
	assert_int_equal(hs_heap_snapshot_build(&s2, &g), 0);
	assert_string_equal(type_of(&g, node_at(&g, A_NODE)), "Node");
	hs_heapgraph_release(&g);
	hs_heap_snapshot_release(&s2);

	/* damaged: a missing field, too many params, no end of line, bad hex */
	{
		static const char *const bad[] = {
		    "200 abc 12\n",	 "200 abc 12 0\n", "200 abc 12 2 5 X\n",
		    "200 abc 12 401 Y\n", "200 abc 12 0 Cut", "2g0 abc 12 0 Z\n",
		    "200 abc 100 0 W\n",	 " 200 abc 12 0 V\n",
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			hs_heap_snapshot_init(&s2);
			f = file_of(bad[i]);
			assert_int_equal(hs_heap_snapshot_load_types(&s2, f), -EINVAL);
			fclose(f);
			hs_heap_snapshot_release(&s2);
		}
	}

	/* allocation failures: an error, never a leak */
	for (k = 0; k < 20; k++) {
		hs_heap_snapshot_init(&s2);
		f = file_of("200 abc 12 0 OldNode\n900 0 1d 1 600 Extra[]\n");
		hs_alloc_fail_after(k);
		err = hs_heap_snapshot_load_types(&s2, f);
		hs_alloc_fail_after(-1);
		fclose(f);
		assert_true(err == 0 || err == -ENOMEM);
		hs_heap_snapshot_release(&s2);
	}
	hs_heap_snapshot_release(&s1);
}

static void test_bad_and_oom(void **state)
{
	struct hs_heap_snapshot s;
	struct hs_heapgraph g;
	struct payload p;
	long k;
	int err;

	(void)state;
	hs_heap_snapshot_init(&s);
	feed(&s, pl_gc_start(&p, 1, 2, 0));
	pl_indexed(&p, HS_CLR_GC_BULK_NODE, 0, 2);
	pl_node(&p, 1, 2, 3, 0);
	assert_int_equal(hs_heap_snapshot_event(&s, pl_event(&p), 8), -EINVAL);
	hs_heap_snapshot_release(&s);

	for (k = 0; k < 60; k++) {
		hs_heap_snapshot_init(&s);
		hs_heapgraph_init(&g);
		feed_dump(&s);
		hs_alloc_fail_after(k);
		err = hs_heap_snapshot_build(&s, &g);
		hs_alloc_fail_after(-1);
		assert_true(err == 0 || err == -ENOMEM);
		hs_heapgraph_release(&g);
		hs_heap_snapshot_release(&s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_graph),
		cmocka_unit_test(test_gen2_without_heap),
		cmocka_unit_test(test_saved_types),
		cmocka_unit_test(test_bad_and_oom),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
