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

enum { OPT_FROM = 256, OPT_GROUP, OPT_FOLD, OPT_INC, OPT_EXC, OPT_START, OPT_END,
       OPT_FORMAT, OPT_SOURCE };

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "fold", required_argument, NULL, OPT_FOLD },
	{ "inc", required_argument, NULL, OPT_INC },
	{ "exc", required_argument, NULL, OPT_EXC },
	{ "start", required_argument, NULL, OPT_START },
	{ "end", required_argument, NULL, OPT_END },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ NULL, 0, NULL, 0 },
};

/* What the command line gave; the rest comes from each file's defaults. */
enum { GIVEN_GROUP = 1, GIVEN_FOLD = 2, GIVEN_INC = 4, GIVEN_EXC = 8,
       GIVEN_START = 16, GIVEN_END = 32 };

/* @p with what @given leaves out taken from @src's defaults (borrowed). */
static struct hs_view_params with_defaults(const struct hs_view_params *p,
					   unsigned given,
					   const struct hs_stack_source *src)
{
	const struct hs_source_defaults *d = &src->defaults;
	struct hs_view_params q = *p;

	if (!(given & GIVEN_GROUP) && d->group)
		q.filter.group = d->group;
	if (!(given & GIVEN_FOLD) && d->fold)
		q.filter.fold = d->fold;
	if (!(given & GIVEN_INC) && d->inc)
		q.filter.inc = d->inc;
	if (!(given & GIVEN_EXC) && d->exc)
		q.filter.exc = d->exc;
	if (!(given & GIVEN_START))
		q.filter.start_ms = cli_default_number(d->start);
	if (!(given & GIVEN_END))
		q.filter.end_ms = cli_default_number(d->end);
	return q;
}

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
		case OPT_GROUP:
			given |= GIVEN_GROUP;
			p.filter.group = optarg;
			break;
		case OPT_FOLD:
			given |= GIVEN_FOLD;
			p.filter.fold = optarg;
			break;
		case OPT_INC:
			given |= GIVEN_INC;
			p.filter.inc = optarg;
			break;
		case OPT_EXC:
			given |= GIVEN_EXC;
			p.filter.exc = optarg;
			break;
		case OPT_START:
			given |= GIVEN_START;
			err = cli_parse_double("overweight", "--start", optarg, &p.filter.start_ms);
			break;
		case OPT_END:
			given |= GIVEN_END;
			err = cli_parse_double("overweight", "--end", optarg, &p.filter.end_ms);
			break;
		case OPT_FORMAT:
			format = optarg;
			if (strcmp(format, "text") && strcmp(format, "json") &&
			    strcmp(format, "html"))
				return cli_usage_error("overweight", "unknown format '%s' "
						       "(text, json or html)", format);
			break;
		case ':':
			return cli_usage_error("overweight", "option '%s' needs a value",
					       argv[optind - 1]);
		default:
			return cli_usage_error("overweight", "unknown option '%s'",
					       argv[optind - 1]);
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
	pb = with_defaults(&p, given, &base);
	pt = with_defaults(&p, given, &test);
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
