#ifndef HS_IO_GC_STATS_LOAD_H
#define HS_IO_GC_STATS_LOAD_H
#include <stdint.h>
#include "common/diag.h"
#include "common/log.h"
#include "dotnet/gc_stats.h"

/*
 * gc_stats_load - a .nettrace or .nettrace.zip file read into GCStats
 * (dotnet/gc_stats.h) in one streaming pass, for `heapscope gcstats` and
 * the GUI's GC tab.
 */

/* What the read found besides the GCs, for warnings. */
struct hs_gc_load_info {
	uint32_t pid;
	int not_nettrace; /* the file is neither a .nettrace nor a zip of one */
	int truncated;	  /* cut off: the GCs before truncated_at were read */
	uint64_t truncated_at;
	uint64_t nr_lost; /* events the runtime dropped */
};

/*
 * Read @path into @s (initialised here; release it with
 * hs_gc_stats_release() whatever the result) and finish it. Returns 0;
 * -EINVAL with a message in @diag for a file that is not a .nettrace
 * (@info->not_nettrace set) or is damaged; -ENOENT and the like when it
 * cannot be opened; -ENOMEM.
 */
HS_MUST_CHECK int hs_gc_stats_load(const char *path, struct hs_gc_stats *s,
				   struct hs_gc_load_info *info, struct hs_diag *diag);
#endif
