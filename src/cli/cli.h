#ifndef HS_CLI_CLI_H
#define HS_CLI_CLI_H
#include "analysis/filter.h"
#include "cli/parse_options.h"
#include "io/io.h"
#include "model/stack_source.h"
#include "common/log.h"

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
	const struct cli_syntax *syntax; /* usage and options: `help NAME`, --help */
	const char *summary;		 /* one line for `heapscope help` */
};

/* The table, terminated by an entry with a NULL name. */
extern const struct hs_command hs_commands[];
const struct hs_command *hs_command_find(const char *name);

/* Print @cmd's help (its syntax) on stdout; returns HS_EXIT_OK. */
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
 * cli_fail() with @diag's message, or strerror(-@err) where the failed call
 * set none; returns HS_EXIT_FAIL.
 */
int cli_fail_diag(struct hs_diag *diag, int err);

/*
 * Load @path into @src (initialised here) with format @from (a --from
 * name or NULL for automatic). On failure prints the error, naming the
 * file and line, and returns HS_EXIT_FAIL (or HS_EXIT_USAGE for an
 * unknown --from); @src is then released.
 */
HS_MUST_CHECK
int cli_load(const char *cmd, const char *path, const char *from,
	     struct hs_stack_source *src);
/* The same, reading the source named @source (--source; NULL: the default). */
HS_MUST_CHECK
int cli_load_source(const char *cmd, const char *path, const char *from,
		    const char *source, struct hs_stack_source *src);
/*
 * --list-sources: print the sources @path's format offers, one per line
 * ("NAME  summary", the default first), or say it offers no choice.
 * Returns HS_EXIT_OK or HS_EXIT_FAIL.
 */
HS_MUST_CHECK int cli_list_sources(const char *cmd, const char *path, const char *from);

/*
 * An input path that can be opened again: @path itself, or for "-"
 * standard input as "/proc/self/fd/N": the redirected file itself when it
 * is one (read from its start), else a copy in an unlinked temporary file
 * (hs_spool_input()). @name is what messages call it ("<stdin>").
 * cli_input_open() returns HS_EXIT_OK or HS_EXIT_FAIL after printing why;
 * cli_input_close() drops the copy.
 */
struct cli_input {
	const char *path; /* to open (borrowed: @path or fdpath) */
	const char *name; /* for messages */
	FILE *tmp;	  /* owned copy of standard input, or NULL */
	char fdpath[32];
};
HS_MUST_CHECK int cli_input_open(const char *path, struct cli_input *in);
void cli_input_close(struct cli_input *in);

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
HS_MUST_CHECK
int cli_load_view(const char *cmd, const char *path, const char *from, const char *source,
		  const struct hs_memview_opts *mv, struct hs_stack_source *src,
		  struct hs_memview_info *info);
/*
 * Warn on stderr, a line each, that the collector could not record @lost
 * events of the trace @path (its footer's count), that the trace was cut
 * off (@cut_off, @events recovered) and that its symbol section is damaged
 * (@damage).
 */
struct hs_trace_sym_damage;
void cli_trace_warn(const char *path, int cut_off, size_t events, uint64_t lost,
		    const struct hs_trace_sym_damage *damage);

/* @bytes for people ("812 B", "4.6 MiB") into @buf of @n bytes. */
void cli_human_bytes(double bytes, char *buf, size_t n);
/* A count into @buf: whole, or with one decimal (a sampled trace's estimates). */
void cli_count(double x, char *buf, size_t n);
/* "" when @x is 1, else "s": "%s block%s" for "1 block", "2 blocks", "1.5 blocks". */
const char *cli_s(double x);

/* Parse a non-negative or signed number option; 0 or HS_EXIT_USAGE. */
HS_MUST_CHECK
int cli_parse_double(const char *cmd, const char *opt, const char *arg, double *out);
HS_MUST_CHECK
int cli_parse_ulong(const char *cmd, const char *opt, const char *arg,
		    unsigned long *out);

/*
 * The filter options as table entries (parse_options.h): --group, --fold,
 * --inc, --exc, --start and --end into the struct cli_filter @member of
 * the command's options struct @type.
 */
struct cli_filter {
	struct hs_filter_params params; /* strings borrowed from argv */
	unsigned given;			/* CLI_GIVEN_*: what the command line gave */
};
int cli_filter_option_cb(const char *cmd, const struct cli_option *opt, void *field,
			 const char *arg);
#define CLI_FILTER_OPTIONS(type, member)                                                 \
	OPT_CALLBACK(0, "group", type, member, "PATS",                                   \
		     "GroupPats: 'pat->group' renames matching frames and\n"             \
		     "goes on matching, 'pat=>group' makes an entry group\n"             \
		     "and stops, an empty group leaves the frame ungrouped",             \
		     cli_filter_option_cb, CLI_GIVEN_GROUP),                             \
	    OPT_CALLBACK(0, "fold", type, member, "PATS",                                \
			 "FoldPats: matching frames are charged to their caller\n"       \
			 "('+PATS' in --group, --fold, --exc: the default, then PATS)",  \
			 cli_filter_option_cb, CLI_GIVEN_FOLD),                          \
	    OPT_CALLBACK(0, "inc", type, member, "PATS",                                 \
			 "IncPats: keep samples whose stack matches EVERY ';'\n"         \
			 "entry (use '|' inside an entry for \"either\")",               \
			 cli_filter_option_cb, CLI_GIVEN_INC),                           \
	    OPT_CALLBACK(0, "exc", type, member, "PATS",                                 \
			 "ExcPats: drop samples whose stack matches any entry",          \
			 cli_filter_option_cb, CLI_GIVEN_EXC),                           \
	    OPT_CALLBACK(0, "start", type, member, "MS",                                 \
			 "start of the time window in ms; for CPU-time sources\n"        \
			 "a sample covering the edge counts in part",                    \
			 cli_filter_option_cb, CLI_GIVEN_START),                         \
	    OPT_CALLBACK(0, "end", type, member, "MS", "end of the time window in ms",   \
			 cli_filter_option_cb, CLI_GIVEN_END)

/* The bits of struct cli_filter's given: which filter options were given. */
enum {
	CLI_GIVEN_GROUP = 1,
	CLI_GIVEN_FOLD = 2,
	CLI_GIVEN_INC = 4,
	CLI_GIVEN_EXC = 8,
	CLI_GIVEN_START = 16,
	CLI_GIVEN_END = 32
};
/* GroupPats, FoldPats and ExcPats "+PATS" joined to a default: owned. */
struct cli_joined_pats {
	char *group, *fold, *exc;
};
void cli_joined_pats_release(struct cli_joined_pats *j);

/*
 * What @given leaves out of @f taken from a file's saved defaults @d
 * (borrowed: @f points into @d's strings afterwards), then
 * cli_filter_extend(). Returns 0 or the exit status of a failure (told).
 */
HS_MUST_CHECK
int cli_filter_defaults(struct hs_filter_params *f, unsigned given,
			const struct hs_source_defaults *d, struct cli_joined_pats *keep);
/*
 * GroupPats, FoldPats or ExcPats of @f given as "+PATS" add PATS to @d's
 * default instead of replacing it (hs_patterns_extend()); the lists
 * joined are kept in @keep. Returns 0 or the exit status of a failure.
 */
HS_MUST_CHECK
int cli_filter_extend(struct hs_filter_params *f, const struct hs_source_defaults *d,
		      struct cli_joined_pats *keep);

/*
 * Serve @app's traces with the web GUI until SIGINT or SIGTERM (`heapscope
 * view`; `run` ends with it): prints the URL with its access token on
 * stdout, opens a browser when not @no_browser, stdout is a terminal and
 * there is a display. Returns the exit status.
 */
struct hs_app;
struct cli_view_opts {
	const char *bind; /* NULL = 127.0.0.1 */
	unsigned port;	  /* 0 = any free port */
	int no_browser;
};
HS_MUST_CHECK int cli_view_serve(struct hs_app *app, const struct cli_view_opts *o);
/* Load the @n files @paths (format @from or NULL) and serve them as above. */
int cli_view_files(int n, char *const *paths, const char *from,
		   const struct cli_view_opts *o);

/*
 * Resolve the addresses of the trace at @path and store them in it (or in
 * @out); prints modules without symbols, and counts when @verbose.
 * Returns HS_EXIT_OK or HS_EXIT_FAIL (after printing why).
 */
struct hs_symbolize_opts;
HS_MUST_CHECK
int cli_symbolize(const char *path, const char *out, const struct hs_symbolize_opts *o,
		  int verbose);

/* The commands, and their syntax (usage and options) for the help. */
extern const struct cli_syntax cli_help_syntax;
int cmd_help(int argc, char **argv);
extern const struct cli_syntax cli_convert_syntax;
int cmd_convert(int argc, char **argv);
extern const struct cli_syntax cli_report_syntax, cli_diff_syntax;
int cmd_report(int argc, char **argv);
extern const struct cli_syntax cli_view_syntax;
int cmd_view(int argc, char **argv);
int cmd_diff(int argc, char **argv);
extern const struct cli_syntax cli_overweight_syntax;
int cmd_overweight(int argc, char **argv);
extern const struct cli_syntax cli_run_syntax;
int cmd_run(int argc, char **argv);
extern const struct cli_syntax cli_attach_syntax;
int cmd_attach(int argc, char **argv);
extern const struct cli_syntax cli_gcdump_syntax;
int cmd_gcdump(int argc, char **argv);
extern const struct cli_syntax cli_dump_syntax;
int cmd_dump(int argc, char **argv);
extern const struct cli_syntax cli_symbolize_syntax;
int cmd_symbolize(int argc, char **argv);
extern const struct cli_syntax cli_repack_syntax;
int cmd_repack(int argc, char **argv);
/* `run`'s rewrite of its finished trace into bigger chunks, where that pays
 * (cmd_repack.c); what it did goes to the debug log */
void cli_repack_after_run(const char *path);
extern const struct cli_syntax cli_stats_syntax;
int cmd_stats(int argc, char **argv);
extern const struct cli_syntax cli_gcstats_syntax;
int cmd_gcstats(int argc, char **argv);
extern const struct cli_syntax cli_source_syntax;
int cmd_source(int argc, char **argv);
#endif
