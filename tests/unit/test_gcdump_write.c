/*
 * test_gcdump_write - the .gcdump writer (heapgraph/gcdump_write.c): a
 * graph built here (sizes that take every length of compressed int,
 * children before and after their node, sizes equal to and unlike their
 * type's, sampling multipliers) is written and read back with gcdump.c;
 * the snapshot recorded with dotnet-gcdump is read, written again and
 * compared with the original (the same header, type table, addresses and
 * tail; the node records in another order); errors (no root, a full
 * disk, no memory) fail cleanly.
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
#include "heapgraph/gcdump.h"
#include "heapgraph/gcdump_write.h"

static const char *data(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/dotnet/%s", HS_TEST_DATA, name);
	return path;
}

/* Write @g into memory; *@len gets the size. */
static unsigned char *write_mem(const struct hs_heapgraph *g, const struct hs_gcdump_origin *o,
				size_t *len)
{
	struct hs_diag d = { 0 };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(hs_gcdump_write(f, g, o, &d), 0);
	assert_int_equal(fclose(f), 0);
	return (unsigned char *)buf;
}

static void read_mem(const unsigned char *b, size_t n, struct hs_heapgraph *g)
{
	struct hs_diag d = { 0 };
	FILE *f = fmemopen((void *)b, n, "rb");

	assert_non_null(f);
	hs_heapgraph_init(g);
	assert_int_equal(hs_gcdump_read(f, n, g, &d), 0);
	fclose(f);
}

static void assert_same_graph(const struct hs_heapgraph *a, const struct hs_heapgraph *b)
{
	uint32_t i;

	assert_int_equal(a->nr_nodes, b->nr_nodes);
	assert_int_equal(a->nr_edges, b->nr_edges);
	assert_int_equal(a->nr_types, b->nr_types);
	assert_int_equal(a->root, b->root);
	for (i = 0; i < a->nr_types; i++) {
		assert_string_equal(a->types[i].name, b->types[i].name);
		assert_int_equal(a->types[i].size, b->types[i].size);
		if (a->types[i].module)
			assert_string_equal(a->types[i].module, b->types[i].module);
		else
			assert_null(b->types[i].module);
	}
	assert_memory_equal(a->address, b->address, a->nr_nodes * sizeof(*a->address));
	assert_memory_equal(a->size, b->size, a->nr_nodes * sizeof(*a->size));
	assert_memory_equal(a->type, b->type, a->nr_nodes * sizeof(*a->type));
	assert_memory_equal(a->first_child, b->first_child,
			    (a->nr_nodes + 1) * sizeof(*a->first_child));
	assert_memory_equal(a->children, b->children, a->nr_edges * sizeof(*a->children));
}

/*
 * root(0) -> [static vars](1) -> big(2) -> small(3..), and a last node
 * that points back at the first ones (negative deltas).
 */
static void build(struct hs_heapgraph *g, uint32_t nr_small)
{
	uint32_t t_root, t_cat, t_big, t_small, i, kids[3];

	hs_heapgraph_init(g);
	assert_int_equal(hs_heapgraph_add_type(g, "[.NET Roots]", NULL, 0, &t_root), 0);
	assert_int_equal(hs_heapgraph_add_type(g, "[static vars]", NULL, 0, &t_cat), 0);
	assert_int_equal(hs_heapgraph_add_type(g, "Big[]", "/lib/Big.dll", 24, &t_big), 0);
	assert_int_equal(hs_heapgraph_add_type(g, "Small", "/lib/Small.dll", 40, &t_small), 0);
	kids[0] = 1;
	assert_int_equal(hs_heapgraph_add_node(g, t_root, 0, 0, kids, 1), 0);
	kids[0] = 2;
	assert_int_equal(hs_heapgraph_add_node(g, t_cat, 0, 0, kids, 1), 0);
	/* big: far children (multi-byte deltas), a size that needs 5 groups */
	kids[0] = 3;
	kids[1] = 3 + nr_small - 1;
	kids[2] = 3 + nr_small;
	assert_int_equal(hs_heapgraph_add_node(g, t_big, 0x7ffffff0u, 0x7f0000001000ull,
					       kids, 3), 0);
	for (i = 0; i < nr_small; i++)
		assert_int_equal(hs_heapgraph_add_node(g, t_small, i % 3 ? 40 : 40 + i * 8,
						       0x7f0000002000ull + i * 64, NULL, 0), 0);
	kids[0] = 0;
	kids[1] = 2;
	kids[2] = 3;
	assert_int_equal(hs_heapgraph_add_node(g, t_small, 70000, 0x7f00ffff0000ull,
					       kids, 3), 0);
	g->root = 0;
	assert_int_equal(hs_heapgraph_check(g), 0);
}

static void test_round_trip(void **state)
{
	struct hs_gcdump_origin origin = { .pid = 4242, .process_name = "dotnet-heap" };
	struct hs_heapgraph g, back;
	unsigned char *buf;
	size_t len;

	(void)state;
	build(&g, 10000);
	buf = write_mem(&g, &origin, &len);
	assert_true(hs_gcdump_sniff(buf, len));
	read_mem(buf, len, &back);
	assert_same_graph(&g, &back);
	assert_null(back.count_multiplier);
	assert_true(back.avg_count_multiplier == 1.0f);
	/* the tail: "heapscope" as the tool, then the trailer's offsets */
	assert_non_null(memmem(buf, len, "\x0d\x09\0\0\0heapscope\x06\x06", 16));
	{
		uint32_t trailer, table;

		memcpy(&trailer, buf + len - 4, 4);
		memcpy(&table, buf + len - 8, 4);
		assert_int_equal(trailer, len - 8);
		assert_int_equal(table, len - 16);
		assert_int_equal(buf[table], 1);	/* one forward reference */
	}
	free(buf);
	hs_heapgraph_release(&back);
	hs_heapgraph_release(&g);
}

static void test_round_trip_sampled(void **state)
{
	struct hs_heapgraph g, back;
	unsigned char *buf;
	size_t len;
	uint32_t i;

	(void)state;
	build(&g, 5);
	g.count_multiplier = hs_malloc(g.nr_types * sizeof(float));
	assert_non_null(g.count_multiplier);
	for (i = 0; i < g.nr_types; i++)
		g.count_multiplier[i] = 1.0f + (float)i;
	g.avg_count_multiplier = 2.5f;
	g.avg_size_multiplier = 3.0f;
	buf = write_mem(&g, NULL, &len);
	read_mem(buf, len, &back);
	assert_same_graph(&g, &back);
	assert_non_null(back.count_multiplier);
	assert_memory_equal(back.count_multiplier, g.count_multiplier, g.nr_types * sizeof(float));
	assert_true(back.avg_count_multiplier == 2.5f);
	assert_true(back.avg_size_multiplier == 3.0f);
	free(buf);
	hs_heapgraph_release(&back);
	hs_heapgraph_release(&g);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Where the address table starts: after the node table and the blob. */
static size_t addresses_at(const unsigned char *b, size_t len, size_t node_table,
			   uint32_t nr_nodes)
{
	size_t blob_len_at = node_table + 4 * (size_t)nr_nodes;

	assert_true(blob_len_at + 4 <= len);
	assert_true(blob_len_at + 4 + le32(b + blob_len_at) <= len);
	return blob_len_at + 4 + le32(b + blob_len_at);
}

/* dotnet-gcdump's file, read and written again, says the same. */
static void test_rewrite_fixture(void **state)
{
	struct hs_gcdump_origin origin = { .creation_tool = "dotnet-gcdump" };
	struct hs_heapgraph g, back;
	struct hs_diag d = { 0 };
	unsigned char *orig, *buf;
	size_t len, orig_len, i, prefix;
	uint32_t unknown_sizes = 0;
	FILE *f;
	long n;

	(void)state;
	f = fopen(data("heap-1000.gcdump"), "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	orig_len = (size_t)n;
	rewind(f);
	orig = malloc(orig_len);
	assert_non_null(orig);
	assert_int_equal(fread(orig, 1, orig_len, f), orig_len);
	fclose(f);

	hs_heapgraph_init(&g);
	assert_int_equal(hs_gcdump_read_path(data("heap-1000.gcdump"), &g, &d), 0);
	buf = write_mem(&g, &origin, &len);
	read_mem(buf, len, &back);
	assert_same_graph(&g, &back);
	/*
	 * The same header, GCHeapDump and MemoryGraph type objects and type
	 * table (but for the types whose size the runtime did not know: -1
	 * in the file, 0 in the graph and so in the copy), up to the node
	 * count.
	 */
	prefix = 4 + 20 + 1 + 25 + 1 + 33 + 8 + 4 + 4 + 4;
	for (i = 0; i < g.nr_types; i++)
		prefix += 4 + strlen(g.types[i].name) + 4 + 4 +
			  (g.types[i].module ? strlen(g.types[i].module) : 0);
	assert_true(prefix <= len && prefix <= orig_len);
	for (i = 0; i < prefix; i++) {
		if (buf[i] == orig[i])
			continue;
		assert_true(i + 4 <= prefix);
		assert_memory_equal(orig + i, "\xff\xff\xff\xff", 4);
		assert_memory_equal(buf + i, "\0\0\0\0", 4);
		i += 3;
		unknown_sizes++;
	}
	assert_true(unknown_sizes > 0 && unknown_sizes < g.nr_types);
	/*
	 * The node table and blob differ (dotnet-gcdump's records are in the
	 * order the runtime reported them, heapscope's in node order); from
	 * the addresses to the forward reference table the bytes are the same.
	 */
	{
		size_t ours = addresses_at(buf, len, prefix, g.nr_nodes);
		size_t theirs = addresses_at(orig, orig_len, prefix, g.nr_nodes);

		assert_int_equal(len - ours, orig_len - theirs);
		assert_memory_equal(buf + ours, orig + theirs, len - ours - 12);
		/* the trailer: offsets of the table and of the trailer itself */
		assert_int_equal(le32(buf + len - 4), ours + (len - ours) - 8);
		assert_int_equal(le32(orig + orig_len - 4), theirs + (orig_len - theirs) - 8);
		assert_int_equal(le32(buf + len - 8), len - 16);
		assert_int_equal(le32(orig + orig_len - 8), orig_len - 16);
		assert_int_equal(len - le32(buf + len - 12), orig_len - le32(orig + orig_len - 12));
	}
	free(buf);
	free(orig);
	hs_heapgraph_release(&back);
	hs_heapgraph_release(&g);
}

static void test_errors(void **state)
{
	struct hs_heapgraph g;
	struct hs_diag d = { 0 };
	char *buf = NULL;
	size_t len;
	FILE *f;
	long k;
	int err;

	(void)state;
	build(&g, 3);
	g.root = HS_HEAPGRAPH_NONE;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(hs_gcdump_write(f, &g, NULL, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "no root"));
	fclose(f);
	free(buf);
	g.root = 0;

	f = fopen("/dev/full", "wb");
	if (f) {
		struct hs_diag full = { 0 };

		assert_int_equal(hs_gcdump_write(f, &g, NULL, &full), -EIO);
		assert_non_null(strstr(full.msg, "write error"));
		fclose(f);
	}

	/* every allocation failing in turn: -ENOMEM, never a crash */
	for (k = 0; k < 8; k++) {
		buf = NULL;
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		hs_alloc_fail_after(k);
		err = hs_gcdump_write(f, &g, NULL, &d);
		hs_alloc_fail_after(-1);
		assert_true(err == 0 || err == -ENOMEM);
		fclose(f);
		free(buf);
	}
	hs_heapgraph_release(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_sampled),
		cmocka_unit_test(test_rewrite_fixture),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
