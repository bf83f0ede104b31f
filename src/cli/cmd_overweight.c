/*
 * cmd_overweight - `heapscope overweight BASE TEST`: PerfView's Overweight
 * report of which names grew out of proportion from BASE to TEST, as
 * text, JSON or a self-contained HTML page. Each file is filtered with
 * the patterns and time range of the command line and, for what the
 * command line leaves out, with its own saved defaults, as each PerfView
 * window has its own text boxes.
 */
#include "analysis/overweight.h"
#include "cli/cli.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { OPT_FROM = 256, OPT_FORMAT, OPT_SOURCE };

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "group", required_argument, NULL, CLI_OPT_GROUP },
	{ "fold", required_argument, NULL, CLI_OPT_FOLD },
	{ "inc", required_argument, NULL, CLI_OPT_INC },
	{ "exc", required_argument, NULL, CLI_OPT_EXC },
	{ "start", required_argument, NULL, CLI_OPT_START },
	{ "end", required_argument, NULL, CLI_OPT_END },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ NULL, 0, NULL, 0 },
};

int cmd_overweight(int argc, char **argv)
{
	struct hs_view_params p = HS_VIEW_PARAMS_INIT, pb, pt;
	unsigned given = 0;
	struct hs_stack_source base, test;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_overweight ow;
	const char *from = NULL, *format = "text", *source = NULL;
	int c, err, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		err = 0;
		switch (c) {
		case 'h':
			return cli_help("overweight");
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_SOURCE:
			source = optarg;
			break;
		case OPT_FORMAT:
			format = optarg;
			if (strcmp(format, "text") && strcmp(format, "json") &&
			    strcmp(format, "html"))
				return cli_usage_error("overweight", "unknown format '%s' "
						       "(text, json or html)", format);
			break;
		default:
			err = cli_filter_option("overweight", c, optarg, &p.filter, &given);
			if (err < 0)
				return cli_option_error("overweight", c, argv);
		}
		if (err)
			return err;
	}
	if (argc - optind != 2)
		return cli_usage_error("overweight", "needs two files, BASE and TEST");

	ret = cli_load_source("overweight", argv[optind], from, source, &base);
	if (ret)
		return ret;
	ret = cli_load_source("overweight", argv[optind + 1], from, source, &test);
	if (ret) {
		hs_source_release(&base);
		return ret;
	}
	pb = p;
	cli_filter_defaults(&pb.filter, given, &base.defaults);
	pt = p;
	cli_filter_defaults(&pt.filter, given, &test.defaults);
	err = hs_overweight_compute(&base, &pb, &test, &pt, &ow, &diag);
	hs_source_release(&base);
	hs_source_release(&test);
	if (err == -EINVAL)
		return cli_fail("%s", diag.set ? diag.msg : "bad pattern");
	if (err)
		return cli_fail("%s", strerror(-err));
	if (!strcmp(format, "json"))
		err = hs_overweight_write_json(&ow, stdout);
	else if (!strcmp(format, "html"))
		err = hs_overweight_write_html(&ow, argv[optind], argv[optind + 1], stdout);
	else
		err = hs_overweight_write_text(&ow, stdout);
	hs_overweight_release(&ow);
	return err ? cli_fail("could not write the report") : HS_EXIT_OK;
}
