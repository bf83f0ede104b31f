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
#endif
