/*
 * cmd_report - `heapscope report`: one stack-viewer view of a file as
 * text, CSV or JSON.
 *
 * Pipeline: load; fill the options not given from the file's saved
 * defaults; then the query (analysis/query.h): Drill Into (--drill) and
 * Flatten (--flatten) each make a new source, then filter, call tree,
 * Fold% and the view.
 */
#include "analysis/presets.h"
#include "analysis/query.h"
#include "cli/cli.h"
#include "common/alloc.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum out_format { OUT_TEXT, OUT_JSON, OUT_CSV };

struct report_opts {
	const char *from, *path, *drill, *preset, *exe_dir;
	char *drill_owned;	/* the name with its suffix cut, when it had one */
	char *preset_group;	/* the preset's GroupPats text (owned) */
	int list_presets;
	enum hs_drill_what drill_what;
	int flatten;
	enum out_format format;
	struct hs_view_opts view;
	struct hs_view_params params;
	int has_group, has_fold, has_inc, has_exc, has_start, has_end, has_fold_pct;
};

enum {
	OPT_FROM = 256, OPT_VIEW, OPT_FOCUS, OPT_GROUP, OPT_FOLD, OPT_FOLD_PCT, OPT_INC,
	OPT_EXC, OPT_START, OPT_END, OPT_DRILL, OPT_FLATTEN, OPT_FORMAT, OPT_LIMIT,
	OPT_DEPTH, OPT_PRESET, OPT_LIST_PRESETS, OPT_EXE_DIR,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "view", required_argument, NULL, OPT_VIEW },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "fold", required_argument, NULL, OPT_FOLD },
	{ "fold-pct", required_argument, NULL, OPT_FOLD_PCT },
	{ "inc", required_argument, NULL, OPT_INC },
	{ "exc", required_argument, NULL, OPT_EXC },
	{ "start", required_argument, NULL, OPT_START },
	{ "end", required_argument, NULL, OPT_END },
	{ "drill", required_argument, NULL, OPT_DRILL },
	{ "flatten", no_argument, NULL, OPT_FLATTEN },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "preset", required_argument, NULL, OPT_PRESET },
	{ "list-presets", no_argument, NULL, OPT_LIST_PRESETS },
	{ "exe-dir", required_argument, NULL, OPT_EXE_DIR },
	{ NULL, 0, NULL, 0 },
};

static int parse_format(const char *s, enum out_format *f)
{
	if (!strcmp(s, "text"))
		*f = OUT_TEXT;
	else if (!strcmp(s, "json"))
		*f = OUT_JSON;
	else if (!strcmp(s, "csv"))
		*f = OUT_CSV;
	else
		return cli_usage_error("report", "unknown format '%s' (text, json or csv)", s);
	return 0;
}

/* --drill NAME[:inc|:exc]: the suffix is optional, so names may hold ':'. */
static int parse_drill(struct report_opts *o, const char *arg)
{
	size_t len = strlen(arg);

	o->drill = arg;
	o->drill_what = HS_DRILL_INC;
	if (len > 4 && (!strcmp(arg + len - 4, ":inc") || !strcmp(arg + len - 4, ":exc"))) {
		o->drill_what = arg[len - 3] == 'e' ? HS_DRILL_EXC : HS_DRILL_INC;
		free(o->drill_owned);
		o->drill = o->drill_owned = strndup(arg, len - 4);
		if (!o->drill_owned)
			return cli_fail("out of memory");
	}
	return 0;
}

/*
 * --preset: GroupPats "[name] group", and its FoldPats and Fold% when it
 * has them; what the command line gives explicitly wins.
 */
static int apply_preset(struct report_opts *o)
{
	const struct hs_preset *p = hs_preset_find(o->preset);
	double pct;
	int err;

	if (!p)
		return cli_usage_error("report", "unknown preset '%s' (see --list-presets)",
				       o->preset);
	if (p->needs_exe_dir && (!o->exe_dir || o->exe_dir[0] != '/'))
		return cli_usage_error("report", "preset '%s' needs --exe-dir with the "
				       "program's absolute directory", p->name);
	err = hs_preset_group_text(p, o->exe_dir, &o->preset_group);
	if (err)
		return cli_fail("preset '%s': %s", p->name, strerror(-err));
	if (!o->has_group) {
		o->params.filter.group = o->preset_group;
		o->has_group = 1;
	}
	if (!o->has_fold && *p->fold) {
		o->params.filter.fold = p->fold;
		o->has_fold = 1;
	}
	if (!o->has_fold_pct && *p->fold_pct &&
	    !cli_parse_double("report", "--preset's Fold%", p->fold_pct, &pct)) {
		o->params.fold_pct = pct;
		o->has_fold_pct = 1;
	}
	return 0;
}

static void list_presets(void)
{
	size_t i;

	for (i = 0; i < hs_presets_count(); i++) {
		const struct hs_preset *p = hs_presets_get(i);

		printf("[%s]\n    %s\n", p->name, p->comment);
		printf("    GroupPats: %s\n", *p->group ? p->group : "(none)");
		if (*p->fold)
			printf("    FoldPats: %s\n", p->fold);
		if (*p->fold_pct)
			printf("    Fold%%: %s\n", p->fold_pct);
		if (p->needs_exe_dir)
			printf("    (needs --exe-dir: EXE_DIR stands for it)\n");
	}
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	unsigned long ul;
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
		case OPT_VIEW:
			if (hs_view_kind_parse(optarg, &o->view.kind))
				return cli_usage_error("report", "unknown view '%s' (byname, "
						       "calltree, callers, callees, caller-callee "
						       "or flame)", optarg);
			break;
		case OPT_FOCUS:
			o->view.focus = optarg;
			break;
		case OPT_GROUP:
			o->params.filter.group = optarg;
			o->has_group = 1;
			break;
		case OPT_FOLD:
			o->params.filter.fold = optarg;
			o->has_fold = 1;
			break;
		case OPT_INC:
			o->params.filter.inc = optarg;
			o->has_inc = 1;
			break;
		case OPT_EXC:
			o->params.filter.exc = optarg;
			o->has_exc = 1;
			break;
		case OPT_FOLD_PCT:
			err = cli_parse_double("report", "--fold-pct", optarg, &o->params.fold_pct);
			if (!err && o->params.fold_pct < 0)
				err = cli_usage_error("report", "--fold-pct must not be negative");
			o->has_fold_pct = 1;
			break;
		case OPT_START:
			err = cli_parse_double("report", "--start", optarg,
					       &o->params.filter.start_ms);
			o->has_start = 1;
			break;
		case OPT_END:
			err = cli_parse_double("report", "--end", optarg, &o->params.filter.end_ms);
			o->has_end = 1;
			break;
		case OPT_DRILL:
			err = parse_drill(o, optarg);
			break;
		case OPT_FLATTEN:
			o->flatten = 1;
			break;
		case OPT_FORMAT:
			err = parse_format(optarg, &o->format);
			break;
		case OPT_LIMIT:
			err = cli_parse_ulong("report", "--limit", optarg, &ul);
			o->view.limit = ul;
			break;
		case OPT_DEPTH:
			err = cli_parse_ulong("report", "--depth", optarg, &ul);
			if (!err && ul > 1000000)
				ul = 1000000;
			o->view.max_depth = (unsigned)ul;
			break;
		case OPT_PRESET:
			o->preset = optarg;
			break;
		case OPT_LIST_PRESETS:
			o->list_presets = 1;
			break;
		case OPT_EXE_DIR:
			o->exe_dir = optarg;
			break;
		case ':':
			return cli_usage_error("report", "option '%s' needs a value",
					       argv[optind - 1]);
		default:
			return cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
		}
		if (err)
			return err;
	}
	if (o->list_presets)
		return optind == argc ? 0 : cli_usage_error("report", "--list-presets takes no file");
	if (optind == argc)
		return cli_usage_error("report", "no input file");
	if (optind + 1 < argc)
		return cli_usage_error("report", "too many arguments");
	o->path = argv[optind];
	if (hs_view_kind_has_focus(o->view.kind) && !o->view.focus)
		return cli_usage_error("report", "view '%s' needs --focus NAME",
				       hs_view_kind_name(o->view.kind));
	if (o->has_start && o->has_end && o->params.filter.end_ms < o->params.filter.start_ms)
		return cli_usage_error("report", "--end is before --start");
	return o->preset ? apply_preset(o) : 0;
}

/* A saved default number: the value, or NAN when absent or not a number. */
static double default_number(const char *s)
{
	char *end;
	double v;

	if (!s)
		return NAN;
	v = strtod(s, &end);
	return end != s && !*end && isfinite(v) ? v : NAN;
}

/* Options not given on the command line come from the file's saved defaults. */
static void apply_defaults(struct report_opts *o, const struct hs_source_defaults *d)
{
	struct hs_filter_params *f = &o->params.filter;

	if (!o->has_group && d->group)
		f->group = d->group;
	if (!o->has_fold && d->fold)
		f->fold = d->fold;
	if (!o->has_inc && d->inc)
		f->inc = d->inc;
	if (!o->has_exc && d->exc)
		f->exc = d->exc;
	if (!o->has_fold_pct)
		o->params.fold_pct = default_number(d->fold_pct);
	if (!o->has_start)
		f->start_ms = default_number(d->start);
	if (!o->has_end)
		f->end_ms = default_number(d->end);
}

static int output(const struct hs_view *v, enum out_format format)
{
	int err;

	switch (format) {
	case OUT_JSON:
		err = hs_view_write_json(v, stdout);
		break;
	case OUT_CSV:
		err = hs_view_write_csv(v, stdout);
		break;
	default:
		err = hs_view_write_text(v, stdout);
		break;
	}
	if (err)
		return cli_fail("%s", strerror(-err));
	return 0;
}

/*
 * The query: Drill Into with all the options, then Flatten (with IncPats
 * and ExcPats cleared when it follows a drill), then the view (Drill Into
 * keeps the patterns and time but clears IncPats/ExcPats; Flatten clears
 * the patterns and Fold%).
 */
static int run(const struct hs_stack_source *src, struct report_opts *o)
{
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_query_step steps[2];
	struct hs_query q = { .steps = steps, .params = o->params, .view = o->view };
	struct hs_query_result r;
	int err;

	if (o->drill) {
		steps[q.nr_steps++] = (struct hs_query_step){
			.kind = HS_STEP_DRILL, .params = q.params,
			.name = o->drill, .what = o->drill_what,
		};
		q.params.filter.inc = q.params.filter.exc = NULL;
	}
	if (o->flatten) {
		steps[q.nr_steps++] = (struct hs_query_step){
			.kind = HS_STEP_FLATTEN, .params = q.params,
		};
		q.params.filter.group = q.params.filter.fold = NULL;
		q.params.filter.inc = q.params.filter.exc = NULL;
		q.params.fold_pct = NAN;
	}
	err = hs_query_run(src, &q, &r, &diag);
	if (err == -ENOENT)
		return cli_fail("%s: %s", r.err_at < q.nr_steps ? "--drill" : "--focus",
				diag.msg);
	if (err == -EINVAL)
		return cli_fail("%s", diag.set ? diag.msg : "bad pattern");
	if (err)
		return cli_fail("%s", strerror(-err));
	err = output(&r.view, o->format);
	hs_query_result_release(&r);
	return err;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {
		.params = HS_VIEW_PARAMS_INIT,
		.view = { .kind = HS_VIEW_BYNAME },
	};
	struct hs_source_defaults saved;
	struct hs_stack_source src;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret < 0 || (!ret && o.list_presets)) {
		free(o.drill_owned);
		hs_free(o.preset_group);
		if (ret < 0)
			return cli_help("report");
		list_presets();
		return HS_EXIT_OK;
	}
	if (!ret)
		ret = cli_load("report", o.path, o.from, &src);
	if (ret) {
		free(o.drill_owned);
		hs_free(o.preset_group);
		return ret;
	}
	/* the defaults are the file's, not the view's */
	saved = src.defaults;
	memset(&src.defaults, 0, sizeof(src.defaults));
	apply_defaults(&o, &saved);
	ret = run(&src, &o);
	hs_source_release(&src);
	hs_source_defaults_release(&saved);
	free(o.drill_owned);
	hs_free(o.preset_group);
	return ret;
}
