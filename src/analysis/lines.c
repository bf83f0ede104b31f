/*
 * lines - a function's cost per source line (see lines.h). The samples
 * are summed per input stack first, so the walk up the stacks is once
 * per distinct stack, not once per sample.
 */
#include "analysis/lines.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct acc {
	double exc, exc_count, inc, inc_count;
	uint32_t stamp; /* the last stack that counted this line's inclusive cost */
	int used;
};

static int cmp_lines(const void *pa, const void *pb)
{
	const struct hs_line_cost *a = pa, *b = pb;
	int c;

	if (!a->file != !b->file)
		return a->file ? -1 : 1;
	c = a->file ? strcmp(a->file, b->file) : 0;
	return c ? c : (a->line > b->line) - (a->line < b->line);
}

int hs_lines_compute(const struct hs_calltree *ct, const char *name, struct hs_lines *out)
{
	const struct hs_stack_source *in = ct->in, *fo = &ct->f.out;
	size_t nf = hs_source_nr_frames(in), nl = in->nr_locs + 1, i, k;
	size_t nof = hs_source_nr_frames(fo);
	double *w = NULL, *wc = NULL, metric, count;
	struct acc *acc = NULL;
	uint8_t *match = NULL, *out_match = NULL;
	uint32_t ostack;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->has_locations = in->stack_loc != NULL;
	match = hs_calloc(nf + 1, 1);
	if (!match)
		goto out;
	for (i = 0; i < nf; i++)
		if (!strcmp(hs_frame_display(hs_source_frame_name(in, (uint32_t)i)),
			    name)) {
			match[i] = 1;
			out->frames++;
		}
	err = 0;
	if (!out->frames)
		goto out;
	err = -ENOMEM;
	/* the filter's frames are named as the views show them */
	out_match = hs_calloc(nof + 1, 1);
	if (!out_match)
		goto out;
	for (i = 0; i < nof; i++)
		out_match[i] = !strcmp(hs_source_frame_name(fo, (uint32_t)i), name);
	w = hs_calloc(in->nr_stacks + 1, sizeof(*w));
	wc = hs_calloc(in->nr_stacks + 1, sizeof(*wc));
	acc = hs_calloc(nl, sizeof(*acc));
	if (!w || !wc || !acc)
		goto out;
	for (i = 0; i < in->nr_samples; i++)
		if (in->stack[i] != HS_NO_STACK &&
		    hs_filtered_sample(&ct->f, i, &ostack, &metric, &count)) {
			w[in->stack[i]] += metric;
			wc[in->stack[i]] += count;
		}
	for (k = 0; k < nl; k++)
		acc[k].stamp = UINT32_MAX;
	for (i = 0; i < in->nr_stacks; i++) {
		uint32_t s = (uint32_t)i, n, o = ct->f.map[i];
		int any = 0, exc;

		if (w[i] == 0 && wc[i] == 0)
			continue;
		/* exclusive: the filter's leaf is the function (folded callees included) */
		exc = o != HS_DROPPED && o != HS_NO_STACK && out_match[fo->stack_frame[o]];
		for (n = s; n != HS_NO_STACK; n = in->stack_caller[n]) {
			uint32_t loc;

			if (!match[in->stack_frame[n]])
				continue;
			loc = hs_source_stack_loc(in, n);
			if (loc >= nl)
				loc = 0;
			acc[loc].used = 1;
			if (acc[loc].stamp != s) {
				acc[loc].stamp = s;
				acc[loc].inc += w[i];
				acc[loc].inc_count += wc[i];
			}
			/* on the line of its innermost occurrence */
			if (exc && !any) {
				acc[loc].exc += w[i];
				acc[loc].exc_count += wc[i];
			}
			any = 1;
		}
		if (any) {
			out->inc += w[i];
			out->inc_count += wc[i];
		}
	}
	for (k = 0; k < nl; k++)
		out->nr += acc[k].used;
	out->line = hs_calloc(out->nr + 1, sizeof(*out->line));
	if (!out->line)
		goto out;
	for (k = 0, i = 0; k < nl; k++) {
		struct hs_line_cost *l;

		if (!acc[k].used)
			continue;
		l = &out->line[i++];
		l->file = k ? hs_source_loc(in, (uint32_t)k, &l->line) : NULL;
		if (!l->file)
			l->line = 0;
		l->exc = acc[k].exc;
		l->exc_count = acc[k].exc_count;
		l->inc = acc[k].inc;
		l->inc_count = acc[k].inc_count;
	}
	qsort(out->line, out->nr, sizeof(*out->line), cmp_lines);
	err = 0;
out:
	hs_free(match);
	hs_free(out_match);
	hs_free(w);
	hs_free(wc);
	hs_free(acc);
	if (err)
		hs_lines_release(out);
	return err;
}

void hs_lines_release(struct hs_lines *l)
{
	hs_free(l->line);
	memset(l, 0, sizeof(*l));
}
