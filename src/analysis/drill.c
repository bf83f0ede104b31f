/*
 * drill - Drill Into and Flatten (see drill.h).
 */
#include "analysis/drill.h"
#include "common/alloc.h"
#include <errno.h>
#include <string.h>

/* Copies input frames and stacks into a new source on demand. */
struct copier {
	const struct hs_stack_source *in;
	struct hs_stack_source *out;
	uint32_t *frame; /* input frame -> output frame, HS_NO_FRAME = not yet */
	uint32_t *stack; /* input stack -> output stack, HS_DROPPED = not yet */
	uint32_t *path;	 /* scratch: input stacks still to copy */
};

static int copier_init(struct copier *c, const struct hs_stack_source *in,
		       struct hs_stack_source *out)
{
	size_t nf = hs_source_nr_frames(in), i;

	memset(c, 0, sizeof(*c));
	c->in = in;
	c->out = out;
	c->frame = hs_malloc((nf + 1) * sizeof(*c->frame));
	c->stack = hs_malloc((in->nr_stacks + 1) * sizeof(*c->stack));
	c->path = hs_malloc((in->nr_stacks + 1) * sizeof(*c->path));
	if (!c->frame || !c->stack || !c->path)
		return -ENOMEM;
	for (i = 0; i < nf; i++)
		c->frame[i] = HS_NO_FRAME;
	for (i = 0; i < in->nr_stacks; i++)
		c->stack[i] = HS_DROPPED;
	return 0;
}

static void copier_release(struct copier *c)
{
	hs_free(c->frame);
	hs_free(c->stack);
	hs_free(c->path);
}

/* The output stack of input stack @s, copying what is missing. */
static int copy_stack(struct copier *c, uint32_t s, uint32_t *res)
{
	size_t n = 0;
	uint32_t up;
	int err;

	if (s == HS_NO_STACK) {
		*res = HS_NO_STACK;
		return 0;
	}
	while (s != HS_NO_STACK && c->stack[s] == HS_DROPPED) {
		c->path[n++] = s;
		s = c->in->stack_caller[s];
	}
	up = s == HS_NO_STACK ? HS_NO_STACK : c->stack[s];
	while (n) {
		uint32_t x = c->path[--n], f = c->in->stack_frame[x];

		if (c->frame[f] == HS_NO_FRAME) {
			const char *name = hs_source_frame_name(c->in, f);

			err = hs_source_intern_frame(
			    c->out, name, hs_strtab_len(&c->in->frames, f), &c->frame[f]);
			if (err)
				return err;
		}
		err = hs_source_intern_stack(c->out, c->frame[f], up, &up);
		if (err)
			return err;
		c->stack[x] = up;
	}
	*res = up;
	return 0;
}

static int start_output(const struct hs_calltree *ct, struct hs_stack_source *out)
{
	hs_source_init(out);
	out->kind = ct->in->kind;
	out->untimed = ct->in->untimed;
	if (ct->in->metric_unit) {
		out->metric_unit = hs_strdup(ct->in->metric_unit);
		if (!out->metric_unit)
			return -ENOMEM;
	}
	return 0;
}

/* Copy the samples whose (alive) node has @pick set, with their original stacks. */
static int copy_samples(const struct hs_calltree *ct, const uint8_t *pick,
			struct hs_stack_source *out)
{
	const struct hs_stack_source *in = ct->in;
	struct copier c = {0};
	size_t i;
	int err = start_output(ct, out);

	if (!err)
		err = copier_init(&c, in, out);
	for (i = 0; !err && i < in->nr_samples; i++) {
		uint32_t s, n, os;
		double m, k;

		if (!hs_filtered_sample(&ct->f, i, &s, &m, &k))
			continue;
		n = ct->rep[hs_calltree_stack_node(ct, s)];
		if (!pick[n])
			continue;
		err = copy_stack(&c, in->stack[i], &os);
		if (!err)
			err = hs_source_add_sample(out, in->time[i], in->metric[i],
						   in->count[i], os);
	}
	copier_release(&c);
	if (err)
		hs_source_release(out);
	return err;
}

int hs_drill_node(const struct hs_calltree *ct, uint32_t node, enum hs_drill_what what,
		  struct hs_stack_source *out)
{
	const struct hs_tree *t = &ct->t;
	uint8_t *pick;
	size_t n;
	int err;

	if (node >= t->nr || !(t->flags[node] & HS_NODE_ALIVE))
		return -EINVAL;
	pick = hs_calloc(t->nr, 1);
	if (!pick)
		return -ENOMEM;
	pick[node] = 1;
	if (what == HS_DRILL_INC)
		for (n = node + 1; n < t->nr; n++)
			if (t->flags[n] & HS_NODE_ALIVE)
				pick[n] = pick[t->parent[n]];
	err = copy_samples(ct, pick, out);
	hs_free(pick);
	return err;
}

int hs_drill_name(const struct hs_calltree *ct, uint32_t frame, enum hs_drill_what what,
		  struct hs_stack_source *out)
{
	const struct hs_tree *t = &ct->t;
	uint8_t *pick = hs_calloc(t->nr, 1);
	size_t n;
	int err;

	if (!pick)
		return -ENOMEM;
	for (n = 0; n < t->nr; n++) {
		if (!(t->flags[n] & HS_NODE_ALIVE))
			continue;
		pick[n] = t->frame[n] == frame ||
			  (what == HS_DRILL_INC && n && pick[t->parent[n]]);
	}
	err = copy_samples(ct, pick, out);
	hs_free(pick);
	return err;
}

int hs_drill_pick(const struct hs_calltree *ct, const uint8_t *pick,
		  struct hs_stack_source *out)
{
	return copy_samples(ct, pick, out);
}

int hs_flatten(const struct hs_calltree *ct, struct hs_stack_source *out)
{
	const struct hs_stack_source *in = ct->in, *fo = &ct->f.out;
	size_t nr_out = hs_filtered_nr_stacks(&ct->f);
	uint32_t *leaf = NULL;
	size_t i;
	int err = start_output(ct, out);

	if (!err) {
		leaf = hs_malloc((nr_out + 1) * sizeof(*leaf));
		err = leaf ? 0 : -ENOMEM;
	}
	for (i = 0; !err && i < nr_out; i++)
		leaf[i] = HS_DROPPED;
	for (i = 0; !err && i < in->nr_samples; i++) {
		uint32_t s, f;
		double m, k;

		if (!hs_filtered_sample(&ct->f, i, &s, &m, &k))
			continue;
		if (s != HS_NO_STACK && leaf[s] == HS_DROPPED) {
			const char *name =
			    hs_source_frame_name(fo, hs_filtered_stack_frame(&ct->f, s));

			err = hs_source_intern_frame(out, name, strlen(name), &f);
			if (!err)
				err =
				    hs_source_intern_stack(out, f, HS_NO_STACK, &leaf[s]);
		}
		if (!err)
			err = hs_source_add_sample(
			    out, in->time[i], in->metric[i], in->count[i],
			    s == HS_NO_STACK ? HS_NO_STACK : leaf[s]);
	}
	hs_free(leaf);
	if (err)
		hs_source_release(out);
	return err;
}
