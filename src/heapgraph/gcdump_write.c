/*
 * gcdump_write - .gcdump writer (gcdump_write.h). The layout is the one
 * gcdump.c's header comment describes; this file adds what a writer must
 * get right for PerfView's deserializer as well:
 *   - the node blob is built first, in memory: the node table holds each
 *     record's offset in it, and the blob's size comes before its bytes;
 *   - the fields GCHeapDump has after version 8 are in a skip region:
 *     tag 12, an int32 forward reference (id 0), the null interop object,
 *     and the forward reference is defined where the region ends; then the
 *     creation tool as a tagged string (tag 13), the object's end, and the
 *     end of the stream's objects (tag 6);
 *   - the stream ends with the forward reference table (int32 count, an
 *     int32 offset per reference), then the table's offset, then the
 *     offset of that int32 (the trailer PerfView seeks to from the end).
 * The writer owns the blob only; the graph is the caller's.
 */
#include "heapgraph/gcdump_write.h"

#include <errno.h>
#include <string.h>
#include "common/alloc.h"

#define MAGIC "!FastSerialization.1"

enum tag {
	TAG_NULL = 1,
	TAG_BEGIN = 4,
	TAG_END = 6,
	TAG_BYTE = 8,
	TAG_SKIP_REGION = 12,
	TAG_STRING = 13,
};

struct writer {
	FILE *f;
	uint64_t off;
	int failed;
};

static void put(struct writer *w, const void *p, size_t n)
{
	if (n && !w->failed && fwrite(p, 1, n, w->f) != n)
		w->failed = 1;
	w->off += n;
}

static void put_u8(struct writer *w, uint8_t v)
{
	put(w, &v, 1);
}

static void put_i32(struct writer *w, int32_t v)
{
	uint32_t u = (uint32_t)v;
	unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8),
			      (unsigned char)(u >> 16), (unsigned char)(u >> 24)};

	put(w, b, 4);
}

static void put_i64(struct writer *w, int64_t v)
{
	put_i32(w, (int32_t)(uint32_t)(uint64_t)v);
	put_i32(w, (int32_t)(uint32_t)((uint64_t)v >> 32));
}

static void put_float(struct writer *w, float v)
{
	int32_t i;

	memcpy(&i, &v, sizeof(i));
	put_i32(w, i);
}

/* A string: int32 byte count, bytes; NULL as count -1. */
static void put_string(struct writer *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_i32(w, s ? (int32_t)n : -1);
	if (s)
		put(w, s, n);
}

/* A type object: begin, null, version, minimum reader version, name, end. */
static void put_type(struct writer *w, int32_t version, int32_t min_version,
		     const char *name)
{
	put_u8(w, TAG_BEGIN);
	put_u8(w, TAG_NULL);
	put_i32(w, version);
	put_i32(w, min_version);
	put_string(w, name);
	put_u8(w, TAG_END);
}

/* The node blob being built. */
struct blob {
	unsigned char *b;
	size_t n, alloc;
};

/*
 * A compressed int: big-endian 7-bit groups, every one but the last with
 * the high bit set, as few as hold @v with the first group's top bit as
 * the sign. Returns 0 or -ENOMEM.
 */
static int blob_int(struct blob *o, int32_t v)
{
	unsigned groups = 1;
	int64_t lo = -64, hi = 63;

	while (groups < 5 && (v < lo || v > hi)) {
		groups++;
		lo *= 128;
		hi = -lo - 1;
	}
	if (HS_GROW(o->b, o->n + groups, o->alloc))
		return -ENOMEM;
	while (groups--) {
		uint8_t b = (uint8_t)(((uint32_t)v >> (7 * groups)) & 0x7f);

		o->b[o->n++] = groups ? (uint8_t)(b | 0x80) : b;
	}
	return 0;
}

/* Each node's record into @blob and its offset into @labels. */
static int build_blob(const struct hs_heapgraph *g, struct blob *blob, uint32_t *labels,
		      struct hs_diag *diag)
{
	uint32_t i, e;
	int err = 0;

	for (i = 0; i < g->nr_nodes && !err; i++) {
		uint32_t type = g->type[i], size = g->size[i];
		int has_size = size != g->types[type].size;

		if (blob->n > INT32_MAX || type > INT32_MAX >> 1 || size > INT32_MAX) {
			hs_diag_set(diag, 0,
				    "the graph is too large for a .gcdump (node %u)", i);
			return -EINVAL;
		}
		labels[i] = (uint32_t)blob->n;
		err = blob_int(blob, (int32_t)(type << 1 | (uint32_t)has_size));
		if (!err && has_size)
			err = blob_int(blob, (int32_t)size);
		if (!err)
			err = blob_int(blob, (int32_t)hs_heapgraph_nr_children(g, i));
		for (e = g->first_child[i]; e < g->first_child[i + 1] && !err; e++)
			err = blob_int(blob, (int32_t)((int64_t)g->children[e] - i));
	}
	if (!err && blob->n > INT32_MAX) {
		hs_diag_set(diag, 0,
			    "the graph is too large for a .gcdump (%zu bytes of nodes)",
			    blob->n);
		return -EINVAL;
	}
	return err;
}

static void put_graph(struct writer *w, const struct hs_heapgraph *g,
		      const struct blob *blob, const uint32_t *labels)
{
	int64_t total = 0;
	uint32_t i;

	for (i = 0; i < g->nr_nodes; i++)
		total += g->size[i];
	put_u8(w, TAG_BEGIN);
	put_type(w, 1, 0, "Graphs.MemoryGraph");
	put_i64(w, total);
	put_i32(w, (int32_t)g->root);
	put_i32(w, (int32_t)g->nr_types);
	for (i = 0; i < g->nr_types; i++) {
		put_string(w, g->types[i].name);
		put_i32(w, (int32_t)g->types[i].size);
		put_string(w, g->types[i].module);
	}
	put_i32(w, (int32_t)g->nr_nodes);
	for (i = 0; i < g->nr_nodes; i++)
		put_i32(w, (int32_t)labels[i]);
	put_i32(w, (int32_t)blob->n);
	put(w, blob->b, blob->n);
	put_i32(w, (int32_t)g->nr_nodes);
	for (i = 0; i < g->nr_nodes; i++)
		put_i64(w, (int64_t)g->address[i]);
	put_u8(w, TAG_BYTE); /* is 64-bit */
	put_u8(w, 1);
	put_u8(w, TAG_END);
}

/* GCHeapDump's fields after the graph, its end, and the stream's trailer. */
static void put_dump_tail(struct writer *w, const struct hs_heapgraph *g,
			  const struct hs_gcdump_origin *origin)
{
	uint64_t region_end, table, trailer;
	uint32_t i;

	put_u8(w, 1); /* is 64-bit */
	put_float(w, g->avg_count_multiplier > 0 ? g->avg_count_multiplier : 1);
	put_float(w, g->avg_size_multiplier > 0 ? g->avg_size_multiplier : 1);
	put_u8(w, TAG_NULL); /* JavaScript heap info */
	put_u8(w, TAG_NULL); /* .NET heap info */
	put_string(w, NULL); /* collection log */
	put_i64(w, 0);	     /* time collected */
	put_string(w, NULL); /* machine */
	put_string(w, origin ? origin->process_name : NULL);
	put_i32(w, origin ? origin->pid : 0);
	put_i64(w, 0); /* total process commit */
	put_i64(w, 0); /* total process working set */
	if (g->count_multiplier) {
		put_i32(w, (int32_t)g->nr_types);
		for (i = 0; i < g->nr_types; i++)
			put_float(w, g->count_multiplier[i]);
	} else {
		put_i32(w, 0);
	}
	put_u8(w, TAG_SKIP_REGION);
	put_i32(w, 0);	     /* forward reference 0: the region's end */
	put_u8(w, TAG_NULL); /* interop info */
	region_end = w->off;
	put_u8(w, TAG_STRING);
	put_string(w,
		   origin && origin->creation_tool ? origin->creation_tool : "heapscope");
	put_u8(w, TAG_END); /* GCHeapDump */
	put_u8(w, TAG_END); /* the stream's objects */
	table = w->off;
	put_i32(w, 1);
	put_i32(w, (int32_t)region_end);
	trailer = w->off;
	put_i32(w, (int32_t)table);
	put_i32(w, (int32_t)trailer);
}

int hs_gcdump_write(FILE *f, const struct hs_heapgraph *g,
		    const struct hs_gcdump_origin *origin, struct hs_diag *diag)
{
	struct writer w = {.f = f};
	struct blob blob = {0};
	uint32_t *labels;
	int err;

	if (g->root == HS_HEAPGRAPH_NONE || g->root >= g->nr_nodes) {
		hs_diag_set(diag, 0, "the graph has no root");
		return -EINVAL;
	}
	labels = hs_malloc(((size_t)g->nr_nodes + 1) * sizeof(*labels));
	if (!labels)
		return -ENOMEM;
	err = build_blob(g, &blob, labels, diag);
	if (!err) {
		put_i32(&w, (int32_t)strlen(MAGIC));
		put(&w, MAGIC, strlen(MAGIC));
		put_u8(&w, TAG_BEGIN);
		put_type(&w, 10, 8, "GCHeapDump");
		put_graph(&w, g, &blob, labels);
		put_dump_tail(&w, g, origin);
		if (w.off > INT32_MAX) {
			hs_diag_set(diag, 0,
				    "the graph is too large for a .gcdump (%llu bytes)",
				    (unsigned long long)w.off);
			err = -EINVAL;
		} else if (w.failed || fflush(f)) {
			hs_diag_set(diag, 0, "write error: %s", strerror(errno));
			err = -EIO;
		}
	}
	hs_free(labels);
	hs_free(blob.b);
	return err;
}

int hs_gcdump_write_path(const char *path, const struct hs_heapgraph *g,
			 const struct hs_gcdump_origin *origin, struct hs_diag *diag)
{
	FILE *f = fopen(path, "wb");
	int err;

	if (!f) {
		err = -errno;
		hs_diag_set(diag, 0, "cannot create %s: %s", path, strerror(-err));
		return err;
	}
	err = hs_gcdump_write(f, g, origin, diag);
	if (fclose(f) && !err) {
		hs_diag_set(diag, 0, "write error: %s", strerror(errno));
		err = -EIO;
	}
	return err;
}
