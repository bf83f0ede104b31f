#ifndef HS_CLI_EXEC_IMAGES_H
#define HS_CLI_EXEC_IMAGES_H

/*
 * exec_images - a process that exec'd, seen as one process by `run`'s
 * summary and by `report` (exec_images.c).
 *
 * `run --follow-exec -o x.heapscope -- sh -c 'exec prog'` writes the
 * shell's image before the exec to x.heapscope and prog's to
 * prog.PID.heapscope beside it (analysis/exec_successors.h finds it).
 */

/*
 * run's end summary of the trace at @path (cli_run_summarize()), for the
 * process rather than its first image: when @path ended by exec and the
 * images after it were traced, the summary is the last image's, with a
 * line that names the images and how to read them as one; when they were
 * not traced (no --follow-exec), a line that says so. An exec frees the
 * heap of the image it replaces, so no image before an exec has leaks.
 * @exited: as for cli_run_summarize(). @pass: the summary's pass over
 * @path (cli_run_pass_start()), used when the summary is @path's, or
 * NULL; freed here.
 */
struct cli_run_pass;
void cli_exec_summarize(const char *path, int exited, struct cli_run_pass *pass);

/*
 * Whether cli_exec_summarize() of @path gives another trace's summary:
 * @path ended by exec (its END record says so) and the images after it
 * were traced. A pass over @path's events (cli_run_pass_start()) would
 * then be read for nothing. 1 or 0 (also when it cannot tell).
 */
int cli_exec_summary_elsewhere(const char *path);

/*
 * report FILE...: the @nr files @paths, and after them the traces that
 * continue their processes after an exec, those not among @paths already.
 * *@out (owned, hs_free(); its strings are @paths' or in *@owned, an array
 * of owned strings ending with NULL, freed by cli_exec_images_release())
 * and *@nr_out. Says on stderr which files were added, as @cmd. Returns
 * HS_EXIT_OK, or HS_EXIT_FAIL when out of memory (after saying so).
 */
int cli_exec_images_add(const char *cmd, char *const *paths, int nr, char ***out,
			int *nr_out, char ***owned);

/* Free what cli_exec_images_add() returned; NULL pointers are fine. */
void cli_exec_images_release(char **out, char **owned);

#endif
