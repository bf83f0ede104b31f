/*
 * exec_images - a process that exec'd, seen as one process by `run`'s
 * summary and by `report` (exec_images.h). The traces of the images
 * after an exec are found by analysis/exec_successors.c; reading them as
 * one is report's multi-file view (analysis/exec_chain.c puts them under
 * the last image's process frame). Owns nothing past its calls but what
 * cli_exec_images_add() hands back.
 */
#include "analysis/exec_successors.h"
#include "cli/cli.h"
#include "cli/exec_images.h"
#include "cli/run_summary.h"
#include "common/alloc.h"
#include "format/trace_reader.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void cli_exec_summarize(const char *path, int exited, struct cli_run_pass *pass)
{
	struct hs_exec_successors s = HS_EXEC_SUCCESSORS_INIT;

	/* a trace that did not end by exec has no images after it */
	if (cli_run_pass_ended_by_exec(pass) == 0) {
		cli_run_summarize_pass(path, path, exited, pass);
		return;
	}
	if (hs_exec_successors_find(path, &s)) {
		fprintf(stderr,
			"heapscope: out of memory looking for the traces "
			"after %s's exec\n",
			path);
		cli_run_summarize_pass(path, path, exited, pass);
		return;
	}
	if (s.ended_by_exec && !s.nr && !s.follows_exec)
		fprintf(stderr,
			"heapscope: %s (pid %" PRIu64 ") replaced itself by exec, and "
			"the program it ran was not traced ('heapscope run "
			"--follow-exec' traces it): below is %s before its exec\n",
			s.first_comm, s.pid, s.first_comm);
	else if (s.ended_by_exec && !s.nr)
		fprintf(stderr,
			"heapscope: %s (pid %" PRIu64 ") replaced itself by exec, and "
			"the program it ran left no trace beside %s (it did not load "
			"the collector: a static or setuid program?): below is %s "
			"before its exec\n",
			s.first_comm, s.pid, path, s.first_comm);
	else if (s.nr)
		fprintf(stderr,
			"heapscope: process %" PRIu64
			" ran %s, then by exec %s: below is "
			"%s, the last image, traced into %s (an exec frees the heap of "
			"the image it replaces: %s's blocks are no leaks)\n",
			s.pid, s.first_comm, s.last_comm, s.last_comm, s.path[s.nr - 1],
			s.first_comm);
	if (s.nr)
		cli_run_summarize_pass(s.path[s.nr - 1], path, exited, pass);
	else
		cli_run_summarize_pass(path, path, exited, pass);
	hs_exec_successors_release(&s);
}

int cli_exec_summary_elsewhere(const char *path)
{
	struct hs_exec_successors s = HS_EXEC_SUCCESSORS_INIT;
	unsigned reason;
	int elsewhere;

	/* the END record first: a trace that did not end by exec has no images
	 * after it (and most do not: their END alone is read) */
	if (hs_trace_peek_end(path, &reason) != 1 || reason != HS_END_EXEC)
		return 0;
	if (hs_exec_successors_find(path, &s))
		return 0; /* (out of memory: cli_exec_summarize() says so) */
	elsewhere = s.ended_by_exec && s.nr > 0;
	hs_exec_successors_release(&s);
	return elsewhere;
}

/* Whether the file at @path is one of the @nr files @paths. */
static int listed(const char *path, char *const *paths, int nr)
{
	struct stat a, b;
	int i;

	if (stat(path, &a))
		return 0;
	for (i = 0; i < nr; i++)
		if (!stat(paths[i], &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 1;
	return 0;
}

/*
 * Whether the file at @path is a trace whose last END record says it did
 * not end by exec: it has no images after it, and its END alone is read
 * (hs_exec_successors_find() reads the whole stack tree of the file,
 * every chunk of a trace whose chunks hold nodes). Not for standard input
 * or anything but a regular file, which a peek would consume.
 */
static int ended_otherwise(const char *path)
{
	struct stat st;
	unsigned reason;

	return strcmp(path, "-") && !stat(path, &st) && S_ISREG(st.st_mode) &&
	       hs_trace_peek_end(path, &reason) == 1 && reason != HS_END_EXEC;
}

int cli_exec_images_add(const char *cmd, char *const *paths, int nr, char ***out,
			int *nr_out, char ***owned)
{
	char **all = hs_calloc((size_t)nr + 1, sizeof(*all));
	char **mine = hs_calloc(1, sizeof(*mine));
	size_t n = (size_t)nr, nr_mine = 0, k;
	int i;

	*out = NULL;
	*owned = NULL;
	if (!all || !mine)
		goto oom;
	memcpy(all, paths, (size_t)nr * sizeof(*all));
	for (i = 0; i < nr; i++) {
		struct hs_exec_successors s = HS_EXEC_SUCCESSORS_INIT;

		if (ended_otherwise(paths[i]))
			continue;
		if (hs_exec_successors_find(paths[i], &s))
			goto oom;
		for (k = 0; k < s.nr; k++) {
			char **v, **w;

			if (listed(s.path[k], all, (int)n))
				continue;
			v = hs_realloc(all, (n + 2) * sizeof(*all));
			if (v)
				all = v;
			w = hs_realloc(mine, (nr_mine + 2) * sizeof(*mine));
			if (w)
				mine = w;
			if (!v || !w) {
				hs_exec_successors_release(&s);
				goto oom;
			}
			fprintf(stderr,
				"heapscope: %s: %s ended by exec: %s, the same process "
				"after it, is read with it (--no-exec-chain: the files "
				"alone)\n",
				cmd, paths[i], s.path[k]);
			mine[nr_mine++] = all[n++] = s.path[k];
			mine[nr_mine] = NULL;
			s.path[k] = NULL;
		}
		hs_exec_successors_release(&s);
	}
	*out = all;
	*nr_out = (int)n;
	*owned = mine;
	return HS_EXIT_OK;
oom:
	cli_exec_images_release(all, mine);
	return cli_fail("%s: out of memory", cmd);
}

void cli_exec_images_release(char **out, char **owned)
{
	size_t k;

	for (k = 0; owned && owned[k]; k++)
		hs_free(owned[k]);
	hs_free(owned);
	hs_free(out);
}
