#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/filter.h"
#include "analysis/group.h"
#include "analysis/pattern.h"
#include "common/alloc.h"
#include "testutil.h"

#define MAX_DEPTH 128

static size_t add(struct hs_stack_source *src, const char *spec)
{
	return tu_sample(src, 0, 1, 1, spec);
}

/* The output stack of @s as "root;...;leaf" (static buffer). */
static const char *stack_text(const struct hs_stack_source *out, uint32_t s)
{
	if (s == HS_DROPPED)
		return "DROPPED";
	if (s == HS_NO_STACK)
		return "ROOT";
	return tu_stack_text(out, s, ";");
}

/* Sample @i as the views see it. */
static const char *shown(const struct hs_filtered *f, size_t i)
{
	uint32_t s;
	double m, c;

	if (!hs_filtered_sample(f, i, &s, &m, &c))
		return "DROPPED";
	return stack_text(&f->out, s);
}

static void apply(const struct hs_stack_source *src, const char *group,
		  const char *fold, const char *inc, const char *exc,
		  struct hs_filtered *f)
{
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	int rc;

	p.group = group;
	p.fold = fold;
	p.inc = inc;
	p.exc = exc;
	rc = hs_filter_apply(src, &p, f, &d);
	if (rc)
		fprintf(stderr, "hs_filter_apply: %d %s\n", rc, d.msg);
	assert_int_equal(rc, 0);
	/* the output model's invariants, which the filter no longer checks */
	hs_source_check(&f->out);
}

/* The sample's output stack after applying the patterns. */
static void check(const char *group, const char *fold, const char *inc,
		  const char *exc, const char *in, const char *want)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	size_t i;

	hs_source_init(&src);
	i = add(&src, in);
	apply(&src, group, fold, inc, exc, &f);
	assert_string_equal(shown(&f, i), want);
	hs_filtered_release(&f);
	hs_source_release(&src);
}

/* Is the input stack of sample @i marked as folded? */
static int folded(const struct hs_filtered *f, size_t i)
{
	return f->folded[f->in->stack[i]];
}

static void display_names_and_collapse(void **state)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	size_t a, b, c, d, e, r;

	(void)state;
	hs_source_init(&src);
	a = add(&src, "/bin/app!main;/bin/app!work;/usr/lib/libc.so.6!malloc");
	b = add(&src, "m!a;m!b;m!b;m!c");
	c = add(&src, "m!A;m!B;m!C;m!B;m!D");
	d = add(&src, "m!a;m!b;m!b");
	e = add(&src, "m!a;m!b");
	r = add(&src, NULL);
	apply(&src, NULL, NULL, NULL, NULL, &f);
	assert_string_equal(shown(&f, a), "app!main;app!work;libc.so.6!malloc");
	assert_string_equal(shown(&f, b), "m!a;m!b;m!c");
	assert_string_equal(shown(&f, c), "m!A;m!B;m!C;m!B;m!D");
	assert_int_equal(f.map[src.stack[d]], f.map[src.stack[e]]);
	assert_false(folded(&f, d));	/* recursion is not a FoldPats fold */
	assert_string_equal(shown(&f, r), "ROOT");
	assert_int_equal(f.root_map, HS_NO_STACK);
	assert_int_equal(f.nr_groups, 0);
	hs_filtered_release(&f);
	hs_source_release(&src);
}

static void same_short_name_different_frames(void **state)
{
	(void)state;
	/* two frames that only look alike are two nodes */
	check(NULL, NULL, NULL, NULL, "/a/libx.so!f;/b/libx.so!f", "libx.so!f;libx.so!f");
	/* unresolved frames of a module group by short name and merge */
	check(NULL, NULL, NULL, NULL, "m!a;/a/libx.so!?;/b/libx.so!?;m!b",
	      "m!a;libx.so!?;m!b");
}

/*
 * Filter @src with and without borrow_stacks (and @exc): the same frames,
 * and through the accessors the same stacks and samples; returns whether
 * the borrowing result kept the input's stacks.
 */
static int borrowed_same(const struct hs_stack_source *src, const char *exc)
{
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_filtered plain, lent;
	size_t i, nr = hs_source_nr_frames(src);
	int identity;

	p.exc = exc;
	p.end_ms = 0.001;
	assert_int_equal(hs_filter_apply(src, &p, &plain, &d), 0);
	p.borrow_stacks = 1;
	assert_int_equal(hs_filter_apply(src, &p, &lent, &d), 0);
	identity = lent.identity;
	assert_int_equal(hs_source_nr_frames(&lent.out), hs_source_nr_frames(&plain.out));
	for (i = 0; i < hs_source_nr_frames(&plain.out); i++)
		assert_string_equal(hs_source_frame_name(&lent.out, (uint32_t)i),
				    hs_source_frame_name(&plain.out, (uint32_t)i));
	assert_int_equal(hs_filtered_nr_stacks(&lent), plain.out.nr_stacks);
	for (i = 0; i < plain.out.nr_stacks; i++) {
		assert_int_equal(hs_filtered_stack_frame(&lent, (uint32_t)i),
				 plain.out.stack_frame[i]);
		assert_int_equal(hs_filtered_stack_caller(&lent, (uint32_t)i),
				 plain.out.stack_caller[i]);
	}
	for (i = 0; i < src->nr_stacks; i++) {
		assert_int_equal(hs_filtered_map(&lent, (uint32_t)i), plain.map[i]);
		assert_int_equal(hs_filtered_folded(&lent, (uint32_t)i), plain.folded[i]);
	}
	for (i = 0; i < src->nr_samples; i++) {
		uint32_t s1 = 0, s2 = 0;
		double m1 = 0, m2 = 0, c1 = 0, c2 = 0;

		assert_int_equal(hs_filtered_sample(&lent, i, &s1, &m1, &c1),
				 hs_filtered_sample(&plain, i, &s2, &m2, &c2));
		assert_int_equal(s1, s2);
		assert_true(m1 == m2 && c1 == c2);
	}
	if (identity) {
		assert_null(lent.map);
		assert_null(lent.folded);
		assert_int_equal(lent.out.nr_stacks, 0);
		for (i = 0; i < nr; i++)
			assert_true(lent.frame_out[i] == HS_NO_FRAME ||
				    lent.frame_out[i] < hs_source_nr_frames(&lent.out));
	}
	hs_filtered_release(&plain);
	hs_filtered_release(&lent);
	return identity;
}

static void borrowed_stacks(void **state)
{
	struct hs_stack_source src;

	(void)state;
	hs_source_init(&src);
	add(&src, "/bin/app!main;/bin/app!work;/usr/lib/libc.so.6!malloc");
	add(&src, "/bin/app!main;/bin/app!other;/usr/lib/libc.so.6!malloc");
	tu_sample(&src, 1000000, 1, 1, "/bin/app!main"); /* after the window */
	add(&src, NULL);
	/* no pattern, distinct names, no collapse: the input's stacks */
	assert_true(borrowed_same(&src, NULL));
	/* a pattern that drops stacks */
	assert_false(borrowed_same(&src, "other"));
	/* a frame that collapses into its caller */
	add(&src, "/bin/app!main;/bin/app!work;/bin/app!work");
	assert_false(borrowed_same(&src, NULL));
	hs_source_release(&src);
	/* two frames shown with one name */
	hs_source_init(&src);
	add(&src, "/bin/app!main;/a/libx.so!f");
	add(&src, "/bin/app!main;/b/libx.so!f");
	assert_false(borrowed_same(&src, NULL));
	hs_source_release(&src);
	/* an unresolved address goes into its module's automatic group */
	hs_source_init(&src);
	add(&src, "/bin/app!main;/bin/app!?");
	assert_false(borrowed_same(&src, NULL));
	hs_source_release(&src);
}

/*
 * Stacks that differ only in their leaf's line (one function calling
 * malloc from three lines) are one stack to the views: CallTree keys a
 * node's children by name, so the filter must give them one output
 * stack, with or without patterns.
 */
static void lines_of_one_frame_merge(void **state)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	uint32_t main_f, ins_f, top, loc[3], st[3], out, o;
	double m, c;
	size_t i;

	(void)state;
	hs_source_init(&src);
	assert_int_equal(hs_source_intern_frame(&src, "app!main", 8, &main_f), 0);
	assert_int_equal(hs_source_intern_frame(&src, "app!insert", 10, &ins_f), 0);
	assert_int_equal(hs_source_intern_stack(&src, main_f, HS_NO_STACK, &top), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(hs_source_intern_loc(&src, "app.c", 5, (uint32_t)(20 + i),
						      &loc[i]),
				 0);
		assert_int_equal(
		    hs_source_intern_stack_loc(&src, ins_f, top, loc[i], &st[i]), 0);
		assert_int_equal(hs_source_add_sample(&src, 0, 8.0 * (double)(i + 1), 1, st[i]),
				 0);
	}
	assert_int_not_equal(st[0], st[1]);
	apply(&src, NULL, NULL, NULL, NULL, &f);
	assert_int_equal(hs_filtered_sample(&f, 0, &out, &m, &c), 1);
	for (i = 1; i < 3; i++) {
		assert_int_equal(hs_filtered_sample(&f, i, &o, &m, &c), 1);
		assert_int_equal(o, out);
	}
	assert_string_equal(stack_text(&f.out, out), "app!main;app!insert");
	hs_filtered_release(&f);
	/* a pattern that changes nothing on these stacks: the same */
	apply(&src, NULL, "other!x", NULL, NULL, &f);
	assert_int_equal(hs_filtered_sample(&f, 0, &out, &m, &c), 1);
	assert_int_equal(hs_filtered_sample(&f, 2, &o, &m, &c), 1);
	assert_int_equal(o, out);
	hs_filtered_release(&f);
	hs_source_release(&src);
}

static void plain_groups(void **state)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	size_t a, b;

	(void)state;
	hs_source_init(&src);
	a = add(&src, "/bin/app!main;/bin/app!work;/usr/lib/libc.so.6!malloc;"
		"/usr/lib/libc.so.6!_int_malloc");
	b = add(&src, "Process app (1);Thread (2) main;/bin/app!main");
	apply(&src, "[group modules] {%}!->module $1", NULL, NULL, NULL, &f);
	assert_string_equal(shown(&f, a), "module app;module libc.so.6");
	assert_string_equal(shown(&f, b), "Process app (1);Thread (2) main;module app");
	assert_int_equal(f.nr_groups, 2);
	hs_filtered_release(&f);
	hs_source_release(&src);

	/* pseudo-frames are ordinary frames for patterns */
	check("Thread -> AllThreads", NULL, NULL, NULL,
	      "Process app (1);Thread (2) main;m!f", "Process app (1);AllThreads;m!f");
	check("^Process% {%}->$1;^Thread->Thread;", NULL, NULL, NULL,
	      "Process app (1);Thread (2) main;m!f", "app;Thread;m!f");
}

static void check_numbering(const struct hs_filtered *f, int check_order);

/*
 * Children of one output stack that merge: the first made below it is
 * found beside it (b into a), a later one in the merge index (d into
 * c); a stack below an output stack with nothing looked up below it yet
 * (e, under a's) is new without a probe.
 */
static void merges_below_one_caller(void **state)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	size_t a, b, c, d, e;

	(void)state;
	hs_source_init(&src);
	a = add(&src, "app!main;m1!a");
	b = add(&src, "app!main;m1!b");
	c = add(&src, "app!main;m2!c");
	d = add(&src, "app!main;m2!d");
	e = add(&src, "app!main;m1!a;m2!e");
	apply(&src, "{%}!->module $1", NULL, NULL, NULL, &f);
	assert_string_equal(shown(&f, b), "module app;module m1");
	assert_string_equal(shown(&f, d), "module app;module m2");
	assert_string_equal(shown(&f, e), "module app;module m1;module m2");
	assert_int_equal(f.map[src.stack[b]], f.map[src.stack[a]]);
	assert_int_equal(f.map[src.stack[d]], f.map[src.stack[c]]);
	assert_int_not_equal(f.map[src.stack[c]], f.map[src.stack[a]]);
	assert_int_equal(f.out.nr_stacks, 4);
	check_numbering(&f, 1);
	hs_filtered_release(&f);
	hs_source_release(&src);
}

static void entry_groups(void **state)
{
	const char *x = "/bin/app!A;/lib/libc.so.6!x;/lib/libc.so.6!y;/bin/app!A2;"
			"/lib/libc.so.6!z";
	struct hs_stack_source src;
	struct hs_filtered f;
	size_t full, in_x, in_y;

	(void)state;
	hs_source_init(&src);
	full = add(&src, x);
	in_x = add(&src, "/bin/app!A;/lib/libc.so.6!x");
	in_y = add(&src, "/bin/app!A;/lib/libc.so.6!x;/lib/libc.so.6!y");
	apply(&src, "{libc%}!=>module $1", NULL, NULL, NULL, &f);
	/* leaving the group and entering it again makes a second node */
	assert_string_equal(shown(&f, full), "app!A;module libc.so.6 <<libc.so.6!x>>;"
			    "app!A2;module libc.so.6 <<libc.so.6!z>>");
	/* the frames inside the group vanish into the entry frame */
	assert_string_equal(shown(&f, in_y), "app!A;module libc.so.6 <<libc.so.6!x>>");
	assert_int_equal(f.map[src.stack[in_y]], f.map[src.stack[in_x]]);
	assert_false(folded(&f, in_y));
	hs_filtered_release(&f);

	apply(&src, "{%}!=>module $1", NULL, NULL, NULL, &f);
	assert_string_equal(shown(&f, full),
			    "module app <<app!A>>;module libc.so.6 <<libc.so.6!x>>;"
			    "module app <<app!A2>>;module libc.so.6 <<libc.so.6!z>>");
	hs_filtered_release(&f);

	/* ExcPats see "GROUP <<frame>>", also of a frame inside the group */
	apply(&src, "{libc%}!=>module $1", NULL, NULL, "<<libc.so.6!z>>", &f);
	assert_string_equal(shown(&f, full), "DROPPED");
	assert_string_equal(shown(&f, in_y), "app!A;module libc.so.6 <<libc.so.6!x>>");
	hs_filtered_release(&f);
	apply(&src, "{libc%}!=>module $1", NULL, NULL, "module libc.so.6 <<libc.so.6!y", &f);
	assert_string_equal(shown(&f, full), "DROPPED");
	assert_string_equal(shown(&f, in_y), "DROPPED");
	assert_string_equal(shown(&f, in_x), "app!A;module libc.so.6 <<libc.so.6!x>>");
	hs_filtered_release(&f);
	hs_source_release(&src);

	/* entering twice through the same frame still makes two nodes */
	check("{libc%}!=>module $1", NULL, NULL, NULL,
	      "/bin/app!A;/lib/libc.so.6!x;/bin/app!A2;/lib/libc.so.6!x",
	      "app!A;module libc.so.6 <<libc.so.6!x>>;app!A2;"
	      "module libc.so.6 <<libc.so.6!x>>");
}

static void recursion(void **state)
{
	const char *s = "m!A;m!B;m!C;m!B;m!D";

	(void)state;
	check(NULL, NULL, NULL, NULL, s, "m!A;m!B;m!C;m!B;m!D");
	/* one plain group: B, C, B become one node */
	check("m!B->G;m!C->G", NULL, NULL, NULL, s, "m!A;G;m!D");
	/* one entry group: the node of its entry frame */
	check("m!B=>G;m!C=>G", NULL, NULL, NULL, s, "m!A;G <<m!B>>;m!D");
	/* C leaves the group: the second B enters it again */
	check("m!B=>G", NULL, NULL, NULL, s, "m!A;G <<m!B>>;m!C;G <<m!B>>;m!D");
	/* a folded frame is transparent: B's caller becomes B */
	check(NULL, "m!C", NULL, NULL, s, "m!A;m!B;m!D");
	check("m!B=>G", "m!C", NULL, NULL, s, "m!A;G <<m!B>>;m!D");
}

static void fold_patterns(void **state)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	size_t leaf, above, mid, mid_top, root, twice, afa, thr;

	(void)state;
	hs_source_init(&src);
	leaf = add(&src, "m!a;m!b;m!leaf");
	above = add(&src, "m!a;m!b");
	mid = add(&src, "m!a;m!mid;m!c");
	mid_top = add(&src, "m!a;m!mid");
	root = add(&src, "m!r;m!b");
	twice = add(&src, "m!r;m!r");
	afa = add(&src, "m!A;m!F;m!A");
	thr = add(&src, "Process app (1);Thread (2);m!main");
	apply(&src, NULL, "m!leaf;m!mid;^m!r;m!F;^Thread", NULL, NULL, &f);
	/* a leaf's cost goes to its caller */
	assert_string_equal(shown(&f, leaf), "m!a;m!b");
	assert_int_equal(f.map[src.stack[leaf]], f.map[src.stack[above]]);
	assert_true(folded(&f, leaf));
	assert_false(folded(&f, above));
	/* a middle frame vanishes; its callee hangs off its caller */
	assert_string_equal(shown(&f, mid), "m!a;m!c");
	assert_false(folded(&f, mid));
	assert_string_equal(shown(&f, mid_top), "m!a");
	assert_true(folded(&f, mid_top));
	/* a root-most frame is not folded */
	assert_string_equal(shown(&f, root), "m!r;m!b");
	assert_false(folded(&f, root));
	assert_string_equal(shown(&f, twice), "m!r");
	assert_true(folded(&f, twice));
	/* A -> F -> A: the cost reached A through a fold */
	assert_string_equal(shown(&f, afa), "m!A");
	assert_true(folded(&f, afa));
	assert_string_equal(shown(&f, thr), "Process app (1);m!main");
	hs_filtered_release(&f);
	hs_source_release(&src);

	/* FoldPats see grouped names; a root-most frame that matches shows
	 * its own ungrouped name (PerfView's behaviour) */
	check("{%}!->module $1", "module m", NULL, NULL, "/x/m!a;/x/m!b", "m!a");
	check("{%}!->module $1", "module m", NULL, NULL, "/x/n!a;/x/m!b;/x/n!c",
	      "module n");
	check("{%}!->module $1", "m!b", NULL, NULL, "/x/n!a;/x/m!b", "module n;module m");
}

static void exclusion(void **state)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	size_t a, b, c, d, r;

	(void)state;
	hs_source_init(&src);
	a = add(&src, "m!a;m!x");
	b = add(&src, "m!a;m!x;m!y");
	c = add(&src, "m!a;m!y");
	d = add(&src, "m!x");
	r = add(&src, NULL);
	/* exclusion beats folding of the same frame */
	apply(&src, NULL, "m!x", NULL, "m!x", &f);
	assert_string_equal(shown(&f, a), "DROPPED");
	assert_string_equal(shown(&f, b), "DROPPED");
	assert_string_equal(shown(&f, c), "m!a;m!y");
	assert_string_equal(shown(&f, d), "DROPPED");
	assert_string_equal(shown(&f, r), "ROOT");
	hs_filtered_release(&f);
	/* any one of the patterns */
	apply(&src, NULL, NULL, NULL, "zzz;^m!y", &f);
	assert_string_equal(shown(&f, a), "m!a;m!x");
	assert_string_equal(shown(&f, b), "DROPPED");
	assert_string_equal(shown(&f, c), "DROPPED");
	hs_filtered_release(&f);
	/* ExcPats see grouped names */
	apply(&src, "m!x->X", NULL, NULL, "^X$", &f);
	assert_string_equal(shown(&f, a), "m!a;X");	/* '$' is literal */
	hs_filtered_release(&f);
	apply(&src, "m!x->X", NULL, NULL, "^X", &f);
	assert_string_equal(shown(&f, a), "DROPPED");
	assert_string_equal(shown(&f, c), "m!a;m!y");
	hs_filtered_release(&f);
	hs_source_release(&src);
}

static void include_patterns(void **state)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	size_t abc, ac, b, r, fb;

	(void)state;
	hs_source_init(&src);
	abc = add(&src, "m!a;m!b;m!c");
	ac = add(&src, "m!a;m!c");
	b = add(&src, "m!b");
	r = add(&src, NULL);
	fb = add(&src, "m!a;m!b");
	/* entries are ANDed */
	apply(&src, NULL, NULL, "m!a;m!b", NULL, &f);
	assert_string_equal(shown(&f, abc), "m!a;m!b;m!c");
	assert_string_equal(shown(&f, ac), "DROPPED");
	assert_string_equal(shown(&f, b), "DROPPED");
	assert_string_equal(shown(&f, fb), "m!a;m!b");
	/* a sample with no stack is dropped when IncPats is set */
	assert_string_equal(shown(&f, r), "DROPPED");
	assert_int_equal(f.root_map, HS_DROPPED);
	hs_filtered_release(&f);
	/* '|' inside one entry is OR */
	apply(&src, NULL, NULL, "m!a|m!zz", NULL, &f);
	assert_string_equal(shown(&f, ac), "m!a;m!c");
	assert_string_equal(shown(&f, b), "DROPPED");
	hs_filtered_release(&f);
	/* frames removed by folding do not count */
	apply(&src, NULL, "m!b", "m!b", NULL, &f);
	assert_string_equal(shown(&f, abc), "DROPPED");
	hs_filtered_release(&f);
	/* a root-most frame that matches FoldPats matches no IncPats */
	apply(&src, NULL, "^m!b", "m!b", NULL, &f);
	assert_string_equal(shown(&f, b), "DROPPED");
	hs_filtered_release(&f);
	hs_source_release(&src);

	/* frames merged into an entry frame do not count */
	check("m!=>G", NULL, "<<m!y>>", NULL, "m!x;m!y", "DROPPED");
	check("m!=>G", NULL, "<<m!x>>", NULL, "m!x;m!y", "G <<m!x>>");
	/* IncPats see grouped names */
	check("{%}!->module $1", NULL, "module app", NULL, "/bin/app!main;/lib/c.so!f",
	      "module app;module c.so");
	check("{%}!->module $1", NULL, "app!main", NULL, "/bin/app!main;/lib/c.so!f",
	      "DROPPED");
	/* ungrouped frames are matched by their full name */
	check(NULL, NULL, "^/bin/app!", NULL, "/bin/app!main", "app!main");
}

static void many_include_patterns(void **state)
{
	char inc[1024], all[1024], some[1024];
	size_t at = 0, at2 = 0, at3 = 0;
	int i;

	(void)state;
	for (i = 0; i < 70; i++) {
		at += (size_t)sprintf(inc + at, "^m!f%d$;", i);
		at2 += (size_t)sprintf(all + at2, "%sm!f%d$", i ? ";" : "", i);
		if (i != 66)
			at3 += (size_t)sprintf(some + at3, "%sm!f%d$", i ? ";" : "", i);
	}
	/* '$' is a literal here, so "m!f1$" does not match "m!f10$" */
	check(NULL, NULL, inc, NULL, all, all);
	check(NULL, NULL, inc, NULL, some, "DROPPED");
}

static void time_window(void **state)
{
	struct hs_stack_source src;
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_filtered f;
	uint32_t s;
	double m, c;

	(void)state;
	hs_source_init(&src);
	tu_sample(&src, 9999400, 5, 2, "m!a");	/* 10 ms - 0.0006 ms */
	tu_sample(&src, 9999399, 5, 2, "m!a");
	tu_sample(&src, 20000600, -5, 2, "m!a");	/* 20 ms + 0.0006 ms */
	tu_sample(&src, 20000601, 5, 2, "m!a");
	tu_sample(&src, 15000000, 5, 2, NULL);
	tu_sample(&src, 8000000, 4, 1, "m!a");
	p.start_ms = 10;
	p.end_ms = 20;
	assert_int_equal(hs_filter_apply(&src, &p, &f, NULL), 0);
	assert_int_equal(hs_filtered_sample(&f, 0, &s, &m, &c), 1);
	assert_true(m == 5 && c == 2);
	assert_int_equal(hs_filtered_sample(&f, 1, &s, &m, &c), 0);
	assert_int_equal(hs_filtered_sample(&f, 2, &s, &m, &c), 1);
	assert_true(m == -5 && c == 2);		/* plain metrics are not prorated */
	assert_int_equal(hs_filtered_sample(&f, 3, &s, &m, &c), 0);
	assert_int_equal(hs_filtered_sample(&f, 4, &s, &m, &c), 1);
	assert_int_equal(s, HS_NO_STACK);
	assert_int_equal(hs_filtered_sample(&f, 5, &s, &m, &c), 0);
	hs_filtered_release(&f);

	/* open bounds */
	p.start_ms = NAN;
	assert_int_equal(hs_filter_apply(&src, &p, &f, NULL), 0);
	assert_int_equal(hs_filtered_sample(&f, 1, &s, &m, &c), 1);
	assert_int_equal(hs_filtered_sample(&f, 3, &s, &m, &c), 0);
	hs_filtered_release(&f);
	p.start_ms = 10;
	p.end_ms = INFINITY;
	assert_int_equal(hs_filter_apply(&src, &p, &f, NULL), 0);
	assert_int_equal(hs_filtered_sample(&f, 1, &s, &m, &c), 0);
	assert_int_equal(hs_filtered_sample(&f, 3, &s, &m, &c), 1);
	assert_false(f.start_ns == INT64_MIN);
	assert_int_equal(f.end_ns, INT64_MAX);
	hs_filtered_release(&f);
	hs_source_release(&src);
}

/* Metric of sample @i of a TimeMetric source in the window [10, 20] ms. */
static void check_prorated(int64_t t_ns, double metric, int kept, double want)
{
	struct hs_stack_source src;
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_filtered f;
	uint32_t s;
	double m = NAN, c = NAN;

	hs_source_init(&src);
	src.kind = HS_METRIC_TIME;
	tu_sample(&src, t_ns, metric, 3, "m!a");
	p.start_ms = 10;
	p.end_ms = 20;
	assert_int_equal(hs_filter_apply(&src, &p, &f, NULL), 0);
	assert_int_equal(hs_filtered_sample(&f, 0, &s, &m, &c), kept);
	if (kept) {
		assert_true(fabs(m - want) < 1e-9);
		assert_true(c == 3);	/* the count is not prorated */
	}
	hs_filtered_release(&f);
	hs_source_release(&src);
}

static void time_metric_proration(void **state)
{
	(void)state;
	/* [8, 12] ms overlaps [9.9994, 20.0006] by 2.0006 ms */
	check_prorated(8000000, 4, 1, 2.0006);
	check_prorated(8000000, -4, 1, -2.0006);	/* the sign is kept */
	/* [5, 7] ends before the window */
	check_prorated(5000000, 2, 0, 0);
	check_prorated(5000000, -2, 0, 0);
	/* [18, 23] is cut at 20.0006 */
	check_prorated(18000000, 5, 1, 2.0006);
	/* [8, 28] is cut at both ends */
	check_prorated(8000000, 20, 1, 10.0012);
	check_prorated(8000000, -20, 1, -10.0012);
	/* inside: unchanged */
	check_prorated(12000000, 3, 1, 3);
	check_prorated(12000000, -3, 1, -3);
	/* starts after the end */
	check_prorated(20000700, 1, 0, 0);
	/* [9.4994, 9.9994] touches the start: kept, with nothing left */
	check_prorated(9499400, 0.5, 1, 0);
	/* a zero metric inside the window */
	check_prorated(15000000, 0, 1, 0);
}

static void negative_metrics(void **state)
{
	struct hs_stack_source src;
	struct hs_filtered f;
	uint32_t s;
	double m, c, total = 0, count = 0;
	size_t i;

	(void)state;
	hs_source_init(&src);
	tu_sample(&src, 1, 5, 1, "/x/m!a;/x/m!b");
	tu_sample(&src, 2, -3, -1, "/x/m!a;/x/m!b");
	tu_sample(&src, 3, -7, -1, "/x/m!a;/x/n!c");
	apply(&src, "{%}!=>module $1", "n!c", NULL, NULL, &f);
	for (i = 0; i < src.nr_samples; i++) {
		assert_int_equal(hs_filtered_sample(&f, i, &s, &m, &c), 1);
		total += m;
		count += c;
	}
	assert_true(total == -5 && count == -1);
	assert_string_equal(shown(&f, 2), "module m <<m!a>>");
	assert_true(folded(&f, 2));
	hs_filtered_release(&f);
	hs_source_release(&src);
}

static void bad_patterns(void **state)
{
	struct hs_stack_source src;
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_diag d = HS_DIAG_INIT(NULL);
	struct hs_filtered f;
	char name[66];

	(void)state;
	hs_source_init(&src);
	add(&src, "m!a");
	p.fold = "ok;{x";
	assert_int_equal(hs_filter_apply(&src, &p, &f, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "FoldPats: bad pattern '{x'"));
	assert_null(f.map);
	p.fold = NULL;
	p.inc = "x}";
	memset(&d, 0, sizeof(d));
	assert_int_equal(hs_filter_apply(&src, &p, &f, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "IncPats: bad pattern 'x}'"));
	p.inc = NULL;
	p.group = "a->b;(->c";
	memset(&d, 0, sizeof(d));
	assert_int_equal(hs_filter_apply(&src, &p, &f, &d), 0);	/* '(' is literal */
	hs_filtered_release(&f);
	p.group = "{->c";
	assert_int_equal(hs_filter_apply(&src, &p, &f, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "GroupPats: bad pattern '{'"));

	/* a pattern too costly for a name fails the whole apply */
	memset(name, 'a', sizeof(name));
	name[64] = '!';
	name[65] = 0;
	add(&src, name);
	p.group = NULL;
	p.exc = "@^(a|aa)+$";
	memset(&d, 0, sizeof(d));
	assert_int_equal(hs_filter_apply(&src, &p, &f, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "ExcPats: pattern '@^(a|aa)+$' is too complex"));
	assert_null(f.map);
	hs_source_release(&src);
}

static void out_of_memory(void **state)
{
	struct hs_stack_source src;
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	long n;
	int rc = -ENOMEM;

	(void)state;
	hs_source_init(&src);
	add(&src, "Process a (1);/x/m!a;/x/m!b;/x/n!c;/y/z!?");
	add(&src, "Process a (1);/x/m!a;/x/n!c;/x/m!b");
	p.group = "z->Z;{%}!=>module $1";
	p.fold = "n!c";
	p.inc = "^Process";
	p.exc = "nothing";
	p.start_ms = 0;
	for (n = 0; rc == -ENOMEM; n++) {
		struct hs_filtered f;

		hs_alloc_fail_after(n);
		rc = hs_filter_apply(&src, &p, &f, NULL);
		hs_alloc_fail_after(-1);
		assert_true(rc == 0 || rc == -ENOMEM);
		if (!rc) {
			assert_string_equal(shown(&f, 0),
					    "Process a (1);module m <<m!a>>;Z");
			assert_string_equal(shown(&f, 1),
					    "Process a (1);module m <<m!a>>");
		} else {
			assert_null(f.map);
		}
		hs_filtered_release(&f);
	}
	assert_true(n > 5);
	hs_source_release(&src);
}

/*
 * Property tests over random stack sources, against a reference that
 * walks each stack from the root with no caching.
 */
static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct ref {
	struct hs_groups groups;
	struct hs_patlist exc, fold, inc;
};

struct ref_info {
	int kind;		/* 0 normal, 1 excluded, 2 folded */
	char group[256];	/* "" = none */
	int entry;
	char out[512];
	uint64_t inc;
};

static void ref_frame(struct ref *r, const char *full, struct ref_info *ri)
{
	struct hs_buf name = HS_BUF_INIT;
	const char *shown_name = hs_frame_display(full);
	char target[512];
	size_t w;
	int kind = hs_groups_match(&r->groups, full, &name, NULL);

	assert_true(kind >= 0);
	memset(ri, 0, sizeof(*ri));
	if (kind == HS_GROUP_NONE)
		snprintf(target, sizeof(target), "%s", full);
	else if (kind == HS_GROUP_PLAIN)
		snprintf(target, sizeof(target), "%s", name.s);
	else
		snprintf(target, sizeof(target), "%s <<%s>>", name.s, shown_name);
	snprintf(ri->group, sizeof(ri->group), "%s", name.s);
	ri->entry = kind == HS_GROUP_ENTRY;
	snprintf(ri->out, sizeof(ri->out), "%s",
		 kind == HS_GROUP_NONE ? shown_name : target);
	if (hs_patlist_match_any(&r->exc, target, strlen(target), &w)) {
		ri->kind = 1;
	} else if (hs_patlist_match_any(&r->fold, target, strlen(target), &w)) {
		ri->kind = 2;
		ri->group[0] = 0;
		ri->entry = 0;
		snprintf(ri->out, sizeof(ri->out), "%s", shown_name);
	} else {
		assert_int_equal(hs_patlist_match_set(&r->inc, target, strlen(target),
						      &ri->inc, &w), 0);
	}
	hs_buf_release(&name);
}

/* The processed stack of input stack @s as text; *@fold = its folded flag. */
static const char *ref_stack(struct ref *r, const struct hs_stack_source *in,
			     uint32_t s, int *fold)
{
	static char buf[8192];
	uint32_t frames[MAX_DEPTH];
	size_t n = hs_source_stack_frames(in, s, frames, MAX_DEPTH), i, at = 0;
	char ident[600] = "", group[256] = "";
	uint64_t inc = 0;
	int have = 0;

	*fold = 0;
	buf[0] = 0;
	for (i = 0; i < n; i++) {
		struct ref_info ri;
		char id[600];

		ref_frame(r, hs_source_frame_name(in, frames[i]), &ri);
		if (ri.kind == 1)
			return "DROPPED";
		snprintf(id, sizeof(id), "frame %u", frames[i]);
		if (ri.group[0] && !ri.entry)
			snprintf(id, sizeof(id), "group %s", ri.group);
		else if (ri.group[0] && have && !strcmp(group, ri.group))
			snprintf(id, sizeof(id), "%s", ident);
		if (have && (ri.kind == 2 || !strcmp(id, ident))) {
			*fold |= ri.kind == 2;
			continue;
		}
		*fold = 0;
		have = 1;
		snprintf(ident, sizeof(ident), "%s", id);
		snprintf(group, sizeof(group), "%s", ri.group);
		inc |= ri.inc;
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s",
				       at ? ";" : "", ri.out);
	}
	if (r->inc.nr && inc != ((uint64_t)1 << r->inc.nr) - 1)
		return "DROPPED";
	return buf;
}

static const char *const pool[] = {
	"/usr/lib/libc.so.6!malloc", "/usr/lib/libc.so.6!free",
	"/usr/lib/libc.so.6!__libc_start_main", "/usr/lib/libc.so.6!?",
	"/bin/app!main", "/bin/app!work", "/bin/app!ns::Klass::run(int)",
	"/bin/app!ns::Klass::step()", "/opt/lib/libx.so!x1", "/opt/lib/libx.so!?",
	"/other/libx.so!?", "/opt/lib/liby.so!y1", "/opt/lib/liby.so!y2",
	"Process app (1)", "Thread (2) main", "Thread (3) worker", "BROKEN",
	"m!A", "m!B", "m!C",
};

static const char *const settings[][4] = {	/* group, fold, inc, exc */
	{ "", "", "", "" },
	{ "{%}!->module $1", "", "", "" },
	{ "{%}!=>module $1", "", "", "" },
	{ "{%}!=>module $1", "libc;Thread", "", "" },
	{ "libc%!=>C;app!w->G;app!m->G;G->H", "y1;^BROKEN", "", "" },
	{ "{%!*}::=>class $1;{*}!=>module $1", "class app!ns", "", "" },
	{ "[x] /opt/lib/*!->;!=>OTHER", "^m!|Process", "", "" },
	{ "Thread -> AllThreads;m!B->B;m!C->B", "A", "", "" },
	{ "^Process% {%}->$1;^Thread->Thread;{%}!{*}->$1!$2", "free", "", "" },
	{ "{%}!=>module $1", "x1", "main;module", "y2" },
	{ "", "B", "m!|libc", "Thread (3)" },
	{ "m!B=>G;m!C=>G", "m!A", "G|<<m!C", "" },
};

/*
 * @f's output stacks are distinct (interning them again in order gives
 * each its own id back) and numbered in the order of the first input
 * stack that maps to each, as interning them in input order would number
 * them (checked when no IncPats drops a prefix's callees).
 */
static void check_numbering(const struct hs_filtered *f, int check_order)
{
	const struct hs_stack_source *out = &f->out;
	struct hs_stack_source again;
	uint32_t next = 0, id, i;

	hs_source_check(out);
	hs_source_init(&again);
	for (i = 0; i < hs_source_nr_frames(out); i++) {
		const char *nm = hs_source_frame_name(out, i);

		assert_int_equal(hs_source_intern_frame(&again, nm, strlen(nm), &id), 0);
	}
	for (i = 0; i < out->nr_stacks; i++) {
		assert_int_equal(hs_source_intern_stack(&again, out->stack_frame[i],
							out->stack_caller[i], &id),
				 0);
		assert_int_equal(id, i);
	}
	for (i = 0; check_order && i < f->in->nr_stacks; i++) {
		if (f->map[i] == HS_DROPPED || f->map[i] < next)
			continue;
		assert_int_equal(f->map[i], next);
		next++;
	}
	if (check_order)
		assert_int_equal(next, out->nr_stacks);
	hs_source_release(&again);
}

static void random_sources(void **state)
{
	size_t round, k, i;

	(void)state;
	for (round = 0; round < 20; round++) {
		struct hs_stack_source src;

		hs_source_init(&src);
		for (i = 0; i < 300; i++) {
			uint32_t frames[16], s;
			size_t depth = 1 + rnd(12), j;

			for (j = 0; j < depth; j++) {
				const char *nm = pool[rnd(sizeof(pool) /
							  sizeof(pool[0]))];

				assert_int_equal(hs_source_intern_frame(
					&src, nm, strlen(nm), &frames[j]), 0);
			}
			assert_int_equal(hs_source_intern_path(&src, frames, depth,
							       &s), 0);
			assert_int_equal(hs_source_add_sample(&src, (int64_t)rnd(1000000),
							      (double)rnd(16) - 5,
							      1 + rnd(2), s), 0);
		}
		tu_sample(&src, 5, 2, 1, NULL);
		for (k = 0; k < sizeof(settings) / sizeof(settings[0]); k++) {
			const char *const *st = settings[k];
			struct ref r = { .groups = HS_GROUPS_INIT };
			struct hs_filtered f;
			double in_m, in_c, out_m = 0, out_c = 0;
			int keeps_all = !*st[2] && !*st[3];

			apply(&src, st[0], st[1], st[2], st[3], &f);
			assert_int_equal(hs_groups_parse(&r.groups, st[0], NULL), 0);
			assert_int_equal(hs_patlist_parse(&r.exc, st[3], "", NULL), 0);
			assert_int_equal(hs_patlist_parse(&r.fold, st[1], "", NULL), 0);
			assert_int_equal(hs_patlist_parse(&r.inc, st[2], "", NULL), 0);
			for (i = 0; i < src.nr_stacks; i++) {
				int fold;
				const char *want = ref_stack(&r, &src, (uint32_t)i, &fold);

				assert_string_equal(stack_text(&f.out, f.map[i]), want);
				if (f.map[i] != HS_DROPPED) {
					assert_true(hs_source_depth(&f.out, f.map[i]) <=
						    hs_source_depth(&src, (uint32_t)i));
					assert_int_equal(f.folded[i], fold);
				}
			}
			for (i = 0; i < src.nr_samples; i++) {
				uint32_t s;
				double m, c;
				int kept = hs_filtered_sample(&f, i, &s, &m, &c);

				if (keeps_all)
					assert_true(kept);
				if (kept) {
					out_m += m;
					out_c += c;
				}
			}
			check_numbering(&f, !*st[2]);
			hs_source_totals(&src, &in_m, &in_c);
			if (keeps_all) {
				/* grouping and folding never change the totals */
				assert_true(out_m == in_m);
				assert_true(out_c == in_c);
			}
			hs_groups_release(&r.groups);
			hs_patlist_release(&r.exc);
			hs_patlist_release(&r.fold);
			hs_patlist_release(&r.inc);
			hs_filtered_release(&f);
		}
		hs_source_release(&src);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(display_names_and_collapse),
		cmocka_unit_test(same_short_name_different_frames),
		cmocka_unit_test(lines_of_one_frame_merge),
		cmocka_unit_test(plain_groups),
		cmocka_unit_test(merges_below_one_caller),
		cmocka_unit_test(entry_groups),
		cmocka_unit_test(recursion),
		cmocka_unit_test(fold_patterns),
		cmocka_unit_test(exclusion),
		cmocka_unit_test(include_patterns),
		cmocka_unit_test(many_include_patterns),
		cmocka_unit_test(time_window),
		cmocka_unit_test(time_metric_proration),
		cmocka_unit_test(negative_metrics),
		cmocka_unit_test(bad_patterns),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(random_sources),
		cmocka_unit_test(borrowed_stacks),
	};
	return cmocka_run_group_tests_name("filter", tests, NULL, NULL);
}
