/*
 * cmd_symbolize - `heapscope symbolize`: resolve a trace's addresses into
 * names and file:line and store them in the trace (its symbol section,
 * symbols/trace_symbolize.h). `heapscope run` does the same at the end
 * through cli_symbolize().
 */
#include "cli/cli.h"
#include "common/alloc.h"
#include "common/diag.h"
#include "symbols/symbols.h"
#include "symbols/trace_symbolize.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cli_symbolize(const char *path, const char *out, const struct hs_symbolize_opts *o,
		  int verbose)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_symbolize_result r;
	char msg[1024];
	size_t i;
	int err = hs_trace_symbolize(path, out, o, &r, &diag);

	if (err) {
		if (!diag.set)
			hs_diag_set(&diag, 0, "%s", strerror(-err));
		hs_symbolize_result_release(&r);
		return cli_fail("symbolizing: %s",
				hs_diag_format(&diag, msg, sizeof(msg)));
	}
	for (i = 0; i < r.nr_bad; i++)
		fprintf(stderr, "heapscope: no symbols for %s%s%s\n", r.bad[i].path,
			r.bad[i].why ? ": " : "", r.bad[i].why ? r.bad[i].why : "");
	if (r.perf_map_error)
		fprintf(stderr, "heapscope: warning: perf map not used: %s\n",
			r.perf_map_error);
	if (verbose)
		fprintf(stderr,
			"heapscope: %zu address%s: %zu named (%zu with "
			"file:line, %zu in inlined code, %zu JIT), %zu without a symbol, "
			"%zu in modules without symbols, %zu outside every module\n",
			r.addresses, r.addresses == 1 ? "" : "es", r.found, r.with_lines,
			r.inlined, r.jit, r.no_symbol, r.bad_module, r.no_module);
	hs_symbolize_result_release(&r);
	return HS_EXIT_OK;
}

struct symbolize_cli {
	struct hs_symbolize_opts o;
	struct cli_string_list dirs; /* --debug-dir */
	const char *out;
	int quiet;
};

static const struct cli_option symbolize_options[] = {
    OPT_STRING('o', "output", struct symbolize_cli, out, "OUT",
	       "write TRACE with the new symbols to OUT (replaced\n"
	       "if it exists) and leave TRACE as it is"),
    OPT_STRING_LIST(0, "debug-dir", struct symbolize_cli, dirs, "DIR",
		    "look for debug files (by build id, .build-id/xx/..,\n"
		    "and by .gnu_debuglink name) in DIR before\n"
		    "/usr/lib/debug; may be repeated"),
    OPT_BIT(0, "no-debuginfod", struct symbolize_cli, o.flags, HS_SYM_NO_DEBUGINFOD,
	    "never ask debuginfod servers for missing files"),
    OPT_BIT(0, "no-system-debug", struct symbolize_cli, o.flags, HS_SYM_NO_SYSTEM_DEBUG,
	    "do not look in /usr/lib/debug"),
    OPT_STRING(0, "perf-map", struct symbolize_cli, o.perf_map, "FILE",
	       "name JIT code from FILE (default: the traced\n"
	       "process's /tmp/perf-PID.map, if it exists)"),
    OPT_FLAG(0, "no-perf-map", struct symbolize_cli, o.no_perf_map, "read no perf map"),
    OPT_FLAG('q', "quiet", struct symbolize_cli, quiet, "print only problems"),
    OPT_END(),
};

const struct cli_syntax cli_symbolize_syntax = {
    .cmd = "symbolize",
    .usage = "usage: heapscope symbolize TRACE [-o OUT] [--debug-dir DIR]...\n"
	     "                           [--no-debuginfod] [--no-system-debug]\n"
	     "                           [--perf-map FILE | --no-perf-map] [-q]\n",
    .intro = "Resolve every code address of TRACE's stacks into function names,\n"
	     "inlined functions and file:line, and store them in the trace (its\n"
	     "symbol section), so that it shows names on a machine without the\n"
	     "program. 'heapscope run' does this when the program ends; run this\n"
	     "again when debug files were installed later or the trace comes from\n"
	     "elsewhere. The section replaces the one the trace had.\n",
    .options = symbolize_options,
    .outro = "A module whose file is missing or of another build (its build id\n"
	     "differs) gives 'module!?' frames; see docs/symbols.md.\n",
    .help_column = 24,
};

int cmd_symbolize(int argc, char **argv)
{
	struct symbolize_cli cli = {0};
	struct stat sb;
	size_t i;
	int n, ret;

	n = cli_parse_options(&cli_symbolize_syntax, &cli, argc, argv, &ret);
	for (i = 0; n >= 0 && i < cli.dirs.nr; i++)
		if (stat(cli.dirs.v[i], &sb) || !S_ISDIR(sb.st_mode)) {
			ret = cli_usage_error("symbolize",
					      "--debug-dir '%s' is not a "
					      "directory",
					      cli.dirs.v[i]);
			n = -1;
		}
	if (n >= 0 && n != 1) {
		ret = cli_usage_error("symbolize",
				      n == 0 ? "no trace file" : "too many arguments");
		n = -1;
	}
	if (n >= 0 && !strcmp(argv[0], "-") && !cli.out) {
		ret =
		    cli_usage_error("symbolize", "standard input needs -o OUT (it cannot "
						 "be rewritten in place)");
		n = -1;
	}
	if (n >= 0) {
		struct cli_input in;

		cli.o.debug_dirs = cli.dirs.v;
		cli.o.nr_debug_dirs = cli.dirs.nr;
		ret = cli_input_open(argv[0], &in);
		if (!ret)
			ret = cli_symbolize(in.path, cli.out, &cli.o, !cli.quiet);
		cli_input_close(&in);
	}
	cli_string_list_release(&cli.dirs);
	return ret;
}
