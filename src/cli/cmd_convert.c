/*
 * cmd_convert - `heapscope convert IN -o OUT`: read any format heapscope
 * reads, write PerfView XML/JSON (zipped or not) or folded stacks.
 */
#include "cli/cli.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ "source", required_argument, NULL, 'S' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in, *out = NULL, *from = NULL, *to = NULL, *source = NULL;
	struct hs_diag diag;
	struct hs_stack_source src;
	enum hs_format fmt = HS_FORMAT_UNKNOWN;
	int force = 0, c, err, ret;
	struct stat st;
	char msg[1024];

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'F':
			from = optarg;
			break;
		case 'T':
			to = optarg;
			break;
		case 'S':
			source = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			return cli_help("convert");
		case ':':
			return cli_usage_error("convert", "option '%s' needs a value",
					       argv[optind - 1]);
		default:
			if (optopt)
				return cli_usage_error("convert", "unknown option '-%c'",
						       optopt);
			return cli_usage_error("convert", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("convert", "no input file");
	if (optind + 1 < argc)
		return cli_usage_error("convert", "one input file only ('%s' is extra)",
				       argv[optind + 1]);
	in = argv[optind];
	if (!out)
		return cli_usage_error("convert", "no output: give one with -o FILE "
				       "(-o - for standard output)");

	/* settle the output format before reading anything */
	if (to) {
		fmt = hs_format_parse(to);
		if (fmt == HS_FORMAT_UNKNOWN)
			return cli_usage_error("convert", "unknown output format '%s'",
					       to);
	} else if (strcmp(out, "-")) {
		fmt = hs_format_from_path(out);
		if (fmt == HS_FORMAT_UNKNOWN)
			return cli_usage_error("convert", "cannot tell the output format "
					       "from '%s'; name it with --to", out);
	} else {
		return cli_usage_error("convert", "standard output needs --to FORMAT");
	}
	if (!hs_format_writable(fmt))
		return cli_usage_error("convert",
				       "heapscope reads %s but does not write it",
				       hs_format_name(fmt));
	if (!force && strcmp(out, "-") && !stat(out, &st) && !S_ISCHR(st.st_mode) &&
	    !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return cli_fail("'%s' already exists (use -f to overwrite it)", out);

	ret = cli_load_source("convert", in, from, source, &src);
	if (ret)
		return ret;
	diag = (struct hs_diag)HS_DIAG_INIT(strcmp(out, "-") ? out : "<stdout>");
	err = hs_export_path(&src, out, fmt, &diag);
	hs_source_release(&src);
	if (err)
		return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
	return HS_EXIT_OK;
}
