#ifndef HS_CLI_PARSE_OPTIONS_H
#define HS_CLI_PARSE_OPTIONS_H
#include <stddef.h>
#include <stdio.h>
#include "common/log.h"

/*
 * parse_options - options as data: one table per command both parses the
 * command line and prints the usage, as git's parse-options does.
 *
 * A command describes its syntax once, in a static struct cli_syntax: the
 * usage lines, the prose around the options and the option table. Each
 * option names a field of the command's own options struct by offset, so
 * the table needs no storage of its own and `heapscope help CMD` prints
 * it without running the command.
 *
 * Parsing follows getopt_long's rules: "-o V", "-oV", bundled flags
 * ("-qf"), "--name V", "--name=V", a long name may be shortened to a
 * unique prefix, "--" ends the options, "-" is an operand, and options may
 * come after operands unless CLI_SYNTAX_STOP_AT_OPERAND. "-h" and "--help"
 * print the usage. Values stay argv's strings (borrowed), except that a
 * CLI_OPTION_STRING_LIST field owns its array (cli_string_list_release()).
 *
 * Errors are usage errors printed through cli_usage_error(), naming the
 * option: "unknown option '--x'", "option '--limit' needs a value".
 */

enum cli_option_kind {
	CLI_OPTION_END = 0,	/* ends the table */
	CLI_OPTION_TEXT,	/* a paragraph of the help between options */
	CLI_OPTION_FLAG,	/* no value: the int field is set to .value */
	CLI_OPTION_BIT,		/* no value: .value is or'ed into the unsigned field */
	CLI_OPTION_STRING,	/* a value: the const char * field points to it */
	CLI_OPTION_STRING_LIST, /* a value, repeatable: appended to a cli_string_list */
	CLI_OPTION_ULONG,	/* a whole number into the unsigned long field */
	CLI_OPTION_DOUBLE,	/* a number into the double field */
	CLI_OPTION_CALLBACK,	/* .cb gets the field and the value (NULL: none) */
};

enum cli_option_flags {
	/* the value is optional and only given as --name=VALUE ("--cpu[=HZ]") */
	CLI_OPTION_OPTIONAL_VALUE = 1 << 0,
	/* a CLI_OPTION_CALLBACK that takes no value */
	CLI_OPTION_NO_VALUE = 1 << 1,
};

struct cli_option;
/*
 * A callback option: @field is the command's options struct plus the
 * option's offset, @arg its value (NULL when it takes or got none).
 * Returns 0, or the exit status after printing why (cli_usage_error()).
 */
typedef int cli_option_fn(const char *cmd, const struct cli_option *opt, void *field,
			  const char *arg);

struct cli_option {
	enum cli_option_kind kind;
	char short_name;       /* 'o' for -o; 0: none */
	const char *long_name; /* "output" for --output; NULL: none */
	size_t offset;	       /* of the field in the command's options struct */
	const char *arg_name;  /* "FILE" in the help; NULL for flags */
	const char *help;      /* may hold '\n' for more lines; TEXT: the paragraph */
	unsigned flags;	       /* enum cli_option_flags */
	long value;	       /* FLAG, BIT: what is stored; CALLBACK: the callback's */
	cli_option_fn *cb;     /* CALLBACK only */
};

/* Repeated values (--debug-dir DIR...): an owned array of borrowed strings. */
struct cli_string_list {
	const char **v;
	size_t nr, alloc;
};
void cli_string_list_release(struct cli_string_list *l);

#define OPT_END()                                                                        \
	{                                                                                \
		.kind = CLI_OPTION_END                                                   \
	}
#define OPT_TEXT(text)                                                                   \
	{                                                                                \
		.kind = CLI_OPTION_TEXT, .help = (text)                                  \
	}
#define OPT_FLAG(s, l, type, member, h)                                                  \
	{                                                                                \
		CLI_OPTION_FLAG, (s), (l), offsetof(type, member), NULL, (h), 0, 1, NULL \
	}
#define OPT_SET_INT(s, l, type, member, v, h)                                            \
	{                                                                                \
		CLI_OPTION_FLAG, (s), (l), offsetof(type, member), NULL, (h), 0, (v),    \
		    NULL                                                                 \
	}
#define OPT_BIT(s, l, type, member, bit, h)                                              \
	{                                                                                \
		CLI_OPTION_BIT, (s), (l), offsetof(type, member), NULL, (h), 0, (bit),   \
		    NULL                                                                 \
	}
#define OPT_STRING(s, l, type, member, a, h)                                             \
	{                                                                                \
		CLI_OPTION_STRING, (s), (l), offsetof(type, member), (a), (h), 0, 0,     \
		    NULL                                                                 \
	}
#define OPT_STRING_LIST(s, l, type, member, a, h)                                        \
	{                                                                                \
		CLI_OPTION_STRING_LIST, (s), (l), offsetof(type, member), (a), (h), 0,   \
		    0, NULL                                                              \
	}
#define OPT_ULONG(s, l, type, member, a, h)                                              \
	{                                                                                \
		CLI_OPTION_ULONG, (s), (l), offsetof(type, member), (a), (h), 0, 0, NULL \
	}
#define OPT_DOUBLE(s, l, type, member, a, h)                                             \
	{                                                                                \
		CLI_OPTION_DOUBLE, (s), (l), offsetof(type, member), (a), (h), 0, 0,     \
		    NULL                                                                 \
	}
#define OPT_CALLBACK(s, l, type, member, a, h, fn, v)                                    \
	{                                                                                \
		CLI_OPTION_CALLBACK, (s), (l), offsetof(type, member), (a), (h), 0, (v), \
		    (fn)                                                                 \
	}
#define OPT_CALLBACK_F(s, l, type, member, a, h, fn, v, f)                               \
	{                                                                                \
		CLI_OPTION_CALLBACK, (s), (l), offsetof(type, member), (a), (h), (f),    \
		    (v), (fn)                                                            \
	}

enum cli_syntax_flags {
	/* the first operand ends the options (`run -- CMD ARGS`: CMD's own) */
	CLI_SYNTAX_STOP_AT_OPERAND = 1 << 0,
};

/* A command's syntax: what `heapscope help CMD` prints, and what it parses. */
struct cli_syntax {
	const char *cmd;		  /* "report" */
	const char *usage;		  /* "usage: heapscope report FILE ...\n" lines */
	const char *intro;		  /* paragraphs before the options, or NULL */
	const struct cli_option *options; /* ended by OPT_END() */
	const char *outro;		  /* paragraphs after the options, or NULL */
	unsigned flags;			  /* enum cli_syntax_flags */
	int help_column;		  /* where option help starts; 0: 20 */
};

/*
 * Print @s's help to @out: usage, intro, one entry per option (its
 * synopsis, then its help from help_column on), outro.
 */
void cli_syntax_print(const struct cli_syntax *s, FILE *out);

/*
 * Parse @argv (argv[0] is the command's name) by @s into @opts, the
 * command's options struct. Returns the number N of operands, moved to
 * argv[0..N-1] in their order, argv[N] set to NULL; or -1 when the command must stop and
 * return *@status: HS_EXIT_OK after printing the help, HS_EXIT_USAGE (or
 * what a callback returned) after printing the error.
 */
HS_MUST_CHECK
int cli_parse_options(const struct cli_syntax *s, void *opts, int argc, char **argv,
		      int *status);
#endif
