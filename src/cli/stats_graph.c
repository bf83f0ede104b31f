/*
 * stats_graph - `heapscope stats` for a heap snapshot (a format with
 * HS_FORMAT_HAS_GRAPH, such as .gcdump): the totals, the type table
 * (objects and bytes per type, largest first, as `dotnet-gcdump report`
 * lists it but with each type's total bytes), and the largest retainers
 * (the objects whose loss would free the most, heapgraph/graph.h).
 * Text or JSON (docs/json-api.md).
 */
#include "cli/stats_graph.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/views.h"
#include "cli/cli.h"
#include "common/alloc.h"
#include "heapgraph/gcdump.h"

/* A module's file name without its directory ("" for none). */
static const char *module_base(const char *module)
{
	const char *slash;

	if (!module)
		return "";
	slash = strrchr(module, '/');
	if (!slash)
		slash = strrchr(module, '\\');
	return slash ? slash + 1 : module;
}

/* The @top nodes of most retained bytes (objects only: size > 0), into @out. */
static size_t top_retainers(const struct hs_heapgraph *g, const uint64_t *retained,
			    size_t top, uint32_t *out)
{
	size_t n = 0, k;
	uint32_t i;

	for (i = 0; i < g->nr_nodes; i++) {
		if (!g->size[i] || !retained[i])
			continue;
		if (n == top && retained[out[n - 1]] >= retained[i])
			continue;
		k = n < top ? n++ : n - 1;
		while (k > 0 && retained[out[k - 1]] < retained[i]) {
			out[k] = out[k - 1];
			k--;
		}
		out[k] = i;
	}
	return n;
}

static int print_json(const char *name, const struct hs_heapgraph *g,
		      const struct hs_heapgraph_type_total *rows, size_t nrows,
		      const uint32_t *top, size_t ntop, const uint64_t *retained,
		      double bytes, double objects)
{
	json_t *out = json_object(), *types = json_array(), *ret = json_array();
	size_t i;
	int err = !out || !types || !ret;

	for (i = 0; !err && i < nrows; i++) {
		const struct hs_heapgraph_type *t = &g->types[rows[i].type];

		err = json_array_append_new(
		    types,
		    json_pack("{s:o,s:o,s:f,s:f,s:I}", "name", hs_view_json_text(t->name),
			      "module", hs_view_json_text(module_base(t->module)),
			      "objects", rows[i].count, "bytes", rows[i].bytes,
			      "type_size", (json_int_t)t->size));
	}
	for (i = 0; !err && i < ntop; i++) {
		const struct hs_heapgraph_type *t = &g->types[g->type[top[i]]];
		char addr[32];

		snprintf(addr, sizeof(addr), "0x%" PRIx64, g->address[top[i]]);
		err = json_array_append_new(
		    ret,
		    json_pack("{s:o,s:s,s:I,s:I}", "type", hs_view_json_text(t->name),
			      "address", addr, "bytes", (json_int_t)g->size[top[i]],
			      "retained_bytes", (json_int_t)retained[top[i]]));
	}
	err = err || json_object_set_new(out, "snapshot", hs_view_json_text(name)) ||
	      json_object_set_new(out, "bytes", json_real(bytes)) ||
	      json_object_set_new(out, "objects", json_real(objects)) ||
	      json_object_set_new(out, "references",
				  json_integer((json_int_t)g->nr_edges)) ||
	      json_object_set(out, "types", types) ||
	      json_object_set(out, "largest_retainers", ret) ||
	      json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
	      putchar('\n') == EOF;
	json_decref(types);
	json_decref(ret);
	json_decref(out);
	return err;
}

static void print_text(const char *name, const struct hs_heapgraph *g,
		       const struct hs_heapgraph_type_total *rows, size_t nrows,
		       const uint32_t *top, size_t ntop, const uint64_t *retained,
		       double bytes, double objects)
{
	char a[32], b[32];
	size_t i;

	printf("%s: .NET heap snapshot\n", name);
	cli_count(bytes, a, sizeof(a));
	printf("  %14s  GC Heap bytes\n", a);
	cli_count(objects, a, sizeof(a));
	printf("  %14s  GC Heap objects\n", a);
	printf("  %14zu  references\n", g->nr_edges);
	if (g->avg_count_multiplier != 1 || g->count_multiplier)
		printf("  (a sampled graph: counts and bytes are estimates)\n");
	printf("\n    Object Bytes        Count  Type\n");
	for (i = 0; i < nrows; i++) {
		const struct hs_heapgraph_type *t = &g->types[rows[i].type];

		cli_count(rows[i].bytes, a, sizeof(a));
		cli_count(rows[i].count, b, sizeof(b));
		printf("  %14s  %11s  %s", a, b, t->name);
		if (t->module && *t->module)
			printf("  [%s]", module_base(t->module));
		putchar('\n');
	}
	printf("\nLargest retainers (bytes freed if the object were gone):\n");
	if (!ntop)
		printf("  (none)\n");
	for (i = 0; i < ntop; i++) {
		const struct hs_heapgraph_type *t = &g->types[g->type[top[i]]];

		cli_count((double)retained[top[i]], a, sizeof(a));
		cli_human_bytes((double)retained[top[i]], b, sizeof(b));
		printf("  %14s  %10s  0x%-14" PRIx64 " %s  [%s]\n", a, b,
		       g->address[top[i]], t->name, module_base(t->module));
	}
}

int cli_stats_graph(const char *path, const char *name, size_t top, int json)
{
	struct hs_diag diag = HS_DIAG_INIT(name);
	struct hs_heapgraph_type_total *rows = NULL;
	struct hs_heapgraph g;
	uint32_t *idom = NULL, *tops = NULL;
	uint64_t *retained = NULL;
	double bytes = 0, objects = 0;
	size_t nrows = 0, ntop = 0, i;
	int err;

	hs_heapgraph_init(&g);
	err = hs_gcdump_read_path(path, &g, &diag);
	if (!err) {
		nrows = hs_heapgraph_type_totals(&g, &rows, &err);
		idom = hs_malloc(((size_t)g.nr_nodes + 1) * sizeof(*idom));
		retained = hs_malloc(((size_t)g.nr_nodes + 1) * sizeof(*retained));
		tops = hs_malloc((top + 1) * sizeof(*tops));
		if (!err && (!idom || !retained || !tops))
			err = -ENOMEM;
	}
	if (!err)
		err = hs_heapgraph_dominators(&g, idom);
	if (!err)
		err = hs_heapgraph_retained(&g, idom, retained);
	if (err) {
		hs_free(rows);
		hs_free(idom);
		hs_free(retained);
		hs_free(tops);
		hs_heapgraph_release(&g);
		return cli_fail_diag(&diag, err);
	}
	if (top)
		ntop = top_retainers(&g, retained, top, tops);
	for (i = 0; i < nrows; i++) {
		bytes += rows[i].bytes;
		objects += rows[i].count;
	}
	if (json)
		err = print_json(name, &g, rows, nrows, tops, ntop, retained, bytes,
				 objects);
	else
		print_text(name, &g, rows, nrows, tops, ntop, retained, bytes, objects);
	hs_free(rows);
	hs_free(idom);
	hs_free(retained);
	hs_free(tops);
	hs_heapgraph_release(&g);
	if (err || fflush(stdout))
		return cli_fail("cannot write the stats");
	return HS_EXIT_OK;
}
