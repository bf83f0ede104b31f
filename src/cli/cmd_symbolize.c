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
#include <getopt.h>
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
		return cli_fail("symbolizing: %s", hs_diag_format(&diag, msg, sizeof(msg)));
	}
	for (i = 0; i < r.nr_bad; i++)
		fprintf(stderr, "heapscope: no symbols for %s%s%s\n", r.bad[i].path,
			r.bad[i].why ? ": " : "", r.bad[i].why ? r.bad[i].why : "");
	if (r.perf_map_error)
		fprintf(stderr, "heapscope: warning: perf map not used: %s\n",
			r.perf_map_error);
	if (verbose)
		fprintf(stderr, "heapscope: %zu address%s: %zu named (%zu with "
			"file:line, %zu in inlined code, %zu JIT), %zu without a symbol, "
			"%zu in modules without symbols, %zu outside every module\n",
			r.addresses, r.addresses == 1 ? "" : "es", r.found, r.with_lines,
			r.inlined, r.jit, r.no_symbol, r.bad_module, r.no_module);
	hs_symbolize_result_release(&r);
	return HS_EXIT_OK;
}

enum { OPT_DEBUG_DIR = 256, OPT_NO_DEBUGINFOD, OPT_NO_SYSTEM_DEBUG, OPT_PERF_MAP,
       OPT_NO_PERF_MAP };

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
	{ "no-system-debug", no_argument, NULL, OPT_NO_SYSTEM_DEBUG },
	{ "perf-map", required_argument, NULL, OPT_PERF_MAP },
	{ "no-perf-map", no_argument, NULL, OPT_NO_PERF_MAP },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

int cmd_symbolize(int argc, char **argv)
{
	struct hs_symbolize_opts o = { 0 };
	const char **dirs = NULL;
	const char *out = NULL;
	int c, ret, quiet = 0;

	dirs = hs_calloc((size_t)argc + 1, sizeof(*dirs));
	if (!dirs)
		return cli_fail("out of memory");
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":ho:q", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			hs_free(dirs);
			return cli_help("symbolize");
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_DEBUG_DIR: {
			struct stat sb;

			if (stat(optarg, &sb) || !S_ISDIR(sb.st_mode)) {
				hs_free(dirs);
				return cli_usage_error("symbolize", "--debug-dir '%s' is not a "
						       "directory", optarg);
			}
			dirs[o.nr_debug_dirs++] = optarg;
			break;
		}
		case OPT_NO_DEBUGINFOD:
			o.flags |= HS_SYM_NO_DEBUGINFOD;
			break;
		case OPT_NO_SYSTEM_DEBUG:
			o.flags |= HS_SYM_NO_SYSTEM_DEBUG;
			break;
		case OPT_PERF_MAP:
			o.perf_map = optarg;
			break;
		case OPT_NO_PERF_MAP:
			o.no_perf_map = 1;
			break;
		default:
			hs_free(dirs);
			return cli_option_error("symbolize", c, argv);
		}
	}
	if (optind != argc - 1) {
		hs_free(dirs);
		return cli_usage_error("symbolize", optind == argc ? "no trace file" :
				       "too many arguments");
	}
	o.debug_dirs = dirs;
	ret = cli_symbolize(argv[optind], out, &o, !quiet);
	hs_free(dirs);
	return ret;
}
