/*
 * gcdump - .gcdump reader (gcdump.h): FastSerialization's objects, then
 * GCHeapDump's fields, the first of which is the MemoryGraph.
 *
 * FastSerialization (as PerfView writes it): int32 20, "!FastSerialization.1",
 * then objects. An object is a tag (BeginObject 4 or BeginPrivateObject 5,
 * perhaps after ForwardDefinition 7 + int32), its type, its fields, then
 * EndObject 6. A type is itself an object (tag, NullReference 1, int32
 * version, int32 minimum reader version, int32 length + name, EndObject)
 * or, when it was written before, ObjectReference 2 + the int32 stream
 * offset of that first copy. NullReference 1 is a null object. Integers
 * are little-endian; a string is an int32 byte count (-1: null) and bytes.
 *
 * The MemoryGraph (Graph's fields, then MemoryGraph's): int64 total size,
 * int32 root node, int32 type count and per type (name, int32 size,
 * module), int32 node count and per node the int32 offset of its record
 * in the blob, int32 blob size and the blob, then int32 address count and
 * an int64 address per node, then tagged fields (Byte 8 + is-64-bit) up to
 * EndObject. A node record: (type << 1 | has-size), the size when
 * has-size (else the type's size), the child count, then each child as
 * its index minus the node's; each a "compressed int": big-endian 7-bit
 * groups, the high bit saying another follows, the first group
 * sign-extended (not LEB128).
 *
 * After the graph, GCHeapDump has: a byte (is-64-bit), float average
 * count multiplier, float average size multiplier, two objects (JS and
 * .NET heap infos), the collection log, int64 time, machine and process
 * names, int32 pid, two int64s, then int32 count + a float count
 * multiplier per type. Only the multipliers matter here; the reader stops
 * at the first object it does not know how to skip.
 */
#include "heapgraph/gcdump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/alloc.h"
#include "io/io.h"

const struct hs_source_info hs_gcdump_sources[HS_GCDUMP__COUNT] = {
    {"heap", "PerfView's heap view: each object on its path from the roots "
	     "(spanning tree), bytes by type (default)"},
    {"retained", "the dominator tree: each frame's inclusive bytes are what "
		 "freeing those objects would free"},
    {"heap-retained", "the heap view's paths with each object's retained size "
		      "as its bytes: Exc is the Retained column of its CallTree"},
};

#define MAGIC "!FastSerialization.1"
#define MAGIC_LEN 20
#define STRING_MAX (1u << 20) /* a type or module name, a log */
#define MAX_TYPE_REFS 64      /* distinct type objects remembered */

enum tag {
	TAG_NULL = 1,
	TAG_OBJECT_REF = 2,
	TAG_BEGIN = 4,
	TAG_BEGIN_PRIVATE = 5,
	TAG_END = 6,
	TAG_FORWARD_DEF = 7,
	TAG_BYTE = 8,
	TAG_INT16 = 9,
	TAG_INT32 = 10,
	TAG_INT64 = 11,
};

struct type_ref {
	uint64_t offset;
	int32_t version, min_version;
	char name[64];
};

struct reader {
	FILE *f;
	uint64_t off, limit;
	struct hs_diag *diag;
	struct type_ref types[MAX_TYPE_REFS];
	size_t nr_types;
};

static int cut_off(struct reader *r, const char *what)
{
	hs_diag_set_offset(r->diag, r->off, "cut off: the file ends inside %s", what);
	return -EINVAL;
}

static int read_bytes(struct reader *r, void *buf, size_t n, const char *what)
{
	if (n > r->limit - r->off || fread(buf, 1, n, r->f) != n)
		return cut_off(r, what);
	r->off += n;
	return 0;
}

static int read_u8(struct reader *r, uint8_t *v, const char *what)
{
	return read_bytes(r, v, 1, what);
}

static int read_i32(struct reader *r, int32_t *v, const char *what)
{
	unsigned char b[4];
	int err = read_bytes(r, b, 4, what);

	if (!err)
		*v = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 |
			       (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
	return err;
}

static int read_i64(struct reader *r, int64_t *v, const char *what)
{
	unsigned char b[8];
	uint64_t u = 0;
	int i, err = read_bytes(r, b, 8, what);

	if (err)
		return err;
	for (i = 7; i >= 0; i--)
		u = u << 8 | b[i];
	*v = (int64_t)u;
	return 0;
}

static int read_float(struct reader *r, float *v, const char *what)
{
	int32_t i;
	int err = read_i32(r, &i, what);

	if (!err)
		memcpy(v, &i, sizeof(*v));
	return err;
}

/* A count of items of @size bytes each that the file still has room for. */
static int read_count(struct reader *r, uint32_t size, uint32_t *count, const char *what)
{
	uint64_t at = r->off;
	int32_t n;
	int err = read_i32(r, &n, what);

	if (err)
		return err;
	if (n < 0 || (uint64_t)n * size > r->limit - r->off) {
		hs_diag_set_offset(r->diag, at,
				   "bad %s: %d (the file has %llu bytes left)", what, n,
				   (unsigned long long)(r->limit - r->off));
		return -EINVAL;
	}
	*count = (uint32_t)n;
	return 0;
}

/* A string: *@s owned (NULL for a null string). */
static int read_string(struct reader *r, char **s, const char *what)
{
	uint64_t at = r->off;
	int32_t n;
	int err = read_i32(r, &n, what);

	*s = NULL;
	if (err)
		return err;
	if (n == -1)
		return 0;
	if (n < 0 || (uint32_t)n > STRING_MAX) {
		hs_diag_set_offset(r->diag, at, "bad length of %s: %d", what, n);
		return -EINVAL;
	}
	*s = hs_malloc((size_t)n + 1);
	if (!*s)
		return -ENOMEM;
	err = read_bytes(r, *s, (size_t)n, what);
	if (err) {
		hs_free(*s);
		*s = NULL;
		return err;
	}
	(*s)[n] = '\0';
	if (memchr(*s, '\0', (size_t)n)) {
		hs_diag_set_offset(r->diag, at, "%s holds a NUL byte", what);
		hs_free(*s);
		*s = NULL;
		return -EINVAL;
	}
	return 0;
}

static int expect_tag(struct reader *r, uint8_t want, const char *what)
{
	uint8_t tag;
	int err = read_u8(r, &tag, what);

	if (err)
		return err;
	if (tag != want) {
		hs_diag_set_offset(r->diag, r->off - 1,
				   "expected %s (tag %u), found tag %u", what, want, tag);
		return -EINVAL;
	}
	return 0;
}

/*
 * The type of an object whose begin tag was just read: a new type object
 * or a reference to one read before. *@type points into r->types.
 */
static int read_type(struct reader *r, const struct type_ref **type)
{
	uint64_t at = r->off;
	struct type_ref t;
	char *name;
	uint8_t tag;
	int32_t ref;
	size_t i;
	int err = read_u8(r, &tag, "an object's type");

	if (err)
		return err;
	if (tag == TAG_OBJECT_REF) {
		err = read_i32(r, &ref, "a type reference");
		if (err)
			return err;
		for (i = 0; i < r->nr_types; i++)
			if (r->types[i].offset == (uint64_t)(uint32_t)ref) {
				*type = &r->types[i];
				return 0;
			}
		hs_diag_set_offset(
		    r->diag, at, "reference to offset %u, where no type object was read",
		    (unsigned)ref);
		return -EINVAL;
	}
	if (tag != TAG_BEGIN && tag != TAG_BEGIN_PRIVATE) {
		hs_diag_set_offset(r->diag, at,
				   "expected a type object (tag 4 or 5) or a reference "
				   "(2), found tag %u",
				   tag);
		return -EINVAL;
	}
	if ((err = expect_tag(r, TAG_NULL, "a type object's null type")) ||
	    (err = read_i32(r, &t.version, "a type's version")) ||
	    (err = read_i32(r, &t.min_version, "a type's minimum reader version")) ||
	    (err = read_string(r, &name, "a type's name")))
		return err;
	if (!name) {
		hs_diag_set_offset(r->diag, at, "a type object without a name");
		return -EINVAL;
	}
	snprintf(t.name, sizeof(t.name), "%s", name);
	hs_free(name);
	err = expect_tag(r, TAG_END, "the end of a type object");
	if (err)
		return err;
	if (r->nr_types == MAX_TYPE_REFS) {
		hs_diag_set_offset(r->diag, at, "more than %d type objects",
				   MAX_TYPE_REFS);
		return -EINVAL;
	}
	t.offset = at;
	r->types[r->nr_types] = t;
	*type = &r->types[r->nr_types++];
	return 0;
}

/*
 * The start of an object: *@null set for a null reference, else its begin
 * tag and type are read and *@type set.
 */
static int begin_object(struct reader *r, const struct type_ref **type, int *null,
			const char *what)
{
	uint64_t at = r->off;
	uint8_t tag;
	int32_t fwd;
	int err = read_u8(r, &tag, what);

	*null = 0;
	if (err)
		return err;
	if (tag == TAG_NULL) {
		*null = 1;
		return 0;
	}
	if (tag == TAG_FORWARD_DEF) {
		if ((err = read_i32(r, &fwd, "a forward definition")) ||
		    (err = read_u8(r, &tag, what)))
			return err;
	}
	if (tag != TAG_BEGIN && tag != TAG_BEGIN_PRIVATE) {
		hs_diag_set_offset(r->diag, at,
				   "expected %s (an object: tag 4 or 5), found tag %u",
				   what, tag);
		return -EINVAL;
	}
	return read_type(r, type);
}

/* A compressed int at *@pos of @blob (@len bytes); the position moves on. */
static int blob_int(const unsigned char *blob, uint32_t len, uint32_t *pos, int32_t *v)
{
	uint32_t u, i;
	uint8_t b;

	if (*pos >= len)
		return -1;
	b = blob[(*pos)++];
	u = (b & 0x40) ? (0xffffff80u | b) : (b & 0x7fu); /* sign-extend 7 bits */
	for (i = 1; (b & 0x80) && i < 5; i++) {
		if (*pos >= len)
			return -1;
		b = blob[(*pos)++];
		u = (u << 7) + (b & 0x7fu);
	}
	if (b & 0x80)
		return -1;
	*v = (int32_t)u;
	return 0;
}

/* The node records of the blob into @g. */
static int build_nodes(struct reader *r, struct hs_heapgraph *g, const uint32_t *labels,
		       uint32_t nr_nodes, const unsigned char *blob, uint32_t blob_len,
		       uint64_t blob_off, int have_addresses)
{
	uint32_t *children = NULL, i;
	size_t alloc = 0;
	int err = 0;

	for (i = 0; i < nr_nodes && !err; i++) {
		uint32_t pos = labels[i], start = labels[i], c, type;
		int32_t type_size, size, nr;

		if (pos >= blob_len && !(pos == 0 && blob_len == 0))
			goto bad;
		if (blob_int(blob, blob_len, &pos, &type_size))
			goto bad;
		if (type_size < 0 || (uint32_t)type_size >> 1 >= g->nr_types)
			goto bad;
		type = (uint32_t)type_size >> 1;
		if (type_size & 1) {
			if (blob_int(blob, blob_len, &pos, &size) || size < 0)
				goto bad;
		} else {
			size = (int32_t)g->types[type].size;
		}
		if (blob_int(blob, blob_len, &pos, &nr) || nr < 0 ||
		    (uint32_t)nr > blob_len - pos)
			goto bad;
		if (HS_GROW(children, (size_t)nr + 1, alloc)) {
			err = -ENOMEM;
			break;
		}
		for (c = 0; c < (uint32_t)nr; c++) {
			int32_t delta;
			int64_t child;

			if (blob_int(blob, blob_len, &pos, &delta))
				goto bad;
			child = (int64_t)delta + i;
			if (child < 0 || child >= nr_nodes)
				goto bad;
			children[c] = (uint32_t)child;
		}
		/* g->address[i] was read in place (hs_heapgraph_reserve()) */
		err = hs_heapgraph_add_node(g, type, (uint32_t)size,
					    have_addresses ? g->address[g->nr_nodes] : 0,
					    children, (uint32_t)nr);
		continue;
	bad:
		hs_diag_set_offset(r->diag, blob_off + start,
				   "bad record of node %u (at byte %u of the node blob)",
				   i, start);
		err = -EINVAL;
	}
	hs_free(children);
	return err;
}

/* Skip tagged fields up to the EndObject that closes the current object. */
static int skip_tagged(struct reader *r, const char *what)
{
	for (;;) {
		uint64_t at = r->off;
		unsigned char skip[8];
		uint8_t tag;
		int err = read_u8(r, &tag, what);

		if (err)
			return err;
		switch (tag) {
		case TAG_END:
			return 0;
		case TAG_BYTE:
			err = read_bytes(r, skip, 1, what);
			break;
		case TAG_INT16:
			err = read_bytes(r, skip, 2, what);
			break;
		case TAG_INT32:
			err = read_bytes(r, skip, 4, what);
			break;
		case TAG_INT64:
			err = read_bytes(r, skip, 8, what);
			break;
		default:
			hs_diag_set_offset(r->diag, at, "unexpected tag %u in %s", tag,
					   what);
			return -EINVAL;
		}
		if (err)
			return err;
	}
}

static int read_graph(struct reader *r, struct hs_heapgraph *g)
{
	const struct type_ref *type;
	uint32_t nr_types, nr_nodes, blob_len, nr_addr, i, *labels = NULL;
	unsigned char *blob = NULL;
	int64_t total;
	uint64_t at = r->off, blob_off;
	int32_t root;
	int null, err;

	err = begin_object(r, &type, &null, "the MemoryGraph");
	if (err)
		return err;
	if (null || !strstr(type->name, "MemoryGraph")) {
		hs_diag_set_offset(r->diag, at,
				   "expected the MemoryGraph object, found %s",
				   null ? "null" : type->name);
		return -EINVAL;
	}
	if (type->min_version >= 1) {
		hs_diag_set_offset(
		    r->diag, at,
		    "a MemoryGraph with deferred types (version %d) is not supported",
		    type->min_version);
		return -EINVAL;
	}
	if ((err = read_i64(r, &total, "the graph's total size")) ||
	    (err = read_i32(r, &root, "the root node")) ||
	    (err = read_count(r, 12, &nr_types, "type count")))
		return err;
	for (i = 0; i < nr_types; i++) {
		char *name = NULL, *module = NULL;
		int32_t size;
		uint32_t index;

		err = read_string(r, &name, "a type's name");
		if (!err)
			err = read_i32(r, &size, "a type's size");
		if (!err)
			err = read_string(r, &module, "a type's module");
		if (!err)
			err =
			    hs_heapgraph_add_type(g, name ? name : "?", module,
						  size < 0 ? 0 : (uint32_t)size, &index);
		hs_free(name);
		hs_free(module);
		if (err)
			return err;
	}
	if ((err = read_count(r, 4, &nr_nodes, "node count")))
		return err;
	labels = hs_malloc(((size_t)nr_nodes + 1) * sizeof(*labels));
	if (!labels)
		return -ENOMEM;
	/* little-endian int32s, read at once (read_count checked the bytes left) */
	err = read_bytes(r, labels, (size_t)nr_nodes * 4, "the node offsets");
	for (i = 0; i < nr_nodes && !err; i++) {
		const unsigned char *b = (const unsigned char *)&labels[i];

		labels[i] = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
			    (uint32_t)b[3] << 24;
	}
	if (!err)
		err = read_count(r, 1, &blob_len, "node blob size");
	if (err)
		goto out;
	blob_off = r->off;
	blob = hs_malloc((size_t)blob_len + 1);
	if (!blob) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = read_bytes(r, blob, blob_len, "the node blob")))
		goto out;
	at = r->off;
	if ((err = read_count(r, 8, &nr_addr, "address count")))
		goto out;
	if (nr_addr != nr_nodes && nr_addr != 0) {
		hs_diag_set_offset(r->diag, at, "%u addresses for %u nodes", nr_addr,
				   nr_nodes);
		err = -EINVAL;
		goto out;
	}
	/* the addresses go straight into the graph's node array, made to size */
	if ((err = hs_heapgraph_reserve(g, (size_t)g->nr_nodes + nr_nodes)))
		goto out;
	if (nr_addr) {
		uint64_t *addresses = g->address + g->nr_nodes;

		err = read_bytes(r, addresses, (size_t)nr_addr * 8, "the node addresses");
		for (i = 0; i < nr_addr && !err; i++) {
			const unsigned char *b = (const unsigned char *)&addresses[i];
			uint64_t u = 0;
			int k;

			for (k = 7; k >= 0; k--)
				u = u << 8 | b[k];
			addresses[i] = u;
		}
		if (err)
			goto out;
	}
	if ((err = skip_tagged(r, "the MemoryGraph's tagged fields")))
		goto out;
	if (root < 0 || (uint32_t)root >= nr_nodes) {
		hs_diag_set_offset(r->diag, blob_off,
				   "root node %d is not one of the %u nodes", root,
				   nr_nodes);
		err = -EINVAL;
		goto out;
	}
	g->root = (uint32_t)root;
	err = build_nodes(r, g, labels, nr_nodes, blob, blob_len, blob_off, nr_addr != 0);
out:
	hs_free(labels);
	hs_free(blob);
	return err;
}

/*
 * GCHeapDump's fields after the graph, up to the per-type count
 * multipliers; stops (returning 0) at an object it cannot skip.
 */
static int read_multipliers(struct reader *r, struct hs_heapgraph *g)
{
	const struct type_ref *type;
	uint8_t is64;
	float count_mult, size_mult;
	char *s;
	int64_t v64;
	int32_t pid;
	uint32_t nr, i;
	int null, err, k;

	if ((err = read_u8(r, &is64, "the GCHeapDump's fields")) ||
	    (err = read_float(r, &count_mult, "the count multiplier")) ||
	    (err = read_float(r, &size_mult, "the size multiplier")))
		return err;
	if (count_mult >= 1 && count_mult < 1e9f)
		g->avg_count_multiplier = count_mult;
	if (size_mult >= 1 && size_mult < 1e9f)
		g->avg_size_multiplier = size_mult;
	for (k = 0; k < 2; k++) {
		err = begin_object(r, &type, &null, "a heap info object");
		if (err)
			return err;
		if (!null)
			return 0; /* one we do not skip: keep the averages */
	}
	for (k = 0; k < 6 && !err; k++) {
		switch (k) {
		case 0:
		case 2:
		case 3:
			err = read_string(r, &s, "the GCHeapDump's strings");
			hs_free(s);
			break;
		case 1:
			err = read_i64(r, &v64, "the collection time");
			break;
		case 4:
			err = read_i32(r, &pid, "the process id");
			break;
		case 5:
			if (!(err = read_i64(r, &v64, "the process's memory")))
				err = read_i64(r, &v64, "the process's memory");
			break;
		}
	}
	if (err || (err = read_count(r, 4, &nr, "count multiplier count")))
		return err;
	if (!nr)
		return 0;
	if (nr != g->nr_types) {
		hs_diag_set_offset(r->diag, r->off, "%u count multipliers for %u types",
				   nr, g->nr_types);
		return -EINVAL;
	}
	g->count_multiplier = hs_malloc((size_t)nr * sizeof(float));
	if (!g->count_multiplier)
		return -ENOMEM;
	for (i = 0; i < nr && !err; i++) {
		err = read_float(r, &g->count_multiplier[i], "the count multipliers");
		if (!err &&
		    !(g->count_multiplier[i] > 0 && g->count_multiplier[i] < 1e9f))
			g->count_multiplier[i] = 1;
	}
	return err;
}

int hs_gcdump_sniff(const unsigned char *head, size_t n)
{
	static const char type_name[] = "GCHeapDump";
	size_t i;

	if (n < 4 + MAGIC_LEN + 20 || head[0] != 20 || head[1] || head[2] || head[3] ||
	    memcmp(head + 4, MAGIC, MAGIC_LEN))
		return 0;
	/* the first object's type name follows within a few bytes */
	for (i = 4 + MAGIC_LEN; i + sizeof(type_name) - 1 <= n && i < 80; i++)
		if (!memcmp(head + i, type_name, sizeof(type_name) - 1))
			return 1;
	return 0;
}

int hs_gcdump_read(FILE *f, uint64_t limit, struct hs_heapgraph *g, struct hs_diag *diag)
{
	struct reader r = {.f = f, .limit = limit, .diag = diag};
	const struct type_ref *type;
	unsigned char head[4 + MAGIC_LEN];
	int null, err;

	err = read_bytes(&r, head, sizeof(head), "the header");
	if (err)
		return err;
	if (head[0] != 20 || head[1] || head[2] || head[3] ||
	    memcmp(head + 4, MAGIC, MAGIC_LEN)) {
		hs_diag_set_offset(diag, 0, "not a .gcdump: no \"%s\" header", MAGIC);
		return -EINVAL;
	}
	err = begin_object(&r, &type, &null, "the GCHeapDump object");
	if (err)
		return err;
	if (null || strcmp(type->name, "GCHeapDump")) {
		hs_diag_set_offset(
		    diag, 4 + MAGIC_LEN,
		    "not a .gcdump: the first object is %s, not GCHeapDump",
		    null ? "null" : type->name);
		return -EINVAL;
	}
	if (type->version < 9) {
		hs_diag_set_offset(
		    diag, 4 + MAGIC_LEN,
		    "GCHeapDump version %d is not supported (9 and later are)",
		    type->version);
		return -EINVAL;
	}
	err = read_graph(&r, g);
	if (!err)
		err = read_multipliers(&r, g);
	return err;
}

int hs_gcdump_read_path(const char *path, struct hs_heapgraph *g, struct hs_diag *diag)
{
	struct stat st;
	FILE *f = fopen(path, "rb");
	int err;

	if (!f) {
		err = -errno;
		hs_diag_set(diag, 0, "cannot open: %s", strerror(-err));
		return err;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		/* io.c copies a pipe to a temporary file for readers like this one */
		hs_diag_set(diag, 0, "not a regular file");
		fclose(f);
		return -EINVAL;
	}
	err = hs_gcdump_read(f, (uint64_t)st.st_size, g, diag);
	fclose(f);
	return err;
}

int hs_import_gcdump(const char *path, size_t view, struct hs_stack_source *out,
		     struct hs_diag *diag)
{
	struct hs_heapgraph g;
	int err;

	hs_heapgraph_init(&g);
	err = hs_gcdump_read_path(path, &g, diag);
	/* the views use no addresses: 8 bytes a node less while they are built */
	hs_free(g.address);
	g.address = NULL;
	if (!err)
		err = view == HS_GCDUMP_RETAINED ? hs_heapgraph_retained_source(&g, out)
		      : view == HS_GCDUMP_HEAP_RETAINED
			  ? hs_heapgraph_heap_retained_source(&g, out)
			  : hs_heapgraph_heap_source(&g, out);
	if (err == -ENOMEM)
		hs_diag_set(diag, 0, "out of memory building the %s view",
			    hs_gcdump_sources[view < HS_GCDUMP__COUNT ? view : 0].name);
	hs_heapgraph_release(&g);
	return err;
}
