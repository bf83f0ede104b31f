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
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct source_opts {
	const char *from, *path, *function, *view, *format;
	struct cli_filter f;
	int json, whole;
	unsigned long context;
	struct cli_string_list dirs; /* --source-dir */
};

static const struct cli_option source_options[] = {
    OPT_STRING(0, "source", struct source_opts, view, "VIEW",
	       "a trace's memory view: alloc (default), net, leaks,\n"
	       "peak, temporary, mmap, cpu, wall (see 'heapscope help\n"
	       "report')"),
    OPT_STRING(0, "from", struct source_opts, from, "FMT",
	       "input format (default: by file name, then content)"),
    CLI_FILTER_OPTIONS(struct source_opts, f),
    OPT_TEXT("                    (the filter, as in 'heapscope report'; the view's\n"
	     "                    default FoldPats and ExcPats unless given)\n"),
    OPT_ULONG(0, "context", struct source_opts, context, "N",
	      "lines shown around the lines with a cost (default 3)"),
    OPT_FLAG(0, "whole-file", struct source_opts, whole,
	     "the whole file (json: each file's \"text\", all its lines)"),
    OPT_STRING_LIST(0, "source-dir", struct source_opts, dirs, "DIR",
		    "look for the source under DIR too (by the path's\n"
		    "trailing parts), when it is not where it was built"),
    OPT_STRING(0, "format", struct source_opts, format, "F",
	       "text (default) or json (docs/json-api.md)"),
    OPT_END(),
};

const struct cli_syntax cli_source_syntax = {
    .cmd = "source",
    .usage =
	"usage: heapscope source FILE FUNCTION [--source VIEW] [--from FMT]\n"
	"                        [--group PATS] [--fold PATS] [--inc PATS] [--exc PATS]\n"
	"                        [--start MS] [--end MS] [--format text|json]\n"
	"                        [--context N | --whole-file] [--source-dir DIR]...\n",
    .intro = "Show FUNCTION's source file with the cost of each line, as PerfView's\n"
	     "Goto Source does: Inc is the cost of the samples whose stack goes\n"
	     "through the function at that line (the call made there, or the\n"
	     "allocation), counted once per sample; Exc the cost charged to the\n"
	     "function itself there (with the heap views' default FoldPats: what it\n"
	     "allocated directly). FUNCTION is a name as 'report' shows it\n"
	     "(module!function) or the function's name alone; for C++ also the bare\n"
	     "name, with or without its namespace or class ('fill', 'ns::fill' for\n"
	     "'std::vector<long>* ns::fill<long>(int)'), when it names one function\n"
	     "(else the error lists the candidates); inlined copies ('... (inline)')\n"
	     "count too. FILE must carry line information: a symbolized heapscope\n"
	     "trace does.\n",
    .options = source_options,
};

static int parse(int argc, char **argv, struct source_opts *o)
{
	int n, status;

	n = cli_parse_options(&cli_source_syntax, o, argc, argv, &status);
	if (n < 0)
		return status ? status : -1;
	if (!strcmp(o->format, "json"))
		o->json = 1;
	else if (strcmp(o->format, "text"))
		return cli_usage_error("source", "unknown format '%s' (text or json)",
				       o->format);
	if (n != 2)
		return cli_usage_error("source", n < 2 ? "needs a file and a "
							 "function name"
						       : "too many arguments");
	o->path = argv[0];
	o->function = argv[1];
	if ((o->f.given & CLI_GIVEN_START) && (o->f.given & CLI_GIVEN_END) &&
	    o->f.params.end_ms < o->f.params.start_ms)
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
		    !hs_source_text_load(sl->files[i].path, o->dirs.v, o->dirs.nr,
					 HS_SOURCE_TEXT_MAX, &texts[i]))
			tp[i] = &texts[i];
	if (o->json) {
		json_t *j = hs_source_lines_json(
		    sl, tp, o->whole ? HS_SOURCE_JSON_WHOLE_TEXT : 0);

		if (j) {
			json_object_set_new(j, "function",
					    hs_view_json_text(o->function));
			json_object_set_new(j, "unit",
					    hs_view_json_text(src->metric_unit));
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
		       sl->inc, unit, sl->total ? 100 * sl->inc / sl->total : 0,
		       sl->inc_count, sl->exc, unit,
		       sl->total ? 100 * sl->exc / sl->total : 0, sl->exc_count);
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
	    .f = {.params = HS_FILTER_PARAMS_INIT},
	    .context = 3,
	    .format = "text",
	};
	struct hs_memview_opts mv = HS_MEMVIEW_OPTS_INIT;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_source_lines sl;
	struct hs_stack_source src;
	struct hs_memview_info info;
	struct cli_joined_pats joined = {0};
	int ret;

	ret = parse(argc, argv, &o);
	if (ret) {
		cli_string_list_release(&o.dirs);
		return ret < 0 ? HS_EXIT_OK : ret;
	}
	if (o.view && cli_is_trace(o.path, o.from) &&
	    hs_memview_parse(o.view, &mv.kind)) {
		cli_string_list_release(&o.dirs);
		return cli_usage_error("source",
				       "unknown source '%s' (alloc, net, leaks, peak, "
				       "temporary or mmap)",
				       o.view);
	}
	if (o.f.given & CLI_GIVEN_START)
		mv.start_ms = o.f.params.start_ms;
	if (o.f.given & CLI_GIVEN_END)
		mv.end_ms = o.f.params.end_ms;
	ret = cli_load_view("source", o.path, o.from, o.view, &mv, &src, &info);
	if (ret) {
		cli_string_list_release(&o.dirs);
		return ret;
	}
	if (!(o.f.given & CLI_GIVEN_FOLD))
		o.f.params.fold = src.defaults.fold;
	if (!(o.f.given & CLI_GIVEN_EXC))
		o.f.params.exc = src.defaults.exc;
	ret = cli_filter_extend(&o.f.params, &src.defaults, &joined);
	if (ret) {
		hs_source_release(&src);
		cli_string_list_release(&o.dirs);
		return ret;
	}
	/* the range chose the peak's blocks, allocated before it or not */
	if (info.uses_range && mv.kind == HS_MEM_PEAK)
		o.f.params.start_ms = o.f.params.end_ms = NAN;
	ret = hs_source_lines_build(&src, &o.f.params, o.function, &sl, &diag);
	if (ret)
		ret = cli_fail("%s", diag.set ? diag.msg : strerror(-ret));
	else
		ret = show(&o, &sl, &src);
	hs_source_lines_release(&sl);
	hs_source_release(&src);
	cli_joined_pats_release(&joined);
	cli_string_list_release(&o.dirs);
	return ret;
}
