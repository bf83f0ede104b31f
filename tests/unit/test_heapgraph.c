/*
 * test_heapgraph - the heap snapshot graph (heapgraph/graph.c) on small
 * hand-built graphs whose spanning trees, dominators and retained sizes
 * are known: a diamond, cycles, unreachable nodes, the root priorities,
 * the heap and retained views, and a chain a million objects deep (no
 * recursion may overflow the stack).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/alloc.h"
#include "heapgraph/graph.h"

#define NONE HS_HEAPGRAPH_NONE

struct fixture {
	struct hs_heapgraph g;
	uint32_t t_root, t_obj, t_static, t_local, t_handles;
};

static void types(struct fixture *f)
{
	hs_heapgraph_init(&f->g);
	assert_int_equal(hs_heapgraph_add_type(&f->g, "[.NET Roots]", NULL, 0, &f->t_root), 0);
	assert_int_equal(hs_heapgraph_add_type(&f->g, "Obj", "/x/app.dll", 10, &f->t_obj), 0);
	assert_int_equal(hs_heapgraph_add_type(&f->g, "[static vars]", NULL, 0, &f->t_static), 0);
	assert_int_equal(hs_heapgraph_add_type(&f->g, "[local vars]", NULL, 0, &f->t_local), 0);
	assert_int_equal(hs_heapgraph_add_type(&f->g, "[strong handles]", NULL, 0,
					       &f->t_handles), 0);
}

static void node(struct fixture *f, uint32_t type, uint32_t size, uint32_t n, ...)
{
	uint32_t kids[16], i;
	va_list ap;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		kids[i] = va_arg(ap, uint32_t);
	va_end(ap);
	assert_int_equal(hs_heapgraph_add_node(&f->g, type, size, 0x1000 + f->g.nr_nodes * 16,
					       kids, n), 0);
}

/*
 * 0 root -> 1 [static vars] -> 2 A(100); A -> 3 B(10), A -> 4 C(20);
 * B -> 5 D(5), C -> 5 D; D -> 2 A (a cycle back); 6 E(7) unreachable.
 * idom: 1=0, 2=1, 3=2, 4=2, 5=2. Retained: A = 100+10+20+5 = 135.
 */
static void diamond(struct fixture *f)
{
	types(f);
	node(f, f->t_root, 0, 1, 1);
	node(f, f->t_static, 0, 1, 2);
	node(f, f->t_obj, 100, 2, 3, 4);
	node(f, f->t_obj, 10, 1, 5);
	node(f, f->t_obj, 20, 1, 5);
	node(f, f->t_obj, 5, 1, 2);
	node(f, f->t_obj, 7, 1, 2);
	f->g.root = 0;
	assert_int_equal(hs_heapgraph_check(&f->g), 0);
}

static void test_dominators_diamond_and_cycle(void **state)
{
	struct fixture f;
	uint32_t idom[7];
	uint64_t retained[7];

	(void)state;
	diamond(&f);
	assert_int_equal(hs_heapgraph_dominators(&f.g, idom), 0);
	assert_int_equal(idom[0], 0);
	assert_int_equal(idom[1], 0);
	assert_int_equal(idom[2], 1);
	assert_int_equal(idom[3], 2);
	assert_int_equal(idom[4], 2);
	assert_int_equal(idom[5], 2);
	assert_int_equal(idom[6], NONE);
	assert_int_equal(hs_heapgraph_retained(&f.g, idom, retained), 0);
	assert_int_equal(retained[2], 135);
	assert_int_equal(retained[3], 10);
	assert_int_equal(retained[4], 20);
	assert_int_equal(retained[5], 5);
	assert_int_equal(retained[0], 135);
	assert_int_equal(retained[6], 0);
	hs_heapgraph_release(&f.g);
}

/*
 * A cycle that is entered at two points: 0 -> 1, 0 -> 2, 1 <-> 2, 1 -> 3,
 * 2 -> 3. Neither 1 nor 2 dominates the other or 3.
 */
static void test_dominators_two_entries(void **state)
{
	struct fixture f;
	uint32_t idom[4];
	uint64_t retained[4];

	(void)state;
	types(&f);
	node(&f, f.t_root, 0, 2, 1, 2);
	node(&f, f.t_obj, 1, 2, 2, 3);
	node(&f, f.t_obj, 2, 2, 1, 3);
	node(&f, f.t_obj, 4, 0);
	f.g.root = 0;
	assert_int_equal(hs_heapgraph_dominators(&f.g, idom), 0);
	assert_int_equal(idom[1], 0);
	assert_int_equal(idom[2], 0);
	assert_int_equal(idom[3], 0);
	assert_int_equal(hs_heapgraph_retained(&f.g, idom, retained), 0);
	assert_int_equal(retained[1], 1);
	assert_int_equal(retained[2], 2);
	assert_int_equal(retained[0], 7);
	hs_heapgraph_release(&f.g);
}

/*
 * The local-variable roots rank below static variables: an object held
 * by both is charged to [static vars] even though [local vars] comes
 * first; handles rank lowest.
 */
static void test_spanning_tree_priorities(void **state)
{
	struct fixture f;
	uint32_t parent[6], order[6], n;
	int err;

	(void)state;
	types(&f);
	node(&f, f.t_root, 0, 3, 1, 2, 3);	/* 0 */
	node(&f, f.t_handles, 0, 1, 5);		/* 1 */
	node(&f, f.t_local, 0, 1, 4);		/* 2 */
	node(&f, f.t_static, 0, 1, 4);		/* 3 */
	node(&f, f.t_obj, 8, 1, 5);		/* 4 */
	node(&f, f.t_obj, 9, 0);		/* 5 */
	f.g.root = 0;
	n = hs_heapgraph_spanning_tree(&f.g, parent, order, &err);
	assert_int_equal(err, 0);
	assert_int_equal(n, 6);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 3);	/* static vars first */
	assert_int_equal(parent[4], 3);	/* [static vars] is walked before [local vars] */
	assert_int_equal(parent[5], 4);	/* through the object, not the handle */
	assert_int_equal(parent[0], NONE);
	/* what [static vars] reaches (priority 0) before [local vars] (-1000) */
	assert_int_equal(order[2], 4);
	assert_int_equal(order[3], 5);
	assert_int_equal(order[4], 2);
	assert_int_equal(order[5], 1);
	hs_heapgraph_release(&f.g);
}

/* Among equal priorities, first queued first: breadth first. */
static void test_spanning_tree_fifo(void **state)
{
	struct fixture f;
	uint32_t parent[7], order[7], n, i;
	int err;

	(void)state;
	types(&f);
	node(&f, f.t_root, 0, 2, 1, 2);	/* 0 */
	node(&f, f.t_obj, 1, 2, 3, 4);	/* 1 */
	node(&f, f.t_obj, 1, 2, 5, 6);	/* 2 */
	for (i = 3; i < 7; i++)
		node(&f, f.t_obj, 1, 1, 0);
	f.g.root = 0;
	n = hs_heapgraph_spanning_tree(&f.g, parent, order, &err);
	assert_int_equal(n, 7);
	for (i = 0; i < 7; i++)
		assert_int_equal(order[i], i);
	hs_heapgraph_release(&f.g);
}

/* Frames of the stack of sample @i, root first, joined by ';'. */
static void stack_text(const struct hs_stack_source *s, size_t i, char *out, size_t n)
{
	uint32_t frames[64];
	size_t d = hs_source_stack_frames(s, s->stack[i], frames, 64), k, used = 0;

	out[0] = '\0';
	for (k = 0; k < d && k < 64; k++)
		used += (size_t)snprintf(out + used, n - used, "%s%s", k ? ";" : "",
					 hs_source_frame_name(s, frames[k]));
}

static double metric_of(const struct hs_stack_source *s, const char *stack)
{
	char buf[512];
	double sum = 0;
	size_t i;

	for (i = 0; i < s->nr_samples; i++) {
		stack_text(s, i, buf, sizeof(buf));
		if (!strcmp(buf, stack))
			sum += s->metric[i];
	}
	return sum;
}

static void test_heap_and_retained_views(void **state)
{
	struct hs_stack_source s;
	struct fixture f;
	double m, c;

	(void)state;
	diamond(&f);
	hs_source_init(&s);
	assert_int_equal(hs_heapgraph_heap_source(&f.g, &s), 0);
	hs_source_totals(&s, &m, &c);
	assert_true(m == 142);	/* every object, the unreachable one too */
	assert_true(c == 5);
	assert_string_equal(s.metric_unit, "bytes");
	assert_true(metric_of(&s, "[.NET Roots];[static vars];/x/app.dll!Obj") == 100);
	assert_true(metric_of(&s, "[.NET Roots];[static vars];/x/app.dll!Obj;/x/app.dll!Obj") == 30);
	assert_true(metric_of(&s, "[.NET Roots];[static vars];/x/app.dll!Obj;/x/app.dll!Obj;"
				  "/x/app.dll!Obj") == 5);
	assert_true(metric_of(&s, "[not reachable from roots];/x/app.dll!Obj") == 7);
	hs_source_release(&s);

	hs_source_init(&s);
	assert_int_equal(hs_heapgraph_retained_source(&f.g, &s), 0);
	hs_source_totals(&s, &m, &c);
	assert_true(m == 142);
	/* D (5) is dominated by A, not by B or C: a child of A in the tree */
	assert_true(metric_of(&s, "[.NET Roots];[static vars];/x/app.dll!Obj;/x/app.dll!Obj") == 35);
	assert_true(metric_of(&s, "[not reachable from roots];/x/app.dll!Obj") == 7);
	hs_source_release(&s);
	hs_heapgraph_release(&f.g);
}

/*
 * heap-retained: the heap view's stacks, each object weighing its
 * retained size. A retains 135 (itself, B, C and D); B and C share a
 * stack (10 + 20: neither dominates the other); D 5; E, unreachable, 7.
 */
static void test_heap_retained_view(void **state)
{
	struct hs_stack_source heap, s;
	struct fixture f;
	double m, c, hm, hc;

	(void)state;
	diamond(&f);
	hs_source_init(&heap);
	hs_source_init(&s);
	assert_int_equal(hs_heapgraph_heap_source(&f.g, &heap), 0);
	assert_int_equal(hs_heapgraph_heap_retained_source(&f.g, &s), 0);
	/* stack for stack the heap view's */
	assert_int_equal(s.nr_stacks, heap.nr_stacks);
	assert_int_equal(hs_source_nr_frames(&s), hs_source_nr_frames(&heap));
	assert_memory_equal(s.stack_frame, heap.stack_frame,
			    heap.nr_stacks * sizeof(*heap.stack_frame));
	assert_memory_equal(s.stack_caller, heap.stack_caller,
			    heap.nr_stacks * sizeof(*heap.stack_caller));
	assert_true(s.untimed);
	assert_true(metric_of(&s, "[.NET Roots];[static vars];/x/app.dll!Obj") == 135);
	assert_true(metric_of(&s, "[.NET Roots];[static vars];/x/app.dll!Obj;/x/app.dll!Obj") == 30);
	assert_true(metric_of(&s, "[.NET Roots];[static vars];/x/app.dll!Obj;/x/app.dll!Obj;"
				  "/x/app.dll!Obj") == 5);
	assert_true(metric_of(&s, "[not reachable from roots];/x/app.dll!Obj") == 7);
	/* the objects are the heap view's */
	hs_source_totals(&s, &m, &c);
	hs_source_totals(&heap, &hm, &hc);
	assert_true(m == 135 + 30 + 5 + 7 && c == hc);
	hs_source_release(&s);
	hs_source_release(&heap);
	hs_heapgraph_release(&f.g);
}

/* Whether @target is reachable from the root without passing @removed. */
static int reaches(const struct hs_heapgraph *g, uint32_t removed, uint32_t target,
		   uint32_t *stack, char *seen)
{
	uint32_t top = 0, e;

	memset(seen, 0, g->nr_nodes);
	if (g->root == removed)
		return 0;
	stack[top++] = g->root;
	seen[g->root] = 1;
	while (top) {
		uint32_t n = stack[--top];

		if (n == target)
			return 1;
		for (e = g->first_child[n]; e < g->first_child[n + 1]; e++) {
			uint32_t c = g->children[e];

			if (!seen[c] && c != removed) {
				seen[c] = 1;
				stack[top++] = c;
			}
		}
	}
	return 0;
}

/*
 * Random graphs against the definition: d dominates n when n cannot be
 * reached without d; the immediate dominator is the strict dominator
 * that every other strict dominator dominates (the one with the most
 * strict dominators of its own).
 */
static void test_dominators_against_definition(void **state)
{
	enum { N = 40 };
	uint32_t idom[N], stack[N], kids[6], round;
	char seen[N];

	(void)state;
	srand(16);
	for (round = 0; round < 300; round++) {
		struct fixture f;
		uint32_t n, d, k, nr_dom[N];
		int dominates[N][N];

		types(&f);
		for (n = 0; n < N; n++) {
			uint32_t nr = (uint32_t)rand() % 4;

			for (k = 0; k < nr; k++)
				kids[k] = (uint32_t)rand() % N;
			assert_int_equal(hs_heapgraph_add_node(&f.g, f.t_obj, 1 + n, 0, kids, nr), 0);
		}
		f.g.root = 0;
		assert_int_equal(hs_heapgraph_dominators(&f.g, idom), 0);
		for (n = 0; n < N; n++) {
			int reachable = reaches(&f.g, NONE, n, stack, seen);

			nr_dom[n] = 0;
			for (d = 0; d < N; d++) {
				dominates[d][n] = reachable && d != n &&
						  !reaches(&f.g, d, n, stack, seen);
				nr_dom[n] += (uint32_t)dominates[d][n];
			}
			if (!reachable)
				nr_dom[n] = NONE;
		}
		for (n = 0; n < N; n++) {
			uint32_t best = NONE;

			if (nr_dom[n] == NONE) {
				assert_int_equal(idom[n], NONE);
				continue;
			}
			if (n == 0) {
				assert_int_equal(idom[n], 0);
				continue;
			}
			for (d = 0; d < N; d++)
				if (dominates[d][n] && (best == NONE || nr_dom[d] > nr_dom[best]))
					best = d;
			assert_int_equal(idom[n], best);
		}
		hs_heapgraph_release(&f.g);
	}
}

/* A million objects in one chain: every walk is iterative. */
static void test_deep_chain(void **state)
{
	enum { N = 1000000 };
	struct hs_stack_source s;
	struct fixture f;
	uint32_t *idom = malloc(N * sizeof(*idom)), i;
	uint64_t *retained = malloc(N * sizeof(*retained));
	double m, c;

	(void)state;
	assert_non_null(idom);
	assert_non_null(retained);
	types(&f);
	node(&f, f.t_root, 0, 1, 1);
	for (i = 1; i < N - 1; i++) {
		uint32_t next = i + 1;

		assert_int_equal(hs_heapgraph_add_node(&f.g, f.t_obj, 2, 0, &next, 1), 0);
	}
	node(&f, f.t_obj, 2, 1, 1);	/* the last points back to the first */
	f.g.root = 0;
	assert_int_equal(hs_heapgraph_dominators(&f.g, idom), 0);
	assert_int_equal(idom[N - 1], N - 2);
	assert_int_equal(hs_heapgraph_retained(&f.g, idom, retained), 0);
	assert_int_equal(retained[1], 2ull * (N - 1));
	assert_int_equal(retained[N - 1], 2);
	hs_source_init(&s);
	assert_int_equal(hs_heapgraph_retained_source(&f.g, &s), 0);
	hs_source_totals(&s, &m, &c);
	assert_true(m == 2.0 * (N - 1));
	assert_int_equal(hs_source_depth(&s, s.stack[s.nr_samples - 1]), N);
	hs_source_release(&s);
	printf("# %u nodes, %zu edges: %zu bytes (%.1f a node)\n", f.g.nr_nodes,
	       f.g.nr_edges, hs_heapgraph_memory(&f.g),
	       (double)hs_heapgraph_memory(&f.g) / f.g.nr_nodes);
	hs_heapgraph_release(&f.g);
	free(idom);
	free(retained);
}

static void test_type_totals_and_root_kinds(void **state)
{
	struct hs_heapgraph_type_total *rows;
	struct fixture f;
	size_t n;
	int err;

	(void)state;
	diamond(&f);
	n = hs_heapgraph_type_totals(&f.g, &rows, &err);
	assert_int_equal(err, 0);
	assert_int_equal(n, 3);
	assert_int_equal(rows[0].type, f.t_obj);
	assert_true(rows[0].bytes == 142 && rows[0].count == 5);
	hs_free(rows);
	hs_heapgraph_release(&f.g);
	assert_int_equal(hs_heapgraph_root_kind("[static vars]"), HS_HEAP_ROOT_STATIC);
	assert_int_equal(hs_heapgraph_root_kind("[local vars]"), HS_HEAP_ROOT_LOCAL);
	assert_int_equal(hs_heapgraph_root_kind("[strong handles]"), HS_HEAP_ROOT_HANDLE);
	assert_int_equal(hs_heapgraph_root_kind("[finalization handles]"),
			 HS_HEAP_ROOT_FINALIZER);
	assert_int_equal(hs_heapgraph_root_kind("[other roots]"), HS_HEAP_ROOT_OTHER);
}

static void test_bad_input_and_out_of_memory(void **state)
{
	struct hs_stack_source s;
	struct fixture f;
	uint32_t bad = 99;
	long k;

	(void)state;
	types(&f);
	assert_int_equal(hs_heapgraph_add_node(&f.g, 42, 1, 0, NULL, 0), -EINVAL);
	assert_int_equal(hs_heapgraph_add_node(&f.g, f.t_obj, 1, 0, &bad, 1), 0);
	f.g.root = 0;
	assert_int_equal(hs_heapgraph_check(&f.g), -EINVAL);
	hs_heapgraph_release(&f.g);
	/* every allocation of the views may fail, and nothing leaks */
	for (k = 0; k < 200; k++) {
		int err;

		diamond(&f);
		hs_source_init(&s);
		hs_alloc_fail_after(k);
		err = hs_heapgraph_retained_source(&f.g, &s);
		if (!err)
			err = hs_heapgraph_heap_source(&f.g, &s);
		if (!err)
			err = hs_heapgraph_heap_retained_source(&f.g, &s);
		hs_alloc_fail_after(-1);
		assert_true(err == 0 || err == -ENOMEM);
		hs_source_release(&s);
		hs_heapgraph_release(&f.g);
		if (!err)
			break;
	}
	assert_true(k < 200);
}

/*
 * Objects of one stack are one sample: a list holding 1000 Obj of 10
 * bytes makes one sample of 10000 bytes and count 1000 in both views;
 * a graph reserved to size adds its nodes without growing.
 */
static void test_one_sample_per_stack(void **state)
{
	struct hs_stack_source s;
	struct fixture f;
	uint32_t kids[1000], i;
	size_t alloc;
	int view;

	(void)state;
	for (view = 0; view < 2; view++) {
		types(&f);
		assert_int_equal(hs_heapgraph_reserve(&f.g, 1003), 0);
		alloc = f.g.alloc_nodes;
		node(&f, f.t_root, 0, 1, 1);
		node(&f, f.t_static, 0, 1, 2);
		for (i = 0; i < 1000; i++)
			kids[i] = 3 + i;
		assert_int_equal(hs_heapgraph_add_node(&f.g, f.t_obj, 8, 0x10, kids, 1000), 0);
		for (i = 0; i < 1000; i++)
			node(&f, f.t_obj, 10, 0);
		assert_int_equal(f.g.alloc_nodes, alloc);
		f.g.root = 0;
		hs_source_init(&s);
		assert_int_equal(view ? hs_heapgraph_retained_source(&f.g, &s)
				      : hs_heapgraph_heap_source(&f.g, &s),
				 0);
		/* the list, and its 1000 objects */
		assert_int_equal(s.nr_samples, 2);
		assert_true(s.metric[1] == 10000.0 && s.count[1] == 1000.0);
		assert_true(s.metric[0] == 8.0 && s.count[0] == 1.0);
		assert_int_equal(hs_source_depth(&s, s.stack[1]), 4);
		hs_source_release(&s);
		hs_heapgraph_release(&f.g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dominators_diamond_and_cycle),
		cmocka_unit_test(test_dominators_two_entries),
		cmocka_unit_test(test_dominators_against_definition),
		cmocka_unit_test(test_spanning_tree_priorities),
		cmocka_unit_test(test_spanning_tree_fifo),
		cmocka_unit_test(test_heap_and_retained_views),
		cmocka_unit_test(test_heap_retained_view),
		cmocka_unit_test(test_deep_chain),
		cmocka_unit_test(test_type_totals_and_root_kinds),
		cmocka_unit_test(test_bad_input_and_out_of_memory),
		cmocka_unit_test(test_one_sample_per_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
