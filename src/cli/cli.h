#ifndef HS_CLI_CLI_H
#define HS_CLI_CLI_H
#include "io/io.h"
#include "model/stack_source.h"

/*
 * cli - what the commands share: the command table, exit codes, usage
 * errors and loading an input file with a clear message.
 *
 * Only cli/ prints and exits; the libraries below return errors.
 * Exit status: 0 success, 1 failure, 2 usage error.
 */
enum { HS_EXIT_OK = 0, HS_EXIT_FAIL = 1, HS_EXIT_USAGE = 2 };

struct hs_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;	/* one line for `heapscope help` */
	const char *usage;	/* full text for `heapscope help NAME` and --help */
};

/* The table, terminated by an entry with a NULL name. */
extern const struct hs_command hs_commands[];
const struct hs_command *hs_command_find(const char *name);

/* Print @cmd's usage on stdout (for --help); returns HS_EXIT_OK. */
int cli_help(const char *cmd);
/*
 * Print "heapscope CMD: message" and a hint to stderr; returns
 * HS_EXIT_USAGE, so `return cli_usage_error(...)` ends a command.
 */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Each line of @text (NULL: none) as a "heapscope: warning:" message. */
void cli_warn_lines(const char *text);
/* Print "heapscope: error: message" to stderr; returns HS_EXIT_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Load @path into @src (initialised here) with format @from (a --from
 * name or NULL for automatic). On failure prints the error, naming the
 * file and line, and returns HS_EXIT_FAIL (or HS_EXIT_USAGE for an
 * unknown --from); @src is then released.
 */
int cli_load(const char *cmd, const char *path, const char *from,
	     struct hs_stack_source *src);
/* The same, reading the source named @source (--source; NULL: the default). */
int cli_load_source(const char *cmd, const char *path, const char *from,
		    const char *source, struct hs_stack_source *src);
/*
 * --list-sources: print the sources @path's format offers, one per line
 * ("NAME  summary", the default first), or say it offers no choice.
 * Returns HS_EXIT_OK or HS_EXIT_FAIL.
 */
int cli_list_sources(const char *cmd, const char *path, const char *from);

/* Whether @path (read with --from @from) is a heapscope trace. */
int cli_is_trace(const char *path, const char *from);
/*
 * cli_load(), except that a heapscope trace becomes memory view @mv
 * (analysis/memviews.h; @info may be NULL) and what is wrong with it is
 * announced (cli_trace_warn()). Other files load as cli_load_source()
 * does, with source @source (NULL: the default; @info zeroed).
 */
struct hs_memview_opts;
struct hs_memview_info;
int cli_load_view(const char *cmd, const char *path, const char *from,
		  const char *source, const struct hs_memview_opts *mv,
		  struct hs_stack_source *src, struct hs_memview_info *info);
/*
 * Warn on stderr, a line each, that the trace @path was cut off
 * (@cut_off, @events recovered) and that its symbol section is damaged
 * (@damage).
 */
struct hs_trace_sym_damage;
void cli_trace_warn(const char *path, int cut_off, size_t events,
		    const struct hs_trace_sym_damage *damage);

/* @bytes for people ("812 B", "4.6 MiB") into @buf of @n bytes. */
void cli_human_bytes(double bytes, char *buf, size_t n);
/* A count into @buf: whole, or with one decimal (a sampled trace's estimates). */
void cli_count(double x, char *buf, size_t n);
/* "" when @x is 1, else "s": "%s block%s" for "1 block", "2 blocks", "1.5 blocks". */
const char *cli_s(double x);

/* Parse a non-negative or signed number option; 0 or HS_EXIT_USAGE. */
int cli_parse_double(const char *cmd, const char *opt, const char *arg,
		     double *out);
int cli_parse_ulong(const char *cmd, const char *opt, const char *arg,
		    unsigned long *out);

/*
 * A getopt_long() answer no case took: ':' (an option without its value)
 * or anything else (an unknown option, argv[optind - 1]). Prints the
 * usage error and returns HS_EXIT_USAGE; @argv is borrowed.
 */
int cli_option_error(const char *cmd, int c, char *const *argv);

/*
 * The filter options report, source and overweight share: --group,
 * --fold, --inc, --exc, --start and --end. Their getopt values (put them
 * in the command's option table) and the bits of what the command line
 * gave.
 */
enum { CLI_OPT_GROUP = 1024, CLI_OPT_FOLD, CLI_OPT_INC, CLI_OPT_EXC, CLI_OPT_START,
       CLI_OPT_END };
enum { CLI_GIVEN_GROUP = 1, CLI_GIVEN_FOLD = 2, CLI_GIVEN_INC = 4, CLI_GIVEN_EXC = 8,
       CLI_GIVEN_START = 16, CLI_GIVEN_END = 32 };
/*
 * If @c is one of the filter options, store @arg (borrowed: it stays
 * argv's) in @f, add its bit to *@given and return 0, or HS_EXIT_USAGE
 * after printing why a number is bad; -ENOENT when @c is another option.
 */
struct hs_filter_params;
int cli_filter_option(const char *cmd, int c, const char *arg,
		      struct hs_filter_params *f, unsigned *given);
/*
 * What @given leaves out of @f taken from a file's saved defaults @d
 * (borrowed: @f points into @d's strings afterwards).
 */
void cli_filter_defaults(struct hs_filter_params *f, unsigned given,
			 const struct hs_source_defaults *d);

/*
 * Serve @app's traces with the web GUI until SIGINT or SIGTERM (`heapscope
 * view`; `run` ends with it): prints the URL with its access token on
 * stdout, opens a browser when not @no_browser, stdout is a terminal and
 * there is a display. Returns the exit status.
 */
struct hs_app;
struct cli_view_opts {
	const char *bind;	/* NULL = 127.0.0.1 */
	unsigned port;		/* 0 = any free port */
	int no_browser;
};
int cli_view_serve(struct hs_app *app, const struct cli_view_opts *o);
/* Load the @n files @paths (format @from or NULL) and serve them as above. */
int cli_view_files(int n, char *const *paths, const char *from,
		   const struct cli_view_opts *o);

/*
 * Resolve the addresses of the trace at @path and store them in it (or in
 * @out); prints modules without symbols, and counts when @verbose.
 * Returns HS_EXIT_OK or HS_EXIT_FAIL (after printing why).
 */
struct hs_symbolize_opts;
int cli_symbolize(const char *path, const char *out, const struct hs_symbolize_opts *o,
		  int verbose);

/* The commands. */
int cmd_help(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_overweight(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_source(int argc, char **argv);
#endif
