#ifndef HS_CLI_RUN_SUMMARY_H
#define HS_CLI_RUN_SUMMARY_H

/*
 * run_summary - `heapscope run`'s end summary on stderr (run_summary.c).
 *
 * The trace's totals, as `heapscope stats` and `dump --summary` give
 * them, and stats's leaks (docs/memory.md). A --no-heap trace (its
 * SAMPLING record's flags bit 0) has no heap line of zeros, only its
 * peak RSS. @exited: the program ended by exit, so a trace cut short was
 * cut by a failed write, not by the program's end.
 */
void cli_run_summarize(const char *path, int exited);
/*
 * The same, of the trace at @path, where the lines that name the file
 * name @shown instead (the first trace of a process whose last image
 * @path is: cli/exec_images.h).
 */
void cli_run_summarize_as(const char *path, const char *shown, int exited);

/*
 * The summary's pass over the events of the trace at @path, started
 * while a symbolizer is about to write the trace's symbol section: it
 * reads the file as it is when it opens it, then closes @go_fd (which
 * the symbolizer waits on before it writes) and reads the events.
 * Returns the pass for cli_run_summarize_pass() once the symbolizer has
 * finished, or NULL when out of memory (@go_fd closed all the same).
 */
struct cli_run_pass;
struct cli_run_pass *cli_run_pass_start(const char *path, int go_fd);
/*
 * cli_run_summarize_as() of @path with pass @p (NULL, or one of another
 * file, or one that failed: the trace is read afresh): the symbol section
 * the symbolizer wrote is read for the leaks, or the events are loaded
 * when they could not be streamed. Frees @p.
 */
void cli_run_summarize_pass(const char *path, const char *shown, int exited,
			    struct cli_run_pass *p);
/*
 * Whether the trace of pass @p ended by exec: 1 or 0 as its events said,
 * -1 when @p (NULL is fine) cannot say (it failed, or will load the trace).
 */
int cli_run_pass_ended_by_exec(const struct cli_run_pass *p);
/* Free pass @p (NULL is fine) without summarizing. */
void cli_run_pass_free(struct cli_run_pass *p);

#endif
