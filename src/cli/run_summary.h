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

#endif
