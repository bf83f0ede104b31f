/*
 * cmd_view - `heapscope view`: serve the web GUI for one or more profiles
 * on 127.0.0.1 and print its URL (with the access token) until SIGINT or
 * SIGTERM. The first file is the one shown; the others can be switched to
 * or used as a diff baseline, and with --merge seen as one merged trace.
 * A heap trace's .nettrace, recorded beside it by `run --dotnet`, comes
 * along.
 */
#include "cli/cli.h"
#include "cli/dotnet_session.h"
#include "cli/exec_images.h"
#include "server/app.h"
#include "server/server.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The file name without its directory. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return !strcmp(path, "-") ? "<stdin>" : slash && slash[1] ? slash + 1 : path;
}

/*
 * Open @url in a browser when that makes sense: asked for, a terminal on
 * stdout (not a test or a pipe) and a display. Returns the child or -1.
 */
static pid_t open_browser(const char *url, int no_browser)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = {"xdg-open", (char *)url, NULL};
	pid_t pid;

	const char *x11 = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");

	if (no_browser || !isatty(STDOUT_FILENO) || ((!x11 || !*x11) && (!wl || !*wl)))
		return -1;
	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "xdg-open", &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

int cli_view_serve(struct hs_app *app, const struct cli_view_opts *o)
{
	struct hs_server_opts so = {.bind = o->bind, .port = o->port};
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	struct hs_server *srv;
	sigset_t set, old;
	char url[256];
	pid_t browser;
	int sig, err;

	/* the server's thread inherits the mask: signals come to sigwait() */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	err = hs_server_start(&srv, app, &so, &diag);
	if (err) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err == -EINVAL)
			return cli_usage_error("view", "%s", diag.msg);
		return cli_fail("%s", diag.set ? diag.msg : strerror(-err));
	}
	/*
	 * The page's first questions, asked now: their call tree is built
	 * while the browser starts (none asked if it fails: the page asks).
	 */
	(void)hs_app_warm(app);
	/*
	 * Read ahead what a first source switch would wait for; it pauses
	 * while requests are served, so it does not slow the Updates down
	 * on few cores (none if it fails).
	 */
	(void)hs_app_prefetch(app);
	hs_server_url(srv, url, sizeof(url));
	printf("heapscope: serving %s at %s\n",
	       app->nr_traces ? app->traces[0].name : "nothing", url);
	printf("heapscope: press Ctrl-C to stop\n");
	fflush(stdout);
	if (hs_server_exposed(srv))
		fprintf(stderr,
			"heapscope: warning: listening on %s port %u: the GUI is "
			"reachable from the network, and whoever has the URL's token "
			"can read these profiles\n",
			hs_server_exposed(srv), hs_server_port(srv));
	browser = open_browser(url, o->no_browser);
	do {
		err = sigwait(&set, &sig);
	} while (err == EINTR);
	hs_server_stop(srv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (browser > 0)
		waitpid(browser, NULL, WNOHANG);
	fprintf(stderr, "heapscope: stopped (%s)\n", strsignal(sig));
	return HS_EXIT_OK;
}

/* The command line: the server's options, --from and --merge. */
struct view_cli {
	struct cli_view_opts o;
	const char *from;
	int merge;
	int no_exec_chain; /* --no-exec-chain */
};

static int port_cb(const char *cmd, const struct cli_option *opt, void *field,
		   const char *arg)
{
	unsigned long ul;

	if (cli_parse_ulong(cmd, "--port", arg, &ul))
		return HS_EXIT_USAGE;
	if (ul > 65535)
		return cli_usage_error(cmd, "--port must be at most 65535");
	*(unsigned *)field = (unsigned)ul;
	return 0;
}

static const struct cli_option view_options[] = {
    OPT_STRING(0, "from", struct view_cli, from, "FMT",
	       "input format of every FILE (default: by name, then content)"),
    OPT_CALLBACK(0, "port", struct view_cli, o.port, "N",
		 "port to listen on (default: any free port)", port_cb, 0),
    OPT_STRING(0, "bind", struct view_cli, o.bind, "ADDR",
	       "numeric address to listen on (default: 127.0.0.1; anything\n"
	       "else lets other machines in, with the token)"),
    OPT_FLAG(0, "merge", struct view_cli, merge,
	     "also show the FILEs as one trace, \"all N files\", the one\n"
	     "shown first: every FILE under its process, as `report FILE\n"
	     "FILE...` has them (the first FILE's sources and defaults)"),
    OPT_FLAG(0, "no-exec-chain", struct view_cli, no_exec_chain,
	     "show a trace that ended by exec alone: by default the\n"
	     "traces of the images its process exec'd next, found\n"
	     "beside it, are served too, and with one FILE merged\n"
	     "with it first"),
    OPT_FLAG(0, "no-browser", struct view_cli, o.no_browser,
	     "do not open a browser (it is opened only when stdout is a\n"
	     "terminal and there is a display)"),
    OPT_END(),
};

const struct cli_syntax cli_view_syntax = {
    .cmd = "view",
    .usage = "usage: heapscope view FILE [FILE...] [--from FMT] [--merge] [--port N]\n"
	     "                      [--bind ADDR] [--no-browser]\n",
    .intro = "Serve the stack viewer for FILE in a web browser and print its URL. The\n"
	     "URL holds a random token that every request needs (the browser then\n"
	     "keeps it in a cookie); only the GUI's own files are ever served. Other\n"
	     "FILEs can be switched to, or used as the baseline of a diff (and, with\n"
	     "--merge, seen as one). A heap trace's .nettrace recorded beside it by\n"
	     "`run --dotnet` (NAME.PID.nettrace) is served too. Runs until interrupted\n"
	     "(Ctrl-C, SIGTERM).\n",
    .options = view_options,
    .outro = "The GUI: docs/gui.md; its JSON API (the same JSON as `heapscope report\n"
	     "--format json`): docs/json-api.md.\n",
    .help_column = 17,
};

/* Add @path to @app: a file reads its other sources when they are asked for. */
static int add_file(struct hs_app *app, const char *path, const char *from)
{
	enum hs_format fmt = from ? hs_format_parse(from) : HS_FORMAT_UNKNOWN;
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_stack_source src;
	int err;

	if (from && fmt == HS_FORMAT_UNKNOWN)
		return cli_usage_error("view", "unknown input format '%s'", from);
	if (!strcmp(path, "-")) {
		/* standard input is read once: its default source only */
		err = cli_load("view", path, from, &src);
		if (err)
			return err;
		if (fmt == HS_FORMAT_UNKNOWN)
			fmt = hs_format_from_path(path);
		if (hs_app_add_trace(app, base_name(path),
				     fmt != HS_FORMAT_UNKNOWN ? hs_format_name(fmt) : "",
				     &src))
			return cli_fail("out of memory");
		return 0;
	}
	err = hs_app_open(app, path, base_name(path), fmt, &diag);
	if (err) {
		return cli_fail_diag(&diag, err);
	}
	cli_warn_lines(app->traces[app->nr_traces - 1].sources[0].src.defaults.warning);
	return 0;
}

/*
 * --merge: the first @nr_merge files (two or more) as one more trace, the
 * one shown first.
 */
static int add_merged(struct hs_app *app, int nr_merge)
{
	struct hs_diag diag = HS_DIAG_INIT(NULL);
	char name[64];
	int err;

	snprintf(name, sizeof(name), "all %d files", nr_merge);
	err = hs_app_merge(app, name, (size_t)nr_merge, 1, &diag);
	if (err)
		return cli_fail("view: --merge: %s",
				diag.set ? diag.msg : strerror(-err));
	return HS_EXIT_OK;
}

static int view_files(int n, char *const *paths, const char *from, int nr_merge,
		      const struct cli_view_opts *o)
{
	struct hs_app app;
	int ret, i;

	ret = hs_app_init(&app, NULL);
	if (ret)
		return cli_fail("cannot make a token: %s", strerror(-ret));
	for (i = 0; i < n && !ret; i++)
		ret = add_file(&app, paths[i], from);
	if (!ret && nr_merge >= 2)
		ret = add_merged(&app, nr_merge);
	if (!ret)
		ret = cli_view_serve(&app, o);
	hs_app_release(&app);
	return ret;
}

/*
 * @n files @paths, and the traces that continue their processes after an
 * exec (cli/exec_images.h): a single trace that exec'd is shown merged
 * with them first ("all N files", as --merge), @merge merges every file.
 */
static int view_images(int n, char **paths, int merge, const struct cli_view_opts *o,
		       int (*serve)(int, char **, int, const struct cli_view_opts *))
{
	char **all, **owned;
	int nr, ret;

	ret = cli_exec_images_add("view", paths, n, &all, &nr, &owned);
	if (ret)
		return ret;
	ret = serve(nr, all, merge || (n == 1 && nr > 1) ? nr : 0, o);
	cli_exec_images_release(all, owned);
	return ret;
}

static int serve_files(int n, char **paths, int nr_merge, const struct cli_view_opts *o)
{
	return view_files(n, paths, NULL, nr_merge, o);
}

int cli_view_files(int n, char *const *paths, const char *from,
		   const struct cli_view_opts *o)
{
	if (from)
		return view_files(n, paths, from, 0, o);
	return view_images(n, (char **)paths, 0, o, serve_files);
}

/*
 * Serve @paths and, after them, the .nettrace that `run --dotnet`
 * recorded beside each heap trace among them (cli_dotnet_sibling), unless
 * it is given too: the managed sources of the same session.
 */
static int view_with_siblings(int n, char **paths, int nr_merge,
			      const struct cli_view_opts *o)
{
	char **all, (*siblings)[4096];
	int i, j, nr = n, ret;

	all = calloc((size_t)n * 2, sizeof(*all));
	siblings = calloc((size_t)n, sizeof(*siblings));
	if (!all || !siblings) {
		free(all);
		free(siblings);
		return cli_fail("out of memory");
	}
	for (i = 0; i < n; i++)
		all[i] = paths[i];
	for (i = 0; i < n; i++) {
		if (!cli_dotnet_sibling(paths[i], siblings[i], sizeof(siblings[i])))
			continue;
		for (j = 0; j < nr && strcmp(all[j], siblings[i]); j++)
			;
		if (j < nr)
			continue; /* given, or beside another name for the same file */
		all[nr++] = siblings[i];
		fprintf(stderr,
			"heapscope: also serving %s, the .NET runtime's events "
			"recorded beside %s\n",
			siblings[i], paths[i]);
	}
	ret = view_files(nr, all, NULL, nr_merge, o);
	free(all);
	free(siblings);
	return ret;
}

int cmd_view(int argc, char **argv)
{
	struct view_cli cli = {0};
	int n, status;

	n = cli_parse_options(&cli_view_syntax, &cli, argc, argv, &status);
	if (n < 0)
		return status;
	if (n == 0)
		return cli_usage_error("view", "no input file");
	if (cli.from)
		return view_files(n, argv, cli.from, cli.merge ? n : 0, &cli.o);
	if (cli.no_exec_chain)
		return view_with_siblings(n, argv, cli.merge ? n : 0, &cli.o);
	return view_images(n, argv, cli.merge, &cli.o, view_with_siblings);
}
