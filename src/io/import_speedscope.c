/*
 * import_speedscope - read speedscope's JSON file format (the one
 * export.c writes, and that speedscope itself saves) as a stack source.
 *
 * The profile read is activeProfileIndex's (else the first). A "sampled"
 * profile's samples are root-first lists of indices into shared.frames,
 * each with its weight (1 without weights); an "evented" profile's O(pen)
 * and C(lose) events charge the time between two events to the stack open
 * then. A frame is its name; its file and line, when given, are the
 * stack's source location. The unit decides the metric: time units become
 * ms of a time source, "bytes" is bytes, "none" a plain count. Samples of
 * a sampled profile are at time 0, those of an evented one at the event.
 *
 * The document is held whole (jansson); a malformed one is -EINVAL with what is wrong in
 * @diag. Ownership: the document is freed before returning; @out is the caller's.
 */
#include "io/io.h"
#include "common/alloc.h"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SPEEDSCOPE_MAX_DEPTH 100000

int hs_speedscope_sniff(const unsigned char *head, size_t n)
{
	static const char schema[] = "speedscope.app/file-format-schema";
	size_t i;

	if (!n || head[0] != '{')
		return 0;
	for (i = 0; i + sizeof(schema) - 1 <= n; i++)
		if (!memcmp(head + i, schema, sizeof(schema) - 1))
			return 1;
	return 0;
}

struct speedscope_reader {
	struct hs_stack_source *out;
	json_t *frames;	    /* shared.frames, borrowed from the document */
	uint32_t *frame_id; /* frame index -> frame, UINT32_MAX: not yet */
	uint32_t *loc;	    /* frame index -> location, 0: none */
	struct hs_diag *diag;
};

static int bad(struct speedscope_reader *r, const char *what)
{
	hs_diag_set(r->diag, 0, "%s", what);
	return -EINVAL;
}

/* The frame and location of shared frame @index, interned on first use. */
static int frame_at(struct speedscope_reader *r, json_int_t index, uint32_t *frame,
		    uint32_t *loc)
{
	json_t *fr, *name, *file, *line;
	int err;

	if (index < 0 || (size_t)index >= json_array_size(r->frames)) {
		hs_diag_set(r->diag, 0, "frame index %lld is not in shared.frames",
			    (long long)index);
		return -EINVAL;
	}
	if (r->frame_id[index] != UINT32_MAX) {
		*frame = r->frame_id[index];
		*loc = r->loc[index];
		return 0;
	}
	fr = json_array_get(r->frames, (size_t)index);
	name = json_object_get(fr, "name");
	if (!json_is_string(name))
		return bad(r, "a shared frame has no name");
	err = hs_source_intern_frame(r->out, json_string_value(name),
				     json_string_length(name), frame);
	file = json_object_get(fr, "file");
	line = json_object_get(fr, "line");
	r->loc[index] = 0;
	if (!err && json_is_string(file) && json_is_integer(line) &&
	    json_integer_value(line) > 0 && json_integer_value(line) <= UINT32_MAX)
		err = hs_source_intern_loc(
		    r->out, json_string_value(file), json_string_length(file),
		    (uint32_t)json_integer_value(line), &r->loc[index]);
	if (err)
		return err;
	r->frame_id[index] = *frame;
	*loc = r->loc[index];
	return 0;
}

/* The stack of the root-first frame indices in the JSON array @list. */
static int stack_of(struct speedscope_reader *r, json_t *list, uint32_t *stack)
{
	size_t i;
	json_t *v;

	*stack = HS_NO_STACK;
	if (!json_is_array(list))
		return bad(r, "a sample is not an array of frame indices");
	json_array_foreach(list, i, v)
	{
		uint32_t frame, loc;
		int err;

		if (!json_is_integer(v))
			return bad(r, "a frame index is not an integer");
		err = frame_at(r, json_integer_value(v), &frame, &loc);
		if (!err)
			err =
			    hs_source_intern_stack_loc(r->out, frame, *stack, loc, stack);
		if (err)
			return err;
	}
	return 0;
}

static int read_sampled(struct speedscope_reader *r, json_t *profile, double scale)
{
	json_t *samples = json_object_get(profile, "samples");
	json_t *weights = json_object_get(profile, "weights");
	size_t i;
	json_t *s;

	if (!json_is_array(samples))
		return bad(r, "a sampled profile has no samples array");
	if (weights && (!json_is_array(weights) ||
			json_array_size(weights) != json_array_size(samples)))
		return bad(r, "weights and samples differ in number");
	json_array_foreach(samples, i, s)
	{
		json_t *w = weights ? json_array_get(weights, i) : NULL;
		uint32_t stack;
		int err;

		if (w && !json_is_number(w))
			return bad(r, "a weight is not a number");
		err = stack_of(r, s, &stack);
		if (!err)
			err = hs_source_add_sample(
			    r->out, 0, (w ? json_number_value(w) : 1) * scale, 1, stack);
		if (err)
			return err;
	}
	return 0;
}

/*
 * An evented profile: the stack of open frames, the time from each event
 * to the next charged to it.
 */
static int read_evented(struct speedscope_reader *r, json_t *profile, double scale)
{
	json_t *events = json_object_get(profile, "events"), *e;
	uint32_t stack = HS_NO_STACK;
	double last = 0;
	size_t i;

	if (!json_is_array(events))
		return bad(r, "an evented profile has no events array");
	json_array_foreach(events, i, e)
	{
		json_t *type = json_object_get(e, "type"), *at = json_object_get(e, "at");
		json_t *fr = json_object_get(e, "frame");
		const char *t = json_string_value(type);
		uint32_t frame, loc;
		int err = 0;

		if (!t || !json_is_number(at) || !json_is_integer(fr))
			return bad(r, "an event lacks its type, at or frame");
		if (json_number_value(at) < last)
			return bad(r, "events go back in time");
		if (stack != HS_NO_STACK && json_number_value(at) > last)
			err = hs_source_add_sample(
			    r->out, (int64_t)llround(last * scale * 1e6),
			    (json_number_value(at) - last) * scale, 1, stack);
		last = json_number_value(at);
		if (!err)
			err = frame_at(r, json_integer_value(fr), &frame, &loc);
		if (err)
			return err;
		if (!strcmp(t, "O")) {
			if (hs_source_depth(r->out, stack) >= SPEEDSCOPE_MAX_DEPTH)
				return bad(r, "stacks nest deeper than 100000 frames");
			err =
			    hs_source_intern_stack_loc(r->out, frame, stack, loc, &stack);
			if (err)
				return err;
		} else if (!strcmp(t, "C")) {
			if (stack == HS_NO_STACK || r->out->stack_frame[stack] != frame)
				return bad(r, "an event closes a frame that is not open");
			stack = r->out->stack_caller[stack];
		} else {
			return bad(r, "an event's type is neither O nor C");
		}
	}
	return 0;
}

/* How @unit scales to the source's metric; sets the kind and unit. */
static int set_unit(struct hs_stack_source *out, const char *unit, double *scale)
{
	static const struct {
		const char *name;
		double to_ms;
	} times[] = {
	    {"nanoseconds", 1e-6},
	    {"microseconds", 1e-3},
	    {"milliseconds", 1},
	    {"seconds", 1e3},
	};
	size_t i;

	*scale = 1;
	hs_free(out->metric_unit);
	out->metric_unit = NULL;
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		if (unit && !strcmp(unit, times[i].name)) {
			out->kind = HS_METRIC_TIME;
			*scale = times[i].to_ms;
			out->metric_unit = hs_strdup("ms");
			return out->metric_unit ? 0 : -ENOMEM;
		}
	if (unit && !strcmp(unit, "bytes")) {
		out->metric_unit = hs_strdup("bytes");
		return out->metric_unit ? 0 : -ENOMEM;
	}
	return 0;
}

int hs_import_speedscope_stream(FILE *f, size_t source, const char *name,
				struct hs_stack_source *out, struct hs_diag *diag)
{
	struct speedscope_reader r = {.out = out, .diag = diag};
	json_t *doc, *profiles, *profile, *type, *active;
	json_error_t jerr;
	size_t nr_frames, index = 0, i;
	double scale;
	int err;

	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		hs_diag_set(diag, (uint64_t)(jerr.line > 0 ? jerr.line : 0), "%s",
			    jerr.text);
		return -EINVAL;
	}
	r.frames = json_object_get(json_object_get(doc, "shared"), "frames");
	profiles = json_object_get(doc, "profiles");
	active = json_object_get(doc, "activeProfileIndex");
	if (json_is_integer(active) && json_integer_value(active) >= 0)
		index = (size_t)json_integer_value(active);
	profile = json_array_get(profiles, index);
	if (!json_is_array(r.frames) || !json_is_object(profile)) {
		json_decref(doc);
		return bad(&r, "not a speedscope file: no shared.frames or no profile");
	}
	nr_frames = json_array_size(r.frames);
	r.frame_id = hs_malloc((nr_frames + 1) * sizeof(*r.frame_id));
	r.loc = hs_calloc(nr_frames + 1, sizeof(*r.loc));
	err = r.frame_id && r.loc ? 0 : -ENOMEM;
	for (i = 0; !err && i < nr_frames; i++)
		r.frame_id[i] = UINT32_MAX;
	if (!err)
		err = set_unit(out, json_string_value(json_object_get(profile, "unit")),
			       &scale);
	type = json_object_get(profile, "type");
	if (!err && json_is_string(type) && !strcmp(json_string_value(type), "sampled"))
		err = read_sampled(&r, profile, scale);
	else if (!err && json_is_string(type) &&
		 !strcmp(json_string_value(type), "evented"))
		err = read_evented(&r, profile, scale);
	else if (!err)
		err = bad(&r, "the profile's type is neither sampled nor evented");
	if (err == -ENOMEM && !diag->set)
		hs_diag_set(diag, 0, "out of memory");
	else if (err && !diag->set)
		hs_diag_set(diag, 0, "%s", strerror(-err));
	hs_free(r.frame_id);
	hs_free(r.loc);
	json_decref(doc);
	return err;
}
