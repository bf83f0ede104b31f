/*
 * cmd_report - `heapscope report`: one stack-viewer view of a file as
 * text, CSV or JSON; and `heapscope diff`: the same views of the
 * difference of two files (test minus baseline, analysis/diff.h).
 *
 * Pipeline: load; fill the options not given from the file's saved
 * defaults; then the query (analysis/query.h): Drill Into (--drill) and
 * Flatten (--flatten) each make a new source, then filter, call tree,
 * Fold% and the view.
 */
#include "analysis/diff.h"
#include "analysis/memviews.h"
#include "analysis/presets.h"
#include "analysis/query.h"
#include "analysis/view_order.h"
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
	const char *cmd;	/* "report" or "diff" */
	int nr_paths;		/* input files the command takes: 1 or 2 */
	const char *from, *path, *base_path, *drill, *preset, *exe_dir, *source;
	char *drill_owned;	/* the name with its suffix cut, when it had one */
	char *preset_group;	/* the preset's GroupPats text (owned) */
	char *diff_group;	/* diff: GroupPats with the PID/TID prefix (owned) */
	int list_presets, list_sources;
	enum hs_drill_what drill_what;
	int flatten;
	const char *sort, *find;	/* --sort COLUMN[:asc|:desc], --find REGEX */
	enum out_format format;
	struct hs_view_opts view;
	struct hs_view_params params;
	unsigned given;			/* CLI_GIVEN_*: filter options given */
	int has_fold_pct;
	struct hs_memview_opts mv;	/* heapscope traces: which memory view */
	int has_mv;			/* --source, --large-threshold, --size-classes */
};

enum {
	OPT_FROM = 256, OPT_VIEW, OPT_FOCUS, OPT_FOLD_PCT, OPT_DRILL, OPT_FLATTEN,
	OPT_FORMAT, OPT_LIMIT, OPT_DEPTH, OPT_PRESET, OPT_LIST_PRESETS, OPT_EXE_DIR, OPT_SOURCE, OPT_LARGE,
	OPT_SIZE_CLASSES, OPT_LIST_SOURCES, OPT_SORT, OPT_FIND,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "view", required_argument, NULL, OPT_VIEW },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "group", required_argument, NULL, CLI_OPT_GROUP },
	{ "fold", required_argument, NULL, CLI_OPT_FOLD },
	{ "fold-pct", required_argument, NULL, OPT_FOLD_PCT },
	{ "inc", required_argument, NULL, CLI_OPT_INC },
	{ "exc", required_argument, NULL, CLI_OPT_EXC },
	{ "start", required_argument, NULL, CLI_OPT_START },
	{ "end", required_argument, NULL, CLI_OPT_END },
	{ "drill", required_argument, NULL, OPT_DRILL },
	{ "flatten", no_argument, NULL, OPT_FLATTEN },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "preset", required_argument, NULL, OPT_PRESET },
	{ "list-presets", no_argument, NULL, OPT_LIST_PRESETS },
	{ "exe-dir", required_argument, NULL, OPT_EXE_DIR },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "large-threshold", required_argument, NULL, OPT_LARGE },
	{ "size-classes", no_argument, NULL, OPT_SIZE_CLASSES },
	{ "list-sources", no_argument, NULL, OPT_LIST_SOURCES },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "find", required_argument, NULL, OPT_FIND },
	{ NULL, 0, NULL, 0 },
};

static int parse_format(const struct report_opts *o, const char *s, enum out_format *f)
{
	if (!strcmp(s, "text"))
		*f = OUT_TEXT;
	else if (!strcmp(s, "json"))
		*f = OUT_JSON;
	else if (!strcmp(s, "csv"))
		*f = OUT_CSV;
	else
		return cli_usage_error(o->cmd, "unknown format '%s' (text, json or csv)", s);
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
		return cli_usage_error(o->cmd, "unknown preset '%s' (see --list-presets)",
				       o->preset);
	if (p->needs_exe_dir && (!o->exe_dir || o->exe_dir[0] != '/'))
		return cli_usage_error(o->cmd, "preset '%s' needs --exe-dir with the "
				       "program's absolute directory", p->name);
	if (!p->needs_exe_dir && o->exe_dir)
		return cli_usage_error(o->cmd, "--exe-dir is for the 'Just My App' "
				       "preset, not '%s'", p->name);
	err = hs_preset_group_text(p, o->exe_dir, &o->preset_group);
	if (err)
		return cli_fail("preset '%s': %s", p->name, strerror(-err));
	if (!(o->given & CLI_GIVEN_GROUP)) {
		o->params.filter.group = o->preset_group;
		o->given |= CLI_GIVEN_GROUP;
	}
	if (!(o->given & CLI_GIVEN_FOLD) && *p->fold) {
		o->params.filter.fold = p->fold;
		o->given |= CLI_GIVEN_FOLD;
	}
	if (!o->has_fold_pct && *p->fold_pct &&
	    !cli_parse_double(o->cmd, "--preset's Fold%", p->fold_pct, &pct)) {
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
	struct hs_diag diag = HS_DIAG_INIT(NULL);
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
				return cli_usage_error(o->cmd, "unknown view '%s' (byname, "
						       "calltree, callers, callees, caller-callee "
						       "or flame)", optarg);
			break;
		case OPT_FOCUS:
			o->view.focus = optarg;
			break;
		case OPT_FOLD_PCT:
			err = cli_parse_double(o->cmd, "--fold-pct", optarg, &o->params.fold_pct);
			if (!err && o->params.fold_pct < 0)
				err = cli_usage_error(o->cmd, "--fold-pct must not be negative");
			o->has_fold_pct = 1;
			break;
		case OPT_DRILL:
			err = parse_drill(o, optarg);
			break;
		case OPT_FLATTEN:
			o->flatten = 1;
			break;
		case OPT_FORMAT:
			err = parse_format(o, optarg, &o->format);
			break;
		case OPT_LIMIT:
			err = cli_parse_ulong(o->cmd, "--limit", optarg, &ul);
			o->view.limit = ul;
			break;
		case OPT_DEPTH:
			err = cli_parse_ulong(o->cmd, "--depth", optarg, &ul);
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
		case OPT_SOURCE:
			o->source = optarg;
			break;
		case OPT_LIST_SOURCES:
			o->list_sources = 1;
			break;
		case OPT_SORT:
			o->sort = optarg;
			break;
		case OPT_FIND:
			o->find = optarg;
			break;
		case OPT_LARGE:
			err = cli_parse_ulong(o->cmd, "--large-threshold", optarg, &ul);
			o->mv.large_threshold = ul;
			o->has_mv = 1;
			break;
		case OPT_SIZE_CLASSES:
			o->mv.size_classes = 1;
			o->has_mv = 1;
			break;
		default:
			err = cli_filter_option(o->cmd, c, optarg, &o->params.filter, &o->given);
			if (err < 0)
				return cli_option_error(o->cmd, c, argv);
		}
		if (err)
			return err;
	}
	if (o->list_presets)
		return optind == argc ? 0 : cli_usage_error(o->cmd, "--list-presets takes no file");
	if (o->list_sources) {
		if (argc - optind != 1)
			return cli_usage_error(o->cmd, "--list-sources takes one file");
		o->path = argv[optind];
		return 0;
	}
	if (argc - optind < o->nr_paths)
		return cli_usage_error(o->cmd, o->nr_paths == 1 ? "no input file" :
				       "needs two files, BASE and TEST");
	if (argc - optind > o->nr_paths)
		return cli_usage_error(o->cmd, "too many arguments");
	if (o->nr_paths == 2)
		o->base_path = argv[optind++];
	o->path = argv[optind];
	if (hs_view_focus_check(o->view.kind, o->view.focus, 1, "--focus", &diag))
		return cli_usage_error(o->cmd, "%s", diag.msg);
	if ((o->given & CLI_GIVEN_START) && (o->given & CLI_GIVEN_END) &&
	    o->params.filter.end_ms < o->params.filter.start_ms)
		return cli_usage_error(o->cmd, "--end is before --start");
	if (o->given & CLI_GIVEN_START)
		o->mv.start_ms = o->params.filter.start_ms;
	if (o->given & CLI_GIVEN_END)
		o->mv.end_ms = o->params.filter.end_ms;
	/* a trace's --source is a memory view; other files' go to the importer */
	if (o->source && cli_is_trace(o->path, o->from)) {
		if (hs_memview_parse(o->source, &o->mv.kind))
			return cli_usage_error(o->cmd, "unknown source '%s' (alloc, net, "
					       "leaks, peak, temporary, mmap, cpu or "
					       "wall)", o->source);
		o->has_mv = 1;
	}
	if (o->has_mv && (!cli_is_trace(o->path, o->from) ||
			  (o->base_path && !cli_is_trace(o->base_path, o->from))))
		return cli_usage_error(o->cmd, "--large-threshold, --size-classes "
				       "and the memory views of --source are for "
				       "heapscope traces");
	if (o->exe_dir && !o->preset)
		return cli_usage_error(o->cmd, "--exe-dir is for --preset 'Just My App'");
	return o->preset ? apply_preset(o) : 0;
}

/* Options not given on the command line come from the file's saved defaults. */
static void apply_defaults(struct report_opts *o, const struct hs_source_defaults *d)
{
	cli_filter_defaults(&o->params.filter, o->given, d);
	if (!o->has_fold_pct)
		o->params.fold_pct = hs_source_default_number(d->fold_pct);
}

/*
 * --sort COLUMN[:asc|:desc] and --find REGEX (analysis/view_order.h) on
 * the view built; a ByName --limit applies to what they leave.
 */
static int arrange(struct hs_view *v, const struct report_opts *o, size_t limit)
{
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_view_order order = HS_VIEW_ORDER_INIT;
	struct hs_pattern *find = NULL;
	const char *dir = o->sort ? strrchr(o->sort, ':') : NULL;
	char *col = o->sort ? strndup(o->sort, dir ? (size_t)(dir - o->sort) : strlen(o->sort)) : NULL;
	int err = o->sort && !col ? -ENOMEM : 0;

	if (!err && o->sort)
		err = hs_view_order_parse(&order, col, dir ? dir + 1 : NULL, &diag);
	free(col);
	if (err == -EINVAL)
		return cli_usage_error(o->cmd, "--sort: %s", diag.msg);
	if (!err && o->find)
		err = hs_view_find_compile(o->find, strlen(o->find), &find, &diag);
	if (err == -EINVAL)
		return cli_usage_error(o->cmd, "--%s", diag.msg);
	if (!err)
		err = hs_view_arrange(v, &order, find, limit, &diag);
	hs_pattern_free(find);
	if (err == -EINVAL)
		return cli_fail("%s", diag.msg);
	return err ? cli_fail("%s", strerror(-err)) : 0;
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
	if ((o->sort || o->find) && q.view.kind == HS_VIEW_BYNAME)
		q.view.limit = 0;	/* the limit applies to the rows arranged */
	err = hs_query_run(src, &q, &r, &diag);
	if (err == -ENOENT)
		return cli_fail("%s: %s", r.err_at < q.nr_steps ? "--drill" : "--focus",
				diag.msg);
	if (err == -EINVAL)
		return cli_fail("%s", diag.set ? diag.msg : "bad pattern");
	if (err)
		return cli_fail("%s", strerror(-err));
	err = o->sort || o->find ? arrange(&r.view, o, o->view.limit) : 0;
	if (!err)
		err = output(&r.view, o->format);
	hs_query_result_release(&r);
	return err;
}

/*
 * diff: GroupPats always starts with [Ignore PID/TID], so the processes
 * and threads of the two runs cancel; the user's GroupPats (without its
 * "[description]") follows.
 */
static int diff_group(struct report_opts *o)
{
	const char *user = o->params.filter.group ? o->params.filter.group : "";
	size_t n;

	while (*user == ' ' || *user == '\t')
		user++;
	if (*user == '[' && strchr(user, ']'))
		user = strchr(user, ']') + 1;
	n = strlen("[diff] " HS_PRESET_IGNORE_PID_TID) + strlen(user) + 1;
	o->diff_group = hs_malloc(n);
	if (!o->diff_group)
		return cli_fail("out of memory");
	snprintf(o->diff_group, n, "[diff] %s%s", HS_PRESET_IGNORE_PID_TID, user);
	o->params.filter.group = o->diff_group;
	return 0;
}

/* diff: replace *@test by test - base, each side taken whole. */
static int make_diff(struct report_opts *o, struct hs_stack_source *test)
{
	struct hs_filter_params all = HS_FILTER_PARAMS_INIT;
	struct hs_stack_source base, out;
	int ret = cli_load_view(o->cmd, o->base_path, o->from, o->source, &o->mv, &base,
				NULL);

	if (ret)
		return ret;
	hs_source_init(&out);
	ret = hs_diff_build(&base, &all, test, &all, &out, NULL);
	hs_source_release(&base);
	if (ret) {
		hs_source_release(&out);
		return cli_fail("%s", strerror(-ret));
	}
	hs_source_release(test);
	*test = out;
	return 0;
}

static void opts_release(struct report_opts *o)
{
	free(o->drill_owned);
	hs_free(o->preset_group);
	hs_free(o->diff_group);
}

static int report_or_diff(const char *cmd, int nr_paths, int argc, char **argv)
{
	struct report_opts o = {
		.cmd = cmd,
		.nr_paths = nr_paths,
		.params = HS_VIEW_PARAMS_INIT,
		.view = { .kind = HS_VIEW_BYNAME },
		.mv = HS_MEMVIEW_OPTS_INIT,
	};
	struct hs_source_defaults saved;
	struct hs_stack_source src;
	struct hs_memview_info info;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret < 0 || (!ret && o.list_presets)) {
		opts_release(&o);
		if (ret < 0)
			return cli_help(cmd);
		list_presets();
		return HS_EXIT_OK;
	}
	if (!ret && o.list_sources) {
		opts_release(&o);
		return cli_list_sources(cmd, o.path, o.from);
	}
	if (!ret)
		ret = cli_load_view(cmd, o.path, o.from, o.source, &o.mv, &src, &info);
	if (ret) {
		opts_release(&o);
		return ret;
	}
	/* the defaults are the file's (TEST's for diff), not the view's */
	saved = src.defaults;
	memset(&src.defaults, 0, sizeof(src.defaults));
	apply_defaults(&o, &saved);
	/* the range chose the peak's blocks, allocated before it or not */
	if (info.uses_range && o.mv.kind == HS_MEM_PEAK)
		o.params.filter.start_ms = o.params.filter.end_ms = NAN;
	if (o.base_path) {
		ret = make_diff(&o, &src);
		if (!ret)
			ret = diff_group(&o);
	}
	if (!ret)
		ret = run(&src, &o);
	hs_source_release(&src);
	hs_source_defaults_release(&saved);
	opts_release(&o);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	return report_or_diff("report", 1, argc, argv);
}

int cmd_diff(int argc, char **argv)
{
	return report_or_diff("diff", 2, argc, argv);
}
