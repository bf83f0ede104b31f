/*
 * test_report_json - views as JSON (the HTTP API's shape), text and CSV.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <jansson.h>
#include "common/alloc.h"
#include "common/buf.h"
#include "views_helpers.h"

static double real(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_non_null(v);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static void byname_json(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	json_t *j, *sum, *rows, *b;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	j = hs_view_json(&v);
	assert_non_null(j);
	assert_string_equal(str(j, "view"), "byname");
	sum = json_object_get(j, "summary");
	assert_true(real(sum, "metric") == 15 && real(sum, "count") == 4);
	assert_true(real(sum, "samples") == 4);
	assert_true(real(sum, "first_ms") == 0 && real(sum, "last_ms") == 30);
	assert_true(real(sum, "metric_per_interval") == 0.5);
	assert_true(json_is_null(json_object_get(sum, "fold_pct")));
	rows = json_object_get(j, "rows");
	assert_int_equal(json_array_size(rows), 6);
	b = json_array_get(rows, 1);
	assert_string_equal(str(b, "name"), "B");
	assert_true(real(b, "exc") == 4 && real(b, "exc_count") == 1);
	assert_true(real(b, "inc") == 7 && real(b, "inc_count") == 3);
	assert_true(fabs(real(b, "inc_pct") - 700.0 / 15) < 1e-9);
	assert_true(fabs(real(b, "exc_pct") - 400.0 / 15) < 1e-9);
	assert_true(real(b, "fold") == 0 && real(b, "fold_count") == 0);
	assert_true(real(b, "first_ms") == 0 && real(b, "last_ms") == 20);
	assert_string_equal(str(b, "when"), "2_________5__________A__________");
	json_decref(j);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

static void tree_json_nests_children(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	json_t *j, *root, *a, *kids;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_CALLTREE, NULL);
	j = hs_view_json(&v);
	root = json_object_get(j, "tree");
	assert_string_equal(str(root, "name"), "ROOT");
	a = json_array_get(json_object_get(root, "children"), 0);
	assert_string_equal(str(a, "name"), "A");
	kids = json_object_get(a, "children");
	assert_int_equal(json_array_size(kids), 2);
	assert_string_equal(str(json_array_get(kids, 0), "name"), "E");
	assert_string_equal(str(json_array_get(kids, 1), "name"), "B");
	assert_true(real(json_array_get(kids, 1), "depth") == 2);
	assert_true(real(json_array_get(kids, 1), "nr_children") == 1);
	json_decref(j);
	hs_view_release(&v);

	build_view(&v, &ct, HS_VIEW_CALLER_CALLEE, "B");
	j = hs_view_json(&v);
	assert_string_equal(str(j, "focus"), "B");
	assert_true(real(json_object_get(j, "focus_row"), "inc") == 7);
	assert_int_equal(json_array_size(json_object_get(j, "callers")), 2);
	assert_true(real(json_array_get(json_object_get(j, "callers"), 0), "inc") == 6.5);
	assert_int_equal(json_array_size(json_object_get(j, "callees")), 2);
	json_decref(j);
	hs_view_release(&v);

	build_view(&v, &ct, HS_VIEW_FLAME, NULL);
	j = hs_view_json(&v);
	root = json_object_get(j, "tree");
	assert_true(real(root, "x") == 0 && real(root, "width") == 1);
	json_decref(j);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* A source of one stack @depth frames deep ("f0;f1;..."), metric 5. */
static void deep_source(struct hs_stack_source *src, size_t depth)
{
	struct hs_buf b = HS_BUF_INIT;
	size_t i;

	hs_source_init(src);
	for (i = 0; i < depth; i++)
		assert_int_equal(hs_buf_addf(&b, "%sf%zu", i ? ";" : "", i), 0);
	add(src, 1, 5, 1, b.s);
	hs_buf_release(&b);
}

/*
 * The writer lays documents out as jansson does for the same flags, for
 * every kind of view.
 */
static void dump_matches_jansson(void **state)
{
	static const size_t flags[] = {
		HS_VIEW_JSON_FLAGS, JSON_COMPACT | JSON_REAL_PRECISION(15),
		JSON_REAL_PRECISION(15), JSON_INDENT(3) | JSON_COMPACT,
	};
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	int kind;
	size_t f, len;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	for (kind = 0; kind < HS_VIEW__COUNT; kind++) {
		build_view(&v, &ct, (enum hs_view_kind)kind,
			   hs_view_kind_has_focus((enum hs_view_kind)kind) ? "B" : NULL);
		for (f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
			json_t *j = hs_view_json(&v);
			char *want = json_dumps(j, flags[f]);
			char *got = hs_view_json_dump(&v, flags[f], &len);

			assert_non_null(want);
			assert_non_null(got);
			assert_string_equal(got, want);
			assert_int_equal(len, strlen(want));
			free(want);
			hs_free(got);
			json_decref(j);
		}
		hs_view_release(&v);
	}
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/*
 * A 20,000-frame stack: jansson's recursive dumper overflowed the stack
 * on such trees. The writer gives valid JSON whose lines are indented 64
 * spaces at most, so its size is linear in the rows.
 */
static void deep_tree_json(void **state)
{
	static const enum hs_view_kind kinds[] = {
		HS_VIEW_CALLTREE, HS_VIEW_FLAME, HS_VIEW_CALLERS, HS_VIEW_CALLEES,
	};
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	size_t k, len, i, widest, col;
	json_error_t jerr;

	(void)state;
	deep_source(&src, 20000);
	build_tree(&ct, &src, NAN);
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char *s, *compact;
		json_t *j;
		size_t leaves = 0;

		build_view(&v, &ct, kinds[k], hs_view_kind_has_focus(kinds[k]) ? "f9999" : NULL);
		s = capture(&v, hs_view_write_json);
		len = strlen(s);
		/* every line's indentation is capped */
		widest = 0;
		for (i = 0, col = 0; i < len; i++) {
			if (s[i] == '\n') {
				col = 0;
				continue;
			}
			if (col == (size_t)-1)
				continue;
			if (s[i] == ' ') {
				col++;
				if (col > widest)
					widest = col;
			} else {
				col = (size_t)-1;
			}
		}
		assert_int_equal(widest, 2 * HS_VIEW_JSON_MAX_INDENT);
		assert_true(len < 3000 * v.nr_rows);
		/* jansson parses no more than 2048 levels: check the document's
		 * nesting by hand, and the compact form's rows by count */
		compact = hs_view_json_dump(&v, JSON_COMPACT, &len);
		assert_non_null(compact);
		for (i = 0; i + 14 < len; i++)
			if (!memcmp(compact + i, "\"children\":[]}", 14))
				leaves++;
		assert_int_equal(leaves, 1);
		assert_int_equal(compact[len - 1], '}');
		{
			size_t d = 0, most = 0;
			int in_str = 0;

			for (i = 0; i < len; i++) {
				char c = compact[i];

				if (in_str) {
					if (c == '\\')
						i++;
					else if (c == '"')
						in_str = 0;
					continue;
				}
				if (c == '"')
					in_str = 1;
				else if (c == '{' || c == '[')
					d++, most = d > most ? d : most;
				else if (c == '}' || c == ']')
					d--;
			}
			assert_int_equal(d, 0);
			assert_true(most >= 2 * v.nr_rows);
		}
		j = json_loadb(compact, len, 0, &jerr);
		assert_null(j);	/* too deep for jansson, as said in views.h */
		assert_null(hs_view_json(&v));
		hs_free(compact);
		free(s);
		hs_view_release(&v);
	}
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

static void text_and_csv(void **state)
{
	struct hs_stack_source src;
	struct hs_calltree ct;
	struct hs_view v;
	struct hs_view_opts o = { .kind = HS_VIEW_BYNAME, .limit = 2 };
	char *s;

	(void)state;
	recursion_source(&src);
	build_tree(&ct, &src, NAN);
	assert_int_equal(hs_view_build(&v, &ct, &o), 0);
	s = capture(&v, hs_view_write_text);
	assert_string_equal(s,
		"Totals Metric: 15  Count: 4  Samples: 4  First: 0.000  Last: 30.000"
		"  Last-First: 30.000  Metric/Interval: 0.50  TimeBucket: 0.938\n"
		"\n"
		"Name  Exc %  Exc  Exc Ct  Inc %  Inc  Inc Ct  Fold  When      "
		"                         First    Last\n"
		"E      53.3    8       1   53.3    8       1     0  ________________"
		"_______________K  30.000  30.000\n"
		"B      26.7    4       1   46.7    7       3     0  2_________5_____"
		"_____A__________   0.000  20.000\n"
		"(2 of 6 rows shown)\n");
	free(s);
	s = capture(&v, hs_view_write_csv);
	assert_string_equal(s,
		"Name,Exc %,Exc,Exc Ct,Inc %,Inc,Inc Ct,Fold,Fold Ct,Inc Avg,When,First,Last\n"
		"E,53.333333333333336,8,1,53.333333333333336,8,1,0,0,8,"
		"_______________________________K,30.000000,30.000000\n"
		"B,26.666666666666668,4,1,46.666666666666664,7,3,0,0,2.3333333333333335,"
		"2_________5__________A__________,0.000000,20.000000\n");
	free(s);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);

	/* names: a trailing " {...}" is left out for display; CSV quotes
	 * commas and quotes */
	hs_source_init(&src);
	add(&src, 0, 1.5, 1, "List {T1}");
	add(&src, 0, 1, 1, "f(a, \"b\")");
	build_tree(&ct, &src, NAN);
	build_view(&v, &ct, HS_VIEW_BYNAME, NULL);
	s = capture(&v, hs_view_write_csv);
	assert_non_null(strstr(s, "\nList,"));
	assert_non_null(strstr(s, "\n\"f(a, \"\"b\"\")\","));
	free(s);
	s = capture(&v, hs_view_write_text);
	assert_non_null(strstr(s, "\nList   "));
	assert_non_null(strstr(s, " 1.5 "));	/* a column with fractions gets a decimal */
	free(s);
	hs_view_release(&v);
	hs_calltree_release(&ct);
	hs_source_release(&src);
}

/* "<…>" for template arguments; operators' brackets and "->" are kept. */
static void short_templates(void **state)
{
	static const char *const cases[][2] = {
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)",
		  "std::vector<\xe2\x80\xa6>::push_back(int const&)" },
		{ "m!f<(a<b)>(std::map<K, V>)", "m!f<\xe2\x80\xa6>(std::map<\xe2\x80\xa6>)" },
		{ "X::operator<<(int)", "X::operator<<(int)" },
		{ "X::operator<<<int>(int)", "X::operator<<<\xe2\x80\xa6>(int)" },
		{ "g<decltype(p->x)>()", "g<\xe2\x80\xa6>()" },
		{ "unbalanced<a", "unbalanced<a" },
		{ "plain", "plain" },
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct hs_buf b = HS_BUF_INIT;

		assert_int_equal(hs_view_short_templates(&b, cases[k][0], strlen(cases[k][0])), 0);
		assert_non_null(b.s);
		assert_string_equal(b.s, cases[k][1]);
		hs_buf_release(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(byname_json),
		cmocka_unit_test(tree_json_nests_children),
		cmocka_unit_test(dump_matches_jansson),
		cmocka_unit_test(deep_tree_json),
		cmocka_unit_test(text_and_csv),
		cmocka_unit_test(short_templates),
	};
	return cmocka_run_group_tests_name("report_json", tests, NULL, NULL);
}
