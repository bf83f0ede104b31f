/*
 * import_pprof - read a pprof profile (gzip'd profile.proto, as written by
 * export_pprof.c, `go tool pprof` and Go's runtime/pprof) as a stack
 * source, so that heapscope's exports read back and other tools'
 * profiles open in the viewer.
 *
 * The metric is the default sample type (else the last); the count is
 * another sample type whose unit is "count", else 1. Nanoseconds become
 * ms of a time source. A frame is "MAPPING-FILE!function", one per Line of
 * a Location (inlined calls outermost first), a Location without lines
 * naming its address; a Line's line number and its function's file are
 * the frame's source location. pprof samples have no times: every sample
 * is at time 0.
 *
 * The decompressed profile is held whole (protobuf-c unpacks a buffer),
 * up to PPROF_MAX_BYTES. Every index and id in the file is checked before
 * use: a malformed profile is -EINVAL with what is wrong in @diag.
 * Ownership: what is unpacked is freed before returning; @out is the
 * caller's.
 */
#include "io/io.h"
#include "common/alloc.h"
#include "common/u64map.h"
#include "profile.pb-c.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define PPROF_MAX_BYTES ((size_t)1 << 30)

typedef Perftools__Profiles__Profile pb_profile;

int hs_pprof_sniff(const unsigned char *head, size_t n)
{
	/* gzip's magic: pprof is the one gzip'd format heapscope reads */
	return n >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8;
}

/* Inflate the gzip stream @f into *@buf (owned by the caller), *@len bytes. */
static int gunzip(FILE *f, unsigned char **buf, size_t *len, struct hs_diag *diag)
{
	unsigned char in[16384];
	size_t alloc = 0, n;
	z_stream z;
	int ret = Z_OK;

	*buf = NULL;
	*len = 0;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	while (ret != Z_STREAM_END && (n = fread(in, 1, sizeof(in), f)) > 0) {
		z.next_in = in;
		z.avail_in = (uInt)n;
		while (z.avail_in && ret != Z_STREAM_END) {
			if (*len + 65536 > PPROF_MAX_BYTES) {
				hs_diag_set(diag, 0,
					    "the profile is over %zu bytes unpacked",
					    PPROF_MAX_BYTES);
				inflateEnd(&z);
				return -E2BIG;
			}
			if (HS_GROW(*buf, *len + 65536, alloc)) {
				inflateEnd(&z);
				return -ENOMEM;
			}
			z.next_out = *buf + *len;
			z.avail_out = 65536;
			ret = inflate(&z, Z_NO_FLUSH);
			*len += 65536 - z.avail_out;
			if (ret != Z_OK && ret != Z_STREAM_END) {
				hs_diag_set(diag, z.total_in, "not a gzip stream: %s",
					    z.msg ? z.msg : "bad data");
				inflateEnd(&z);
				return ret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
			}
		}
	}
	inflateEnd(&z);
	if (ferror(f)) {
		hs_diag_set(diag, 0, "read error");
		return -EIO;
	}
	if (ret != Z_STREAM_END) {
		hs_diag_set(diag, z.total_in, "the gzip stream is truncated");
		return -EINVAL;
	}
	return 0;
}

/* The profile's string @index, or NULL when out of range. */
static const char *string_at(const pb_profile *p, int64_t index)
{
	return index >= 0 && (uint64_t)index < p->n_string_table ? p->string_table[index]
								 : NULL;
}

/* Check every string index and sample's value count of @p. */
static int check_profile(const pb_profile *p, struct hs_diag *diag)
{
	size_t i, j;

	if (!p->n_sample_type) {
		hs_diag_set(diag, 0, "the profile has no sample type");
		return -EINVAL;
	}
	for (i = 0; i < p->n_sample_type; i++)
		if (!string_at(p, p->sample_type[i]->type) ||
		    !string_at(p, p->sample_type[i]->unit))
			goto bad_string;
	for (i = 0; i < p->n_mapping; i++)
		if (!string_at(p, p->mapping[i]->filename))
			goto bad_string;
	for (i = 0; i < p->n_function; i++)
		if (!string_at(p, p->function[i]->name) ||
		    !string_at(p, p->function[i]->filename))
			goto bad_string;
	for (i = 0; i < p->n_sample; i++)
		if (p->sample[i]->n_value != p->n_sample_type) {
			hs_diag_set(diag, 0,
				    "sample %zu has %zu values for %zu sample types", i,
				    p->sample[i]->n_value, p->n_sample_type);
			return -EINVAL;
		}
	for (i = 0; i < p->n_location; i++)
		for (j = 0; j < p->location[i]->n_line; j++)
			if (p->location[i]->line[j]->line < 0 ||
			    p->location[i]->line[j]->line > UINT32_MAX) {
				hs_diag_set(diag, 0, "location %zu has line %" PRId64, i,
					    p->location[i]->line[j]->line);
				return -EINVAL;
			}
	return 0;
bad_string:
	hs_diag_set(diag, 0, "a string index is past the string table (%zu strings)",
		    p->n_string_table);
	return -EINVAL;
}

/* Index of each id of @n entries (@id_at gives an entry's id) in @map. */
static int index_ids(struct hs_u64map *map, size_t n,
		     uint64_t (*id_at)(const pb_profile *, size_t), const pb_profile *p,
		     const char *what, struct hs_diag *diag)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int ret = hs_u64map_put(map, id_at(p, i), i, NULL);

		if (ret < 0)
			return -ENOMEM;
		if (ret || !id_at(p, i)) {
			hs_diag_set(diag, 0, "%s id %" PRIu64 " is 0 or repeated", what,
				    id_at(p, i));
			return -EINVAL;
		}
	}
	return 0;
}

static uint64_t mapping_id_at(const pb_profile *p, size_t i)
{
	return p->mapping[i]->id;
}
static uint64_t function_id_at(const pb_profile *p, size_t i)
{
	return p->function[i]->id;
}
static uint64_t location_id_at(const pb_profile *p, size_t i)
{
	return p->location[i]->id;
}

struct pprof_reader {
	const pb_profile *p;
	struct hs_stack_source *out;
	struct hs_u64map mappings, functions, locations;
	char *name; /* scratch for a frame's name */
	size_t alloc_name;
	struct hs_diag *diag;
};

/* Intern "MODULE!FUNCTION" (or FUNCTION without a module) as a frame. */
static int intern_frame(struct pprof_reader *r, const char *module, const char *function,
			uint32_t *frame)
{
	size_t mlen = module ? strlen(module) : 0, flen = strlen(function);
	size_t len = mlen + (mlen ? 1 : 0) + flen;

	if (HS_GROW(r->name, len + 1, r->alloc_name))
		return -ENOMEM;
	if (mlen) {
		memcpy(r->name, module, mlen);
		r->name[mlen] = '!';
	}
	memcpy(r->name + len - flen, function, flen);
	if (!len) {
		memcpy(r->name, "?", 1);
		len = 1;
	}
	return hs_source_intern_frame(r->out, r->name, len, frame);
}

/* Push the frames of location @id onto @stack, outermost inlined call first. */
static int push_location(struct pprof_reader *r, uint64_t id, uint32_t *stack)
{
	const pb_profile *p = r->p;
	const Perftools__Profiles__Location *l;
	const char *module = NULL;
	uint64_t index;
	size_t j;
	int err;

	if (!hs_u64map_get(&r->locations, id, &index)) {
		hs_diag_set(r->diag, 0,
			    "a sample names location %" PRIu64 ", which is not "
			    "in the profile",
			    id);
		return -EINVAL;
	}
	l = p->location[index];
	if (l->mapping_id) {
		if (!hs_u64map_get(&r->mappings, l->mapping_id, &index)) {
			hs_diag_set(r->diag, 0,
				    "location %" PRIu64 " names mapping %" PRIu64
				    ", which is not in the profile",
				    id, l->mapping_id);
			return -EINVAL;
		}
		module = string_at(p, p->mapping[index]->filename);
	}
	if (!l->n_line) {
		char addr[32];
		uint32_t frame;

		snprintf(addr, sizeof(addr), "0x%" PRIx64, l->address);
		err = intern_frame(r, module, addr, &frame);
		return err ? err : hs_source_intern_stack(r->out, frame, *stack, stack);
	}
	for (j = l->n_line; j-- > 0;) {
		const Perftools__Profiles__Line *ln = l->line[j];
		const Perftools__Profiles__Function *fn;
		uint32_t frame, loc = 0;
		const char *file;

		if (!hs_u64map_get(&r->functions, ln->function_id, &index)) {
			hs_diag_set(r->diag, 0,
				    "location %" PRIu64 " names function %" PRIu64
				    ", which is not in the profile",
				    id, ln->function_id);
			return -EINVAL;
		}
		fn = p->function[index];
		file = string_at(p, fn->filename);
		err = intern_frame(r, module, string_at(p, fn->name), &frame);
		if (!err && *file && ln->line > 0)
			err = hs_source_intern_loc(r->out, file, strlen(file),
						   (uint32_t)ln->line, &loc);
		if (!err)
			err =
			    hs_source_intern_stack_loc(r->out, frame, *stack, loc, stack);
		if (err)
			return err;
	}
	return 0;
}

/* The metric's sample type index, the count's (or -1), and the metric's scale. */
static void pick_types(const pb_profile *p, size_t *metric, long *count)
{
	const char *want = string_at(p, p->default_sample_type);
	size_t i;

	*metric = p->n_sample_type - 1;
	for (i = 0; p->default_sample_type && want && i < p->n_sample_type; i++)
		if (!strcmp(string_at(p, p->sample_type[i]->type), want))
			*metric = i;
	*count = -1;
	for (i = 0; i < p->n_sample_type && *count < 0; i++)
		if (i != *metric &&
		    !strcmp(string_at(p, p->sample_type[i]->unit), "count"))
			*count = (long)i;
}

/* The heapscope view a sample type stands for, or NULL. */
static const char *view_of(const char *type)
{
	if (!strncmp(type, "alloc_", 6))
		return "alloc";
	if (!strncmp(type, "inuse_", 6))
		return "leaks";
	if (!strcmp(type, "cpu") || !strcmp(type, "wall"))
		return type;
	return NULL;
}

static int read_profile(struct pprof_reader *r)
{
	const pb_profile *p = r->p;
	struct hs_stack_source *out = r->out;
	const char *unit, *view;
	double scale = 1;
	size_t metric, i, j;
	long count;
	int err;

	err = check_profile(p, r->diag);
	if (!err)
		err = index_ids(&r->mappings, p->n_mapping, mapping_id_at, p, "mapping",
				r->diag);
	if (!err)
		err = index_ids(&r->functions, p->n_function, function_id_at, p,
				"function", r->diag);
	if (!err)
		err = index_ids(&r->locations, p->n_location, location_id_at, p,
				"location", r->diag);
	if (err)
		return err;
	pick_types(p, &metric, &count);
	unit = string_at(p, p->sample_type[metric]->unit);
	view = view_of(string_at(p, p->sample_type[metric]->type));
	if (!strcmp(unit, "nanoseconds")) {
		out->kind = HS_METRIC_TIME;
		unit = "ms";
		scale = 1e-6;
	}
	hs_free(out->metric_unit);
	out->metric_unit = hs_strdup(unit);
	hs_free(out->view_name);
	out->view_name = view ? hs_strdup(view) : NULL;
	if (!out->metric_unit || (view && !out->view_name))
		return -ENOMEM;
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		uint32_t stack = HS_NO_STACK;

		for (j = s->n_location_id; j-- > 0;) {
			err = push_location(r, s->location_id[j], &stack);
			if (err)
				return err;
		}
		err =
		    hs_source_add_sample(out, 0, (double)s->value[metric] * scale,
					 count < 0 ? 1 : (double)s->value[count], stack);
		if (err)
			return err;
	}
	return 0;
}

int hs_import_pprof_stream(FILE *f, size_t source, const char *name,
			   struct hs_stack_source *out, struct hs_diag *diag)
{
	struct pprof_reader r;
	unsigned char *buf;
	pb_profile *p;
	size_t len;
	int err;

	err = gunzip(f, &buf, &len, diag);
	if (err) {
		hs_free(buf);
		return err;
	}
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	hs_free(buf);
	if (!p) {
		hs_diag_set(diag, 0,
			    "not a pprof profile (profile.proto does not decode)");
		return -EINVAL;
	}
	memset(&r, 0, sizeof(r));
	r.p = p;
	r.out = out;
	r.diag = diag;
	hs_u64map_init(&r.mappings);
	hs_u64map_init(&r.functions);
	hs_u64map_init(&r.locations);
	err = read_profile(&r);
	if (err == -ENOMEM && !diag->set)
		hs_diag_set(diag, 0, "out of memory");
	else if (err && !diag->set)
		hs_diag_set(diag, 0, "%s", strerror(-err));
	hs_u64map_release(&r.mappings);
	hs_u64map_release(&r.functions);
	hs_u64map_release(&r.locations);
	hs_free(r.name);
	perftools__profiles__profile__free_unpacked(p, NULL);
	return err;
}
