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
#include <math.h>
#include <stdio.h>
#include <string.h>

struct overweight_opts {
	const char *from, *format, *source;
	struct cli_filter filter;
};

static const struct cli_option overweight_options[] = {
    OPT_STRING(0, "from", struct overweight_opts, from, "FMT",
	       "input format (default: by file name, then content)"),
    OPT_STRING(0, "source", struct overweight_opts, source, "NAME",
	       "which of the files' sources to compare (see 'heapscope\n"
	       "help report')"),
    CLI_FILTER_OPTIONS(struct overweight_opts, filter),
    OPT_STRING(0, "format", struct overweight_opts, format, "F",
	       "text (default), json or html"),
    OPT_END(),
};

const struct cli_syntax cli_overweight_syntax = {
    .cmd = "overweight",
    .usage =
	"usage: heapscope overweight BASE TEST [--from FMT] [--source NAME]\n"
	"                            [--group PATS] [--fold PATS] [--inc PATS]\n"
	"                            [--exc PATS]\n"
	"                            [--start MS] [--end MS] [--format text|json|html]\n",
    .intro = "PerfView's Overweight report. Both files are filtered with the same\n"
	     "patterns and summed by name (ByName inclusive). When the total grew by\n"
	     "growth = TEST/BASE, a name with values v1 -> v2 is expected to reach\n"
	     "v1*growth:\n"
	     "  Overweight %      100 * (v2 - v1) / (v1 * (growth - 1))\n"
	     "                    (100 = grew in proportion; more = out of proportion)\n"
	     "  Responsibility %  100 * (v2 - v1) / (TEST - BASE)\n"
	     "  Interest Level    0-6: a point each for |Overweight| > 110,\n"
	     "                    |Responsibility| > 5, > 20, > 100,\n"
	     "                    v2/TEST < 0.95 and < 0.75\n"
	     "Names on only one side and names under 2% responsibility are left out;\n"
	     "equal totals give no rows. Rows are sorted by interest, then overweight.\n"
	     "--format html writes a self-contained page (no scripts, no links).\n"
	     "Options not given on the command line come from each file's own saved\n"
	     "view state (a .perfView.xml's text boxes, a trace's memory-view\n"
	     "defaults), as in 'heapscope report'.\n",
    .options = overweight_options,
};

int cmd_overweight(int argc, char **argv)
{
	struct overweight_opts o = {
	    .format = "text",
	    .filter = {.params = HS_FILTER_PARAMS_INIT},
	};
	struct hs_view_params p = HS_VIEW_PARAMS_INIT, pb, pt;
	struct hs_stack_source base, test;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_overweight ow;
	struct cli_joined_pats base_pats = {0}, test_pats = {0};
	const char *from, *format;
	int n, err, ret;

	n = cli_parse_options(&cli_overweight_syntax, &o, argc, argv, &ret);
	if (n < 0)
		return ret;
	from = o.from;
	format = o.format;
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "html"))
		return cli_usage_error("overweight",
				       "unknown format '%s' (text, json or "
				       "html)",
				       format);
	if (n != 2)
		return cli_usage_error("overweight", "needs two files, BASE and TEST");
	p.filter = o.filter.params;

	ret = cli_load_source("overweight", argv[0], from, o.source, &base);
	if (ret)
		return ret;
	ret = cli_load_source("overweight", argv[1], from, o.source, &test);
	if (ret) {
		hs_source_release(&base);
		return ret;
	}
	pb = p;
	ret = cli_filter_defaults(&pb.filter, o.filter.given, &base.defaults, &base_pats);
	pt = p;
	if (!ret)
		ret = cli_filter_defaults(&pt.filter, o.filter.given, &test.defaults,
					  &test_pats);
	err = ret ? 0 : hs_overweight_compute(&base, &pb, &test, &pt, &ow, &diag);
	hs_source_release(&base);
	hs_source_release(&test);
	cli_joined_pats_release(&base_pats);
	cli_joined_pats_release(&test_pats);
	if (ret)
		return ret;
	if (err == -EINVAL)
		return cli_fail("%s", diag.set ? diag.msg : "bad pattern");
	if (err)
		return cli_fail("%s", strerror(-err));
	if (!strcmp(format, "json"))
		err = hs_overweight_write_json(&ow, stdout);
	else if (!strcmp(format, "html"))
		err = hs_overweight_write_html(&ow, argv[0], argv[1], stdout);
	else
		err = hs_overweight_write_text(&ow, stdout);
	hs_overweight_release(&ow);
	return err ? cli_fail("could not write the report") : HS_EXIT_OK;
}
