/*
 * test_parse_options - cli/parse_options: a table parses getopt_long's
 * syntax into a struct by offsets, errors name the option, and the help
 * printed from the same table lists every option.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "cli/cli.h"
#include "cli/parse_options.h"

struct opts {
	const char *out, *from;
	int force, quiet;
	unsigned bits;
	unsigned long top;
	double pct;
	unsigned long hz;
	struct cli_string_list dirs;
	int cb_calls;
};

static int hz_cb(const char *cmd, const struct cli_option *opt, void *field, const char *arg)
{
	unsigned long *hz = field;

	(void)opt;
	*hz = 999;
	if (arg && cli_parse_ulong(cmd, "--cpu", arg, hz))
		return HS_EXIT_USAGE;
	return 0;
}

static int count_cb(const char *cmd, const struct cli_option *opt, void *field,
		    const char *arg)
{
	(void)cmd;
	(void)arg;
	*(int *)field += (int)opt->value;
	return 0;
}

static const struct cli_option options[] = {
	OPT_STRING('o', "output", struct opts, out, "OUT", "where to write"),
	OPT_STRING(0, "from", struct opts, from, "FMT", "input format\nsecond line"),
	OPT_FLAG('f', "force", struct opts, force, "overwrite"),
	OPT_SET_INT('q', "quiet", struct opts, quiet, 3, "say less"),
	OPT_BIT(0, "no-a", struct opts, bits, 1, "no a"),
	OPT_BIT(0, "no-b", struct opts, bits, 4, "no b"),
	OPT_ULONG(0, "top", struct opts, top, "N", "entries"),
	OPT_DOUBLE(0, "fold-pct", struct opts, pct, "P", "percent"),
	OPT_STRING_LIST(0, "debug-dir", struct opts, dirs, "DIR", "look there"),
	OPT_CALLBACK_F(0, "cpu", struct opts, hz, "HZ", "sample", hz_cb, 0,
		       CLI_OPTION_OPTIONAL_VALUE),
	OPT_CALLBACK_F(0, "count", struct opts, cb_calls, NULL, "count", count_cb, 2,
		       CLI_OPTION_NO_VALUE),
	OPT_TEXT("A paragraph between the options.\n"),
	OPT_END(),
};

static const struct cli_syntax syntax = {
	.cmd = "demo",
	.usage = "usage: heapscope demo IN [-o OUT]\n",
	.intro = "Intro text.\n",
	.options = options,
	.outro = "Outro text.\n",
};

static const struct cli_syntax stop_syntax = {
	.cmd = "demo",
	.usage = "usage: heapscope demo [-q] CMD [ARGS...]\n",
	.options = options,
	.flags = CLI_SYNTAX_STOP_AT_OPERAND,
};

/* Run the parser on the NULL-terminated words; stderr goes to @err (may be NULL). */
static int parse(const struct cli_syntax *s, struct opts *o, char **argv, int *status,
		 char *err, size_t n)
{
	int argc = 0, saved = dup(2), ret;
	FILE *tmp = tmpfile();

	assert_non_null(tmp);
	while (argv[argc])
		argc++;
	fflush(stderr);
	dup2(fileno(tmp), 2);
	ret = cli_parse_options(s, o, argc, argv, status);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (err) {
		size_t got;

		rewind(tmp);
		got = fread(err, 1, n - 1, tmp);
		err[got] = '\0';
	}
	fclose(tmp);
	return ret;
}

static void values_and_operands(void **state)
{
	struct opts o = { 0 };
	char *argv[] = { "demo", "a.folded", "-o", "x.xml", "--from=perf", "-fq", "--top", "12",
			 "b", "--fold-pct", "2.5", "--no-b", "--no-a", "--debug-dir", "d1",
			 "--debug-dir=d2", "-", "--cpu", "--count", "--count", "--", "--top",
			 NULL };
	int status = -7, n;

	(void)state;
	n = parse(&syntax, &o, argv, &status, NULL, 0);
	assert_int_equal(n, 4);
	assert_int_equal(status, -7);
	assert_string_equal(argv[0], "a.folded");
	assert_string_equal(argv[1], "b");
	assert_string_equal(argv[2], "-");
	assert_string_equal(argv[3], "--top");
	assert_string_equal(o.out, "x.xml");
	assert_string_equal(o.from, "perf");
	assert_int_equal(o.force, 1);
	assert_int_equal(o.quiet, 3);
	assert_int_equal(o.bits, 5);
	assert_int_equal(o.top, 12);
	assert_true(o.pct == 2.5);
	assert_int_equal(o.dirs.nr, 2);
	assert_string_equal(o.dirs.v[0], "d1");
	assert_string_equal(o.dirs.v[1], "d2");
	assert_int_equal(o.hz, 999);
	assert_int_equal(o.cb_calls, 4);
	cli_string_list_release(&o.dirs);
}

static void attached_values_and_prefixes(void **state)
{
	struct opts o = { 0 };
	char *argv[] = { "demo", "-oout.json", "--cpu=250", "--fro", "xml", "--fold", "7",
			 NULL };
	int status = 0;

	(void)state;
	assert_int_equal(parse(&syntax, &o, argv, &status, NULL, 0), 0);
	assert_string_equal(o.out, "out.json");
	assert_int_equal(o.hz, 250);
	assert_string_equal(o.from, "xml");
	assert_true(o.pct == 7);
}

static void a_value_may_start_with_a_dash(void **state)
{
	struct opts o = { 0 };
	char *argv[] = { "demo", "-o", "-", "--from", "--x", NULL };
	int status = 0;

	(void)state;
	assert_int_equal(parse(&syntax, &o, argv, &status, NULL, 0), 0);
	assert_string_equal(o.out, "-");
	assert_string_equal(o.from, "--x");
}

static void stop_at_the_first_operand(void **state)
{
	struct opts o = { 0 };
	char *argv[] = { "demo", "-q", "prog", "-f", "--top", "x", NULL };
	int status = 0;

	(void)state;
	assert_int_equal(parse(&stop_syntax, &o, argv, &status, NULL, 0), 4);
	assert_int_equal(o.quiet, 3);
	assert_int_equal(o.force, 0);
	assert_string_equal(argv[0], "prog");
	assert_string_equal(argv[1], "-f");
	assert_string_equal(argv[3], "x");
	assert_null(argv[4]);
}

/* Each bad command line: exit 2 and a message naming the option. */
static void errors_name_the_option(void **state)
{
	static const struct {
		char *argv[4];
		const char *msg;
	} cases[] = {
		{ { "demo", "--frobnicate", NULL }, "unknown option '--frobnicate'" },
		{ { "demo", "--frobnicate=1", NULL }, "unknown option '--frobnicate'" },
		{ { "demo", "-x", NULL }, "unknown option '-x'" },
		{ { "demo", "-fx", NULL }, "unknown option '-x'" },
		{ { "demo", "--no", NULL }, "ambiguous option '--no'" },
		{ { "demo", "a", "--top", NULL }, "option '--top' needs a value" },
		{ { "demo", "-o", NULL }, "option '-o' needs a value" },
		{ { "demo", "--force=yes", NULL }, "option '--force' takes no value" },
		{ { "demo", "--top", "ten", NULL }, "--top expects a whole number, not 'ten'" },
		{ { "demo", "--top", "-3", NULL }, "--top expects a whole number, not '-3'" },
		{ { "demo", "--fold-pct=x", NULL }, "--fold-pct expects a number, not 'x'" },
		{ { "demo", "--cpu=fast", NULL }, "--cpu expects a whole number, not 'fast'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct opts o = { 0 };
		char *argv[4], err[512];
		int status = 0;

		memcpy(argv, cases[i].argv, sizeof(argv));
		assert_int_equal(parse(&syntax, &o, argv, &status, err, sizeof(err)), -1);
		assert_int_equal(status, HS_EXIT_USAGE);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
		assert_non_null(strstr(err, "heapscope demo: "));
		assert_non_null(strstr(err, "See 'heapscope demo --help'."));
		cli_string_list_release(&o.dirs);
	}
}

static void help_stops_parsing(void **state)
{
	char *words[][3] = {
		{ "demo", "--help", NULL }, { "demo", "-h", NULL }, { "demo", "--he", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct opts o = { 0 };
		int status = -7, saved = dup(1);
		FILE *null = fopen("/dev/null", "w");

		fflush(stdout);
		dup2(fileno(null), 1);
		assert_int_equal(parse(&syntax, &o, words[i], &status, NULL, 0), -1);
		fflush(stdout);
		dup2(saved, 1);
		close(saved);
		fclose(null);
		assert_int_equal(status, HS_EXIT_OK);
	}
}

static void help_lists_every_option(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	cli_syntax_print(&syntax, f);
	fclose(f);
	assert_string_equal(buf,
		"usage: heapscope demo IN [-o OUT]\n"
		"\n"
		"Intro text.\n"
		"\n"
		"  -o, --output OUT  where to write\n"
		"      --from FMT    input format\n"
		"                    second line\n"
		"  -f, --force       overwrite\n"
		"  -q, --quiet       say less\n"
		"      --no-a        no a\n"
		"      --no-b        no b\n"
		"      --top N       entries\n"
		"      --fold-pct P  percent\n"
		"      --debug-dir DIR\n"
		"                    look there\n"
		"      --cpu[=HZ]    sample\n"
		"      --count       count\n"
		"A paragraph between the options.\n"
		"\n"
		"Outro text.\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_and_operands),
		cmocka_unit_test(attached_values_and_prefixes),
		cmocka_unit_test(a_value_may_start_with_a_dash),
		cmocka_unit_test(stop_at_the_first_operand),
		cmocka_unit_test(errors_name_the_option),
		cmocka_unit_test(help_stops_parsing),
		cmocka_unit_test(help_lists_every_option),
	};
	return cmocka_run_group_tests_name("parse_options", tests, NULL, NULL);
}
