#ifndef HS_ANALYSIS_EXEC_SUCCESSORS_H
#define HS_ANALYSIS_EXEC_SUCCESSORS_H
#include <stddef.h>
#include <stdint.h>
#include "common/log.h"

/*
 * exec_successors - the traces that continue a trace's process after its
 * exec, found on disk beside it.
 *
 * `run --follow-exec -o x.heapscope -- sh -c 'exec prog'` leaves the
 * shell's image before the exec in x.heapscope (which ended by exec) and
 * the program's in prog.PID.heapscope, in the same directory: the
 * collector names the trace of an image started by exec COMM.PID.heapscope
 * (COMM.PID.N.heapscope when that exists) in HEAPSCOPE_DIR, which run sets
 * to the directory of the -o file. Nothing in x.heapscope names that file
 * (the collector writes x.heapscope's end before the exec, not knowing the
 * next name), so it is found by its name and its PROCESS record: a trace
 * whose name has ".PID." in it, of the same pid, started by an exec
 * (flags bit 3), the earliest of those that started after the image
 * before it. The next one continues it the same way while it too ended
 * by exec. A trace of a later process that reused the pid starts later
 * than the real successor, so the earliest is the one; an image traced
 * without --follow-exec (PROCESS flags bit 1) has none, whatever files
 * of its pid lie beside it.
 *
 * Ownership: the caller owns the struct's strings until
 * hs_exec_successors_release().
 */
struct hs_exec_successors {
	char **path; /* the images after @path's, in exec order */
	size_t nr;
	uint64_t pid;	   /* the process's */
	int ended_by_exec; /* @path's trace ended by exec, followed or not */
	int follows_exec;  /* @path was traced with --follow-exec */
	char *first_comm;  /* @path's image (its kernel name), or NULL */
	char *last_comm;   /* the last image's: first_comm when nr is 0 */
};
#define HS_EXEC_SUCCESSORS_INIT                                                          \
	{                                                                                \
		0                                                                        \
	}

/*
 * Fill @s (HS_EXEC_SUCCESSORS_INIT, or released) with the traces that
 * continue @path's process after its exec. A file that is no heapscope
 * trace, or did not end by exec, has none (0, @s empty). Returns 0 or
 * -ENOMEM (@s is then empty).
 */
HS_MUST_CHECK int hs_exec_successors_find(const char *path, struct hs_exec_successors *s);

/* Free @s's strings; @s is empty afterwards. */
void hs_exec_successors_release(struct hs_exec_successors *s);
#endif
