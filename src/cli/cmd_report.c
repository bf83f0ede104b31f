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
#include "analysis/exec_chain.h"
#include "analysis/memviews.h"
#include "analysis/presets.h"
#include "analysis/query.h"
#include "analysis/view_order.h"
#include "cli/cli.h"
#include "cli/dotnet_session.h"
#include "cli/exec_images.h"
#include "common/alloc.h"
#include "model/source_merge.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

enum out_format { OUT_TEXT, OUT_JSON, OUT_CSV };

struct report_opts {
	const char *cmd; /* "report" or "diff" */
	int nr_paths;	 /* input files the command takes: 1 or 2 */
	const char *from, *path, *base_path, *drill, *preset, *exe_dir, *source;
	const char *modules; /* diff --modules ignore|keep; NULL: by the programs */
	int ignore_modules;  /* diff: group frames without their module */
	int short_templates; /* text: template arguments as "<…>" */
	unsigned long width; /* text: fit lines in this many columns; 0: no limit */
	int fit;	     /* text: fit the terminal's width */
	char **more_paths;   /* report a b c: the files after the first */
	int nr_more;
	int no_exec_chain;		 /* --no-exec-chain */
	char **exec_paths, **exec_owned; /* cli_exec_images_add()'s */
	char *drill_owned;  /* the name with its suffix cut, when it had one */
	char *preset_group; /* the preset's GroupPats text (owned) */
	char *diff_group;   /* diff: GroupPats with the PID/TID prefix (owned) */
	int list_presets, list_sources;
	enum hs_drill_what drill_what;
	int flatten;
	const char *sort, *find; /* --sort COLUMN[:asc|:desc], --find REGEX */
	enum out_format format;
	struct hs_view_opts view;
	struct hs_view_params params;
	struct cli_filter filter;      /* the filter options as given */
	unsigned given;		       /* CLI_GIVEN_*: filter options given */
	struct cli_joined_pats joined; /* "+PATS" joined to the defaults */
	int has_fold_pct;
	struct hs_memview_opts mv; /* heapscope traces: which memory view */
	int has_mv;		   /* --source and the memory views' options */
};

/*
 * diff --modules ignore: every process is "Process", every thread
 * "Thread", and a frame "MODULE!FUNCTION" is FUNCTION (the first '!' before
 * any '(' or '<' that is not a C++ operator's ends the module).
 */
#define DIFF_IGNORE_MODULES                                                              \
	"^Process% ->Process;^Thread->Thread;"                                           \
	"@^[^!(<]+(?<!operator)(?<!operator )!(.+)->$1;"

/* --drill NAME[:inc|:exc]: the suffix is optional, so names may hold ':'. */
static int drill_cb(const char *cmd, const struct cli_option *opt, void *field,
		    const char *arg)
{
	struct report_opts *o = field;
	size_t len = strlen(arg);

	o->drill = arg;
	o->drill_what = HS_DRILL_INC;
	if (len > 4 &&
	    (!strcmp(arg + len - 4, ":inc") || !strcmp(arg + len - 4, ":exc"))) {
		o->drill_what = arg[len - 3] == 'e' ? HS_DRILL_EXC : HS_DRILL_INC;
		free(o->drill_owned);
		o->drill = o->drill_owned = strndup(arg, len - 4);
		if (!o->drill_owned)
			return cli_fail("out of memory");
	}
	return 0;
}

static int view_cb(const char *cmd, const struct cli_option *opt, void *field,
		   const char *arg)
{
	if (hs_view_kind_parse(arg, field))
		return cli_usage_error(cmd,
				       "unknown view '%s' (byname, calltree, callers, "
				       "callees, caller-callee or flame)",
				       arg);
	return 0;
}

static int format_cb(const char *cmd, const struct cli_option *opt, void *field,
		     const char *arg)
{
	enum out_format *f = field;

	if (!strcmp(arg, "text"))
		*f = OUT_TEXT;
	else if (!strcmp(arg, "json"))
		*f = OUT_JSON;
	else if (!strcmp(arg, "csv"))
		*f = OUT_CSV;
	else
		return cli_usage_error(cmd, "unknown format '%s' (text, json or csv)",
				       arg);
	return 0;
}

static int fold_pct_cb(const char *cmd, const struct cli_option *opt, void *field,
		       const char *arg)
{
	struct report_opts *o = field;

	o->has_fold_pct = 1;
	if (cli_parse_double(cmd, "--fold-pct", arg, &o->params.fold_pct))
		return HS_EXIT_USAGE;
	if (o->params.fold_pct < 0)
		return cli_usage_error(cmd, "--fold-pct must not be negative");
	return 0;
}

/* --limit N, and --depth N (more than 1000000 is 1000000) */
static int count_cb(const char *cmd, const struct cli_option *opt, void *field,
		    const char *arg)
{
	struct report_opts *o = field;
	unsigned long ul;

	if (cli_parse_ulong(cmd, opt->value ? "--depth" : "--limit", arg, &ul))
		return HS_EXIT_USAGE;
	if (opt->value)
		o->view.max_depth = (unsigned)(ul > 1000000 ? 1000000 : ul);
	else
		o->view.limit = ul;
	return 0;
}

/*
 * --large-threshold N, --size-classes, --keep-wrappers (value 1) and
 * --split-inline (2): options of a trace's memory views
 */
static int memview_cb(const char *cmd, const struct cli_option *opt, void *field,
		      const char *arg)
{
	struct report_opts *o = field;
	unsigned long ul;

	o->has_mv = 1;
	if (!arg && opt->value == 1) {
		o->mv.keep_wrappers = 1;
		return 0;
	}
	if (!arg && opt->value == 2) {
		o->mv.split_inline = 1;
		return 0;
	}
	if (!arg) {
		o->mv.size_classes = 1;
		return 0;
	}
	if (cli_parse_ulong(cmd, "--large-threshold", arg, &ul))
		return HS_EXIT_USAGE;
	o->mv.large_threshold = ul;
	return 0;
}

/* Callbacks that need more than one field get the whole struct (offset 0). */
static const struct cli_option report_options[] = {
    OPT_STRING(0, "from", struct report_opts, from, "FMT",
	       "input format (default: by file name, then content)"),
    OPT_STRING(0, "source", struct report_opts, source, "NAME",
	       "which of the file's sources to view: for perf script\n"
	       "files 'cpu' (default) or 'thread-time' (CPU_TIME and\n"
	       "BLOCKED_TIME per thread from sched events: see\n"
	       "docs/perf.md); for heapscope traces a memory view\n"
	       "(below)"),
    OPT_FLAG(0, "list-sources", struct report_opts, list_sources,
	     "list the sources FILE offers"),
    OPT_CALLBACK(0, "view", struct report_opts, view.kind, "VIEW",
		 "byname (default): one row per name, sorted by |Exc|;\n"
		 "calltree: the call tree from ROOT, indented by depth;\n"
		 "callers / callees: the tree of callers or callees of\n"
		 "--focus (the deepest occurrence on each stack counts);\n"
		 "caller-callee: callers, the focus and its callees;\n"
		 "flame: the call tree as folded stacks (text) or as\n"
		 "flame-graph rectangles (json, csv)",
		 view_cb, 0),
    OPT_STRING(0, "focus", struct report_opts, view.focus, "NAME",
	       "the name the callers, callees and caller-callee views\n"
	       "are about (\"ROOT\" is allowed)"),
    CLI_FILTER_OPTIONS(struct report_opts, filter),
    OPT_CALLBACK(0, "fold-pct", struct report_opts, cmd, "P",
		 "Fold%: fold call-tree nodes (and names) under P% of\n"
		 "the total into their parent",
		 fold_pct_cb, 0),
    OPT_CALLBACK(0, "drill", struct report_opts, cmd, "NAME[:inc|:exc]",
		 "Drill Into: view only the samples under (inc, the\n"
		 "default) or charged to (exc) the name, with their\n"
		 "original stacks; IncPats and ExcPats are cleared",
		 drill_cb, 0),
    OPT_FLAG(0, "flatten", struct report_opts, flatten,
	     "view each sample as its one (grouped) leaf frame;\n"
	     "the patterns are cleared afterwards"),
    OPT_STRING(0, "preset", struct report_opts, preset, "NAME",
	       "GroupPats (and FoldPats, Fold%) of a preset; --group,\n"
	       "--fold and --fold-pct given explicitly win"),
    OPT_STRING(0, "exe-dir", struct report_opts, exe_dir, "DIR",
	       "the program's directory, for the Just My App preset"),
    OPT_FLAG(0, "list-presets", struct report_opts, list_presets, "list the presets"),
    OPT_FLAG(0, "short-templates", struct report_opts, short_templates,
	     "text: write template arguments as <…> (std::vector<…>)"),
    OPT_ULONG(0, "width", struct report_opts, width, "N",
	      "text: cut names (ending in …) so that lines fit N\n"
	      "columns"),
    OPT_FLAG(0, "fit", struct report_opts, fit,
	     "text: --width of the terminal (else $COLUMNS, else 80)"),
    OPT_CALLBACK(0, "format", struct report_opts, format, "F",
		 "text (default), json (docs/json-api.md) or csv", format_cb, 0),
    OPT_CALLBACK(0, "limit", struct report_opts, cmd, "N",
		 "at most N rows (per list in caller-callee; 0: all)", count_cb, 0),
    OPT_CALLBACK(0, "depth", struct report_opts, cmd, "N",
		 "tree views: at most N levels below the root (0: all)", count_cb, 1),
    OPT_STRING(0, "sort", struct report_opts, sort, "COLUMN[:asc|:desc]",
	       "rows (a tree: each row's children) sorted by name,\n"
	       "exc, exc_count, inc, inc_count, fold, fold_count,\n"
	       "inc_avg, first or last; names ascend and numbers\n"
	       "descend unless :asc or :desc says otherwise"),
    OPT_FLAG(0, "no-exec-chain", struct report_opts, no_exec_chain,
	     "read a trace that ended by exec alone: by default\n"
	     "the traces of the images its process exec'd next,\n"
	     "found beside it, are read with it as one process"),
    OPT_STRING(0, "find", struct report_opts, find, "REGEX",
	       "only the rows whose name the regular expression\n"
	       "matches (caseless), in a tree with the rows that lead\n"
	       "to them; as the GUI's Find (ByName: --limit counts\n"
	       "the rows sorted and found)"),
    OPT_TEXT(
	"\n"
	"Heapscope traces (.heapscope) offer memory views (metric: bytes, count:\n"
	"blocks; sampled traces are scaled to estimates):\n"
	"  --source NAME     alloc (default): every allocation, frees ignored;\n"
	"                    net: allocations minus frees, each free charged to\n"
	"                    the allocating stack at its time (a range shows the\n"
	"                    growth in it); leaks: blocks allocated in the range\n"
	"                    --start..--end (default: the whole trace) and still\n"
	"                    live at its end; peak: the blocks live when heap in\n"
	"                    use was highest (within the range; blocks allocated\n"
	"                    before it count too; a range without an allocation\n"
	"                    or free: the heap as it was); temporary: allocations\n"
	"                    freed before their thread's next one; mmap: anonymous\n"
	"                    mappings;\n"
	"                    cpu: CPU samples of 'run --cpu' (ms of CPU time);\n"
	"                    wall: wall-clock samples of 'run --wall', each thread's\n"
	"                    time as CPU_TIME, BLOCKED_TIME or READIED_TIME (ms)\n"),
    OPT_STRING(0, "modules", struct report_opts, modules, "ignore|keep",
	       "diff only: 'ignore' groups every frame without its\n"
	       "module (and every process as 'Process'), so 'stl!f' in\n"
	       "BASE and 'stl2!f' in TEST cancel; 'keep' does not;\n"
	       "default: ignore when BASE's and TEST's programs differ"),
    OPT_CALLBACK(0, "large-threshold", struct report_opts, cmd, "N",
		 "a 'LargeAlloc' frame under allocations of at least N\n"
		 "bytes (default 131072; 0: none)",
		 memview_cb, 0),
    OPT_CALLBACK_F(0, "size-classes", struct report_opts, cmd, NULL,
		   "an 'Alloc < 2^k' frame (as a number) under each\n"
		   "allocation",
		   memview_cb, 0, CLI_OPTION_NO_VALUE),
    OPT_CALLBACK_F(0, "keep-wrappers", struct report_opts, cmd, NULL,
		   "no allocation wrappers in the default FoldPats", memview_cb, 1,
		   CLI_OPTION_NO_VALUE),
    OPT_CALLBACK_F(0, "split-inline", struct report_opts, cmd, NULL,
		   "an inlined copy of a function that also has out-of-line\n"
		   "frames apart, as 'f (inline)' (by default they are one)",
		   memview_cb, 2, CLI_OPTION_NO_VALUE),
    OPT_TEXT("Their default FoldPats (see --list-presets, 'heap') charge the allocator\n"
	     "(malloc, operator new, C++ containers and strings, Rust's Vec, String,\n"
	     "Box, HashMap) and the program's allocation wrappers (functions that\n"
	     "only pass an allocation on, called from several places) to their\n"
	     "callers; leaks puts the exit-time allocations of\n"
	     "libc and libstdc++ (known by the frames that allocate) under a\n"
	     "'KnownExitTimeAlloc' frame that its default ExcPats drop\n"
	     "(docs/memory.md). Give --fold '' or --exc '' to see them.\n"),
    OPT_END(),
};

static const char report_outro[] =
    "Patterns (';'-separated): '*' any text, '%' a run of letters, digits,\n"
    "'_', '.' and '?', '^' an anchor, '{...}' a group for $1..$9, '@' at the\n"
    "start a raw regular expression; case-insensitive substring matches.\n"
    "Options not given on the command line come from the file's saved view\n"
    "state (.perfView.xml) when it has one. NAME is a name as the views show\n"
    "it (the \"key\" of --format json), or, when it names one frame, the name\n"
    "without its module or the bare C++ function ('fill', 'ns::fill' for\n"
    "'app!std::vector<long>* ns::fill<long>(int)'), as 'source' takes it;\n"
    "otherwise the error lists the frames it names, or those containing it.\n\n"
    "Exit status: 0 printed, 1 failed (unreadable input, a bad pattern, an\n"
    "unknown focus or drill name), 2 usage error.\n";

const struct cli_syntax cli_report_syntax = {
    .cmd = "report",
    .usage =
	"usage: heapscope report FILE... [--from FMT] [--source NAME] [--view VIEW]\n"
	"                        [--focus NAME] [--group PATS] [--fold PATS]\n"
	"                        [--fold-pct P]\n"
	"                        [--inc PATS] [--exc PATS] [--start MS] [--end MS]\n"
	"                        [--drill NAME[:inc|:exc]] [--flatten]\n"
	"                        [--preset NAME [--exe-dir DIR]]\n"
	"                        [--format text|json|csv] [--limit N] [--depth N]\n"
	"                        [--large-threshold N] [--size-classes]\n"
	"                        [--sort COLUMN[:asc|:desc]] [--find REGEX]\n"
	"       heapscope report --list-presets\n"
	"       heapscope report FILE --list-sources\n",
    .intro = "Print one view of PerfView's stack viewer for FILE ('-' for standard\n"
	     "input): first the summary line (Totals Metric, Count, Samples, First,\n"
	     "Last, Last-First, Metric/Interval, TimeBucket; times in ms), then rows\n"
	     "with the columns Name, Exc %, Exc, Exc Ct, Inc %, Inc, Inc Ct, Fold,\n"
	     "When, First and Last. Percentages are of |ROOT inclusive|.\n"
	     "Several FILEs are read as one source (PerfView's multi-file view): each\n"
	     "trace under its \"Process NAME (PID)\" frames, any other file under a\n"
	     "\"Trace FILE\" frame; they must share a unit (bytes, ms, ...).\n",
    .options = report_options,
    .outro = report_outro,
};

/* diff takes report's options: its help lists them after its own text */
const struct cli_syntax cli_diff_syntax = {
    .cmd = "diff",
    .usage = "usage: heapscope diff BASE TEST [report options]\n",
    .intro = "PerfView's Diff: one source holding TEST's samples as they are and\n"
	     "BASE's samples negated, each on its raw stack, viewed with every option\n"
	     "of 'heapscope report' (see 'heapscope help report'). Positive numbers\n"
	     "grew from BASE to TEST, negative ones shrank; negative When buckets show\n"
	     "as lowercase letters.\n"
	     "\n"
	     "GroupPats always starts with the [Ignore PID/TID] patterns\n"
	     "  "
	     "^Process% {%}->$1;^Thread->Thread;\n"
	     "so the processes and threads of the two runs cancel; --group or\n"
	     "--preset text follows it. Saved defaults come from TEST.\n"
	     "\n"
	     "Example: heapscope diff before.data.txt after.data.txt --view calltree\n",
    .options = report_options,
    .outro = report_outro,
};

/*
 * --preset: GroupPats "[name] group", and its FoldPats, Fold% and ExcPats when it
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
		return cli_usage_error(o->cmd,
				       "preset '%s' needs --exe-dir with the "
				       "program's absolute directory",
				       p->name);
	if (!p->needs_exe_dir && o->exe_dir)
		return cli_usage_error(o->cmd,
				       "--exe-dir is for the 'Just My App' "
				       "preset, not '%s'",
				       p->name);
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
	if (!(o->given & CLI_GIVEN_EXC) && p->exc) {
		o->params.filter.exc = p->exc;
		o->given |= CLI_GIVEN_EXC;
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
		if (p->exc)
			printf("    ExcPats: %s\n", p->exc);
		if (p->needs_exe_dir)
			printf("    (needs --exe-dir: EXE_DIR stands for it)\n");
	}
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	const struct cli_syntax *syntax =
	    o->nr_paths == 2 ? &cli_diff_syntax : &cli_report_syntax;
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	char hint[4200];
	int n, status;

	n = cli_parse_options(syntax, o, argc, argv, &status);
	if (n < 0)
		return status ? status : -1;
	o->params.filter = o->filter.params;
	o->given = o->filter.given;
	if (o->list_presets)
		return n == 0 ? 0
			      : cli_usage_error(o->cmd, "--list-presets takes no file");
	if (o->list_sources) {
		if (n != 1)
			return cli_usage_error(o->cmd, "--list-sources takes one file");
		o->path = argv[0];
		return 0;
	}
	if (n < o->nr_paths)
		return cli_usage_error(o->cmd, o->nr_paths == 1
						   ? "no input file"
						   : "needs two files, BASE and TEST");
	if (o->modules && o->nr_paths != 2)
		return cli_usage_error(o->cmd, "--modules is for diff");
	if (o->modules && strcmp(o->modules, "ignore") && strcmp(o->modules, "keep"))
		return cli_usage_error(
		    o->cmd, "--modules takes 'ignore' or 'keep', not '%s'", o->modules);
	if (n > o->nr_paths && o->nr_paths == 2)
		return cli_usage_error(o->cmd, "too many arguments");
	if (n > o->nr_paths) {
		o->more_paths = argv + 1;
		o->nr_more = n - 1;
		o->path = argv[0];
		goto checks;
	}
	if (o->nr_paths == 2)
		o->base_path = argv[0];
	o->path = argv[o->nr_paths - 1];
checks:
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
			return cli_usage_error(o->cmd,
					       "unknown source '%s' (alloc, net, "
					       "leaks, peak, temporary, mmap, cpu or "
					       "wall)%s",
					       o->source,
					       cli_dotnet_sibling_hint(o->path, o->source,
								       hint,
								       sizeof(hint)));
		o->has_mv = 1;
	}
	if (o->has_mv && (!cli_is_trace(o->path, o->from) ||
			  (o->base_path && !cli_is_trace(o->base_path, o->from))))
		return cli_usage_error(o->cmd, "--large-threshold, --size-classes, "
					       "--keep-wrappers, --split-inline "
					       "and the memory views of --source are for "
					       "heapscope traces");
	if (o->exe_dir && !o->preset)
		return cli_usage_error(o->cmd, "--exe-dir is for --preset 'Just My App'");
	return o->preset ? apply_preset(o) : 0;
}

/* Options not given on the command line come from the file's saved defaults. */
static int apply_defaults(struct report_opts *o, const struct hs_source_defaults *d)
{
	if (!o->has_fold_pct)
		o->params.fold_pct = hs_source_default_number(d->fold_pct);
	return cli_filter_defaults(&o->params.filter, o->given, d, &o->joined);
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
	char *col =
	    o->sort ? strndup(o->sort, dir ? (size_t)(dir - o->sort) : strlen(o->sort))
		    : NULL;
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

/* --fit: the terminal's width, else $COLUMNS, else 80. */
static size_t terminal_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	long n;

	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
		return ws.ws_col;
	n = env ? strtol(env, NULL, 10) : 0;
	return n > 0 ? (size_t)n : 80;
}

static int output(const struct hs_view *v, enum out_format format,
		  const struct hs_text_opts *text)
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
		err = hs_view_write_text_opts(v, text, stdout);
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
	struct hs_query q = {.steps = steps, .params = o->params, .view = o->view};
	struct hs_query_result r;
	struct hs_text_opts text;
	int err;

	if (o->drill) {
		steps[q.nr_steps++] = (struct hs_query_step){
		    .kind = HS_STEP_DRILL,
		    .params = q.params,
		    .name = o->drill,
		    .what = o->drill_what,
		};
		q.params.filter.inc = q.params.filter.exc = NULL;
	}
	if (o->flatten) {
		steps[q.nr_steps++] = (struct hs_query_step){
		    .kind = HS_STEP_FLATTEN,
		    .params = q.params,
		};
		q.params.filter.group = q.params.filter.fold = NULL;
		q.params.filter.inc = q.params.filter.exc = NULL;
		q.params.fold_pct = NAN;
	}
	if ((o->sort || o->find) && q.view.kind == HS_VIEW_BYNAME)
		q.view.limit = 0; /* the limit applies to the rows arranged */
	err = hs_query_run(src, &q, &r, &diag);
	if (err == -ENOENT)
		return cli_fail("%s: %s", r.err_at < q.nr_steps ? "--drill" : "--focus",
				diag.msg);
	if (err == -EINVAL)
		return cli_fail("%s", diag.set ? diag.msg : "bad pattern");
	if (err)
		return cli_fail("%s", strerror(-err));
	err = o->sort || o->find ? arrange(&r.view, o, o->view.limit) : 0;
	text.short_templates = o->short_templates;
	text.width = o->fit ? terminal_width() : o->width;
	if (!err)
		err = output(&r.view, o->format, &text);
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
	const char *prefix;
	size_t n;

	while (*user == ' ' || *user == '\t')
		user++;
	if (*user == '[' && strchr(user, ']'))
		user = strchr(user, ']') + 1;
	prefix = o->ignore_modules ? DIFF_IGNORE_MODULES : HS_PRESET_IGNORE_PID_TID;
	n = strlen("[diff] ") + strlen(prefix) + strlen(user) + 1;
	o->diff_group = hs_malloc(n);
	if (!o->diff_group)
		return cli_fail("out of memory");
	snprintf(o->diff_group, n, "[diff] %s%s", prefix, user);
	o->params.filter.group = o->diff_group;
	return 0;
}

/*
 * The program names of @src's "Process NAME (PID)" top frames, interned in
 * @names; 0 or -ENOMEM.
 */
static int program_names(const struct hs_stack_source *src, struct hs_strtab *names)
{
	static const char prefix[] = "Process ";
	size_t i;

	for (i = 0; i < src->nr_stacks; i++) {
		const char *name = hs_source_frame_name(src, src->stack_frame[i]), *end;
		uint32_t id;

		if (src->stack_caller[i] != HS_NO_STACK ||
		    strncmp(name, prefix, sizeof(prefix) - 1))
			continue;
		name += sizeof(prefix) - 1;
		end = strrchr(name, '(');
		while (end && end > name && end[-1] == ' ')
			end--;
		if (hs_strtab_intern(
			names, name,
			end && end > name ? (size_t)(end - name) : strlen(name), &id))
			return -ENOMEM;
	}
	return 0;
}

/* Whether @a names a program that @b does not. */
static int has_other_program(const struct hs_strtab *a, const struct hs_strtab *b)
{
	size_t i;
	uint32_t id;

	for (i = 0; i < hs_strtab_count(a); i++)
		if (hs_strtab_find(b, hs_strtab_get(a, (uint32_t)i),
				   hs_strtab_len(a, (uint32_t)i), &id))
			return 1;
	return 0;
}

/*
 * diff's --modules default: ignore module names when BASE and TEST ran
 * different programs (their process frames name different executables),
 * so that the same function in two builds cancels.
 */
static int programs_differ(const struct hs_stack_source *base,
			   const struct hs_stack_source *test, int *differ)
{
	struct hs_strtab b, t;
	int err;

	hs_strtab_init(&b, 1 << 20);
	hs_strtab_init(&t, 1 << 20);
	err = program_names(base, &b);
	if (!err)
		err = program_names(test, &t);
	*differ = !err && hs_strtab_count(&b) && hs_strtab_count(&t) &&
		  (has_other_program(&b, &t) || has_other_program(&t, &b));
	hs_strtab_release(&b);
	hs_strtab_release(&t);
	return err;
}

/* diff: replace *@test by test - base, each side taken whole. */
static int make_diff(struct report_opts *o, struct hs_stack_source *test)
{
	struct hs_filter_params all = HS_FILTER_PARAMS_INIT;
	struct hs_stack_source base, out;
	int ret =
	    cli_load_view(o->cmd, o->base_path, o->from, o->source, &o->mv, &base, NULL);

	if (ret)
		return ret;
	if (!o->modules) {
		ret = programs_differ(&base, test, &o->ignore_modules);
		if (ret) {
			hs_source_release(&base);
			return cli_fail("out of memory");
		}
		if (o->ignore_modules)
			fprintf(stderr,
				"heapscope: %s: BASE and TEST ran different programs: "
				"frames are compared without their module "
				"(--modules keep to keep them)\n",
				o->cmd);
	} else {
		o->ignore_modules = !strcmp(o->modules, "ignore");
	}
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
	cli_exec_images_release(o->exec_paths, o->exec_owned);
	hs_free(o->preset_group);
	hs_free(o->diff_group);
	cli_joined_pats_release(&o->joined);
}

/*
 * Top frame of a trace merged with others: none for a heapscope trace, whose
 * stacks start at their process (@process, when not NULL, instead of its
 * own: an image before an exec, analysis/exec_chain.h); "Trace FILE" for
 * the rest.
 */
static int merge_into(struct hs_stack_source *all, struct hs_stack_source *one,
		      const char *path, const char *process, const char *cmd)
{
	char top[4200];
	int err;

	snprintf(top, sizeof(top), "Trace %s", path);
	if (hs_source_has_process_frames(one))
		err = process ? hs_source_append_as(all, one, process)
			      : hs_source_append(all, one, NULL);
	else
		err = hs_source_append(all, one, top);
	if (err == -EINVAL)
		return cli_fail("%s: %s is in %s, the first file in %s", cmd, path,
				one->metric_unit ? one->metric_unit : "no unit",
				all->metric_unit ? all->metric_unit : "no unit");
	if (err)
		return cli_fail("%s: %s: %s", cmd, path, strerror(-err));
	return HS_EXIT_OK;
}

/*
 * report --source peak a b c: every file's peak view read before any is
 * merged, into @views[k] (@views[0] stays empty: the first file's is
 * @src), and in @keep which ones the merged view keeps: of the images of
 * one process across exec only the highest peak's, since an exec frees
 * the heap it replaces (hs_exec_chain_peak_images()).
 */
static int load_peaks(struct report_opts *o, const struct hs_stack_source *src,
		      const char *const *paths, size_t nr, struct hs_stack_source *views,
		      int *keep)
{
	double *peak = calloc(nr, sizeof(*peak));
	double count;
	size_t k;
	int ret = HS_EXIT_OK;

	if (!peak)
		return cli_fail("out of memory");
	hs_source_totals(src, &peak[0], &count);
	for (k = 1; k < nr && !ret; k++) {
		ret = cli_load_view(o->cmd, paths[k], o->from, o->source, &o->mv,
				    &views[k], NULL);
		if (!ret)
			hs_source_totals(&views[k], &peak[k], &count);
	}
	if (!ret && hs_exec_chain_peak_images(paths, nr, peak, keep))
		ret = cli_fail("out of memory");
	free(peak);
	return ret;
}

/*
 * report a b c: the files after the first, each read as the same view,
 * appended to @src under their process (or file) frame, as PerfView's
 * multi-file view; the images of a process that exec'd under its last
 * image's, and of those only the highest image's peak for the peak view
 * (load_peaks()). The first file's defaults stay.
 */
static int load_more(struct report_opts *o, struct hs_stack_source *src)
{
	size_t nr = (size_t)o->nr_more + 1, k;
	int peak = o->has_mv && o->mv.kind == HS_MEM_PEAK;
	struct hs_stack_source all, one;
	const char **paths = calloc(nr, sizeof(*paths));
	char **process = calloc(nr, sizeof(*process));
	int *keep = calloc(nr, sizeof(*keep));
	/* the peak view: every file's, read first (load_peaks()) */
	struct hs_stack_source *views = peak ? calloc(nr, sizeof(*views)) : NULL;
	int ret;

	hs_source_init(&all);
	if (!paths || !process || !keep || (peak && !views)) {
		ret = cli_fail("out of memory");
		goto out;
	}
	paths[0] = o->path;
	for (k = 0; k < nr; k++) {
		if (k)
			paths[k] = o->more_paths[k - 1];
		keep[k] = 1;
		if (views)
			hs_source_init(&views[k]);
	}
	if (hs_exec_chain_frames(paths, nr, process)) {
		ret = cli_fail("out of memory");
		goto out;
	}
	ret = peak ? load_peaks(o, src, paths, nr, views, keep) : HS_EXIT_OK;
	for (k = 0; !ret && k < nr; k++) {
		struct hs_stack_source *view = src;

		if (k && peak) {
			view = &views[k];
		} else if (k) {
			ret = cli_load_view(o->cmd, paths[k], o->from, o->source, &o->mv,
					    &one, NULL);
			if (ret)
				break;
			view = &one;
		}
		if (keep[k])
			ret = merge_into(&all, view, paths[k], process[k], o->cmd);
		if (view == &one)
			hs_source_release(&one);
	}
	hs_exec_chain_release(process, nr);
out:
	for (k = 0; views && k < nr; k++)
		hs_source_release(&views[k]);
	free(views);
	free(paths);
	free(process);
	free(keep);
	if (ret) {
		hs_source_release(&all);
		hs_source_release(src);
		return ret;
	}
	/* the first file's default text boxes, then the merged samples */
	all.defaults = src->defaults;
	memset(&src->defaults, 0, sizeof(src->defaults));
	hs_source_release(src);
	*src = all;
	return HS_EXIT_OK;
}

/* report FILE...: the images after an exec of each file's process too. */
static int add_exec_images(struct report_opts *o)
{
	char *one[1] = {(char *)o->path};
	char *const *given = o->more_paths ? o->more_paths - 1 : one;
	int n, ret;

	ret = cli_exec_images_add(o->cmd, given, o->nr_more + 1, &o->exec_paths, &n,
				  &o->exec_owned);
	if (!ret) {
		o->more_paths = o->exec_paths + 1;
		o->nr_more = n - 1;
	}
	return ret;
}

static int report_or_diff(const char *cmd, int nr_paths, int argc, char **argv)
{
	struct report_opts o = {
	    .cmd = cmd,
	    .nr_paths = nr_paths,
	    .params = HS_VIEW_PARAMS_INIT,
	    .filter = {.params = HS_FILTER_PARAMS_INIT},
	    .view = {.kind = HS_VIEW_BYNAME},
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
			return HS_EXIT_OK; /* the help was printed */
		list_presets();
		return HS_EXIT_OK;
	}
	if (!ret && o.list_sources) {
		opts_release(&o);
		return cli_list_sources(cmd, o.path, o.from);
	}
	if (!ret && !o.base_path && !o.no_exec_chain && cli_is_trace(o.path, o.from))
		ret = add_exec_images(&o);
	if (!ret)
		ret = cli_load_view(cmd, o.path, o.from, o.source, &o.mv, &src, &info);
	if (!ret && o.nr_more)
		ret = load_more(&o, &src);
	if (ret) {
		opts_release(&o);
		return ret;
	}
	/* the defaults are the file's (TEST's for diff), not the view's */
	saved = src.defaults;
	memset(&src.defaults, 0, sizeof(src.defaults));
	ret = apply_defaults(&o, &saved);
	/* the range chose the peak's blocks, allocated before it or not */
	if (info.uses_range && o.mv.kind == HS_MEM_PEAK)
		o.params.filter.start_ms = o.params.filter.end_ms = NAN;
	if (!ret && o.base_path) {
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
