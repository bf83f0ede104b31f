/*
 * export_pprof - write a stack source as a pprof profile: profile.proto
 * (perftools.profiles.Profile, the generated profile.pb-c.h), packed by
 * protobuf-c and gzip'd by zlib, as `go tool pprof` and the continuous
 * profiling back-ends read it.
 *
 * What goes where:
 * - sample types: [objects/count, space/bytes] for a memory view
 *   (alloc_* for "alloc" and "temporary", inuse_* for the views of blocks
 *   still held: leaks, peak, net, mmap), [samples/count, cpu/nanoseconds]
 *   for CPU time ("wall" for wall-clock and thread time), else
 *   [samples/count, value/UNIT]. The second is the default sample type.
 * - one pprof Sample per distinct stack, with the summed count and metric
 *   (rounded to integers; ms become ns), locations leaf first;
 * - one Location per (frame, source line) pair, one Function per frame
 *   (its name without the module), one Mapping per module (its path);
 *   a Line carries the function and the source line when the stack has
 *   one, and the Function the file. Mappings come in stack order, callers
 *   first, so that the program's own module is the first (pprof's main
 *   binary).
 *
 * Ownership: everything built here is freed before returning; @src and
 * @f are borrowed.
 */
#include "io/io.h"
#include "common/alloc.h"
#include "common/strtab.h"
#include "common/u64map.h"
#include "model/frame_name.h"
#include "profile.pb-c.h"
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define PPROF_STRINGS_MAX ((size_t)1 << 31)

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* The profile under construction and the tables that dedupe into it. */
struct pprof_builder {
	const struct hs_stack_source *src;
	pb_profile profile;
	struct hs_strtab strings;     /* id = string_table index */
	struct hs_strtab modules;     /* id + 1 = mapping id */
	struct hs_u64map location_of; /* (frame << 32 | loc) -> location id */
	uint64_t *function_of;	      /* frame -> function id, 0: none yet */
	uint64_t *location_of_stack;  /* stack -> location id, 0: none yet */

	pb_value_type types[2];
	pb_value_type *type_ptrs[2];
	pb_sample **samples;
	pb_sample *sample_block; /* the samples, their values and location ids */
	int64_t *value_block;
	uint64_t *id_block;
	pb_mapping **mappings;
	size_t alloc_mappings;
	pb_location **locations;
	size_t alloc_locations;
	pb_function **functions;
	size_t alloc_functions;
	char **string_ptrs;
};

static int intern(struct pprof_builder *b, const char *s, size_t len, int64_t *index)
{
	uint32_t id;
	int err = hs_strtab_intern(&b->strings, s, len, &id);

	if (!err)
		*index = id;
	return err;
}

static int intern_str(struct pprof_builder *b, const char *s, int64_t *index)
{
	return intern(b, s, strlen(s), index);
}

/* The names of the two sample types, the source's view deciding. */
static void sample_type_names(const struct hs_stack_source *src, const char **count_type,
			      const char **count_unit, const char **value_type,
			      const char **value_unit, double *scale)
{
	const char *view = src->view_name ? src->view_name : "";

	*count_type = "samples";
	*count_unit = "count";
	*scale = 1;
	if (!strcmp(view, "alloc") || !strcmp(view, "temporary")) {
		*count_type = "alloc_objects";
		*value_type = "alloc_space";
		*value_unit = "bytes";
	} else if (!strcmp(view, "leaks") || !strcmp(view, "peak") ||
		   !strcmp(view, "net") || !strcmp(view, "mmap")) {
		*count_type = "inuse_objects";
		*value_type = "inuse_space";
		*value_unit = "bytes";
	} else if (src->kind == HS_METRIC_TIME) {
		int wall = !strcmp(view, "wall") || !strcmp(view, "thread-time");

		*value_type = wall ? "wall" : "cpu";
		*value_unit = "nanoseconds";
		*scale = 1e6; /* the metric is in ms */
	} else {
		*value_type = "value";
		*value_unit =
		    src->metric_unit && *src->metric_unit ? src->metric_unit : "count";
	}
}

static int add_sample_types(struct pprof_builder *b)
{
	const char *names[4];
	int64_t ids[4];
	double scale;
	int i, err = 0;

	sample_type_names(b->src, &names[0], &names[1], &names[2], &names[3], &scale);
	for (i = 0; i < 4 && !err; i++)
		err = intern_str(b, names[i], &ids[i]);
	if (err)
		return err;
	for (i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&b->types[i]);
		b->types[i].type = ids[2 * i];
		b->types[i].unit = ids[2 * i + 1];
		b->type_ptrs[i] = &b->types[i];
	}
	b->profile.sample_type = b->type_ptrs;
	b->profile.n_sample_type = 2;
	b->profile.default_sample_type = ids[2];
	return 0;
}

/* The mapping id of module @name (@len bytes), made on first use. */
static int mapping_id(struct pprof_builder *b, const char *name, size_t len, uint64_t *id)
{
	size_t before = hs_strtab_count(&b->modules);
	uint32_t module;
	pb_mapping *m;
	int err = hs_strtab_intern(&b->modules, name, len, &module);

	if (err)
		return err;
	*id = (uint64_t)module + 1;
	if (hs_strtab_count(&b->modules) == before)
		return 0;
	if (HS_GROW(b->mappings, module + 1, b->alloc_mappings) ||
	    !(m = hs_malloc(sizeof(*m))))
		return -ENOMEM;
	perftools__profiles__mapping__init(m);
	b->mappings[module] = m;
	b->profile.n_mapping = module + 1;
	m->id = *id;
	m->has_functions = 1;
	m->has_filenames = b->src->stack_loc != NULL;
	m->has_line_numbers = b->src->stack_loc != NULL;
	return intern(b, name, len, &m->filename);
}

/* The function id of @frame, made on first use (with @file, if any). */
static int function_id(struct pprof_builder *b, uint32_t frame, const char *file,
		       uint64_t *id)
{
	const char *name = hs_source_frame_name(b->src, frame);
	size_t len = hs_strtab_len(&b->src->frames, frame);
	struct hs_frame_name parts;
	size_t n = b->profile.n_function;
	pb_function *fn;
	int err;

	if (b->function_of[frame]) {
		*id = b->function_of[frame];
		fn = b->functions[*id - 1];
		if (!fn->filename && file)
			return intern_str(b, file, &fn->filename);
		return 0;
	}
	hs_frame_name_split(name, len, &parts);
	if (HS_GROW(b->functions, n + 1, b->alloc_functions) ||
	    !(fn = hs_malloc(sizeof(*fn))))
		return -ENOMEM;
	perftools__profiles__function__init(fn);
	b->functions[n] = fn;
	b->profile.n_function = n + 1;
	fn->id = n + 1;
	/* the whole function text, an inlined copy's " (inline)" included */
	err = intern(b, parts.function, len - (size_t)(parts.function - name), &fn->name);
	if (!err)
		fn->system_name = fn->name;
	if (!err && file)
		err = intern_str(b, file, &fn->filename);
	b->function_of[frame] = fn->id;
	*id = fn->id;
	return err;
}

/* The location id of @stack's leaf: its frame at its source line. */
static int location_id(struct pprof_builder *b, uint32_t stack, uint64_t *id)
{
	const struct hs_stack_source *src = b->src;
	uint32_t frame = src->stack_frame[stack], loc = hs_source_stack_loc(src, stack);
	uint64_t key = (uint64_t)frame << 32 | loc, found, mapping = 0;
	const char *name = hs_source_frame_name(src, frame), *file;
	size_t n = b->profile.n_location;
	struct hs_frame_name parts;
	uint32_t line = 0;
	pb_location *l;
	pb_line *ln;
	int err;

	if (b->location_of_stack[stack]) {
		*id = b->location_of_stack[stack];
		return 0;
	}
	if (hs_u64map_get(&b->location_of, key, &found)) {
		*id = b->location_of_stack[stack] = found;
		return 0;
	}
	file = hs_source_loc(src, loc, &line);
	hs_frame_name_split(name, hs_strtab_len(&src->frames, frame), &parts);
	err = parts.module ? mapping_id(b, parts.module, parts.module_len, &mapping) : 0;
	if (err)
		return err;
	if (HS_GROW(b->locations, n + 1, b->alloc_locations) ||
	    !(l = hs_malloc(sizeof(*l) + sizeof(*ln) + sizeof(ln))))
		return -ENOMEM;
	/* one block: the location, its one line, the pointer to that line */
	ln = (pb_line *)(l + 1);
	perftools__profiles__location__init(l);
	perftools__profiles__line__init(ln);
	b->locations[n] = l;
	b->profile.n_location = n + 1;
	l->id = n + 1;
	l->mapping_id = mapping;
	l->n_line = 1;
	l->line = (pb_line **)(ln + 1);
	l->line[0] = ln;
	ln->line = line;
	err = function_id(b, frame, file, &ln->function_id);
	if (!err && hs_u64map_put(&b->location_of, key, l->id, NULL) < 0)
		err = -ENOMEM;
	*id = b->location_of_stack[stack] = l->id;
	return err;
}

/*
 * Mappings in the order of the stacks, callers first: the program's own
 * module (the first under the process and thread frames) is mapping 1,
 * which pprof takes for the main binary ("File: app").
 */
static int add_mappings(struct pprof_builder *b)
{
	const struct hs_stack_source *src = b->src;
	size_t i;
	int err = 0;

	for (i = 0; i < src->nr_stacks && !err; i++) {
		uint32_t frame = src->stack_frame[i];
		struct hs_frame_name parts;
		uint64_t id;

		hs_frame_name_split(hs_source_frame_name(src, frame),
				    hs_strtab_len(&src->frames, frame), &parts);
		if (parts.module)
			err = mapping_id(b, parts.module, parts.module_len, &id);
	}
	return err;
}

/* One pprof sample per distinct stack, with its summed count and metric. */
static int add_samples(struct pprof_builder *b)
{
	const struct hs_stack_source *src = b->src;
	struct hs_stack_sums sums;
	size_t i, nr, depth_total = 0;
	uint64_t *ids;
	const char *unused[4];
	double scale;
	int err;

	sample_type_names(src, &unused[0], &unused[1], &unused[2], &unused[3], &scale);
	err = hs_source_sum_by_stack(src, &sums);
	if (err)
		return err;
	nr = sums.nr;
	for (i = 0; i < nr; i++)
		depth_total += hs_source_depth(src, hs_stack_sums_stack(sums.order[i]));
	b->sample_block = hs_calloc(nr ? nr : 1, sizeof(*b->sample_block));
	b->samples = hs_calloc(nr ? nr : 1, sizeof(*b->samples));
	b->value_block = hs_calloc(2 * (nr ? nr : 1), sizeof(*b->value_block));
	b->id_block = hs_calloc(depth_total ? depth_total : 1, sizeof(*b->id_block));
	if (!b->sample_block || !b->samples || !b->value_block || !b->id_block) {
		err = -ENOMEM;
		goto out;
	}
	ids = b->id_block;
	b->profile.sample = b->samples;
	b->profile.n_sample = nr;
	for (i = 0; i < nr; i++) {
		pb_sample *s = &b->sample_block[i];
		uint32_t k = sums.order[i], stack = hs_stack_sums_stack(k);

		perftools__profiles__sample__init(s);
		b->samples[i] = s;
		s->n_value = 2;
		s->value = &b->value_block[2 * i];
		s->value[0] = llround(sums.count[k]);
		s->value[1] = llround(sums.metric[k] * scale);
		s->location_id = ids;
		for (; stack != HS_NO_STACK && !err; stack = src->stack_caller[stack])
			err = location_id(b, stack, &s->location_id[s->n_location_id++]);
		ids += s->n_location_id;
	}
out:
	hs_stack_sums_release(&sums);
	return err;
}

/* The string table and the grown tables, once every entry is in. */
static int finish_tables(struct pprof_builder *b)
{
	size_t i, n = hs_strtab_count(&b->strings);

	b->string_ptrs = hs_calloc(n, sizeof(*b->string_ptrs));
	if (!b->string_ptrs)
		return -ENOMEM;
	for (i = 0; i < n; i++) /* protobuf-c takes char *, and only reads */
		b->string_ptrs[i] =
		    (char *)(uintptr_t)hs_strtab_get(&b->strings, (uint32_t)i);
	b->profile.string_table = b->string_ptrs;
	b->profile.n_string_table = n;
	/* the tables grew as they filled; point the profile at them now */
	b->profile.mapping = b->mappings;
	b->profile.location = b->locations;
	b->profile.function = b->functions;
	return 0;
}

/* gzip @len bytes at @data to @f. */
static int write_gzip(const uint8_t *data, size_t len, FILE *f)
{
	unsigned char out[16384];
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer, not zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)data;
	do {
		size_t chunk = len > 1u << 30 ? 1u << 30 : len;

		z.avail_in = (uInt)chunk;
		len -= chunk;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			ret = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			if (ret == Z_STREAM_ERROR) {
				deflateEnd(&z);
				return -EIO;
			}
			if (fwrite(out, 1, sizeof(out) - z.avail_out, f) !=
			    sizeof(out) - z.avail_out) {
				deflateEnd(&z);
				return -EIO;
			}
		} while (z.avail_out == 0);
	} while (len);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

static void builder_release(struct pprof_builder *b)
{
	size_t i;

	hs_free(b->sample_block);
	hs_free(b->value_block);
	hs_free(b->id_block);
	hs_free(b->samples);
	for (i = 0; i < b->profile.n_mapping; i++)
		hs_free(b->mappings[i]);
	hs_free(b->mappings);
	for (i = 0; i < b->profile.n_location; i++)
		hs_free(b->locations[i]);
	hs_free(b->locations);
	for (i = 0; i < b->profile.n_function; i++)
		hs_free(b->functions[i]);
	hs_free(b->functions);
	hs_free(b->string_ptrs);
	hs_free(b->function_of);
	hs_free(b->location_of_stack);
	hs_u64map_release(&b->location_of);
	hs_strtab_release(&b->modules);
	hs_strtab_release(&b->strings);
}

int hs_export_pprof(const struct hs_stack_source *src, FILE *f)
{
	struct pprof_builder b;
	int64_t first, last, empty;
	uint8_t *packed = NULL;
	size_t len;
	int err;

	memset(&b, 0, sizeof(b));
	b.src = src;
	perftools__profiles__profile__init(&b.profile);
	hs_strtab_init(&b.strings, PPROF_STRINGS_MAX);
	hs_strtab_init(&b.modules, PPROF_STRINGS_MAX);
	hs_u64map_init(&b.location_of);
	b.function_of = hs_calloc(hs_source_nr_frames(src) + 1, sizeof(*b.function_of));
	b.location_of_stack = hs_calloc(src->nr_stacks + 1, sizeof(*b.location_of_stack));
	err = b.function_of && b.location_of_stack ? 0 : -ENOMEM;
	if (!err)
		err = intern(&b, "", 0, &empty); /* string_table[0] is "" */
	if (!err)
		err = add_sample_types(&b);
	if (!err)
		err = add_mappings(&b);
	if (!err)
		err = add_samples(&b);
	if (!err)
		err = finish_tables(&b);
	if (!err) {
		hs_source_time_range(src, &first, &last);
		b.profile.duration_nanos = last - first;
		len = protobuf_c_message_get_packed_size(&b.profile.base);
		packed = hs_malloc(len ? len : 1);
		if (!packed)
			err = -ENOMEM;
	}
	if (!err && protobuf_c_message_pack(&b.profile.base, packed) != len)
		err = -EIO;
	if (!err)
		err = write_gzip(packed, len, f);
	hs_free(packed);
	builder_release(&b);
	return err == -E2BIG ? -ENOMEM : err;
}
