/*
 * cmd_source - `heapscope source`: a function's source file with each
 * line's inclusive and exclusive cost, as PerfView's Goto Source shows it
 * (analysis/sourcelines.h).
 */
#include "analysis/memviews.h"
#include "analysis/sourcelines.h"
#include "analysis/views.h"
#include "cli/cli.h"
#include "common/alloc.h"
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct source_opts {
	const char *from, *path, *function, *view;
	struct hs_filter_params filter;
	unsigned given;		/* CLI_GIVEN_*: filter options given */
	int json, whole;
	unsigned long context;
	const char **dirs;
	size_t nr_dirs;
};

enum {
	OPT_FROM = 256, OPT_SOURCE, OPT_FORMAT, OPT_CONTEXT, OPT_WHOLE, OPT_DIR,
};

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
	{ "context", required_argument, NULL, OPT_CONTEXT },
	{ "whole-file", no_argument, NULL, OPT_WHOLE },
	{ "source-dir", required_argument, NULL, OPT_DIR },
	{ NULL, 0, NULL, 0 },
};

static int parse(int argc, char **argv, struct source_opts *o)
{
	int c, err;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		err = 0;
		switch (c) {
		case 'h':
			return -1;
		case OPT_FROM:
			o->from = optarg;
			break;
		case OPT_SOURCE:
			o->view = optarg;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "json"))
				o->json = 1;
			else if (strcmp(optarg, "text"))
				return cli_usage_error("source", "unknown format '%s' (text or "
						       "json)", optarg);
			break;
		case OPT_CONTEXT:
			err = cli_parse_ulong("source", "--context", optarg, &o->context);
			break;
		case OPT_WHOLE:
			o->whole = 1;
			break;
		case OPT_DIR:
			o->dirs[o->nr_dirs++] = optarg;
			break;
		default:
			err = cli_filter_option("source", c, optarg, &o->filter, &o->given);
			if (err < 0)
				return cli_option_error("source", c, argv);
		}
		if (err)
			return err;
	}
	if (argc - optind != 2)
		return cli_usage_error("source", argc - optind < 2 ? "needs a file and a "
				       "function name" : "too many arguments");
	o->path = argv[optind];
	o->function = argv[optind + 1];
	if ((o->given & CLI_GIVEN_START) && (o->given & CLI_GIVEN_END) &&
	    o->filter.end_ms < o->filter.start_ms)
		return cli_usage_error("source", "--end is before --start");
	return 0;
}

static void cell(double v, int show)
{
	if (!show)
		printf(" %10s", "");
	else if (v == floor(v) && fabs(v) < 1e15)
		printf(" %10.0f", v);
	else
		printf(" %10.1f", v);
}

static void print_line(const struct hs_line_cost *l, uint32_t line, const char *text)
{
	printf("%6u", line);
	cell(l ? l->inc : 0, l != NULL);
	cell(l ? l->inc_count : 0, l != NULL);
	cell(l ? l->exc : 0, l && (l->exc || l->exc_count));
	cell(l ? l->exc_count : 0, l && (l->exc || l->exc_count));
	printf(" | %s\n", text ? text : "");
}

static void print_file(const struct hs_source_file *f, const struct hs_source_text *t,
		       const struct source_opts *o)
{
	uint32_t lo, hi, line;
	size_t k = 0;

	if (!f->path) {
		printf("\n(frames without line information)\n");
		printf("  Line        Inc     Inc Ct        Exc     Exc Ct |\n");
		print_line(&f->lines[0], 0, NULL);
		return;
	}
	printf("\n%s", f->path);
	if (t && strcmp(t->path, f->path))
		printf(" (read from %s)", t->path);
	if (!t)
		printf(" (not found: only its lines with a cost; try --source-dir)");
	printf("\n  Line        Inc     Inc Ct        Exc     Exc Ct | Source\n");
	lo = f->lines[0].line;
	hi = f->lines[f->nr - 1].line;
	if (!lo)
		lo = 1;
	lo = lo > o->context ? lo - (uint32_t)o->context : 1;
	hi = hi + (uint32_t)o->context;
	if (t && (o->whole || hi > t->nr)) {
		if (o->whole)
			lo = 1;
		hi = o->whole || hi > t->nr ? (uint32_t)t->nr : hi;
	}
	for (line = lo; line <= hi; line++) {
		const struct hs_line_cost *l = NULL;

		while (k < f->nr && f->lines[k].line < line)
			k++;
		if (k < f->nr && f->lines[k].line == line)
			l = &f->lines[k];
		if (!t && !l)
			continue;
		print_line(l, line, t && line <= t->nr ? t->line[line - 1] : NULL);
	}
}

static int show(const struct source_opts *o, const struct hs_source_lines *sl,
		const struct hs_stack_source *src)
{
	struct hs_source_text *texts;
	const struct hs_source_text **tp;
	size_t i;
	int err = 0;

	texts = hs_calloc(sl->nr_files + 1, sizeof(*texts));
	tp = hs_calloc(sl->nr_files + 1, sizeof(*tp));
	if (!texts || !tp) {
		hs_free(texts);
		hs_free(tp);
		return cli_fail("out of memory");
	}
	for (i = 0; i < sl->nr_files; i++)
		if (sl->files[i].path &&
		    !hs_source_text_load(sl->files[i].path, o->dirs, o->nr_dirs, HS_SOURCE_TEXT_MAX,
					 &texts[i]))
			tp[i] = &texts[i];
	if (o->json) {
		json_t *j = hs_source_lines_json(sl, tp, o->whole ? HS_SOURCE_JSON_WHOLE_TEXT : 0);

		if (j) {
			json_object_set_new(j, "function", hs_view_json_text(o->function));
			json_object_set_new(j, "unit", hs_view_json_text(src->metric_unit));
		}
		err = !j || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) ||
		      putchar('\n') == EOF;
		json_decref(j);
	} else {
		const char *unit = src->metric_unit ? src->metric_unit : "";

		printf("Function:");
		for (i = 0; i < sl->nr_names; i++)
			printf("%s %s", i ? "," : "", sl->names[i]);
		if (o->view)
			printf("  (source %s)", o->view);
		printf("\nInc: %.0f %s (%.1f%%) in %.0f  Exc: %.0f %s (%.1f%%) in %.0f\n",
		       sl->inc, unit, sl->total ? 100 * sl->inc / sl->total : 0, sl->inc_count,
		       sl->exc, unit, sl->total ? 100 * sl->exc / sl->total : 0, sl->exc_count);
		for (i = 0; i < sl->nr_files; i++)
			print_file(&sl->files[i], tp[i], o);
	}
	for (i = 0; i < sl->nr_files; i++)
		hs_source_text_release(&texts[i]);
	hs_free(texts);
	hs_free(tp);
	if (err || fflush(stdout))
		return cli_fail("cannot write the output");
	return HS_EXIT_OK;
}

int cmd_source(int argc, char **argv)
{
	struct source_opts o = {
		.filter = HS_FILTER_PARAMS_INIT,
		.context = 3,
	};
	struct hs_memview_opts mv = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_source_lines sl;
	struct hs_stack_source src;
	struct hs_memview_info info;
	int ret;

	o.dirs = hs_calloc((size_t)argc + 1, sizeof(*o.dirs));
	if (!o.dirs)
		return cli_fail("out of memory");
	ret = parse(argc, argv, &o);
	if (ret) {
		hs_free(o.dirs);
		return ret < 0 ? cli_help("source") : ret;
	}
	if (o.view && cli_is_trace(o.path, o.from) && hs_memview_parse(o.view, &mv.kind)) {
		hs_free(o.dirs);
		return cli_usage_error("source", "unknown source '%s' (alloc, net, leaks, peak, "
				       "temporary or mmap)", o.view);
	}
	if (o.given & CLI_GIVEN_START)
		mv.start_ms = o.filter.start_ms;
	if (o.given & CLI_GIVEN_END)
		mv.end_ms = o.filter.end_ms;
	ret = cli_load_view("source", o.path, o.from, o.view, &mv, &src, &info);
	if (ret) {
		hs_free(o.dirs);
		return ret;
	}
	if (!(o.given & CLI_GIVEN_FOLD))
		o.filter.fold = src.defaults.fold;
	if (!(o.given & CLI_GIVEN_EXC))
		o.filter.exc = src.defaults.exc;
	/* the range chose the peak's blocks, allocated before it or not */
	if (info.uses_range && mv.kind == HS_MEM_PEAK)
		o.filter.start_ms = o.filter.end_ms = NAN;
	ret = hs_source_lines_build(&src, &o.filter, o.function, &sl, &diag);
	if (ret)
		ret = cli_fail("%s", diag.set ? diag.msg : strerror(-ret));
	else
		ret = show(&o, &sl, &src);
	hs_source_lines_release(&sl);
	hs_source_release(&src);
	hs_free(o.dirs);
	return ret;
}
