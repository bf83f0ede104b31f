#ifndef HS_CLI_STATS_GRAPH_H
#define HS_CLI_STATS_GRAPH_H
#include <stddef.h>
#include "common/log.h"

/*
 * stats_graph - `heapscope stats` of a heap snapshot (stats_graph.c):
 * the snapshot at @path (named @name in messages) as text, or as JSON
 * when @json, with the @top largest retainers. Returns the exit status.
 */
HS_MUST_CHECK int cli_stats_graph(const char *path, const char *name, size_t top,
				  int json);
#endif
