/*
 * io - format names, detection and the path-level import/export entry
 * points that open files, standard streams and zip entries.
 */
#include "io/io.h"
#include "io/zipfile.h"
#include "common/alloc.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;	/* for --from / --to */
	const char *suffix;	/* file name ending, matched without case */
} formats[HS_FORMAT__COUNT] = {
	[HS_FORMAT_UNKNOWN] = { "unknown", NULL },
	[HS_FORMAT_PERF_SCRIPT] = { "perf-script", ".data.txt" },
	[HS_FORMAT_TRACE_ZIP] = { "trace-zip", ".trace.zip" },
	[HS_FORMAT_PERFVIEW_XML] = { "xml", ".perfView.xml" },
	[HS_FORMAT_PERFVIEW_XML_ZIP] = { "xml-zip", ".perfView.xml.zip" },
	[HS_FORMAT_PERFVIEW_JSON] = { "json", ".perfView.json" },
	[HS_FORMAT_PERFVIEW_JSON_ZIP] = { "json-zip", ".perfView.json.zip" },
	[HS_FORMAT_FOLDED] = { "folded", ".folded" },
};

const char *hs_format_name(enum hs_format fmt)
{
	return fmt < HS_FORMAT__COUNT ? formats[fmt].name : "unknown";
}

enum hs_format hs_format_parse(const char *name)
{
	int i;

	for (i = 1; i < HS_FORMAT__COUNT; i++)
		if (!strcasecmp(name, formats[i].name))
			return (enum hs_format)i;
	if (!strcasecmp(name, "perf"))
		return HS_FORMAT_PERF_SCRIPT;
	return HS_FORMAT_UNKNOWN;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

enum hs_format hs_format_from_path(const char *path)
{
	int i;

	for (i = 1; i < HS_FORMAT__COUNT; i++)
		if (ends_with(path, formats[i].suffix))
			return (enum hs_format)i;
	if (ends_with(path, ".perf.data.dump") || ends_with(path, ".perfscript"))
		return HS_FORMAT_PERF_SCRIPT;
	if (ends_with(path, ".folded.txt") || ends_with(path, ".collapsed"))
		return HS_FORMAT_FOLDED;
	return HS_FORMAT_UNKNOWN;
}
