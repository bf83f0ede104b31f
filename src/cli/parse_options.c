/*
 * parse_options - the option tables of the commands: parsing a command
 * line by one, printing the help from it; and what every option and
 * command shares: usage errors, failures and number parsing (cli.h).
 */
#include "cli/parse_options.h"
#include "cli/cli.h"
#include "common/alloc.h"
#include "common/escape.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "heapscope %s: ", cmd);
	va_start(ap, fmt);
	hs_escape_vprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nSee 'heapscope %s --help'.\n", cmd);
	return HS_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "heapscope: error: ");
	va_start(ap, fmt);
	hs_escape_vprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return HS_EXIT_FAIL;
}

int cli_parse_double(const char *cmd, const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v))
		return cli_usage_error(cmd, "%s expects a number, not '%s'", opt, arg);
	*out = v;
	return 0;
}

int cli_parse_ulong(const char *cmd, const char *opt, const char *arg, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (arg[0] == '-')
		return cli_usage_error(cmd, "%s expects a whole number, not '%s'", opt,
				       arg);
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end)
		return cli_usage_error(cmd, "%s expects a whole number, not '%s'", opt,
				       arg);
	*out = v;
	return 0;
}

void cli_string_list_release(struct cli_string_list *l)
{
	hs_free(l->v);
	l->v = NULL;
	l->nr = l->alloc = 0;
}

/* ---- help ---- */

static int takes_value(const struct cli_option *o)
{
	switch (o->kind) {
	case CLI_OPTION_STRING:
	case CLI_OPTION_STRING_LIST:
	case CLI_OPTION_ULONG:
	case CLI_OPTION_DOUBLE:
		return 1;
	case CLI_OPTION_CALLBACK:
		return !(o->flags & CLI_OPTION_NO_VALUE);
	default:
		return 0;
	}
}

static int has_short(const struct cli_option *opts)
{
	for (; opts->kind != CLI_OPTION_END; opts++)
		if (opts->kind != CLI_OPTION_TEXT && opts->short_name)
			return 1;
	return 0;
}

/* "-o, --output FILE", "    --cpu[=HZ]": the option's synopsis into @buf. */
static void synopsis(const struct cli_option *o, int indent_long, char *buf, size_t n)
{
	const char *arg = o->arg_name ? o->arg_name : "VALUE";
	int optional = (o->flags & CLI_OPTION_OPTIONAL_VALUE) != 0;
	char short_part[8] = "";

	if (o->short_name)
		snprintf(short_part, sizeof(short_part), "-%c%s", o->short_name,
			 o->long_name ? ", " : "");
	else if (indent_long)
		snprintf(short_part, sizeof(short_part), "    ");
	snprintf(buf, n, "%s%s%s", short_part, o->long_name ? "--" : "",
		 o->long_name ? o->long_name : "");
	if (takes_value(o))
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s%s",
			 optional ? "[=" : " ", arg, optional ? "]" : "");
}

void cli_syntax_print(const struct cli_syntax *s, FILE *out)
{
	int col = s->help_column ? s->help_column : 20, indent = 0;
	const struct cli_option *o;

	fputs(s->usage, out);
	if (s->intro)
		fprintf(out, "\n%s", s->intro);
	if (s->options && s->options->kind != CLI_OPTION_END) {
		indent = has_short(s->options);
		fputc('\n', out);
	}
	for (o = s->options; o && o->kind != CLI_OPTION_END; o++) {
		const char *h = o->help ? o->help : "";
		char syn[128];
		int width;

		if (o->kind == CLI_OPTION_TEXT) {
			fputs(h, out);
			continue;
		}
		synopsis(o, indent, syn, sizeof(syn));
		width = fprintf(out, "  %s", syn);
		if (width >= col && *h) {
			fputc('\n', out);
			width = 0;
		}
		while (*h) {
			const char *nl = strchr(h, '\n');
			int len = nl ? (int)(nl - h) : (int)strlen(h);

			fprintf(out, "%*s%.*s\n", col - width, "", len, h);
			width = 0;
			h += len + (nl != NULL);
		}
		if (!o->help || !*o->help)
			fputc('\n', out);
	}
	if (s->outro)
		fprintf(out, "\n%s", s->outro);
}

/* ---- parsing ---- */

/* The option @name (@len bytes) names: exact, else a unique prefix. */
static const struct cli_option *find_long(const struct cli_option *opts, const char *name,
					  size_t len, int *ambiguous)
{
	const struct cli_option *o, *prefix = NULL;
	int nr_prefix = 0;

	*ambiguous = 0;
	for (o = opts; o->kind != CLI_OPTION_END; o++) {
		if (o->kind == CLI_OPTION_TEXT || !o->long_name ||
		    strncmp(o->long_name, name, len))
			continue;
		if (!o->long_name[len])
			return o;
		prefix = o;
		nr_prefix++;
	}
	*ambiguous = nr_prefix > 1;
	return nr_prefix == 1 ? prefix : NULL;
}

static const struct cli_option *find_short(const struct cli_option *opts, char c)
{
	const struct cli_option *o;

	for (o = opts; o->kind != CLI_OPTION_END; o++)
		if (o->kind != CLI_OPTION_TEXT && o->short_name == c)
			return o;
	return NULL;
}

/* Store @arg (NULL for a flag) as @o says; @shown names the option in errors. */
static int apply(const char *cmd, const struct cli_option *o, void *opts, const char *arg,
		 const char *shown)
{
	void *field = (char *)opts + o->offset;

	switch (o->kind) {
	case CLI_OPTION_FLAG:
		*(int *)field = (int)o->value;
		return 0;
	case CLI_OPTION_BIT:
		*(unsigned *)field |= (unsigned)o->value;
		return 0;
	case CLI_OPTION_STRING:
		*(const char **)field = arg;
		return 0;
	case CLI_OPTION_STRING_LIST: {
		struct cli_string_list *l = field;
		const char **v = hs_grow(l->v, sizeof(*l->v), l->nr + 1, &l->alloc);

		if (!v)
			return cli_fail("out of memory");
		l->v = v;
		l->v[l->nr++] = arg;
		return 0;
	}
	case CLI_OPTION_ULONG:
		return cli_parse_ulong(cmd, shown, arg, field);
	case CLI_OPTION_DOUBLE:
		return cli_parse_double(cmd, shown, arg, field);
	case CLI_OPTION_CALLBACK:
		return o->cb(cmd, o, field, arg);
	default:
		return 0;
	}
}

/* "--name[=value]" at argv[*i]; may take argv[*i + 1] as its value. */
static int parse_long(const struct cli_syntax *s, void *opts, int argc, char **argv,
		      int *i)
{
	const char *a = argv[*i] + 2, *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	const struct cli_option *o;
	char shown[128];
	int ambiguous;

	o = find_long(s->options, a, len, &ambiguous);
	if (!o && !ambiguous && !eq && len && !strncmp("help", a, len))
		return -1; /* --help, or a prefix of it no option shares */
	if (!o)
		return cli_usage_error(s->cmd, "%s option '--%.*s'",
				       ambiguous ? "ambiguous" : "unknown", (int)len, a);
	snprintf(shown, sizeof(shown), "--%s", o->long_name);
	if (!takes_value(o)) {
		if (eq)
			return cli_usage_error(s->cmd, "option '%s' takes no value",
					       shown);
		return apply(s->cmd, o, opts, NULL, shown);
	}
	if (eq)
		return apply(s->cmd, o, opts, eq + 1, shown);
	if (o->flags & CLI_OPTION_OPTIONAL_VALUE)
		return apply(s->cmd, o, opts, NULL, shown);
	if (*i + 1 >= argc)
		return cli_usage_error(s->cmd, "option '%s' needs a value", shown);
	return apply(s->cmd, o, opts, argv[++*i], shown);
}

/* "-abc" or "-oVALUE" at argv[*i]; may take argv[*i + 1] as a value. */
static int parse_short(const struct cli_syntax *s, void *opts, int argc, char **argv,
		       int *i)
{
	const char *a = argv[*i] + 1;
	int err;

	for (; *a; a++) {
		const struct cli_option *o = find_short(s->options, *a);
		char shown[3] = {'-', *a, '\0'};

		if (*a == 'h' && !o)
			return -1;
		if (!o)
			return cli_usage_error(s->cmd, "unknown option '-%c'", *a);
		if (!takes_value(o) || (o->flags & CLI_OPTION_OPTIONAL_VALUE)) {
			err = apply(s->cmd, o, opts, NULL, shown);
			if (err)
				return err;
			continue;
		}
		if (a[1])
			return apply(s->cmd, o, opts, a + 1, shown);
		if (*i + 1 >= argc)
			return cli_usage_error(s->cmd, "option '%s' needs a value",
					       shown);
		return apply(s->cmd, o, opts, argv[++*i], shown);
	}
	return 0;
}

int cli_parse_options(const struct cli_syntax *s, void *opts, int argc, char **argv,
		      int *status)
{
	int i, n = 0, err, only_operands = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_operands || a[0] != '-' || !a[1]) {
			argv[n++] = argv[i];
			if (s->flags & CLI_SYNTAX_STOP_AT_OPERAND)
				only_operands = 1;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_operands = 1;
			continue;
		}
		err = a[1] == '-' ? parse_long(s, opts, argc, argv, &i)
				  : parse_short(s, opts, argc, argv, &i);
		if (err < 0) {
			cli_syntax_print(s, stdout);
			*status = HS_EXIT_OK;
			return -1;
		}
		if (err) {
			*status = err;
			return -1;
		}
	}
	argv[n] = NULL; /* n < argc: the operands end as argv does */
	return n;
}
