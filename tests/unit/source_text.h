#ifndef HS_TESTS_SOURCE_TEXT_H
#define HS_TESTS_SOURCE_TEXT_H
/*
 * source_text - test helpers for the importers and exporters: a stack
 * source written out as text (one line per sample) so that tests compare
 * whole sources with one string comparison, and importing from a string.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/alloc.h"
#include "io/io.h"
#include "io/numtext.h"

/*
 * "t=TIME_NS m=METRIC c=COUNT root;...;leaf\n" per sample ("ROOT" for the
 * empty stack). Returns a malloc()ed string.
 */
static inline char *source_text(const struct hs_stack_source *src)
{
	char *out = NULL, num[HS_NUMTEXT_MAX];
	size_t len = 0, i, d;
	FILE *f = open_memstream(&out, &len);
	uint32_t frames[256];

	for (i = 0; i < src->nr_samples; i++) {
		size_t depth = hs_source_stack_frames(src, src->stack[i], frames, 256);

		fprintf(f, "t=%" PRId64, src->time[i]);
		hs_numtext_double(num, src->metric[i]);
		fprintf(f, " m=%s", num);
		hs_numtext_double(num, src->count[i]);
		fprintf(f, " c=%s ", num);
		if (!depth)
			fputs("ROOT", f);
		for (d = 0; d < depth && d < 256; d++)
			fprintf(f, "%s%s", d ? ";" : "", hs_source_frame_name(src, frames[d]));
		fputc('\n', f);
	}
	fclose(f);
	return out;
}

/* The defaults, kind and unit as text, one "name=value" per line. */
static inline char *source_defaults_text(const struct hs_stack_source *src)
{
	const struct hs_source_defaults *d = &src->defaults;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

#define DFL(name) fprintf(f, #name "=%s\n", d->name ? d->name : "(null)")
	DFL(start);
	DFL(end);
	DFL(group);
	DFL(fold);
	DFL(fold_pct);
	DFL(inc);
	DFL(exc);
	DFL(notes);
#undef DFL
	fprintf(f, "kind=%s\nunit=%s\n", src->kind == HS_METRIC_TIME ? "time" : "plain",
		src->metric_unit ? src->metric_unit : "(null)");
	fclose(f);
	return out;
}

typedef int (*importer_fn)(FILE *f, struct hs_stack_source *out,
			   struct hs_diag *diag);

/* Import @text with @imp into @src (initialised here). */
static inline int import_string(importer_fn imp, const char *text,
				struct hs_stack_source *src, struct hs_diag *diag)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	hs_source_init(src);
	err = imp(f, src, diag);
	fclose(f);
	return err;
}

/*
 * Import @text with @imp with the Nth allocation failing, N = 0, 1, ...
 * until the import succeeds: each failure is -ENOMEM, the success has
 * @nr_samples samples. Returns how many imports were made.
 */
static inline long import_until_no_oom(importer_fn imp, const char *text, size_t nr_samples)
{
	long n;
	int ret = -1;

	for (n = 0; ret != 0; n++) {
		struct hs_diag d = HS_DIAG_INIT("oom");
		struct hs_stack_source src;

		hs_alloc_fail_after(n);
		ret = import_string(imp, text, &src, &d);
		hs_alloc_fail_after(-1);
		if (ret)
			assert_int_equal(ret, -ENOMEM);
		else
			assert_int_equal(src.nr_samples, nr_samples);
		hs_source_release(&src);
	}
	return n;
}

/* Export @src with @exp into a malloc()ed string. */
static inline char *export_string(int (*exp)(const struct hs_stack_source *, FILE *),
				  const struct hs_stack_source *src)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (exp(src, f)) {
		fclose(f);
		free(out);
		return NULL;
	}
	fclose(f);
	return out;
}
/* @src's source_text() is @want. */
static inline void assert_source(const struct hs_stack_source *src, const char *want)
{
	char *got = source_text(src);

	assert_string_equal(got, want);
	free(got);
}
#endif
