/*
 * exec_chain - the images of one process across exec() (exec_chain.h).
 * Each file's PROCESS and END records are read without its events; the
 * traces of one pid, in the order they started, are linked where one
 * ended by exec and the next says an exec started it.
 */
#include "analysis/exec_chain.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "format/trace_reader.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What the chains need of one file. */
struct image {
	size_t file; /* index in the caller's arrays */
	struct hs_exec_image image;
};

static int cmp_image(const void *a, const void *b)
{
	const struct image *x = a, *y = b;

	if (x->image.pid != y->image.pid)
		return x->image.pid < y->image.pid ? -1 : 1;
	if (x->image.start_ns != y->image.start_ns)
		return x->image.start_ns < y->image.start_ns ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

int hs_exec_image_read(const char *path, struct hs_exec_image *im)
{
	struct hs_diag diag = HS_DIAG_INIT(path);
	struct hs_trace t;
	int err;

	if (!strcmp(path, "-"))
		return 0;
	err = hs_trace_load_flags(path, &t,
				  HS_TRACE_NO_EVENTS | HS_TRACE_SKIP_EVENT_CHUNKS, &diag);
	if (err)
		return err == -ENOMEM ? err : 0;
	if (!t.info.present) {
		hs_trace_release(&t);
		return 0;
	}
	im->pid = t.info.pid;
	im->start_ns = t.info.start_realtime_ns;
	im->execed = (t.info.flags & HS_PROC_EXECED) != 0;
	im->follows_exec = (t.info.flags & HS_PROC_FOLLOW_EXEC) != 0;
	im->ended_by_exec = t.has_end && t.end_reason == HS_END_EXEC;
	im->comm = hs_strdup(t.info.comm && t.info.comm[0] ? t.info.comm : "?");
	hs_trace_release(&t);
	return im->comm ? 1 : -ENOMEM;
}

/* The frame of the last image of the chain that starts at @all[i]: its index. */
static size_t chain_end(const struct image *all, size_t nr, size_t i)
{
	while (i + 1 < nr && all[i].image.ended_by_exec &&
	       all[i + 1].image.pid == all[i].image.pid && all[i + 1].image.execed)
		i++;
	return i;
}

int hs_exec_chain_frames(const char *const *paths, size_t n, char **frames)
{
	struct image *all = hs_calloc(n + 1, sizeof(*all));
	size_t i, nr = 0, last;
	int err = 0;

	for (i = 0; i < n; i++)
		frames[i] = NULL;
	if (!all)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		all[nr].file = i;
		err = hs_exec_image_read(paths[i], &all[nr].image);
		if (err == 1) {
			nr++;
			err = 0;
		}
	}
	qsort(all, nr, sizeof(*all), cmp_image);
	for (i = 0; i < nr && !err; i = last + 1) {
		struct hs_buf name = HS_BUF_INIT;
		size_t k;

		last = chain_end(all, nr, i);
		if (last == i)
			continue;
		err = hs_buf_addf(&name, "Process %s (%" PRIu64 ")", all[last].image.comm,
				  all[last].image.pid);
		for (k = i; k < last && !err; k++)
			if (!(frames[all[k].file] = hs_strdup(name.s)))
				err = -ENOMEM;
		hs_buf_release(&name);
	}
	for (i = 0; i < nr; i++)
		hs_free(all[i].image.comm);
	hs_free(all);
	if (err)
		hs_exec_chain_release(frames, n);
	return err;
}

void hs_exec_chain_release(char **frames, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		hs_free(frames[i]);
		frames[i] = NULL;
	}
}
