/*
 * wrappers - allocation wrappers found in a source's call graph (see
 * wrappers.h). One pass over the stacks gathers each frame's callers and
 * callees (the first and whether there are more), then two fixpoints:
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

struct graph {
	uint8_t *flags;
	uint32_t *callee, *caller; /* the first seen, HS_NO_FRAME: none */
	size_t nr;
};

static void link_calls(struct graph *g, uint32_t from, uint32_t to)
{
	if (g->callee[from] == HS_NO_FRAME)
		g->callee[from] = to;
	else if (g->callee[from] != to)
		g->flags[from] |= W_MANY_CALLEES;
	if (g->caller[to] == HS_NO_FRAME)
		g->caller[to] = from;
	else if (g->caller[to] != from)
		g->flags[to] |= W_MANY_CALLERS;
}

static int build_graph(const struct hs_stack_source *src, const struct hs_patlist *alloc,
		       struct graph *g)
{
	uint8_t *has_child = hs_calloc(src->nr_stacks + 1, 1);
	size_t s, f;
	int err = 0;

	g->nr = hs_strtab_count(&src->frames);
	g->flags = hs_calloc(g->nr + 1, 1);
	g->callee = hs_malloc((g->nr + 1) * sizeof(uint32_t));
	g->caller = hs_malloc((g->nr + 1) * sizeof(uint32_t));
	if (!has_child || !g->flags || !g->callee || !g->caller) {
		hs_free(has_child);
		return -ENOMEM;
	}
	for (f = 0; f < g->nr; f++)
		g->callee[f] = g->caller[f] = HS_NO_FRAME;
	for (s = 0; s < src->nr_stacks; s++) {
		uint32_t up = src->stack_caller[s];

		if (up == HS_NO_STACK)
			continue;
		has_child[up] = 1;
		link_calls(g, src->stack_frame[up], src->stack_frame[s]);
	}
	for (s = 0; s < src->nr_stacks; s++)
		if (!has_child[s])
			g->flags[src->stack_frame[s]] |= W_LEAF;
	hs_free(has_child);
	for (f = 0; f < g->nr && !err; f++) {
		const char *name = hs_strtab_get(&src->frames, (uint32_t)f);
		size_t which;
		int hit = hs_patlist_match_any(
		    alloc, name, hs_strtab_len(&src->frames, (uint32_t)f), &which);

		if (hit < 0)
			err = hit == -ENOMEM ? -ENOMEM : 0; /* too complex: not one */
		else if (hit)
			g->flags[f] |= W_ALLOC;
	}
	return err;
}

static int candidate(const struct graph *g, size_t f)
{
	return !(g->flags[f] & (W_ALLOC | W_LEAF | W_MANY_CALLEES)) &&
	       g->callee[f] != HS_NO_FRAME && g->callee[f] != f;
}

/* Bottom-up: the one callee is an allocation function or a W_CHAIN frame. */
static void find_chains(struct graph *g)
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
static void find_wrappers(struct graph *g)
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

int hs_wrappers_find(const struct hs_stack_source *src, const char *alloc_pats,
		     char **fold, struct hs_diag *diag)
{
	struct hs_patlist alloc = HS_PATLIST_INIT;
	struct graph g = {0};
	struct hs_buf out = HS_BUF_INIT;
	size_t f, named = 0;
	int err;

	*fold = NULL;
	err = hs_patlist_parse(&alloc, alloc_pats, "FoldPats", diag);
	if (!err)
		err = build_graph(src, &alloc, &g);
	if (!err) {
		find_chains(&g);
		find_wrappers(&g);
	}
	for (f = 0; !err && f < g.nr && named < HS_WRAPPERS_MAX; f++) {
		if (!(g.flags[f] & W_WRAPPER))
			continue;
		err = add_entry(&out, hs_strtab_get(&src->frames, (uint32_t)f),
				hs_strtab_len(&src->frames, (uint32_t)f));
		if (err == 0)
			named++;
		else if (err > 0)
			err = 0;
	}
	if (!err && out.len && !(*fold = hs_buf_detach(&out)))
		err = -ENOMEM;
	hs_buf_release(&out);
	hs_patlist_release(&alloc);
	hs_free(g.flags);
	hs_free(g.callee);
	hs_free(g.caller);
	return err;
}
