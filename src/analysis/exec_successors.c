/*
 * exec_successors - the traces that continue a trace's process after its
 * exec (exec_successors.h): the directory of the trace is listed, the
 * PROCESS and END records of the files named after its pid are read
 * without their events, and the images started by exec are taken in the
 * order they started.
 */
#include "analysis/exec_successors.h"
#include "analysis/exec_chain.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What the search needs of one trace. */
struct image {
	char *path;
	struct hs_exec_image image;
};

static void image_release(struct image *im)
{
	hs_free(im->path);
	hs_free(im->image.comm);
	im->path = im->image.comm = NULL;
}

static int cmp_start(const void *a, const void *b)
{
	const struct image *x = a, *y = b;

	if (x->image.start_ns != y->image.start_ns)
		return x->image.start_ns < y->image.start_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Whether directory entry @name is a trace name of pid @pid: "*.PID.*heapscope". */
static int named_after(const char *name, uint64_t pid)
{
	static const char suffix[] = ".heapscope";
	char mid[32];
	size_t len = strlen(name);

	if (len < sizeof(suffix) || strcmp(name + len - (sizeof(suffix) - 1), suffix))
		return 0;
	snprintf(mid, sizeof(mid), ".%" PRIu64 ".", pid);
	return strstr(name, mid) != NULL;
}

/*
 * The images of pid @pid started by exec in directory @dir ("" for the
 * working directory), other than the file @self: appended to *@all (*@nr
 * of them). Returns 0 or -ENOMEM.
 */
static int candidates(const char *dir, uint64_t pid, const struct stat *self,
		      struct image **all, size_t *nr)
{
	DIR *d = opendir(dir[0] ? dir : ".");
	struct dirent *e;
	size_t alloc = 0;
	int err = 0;

	if (!d)
		return 0; /* nothing to find */
	while (!err && (e = readdir(d))) {
		struct image im = {0};
		struct hs_buf p = HS_BUF_INIT;
		struct stat sb;
		int r;

		if (!named_after(e->d_name, pid))
			continue;
		err = hs_buf_addf(&p, "%s%s%s", dir, dir[0] ? "/" : "", e->d_name);
		if (err)
			break;
		if (stat(p.s, &sb) || !S_ISREG(sb.st_mode) ||
		    (sb.st_dev == self->st_dev && sb.st_ino == self->st_ino)) {
			hs_buf_release(&p);
			continue;
		}
		r = hs_exec_image_read(p.s, &im.image);
		if (r == 1 && im.image.pid == pid && im.image.execed && *nr == alloc) {
			size_t grown = alloc ? 2 * alloc : 8;
			struct image *v = hs_realloc(*all, grown * sizeof(*v));

			if (v) {
				*all = v;
				alloc = grown;
			} else {
				r = -ENOMEM;
			}
		}
		if (r == 1 && im.image.pid == pid && im.image.execed) {
			im.path = hs_buf_detach(&p);
			(*all)[(*nr)++] = im;
		} else {
			image_release(&im);
			hs_buf_release(&p);
			if (r < 0)
				err = r;
		}
	}
	closedir(d);
	return err;
}

/* @s from @first and the chain after it in the sorted @all: 0 or -ENOMEM. */
static int take_chain(struct hs_exec_successors *s, const struct hs_exec_image *first,
		      const struct image *all, size_t nr)
{
	const struct hs_exec_image *cur = first;
	size_t i;

	s->pid = first->pid;
	s->ended_by_exec = first->ended_by_exec;
	s->follows_exec = first->follows_exec;
	s->path = hs_calloc(nr + 1, sizeof(*s->path));
	if (!s->path)
		return -ENOMEM;
	for (i = 0; i < nr && cur->ended_by_exec && cur->follows_exec; i++) {
		if (all[i].image.start_ns < cur->start_ns)
			continue;
		if (!(s->path[s->nr] = hs_strdup(all[i].path)))
			return -ENOMEM;
		s->nr++;
		cur = &all[i].image;
	}
	s->first_comm = hs_strdup(first->comm);
	s->last_comm = hs_strdup(cur->comm);
	return s->first_comm && s->last_comm ? 0 : -ENOMEM;
}

int hs_exec_successors_find(const char *path, struct hs_exec_successors *s)
{
	struct hs_exec_image first = {0};
	struct image *all = NULL;
	struct stat self;
	size_t nr = 0, i;
	char *dir = NULL, *slash;
	int err;

	memset(s, 0, sizeof(*s));
	if (!strcmp(path, "-") || stat(path, &self) || !S_ISREG(self.st_mode))
		return 0;
	err = hs_exec_image_read(path, &first);
	if (err <= 0)
		return err;
	err = 0;
	dir = hs_strdup(path);
	if (!dir) {
		err = -ENOMEM;
		goto out;
	}
	slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0'; /* the root */
	else if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	if (first.ended_by_exec && first.follows_exec)
		err = candidates(dir, first.pid, &self, &all, &nr);
	if (!err) {
		if (nr)
			qsort(all, nr, sizeof(*all), cmp_start);
		err = take_chain(s, &first, all, nr);
	}
out:
	for (i = 0; i < nr; i++)
		image_release(&all[i]);
	hs_free(all);
	hs_free(first.comm);
	hs_free(dir);
	if (err)
		hs_exec_successors_release(s);
	return err;
}

void hs_exec_successors_release(struct hs_exec_successors *s)
{
	size_t i;

	for (i = 0; s->path && i < s->nr; i++)
		hs_free(s->path[i]);
	hs_free(s->path);
	hs_free(s->first_comm);
	hs_free(s->last_comm);
	memset(s, 0, sizeof(*s));
}
