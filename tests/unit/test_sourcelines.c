/*
 * Tests of a function's cost per source line: inclusive once per sample
 * and line (recursion), exclusive at the innermost frame when the
 * filtered leaf is the function, inlined copies, the filter's window and
 * FoldPats, frames without a location, and reading source files.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "analysis/calltree.h"
#include "analysis/sourcelines.h"
#include "common/alloc.h"

static uint32_t frame(struct hs_stack_source *s, const char *name)
{
	uint32_t f;

	assert_int_equal(hs_source_intern_frame(s, name, strlen(name), &f), 0);
	return f;
}

static uint32_t loc(struct hs_stack_source *s, const char *file, uint32_t line)
{
	uint32_t l;

	assert_int_equal(hs_source_intern_loc(s, file, strlen(file), line, &l), 0);
	return l;
}

static uint32_t push(struct hs_stack_source *s, uint32_t caller, uint32_t f, uint32_t l)
{
	uint32_t st;

	assert_int_equal(hs_source_intern_stack_loc(s, f, caller, l, &st), 0);
	return st;
}

/*
 * main (a.c:1) -> f (a.c:10) -> malloc                       1 ms, 100 bytes
 * main (a.c:2) -> f (a.c:11) -> malloc                       2 ms,  40 bytes
 * main (a.c:2) -> f (a.c:11) -> f (a.c:11) -> malloc         3 ms,   5 bytes (recursion)
 * main (a.c:3) -> g (a.c:20) -> f (inline) (h.h:7) -> malloc 4 ms,   7 bytes
 * main (a.c:4) -> f (no location) -> malloc                  5 ms,   1 byte
 * main (a.c:5) -> g (a.c:21) -> malloc                       6 ms,   2 bytes
 */
static void build(struct hs_stack_source *s)
{
	uint32_t m, f, fi, g, mal, st, fs, ff;

	hs_source_init(s);
	m = frame(s, "/bin/app!main");
	f = frame(s, "/bin/app!f");
	fi = frame(s, "/bin/app!f (inline)");
	g = frame(s, "/bin/app!g");
	mal = frame(s, "/lib/libc.so.6!malloc");
	st = push(s, HS_NO_STACK, m, loc(s, "/src/a.c", 1));
	fs = push(s, st, f, loc(s, "/src/a.c", 10));
	assert_int_equal(hs_source_add_sample(s, 1000000, 100, 1, push(s, fs, mal, 0)), 0);
	st = push(s, HS_NO_STACK, m, loc(s, "/src/a.c", 2));
	fs = push(s, st, f, loc(s, "/src/a.c", 11));
	assert_int_equal(hs_source_add_sample(s, 2000000, 40, 1, push(s, fs, mal, 0)), 0);
	ff = push(s, fs, f, loc(s, "/src/a.c", 11));
	assert_int_equal(hs_source_add_sample(s, 3000000, 5, 1, push(s, ff, mal, 0)), 0);
	st = push(s, HS_NO_STACK, m, loc(s, "/src/a.c", 3));
	st = push(s, st, g, loc(s, "/src/a.c", 20));
	st = push(s, st, fi, loc(s, "/src/h.h", 7));
	assert_int_equal(hs_source_add_sample(s, 4000000, 7, 1, push(s, st, mal, 0)), 0);
	st = push(s, HS_NO_STACK, m, loc(s, "/src/a.c", 4));
	st = push(s, st, f, 0);
	assert_int_equal(hs_source_add_sample(s, 5000000, 1, 1, push(s, st, mal, 0)), 0);
	st = push(s, HS_NO_STACK, m, loc(s, "/src/a.c", 5));
	st = push(s, st, g, loc(s, "/src/a.c", 21));
	assert_int_equal(hs_source_add_sample(s, 6000000, 2, 1, push(s, st, mal, 0)), 0);
}

static void line_is(const struct hs_source_file *f, size_t i, uint32_t line, double inc,
		    double inc_count, double exc, double exc_count)
{
	assert_true(i < f->nr);
	assert_int_equal(f->lines[i].line, line);
	assert_true(f->lines[i].inc == inc);
	assert_true(f->lines[i].inc_count == inc_count);
	assert_true(f->lines[i].exc == exc);
	assert_true(f->lines[i].exc_count == exc_count);
}

static void folded_allocator(void **state)
{
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_stack_source src;
	struct hs_source_lines sl;

	(void)state;
	build(&src);
	p.fold = "malloc";
	assert_int_equal(hs_source_lines_build(&src, &p, "f", &sl, &diag), 0);
	assert_int_equal(sl.nr_names, 2);
	assert_string_equal(sl.names[0], "app!f");
	assert_string_equal(sl.names[1], "app!f (inline)");
	assert_true(sl.total == 155);
	assert_true(sl.inc == 153 && sl.inc_count == 5);
	assert_true(sl.exc == 153 && sl.exc_count == 5);
	/* a.c: line 10 and 11 (the recursion counted once); then h.h; then
	 * the frame without a location */
	assert_int_equal(sl.nr_files, 3);
	assert_string_equal(sl.files[0].path, "/src/a.c");
	assert_int_equal(sl.files[0].nr, 2);
	line_is(&sl.files[0], 0, 10, 100, 1, 100, 1);
	line_is(&sl.files[0], 1, 11, 45, 2, 45, 2);
	assert_string_equal(sl.files[1].path, "/src/h.h");
	line_is(&sl.files[1], 0, 7, 7, 1, 7, 1);
	assert_null(sl.files[2].path);
	line_is(&sl.files[2], 0, 0, 1, 1, 1, 1);
	hs_source_lines_release(&sl);

	/* g: its own allocation at 21 and the inlined f's call at 20 */
	assert_int_equal(hs_source_lines_build(&src, &p, "app!g", &sl, &diag), 0);
	assert_int_equal(sl.nr_files, 1);
	line_is(&sl.files[0], 0, 20, 7, 1, 0, 0);
	line_is(&sl.files[0], 1, 21, 2, 1, 2, 1);
	hs_source_lines_release(&sl);

	/* main: every line inclusive, nothing exclusive */
	assert_int_equal(hs_source_lines_build(&src, &p, "/bin/app!main", &sl, &diag), 0);
	assert_int_equal(sl.files[0].nr, 5);
	line_is(&sl.files[0], 1, 2, 45, 2, 0, 0);
	assert_true(sl.exc == 0 && sl.inc == 155);
	hs_source_lines_release(&sl);
	hs_source_release(&src);
}

static void unfolded_window_and_errors(void **state)
{
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_stack_source src, plain;
	struct hs_source_lines sl;
	uint32_t f;

	(void)state;
	build(&src);
	/* without the fold malloc is the leaf: no exclusive cost for f */
	p.start_ms = 1.5;
	p.end_ms = 3.5;
	assert_int_equal(hs_source_lines_build(&src, &p, "f", &sl, &diag), 0);
	assert_true(sl.total == 45 && sl.inc == 45 && sl.exc == 0);
	assert_int_equal(sl.nr_files, 1);
	line_is(&sl.files[0], 0, 11, 45, 2, 0, 0);
	hs_source_lines_release(&sl);
	/* an ExcPats that drops the inlined copy's sample */
	p = (struct hs_filter_params)HS_FILTER_PARAMS_INIT;
	p.exc = "app!g";
	assert_int_equal(hs_source_lines_build(&src, &p, "f", &sl, &diag), 0);
	assert_true(sl.inc == 146);
	hs_source_lines_release(&sl);
	p.exc = "@(";
	assert_int_equal(hs_source_lines_build(&src, &p, "f", &sl, &diag), -EINVAL);
	p.exc = NULL;
	diag = (struct hs_diag)HS_DIAG_INIT(NULL);
	assert_int_equal(hs_source_lines_build(&src, &p, "nothing", &sl, &diag), -ENOENT);
	assert_non_null(strstr(diag.msg, "'nothing'"));
	hs_source_release(&src);
	/* a source without locations */
	hs_source_init(&plain);
	f = frame(&plain, "x!f");
	assert_int_equal(hs_source_add_sample(&plain, 0, 1, 1, push(&plain, HS_NO_STACK, f, 0)),
			 0);
	assert_int_equal(hs_source_lines_build(&plain, &p, "f", &sl, &diag), -ENODATA);
	hs_source_release(&plain);
}

/* A frame at a location: "name@file:line" or "name" (none). */
static uint32_t push_spec(struct hs_stack_source *s, uint32_t caller, const char *spec)
{
	char name[64], file[64];
	uint32_t l = 0, line = 0;
	const char *at = strchr(spec, '@');

	snprintf(name, sizeof(name), "%.*s", at ? (int)(at - spec) : (int)strlen(spec), spec);
	if (at) {
		assert_int_equal(sscanf(at + 1, "%63[^:]:%u", file, &line), 2);
		l = loc(s, file, line);
	}
	return push(s, caller, frame(s, name), l);
}

/* A sample at @t_ms of @metric on the stack of @n specs, root first. */
static void sample(struct hs_stack_source *s, double t_ms, double metric, int n, ...)
{
	uint32_t stack = HS_NO_STACK;
	va_list ap;

	va_start(ap, n);
	while (n--)
		stack = push_spec(s, stack, va_arg(ap, const char *));
	va_end(ap);
	assert_int_equal(hs_source_add_sample(s, (int64_t)(t_ms * 1e6), metric, 1, stack), 0);
}

/* The source of the call tree tests (no allocator: f is often the leaf). */
static void tree_source(struct hs_stack_source *s)
{
	hs_source_init(s);
	sample(s, 0, 2, 2, "/bin/app!main@main.c:10", "/bin/app!f@f.c:5");
	sample(s, 10, 3, 3, "/bin/app!main@main.c:10", "/bin/app!f@f.c:6", "/bin/app!g@g.c:1");
	sample(s, 20, 4, 2, "/bin/app!main@main.c:11", "/bin/app!f@f.c:6");
	sample(s, 30, 5, 3, "/bin/app!main@main.c:12", "/bin/app!f@f.c:7", "/bin/app!f@f.c:8");
	sample(s, 40, 1, 2, "/bin/app!main", "/bin/app!f");
}

/* The lines of @name over the samples @ct's filter keeps (the GUI's way). */
static void tree_lines(const struct hs_stack_source *s, const struct hs_view_params *p,
		       const char *name, struct hs_source_lines *sl)
{
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_calltree ct;

	assert_int_equal(hs_calltree_build(&ct, s, p, NULL), 0);
	assert_int_equal(hs_source_lines_filtered(&ct.f, name, sl, &diag), 0);
	hs_calltree_release(&ct);
}

/* Through a call tree's filter: the numbers of hs_source_lines_build(). */
static void call_tree_filter(void **state)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_stack_source s;
	struct hs_source_lines sl;
	struct hs_calltree ct;

	(void)state;
	tree_source(&s);
	tree_lines(&s, &p, "app!f", &sl);
	assert_true(sl.inc == 15 && sl.inc_count == 5 && sl.exc == 12 && sl.total == 15);
	assert_int_equal(sl.nr_files, 2);
	assert_string_equal(sl.files[0].path, "f.c");
	assert_int_equal(sl.files[0].nr, 4);
	line_is(&sl.files[0], 0, 5, 2, 1, 2, 1);
	line_is(&sl.files[0], 1, 6, 7, 2, 4, 1);
	line_is(&sl.files[0], 2, 7, 5, 1, 0, 0);
	line_is(&sl.files[0], 3, 8, 5, 1, 5, 1);
	assert_null(sl.files[1].path);
	line_is(&sl.files[1], 0, 0, 1, 1, 1, 1);
	hs_source_lines_release(&sl);
	tree_lines(&s, &p, "app!main", &sl);
	assert_int_equal(sl.nr_files, 2);
	assert_int_equal(sl.files[0].nr, 3);
	line_is(&sl.files[0], 0, 10, 5, 2, 0, 0);
	line_is(&sl.files[0], 2, 12, 5, 1, 0, 0);
	hs_source_lines_release(&sl);
	/* a window of 5-25 ms */
	p.filter.start_ms = 5;
	p.filter.end_ms = 25;
	tree_lines(&s, &p, "app!f", &sl);
	assert_true(sl.inc == 7 && sl.nr_files == 1 && sl.files[0].nr == 1);
	line_is(&sl.files[0], 0, 6, 7, 2, 4, 1);
	hs_source_lines_release(&sl);
	/* IncPats g */
	p.filter.start_ms = p.filter.end_ms = NAN;
	p.filter.inc = "g";
	tree_lines(&s, &p, "app!f", &sl);
	assert_true(sl.inc == 3 && sl.nr_files == 1 && sl.files[0].nr == 1);
	line_is(&sl.files[0], 0, 6, 3, 1, 0, 0);
	hs_source_lines_release(&sl);
	/* FoldPats g: g's cost is f's own, on the line that called it */
	p.filter.inc = NULL;
	p.filter.fold = "app!g";
	tree_lines(&s, &p, "app!f", &sl);
	line_is(&sl.files[0], 1, 6, 7, 2, 7, 2);
	hs_source_lines_release(&sl);
	/* a name no frame has */
	assert_int_equal(hs_calltree_build(&ct, &s, &p, NULL), 0);
	assert_int_equal(hs_source_lines_filtered(&ct.f, "app!nope", &sl, &diag), -ENOENT);
	hs_calltree_release(&ct);
	hs_source_release(&s);
}

/*
 * C++ and Rust functions by their bare names: one frame each (1 byte each
 * at line 1 of its own file), the names as the demangler writes them.
 */
static void bare_names(void **state)
{
	static const char *const fns[] = {
		"/bin/app!strings()",
		"/bin/app!std::vector<long, std::allocator<long> >* ns::fill<long>(int)",
		"/bin/app!ns::Widget::make(int) [clone .constprop.0]",
		"/bin/app!ns::Widget::make(int) (inline)",
		"/bin/app!void ns::put<int>(int)",
		"/bin/app!void ns::put<long>(long)",
		"/bin/app!ns::Foo::operator()(int) const",
		"/bin/app!ns::Foo::operator!=(ns::Foo const&) const",
		"/bin/app!std::__cxx11::basic_string<char, std::char_traits<char>, "
		"std::allocator<char> > ns::name[abi:cxx11](int)",
		"/lib/libother.so!strings()",
		"/bin/r!r::cache::insert",
		"/bin/r!<alloc::vec::Vec<u8>>::push",
		"/bin/r!main",
	};
	static const struct {
		const char *want;
		double inc;	/* the bytes of the frames that are it; 0: none */
		int err;
	} cases[] = {
		{ "strings", 2, 0 },		/* both modules' strings() */
		{ "app!strings", 1, 0 },
		{ "/bin/app!strings", 1, 0 },
		{ "libother.so!strings", 1, 0 },
		{ "fill", 1, 0 },
		{ "ns::fill", 1, 0 },
		{ "ns::fill<long>", 1, 0 },
		{ "fill<long>(int)", 1, 0 },
		{ "fill<int>", 0, -ENOENT },
		{ "s::fill", 0, -ENOENT },	/* components are whole */
		{ "make", 2, 0 },		/* a clone and an inlined copy */
		{ "Widget::make", 2, 0 },
		{ "ns::Widget::make(int)", 2, 0 },
		{ "put", 0, -EINVAL },		/* put<int> and put<long> */
		{ "ns::put", 0, -EINVAL },
		{ "put<int>", 1, 0 },
		{ "void ns::put<long>(long)", 1, 0 },	/* as shown */
		{ "operator()", 1, 0 },
		{ "Foo::operator()", 1, 0 },
		{ "Foo::operator!=", 1, 0 },	/* its '!' is not a module's */
		{ "app!ns::Foo::operator!=", 1, 0 },
		{ "name", 1, 0 },
		{ "insert", 1, 0 },
		{ "cache::insert", 1, 0 },
		{ "push", 1, 0 },
		{ "main", 1, 0 },
		{ "other!fill", 0, -ENOENT },
	};
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_stack_source src;
	struct hs_source_lines sl;
	size_t i;

	(void)state;
	hs_source_init(&src);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint32_t st = push(&src, HS_NO_STACK, frame(&src, fns[i]), loc(&src, fns[i], 1));

		assert_int_equal(hs_source_add_sample(&src, 0, 1, 1, st), 0);
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hs_diag diag = HS_DIAG_INIT(NULL);
		int err = hs_source_lines_build(&src, &p, cases[i].want, &sl, &diag);

		if (err != cases[i].err || (!err && sl.inc != cases[i].inc))
			print_error("%s: %d (%s), inc %g\n", cases[i].want, err, diag.msg,
				    err ? 0 : sl.inc);
		assert_int_equal(err, cases[i].err);
		if (!err)
			assert_true(sl.inc == cases[i].inc);
		if (err == -EINVAL) {
			/* the candidates, as they can be given */
			assert_non_null(strstr(diag.msg, "is ambiguous"));
			assert_non_null(strstr(diag.msg, ": void ns::put<int>(int); "));
			assert_non_null(strstr(diag.msg, "; void ns::put<long>(long) "));
		}
		hs_source_lines_release(&sl);
	}
	hs_source_release(&src);
}

static void json_and_text(void **state)
{
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	const struct hs_source_text *texts[3] = { NULL };
	struct hs_source_text t;
	struct hs_stack_source src;
	struct hs_source_lines sl;
	char dir[] = "/tmp/hs-srcXXXXXX", path[256], *s;
	const char *dirs[1];
	json_t *j;
	FILE *fp;

	(void)state;
	/* DIR/src/a.c stands for /src/a.c */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/src", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/src/a.c", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("l1\nl2\r\n\nl4", fp);
	fclose(fp);
	dirs[0] = dir;
	assert_int_equal(hs_source_text_load("/src/a.c", NULL, 0, HS_SOURCE_TEXT_MAX, &t), -ENOENT);
	/* 10 bytes: over a limit of 9 */
	assert_int_equal(hs_source_text_load("/src/a.c", dirs, 1, 9, &t), -EFBIG);
	assert_int_equal(hs_source_text_load("/src/a.c", dirs, 1, 10, &t), 0);
	assert_string_equal(t.path, path);
	assert_int_equal(t.nr, 4);
	assert_string_equal(t.line[1], "l2");
	assert_string_equal(t.line[2], "");
	assert_string_equal(t.line[3], "l4");
	hs_source_text_release(&t);
	/* the last part of the name alone, found under DIR/src */
	snprintf(path, sizeof(path), "%s/src", dir);
	dirs[0] = path;
	assert_int_equal(hs_source_text_load("/elsewhere/a.c", dirs, 1, HS_SOURCE_TEXT_MAX, &t),
			 0);
	texts[0] = &t;

	build(&src);
	p.fold = "malloc";
	assert_int_equal(hs_source_lines_build(&src, &p, "main", &sl, &diag), 0);
	j = hs_source_lines_json(&sl, texts, 0);
	assert_non_null(j);
	s = json_dumps(json_object_get(json_array_get(json_object_get(j, "files"), 0), "lines"),
		       JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s,
		"[{\"exc\":0.0,\"exc_count\":0.0,\"inc\":100.0,\"inc_count\":1.0,\"line\":1,"
		"\"text\":\"l1\"},"
		"{\"exc\":0.0,\"exc_count\":0.0,\"inc\":45.0,\"inc_count\":2.0,\"line\":2,"
		"\"text\":\"l2\"},"
		"{\"exc\":0.0,\"exc_count\":0.0,\"inc\":7.0,\"inc_count\":1.0,\"line\":3,"
		"\"text\":\"\"},"
		"{\"exc\":0.0,\"exc_count\":0.0,\"inc\":1.0,\"inc_count\":1.0,\"line\":4,"
		"\"text\":\"l4\"},"
		"{\"exc\":0.0,\"exc_count\":0.0,\"inc\":2.0,\"inc_count\":1.0,\"line\":5}]");
	free(s);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(j, "files"), 0), "path")), "/src/a.c");
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "files"), 0),
						 "found")));
	assert_true(json_real_value(json_object_get(j, "inc")) == 155);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "names"), 0)),
			    "app!main");
	json_decref(j);
	/* the whole text */
	j = hs_source_lines_json(&sl, texts, HS_SOURCE_JSON_WHOLE_TEXT);
	assert_non_null(j);
	s = json_dumps(json_object_get(json_array_get(json_object_get(j, "files"), 0), "text"),
		       JSON_COMPACT);
	assert_string_equal(s, "[\"l1\",\"l2\",\"\",\"l4\"]");
	free(s);
	json_decref(j);
	hs_source_lines_release(&sl);
	hs_source_release(&src);
	hs_source_text_release(&t);
	snprintf(path, sizeof(path), "%s/src/a.c", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/src", dir);
	rmdir(path);
	rmdir(dir);
}

/* A FIFO is not read (nor waited for); text that is not UTF-8 gets U+FFFD. */
static void fifo_and_bad_text(void **state)
{
	struct hs_line_cost lc = { .line = 1, .inc = 1, .inc_count = 1 };
	struct hs_source_file file = { .path = "b.c", .lines = &lc, .nr = 1, .inc = 1 };
	struct hs_source_lines sl = { .files = &file, .nr_files = 1, .inc = 1, .inc_count = 1 };
	const struct hs_source_text *texts[1];
	struct hs_source_text t;
	char dir[] = "/tmp/hs-srcXXXXXX", path[256], *s;
	json_t *j;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(hs_source_text_load(path, NULL, 0, HS_SOURCE_TEXT_MAX, &t), -ENOENT);
	unlink(path);
	snprintf(path, sizeof(path), "%s/b.c", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("a\xff\n", fp);
	fclose(fp);
	assert_int_equal(hs_source_text_load(path, NULL, 0, HS_SOURCE_TEXT_MAX, &t), 0);
	texts[0] = &t;
	j = hs_source_lines_json(&sl, texts, HS_SOURCE_JSON_WHOLE_TEXT);
	assert_non_null(j);
	s = json_dumps(json_array_get(json_object_get(j, "files"), 0), JSON_COMPACT | JSON_SORT_KEYS);
	assert_non_null(strstr(s, "\"text\":[\"a\xef\xbf\xbd\"]"));
	assert_non_null(strstr(s, "\"line\":1,\"text\":\"a\xef\xbf\xbd\"}"));
	free(s);
	json_decref(j);
	hs_source_text_release(&t);
	unlink(path);
	rmdir(dir);
}

static void out_of_memory(void **state)
{
	struct hs_filter_params p = HS_FILTER_PARAMS_INIT;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_stack_source src;
	struct hs_source_lines sl;
	long n;
	int err;

	(void)state;
	build(&src);
	p.fold = "malloc";
	for (n = 0;; n++) {
		hs_alloc_fail_after(n);
		err = hs_source_lines_build(&src, &p, "f", &sl, &diag);
		hs_alloc_fail_after(-1);
		if (!err)
			break;
		assert_int_equal(err, -ENOMEM);
	}
	assert_int_equal(sl.nr_files, 3);
	hs_source_lines_release(&sl);
	hs_source_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folded_allocator),
		cmocka_unit_test(unfolded_window_and_errors),
		cmocka_unit_test(call_tree_filter),
		cmocka_unit_test(bare_names),
		cmocka_unit_test(json_and_text),
		cmocka_unit_test(fifo_and_bad_text),
		cmocka_unit_test(out_of_memory),
	};
	return cmocka_run_group_tests_name("sourcelines", tests, NULL, NULL);
}
