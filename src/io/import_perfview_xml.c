/*
 * import_perfview_xml - PerfView's .perfView.xml with expat, streaming.
 *
 * Both forms PerfView reads are accepted, even mixed in one file:
 *   simple:   <Sample Time="10" Metric="2"> leaf \n caller \n ... root </Sample>
 *   advanced: <Frames><Frame ID="4">name</Frame>...</Frames>
 *             <Stacks><Stack ID="0" CallerID="-1" FrameID="4"/>...</Stacks>
 *             <Samples><Sample ID="0" Time="1.5" StackID="0" Metric="3"/>...
 * plus the saved GUI state (StackWindowGuiState/FilterGuiState, legacy
 * FilterXml and Notes) as the source's default text-box values.
 *
 * The document is never held: frames and stacks are interned as they are
 * read. Advanced-form stacks and samples may name stacks or frames that
 * come later in the file; those are kept by their file ids and resolved
 * when the document ends. Frame id 0 is ROOT (no frame); ids 1-3 are
 * BROKEN, ?!? and OVERHEAD unless the file names them.
 */
#include "io/io.h"
#include "io/gui_state.h"
#include "io/numtext.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/hash.h"
#include "model/frame_name.h"
#include "common/idindex.h"
#include "common/log.h"
#include <errno.h>
#include <inttypes.h>
#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BLOCK (64u << 10)
#define NAME_MAX_BYTES (64u << 10)    /* one frame name */
#define TEXT_MAX_BYTES (1u << 20)     /* notes, patterns */
#define MAX_DEPTH (1u << 20)	      /* frames in one simple-form stack */
#define MAX_TRACKED 64		      /* element nesting we classify */
#define MAX_NESTING 10000	      /* element nesting we accept at all */
#define ALLOC_CAP ((size_t)256 << 20) /* one expat allocation */
#define FRAME_ROOT UINT32_MAX	      /* file frame id 0: no frame */

enum elem {
	E_OTHER, /* transparent: children are still looked at */
	E_SKIP,	 /* ignored with everything inside */
	E_SOURCE,
	E_SAMPLES,
	E_FRAME,
	E_STACK,
	E_SAMPLE,
	E_GUI,
	E_FILTER,
	E_FIELD,
	E_VALUE,
	E_NOTES,
	E_SCALING,
};

/*
 * Index from a file id (int64) to a position in a table. Ids are usually
 * dense (0, 1, 2, ...), so small ids go to a direct array, allowed to grow
 * to twice the number of entries plus a margin (a file cannot make it
 * large with a few huge ids); other ids go to an idindex of positions.
 */
struct id_index {
	uint32_t *dense; /* id -> position + 1; 0 = absent */
	size_t nr_dense;
	struct hs_idindex hashed; /* positions of the other ids */
};

struct raw_stack {
	int64_t frame, caller; /* file ids */
	uint64_t line;
	uint32_t hs; /* stack id in the source, once resolved */
	int resolved;
};

struct deferred {
	size_t sample; /* index in the source */
	int64_t stack; /* file id not yet defined when it was read */
	uint64_t line;
};

struct xml_import {
	XML_Parser p;
	struct hs_stack_source *out;
	struct hs_diag *diag;
	int err;

	unsigned depth;
	unsigned char kind[MAX_TRACKED];
	int source_state; /* 0 not seen, 1 inside, 2 read */

	struct hs_buf text;  /* text of the element being read */
	struct hs_buf value; /* text of a field's <Value> */
	int has_value;
	enum hs_gui_field field;

	/* the <Sample> being read */
	int64_t s_time, s_stack;
	double s_metric, s_count;
	int s_has_stack, s_nonblank;
	uint64_t s_line;
	size_t s_blank;	  /* blank lines not yet known to be inner */
	uint32_t *frames; /* its simple-form frames, leaf first */
	size_t nr_frames, alloc_frames;

	/* the <Frame> being read */
	int64_t f_id;
	char *f_tier;
	char *pseudo[4]; /* names the file gives frames 1-3, interned on use */

	/* file frame id -> frame id in the source */
	int64_t *fkey;
	uint32_t *fval;
	size_t nr_f, alloc_f, alloc_fv;
	struct id_index fidx;

	/* file stack id -> raw stack */
	int64_t *skey;
	struct raw_stack *sval;
	size_t nr_s, alloc_s, alloc_sv;
	struct id_index sidx;
	size_t nr_unresolved;

	struct deferred *defer;
	size_t nr_defer, alloc_defer;
	uint32_t *chain; /* scratch for resolving a chain of stacks */
	size_t alloc_chain;
};

/* expat's allocations: hs_malloc (for fault injection) with a size cap. */
static __thread int alloc_capped;

static void *xml_malloc(size_t n)
{
	if (n > ALLOC_CAP) {
		alloc_capped = 1;
		return NULL;
	}
	return hs_malloc(n);
}

static void *xml_realloc(void *p, size_t n)
{
	if (n > ALLOC_CAP) {
		alloc_capped = 1;
		return NULL;
	}
	return hs_realloc(p, n);
}

static uint64_t cur_line(struct xml_import *x)
{
	return (uint64_t)XML_GetCurrentLineNumber(x->p);
}

/* Record the first error and stop the parser. */
static void fail(struct xml_import *x, int err, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail(struct xml_import *x, int err, uint64_t line, const char *fmt, ...)
{
	char msg[sizeof(x->diag->msg)];
	va_list ap;

	if (x->err)
		return;
	x->err = err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hs_diag_set(x->diag, line, "%s", msg);
	XML_StopParser(x->p, XML_FALSE);
}

static void fail_errno(struct xml_import *x, int err)
{
	if (err == -ENOMEM)
		fail(x, err, cur_line(x), "out of memory");
	else if (err == -E2BIG)
		fail(x, err, cur_line(x), "too many frames or stacks");
	else
		fail(x, err, cur_line(x), "%s", strerror(-err));
}

/* ---- the id index ---- */

#define DENSE_MARGIN 4096

static int key_eq(const void *ctx, uint32_t pos, const void *key)
{
	const int64_t *keys = ctx;

	return keys[pos] == *(const int64_t *)key;
}

static uint64_t key_hash(int64_t key)
{
	return hs_hash_u64((uint64_t)key);
}

static int is_dense(const struct id_index *ix, int64_t key)
{
	return key >= 0 && (uint64_t)key < ix->nr_dense;
}

/* Position of @key, or -1. */
static long idx_get(const struct id_index *ix, const int64_t *keys, int64_t key)
{
	uint32_t pos;

	if (is_dense(ix, key))
		return (long)ix->dense[key] - 1;
	pos = hs_idindex_find(&ix->hashed, key_hash(key), key_eq, keys, &key);
	return pos == HS_IDINDEX_NONE ? -1 : (long)pos;
}

/*
 * Add position @n, whose key is keys[@n] (not yet present). The first @n
 * keys are in the index already.
 */
static int idx_put(struct id_index *ix, const int64_t *keys, size_t n)
{
	int64_t key = keys[n];
	size_t want, i;
	uint32_t *p;
	int moved, err;

	if (n >= UINT32_MAX / 4)
		return -E2BIG;
	if (key >= 0 && (uint64_t)key >= ix->nr_dense &&
	    (uint64_t)key < 2 * (uint64_t)n + DENSE_MARGIN) {
		/* grow the direct array; hashed ids it now covers move over */
		want = 2 * n + DENSE_MARGIN;
		p = hs_realloc(ix->dense, want * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + ix->nr_dense, 0, (want - ix->nr_dense) * sizeof(*p));
		ix->dense = p;
		for (i = 0, moved = 0; ix->hashed.nr && i < n; i++)
			if (keys[i] >= 0 && (uint64_t)keys[i] >= ix->nr_dense &&
			    (uint64_t)keys[i] < want) {
				ix->dense[keys[i]] = (uint32_t)i + 1;
				moved = 1;
			}
		ix->nr_dense = want;
		if (moved) {
			/* rebuild the hash without the moved ids: fewer ids in
			 * the same slots, so the inserts need no memory */
			hs_idindex_clear(&ix->hashed);
			for (i = 0; i < n; i++)
				if (!is_dense(ix, keys[i])) {
					err = hs_idindex_insert(
					    &ix->hashed, key_hash(keys[i]), (uint32_t)i);
					HS_BUG_ON(err);
				}
		}
	}
	if (is_dense(ix, key)) {
		ix->dense[key] = (uint32_t)n + 1;
		return 0;
	}
	return hs_idindex_insert(&ix->hashed, key_hash(key), (uint32_t)n);
}

static void idx_release(struct id_index *ix)
{
	hs_free(ix->dense);
	hs_idindex_release(&ix->hashed);
	memset(ix, 0, sizeof(*ix));
}

/* ---- small parsing helpers ---- */

static const char *attr(const XML_Char **atts, const char *name)
{
	for (; atts[0]; atts += 2)
		if (!strcmp(atts[0], name))
			return atts[1];
	return NULL;
}

static int parse_id(const char *s, int64_t *out)
{
	char *end;
	long long v;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* An owned trimmed copy of @b, or NULL when it is empty (or no memory). */
static char *trimmed_copy(struct xml_import *x, const struct hs_buf *b)
{
	const char *s = b->s;
	size_t len = b->len;
	char *r;

	hs_text_trim(&s, &len);
	if (!len)
		return NULL;
	r = hs_strndup(s, len);
	if (!r)
		fail_errno(x, -ENOMEM);
	return r;
}

static int add_text(struct xml_import *x, struct hs_buf *b, const char *s, size_t len,
		    size_t cap, const char *what)
{
	if (b->len + len > cap) {
		fail(x, -E2BIG, cur_line(x), "%s longer than %zu bytes", what, cap);
		return -E2BIG;
	}
	if (hs_buf_add(b, s, len)) {
		fail_errno(x, -ENOMEM);
		return -ENOMEM;
	}
	return 0;
}

/* ---- frames ---- */

static const char *const pseudo_names[4] = {"ROOT", "BROKEN", "?!?", "OVERHEAD"};

static int define_frame(struct xml_import *x, int64_t id, uint32_t frame)
{
	size_t n = x->nr_f;
	int err;

	if (HS_GROW(x->fkey, n + 1, x->alloc_f) || HS_GROW(x->fval, n + 1, x->alloc_fv))
		return -ENOMEM;
	x->fkey[n] = id;
	err = idx_put(&x->fidx, x->fkey, n);
	if (err)
		return err;
	x->fval[n] = frame;
	x->nr_f++;
	return 0;
}

/*
 * Source frame of file frame @id: 0 and *@frame, 1 when it is not defined
 * (yet), or a negative errno. File id 0 gives FRAME_ROOT.
 */
static int lookup_frame(struct xml_import *x, int64_t id, uint32_t *frame)
{
	const char *name;
	long i;
	int err;

	if (id == 0) {
		*frame = FRAME_ROOT;
		return 0;
	}
	i = idx_get(&x->fidx, x->fkey, id);
	if (i >= 0) {
		*frame = x->fval[i];
		return 0;
	}
	if (id < 1 || id > 3)
		return 1;
	name = x->pseudo[id] ? x->pseudo[id] : pseudo_names[id];
	err = hs_source_intern_frame(x->out, name, strlen(name), frame);
	return err ? err : define_frame(x, id, *frame);
}

static void start_frame(struct xml_import *x, const XML_Char **atts)
{
	const char *id = attr(atts, "ID"), *tier = attr(atts, "OptimizationTier");

	hs_buf_reset(&x->text);
	if (!id || parse_id(id, &x->f_id) || x->f_id < 0) {
		fail(x, -EINVAL, cur_line(x),
		     "<Frame> needs an ID that is a whole number >= 0%s%s%s",
		     id ? ", not '" : "", id ? id : "", id ? "'" : "");
		return;
	}
	hs_free(x->f_tier);
	x->f_tier = NULL;
	if (tier && *tier) {
		x->f_tier = hs_strdup(tier);
		if (!x->f_tier)
			fail_errno(x, -ENOMEM);
	}
}

/*
 * Frame names keep the text exactly; an OptimizationTier goes after '!'.
 * Names of the pseudo-frames 1-3 are interned only if a stack uses them,
 * so that a saved view's unused BROKEN, ?!? and OVERHEAD add nothing.
 */
static void end_frame(struct xml_import *x)
{
	const char *bang = hs_frame_name_bang(x->text.s, x->text.len);
	size_t at = bang ? (size_t)(bang - x->text.s) + 1 : 0;
	struct hs_buf b = HS_BUF_INIT;
	uint32_t frame;
	int err;

	if (x->f_id == 0)
		return; /* ROOT: no frame whatever it is called */
	if (idx_get(&x->fidx, x->fkey, x->f_id) >= 0 ||
	    (x->f_id <= 3 && x->pseudo[x->f_id])) {
		fail(x, -EINVAL, cur_line(x), "Frame ID=%lld is defined twice",
		     (long long)x->f_id);
		return;
	}
	if (hs_buf_add(&b, x->text.s, x->f_tier ? at : x->text.len) ||
	    (x->f_tier && (hs_buf_addf(&b, "[%s]", x->f_tier) ||
			   hs_buf_add(&b, x->text.s + at, x->text.len - at)))) {
		hs_buf_release(&b);
		fail_errno(x, -ENOMEM);
		return;
	}
	if (x->f_id <= 3) {
		if (memchr(b.s, '\0', b.len)) {
			hs_buf_release(&b); /* cannot happen in XML */
			return;
		}
		x->pseudo[x->f_id] = hs_buf_detach(&b);
		if (!x->pseudo[x->f_id])
			fail_errno(x, -ENOMEM);
		return;
	}
	err = hs_source_intern_frame(x->out, b.s, b.len, &frame);
	hs_buf_release(&b);
	if (!err)
		err = define_frame(x, x->f_id, frame);
	if (err)
		fail_errno(x, err);
}

/* ---- stacks ---- */

/*
 * Resolve stack number @i and every unresolved caller above it. With
 * @strict, a missing frame or caller is an error; without, it returns 1
 * and leaves everything unresolved. 0 when resolved.
 */
static int resolve_stack(struct xml_import *x, size_t i, int strict)
{
	size_t n = 0, k;
	uint32_t base = HS_NO_STACK;
	int err;

	for (;;) {
		struct raw_stack *s = &x->sval[i];
		long c;

		if (HS_GROW(x->chain, n + 1, x->alloc_chain))
			return -ENOMEM;
		x->chain[n++] = (uint32_t)i;
		if (n > x->nr_s) {
			fail(x, -EINVAL, s->line,
			     "Stack ID=%lld is its own caller "
			     "(the CallerID chain loops)",
			     (long long)x->skey[i]);
			return -EINVAL;
		}
		if (s->caller == -1)
			break;
		c = idx_get(&x->sidx, x->skey, s->caller);
		if (c < 0) {
			if (!strict)
				return 1;
			fail(x, -EINVAL, s->line,
			     "Stack ID=%lld names CallerID=%lld, "
			     "which is not defined",
			     (long long)x->skey[i], (long long)s->caller);
			return -EINVAL;
		}
		if (x->sval[c].resolved) {
			base = x->sval[c].hs;
			break;
		}
		i = (size_t)c;
	}
	for (k = n; k-- > 0;) {
		struct raw_stack *s = &x->sval[x->chain[k]];
		uint32_t frame;

		err = lookup_frame(x, s->frame, &frame);
		if (err == 1 && !strict)
			return 1;
		if (err == 1) {
			fail(x, -EINVAL, s->line,
			     "Stack ID=%lld names FrameID=%lld, "
			     "which is not defined",
			     (long long)x->skey[x->chain[k]], (long long)s->frame);
			return -EINVAL;
		}
		if (err)
			return err;
		if (frame != FRAME_ROOT) {
			err = hs_source_intern_stack(x->out, frame, base, &base);
			if (err)
				return err;
		}
		s->hs = base;
		s->resolved = 1;
		x->nr_unresolved--;
	}
	return 0;
}

static void start_stack(struct xml_import *x, const XML_Char **atts)
{
	const char *id = attr(atts, "ID"), *caller = attr(atts, "CallerID");
	const char *frame = attr(atts, "FrameID");
	struct raw_stack s = {.caller = -1, .line = cur_line(x)};
	int64_t key;
	size_t n = x->nr_s;
	int err;

	if (!id || parse_id(id, &key) || key < 0) {
		fail(x, -EINVAL, s.line,
		     "<Stack> needs an ID that is a whole number >= 0");
		return;
	}
	if (!frame || parse_id(frame, &s.frame) || s.frame < 0) {
		fail(x, -EINVAL, s.line,
		     "Stack ID=%lld needs a FrameID that is a "
		     "whole number >= 0",
		     (long long)key);
		return;
	}
	if (caller && (parse_id(caller, &s.caller) || s.caller < -1)) {
		fail(x, -EINVAL, s.line, "Stack ID=%lld has a bad CallerID '%s'",
		     (long long)key, caller);
		return;
	}
	if (idx_get(&x->sidx, x->skey, key) >= 0) {
		fail(x, -EINVAL, s.line, "Stack ID=%lld is defined twice",
		     (long long)key);
		return;
	}
	if (HS_GROW(x->skey, n + 1, x->alloc_s) || HS_GROW(x->sval, n + 1, x->alloc_sv)) {
		fail_errno(x, -ENOMEM);
		return;
	}
	x->skey[n] = key;
	x->sval[n] = s;
	err = idx_put(&x->sidx, x->skey, n);
	if (err) {
		fail_errno(x, err);
		return;
	}
	x->nr_s++;
	x->nr_unresolved++;
	/* the usual order (callers first) resolves at once, without a walk */
	if (s.caller != -1) {
		long c = idx_get(&x->sidx, x->skey, s.caller);

		if (c < 0 || !x->sval[c].resolved)
			return;
	}
	err = resolve_stack(x, n, 0);
	if (err < 0)
		fail_errno(x, err);
}

/* ---- samples ---- */

static int parse_number_attr(struct xml_import *x, const XML_Char **atts,
			     const char *name, double *v)
{
	const char *s = attr(atts, name);
	int err;

	if (!s)
		return 0;
	err = hs_numtext_parse_metric(s, strlen(s), v);
	if (err) {
		fail(x, -EINVAL, cur_line(x), "Sample %s '%.64s' is %s", name, s,
		     err == -ERANGE ? "out of range" : "not a number");
		return -EINVAL;
	}
	return 0;
}

static void start_sample(struct xml_import *x, const XML_Char **atts)
{
	const char *t = attr(atts, "Time"), *stack = attr(atts, "StackID");

	x->s_line = cur_line(x);
	x->s_time = 0;
	x->s_metric = 1;
	x->s_count = 1;
	x->s_has_stack = 0;
	x->s_nonblank = 0;
	x->s_blank = 0;
	x->nr_frames = 0;
	hs_buf_reset(&x->text);
	if (t) {
		int err = hs_numtext_parse_ms(t, strlen(t), &x->s_time);

		if (err) {
			fail(x, -EINVAL, x->s_line, "Sample Time '%s' is %s", t,
			     err == -ERANGE ? "out of range" : "not a number");
			return;
		}
	}
	if (parse_number_attr(x, atts, "Metric", &x->s_metric) ||
	    parse_number_attr(x, atts, "Count", &x->s_count))
		return;
	if (stack) {
		if (parse_id(stack, &x->s_stack) || x->s_stack < -1) {
			fail(x, -EINVAL, x->s_line,
			     "Sample StackID '%s' is not a stack id", stack);
			return;
		}
		x->s_has_stack = x->s_stack != -1;
	}
}

static int push_frame(struct xml_import *x, const char *name, size_t len)
{
	int err;

	if (x->nr_frames >= MAX_DEPTH) {
		fail(x, -E2BIG, cur_line(x), "a stack deeper than %u frames", MAX_DEPTH);
		return -E2BIG;
	}
	if (HS_GROW(x->frames, x->nr_frames + 1, x->alloc_frames)) {
		fail_errno(x, -ENOMEM);
		return -ENOMEM;
	}
	err = hs_source_intern_frame(x->out, name, len, &x->frames[x->nr_frames]);
	if (err) {
		fail_errno(x, err);
		return err;
	}
	x->nr_frames++;
	return 0;
}

/*
 * One line of a simple-form stack. As PerfView trims the whole text before
 * splitting it, blank lines count only between two frames.
 */
static int sample_line(struct xml_import *x)
{
	const char *s = x->text.s;
	size_t len = x->text.len;
	int err = 0;

	hs_text_trim(&s, &len);
	if (!len) {
		if (x->s_nonblank)
			x->s_blank++;
	} else {
		for (; x->s_blank && !err; x->s_blank--)
			err = push_frame(x, "", 0);
		if (!err)
			err = push_frame(x, s, len);
		x->s_nonblank = 1;
	}
	hs_buf_reset(&x->text);
	return err;
}

static void sample_text(struct xml_import *x, const char *s, size_t len)
{
	while (len && !x->err) {
		const char *nl = memchr(s, '\n', len);
		size_t n = nl ? (size_t)(nl - s) : len;

		if (add_text(x, &x->text, s, n, NAME_MAX_BYTES, "a frame name"))
			return;
		if (!nl)
			return;
		if (sample_line(x))
			return;
		s += n + 1;
		len -= n + 1;
	}
}

static void end_sample(struct xml_import *x)
{
	uint32_t stack = HS_NO_STACK;
	size_t i;
	int err;

	if (x->text.len && sample_line(x))
		return;
	if (x->nr_frames) {
		/* leaf first in the file, root first for the model */
		for (i = 0; i < x->nr_frames / 2; i++) {
			uint32_t t = x->frames[i];

			x->frames[i] = x->frames[x->nr_frames - 1 - i];
			x->frames[x->nr_frames - 1 - i] = t;
		}
		err = hs_source_intern_path(x->out, x->frames, x->nr_frames, &stack);
		if (err) {
			fail_errno(x, err);
			return;
		}
	} else if (x->s_has_stack) {
		long k = idx_get(&x->sidx, x->skey, x->s_stack);

		if (k < 0 || !x->sval[k].resolved) {
			struct deferred *d;

			if (HS_GROW(x->defer, x->nr_defer + 1, x->alloc_defer)) {
				fail_errno(x, -ENOMEM);
				return;
			}
			d = &x->defer[x->nr_defer++];
			d->sample = x->out->nr_samples;
			d->stack = x->s_stack;
			d->line = x->s_line;
		} else {
			stack = x->sval[k].hs;
		}
	}
	err = hs_source_add_sample(x->out, x->s_time, x->s_metric, x->s_count, stack);
	if (err)
		fail_errno(x, err);
}

/* ---- GUI state ---- */

static void set_default(char **slot, char *v)
{
	hs_free(*slot);
	*slot = v;
}

static void end_field(struct xml_import *x)
{
	char *v = trimmed_copy(x, x->has_value ? &x->value : &x->text);
	double d;

	if (x->err)
		return;
	if (v && hs_gui_field_is_number(x->field) &&
	    hs_numtext_parse_double(v, strlen(v), &d)) {
		hs_free(v); /* PerfView drops a non-numeric number box */
		v = NULL;
	}
	set_default(hs_gui_field_slot(&x->out->defaults, x->field), v);
}

/* ---- expat callbacks ---- */

static enum elem classify(struct xml_import *x, const char *name)
{
	enum elem parent = E_OTHER;
	int f;

	if (x->depth)
		parent =
		    x->depth <= MAX_TRACKED ? (enum elem)x->kind[x->depth - 1] : E_SKIP;
	if (parent == E_SKIP || parent == E_FRAME || parent == E_SAMPLE ||
	    parent == E_STACK || parent == E_VALUE || parent == E_NOTES ||
	    parent == E_SCALING)
		return E_SKIP;
	if (x->source_state == 1) {
		if (!strcmp(name, "Frame"))
			return E_FRAME;
		if (!strcmp(name, "Stack"))
			return E_STACK;
		if (!strcmp(name, "Sample"))
			return E_SAMPLE;
		if (!strcmp(name, "Samples"))
			return E_SAMPLES;
		return E_OTHER;
	}
	if (!strcmp(name, "StackSource"))
		return x->source_state ? E_SKIP : E_SOURCE;
	if (parent == E_FILTER) {
		f = hs_gui_field_find(name, strlen(name));
		if (f < 0)
			return E_SKIP;
		x->field = (enum hs_gui_field)f;
		return E_FIELD;
	}
	if (parent == E_FIELD)
		return strcmp(name, "Value") ? E_SKIP : E_VALUE;
	if (!strcmp(name, "StackWindowGuiState"))
		return E_GUI;
	if (!strcmp(name, "FilterXml") ||
	    (parent == E_GUI && !strcmp(name, "FilterGuiState")))
		return E_FILTER;
	if (!strcmp(name, "Notes") && (parent == E_GUI || x->depth == 1))
		return E_NOTES;
	if (parent == E_GUI)
		return strcmp(name, "ScalingPolicy") ? E_SKIP : E_SCALING;
	return E_OTHER;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
	struct xml_import *x = ud;
	enum elem k;

	if (x->err)
		return;
	if (x->depth >= MAX_NESTING) {
		fail(x, -E2BIG, cur_line(x), "elements nested deeper than %u levels",
		     MAX_NESTING);
		return;
	}
	k = classify(x, name);

	if (x->depth < MAX_TRACKED)
		x->kind[x->depth] = (unsigned char)k;
	x->depth++;
	switch (k) {
	case E_SOURCE: {
		const char *unit = attr(atts, "MetricUnit"); /* heapscope's own */

		x->source_state = 1;
		if (unit && *unit) {
			hs_free(x->out->metric_unit);
			x->out->metric_unit = hs_strdup(unit);
			if (!x->out->metric_unit)
				fail_errno(x, -ENOMEM);
		}
		break;
	}
	case E_SAMPLES: {
		const char *c = attr(atts, "Count");
		int64_t n;

		/* a hint only: never trust it with much memory; without the
		 * room, the samples grow one at a time */
		if (c && !parse_id(c, &n) && n > 0 && n < (1 << 22) &&
		    hs_source_reserve_samples(x->out, (size_t)n))
			pr_debug("no room for %" PRId64 " samples at once", n);
		break;
	}
	case E_FRAME:
		start_frame(x, atts);
		break;
	case E_STACK:
		start_stack(x, atts);
		break;
	case E_SAMPLE:
		start_sample(x, atts);
		break;
	case E_FIELD:
		hs_buf_reset(&x->text);
		hs_buf_reset(&x->value);
		x->has_value = 0;
		break;
	case E_VALUE:
		hs_buf_reset(&x->value);
		break;
	case E_NOTES:
	case E_SCALING:
		hs_buf_reset(&x->text);
		break;
	default:
		break;
	}
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
	struct xml_import *x = ud;
	enum elem k;
	char *v;

	(void)name;
	if (x->err)
		return;
	x->depth--;
	k = x->depth < MAX_TRACKED ? (enum elem)x->kind[x->depth] : E_SKIP;
	switch (k) {
	case E_SOURCE:
		x->source_state = 2;
		break;
	case E_FRAME:
		end_frame(x);
		break;
	case E_SAMPLE:
		end_sample(x);
		break;
	case E_FIELD:
		end_field(x);
		break;
	case E_VALUE:
		x->has_value = 1;
		break;
	case E_NOTES:
		v = trimmed_copy(x, &x->text);
		if (!x->err)
			set_default(&x->out->defaults.notes, v);
		break;
	case E_SCALING:
		v = trimmed_copy(x, &x->text);
		x->out->kind =
		    v && !strcasecmp(v, "TimeMetric") ? HS_METRIC_TIME : HS_METRIC_PLAIN;
		hs_free(v);
		break;
	default:
		break;
	}
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
	struct xml_import *x = ud;
	enum elem k;

	if (x->err || !x->depth || x->depth > MAX_TRACKED)
		return;
	k = (enum elem)x->kind[x->depth - 1];
	switch (k) {
	case E_FRAME:
		add_text(x, &x->text, s, (size_t)len, NAME_MAX_BYTES, "a frame name");
		break;
	case E_SAMPLE:
		sample_text(x, s, (size_t)len);
		break;
	case E_FIELD:
	case E_NOTES:
	case E_SCALING:
		add_text(x, &x->text, s, (size_t)len, TEXT_MAX_BYTES, "a text value");
		break;
	case E_VALUE:
		add_text(x, &x->value, s, (size_t)len, TEXT_MAX_BYTES, "a text value");
		break;
	default:
		break;
	}
}

/* ---- the end of the document ---- */

static int finish(struct xml_import *x)
{
	size_t i;
	int err;

	if (!x->source_state) {
		hs_diag_set(x->diag, 0,
			    "no <StackSource> element: not a PerfView stack file");
		return -EINVAL;
	}
	for (i = 0; i < x->nr_s && x->nr_unresolved; i++) {
		if (x->sval[i].resolved)
			continue;
		err = resolve_stack(x, i, 1);
		if (err && !x->err)
			hs_diag_set(x->diag, x->sval[i].line, "%s",
				    err == -ENOMEM ? "out of memory"
						   : "too many frames or stacks");
		if (err)
			return x->err ? x->err : err;
	}
	for (i = 0; i < x->nr_defer; i++) {
		struct deferred *d = &x->defer[i];
		long k = idx_get(&x->sidx, x->skey, d->stack);

		if (k < 0) {
			hs_diag_set(x->diag, d->line,
				    "Sample names StackID=%lld, "
				    "which is not defined",
				    (long long)d->stack);
			return -EINVAL;
		}
		x->out->stack[d->sample] = x->sval[k].hs;
	}
	return 0;
}

static void release(struct xml_import *x)
{
	if (x->p)
		XML_ParserFree(x->p);
	hs_buf_release(&x->text);
	hs_buf_release(&x->value);
	hs_free(x->frames);
	hs_free(x->f_tier);
	hs_free(x->pseudo[1]);
	hs_free(x->pseudo[2]);
	hs_free(x->pseudo[3]);
	hs_free(x->fkey);
	hs_free(x->fval);
	idx_release(&x->fidx);
	hs_free(x->skey);
	hs_free(x->sval);
	idx_release(&x->sidx);
	hs_free(x->defer);
	hs_free(x->chain);
}

int hs_import_perfview_xml(FILE *f, struct hs_stack_source *out, struct hs_diag *diag)
{
	static const XML_Memory_Handling_Suite mem = {
	    xml_malloc,
	    xml_realloc,
	    hs_free,
	};
	struct xml_import x;
	int err = 0;

	memset(&x, 0, sizeof(x));
	hs_buf_init(&x.text);
	hs_buf_init(&x.value);
	x.out = out;
	x.diag = diag;
	alloc_capped = 0;
	x.p = XML_ParserCreate_MM(NULL, &mem, NULL);
	if (!x.p) {
		hs_diag_set(diag, 0, "out of memory");
		return -ENOMEM;
	}
	XML_SetUserData(x.p, &x);
	XML_SetElementHandler(x.p, on_start, on_end);
	XML_SetCharacterDataHandler(x.p, on_text);

	for (;;) {
		void *buf = XML_GetBuffer(x.p, BLOCK);
		size_t n;

		if (!buf) {
			hs_diag_set(diag, (uint64_t)XML_GetCurrentLineNumber(x.p),
				    "out of memory");
			err = -ENOMEM;
			break;
		}
		n = fread(buf, 1, BLOCK, f);
		if (!n && ferror(f)) {
			hs_diag_set(diag, (uint64_t)XML_GetCurrentLineNumber(x.p),
				    "read error");
			err = -EIO;
			break;
		}
		if (XML_ParseBuffer(x.p, (int)n, n == 0) != XML_STATUS_OK) {
			enum XML_Error code = XML_GetErrorCode(x.p);

			if (x.err) {
				err = x.err;
			} else if (code == XML_ERROR_NO_MEMORY) {
				err = alloc_capped ? -E2BIG : -ENOMEM;
				hs_diag_set(diag, (uint64_t)XML_GetCurrentLineNumber(x.p),
					    alloc_capped ? "an element too large to parse"
							 : "out of memory");
			} else if (n == 0 && (code == XML_ERROR_NO_ELEMENTS ||
					      code == XML_ERROR_UNCLOSED_TOKEN ||
					      code == XML_ERROR_PARTIAL_CHAR ||
					      code == XML_ERROR_UNCLOSED_CDATA_SECTION)) {
				err = -EINVAL;
				hs_diag_set(
				    diag, (uint64_t)XML_GetCurrentLineNumber(x.p),
				    "XML error: the file ends before %s (truncated?)",
				    x.depth ? "its elements are closed" : "any element");
			} else {
				err = -EINVAL;
				hs_diag_set(diag, (uint64_t)XML_GetCurrentLineNumber(x.p),
					    "XML error: %s", XML_ErrorString(code));
			}
			break;
		}
		if (x.err) {
			err = x.err;
			break;
		}
		if (!n)
			break;
	}
	if (!err)
		err = finish(&x);
	if (!err) /* a bad saved pattern must not make the file unreadable */
		err = hs_gui_defaults_check(&out->defaults, diag ? diag->file : NULL);
	release(&x);
	return err;
}
