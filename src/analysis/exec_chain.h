#ifndef HS_ANALYSIS_EXEC_CHAIN_H
#define HS_ANALYSIS_EXEC_CHAIN_H
#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "common/log.h"

/*
 * exec_chain - the images of one process across exec(), read together.
 *
 * `run --follow-exec` writes a trace per image: a process that exec'd
 * (a shell running its command, a forked child of make that did nothing
 * but exec) leaves the image before the exec in a trace of its own, often
 * nearly empty, beside the real one. When several traces are read as one
 * (`report a b c`, `view --merge`), a chain of them (a trace that ended
 * by exec, then the trace of the same pid started by that exec, and so
 * on) is one process: its traces are shown under the process frame of
 * its last image, so the process is one node, its Thread frames still
 * naming each image.
 *
 * Ownership: the caller owns @frames' strings (hs_exec_chain_release()).
 */

/* A trace's process and end, read without its events. */
struct hs_exec_image {
	uint64_t pid, start_ns; /* start: CLOCK_REALTIME at its start */
	int execed;		/* an exec started it */
	int follows_exec;	/* traced following execs */
	int ended_by_exec;
	char *comm; /* the caller's (hs_free()) */
};

/*
 * Read trace @path's image into @im: 1; 0 when it is no trace or cannot
 * be read ("-" is none); -ENOMEM. exec_chain and exec_successors both
 * read their traces with it.
 */
HS_MUST_CHECK int hs_exec_image_read(const char *path, struct hs_exec_image *im);

/*
 * For each of the @n files @paths: in @frames[i], the frame "Process
 * COMM (PID)" of the last image of its chain when file i is a heapscope
 * trace that ended by an exec which another of the files continues, else
 * NULL (the file keeps its own frames). Files that are not heapscope
 * traces, or cannot be read, are left alone. Returns 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_exec_chain_frames(const char *const *paths, size_t n, char **frames);

/*
 * The peak view of the @n files @paths read as one. An exec frees the
 * whole heap of the image it replaces, so the images of a chain never
 * have their heaps at the same time: the process's peak is its highest
 * image's, and its peak view that image's alone. With @peak[i] the total
 * of file i's own peak view, sets @keep[i] to 1 for the image of each
 * chain whose peak is highest (ties: the one that ran first) and for
 * every file in no chain (another process, no heapscope trace), 0 for
 * the chains' other images. Returns 0 or -ENOMEM (@keep all 1 then).
 */
HS_MUST_CHECK int hs_exec_chain_peak_images(const char *const *paths, size_t n,
					    const double *peak, int *keep);

/* Free the strings hs_exec_chain_frames() put in @frames. */
void hs_exec_chain_release(char **frames, size_t n);
#endif
