/*
 * import_perfview_json - .perfView.json with yajl, streaming.
 *
 *   {"StackSource": {"Samples": [
 *       {"Time": 10, "Metric": 10, "Stack": ["leaf", ..., "root"]}, ...]}}
 *
 * Numbers may also be numeric strings; any array one level below a sample
 * is read as (part of) its stack, leaf first, as PerfView does. What
 * heapscope's exporter adds is read too: "Count" in a sample,
 * "MetricUnit" in the StackSource, and a top-level "StackWindowGuiState"
 * object with "FilterGuiState" text boxes, "Notes" and "ScalingPolicy"
 * (docs/formats.md). Only the first "StackSource" is read.
 *
 * yajl gives no line numbers; they are counted from the byte offset of the
 * token being handled.
 */
#include "io/io.h"
#include "io/gui_state.h"
#include "io/numtext.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <yajl/yajl_parse.h>

#define BLOCK (64u << 10)
#define NAME_MAX_BYTES (64u << 10) /* one frame name */
#define TEXT_MAX_BYTES (1u << 20)  /* notes, patterns */
#define TOKEN_MAX_BYTES (8u << 20) /* what yajl may buffer for one token */
#define MAX_DEPTH (1u << 20)	   /* frames in one stack */
#define MAX_TRACKED 64		   /* nesting we classify */
#define MAX_NESTING 100000	   /* nesting we accept at all */

enum role { J_TOP, J_SOURCE, J_SAMPLES, J_SAMPLE, J_STACK, J_GUI, J_FILTER, J_SKIP };

enum key {
	K_OTHER,
	K_SOURCE,
	K_GUI, /* top */
	K_SAMPLES,
	K_UNIT, /* StackSource */
	K_TIME,
	K_METRIC,
	K_COUNT, /* sample */
	K_FILTER,
	K_NOTES,
	K_SCALING, /* StackWindowGuiState */
	K_FIELD,   /* FilterGuiState + field */
};

struct level {
	enum role role;
	enum key key; /* the last key seen, in a map */
	enum hs_gui_field field;
};

struct json_import {
	yajl_handle h;
	struct hs_stack_source *out;
	struct hs_diag *diag;
	int err;

	struct level lv[MAX_TRACKED];
	size_t depth;
	int source_seen;

	/* the sample being read */
	int64_t s_time;
	double s_metric, s_count;
	uint32_t *frames; /* leaf first */
	size_t nr_frames, alloc_frames;

	/* line counting over the chunk being parsed */
	const unsigned char *chunk;
	size_t chunk_len, scan_pos;
	uint64_t lines; /* '\n' before chunk + scan_pos */
	int callback_seen;
	size_t last_callback; /* offset in chunk after the last callback */
};

static uint64_t cur_line(struct json_import *j)
{
	size_t upto = j->chunk ? yajl_get_bytes_consumed(j->h) : 0;
	size_t i;

	if (upto > j->chunk_len)
		upto = j->chunk_len;
	for (i = j->scan_pos; i < upto; i++)
		j->lines += j->chunk[i] == '\n';
	if (upto > j->scan_pos)
		j->scan_pos = upto;
	return j->lines + 1;
}

static int fail(struct json_import *j, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct json_import *j, int err, const char *fmt, ...)
{
	char msg[sizeof(j->diag->msg)];
	va_list ap;

	if (!j->err) {
		j->err = err;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		hs_diag_set(j->diag, cur_line(j), "%s", msg);
	}
	return 0; /* yajl: stop */
}

static int fail_errno(struct json_import *j, int err)
{
	if (err == -ENOMEM)
		return fail(j, err, "out of memory");
	if (err == -E2BIG)
		return fail(j, err, "too many frames or stacks");
	return fail(j, err, "%s", strerror(-err));
}

/* Called by every callback: note where it happened for the token cap. */
static void seen(struct json_import *j)
{
	j->callback_seen = 1;
	j->last_callback = yajl_get_bytes_consumed(j->h);
}

static struct level *top(struct json_import *j)
{
	if (!j->depth)
		return NULL;
	if (j->depth > MAX_TRACKED)
		return &j->lv[MAX_TRACKED - 1]; /* always J_SKIP there */
	return &j->lv[j->depth - 1];
}

static int push(struct json_import *j, enum role r)
{
	if (j->depth >= MAX_NESTING)
		return fail(j, -E2BIG, "JSON nested deeper than %u levels", MAX_NESTING);
	if (j->depth < MAX_TRACKED) {
		j->lv[j->depth].role = j->depth == MAX_TRACKED - 1 ? J_SKIP : r;
		j->lv[j->depth].key = K_OTHER;
	}
	j->depth++;
	return 1;
}

/* ---- values ---- */

static int add_frame(struct json_import *j, const char *s, size_t len)
{
	int err;

	if (len > NAME_MAX_BYTES)
		return fail(j, -E2BIG, "a frame name longer than %u bytes",
			    NAME_MAX_BYTES);
	if (memchr(s, '\0', len))
		return fail(j, -EINVAL, "a frame name contains a NUL character");
	if (j->nr_frames >= MAX_DEPTH)
		return fail(j, -E2BIG, "a stack deeper than %u frames", MAX_DEPTH);
	if (HS_GROW(j->frames, j->nr_frames + 1, j->alloc_frames))
		return fail_errno(j, -ENOMEM);
	err = hs_source_intern_frame(j->out, s, len, &j->frames[j->nr_frames]);
	if (err)
		return fail_errno(j, err);
	j->nr_frames++;
	return 1;
}

static int set_text(struct json_import *j, char **slot, const char *s, size_t len)
{
	char *v;

	while (len && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
		       s[len - 1] == '\r'))
		len--;
	if (len > TEXT_MAX_BYTES)
		return fail(j, -E2BIG, "a text value longer than %u bytes",
			    TEXT_MAX_BYTES);
	if (memchr(s, '\0', len))
		return fail(j, -EINVAL, "a text value contains a NUL character");
	v = len ? hs_strndup(s, len) : NULL;
	if (len && !v)
		return fail_errno(j, -ENOMEM);
	hs_free(*slot);
	*slot = v;
	return 1;
}

static const char *key_name(enum key k)
{
	return k == K_TIME ? "Time" : k == K_METRIC ? "Metric" : "Count";
}

/*
 * A scalar: @s/@len is its text (string contents or number as written),
 * @is_num/@is_str say which; booleans and null have neither.
 */
static int scalar(struct json_import *j, const char *s, size_t len, int is_num,
		  int is_str)
{
	struct level *l = top(j);
	double d;
	int err;

	seen(j);
	if (!l)
		return fail(j, -EINVAL,
			    "expected a JSON object at the top, not a single value");
	switch (l->role) {
	case J_SAMPLES:
		return fail(j, -EINVAL, "a sample must be a JSON object");
	case J_STACK:
		if (!is_num && !is_str)
			return fail(j, -EINVAL, "a stack frame must be a string");
		return add_frame(j, s, len);
	case J_SAMPLE:
		if (l->key != K_TIME && l->key != K_METRIC && l->key != K_COUNT)
			return 1;
		if (!is_num && !is_str)
			return fail(j, -EINVAL, "sample %s is not a number",
				    key_name(l->key));
		if (l->key == K_TIME) {
			err = hs_numtext_parse_ms(s, len, &j->s_time);
		} else {
			err = hs_numtext_parse_metric(s, len, &d);
			if (!err && l->key == K_METRIC)
				j->s_metric = d;
			else if (!err)
				j->s_count = d;
		}
		if (err)
			return fail(j, -EINVAL, "sample %s '%.*s' is %s",
				    key_name(l->key), len > 64 ? 64 : (int)len, s,
				    err == -ERANGE ? "out of range" : "not a number");
		return 1;
	case J_SOURCE:
		if (l->key == K_UNIT && is_str)
			return set_text(j, &j->out->metric_unit, s, len);
		if (l->key == K_SAMPLES)
			return fail(j, -EINVAL, "\"Samples\" must be an array");
		return 1;
	case J_GUI:
		if (l->key == K_NOTES && is_str)
			return set_text(j, &j->out->defaults.notes, s, len);
		if (l->key == K_SCALING && is_str) {
			j->out->kind = len == 10 && !strncasecmp(s, "TimeMetric", 10)
					   ? HS_METRIC_TIME
					   : HS_METRIC_PLAIN;
		}
		return 1;
	case J_FILTER: {
		char **slot = hs_gui_field_slot(&j->out->defaults, l->field);

		if (l->key != K_FIELD || (!is_num && !is_str))
			return 1;
		if (hs_gui_field_is_number(l->field) &&
		    hs_numtext_parse_double(s, len, &d)) {
			hs_free(*slot); /* a non-numeric number box is dropped */
			*slot = NULL;
			return 1;
		}
		return set_text(j, slot, s, len);
	}
	default:
		return 1;
	}
}

static int cb_null(void *ctx)
{
	return scalar(ctx, NULL, 0, 0, 0);
}

static int cb_boolean(void *ctx, int v)
{
	(void)v;
	return scalar(ctx, NULL, 0, 0, 0);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	return scalar(ctx, s, len, 1, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return scalar(ctx, (const char *)s, len, 0, 1);
}

/* ---- containers ---- */

static int cb_start_map(void *ctx)
{
	struct json_import *j = ctx;
	struct level *l = top(j);
	enum role r = J_SKIP;

	seen(j);
	if (!l) {
		r = J_TOP;
	} else if (l->role == J_TOP && l->key == K_SOURCE && !j->source_seen) {
		r = J_SOURCE;
		j->source_seen = 1;
	} else if (l->role == J_TOP && l->key == K_GUI) {
		r = J_GUI;
	} else if (l->role == J_GUI && l->key == K_FILTER) {
		r = J_FILTER;
	} else if (l->role == J_SAMPLES) {
		r = J_SAMPLE;
		j->s_time = 0;
		j->s_metric = 1;
		j->s_count = 1;
		j->nr_frames = 0;
	} else if (l->role == J_STACK) {
		return fail(j, -EINVAL, "a stack frame must be a string");
	} else if (l->role == J_SOURCE && l->key == K_SAMPLES) {
		return fail(j, -EINVAL, "\"Samples\" must be an array");
	}
	return push(j, r);
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t len)
{
	struct json_import *j = ctx;
	struct level *l = top(j);
	const char *s = (const char *)k;
	int f;

#define IS(name) (len == sizeof(name) - 1 && !memcmp(s, name, len))
	seen(j);
	l->key = K_OTHER;
	switch (l->role) {
	case J_TOP:
		if (IS("StackSource"))
			l->key = K_SOURCE;
		else if (IS("StackWindowGuiState"))
			l->key = K_GUI;
		break;
	case J_SOURCE:
		if (IS("Samples"))
			l->key = K_SAMPLES;
		else if (IS("MetricUnit"))
			l->key = K_UNIT;
		break;
	case J_SAMPLE:
		if (IS("Time"))
			l->key = K_TIME;
		else if (IS("Metric"))
			l->key = K_METRIC;
		else if (IS("Count"))
			l->key = K_COUNT;
		break;
	case J_GUI:
		if (IS("FilterGuiState"))
			l->key = K_FILTER;
		else if (IS("Notes"))
			l->key = K_NOTES;
		else if (IS("ScalingPolicy"))
			l->key = K_SCALING;
		break;
	case J_FILTER:
		f = hs_gui_field_find(s, len);
		if (f >= 0) {
			l->key = K_FIELD;
			l->field = (enum hs_gui_field)f;
		}
		break;
	default:
		break;
	}
#undef IS
	return 1;
}

static int end_sample(struct json_import *j)
{
	uint32_t stack;
	size_t i, n = j->nr_frames;
	int err;

	for (i = 0; i < n / 2; i++) {
		uint32_t t = j->frames[i];

		j->frames[i] = j->frames[n - 1 - i];
		j->frames[n - 1 - i] = t;
	}
	err = hs_source_intern_path(j->out, j->frames, n, &stack);
	if (!err)
		err = hs_source_add_sample(j->out, j->s_time, j->s_metric, j->s_count,
					   stack);
	return err ? fail_errno(j, err) : 1;
}

static int cb_end_map(void *ctx)
{
	struct json_import *j = ctx;
	struct level *l = top(j);
	enum role r = l->role;

	seen(j);
	j->depth--;
	if (r == J_SAMPLE)
		return end_sample(j);
	return 1;
}

static int cb_start_array(void *ctx)
{
	struct json_import *j = ctx;
	struct level *l = top(j);
	enum role r = J_SKIP;

	seen(j);
	if (!l)
		return fail(j, -EINVAL,
			    "expected a JSON object at the top, not an array");
	if (l->role == J_SOURCE && l->key == K_SAMPLES)
		r = J_SAMPLES;
	else if (l->role == J_SAMPLE)
		r = J_STACK;
	else if (l->role == J_STACK)
		return fail(j, -EINVAL, "a stack frame must be a string");
	else if (l->role == J_SAMPLES)
		return fail(j, -EINVAL, "a sample must be a JSON object");
	return push(j, r);
}

static int cb_end_array(void *ctx)
{
	struct json_import *j = ctx;

	seen(j);
	j->depth--;
	return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

/* yajl's own message, first line only, with the line it happened on. */
static int syntax_error(struct json_import *j, const unsigned char *buf, size_t n)
{
	unsigned char *e = yajl_get_error(j->h, 0, buf, n);
	const char *msg = e ? (const char *)e : "JSON syntax error";
	size_t len = strcspn(msg, "\n");

	hs_diag_set(j->diag, cur_line(j), "JSON %.*s", (int)len, msg);
	if (e)
		yajl_free_error(j->h, e);
	return -EINVAL;
}

int hs_import_perfview_json(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{
	struct json_import j;
	unsigned char *buf;
	size_t gap = 0;
	int err = 0, first = 1;

	memset(&j, 0, sizeof(j));
	j.out = out;
	j.diag = diag;
	buf = hs_malloc(BLOCK);
	/* yajl's allocator stays malloc: yajl does not survive a failed one */
	j.h = buf ? yajl_alloc(&callbacks, NULL, &j) : NULL;
	if (!j.h) {
		hs_free(buf);
		hs_diag_set(diag, 0, "out of memory");
		return -ENOMEM;
	}
	for (;;) {
		size_t n = fread(buf, 1, BLOCK, f), i;
		yajl_status st;

		if (!n && ferror(f)) {
			hs_diag_set(diag, j.lines + 1, "read error");
			err = -EIO;
			break;
		}
		if (first && n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
			/* a UTF-8 byte order mark, as format detection skips */
			memmove(buf, buf + 3, n - 3);
			n -= 3;
		}
		if (first && !n) { /* nothing but the mark: read on */
			first = 0;
			continue;
		}
		first = 0;
		if (!n) {
			j.chunk = NULL;
			st = yajl_complete_parse(j.h);
			if (st == yajl_status_error)
				err = syntax_error(&j, NULL, 0);
			else if (st != yajl_status_ok || j.err)
				err = j.err ? j.err : -EINVAL;
			break;
		}
		j.chunk = buf;
		j.chunk_len = n;
		j.scan_pos = 0;
		j.callback_seen = 0;
		st = yajl_parse(j.h, buf, n);
		if (st == yajl_status_error) {
			err = syntax_error(&j, buf, n);
			break;
		}
		if (st != yajl_status_ok || j.err) {
			err = j.err ? j.err : -EINVAL;
			break;
		}
		gap = j.callback_seen ? n - j.last_callback : gap + n;
		if (gap > TOKEN_MAX_BYTES) {
			hs_diag_set(diag, cur_line(&j),
				    "a JSON value longer than %u bytes", TOKEN_MAX_BYTES);
			err = -E2BIG;
			break;
		}
		for (i = j.scan_pos; i < n; i++)
			j.lines += buf[i] == '\n';
		j.chunk = NULL;
	}
	if (!err && !j.source_seen) {
		hs_diag_set(diag, 0,
			    "no \"StackSource\" object: not a PerfView stack file");
		err = -EINVAL;
	}
	if (!err) /* a bad saved pattern must not make the file unreadable */
		err = hs_gui_defaults_check(&out->defaults, diag ? diag->file : NULL);
	yajl_free(j.h);
	hs_free(buf);
	hs_free(j.frames);
	return err;
}
