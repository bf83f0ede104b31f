/*
 * main - heapscope's entry point: a git-style table of commands.
 *
 * Adding a command takes: a cmd_<name>.c exporting cmd_<name>(argc, argv)
 * and its syntax (usage and option table, cli/parse_options.h), their
 * declarations in cli.h, an entry in commands.inc, a section in
 * README.md, and a bats test in tests/integration/.
 */
#include "cli/cli.h"
#include "common/log.h"
#include <stdio.h>
#include <string.h>

#include "cli/commands.inc"

const struct hs_command *hs_command_find(const char *name)
{
	const struct hs_command *c;

	for (c = hs_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static void list_commands(FILE *out)
{
	const struct hs_command *c;

	fprintf(out, "usage: heapscope [--version] [-v] <command> [<args>]\n\n"
		     "commands:\n");
	for (c = hs_commands; c->name; c++)
		fprintf(out, "   %-12s %s\n", c->name, c->summary);
	fprintf(out,
		"\nSee 'heapscope help <command>' or 'heapscope <command> --help'.\n");
}

int cli_help(const char *cmd)
{
	const struct hs_command *c = hs_command_find(cmd);

	if (!c)
		return cli_usage_error("help", "'%s' is not a heapscope command", cmd);
	cli_syntax_print(c->syntax, stdout);
	return HS_EXIT_OK;
}

static const struct cli_option help_options[] = {
    OPT_END(),
};

const struct cli_syntax cli_help_syntax = {
    .cmd = "help",
    .usage = "usage: heapscope help [COMMAND]\n",
    .intro = "Without COMMAND, list the commands; with it, show its usage.\n",
    .options = help_options,
};

int cmd_help(int argc, char **argv)
{
	int n, status;

	n = cli_parse_options(&cli_help_syntax, NULL, argc, argv, &status);
	if (n < 0)
		return status;
	if (n > 1)
		return cli_usage_error("help", "too many arguments");
	if (n == 1)
		return cli_help(argv[0]);
	list_commands(stdout);
	return HS_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct hs_command *c;
	int ret;

	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--version")) {
			printf("heapscope %s\n", HS_VERSION);
			return HS_EXIT_OK;
		} else if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			list_commands(stdout);
			return HS_EXIT_OK;
		} else if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--verbose")) {
			hs_log_set_level(HS_LOG_DEBUG);
		} else {
			fprintf(stderr, "heapscope: unknown option '%s'\n", argv[1]);
			list_commands(stderr);
			return HS_EXIT_USAGE;
		}
		argc--;
		argv++;
	}
	if (argc < 2) {
		list_commands(stderr);
		return HS_EXIT_USAGE;
	}
	c = hs_command_find(argv[1]);
	if (!c) {
		fprintf(stderr,
			"heapscope: '%s' is not a heapscope command. "
			"See 'heapscope help'.\n",
			argv[1]);
		return HS_EXIT_USAGE;
	}
	ret = c->fn(argc - 1, argv + 1);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "heapscope: error: could not write to standard output\n");
		return HS_EXIT_FAIL;
	}
	return ret;
}
