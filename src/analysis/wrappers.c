/*
 * wrappers - allocation wrappers found in a source's call graph (see
 * wrappers.h). The calls, from a pass over the stacks or handed in one by
 * one, give each frame's callers and callees (the first and whether there
 * are more), then two fixpoints:
 * bottom-up, the frames whose one callee is an allocation function or such
 * a frame; top-down, those of them called from two functions or from a
 * wrapper.
 */
#include "analysis/wrappers.h"
#include "analysis/pattern.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "model/frame_name.h"
#include <errno.h>
#include <string.h>

enum {
	W_ALLOC = 1,	    /* an allocation function (@alloc_pats) */
	W_LEAF = 2,	    /* some stack ends in it */
	W_MANY_CALLEES = 4, /* calls two functions or more */
	W_MANY_CALLERS = 8, /* called from two functions or more */
	W_CHAIN = 16,	    /* its one callee leads to the allocator */
	W_WRAPPER = 32,
};

/* Room for frames [0, @n) in @g, the new ones with no call yet. */
static int graph_room(struct hs_wrappers_graph *g, size_t n)
{
	size_t a = g->alloc, f;

	if (n <= g->nr)
		return 0;
	if (n > a) {
		uint8_t *flags;
		uint32_t *callee, *caller;

		if (n > SIZE_MAX / 2 / sizeof(uint32_t))
			return -ENOMEM;
		a = a ? a : 256;
		while (a < n)
			a *= 2;
		flags = hs_realloc(g->flags, a);
		if (!flags)
			return -ENOMEM;
		g->flags = flags;
		callee = hs_realloc(g->callee, a * sizeof(uint32_t));
		if (!callee)
			return -ENOMEM;
		g->callee = callee;
		caller = hs_realloc(g->caller, a * sizeof(uint32_t));
		if (!caller)
			return -ENOMEM;
		g->caller = caller;
		g->alloc = a;
	}
	for (f = g->nr; f < n; f++) {
		g->flags[f] = 0;
		g->callee[f] = g->caller[f] = HS_NO_FRAME;
	}
	g->nr = n;
	return 0;
}

int hs_wrappers_graph_call(struct hs_wrappers_graph *g, uint32_t from, uint32_t to)
{
	size_t top = (from > to ? from : to) + (size_t)1;

	HS_BUG_ON(from == HS_NO_FRAME || to == HS_NO_FRAME);
	if (top > g->nr && graph_room(g, top))
		return -ENOMEM;
	if (g->callee[from] == HS_NO_FRAME)
		g->callee[from] = to;
	else if (g->callee[from] != to)
		g->flags[from] |= W_MANY_CALLEES;
	if (g->caller[to] == HS_NO_FRAME)
		g->caller[to] = from;
	else if (g->caller[to] != from)
		g->flags[to] |= W_MANY_CALLERS;
	return 0;
}

int hs_wrappers_graph_leaf(struct hs_wrappers_graph *g, uint32_t frame)
{
	HS_BUG_ON(frame == HS_NO_FRAME);
	if (frame >= g->nr && graph_room(g, (size_t)frame + 1))
		return -ENOMEM;
	g->flags[frame] |= W_LEAF;
	return 0;
}

void hs_wrappers_graph_release(struct hs_wrappers_graph *g)
{
	hs_free(g->flags);
	hs_free(g->callee);
	hs_free(g->caller);
	memset(g, 0, sizeof(*g));
}

/* The calls and leaves of every stack of @src into @g. */
static int graph_of_stacks(const struct hs_stack_source *src, struct hs_wrappers_graph *g)
{
	uint8_t *has_child = hs_calloc(src->nr_stacks + 1, 1);
	size_t s;
	int err = 0;

	if (!has_child)
		return -ENOMEM;
	for (s = 0; !err && s < src->nr_stacks; s++) {
		uint32_t up = src->stack_caller[s];

		if (up == HS_NO_STACK)
			continue;
		has_child[up] = 1;
		err =
		    hs_wrappers_graph_call(g, src->stack_frame[up], src->stack_frame[s]);
	}
	for (s = 0; !err && s < src->nr_stacks; s++)
		if (!has_child[s])
			err = hs_wrappers_graph_leaf(g, src->stack_frame[s]);
	hs_free(has_child);
	return err;
}

/* Every frame of @frames in @g, those that @alloc matches marked W_ALLOC. */
static int mark_alloc(struct hs_wrappers_graph *g, const struct hs_strtab *frames,
		      const struct hs_patlist *alloc)
{
	size_t f;
	int err = graph_room(g, hs_strtab_count(frames));

	HS_BUG_ON(g->nr > hs_strtab_count(frames));
	for (f = 0; f < g->nr && !err; f++) {
		const char *name = hs_strtab_get(frames, (uint32_t)f);
		size_t which;
		int hit = hs_patlist_match_any(
		    alloc, name, hs_strtab_len(frames, (uint32_t)f), &which);

		if (hit < 0)
			err = hit == -ENOMEM ? -ENOMEM : 0; /* too complex: not one */
		else if (hit)
			g->flags[f] |= W_ALLOC;
	}
	return err;
}

static int candidate(const struct hs_wrappers_graph *g, size_t f)
{
	return !(g->flags[f] & (W_ALLOC | W_LEAF | W_MANY_CALLEES)) &&
	       g->callee[f] != HS_NO_FRAME && g->callee[f] != f;
}

/* Bottom-up: the one callee is an allocation function or a W_CHAIN frame. */
static void find_chains(struct hs_wrappers_graph *g)
{
	int changed = 1;
	size_t f;

	while (changed) {
		changed = 0;
		for (f = 0; f < g->nr; f++) {
			uint8_t down;

			if ((g->flags[f] & W_CHAIN) || !candidate(g, f))
				continue;
			down = g->flags[g->callee[f]];
			if (down & (W_ALLOC | W_CHAIN)) {
				g->flags[f] |= W_CHAIN;
				changed = 1;
			}
		}
	}
}

/* Top-down: a W_CHAIN frame called from two functions, or from a wrapper. */
static void find_wrappers(struct hs_wrappers_graph *g)
{
	int changed = 1;
	size_t f;

	while (changed) {
		changed = 0;
		for (f = 0; f < g->nr; f++) {
			uint8_t fl = g->flags[f];

			if (!(fl & W_CHAIN) || (fl & W_WRAPPER) ||
			    g->caller[f] == HS_NO_FRAME)
				continue;
			if ((fl & W_MANY_CALLERS) ||
			    (g->flags[g->caller[f]] & W_WRAPPER)) {
				g->flags[f] |= W_WRAPPER;
				changed = 1;
			}
		}
	}
}

/* "@!function$", the function's text escaped for PCRE2; 1 when skipped. */
static int add_entry(struct hs_buf *out, const char *name, size_t len)
{
	const char *fn = hs_frame_name_bang(name, len);
	const char *end = name + len;
	int err;

	fn = fn ? fn + 1 : name;
	if (memchr(fn, ';', (size_t)(end - fn)) || fn == end)
		return 1; /* a ';' would split the entry */
	err = hs_buf_adds(out, out->len ? ";@!" : "@!");
	for (; !err && fn < end; fn++) {
		if (strchr("\\^$.|?*+()[]{}", *fn) && hs_buf_add(out, "\\", 1))
			return -ENOMEM;
		err = hs_buf_add(out, fn, 1);
	}
	if (!err)
		err = hs_buf_add(out, "$", 1);
	return err ? -ENOMEM : 0;
}

int hs_wrappers_graph_find(struct hs_wrappers_graph *g, const struct hs_strtab *frames,
			   const char *alloc_pats, char **fold, struct hs_diag *diag)
{
	struct hs_patlist alloc = HS_PATLIST_INIT;
	struct hs_buf out = HS_BUF_INIT;
	size_t f, named = 0;
	int err;

	*fold = NULL;
	err = hs_patlist_parse(&alloc, alloc_pats, "FoldPats", diag);
	if (!err)
		err = mark_alloc(g, frames, &alloc);
	if (!err) {
		find_chains(g);
		find_wrappers(g);
	}
	for (f = 0; !err && f < g->nr && named < HS_WRAPPERS_MAX; f++) {
		if (!(g->flags[f] & W_WRAPPER))
			continue;
		err = add_entry(&out, hs_strtab_get(frames, (uint32_t)f),
				hs_strtab_len(frames, (uint32_t)f));
		if (err == 0)
			named++;
		else if (err > 0)
			err = 0;
	}
	if (!err && out.len && !(*fold = hs_buf_detach(&out)))
		err = -ENOMEM;
	hs_buf_release(&out);
	hs_patlist_release(&alloc);
	return err;
}

int hs_wrappers_find(const struct hs_stack_source *src, const char *alloc_pats,
		     char **fold, struct hs_diag *diag)
{
	struct hs_wrappers_graph g = HS_WRAPPERS_GRAPH_INIT;
	int err;

	*fold = NULL;
	err = graph_of_stacks(src, &g);
	if (!err)
		err = hs_wrappers_graph_find(&g, &src->frames, alloc_pats, fold, diag);
	hs_wrappers_graph_release(&g);
	return err;
}
