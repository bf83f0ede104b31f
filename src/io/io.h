#ifndef HS_IO_IO_H
#define HS_IO_IO_H
#include <stdio.h>
#include "common/diag.h"
#include "model/stack_source.h"

/*
 * io - importers and exporters of stack sources, and the choice of format
 * by file name or, failing that, by content.
 *
 * Importers stream their input (no importer holds a whole file in one
 * buffer) and append to a caller-initialised hs_stack_source. On malformed
 * or truncated input they return -EINVAL (or -EIO, -ENOMEM, -E2BIG) and
 * fill @diag with the line or offset and what is wrong; what was appended
 * to @out before the error is unspecified, so callers release it.
 * FILE pointers are borrowed: no importer or exporter closes them.
 */

enum hs_format {
	HS_FORMAT_UNKNOWN = 0,
	HS_FORMAT_PERF_SCRIPT,		/* perf script text: *.data.txt, *.perf.data.txt */
	HS_FORMAT_TRACE_ZIP,		/* perfcollect: *.trace.zip holding *.data.txt */
	HS_FORMAT_PERFVIEW_XML,		/* *.perfView.xml */
	HS_FORMAT_PERFVIEW_XML_ZIP,	/* *.perfView.xml.zip */
	HS_FORMAT_PERFVIEW_JSON,	/* *.perfView.json */
	HS_FORMAT_PERFVIEW_JSON_ZIP,	/* *.perfView.json.zip */
	HS_FORMAT_FOLDED,		/* folded stacks: "main;f;g 42" */
	HS_FORMAT__COUNT
};

/* Short name for --from/--to and messages ("perf-script", "xml", ...). */
const char *hs_format_name(enum hs_format fmt);
/* Parse a --from/--to name; HS_FORMAT_UNKNOWN if none matches. */
enum hs_format hs_format_parse(const char *name);
/* Format implied by a file name's extension, or HS_FORMAT_UNKNOWN. */
enum hs_format hs_format_from_path(const char *path);
/* Guess from the first @n bytes of content, or HS_FORMAT_UNKNOWN. */
enum hs_format hs_format_sniff(const unsigned char *head, size_t n);

/*
 * Import @path ("-" = standard input) in format @fmt; HS_FORMAT_UNKNOWN
 * means: by extension, failing that by content. @out must be initialised.
 */
int hs_import_path(const char *path, enum hs_format fmt,
		   struct hs_stack_source *out, struct hs_diag *diag);
/* Export @src to @path ("-" = standard output); same choice of format. */
int hs_export_path(const struct hs_stack_source *src, const char *path,
		   enum hs_format fmt, struct hs_diag *diag);

/* The streaming importers, one per format. */
int hs_import_perf_script(FILE *f, struct hs_stack_source *out,
			  struct hs_diag *diag);
/*
 * perfcollect's .trace.zip: the first entry ending in ".data.txt" read as
 * perf script, with the zip's perf-<pid>.map / perfinfo-<pid>.map side
 * files used for frames perf left unknown.
 */
int hs_import_trace_zip(const char *path, struct hs_stack_source *out,
			struct hs_diag *diag);
int hs_import_perfview_xml(FILE *f, struct hs_stack_source *out,
			   struct hs_diag *diag);
int hs_import_perfview_json(FILE *f, struct hs_stack_source *out,
			    struct hs_diag *diag);
int hs_import_folded(FILE *f, struct hs_stack_source *out,
		     struct hs_diag *diag);

/* The exporters. Return 0, or -EIO when writing failed. */
int hs_export_folded(const struct hs_stack_source *src, FILE *f);
int hs_export_perfview_xml(const struct hs_stack_source *src, FILE *f);
int hs_export_perfview_json(const struct hs_stack_source *src, FILE *f);
#endif
