/*
 * test_gcdump - the .gcdump reader (heapgraph/gcdump.c): a file built
 * here byte by byte (compressed ints of several lengths, negative child
 * deltas, a type written again as a reference to its offset), and the
 * snapshots of tests/targets/dotnet-heap recorded with dotnet-gcdump
 * (tests/data/dotnet/heap-*.gcdump, with `dotnet-gcdump report`'s output
 * beside them): the type table agrees with the report, the static list's
 * retained size is the known total, the collected garbage is absent, and
 * every cut-off or damaged copy fails cleanly.
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
#include "io/io.h"

static const char *data(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/dotnet/%s", HS_TEST_DATA, name);
	return path;
}

/* ---- a file built by hand ---- */

struct bytes {
	unsigned char b[8192];
	size_t n;
};

static void put(struct bytes *o, const void *p, size_t n)
{
	assert_true(o->n + n <= sizeof(o->b));
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void u8(struct bytes *o, uint8_t v) { put(o, &v, 1); }

static void i32(struct bytes *o, int32_t v)
{
	unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8),
			       (unsigned char)(v >> 16), (unsigned char)((uint32_t)v >> 24) };

	put(o, b, 4);
}

static void i64(struct bytes *o, int64_t v)
{
	i32(o, (int32_t)(uint32_t)v);
	i32(o, (int32_t)(uint32_t)((uint64_t)v >> 32));
}

static void str(struct bytes *o, const char *s)
{
	if (!s) {
		i32(o, -1);
		return;
	}
	i32(o, (int32_t)strlen(s));
	put(o, s, strlen(s));
}

/* PerfView's compressed int: big-endian 7-bit groups, the first sign-extended. */
static void cint(struct bytes *o, int32_t v)
{
	int groups = 1, g;

	while (groups < 5) {
		int shift = 32 - 7 * groups;	/* v fits in 7 * groups signed bits */

		if (groups * 7 >= 32 || (int32_t)((uint32_t)v << shift) >> shift == v)
			break;
		groups++;
	}
	for (g = groups - 1; g > 0; g--)
		u8(o, (uint8_t)(((uint32_t)v >> (7 * g)) | 0x80));
	u8(o, (uint8_t)(v & 0x7f));
}

static void type_object(struct bytes *o, const char *name, int32_t version, int32_t min)
{
	u8(o, 5);
	u8(o, 1);
	i32(o, version);
	i32(o, min);
	str(o, name);
	u8(o, 6);
}

enum { NODES = 301, SAMPLED = -2 };

/*
 * Node 0 (the root, type 0) has children 1 and 300; nodes 1..300 are of
 * type 1 with an explicit size 200 (node 1: the type's size, 64), each
 * pointing to the next (delta 1) but node 300, which points back to node
 * 1 (delta -299). The JS heap info "object" is
 * typed by a reference to the graph's type object at @graph_type_at
 * (or the offset @js_type_ref), which the reader accepts and then stops
 * at; with @js_type_ref SAMPLED both infos are null and the fields up to
 * the per-type count multipliers follow (1 for type 0, 4 for type 1).
 */
static size_t build(struct bytes *o, int32_t js_type_ref)
{
	struct bytes blob = { .n = 0 };
	int32_t labels[NODES];
	size_t graph_type_at;
	int i;

	o->n = 0;
	i32(o, 20);
	put(o, "!FastSerialization.1", 20);
	u8(o, 4);
	type_object(o, "GCHeapDump", 9, 8);
	u8(o, 4);
	graph_type_at = o->n;
	type_object(o, "Graphs.MemoryGraph", 1, 0);
	i64(o, 64 + 299 * 200);
	i32(o, 0);
	i32(o, 2);
	str(o, "[.NET Roots]");
	i32(o, 0);
	str(o, NULL);
	str(o, "Thing");
	i32(o, 64);
	str(o, "/lib/app.dll");
	for (i = 0; i < NODES; i++) {
		labels[i] = (int32_t)blob.n;
		if (i == 0) {
			cint(&blob, 0);
			cint(&blob, 2);
			cint(&blob, 1);
			cint(&blob, 300);
		} else {
			if (i == 1) {
				cint(&blob, 1 << 1);
			} else {
				cint(&blob, 1 << 1 | 1);
				cint(&blob, 200);
			}
			cint(&blob, 1);
			cint(&blob, i == 300 ? -299 : 1);
		}
	}
	i32(o, NODES);
	for (i = 0; i < NODES; i++)
		i32(o, labels[i]);
	i32(o, (int32_t)blob.n);
	put(o, blob.b, blob.n);
	i32(o, NODES);
	for (i = 0; i < NODES; i++)
		i64(o, 0x10000 + (int64_t)i * 0x100);
	u8(o, 8);	/* tagged Byte: is 64 bits */
	u8(o, 1);
	u8(o, 6);	/* the graph's EndObject */
	u8(o, 1);	/* GCHeapDump: is 64 bits */
	i32(o, 0x3f800000);	/* 1.0f */
	i32(o, 0x3f800000);
	if (js_type_ref == SAMPLED) {
		u8(o, 1);	/* no JS heap info */
		u8(o, 1);	/* no .NET heap info */
		str(o, "log");
		i64(o, 638000000000000000);
		str(o, "machine");
		str(o, "app");
		i32(o, 4242);
		i64(o, 1 << 20);
		i64(o, 1 << 21);
		i32(o, 2);	/* a count multiplier per type */
		i32(o, 0x3f800000);	/* 1.0f */
		i32(o, 0x40800000);	/* 4.0f */
		u8(o, 0x0c);	/* then what the reader does not need */
		return graph_type_at;
	}
	u8(o, 4);	/* the JS heap info: an object ... */
	u8(o, 2);	/* ... of a type written before */
	i32(o, js_type_ref >= 0 ? js_type_ref : (int32_t)graph_type_at);
	return graph_type_at;
}

static int read_mem(const unsigned char *b, size_t n, struct hs_heapgraph *g,
		    struct hs_diag *d)
{
	FILE *f = fmemopen((void *)b, n ? n : 1, "rb");
	int err;

	assert_non_null(f);
	err = hs_gcdump_read(f, n, g, d);
	fclose(f);
	return err;
}

static void test_compressed_ints(void **state)
{
	struct bytes o = { .n = 0 };

	(void)state;
	cint(&o, 300);
	cint(&o, -299);
	cint(&o, 63);
	cint(&o, -64);
	cint(&o, 64);
	assert_int_equal(o.n, 8);
	/* 300 = 0b10_0101100: 0x82 0x2c; -299: 0xfd 0x55; 63: 0x3f; -64: 0x40; 64: 0x80 0x40 */
	assert_memory_equal(o.b, ((unsigned char[]){ 0x82, 0x2c, 0xfd, 0x55, 0x3f, 0x40,
						     0x80, 0x40 }), 8);
}

static void test_hand_built(void **state)
{
	struct bytes o;
	struct hs_heapgraph g;
	struct hs_diag d = HS_DIAG_INIT("built");
	uint32_t idom[NODES];
	uint64_t retained[NODES];
	size_t at;

	(void)state;
	at = build(&o, -1);
	assert_true(hs_gcdump_sniff(o.b, o.n));
	hs_heapgraph_init(&g);
	assert_int_equal(read_mem(o.b, o.n, &g, &d), 0);
	assert_int_equal(g.nr_nodes, NODES);
	assert_int_equal(g.nr_types, 2);
	assert_string_equal(g.types[1].name, "Thing");
	assert_string_equal(g.types[1].module, "/lib/app.dll");
	assert_null(g.types[0].module);
	assert_int_equal(g.root, 0);
	assert_int_equal(hs_heapgraph_nr_children(&g, 0), 2);
	assert_int_equal(g.children[g.first_child[0]], 1);
	assert_int_equal(g.children[g.first_child[0] + 1], 300);
	assert_int_equal(g.children[g.first_child[300]], 1);
	assert_int_equal(g.size[1], 64);
	assert_int_equal(g.size[2], 200);
	assert_int_equal(g.address[300], 0x10000 + 300 * 0x100);
	assert_int_equal(hs_heapgraph_dominators(&g, idom), 0);
	assert_int_equal(hs_heapgraph_retained(&g, idom, retained), 0);
	assert_int_equal(idom[300], 0);
	assert_int_equal(idom[299], 298);
	assert_int_equal(retained[1], 64 + 298 * 200);
	assert_int_equal(retained[300], 200);
	assert_int_equal(retained[0], 64 + 299 * 200);
	hs_heapgraph_release(&g);

	/* a reference to an offset that holds no type object */
	build(&o, (int32_t)at + 1);
	hs_heapgraph_init(&g);
	assert_int_equal(read_mem(o.b, o.n, &g, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "no type object"));
	hs_heapgraph_release(&g);
}

/* A sampled graph: each object of type 1 stands for 4. */
static void test_count_multipliers(void **state)
{
	struct bytes o;
	struct hs_heapgraph g;
	struct hs_heapgraph_type_total *rows;
	struct hs_diag d = HS_DIAG_INIT("sampled");
	struct hs_stack_source s;
	double m, c;
	size_t n;
	int err;

	(void)state;
	build(&o, SAMPLED);
	hs_heapgraph_init(&g);
	assert_int_equal(read_mem(o.b, o.n, &g, &d), 0);
	assert_non_null(g.count_multiplier);
	assert_true(g.count_multiplier[0] == 1 && g.count_multiplier[1] == 4);
	n = hs_heapgraph_type_totals(&g, &rows, &err);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].type, 1);
	assert_true(rows[0].count == 4 * 300);
	assert_true(rows[0].bytes == 4.0 * (64 + 299 * 200));
	hs_free(rows);
	hs_source_init(&s);
	assert_int_equal(hs_heapgraph_heap_source(&g, &s), 0);
	hs_source_totals(&s, &m, &c);
	assert_true(m == 4.0 * (64 + 299 * 200));
	assert_true(c == 4 * 300);
	hs_source_release(&s);
	hs_heapgraph_release(&g);
}

/* Every cut-off copy is an error naming an offset inside it, never a crash. */
static void cut_everywhere(const unsigned char *b, size_t n, size_t step)
{
	size_t len;

	for (len = 0; len < n; len += len < 2048 ? 1 : step) {
		struct hs_diag d = HS_DIAG_INIT("cut");
		struct hs_heapgraph g;
		int err;

		hs_heapgraph_init(&g);
		err = read_mem(b, len, &g, &d);
		if (err != -EINVAL)
			fail_msg("cut at %zu: %d", len, err);
		assert_true(d.set && d.has_offset && d.offset <= len);
		hs_heapgraph_release(&g);
	}
}

static void test_cut_off_and_damaged(void **state)
{
	struct bytes o;
	unsigned char *copy;
	size_t i;

	(void)state;
	build(&o, -1);
	cut_everywhere(o.b, o.n, 1);
	copy = malloc(o.n);
	assert_non_null(copy);
	srand(16);
	for (i = 0; i < 3000; i++) {
		struct hs_diag d = HS_DIAG_INIT("damaged");
		struct hs_heapgraph g;
		int err, k;

		memcpy(copy, o.b, o.n);
		for (k = 0; k < 3; k++)
			copy[(size_t)rand() % o.n] = (unsigned char)rand();
		hs_heapgraph_init(&g);
		err = read_mem(copy, o.n, &g, &d);
		assert_true(err == 0 || err == -EINVAL);
		if (err)
			assert_true(d.set);
		hs_heapgraph_release(&g);
	}
	free(copy);
}

/* ---- the recorded snapshots ---- */

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	b = malloc((size_t)len);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return b;
}

static const char *base(const char *module)
{
	const char *s = module ? strrchr(module, '/') : NULL;

	return s ? s + 1 : module ? module : "";
}

static unsigned long long parse_num(const char *s)
{
	unsigned long long v = 0;

	for (; *s == ' '; s++)
		;
	for (; (*s >= '0' && *s <= '9') || *s == ','; s++)
		if (*s != ',')
			v = v * 10 + (unsigned)(*s - '0');
	return v;
}

/*
 * `dotnet-gcdump report` lists the graph's bytes and nodes, then per type
 * (its name and module) the size it records for the type and the nodes
 * of that type. Every number must be what heapscope reads.
 */
static void check_report(const struct hs_heapgraph *g, const char *report)
{
	char line[4096];
	unsigned long long bytes = 0;
	size_t rows = 0;
	uint32_t i, t;
	FILE *f = fopen(data(report), "r");

	assert_non_null(f);
	for (i = 0; i < g->nr_nodes; i++)
		bytes += g->size[i];
	while (fgets(line, sizeof(line), f)) {
		char *open, *close, *name;
		unsigned long long size, count, have = 0;
		int size_seen = 0;

		if (strstr(line, "GC Heap bytes")) {
			assert_int_equal(parse_num(line), bytes);
			continue;
		}
		if (strstr(line, "GC Heap objects")) {
			assert_int_equal(parse_num(line), g->nr_nodes);
			continue;
		}
		open = strrchr(line, '[');
		close = strrchr(line, ']');
		if (!open || !close || close < open || strstr(line, "Object Bytes"))
			continue;
		*close = '\0';
		open[-2] = '\0';	/* "NAME  [MODULE]" */
		size = parse_num(line);
		name = line;
		while (*name == ' ')
			name++;
		while (*name != ' ')
			name++;	/* past the size */
		count = parse_num(name);
		while (*name == ' ')
			name++;
		while (*name != ' ')
			name++;	/* past the count */
		while (*name == ' ')
			name++;
		for (t = 0; t < g->nr_types; t++) {
			if (strcmp(g->types[t].name, name) || strcmp(base(g->types[t].module), open + 1))
				continue;
			size_seen |= g->types[t].size == size;
			for (i = 0; i < g->nr_nodes; i++)
				have += g->type[i] == t;
		}
		if (have != count || !size_seen)
			fail_msg("%s [%s]: report says %llu of %llu bytes, heapscope %llu",
				 name, open + 1, count, size, have);
		rows++;
	}
	fclose(f);
	assert_true(rows > 50);
}

static uint32_t only_node_of(const struct hs_heapgraph *g, const char *type)
{
	uint32_t i, found = HS_HEAPGRAPH_NONE;

	for (i = 0; i < g->nr_nodes; i++)
		if (!strcmp(g->types[g->type[i]].name, type)) {
			assert_int_equal(found, HS_HEAPGRAPH_NONE);
			found = i;
		}
	assert_int_not_equal(found, HS_HEAPGRAPH_NONE);
	return found;
}

static void check_snapshot(const char *file, const char *report, uint32_t nodes,
			   const char *array_type)
{
	struct hs_diag d = HS_DIAG_INIT(file);
	struct hs_heapgraph g;
	uint32_t *idom, list, array, i, nr_node = 0, nr_payload = 0, capacity;
	uint64_t *retained, expect;

	hs_heapgraph_init(&g);
	assert_int_equal(hs_gcdump_read_path(data(file), &g, &d), 0);
	assert_true(g.avg_count_multiplier == 1 && !g.count_multiplier);
	check_report(&g, report);

	/*
	 * The static List<Node>: the list (16 bytes of object header, the
	 * items reference, size and version: 32), its Node[] (24 bytes of
	 * array header and 8 per slot; the capacity doubled from 4), the
	 * nodes (16 + int + padding + reference: 32) and their byte[1000]
	 * (24 + 1000). Nothing else hangs below the list.
	 */
	list = only_node_of(&g, "System.Collections.Generic.List<Node>");
	array = only_node_of(&g, array_type);
	for (capacity = 4; capacity < nodes; capacity *= 2)
		;
	assert_int_equal(g.size[list], 32);
	assert_int_equal(g.size[array], 24 + 8 * capacity);
	for (i = 0; i < g.nr_nodes; i++) {
		const char *t = g.types[g.type[i]].name;

		if (!strcmp(t, "Node")) {
			assert_int_equal(g.size[i], 32);
			nr_node++;
		} else if (!strcmp(t, "System.Byte[] (Bytes > 1K)") && g.size[i] == 1024) {
			nr_payload++;
		}
		/* the 500 Garbage objects and their byte[2000] were collected */
		assert_string_not_equal(t, "Garbage");
		assert_int_not_equal(g.size[i], 2000 + 24);
	}
	assert_int_equal(nr_node, nodes);
	assert_int_equal(nr_payload, nodes);
	idom = malloc(g.nr_nodes * sizeof(*idom));
	retained = malloc(g.nr_nodes * sizeof(*retained));
	assert_non_null(idom);
	assert_non_null(retained);
	assert_int_equal(hs_heapgraph_dominators(&g, idom), 0);
	assert_int_equal(hs_heapgraph_retained(&g, idom, retained), 0);
	expect = 32 + 24 + 8ull * capacity + (uint64_t)nodes * (32 + 24 + 1000);
	assert_int_equal(retained[list], expect);
	assert_int_equal(retained[array], expect - 32);
	free(idom);
	free(retained);
	hs_heapgraph_release(&g);
}

static void test_recorded_snapshots(void **state)
{
	(void)state;
	/* PerfView names large objects by size: 8 KB and 16 KB arrays */
	check_snapshot("heap-1000.gcdump", "heap-1000.report.txt", 1000, "Node[] (Bytes > 1K)");
	check_snapshot("heap-1500.gcdump", "heap-1500.report.txt", 1500, "Node[] (Bytes > 10K)");
}

/* Whether frame @name is "MODULE!@type" or "@type". */
static int is_type(const char *name, const char *type)
{
	const char *bang = strrchr(name, '!');

	return !strcmp(bang ? bang + 1 : name, type);
}

/* The bytes of samples of type @leaf with a frame containing @part above. */
static double metric_under(const struct hs_stack_source *s, const char *part, const char *leaf)
{
	uint32_t frames[256];
	double sum = 0;
	size_t i, k, d;

	for (i = 0; i < s->nr_samples; i++) {
		int has = 0;

		d = hs_source_stack_frames(s, s->stack[i], frames, 256);
		for (k = 0; k < d && k < 256; k++)
			has |= !!strstr(hs_source_frame_name(s, frames[k]), part);
		if (has && d && is_type(hs_source_frame_name(s, frames[d < 256 ? d - 1 : 255]), leaf))
			sum += s->metric[i];
	}
	return sum;
}

static void test_views_through_io(void **state)
{
	struct hs_diag d = HS_DIAG_INIT("heap-1000.gcdump");
	struct hs_stack_source s;
	unsigned char *b;
	size_t n;
	double m, c;

	(void)state;
	b = slurp(data("heap-1000.gcdump"), &n);
	assert_int_equal(hs_format_sniff(b, n < 512 ? n : 512), HS_FORMAT_GCDUMP);
	assert_int_equal(hs_format_from_path("x.gcdump"), HS_FORMAT_GCDUMP);
	assert_true(hs_format_has(HS_FORMAT_GCDUMP, HS_FORMAT_HAS_GRAPH));
	cut_everywhere(b, n, 997);
	free(b);

	hs_source_init(&s);
	assert_int_equal(hs_import_path_source(data("heap-1000.gcdump"), HS_FORMAT_UNKNOWN,
					       NULL, &s, &d), 0);
	hs_source_totals(&s, &m, &c);
	assert_true(m > 1024000 + 32000);
	/* the payloads hang below the static list; the cache below its handle */
	assert_true(metric_under(&s, "[static vars]", "System.Byte[] (Bytes > 1K)") == 1024000);
	assert_true(metric_under(&s, "[strong Handles]", "CacheEntry") == 100 * 24);
	hs_source_release(&s);

	hs_source_init(&s);
	assert_int_equal(hs_import_path_source(data("heap-1000.gcdump"), HS_FORMAT_UNKNOWN,
					       "retained", &s, &d), 0);
	assert_true(metric_under(&s, "List<Node>", "Node") >= 32000);
	hs_source_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compressed_ints),
		cmocka_unit_test(test_hand_built),
		cmocka_unit_test(test_count_multipliers),
		cmocka_unit_test(test_cut_off_and_damaged),
		cmocka_unit_test(test_recorded_snapshots),
		cmocka_unit_test(test_views_through_io),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
