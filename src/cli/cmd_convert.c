/*
 * cmd_convert - `heapscope convert IN -o OUT`: read any format heapscope
 * reads, write PerfView XML/JSON (zipped or not) or folded stacks.
 */
#include "cli/cli.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct convert_opts {
	const char *out, *from, *to, *source;
	int force;
};

static const struct cli_option convert_options[] = {
    OPT_STRING('o', "output", struct convert_opts, out, "OUT",
	       "where to write (required)"),
    OPT_STRING(0, "from", struct convert_opts, from, "FMT",
	       "input format; default: by IN's extension, else by content"),
    OPT_STRING(0, "source", struct convert_opts, source, "NAME",
	       "which of IN's sources to read (perf script: cpu, the\n"
	       "default, or thread-time; see 'report --list-sources')"),
    OPT_STRING(0, "to", struct convert_opts, to, "FMT",
	       "output format; default: by OUT's extension\n"
	       "(required with -o -)"),
    OPT_FLAG('f', "force", struct convert_opts, force,
	     "overwrite OUT if it exists (default: refuse)"),
    OPT_END(),
};

const struct cli_syntax cli_convert_syntax = {
    .cmd = "convert",
    .usage =
	"usage: heapscope convert IN -o OUT [--from FMT] [--source NAME] [--to FMT]\n"
	"                         [-f]\n",
    .intro = "Read IN in any format heapscope reads and write it to OUT.\n"
	     "IN or OUT may be '-' for standard input or output.\n",
    .options = convert_options,
    .outro =
	"Formats (name: extension):\n"
	"  perf-script: .data.txt .perf.data.dump   perf script text (read only)\n"
	"  trace-zip:   .trace.zip                  perfcollect's zip (read only)\n"
	"  xml:         .perfView.xml               PerfView's stack XML\n"
	"  xml-zip:     .perfView.xml.zip           the same, zipped (one entry)\n"
	"  json:        .perfView.json              PerfView's stack JSON\n"
	"  json-zip:    .perfView.json.zip          the same, zipped (one entry)\n"
	"  folded:      .folded .collapsed          'main;f;g 42' lines, root first\n"
	"  pprof:       .pb.gz                      pprof's gzip'd profile.proto\n"
	"  speedscope:  .speedscope.json            speedscope's JSON file format\n\n"
	"XML and JSON keep every sample's stack, time (to the nanosecond),\n"
	"metric and count, and the file's default filter settings. Folded keeps\n"
	"one line per distinct stack with its summed metric: times and counts\n"
	"are lost (it reads back with time 0 and count = metric).\n"
	"See docs/formats.md.\n\n"
	"Exit status: 0 converted, 1 failed (unreadable or malformed input,\n"
	"OUT exists, cannot write), 2 usage error.\n",
};

int cmd_convert(int argc, char **argv)
{
	struct convert_opts o = {0};
	const char *in, *out, *to, *source;
	struct hs_diag diag;
	struct hs_stack_source src;
	enum hs_format fmt = HS_FORMAT_UNKNOWN;
	int n, err, ret;
	struct stat st;
	char msg[1024];

	n = cli_parse_options(&cli_convert_syntax, &o, argc, argv, &ret);
	if (n < 0)
		return ret;
	if (n == 0)
		return cli_usage_error("convert", "no input file");
	if (n > 1)
		return cli_usage_error("convert", "one input file only ('%s' is extra)",
				       argv[1]);
	out = o.out;
	to = o.to;
	source = o.source;
	in = argv[0];
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
			return cli_usage_error("convert",
					       "cannot tell the output format "
					       "from '%s'; name it with --to",
					       out);
	} else {
		return cli_usage_error("convert", "standard output needs --to FORMAT");
	}
	if (!hs_format_writable(fmt))
		return cli_usage_error("convert",
				       "heapscope reads %s but does not write it",
				       hs_format_name(fmt));
	if (!o.force && strcmp(out, "-") && !stat(out, &st) && !S_ISCHR(st.st_mode) &&
	    !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return cli_fail("'%s' already exists (use -f to overwrite it)", out);

	ret = cli_load_source("convert", in, o.from, source, &src);
	if (ret)
		return ret;
	diag = (struct hs_diag)HS_DIAG_INIT(strcmp(out, "-") ? out : "<stdout>");
	err = hs_export_path(&src, out, fmt, &diag);
	hs_source_release(&src);
	if (err)
		return cli_fail("%s", hs_diag_format(&diag, msg, sizeof(msg)));
	return HS_EXIT_OK;
}
