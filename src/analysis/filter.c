/*
 * filter - per-stack filter pipeline (see filter.h).
 *
 * Input stacks are processed in id order; a caller's id is always smaller
 * than its callee's, so each stack extends the already-processed result of
 * its caller. What a frame means (group, exclusion, folding, IncPats bits)
 * depends on its name only and is computed the first time a stack uses it.
 * Plain groups share one answer per group name.
 *
 * Every processed stack carries, besides its output stack, the identity
 * of its leaf node (for the collapse of identical neighbours), the group of
 * that node (for entry-group continuity) and the IncPats entries matched
 * so far; a folded or collapsed stack copies all of them from its caller.
 *
 * Output stacks are numbered as interning them in input order would
 * number them, but most are appended without a hash lookup: a first pass
 * says which input stacks vanish into their caller (folded, collapsed,
 * inside an entry group) and which are dropped; the second gives the
 * others their output stacks. An input stack (frame, caller) can only
 * meet an output stack made before it when its output frame is shared
 * by several input frames or its output caller holds more than one
 * input stack (something vanished into it, or another stack was merged
 * into it); those output stacks, and every output stack below them, are
 * "merging": the stacks made under them are looked up. The first stack
 * made so below an output stack is kept beside it (o_first) and read
 * there; the later ones go to an index of their own. A stack under an
 * output stack that has no first one yet is new without a probe: under
 * GroupPats by module at 4M stacks that is 95% of the lookups (most
 * stacks were made by the stack just before, their caller), where each
 * lookup was a probe of a 128 MiB index, a cache miss waited for before
 * the next stack. Every other stack is new, and is appended. On a
 * profile whose only change is the collapse of a few `[unknown]`
 * frames, almost nothing is looked up. A source with locations is the
 * exception: stacks that differ only in their leaf's line (three calls
 * to malloc from one function) are distinct input stacks with the same
 * frame and caller, which the views show as one node; there every
 * stack is looked up.
 */
#include "analysis/filter.h"
#include "analysis/group.h"
#include "analysis/pattern.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/hash.h"
#include "common/idindex.h"
#include "model/frame_name.h"
#include <errno.h>
#include <math.h>
#include <string.h>

#define WINDOW_SLACK_NS 600 /* PerfView's 0.0006 ms */
#define NO_GROUP UINT32_MAX
#define GROUP_IDENT(g) (((uint64_t)1 << 32) | (g))
#define MAX_GROUP_BYTES ((size_t)1 << 30)

enum frame_kind { FK_UNSEEN, FK_NORMAL, FK_DISCARD, FK_FOLD };

/* What a frame (or a plain group) means, from its name alone. */
struct frame_info {
	uint8_t kind;	/* enum frame_kind */
	uint8_t entry;	/* member of an entry group */
	uint32_t group; /* group index or NO_GROUP */
	uint32_t out;	/* output frame id */
};

struct apply {
	const struct hs_stack_source *in;
	struct hs_filtered *f;
	struct hs_diag *diag;
	struct hs_groups groups;
	struct hs_patlist exc, fold, inc;
	size_t words; /* IncPats bitset words (0 without IncPats) */

	struct frame_info *fi;	      /* input frame -> info */
	uint64_t *fi_inc;	      /* input frame -> IncPats bits */
	struct hs_strtab group_names; /* group name -> group index */
	struct frame_info *gi;	      /* plain group -> shared info */
	uint64_t *gi_inc;
	size_t alloc_gi, alloc_gi_inc;
	struct hs_buf name, target;

	uint64_t *s_ident; /* input stack -> identity of its processed leaf */
	uint32_t *s_group; /* input stack -> group of its processed leaf */
	uint64_t *s_inc;   /* input stack -> IncPats bits matched so far */

	/* the second pass (number_stacks()) */
	uint32_t *s_up;		       /* input stack -> itself, or the nearest
					* caller that did not vanish */
	uint8_t *s_vanished_into;      /* input stack -> something vanished into it */
	uint8_t *o_merging;	       /* output stack -> stacks made below it are
					* looked up (in @o_first, then in
					* @merge_index) */
	uint32_t *o_first;	       /* output stack -> the first stack looked up
					* and made below it (not in @merge_index),
					* or HS_NO_STACK */
	uint8_t *frame_shared;	       /* output frame -> several input frames */
	struct hs_idindex merge_index; /* of merging output stacks */
};

struct out_key {
	uint32_t frame, caller;
};

void hs_filtered_release(struct hs_filtered *f)
{
	if (f->borrowed) {
		memset(f, 0, sizeof(*f));
		return;
	}
	hs_source_release(&f->out);
	hs_free(f->origin);
	hs_strtab_release(&f->modules);
	hs_free(f->map);
	hs_free(f->folded);
	hs_free(f->frame_out);
	memset(f, 0, sizeof(*f));
}

static int intern_out(struct apply *a, const char *name, size_t len, uint32_t *id)
{
	return hs_source_intern_frame(&a->f->out, name, len, id);
}

#define MIXED_MODULE (UINT32_MAX - 1) /* while building: several modules */
#define ORIGIN_UNSEEN 0xff

/*
 * Output frame @out stands for a frame of kind @kind shown as @shown (its
 * short name): record its module, or that a group has several.
 */
static int note_origin(struct apply *a, uint32_t out, enum hs_origin_kind kind,
		       const char *shown, size_t entry_at)
{
	struct hs_filtered *f = a->f;
	struct hs_origin *o;
	const char *mod;
	size_t mlen, old = f->alloc_origin;
	uint32_t m = HS_NO_MODULE;
	int err;

	if (out >= f->alloc_origin) {
		if (HS_GROW(f->origin, (size_t)out + 1, f->alloc_origin))
			return -ENOMEM;
		memset(f->origin + old, ORIGIN_UNSEEN,
		       (f->alloc_origin - old) * sizeof(*f->origin));
	}
	mod = hs_frame_name_short_module(shown, strlen(shown), &mlen);
	if (mod) {
		err = hs_strtab_intern(&f->modules, mod, mlen, &m);
		if (err)
			return err;
	}
	o = &f->origin[out];
	if (o->kind == ORIGIN_UNSEEN) {
		o->kind = (uint8_t)kind;
		o->module = m;
		o->entry_at = (uint32_t)entry_at;
	} else if (o->module != m) {
		o->module = MIXED_MODULE;
	}
	return 0;
}

enum hs_origin_kind hs_filtered_origin(const struct hs_filtered *f, uint32_t frame,
				       const char **module, size_t *entry_at)
{
	const struct hs_origin *o = frame < f->alloc_origin ? &f->origin[frame] : NULL;

	*module = NULL;
	*entry_at = 0;
	if (!o || o->kind == ORIGIN_UNSEEN)
		return HS_ORIGIN_FRAME;
	if (o->module < MIXED_MODULE)
		*module = hs_strtab_get(&f->modules, o->module);
	if (o->kind == HS_ORIGIN_ENTRY)
		*entry_at = o->entry_at;
	return (enum hs_origin_kind)o->kind;
}

/* Exclusion, folding and IncPats of the grouped name in a->target. */
static int classify(struct apply *a, struct frame_info *info, uint64_t *inc)
{
	const char *t = a->target.s;
	size_t which;
	int rc;

	rc = hs_patlist_match_any(&a->exc, t, a->target.len, &which);
	if (rc < 0)
		goto fail_exc;
	if (rc) {
		info->kind = FK_DISCARD;
		return 0;
	}
	rc = hs_patlist_match_any(&a->fold, t, a->target.len, &which);
	if (rc < 0)
		goto fail_fold;
	if (rc) {
		info->kind = FK_FOLD;
		return 0;
	}
	info->kind = FK_NORMAL;
	if (a->words) {
		memset(inc, 0, a->words * sizeof(*inc));
		rc = hs_patlist_match_set(&a->inc, t, a->target.len, inc, &which);
		if (rc < 0)
			goto fail_inc;
	}
	return 0;
fail_exc:
	hs_pattern_match_error(a->diag, "ExcPats", a->exc.pat[which], rc, t);
	return rc == -ENOMEM ? rc : -EINVAL;
fail_fold:
	hs_pattern_match_error(a->diag, "FoldPats", a->fold.pat[which], rc, t);
	return rc == -ENOMEM ? rc : -EINVAL;
fail_inc:
	hs_pattern_match_error(a->diag, "IncPats", a->inc.pat[which], rc, t);
	return rc == -ENOMEM ? rc : -EINVAL;
}

static int set_target(struct apply *a, const char *s, size_t len)
{
	hs_buf_reset(&a->target);
	return hs_buf_add(&a->target, s, len);
}

/* The info of plain group @g (named a->name), computed once per group. */
static int plain_group(struct apply *a, uint32_t g, struct frame_info *info,
		       uint64_t *inc)
{
	size_t w = a->words;

	if (g >= a->alloc_gi) {
		size_t old = a->alloc_gi;

		if (HS_GROW(a->gi, (size_t)g + 1, a->alloc_gi))
			return -ENOMEM;
		memset(a->gi + old, 0, (a->alloc_gi - old) * sizeof(*a->gi));
		if (w && HS_GROW(a->gi_inc, a->alloc_gi * w, a->alloc_gi_inc))
			return -ENOMEM;
	}
	if (a->gi[g].kind == FK_UNSEEN) {
		struct frame_info gi = {.group = g};
		int err = set_target(a, a->name.s, a->name.len);

		if (!err)
			err = classify(a, &gi, w ? a->gi_inc + (size_t)g * w : NULL);
		if (!err && gi.kind == FK_NORMAL)
			err = intern_out(a, a->name.s, a->name.len, &gi.out);
		if (err)
			return err;
		a->gi[g] = gi;
	}
	*info = a->gi[g];
	if (w)
		memcpy(inc, a->gi_inc + (size_t)g * w, w * sizeof(*inc));
	return 0;
}

static int frame_info(struct apply *a, uint32_t frame)
{
	const char *full = hs_source_frame_name(a->in, frame);
	const char *shown = hs_frame_display(full);
	struct frame_info info = {.group = NO_GROUP};
	uint64_t *inc = a->words ? a->fi_inc + (size_t)frame * a->words : NULL;
	uint32_t g;
	int kind, err;

	kind = hs_groups_match(&a->groups, full, &a->name, a->diag);
	if (kind < 0)
		return kind;
	if (kind == HS_GROUP_NONE) {
		err = set_target(a, full, strlen(full));
		if (!err)
			err = classify(a, &info, inc);
		if (!err && info.kind != FK_DISCARD)
			err = intern_out(a, shown, strlen(shown), &info.out);
		if (!err && info.kind != FK_DISCARD)
			err = note_origin(a, info.out, HS_ORIGIN_FRAME, shown, 0);
		if (err)
			return err;
		a->fi[frame] = info;
		return 0;
	}
	err = hs_strtab_intern(&a->group_names, a->name.s, a->name.len, &g);
	if (err)
		return err;
	if (kind == HS_GROUP_PLAIN) {
		err = plain_group(a, g, &info, inc);
		if (!err && info.kind == FK_NORMAL)
			err = note_origin(a, info.out, HS_ORIGIN_GROUP, shown, 0);
	} else {
		/* entry group: "GROUP <<short name of this frame>>" */
		info.entry = 1;
		info.group = g;
		err = set_target(a, a->name.s, a->name.len);
		if (!err)
			err = hs_buf_addf(&a->target, " <<%s>>", shown);
		if (!err)
			err = classify(a, &info, inc);
		if (!err && info.kind == FK_NORMAL)
			err = intern_out(a, a->target.s, a->target.len, &info.out);
		if (!err && info.kind == FK_NORMAL)
			err = note_origin(a, info.out, HS_ORIGIN_ENTRY, shown,
					  a->name.len + 3);
	}
	if (err)
		return err;
	if (info.kind == FK_FOLD) {
		/* PerfView's shared "fold" answer: no group, no IncPats, and if
		 * it has no caller to fold into, its own ungrouped name */
		info.group = NO_GROUP;
		info.entry = 0;
		err = intern_out(a, shown, strlen(shown), &info.out);
		if (!err)
			err = note_origin(a, info.out, HS_ORIGIN_FRAME, shown, 0);
		if (err)
			return err;
	}
	a->fi[frame] = info;
	return 0;
}

static int all_set(const uint64_t *bits, size_t nr)
{
	size_t i;

	for (i = 0; i < nr / 64; i++)
		if (bits[i] != UINT64_MAX)
			return 0;
	return nr % 64 == 0 || (bits[nr / 64] | (UINT64_MAX << (nr % 64))) == UINT64_MAX;
}

static int out_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct hs_stack_source *out = ctx;
	const struct out_key *k = key;

	return out->stack_frame[id] == k->frame && out->stack_caller[id] == k->caller;
}

/* Which output frames stand for more than one input frame. */
static int mark_shared_frames(struct apply *a)
{
	size_t nf = hs_source_nr_frames(a->in), no = hs_source_nr_frames(&a->f->out);
	uint8_t *seen;
	size_t i;

	a->frame_shared = hs_calloc(no + 1, 1);
	seen = hs_calloc(no + 1, 1);
	if (!a->frame_shared || !seen) {
		hs_free(seen);
		return -ENOMEM;
	}
	for (i = 0; i < nf; i++) {
		const struct frame_info *info = &a->fi[i];

		if (info->kind == FK_UNSEEN || info->kind == FK_DISCARD)
			continue;
		if (seen[info->out])
			a->frame_shared[info->out] = 1;
		seen[info->out] = 1;
	}
	hs_free(seen);
	return 0;
}

/*
 * The second pass: the output stack of every input stack that neither
 * was dropped nor vanished, in input order, looked up only where it
 * may merge with an earlier one (see the top of this file); a vanished
 * stack's is its caller's.
 */
static int number_stacks(struct apply *a)
{
	const struct hs_stack_source *in = a->in;
	struct hs_filtered *f = a->f;
	size_t s;
	int locs = in->stack_loc != NULL; /* same (frame, caller), other lines */
	int err = mark_shared_frames(a);

	if (err)
		return err;
	a->o_merging = hs_malloc(in->nr_stacks + 1);
	a->o_first = hs_malloc((in->nr_stacks + 1) * sizeof(*a->o_first));
	if (!a->o_merging || !a->o_first)
		return -ENOMEM;
	hs_hint_huge(a->o_merging, in->nr_stacks + 1);
	hs_hint_huge(a->o_first, (in->nr_stacks + 1) * sizeof(*a->o_first));
	for (s = 0; s < in->nr_stacks; s++) {
		uint32_t caller = in->stack_caller[s];
		struct out_key k;
		uint64_t h;
		size_t pos;
		uint32_t id;

		if (f->map[s] == HS_DROPPED)
			continue;
		if (a->s_up[s] != s) {
			f->map[s] = f->map[caller];
			continue;
		}
		k.frame = a->fi[in->stack_frame[s]].out;
		k.caller = caller == HS_NO_STACK ? HS_NO_STACK : f->map[caller];
		if (!locs && !a->frame_shared[k.frame] &&
		    (k.caller == HS_NO_STACK || !a->o_merging[k.caller])) {
			/* no earlier stack can have this output: a new one */
			err = hs_source_append_stack(&f->out, k.frame, k.caller, &id);
			if (err)
				return err;
			a->o_merging[id] = a->s_vanished_into[s];
			a->o_first[id] = HS_NO_STACK;
			f->map[s] = id;
			continue;
		}
		if (k.caller != HS_NO_STACK) {
			uint32_t first = a->o_first[k.caller];

			if (first == HS_NO_STACK) {
				/*
				 * Nothing looked up below this caller yet
				 * (most often made by the stack just before):
				 * a new stack, known without a probe.
				 */
				err = hs_source_append_stack(&f->out, k.frame, k.caller,
							     &id);
				if (err)
					return err;
				a->o_merging[id] = 1;
				a->o_first[id] = HS_NO_STACK;
				a->o_first[k.caller] = id;
				f->map[s] = id;
				continue;
			}
			if (f->out.stack_frame[first] == k.frame) {
				f->map[s] = first;
				continue;
			}
		}
		if (hs_idindex_reserve(&a->merge_index, a->merge_index.nr + 1))
			return -ENOMEM;
		h = hs_hash_pair(k.frame, k.caller);
		pos = hs_idindex_slot(&a->merge_index, h, out_eq, &f->out, &k);
		id = hs_idindex_at(&a->merge_index, pos);
		if (id == HS_IDINDEX_NONE) {
			err = hs_source_append_stack(&f->out, k.frame, k.caller, &id);
			if (err)
				return err;
			hs_idindex_set(&a->merge_index, pos, h, id);
			a->o_merging[id] = 1;
			a->o_first[id] = HS_NO_STACK;
		}
		f->map[s] = id;
	}
	return 0;
}

static int process_stacks(struct apply *a)
{
	const struct hs_stack_source *in = a->in;
	struct hs_filtered *f = a->f;
	size_t w = a->words, s;
	int err;

	for (s = 0; s < in->nr_stacks; s++) {
		uint32_t caller = in->stack_caller[s];
		uint32_t frame = in->stack_frame[s];
		uint64_t *inc = w ? a->s_inc + s * w : NULL;
		const struct frame_info *info;
		uint64_t ident;
		size_t i;

		if (caller != HS_NO_STACK && f->map[caller] == HS_DROPPED) {
			f->map[s] = HS_DROPPED; /* below an excluded frame */
			continue;
		}
		if (a->fi[frame].kind == FK_UNSEEN) {
			err = frame_info(a, frame);
			if (err)
				return err;
		}
		info = &a->fi[frame];
		if (info->kind == FK_DISCARD) {
			f->map[s] = HS_DROPPED;
			continue;
		}
		ident = frame;
		if (info->group != NO_GROUP) {
			if (!info->entry)
				ident = GROUP_IDENT(info->group);
			else if (caller != HS_NO_STACK &&
				 a->s_group[caller] == info->group)
				ident = a->s_ident[caller]; /* inside the group */
		}
		if (caller != HS_NO_STACK &&
		    (info->kind == FK_FOLD || ident == a->s_ident[caller])) {
			/* this frame vanishes: the stack is its caller's */
			f->map[s] = 0; /* its caller's, set by number_stacks() */
			a->s_up[s] = a->s_up[caller];
			a->s_vanished_into[a->s_up[caller]] = 1;
			f->folded[s] = f->folded[caller] | (info->kind == FK_FOLD);
			a->s_ident[s] = a->s_ident[caller];
			a->s_group[s] = a->s_group[caller];
			if (w)
				memcpy(inc, a->s_inc + (size_t)caller * w,
				       w * sizeof(*inc));
			continue;
		}
		a->s_ident[s] = ident;
		a->s_group[s] = info->group;
		a->s_up[s] = (uint32_t)s;
		f->map[s] = 0; /* made by number_stacks() */
		if (w) {
			const uint64_t *mine = a->fi_inc + (size_t)frame * w;

			for (i = 0; i < w; i++)
				inc[i] = info->kind == FK_NORMAL ? mine[i] : 0;
			if (caller != HS_NO_STACK)
				for (i = 0; i < w; i++)
					inc[i] |= a->s_inc[(size_t)caller * w + i];
		}
	}
	err = number_stacks(a);
	if (err || !w)
		return err;
	/* IncPats: drop the stacks that did not match every entry */
	for (s = 0; s < in->nr_stacks; s++)
		if (f->map[s] != HS_DROPPED && !all_set(a->s_inc + s * w, a->inc.nr))
			f->map[s] = HS_DROPPED;
	return 0;
}

/*
 * The identity result (hs_filtered.identity): visit the stacks in the
 * order process_stacks() does, naming their frames as it would (so the
 * output frames get the same ids), and keep the input stacks when each
 * frame is a plain one (not grouped, excluded or folded) with a name of
 * its own and no stack repeats its caller's frame. Returns 1 when it
 * holds, 0 when not (the frames named so far stay, as process_stacks()
 * would have named them), or an error.
 */
static int try_identity(struct apply *a)
{
	const struct hs_stack_source *in = a->in;
	struct hs_filtered *f = a->f;
	size_t nf = hs_source_nr_frames(in), s;
	int err;

	if (in->stack_loc || a->exc.nr || a->fold.nr || a->inc.nr)
		return 0;
	for (s = 0; s < in->nr_stacks; s++) {
		uint32_t frame = in->stack_frame[s], caller = in->stack_caller[s];
		const struct frame_info *info = &a->fi[frame];

		if (info->kind == FK_UNSEEN) {
			size_t before = hs_source_nr_frames(&f->out);

			err = frame_info(a, frame);
			if (err)
				return err;
			if (hs_source_nr_frames(&f->out) != before + 1)
				return 0; /* a name shared with another frame */
		}
		if (info->kind != FK_NORMAL || info->group != NO_GROUP)
			return 0;
		if (caller != HS_NO_STACK && in->stack_frame[caller] == frame)
			return 0; /* collapses into its caller */
	}
	f->frame_out = hs_malloc((nf + 1) * sizeof(*f->frame_out));
	if (!f->frame_out)
		return -ENOMEM;
	for (s = 0; s < nf; s++)
		f->frame_out[s] = a->fi[s].kind == FK_UNSEEN ? HS_NO_FRAME : a->fi[s].out;
	f->identity = 1;
	return 1;
}

static int parse_all(struct apply *a, const struct hs_filter_params *p)
{
	int err;

	err = hs_groups_parse(&a->groups, p->group, a->diag);
	if (!err)
		err = hs_patlist_parse(&a->exc, p->exc, "ExcPats", a->diag);
	if (!err)
		err = hs_patlist_parse(&a->fold, p->fold, "FoldPats", a->diag);
	if (!err)
		err = hs_patlist_parse(&a->inc, p->inc, "IncPats", a->diag);
	return err;
}

static int alloc_state(struct apply *a)
{
	size_t nf = hs_source_nr_frames(a->in), ns = a->in->nr_stacks;
	size_t w = a->words;
	struct hs_filtered *f = a->f;

	f->map = hs_malloc((ns + 1) * sizeof(*f->map));
	f->folded = hs_calloc(ns + 1, 1);
	if (!a->fi)
		a->fi = hs_calloc(nf + 1, sizeof(*a->fi));
	a->s_ident = hs_malloc((ns + 1) * sizeof(*a->s_ident));
	a->s_group = hs_malloc((ns + 1) * sizeof(*a->s_group));
	a->s_up = hs_malloc((ns + 1) * sizeof(*a->s_up));
	a->s_vanished_into = hs_calloc(ns + 1, 1);
	if (!f->map || !f->folded || !a->fi || !a->s_ident || !a->s_group || !a->s_up ||
	    !a->s_vanished_into)
		return -ENOMEM;
	hs_hint_huge(f->map, (ns + 1) * sizeof(*f->map));
	hs_hint_huge(f->folded, ns + 1);
	hs_hint_huge(a->s_ident, (ns + 1) * sizeof(*a->s_ident));
	hs_hint_huge(a->s_group, (ns + 1) * sizeof(*a->s_group));
	hs_hint_huge(a->s_up, (ns + 1) * sizeof(*a->s_up));
	hs_hint_huge(a->s_vanished_into, ns + 1);
	if (w) {
		if (nf > SIZE_MAX / 8 / w || ns > SIZE_MAX / 8 / w)
			return -ENOMEM;
		a->fi_inc = hs_malloc((nf + 1) * w * sizeof(*a->fi_inc));
		a->s_inc = hs_malloc((ns + 1) * w * sizeof(*a->s_inc));
		if (!a->fi_inc || !a->s_inc)
			return -ENOMEM;
	}
	return 0;
}

/* @ms as ns, clamped well inside int64_t */
static int64_t ms_to_ns(double ms)
{
	double ns = ms * 1e6;

	if (ns > 4e18)
		return (int64_t)4e18;
	if (ns < -4e18)
		return -(int64_t)4e18;
	return (int64_t)llround(ns);
}

static void set_window(struct hs_filtered *f, const struct hs_filter_params *p)
{
	int lo = isfinite(p->start_ms), hi = isfinite(p->end_ms);

	if (!lo && !hi)
		return;
	f->has_window = 1;
	f->start_ns = lo ? ms_to_ns(p->start_ms) - WINDOW_SLACK_NS : INT64_MIN;
	f->end_ns = hi ? ms_to_ns(p->end_ms) + WINDOW_SLACK_NS : INT64_MAX;
}

void hs_filtered_borrow(struct hs_filtered *f, const struct hs_filtered *from,
			const struct hs_filter_params *p)
{
	*f = *from;
	f->borrowed = 1;
	f->has_window = 0;
	f->start_ns = f->end_ns = 0;
	set_window(f, p);
}

static void apply_release(struct apply *a)
{
	hs_groups_release(&a->groups);
	hs_patlist_release(&a->exc);
	hs_patlist_release(&a->fold);
	hs_patlist_release(&a->inc);
	hs_free(a->fi);
	hs_free(a->fi_inc);
	hs_strtab_release(&a->group_names);
	hs_free(a->gi);
	hs_free(a->gi_inc);
	hs_buf_release(&a->name);
	hs_buf_release(&a->target);
	hs_free(a->s_ident);
	hs_free(a->s_group);
	hs_free(a->s_inc);
	hs_free(a->s_up);
	hs_free(a->s_vanished_into);
	hs_free(a->o_merging);
	hs_free(a->o_first);
	hs_free(a->frame_shared);
	hs_idindex_release(&a->merge_index);
}

/*
 * The output's invariants: every input stack mapped into it. Those of
 * the output model itself (hs_source_check()) hold by construction: each
 * of its stacks went through hs_source_append_stack(), which refuses a
 * frame or a caller not there yet and sets the depth from the caller's,
 * and it has no samples; checking them again was a pass over millions of
 * stacks, 1-2% of a pattern Update (bench/README.md, updpool); the unit
 * tests check them (test_filter).
 */
static void check_output(const struct hs_filtered *f)
{
	size_t i;

	HS_BUG_ON(f->out.nr_samples);
	for (i = 0; !f->identity && i < f->in->nr_stacks; i++)
		HS_BUG_ON(f->map[i] != HS_DROPPED && f->map[i] != HS_NO_STACK &&
			  f->map[i] >= f->out.nr_stacks);
}

int hs_filter_apply(const struct hs_stack_source *in, const struct hs_filter_params *p,
		    struct hs_filtered *f, struct hs_diag *diag)
{
	struct apply a = {
	    .in = in,
	    .f = f,
	    .diag = diag,
	    .groups = HS_GROUPS_INIT,
	    .merge_index = HS_IDINDEX_INIT,
	    .name = HS_BUF_INIT,
	    .target = HS_BUF_INIT,
	};
	int err;

	memset(f, 0, sizeof(*f));
	f->in = in;
	hs_source_init(&f->out);
	f->out.kind = in->kind;
	f->out.untimed = in->untimed;
	hs_strtab_init(&a.group_names, MAX_GROUP_BYTES);
	hs_strtab_init(&f->modules, MAX_GROUP_BYTES);
	err = parse_all(&a, p);
	if (err)
		goto out;
	a.words = (a.inc.nr + 63) / 64;
	if (p->borrow_stacks) {
		a.fi = hs_calloc(hs_source_nr_frames(in) + 1, sizeof(*a.fi));
		err = a.fi ? try_identity(&a) : -ENOMEM;
		if (err < 0)
			goto out;
		err = 0;
	}
	if (!f->identity) {
		err = alloc_state(&a);
		if (!err)
			err = process_stacks(&a);
		if (err)
			goto out;
	}
	f->root_map = a.inc.nr ? HS_DROPPED : HS_NO_STACK;
	f->nr_groups = hs_strtab_count(&a.group_names);
	set_window(f, p);
	check_output(f);
out:
	apply_release(&a);
	if (err)
		hs_filtered_release(f);
	return err;
}

int hs_filtered_sample(const struct hs_filtered *f, size_t i, uint32_t *stack,
		       double *metric, double *count)
{
	const struct hs_stack_source *in = f->in;
	uint32_t s = in->stack[i];
	double m = in->metric[i];

	*stack = s == HS_NO_STACK ? f->root_map : f->identity ? s : f->map[s];
	if (*stack == HS_DROPPED)
		return 0;
	if (f->has_window) {
		int64_t t = in->time[i];

		if (t > f->end_ns)
			return 0;
		if (in->kind == HS_METRIC_TIME) {
			/* the sample covers [t, t + |metric| ms]; keep the overlap */
			double lo = (double)t, hi = lo + fabs(m) * 1e6;
			double start = (double)f->start_ns, end = (double)f->end_ns;

			if (hi < start)
				return 0;
			if (lo < start || hi > end) {
				double span =
				    ((hi < end ? hi : end) - (lo > start ? lo : start)) /
				    1e6;

				m = m > 0 ? span : -span;
			}
		} else if (t < f->start_ns) {
			return 0;
		}
	}
	*metric = m;
	*count = in->count[i];
	return 1;
}
