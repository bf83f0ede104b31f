/*
 * fuzz_util - the fuzz targets' shared pieces (fuzz_util.h).
 */
#include "fuzz_util.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analysis/query.h"
#include "analysis/views.h"

static void die(const char *what)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, strerror(errno));
	abort();
}

FILE *fuzz_open_mem(const uint8_t *data, size_t size)
{
	static char empty[1];
	FILE *f;

	/* fmemopen() of no bytes is an error in some libcs */
	f = size ? fmemopen((void *)data, size, "r") : fmemopen(empty, 1, "r");
	if (!f)
		die("fmemopen");
	if (!size)
		(void)fgetc(f);
	return f;
}

int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz", 0);
	size_t done = 0;

	if (fd < 0)
		die("memfd_create");
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0)
			die("write to memfd");
		done += (size_t)n;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

static void broken(const char *what, size_t id)
{
	fprintf(stderr, "fuzz: the importer's stack source is broken: %s %zu\n", what, id);
	abort();
}

static void check_model(const struct hs_stack_source *src)
{
	size_t nr_frames = hs_source_nr_frames(src), i;

	for (i = 0; i < src->nr_stacks; i++) {
		uint32_t caller = src->stack_caller[i];

		if (src->stack_frame[i] >= nr_frames)
			broken("unknown frame on stack", i);
		if (caller != HS_NO_STACK && caller >= i)
			broken("caller not before its callee: stack", i);
		if (src->stack_depth[i] != hs_source_depth(src, caller) + 1)
			broken("wrong depth of stack", i);
	}
	for (i = 0; i < src->nr_samples; i++)
		if (src->stack[i] != HS_NO_STACK && src->stack[i] >= src->nr_stacks)
			broken("unknown stack in sample", i);
}

static FILE *sink(void)
{
	static FILE *f;

	if (!f && !(f = fopen("/dev/null", "w")))
		die("/dev/null");
	return f;
}

void fuzz_check_source(const struct hs_stack_source *src)
{
	static const enum hs_view_kind kinds[] = {
		HS_VIEW_BYNAME, HS_VIEW_CALLTREE, HS_VIEW_FLAME,
	};
	const struct hs_source_defaults *d = &src->defaults;
	struct hs_query q = { .params = HS_VIEW_PARAMS_INIT };
	struct hs_diag diag = HS_DIAG_INIT("fuzz");
	struct hs_query_result r;
	size_t k;

	check_model(src);
	/* what `heapscope report FILE` does with a file's saved defaults */
	q.params.filter.group = d->group;
	q.params.filter.fold = d->fold;
	q.params.filter.inc = d->inc;
	q.params.filter.exc = d->exc;
	q.params.filter.start_ms = hs_source_default_number(d->start);
	q.params.filter.end_ms = hs_source_default_number(d->end);
	q.params.fold_pct = hs_source_default_number(d->fold_pct);
	q.view.limit = 200;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		q.view.kind = kinds[k];
		diag = (struct hs_diag)HS_DIAG_INIT("fuzz");
		if (hs_query_run(src, &q, &r, &diag))
			return;
		/* the writers are what is fuzzed: the sink's errors are not findings */
		(void)hs_view_write_text(&r.view, sink());
		(void)hs_view_write_json(&r.view, sink());
		hs_query_result_release(&r);
	}
}
