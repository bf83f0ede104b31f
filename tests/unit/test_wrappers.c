/*
 * test_wrappers - analysis/wrappers.c: which frames of a stack source are
 * allocation wrappers, and the FoldPats entries that name them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/pattern.h"
#include "analysis/presets.h"
#include "analysis/wrappers.h"
#include "common/alloc.h"
#include "common/strtab.h"

/* Intern the stack "a;b;c" (outermost first) into @src. */
static void add_stack(struct hs_stack_source *src, const char *path)
{
	uint32_t s = HS_NO_STACK, f;
	const char *p = path;

	while (*p) {
		size_t n = strcspn(p, ";");

		assert_int_equal(hs_source_intern_frame(src, p, n, &f), 0);
		assert_int_equal(hs_source_intern_stack(src, f, s, &s), 0);
		p += n + (p[n] == ';');
	}
}

static char *wrappers_of(const char *const *stacks)
{
	struct hs_stack_source src;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	char *fold = NULL;

	hs_source_init(&src);
	for (; *stacks; stacks++)
		add_stack(&src, *stacks);
	assert_int_equal(hs_wrappers_find(&src, HS_PRESET_HEAP_FOLD, &fold, &diag), 0);
	hs_source_release(&src);
	return fold;
}

/* git's shape: do_xmalloc under xmalloc, called from two functions */
static void git_wrappers(void **state)
{
	static const char *const stacks[] = {
		"P;m!main;m!load;m!xmalloc;m!do_xmalloc;libc!malloc",
		"P;m!main;m!grow;m!xmalloc;m!do_xmalloc;libc!malloc",
		/* one caller only: stays (the user's function is the answer) */
		"P;m!main;m!grow;m!xrealloc;libc!realloc",
		"P;m!main;m!keep;libc!malloc",
		NULL,
	};
	char *fold = wrappers_of(stacks);

	(void)state;
	assert_non_null(fold);
	assert_string_equal(fold, "@!xmalloc$;@!do_xmalloc$");
	hs_free(fold);
}

/* two callees, a stack's leaf, or recursion: no wrapper */
static void not_wrappers(void **state)
{
	static const char *const stacks[] = {
		/* two: calls malloc and calloc */
		"P;m!main;m!a;m!two;libc!malloc",
		"P;m!main;m!b;m!two;libc!calloc",
		/* busy: has exclusive cost in one stack */
		"P;m!main;m!a;m!busy;libc!malloc",
		"P;m!main;m!b;m!busy",
		/* self: calls itself */
		"P;m!main;m!a;m!self;m!self;libc!malloc",
		"P;m!main;m!b;m!self",
		/* only: one caller, under a non-wrapper */
		"P;m!main;m!a;m!only;libc!malloc",
		NULL,
	};

	(void)state;
	assert_null(wrappers_of(stacks));
}

/* a chain under one wrapper: the inner one has a single, wrapper caller */
static void chains_and_inline(void **state)
{
	static const char *const stacks[] = {
		"P;m!main;m!a;m!zmalloc;m!ztrymalloc (inline);libc!malloc",
		"P;m!main;m!b;m!zmalloc;m!ztrymalloc (inline);libc!malloc",
		/* C++: an allocation function of the heap preset below it */
		"P;m!main;m!a;m!ns::make<int>(unsigned long);libstdc++!operator new(unsigned long)",
		"P;m!main;m!b;m!ns::make<int>(unsigned long);libstdc++!operator new(unsigned long)",
		NULL,
	};
	struct hs_patlist l = HS_PATLIST_INIT;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	char *fold = wrappers_of(stacks);
	size_t which;
	const char *name = "m!ns::make<int>(unsigned long)";

	(void)state;
	assert_non_null(fold);
	assert_string_equal(fold, "@!zmalloc$;@!ztrymalloc \\(inline\\)$;"
			    "@!ns::make<int>\\(unsigned long\\)$");
	/* the entries are patterns that match exactly those frames */
	assert_int_equal(hs_patlist_parse(&l, fold, "FoldPats", &diag), 0);
	assert_int_equal(hs_patlist_match_any(&l, name, strlen(name), &which), 1);
	assert_int_equal(which, 2);
	assert_int_equal(hs_patlist_match_any(&l, "m!zmalloc2", 10, &which), 0);
	assert_int_equal(hs_patlist_match_any(&l, "m!ztrymalloc", 12, &which), 0);
	hs_patlist_release(&l);
	hs_free(fold);
}

static void out_of_memory(void **state)
{
	struct hs_stack_source src;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	long n;
	int rc = -ENOMEM;

	(void)state;
	hs_source_init(&src);
	add_stack(&src, "P;m!main;m!a;m!xmalloc;libc!malloc");
	add_stack(&src, "P;m!main;m!b;m!xmalloc;libc!malloc");
	for (n = 0; rc == -ENOMEM; n++) {
		char *fold = NULL;

		hs_alloc_fail_after(n);
		rc = hs_wrappers_find(&src, HS_PRESET_HEAP_FOLD, &fold, &diag);
		hs_alloc_fail_after(-1);
		assert_true(rc == 0 || rc == -ENOMEM);
		if (rc)
			assert_null(fold);
		else
			assert_string_equal(fold, "@!xmalloc$");
		hs_free(fold);
	}
	hs_source_release(&src);
}

/*
 * The calls of @stacks handed to a graph one by one, last stack first
 * and each twice, with a frame no call names: the graph's answer.
 */
static char *wrappers_of_calls(const char *const *stacks, size_t n)
{
	struct hs_wrappers_graph g = HS_WRAPPERS_GRAPH_INIT;
	struct hs_strtab frames;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	char *fold = NULL;
	uint32_t f, up;
	size_t i;
	int twice;

	hs_strtab_init(&frames, 1 << 20);
	assert_int_equal(hs_strtab_intern(&frames, "m!lonely", 8, &f), 0);
	for (i = n; i-- > 0;) {
		for (twice = 0; twice < 2; twice++) {
			const char *p = stacks[i];

			up = HS_NO_FRAME;
			while (*p) {
				size_t len = strcspn(p, ";");

				assert_int_equal(hs_strtab_intern(&frames, p, len, &f), 0);
				if (up != HS_NO_FRAME)
					assert_int_equal(hs_wrappers_graph_call(&g, up, f),
							 0);
				up = f;
				p += len + (p[len] == ';');
			}
			assert_int_equal(hs_wrappers_graph_leaf(&g, up), 0);
		}
	}
	assert_int_equal(
	    hs_wrappers_graph_find(&g, &frames, HS_PRESET_HEAP_FOLD, &fold, &diag), 0);
	hs_wrappers_graph_release(&g);
	hs_strtab_release(&frames);
	return fold;
}

/* the calls handed in give what the stacks give, in their frames' order */
static void graph_of_calls(void **state)
{
	static const char *const stacks[] = {
		"P;m!main;m!load;m!xmalloc;m!do_xmalloc;libc!malloc",
		"P;m!main;m!grow;m!xmalloc;m!do_xmalloc;libc!malloc",
		"P;m!main;m!grow;m!xrealloc;libc!realloc",
		"P;m!main;m!a;m!zmalloc;m!ztrymalloc (inline);libc!malloc",
		"P;m!main;m!b;m!zmalloc;m!ztrymalloc (inline);libc!malloc",
		"P;m!main;m!a;m!busy;libc!malloc",
		"P;m!main;m!b;m!busy",
		NULL,
	};
	char *fold = wrappers_of_calls(stacks, 7);

	(void)state;
	assert_non_null(fold);
	/* the stacks' frame order is the calls' reversed: so are the entries */
	assert_string_equal(fold, "@!zmalloc$;@!ztrymalloc \\(inline\\)$;"
			    "@!xmalloc$;@!do_xmalloc$");
	hs_free(fold);
	fold = wrappers_of(stacks);
	assert_string_equal(fold, "@!xmalloc$;@!do_xmalloc$;@!zmalloc$;"
			    "@!ztrymalloc \\(inline\\)$");
	hs_free(fold);
}

static void graph_out_of_memory(void **state)
{
	static const char *const path[] = {"P", "m!main", "m!a", "m!xmalloc",
					   "libc!malloc"};
	struct hs_strtab frames;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	uint32_t f[6];
	long n;
	size_t i;
	int rc = -ENOMEM;

	(void)state;
	hs_strtab_init(&frames, 1 << 20);
	for (i = 0; i < 5; i++)
		assert_int_equal(hs_strtab_intern(&frames, path[i], strlen(path[i]), &f[i]),
				 0);
	assert_int_equal(hs_strtab_intern(&frames, "m!b", 3, &f[5]), 0);
	for (n = 0; rc == -ENOMEM; n++) {
		struct hs_wrappers_graph g = HS_WRAPPERS_GRAPH_INIT;
		char *fold = NULL;

		hs_alloc_fail_after(n);
		rc = 0;
		for (i = 0; !rc && i + 1 < 5; i++)
			rc = hs_wrappers_graph_call(&g, f[i], f[i + 1]);
		if (!rc)
			rc = hs_wrappers_graph_call(&g, f[1], f[5]);
		if (!rc)
			rc = hs_wrappers_graph_call(&g, f[5], f[3]);
		if (!rc)
			rc = hs_wrappers_graph_leaf(&g, f[4]);
		if (!rc)
			rc = hs_wrappers_graph_find(&g, &frames, HS_PRESET_HEAP_FOLD, &fold,
						    &diag);
		hs_alloc_fail_after(-1);
		hs_wrappers_graph_release(&g);
		assert_true(rc == 0 || rc == -ENOMEM);
		if (rc)
			assert_null(fold);
		else
			assert_string_equal(fold, "@!xmalloc$");
		hs_free(fold);
	}
	hs_strtab_release(&frames);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(git_wrappers),
		cmocka_unit_test(not_wrappers),
		cmocka_unit_test(chains_and_inline),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(graph_of_calls),
		cmocka_unit_test(graph_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
