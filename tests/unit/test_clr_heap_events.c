/*
 * test_clr_heap_events - the heap-dump event decoders
 * (dotnet/clr_heap_events.c) on payloads built byte by byte: each layout's
 * fields, 4-byte pointers, and payloads too short for their count.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "dotnet/clr_heap_events.h"
#include "heap_events_build.h"

static void test_nodes_and_edges(void **state)
{
	struct payload p;
	struct hs_clr_bulk b;
	struct hs_clr_heap_node n;
	struct hs_clr_heap_edge e;

	(void)state;
	pl_indexed(&p, HS_CLR_GC_BULK_NODE, 3, 2);
	pl_node(&p, 0x7f0000001000, 32, 0x100, 1);
	pl_node(&p, 0x7f0000002000, 1024, 0x200, 0);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), 0);
	assert_int_equal(b.index, 3);
	assert_int_equal(b.count, 2);
	assert_int_equal(hs_clr_bulk_node(&b, &n), 0);
	assert_int_equal(n.address, 0x7f0000001000);
	assert_int_equal(n.size, 32);
	assert_int_equal(n.type_id, 0x100);
	assert_int_equal(n.nr_edges, 1);
	assert_int_equal(hs_clr_bulk_node(&b, &n), 0);
	assert_int_equal(n.size, 1024);
	assert_int_equal(hs_clr_bulk_node(&b, &n), -EINVAL);	/* past the payload */
	assert_int_equal(hs_clr_bulk_edge(&b, &e), -ENOENT);	/* not an edge batch */

	/* a count larger than the payload holds */
	pl_indexed(&p, HS_CLR_GC_BULK_NODE, 0, 3);
	pl_node(&p, 1, 2, 3, 0);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), -EINVAL);

	pl_indexed(&p, HS_CLR_GC_BULK_EDGE, 0, 1);
	pl_edge(&p, 0x7f0000002000);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), 0);
	assert_int_equal(hs_clr_bulk_edge(&b, &e), 0);
	assert_int_equal(e.target, 0x7f0000002000);

	/* 4-byte pointers: an edge is 8 bytes */
	pl_indexed(&p, HS_CLR_GC_BULK_EDGE, 0, 2);
	pl_put(&p, 0x1000, 4);
	pl_put(&p, 9, 4);
	pl_put(&p, 0x2000, 4);
	pl_put(&p, 10, 4);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 4, &b), 0);
	assert_int_equal(hs_clr_bulk_edge(&b, &e), 0);
	assert_int_equal(e.target, 0x1000);
	assert_int_equal(e.field_id, 9);
	assert_int_equal(hs_clr_bulk_edge(&b, &e), 0);
	assert_int_equal(e.target, 0x2000);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), -EINVAL);	/* 24 > 16 */
}

static void test_roots(void **state)
{
	struct payload p;
	struct hs_clr_bulk b;
	struct hs_clr_heap_root r;
	struct hs_clr_heap_cwt c;
	struct hs_clr_heap_static s;

	(void)state;
	pl_indexed(&p, HS_CLR_GC_BULK_ROOT_EDGE, 0, 1);
	pl_root(&p, 0x3000, HS_CLR_ROOT_HANDLE, HS_CLR_ROOT_PINNING);
	assert_int_equal(p.n, 10 + 21);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), 0);
	assert_int_equal(hs_clr_bulk_root(&b, &r), 0);
	assert_int_equal(r.address, 0x3000);
	assert_int_equal(r.kind, HS_CLR_ROOT_HANDLE);
	assert_int_equal(r.flags, HS_CLR_ROOT_PINNING);
	assert_int_equal(r.root_id, 0x77);

	pl_indexed(&p, HS_CLR_GC_BULK_ROOT_CWT_EDGE, 0, 1);
	pl_put(&p, 0x10, 8);
	pl_put(&p, 0x20, 8);
	pl_put(&p, 0x30, 8);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), 0);
	assert_int_equal(hs_clr_bulk_cwt(&b, &c), 0);
	assert_int_equal(c.key, 0x10);
	assert_int_equal(c.value, 0x20);
	assert_int_equal(c.root_id, 0x30);

	/* static vars: count, app domain, CLR id, then variable-size values */
	pl_start(&p, HS_CLR_GC_BULK_ROOT_STATIC_VAR);
	pl_put(&p, 2, 4);
	pl_put(&p, 0xd0, 8);
	pl_put(&p, 7, 2);
	pl_static(&p, 0x4000, 0x100, "Nodes");
	pl_static(&p, 0x5000, 0x101, "s_table");
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), 0);
	assert_int_equal(b.count, 2);
	assert_int_equal(b.app_domain, 0xd0);
	assert_int_equal(hs_clr_bulk_static(&b, &s), 0);
	assert_int_equal(s.object, 0x4000);
	assert_int_equal(s.type_id, 0x100);
	assert_string_equal(s.field, "Nodes");
	hs_free(s.field);
	assert_int_equal(hs_clr_bulk_static(&b, &s), 0);
	assert_string_equal(s.field, "s_table");
	hs_free(s.field);
	/* a string without its NUL */
	p.n -= 2;
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), 0);
	assert_int_equal(hs_clr_bulk_static(&b, &s), 0);
	hs_free(s.field);
	assert_int_equal(hs_clr_bulk_static(&b, &s), -EINVAL);
	assert_null(s.field);
}

static void test_types(void **state)
{
	static const uint64_t args[2] = { 0x200, 0x300 };
	struct payload p;
	struct hs_clr_bulk b;
	struct hs_clr_heap_type t;
	struct hs_nettrace_event other;
	struct hs_nettrace_meta meta;

	(void)state;
	pl_start(&p, HS_CLR_GC_BULK_TYPE);
	pl_put(&p, 2, 4);
	pl_put(&p, 7, 2);
	pl_type(&p, 0x100, 0x15, "System.Collections.Generic.Dictionary`2", 2, args);
	pl_type(&p, 0x200, 0x12, "Node", 0, NULL);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), 0);
	assert_int_equal(hs_clr_bulk_type(&b, &t), 0);
	assert_int_equal(t.type_id, 0x100);
	assert_int_equal(t.module_id, 0xabc);
	assert_int_equal(t.element_type, 0x15);
	assert_string_equal(t.name, "System.Collections.Generic.Dictionary`2");
	assert_int_equal(t.nr_params, 2);
	assert_int_equal(hs_clr_heap_type_param(&t, 0), 0x200);
	assert_int_equal(hs_clr_heap_type_param(&t, 1), 0x300);
	hs_free(t.name);
	assert_int_equal(hs_clr_bulk_type(&b, &t), 0);
	assert_string_equal(t.name, "Node");
	assert_int_equal(t.nr_params, 0);
	hs_free(t.name);
	/* a parameter count beyond the payload */
	p.n -= 4;
	pl_put(&p, 5, 4);
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), 0);
	assert_int_equal(hs_clr_bulk_type(&b, &t), 0);
	hs_free(t.name);
	assert_int_equal(hs_clr_bulk_type(&b, &t), -EINVAL);
	assert_null(t.name);

	/* other events and providers are not heap events */
	meta = p.meta;
	meta.event_id = 1;
	other = p.ev;
	other.meta = &meta;
	assert_int_equal(hs_clr_bulk_begin(&other, 8, &b), -ENOENT);
	meta.event_id = HS_CLR_GC_BULK_TYPE;
	meta.provider = (char *)"Microsoft-Windows-DotNETRuntimeRundown";
	assert_int_equal(hs_clr_bulk_begin(&other, 8, &b), -ENOENT);
	/* a header cut short */
	p.n = 5;
	assert_int_equal(hs_clr_bulk_begin(pl_event(&p), 8, &b), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes_and_edges),
		cmocka_unit_test(test_roots),
		cmocka_unit_test(test_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
