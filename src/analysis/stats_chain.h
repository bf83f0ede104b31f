#ifndef HS_ANALYSIS_STATS_CHAIN_H
#define HS_ANALYSIS_STATS_CHAIN_H
#include <stddef.h>
#include <stdint.h>
#include "analysis/stats.h"
#include "common/diag.h"
#include "format/trace_reader.h"

/*
 * stats_chain - the stats (stats.h) of the images of one process across
 * exec(), read as one process, as `report` reads them: each trace is
 * read by the stats' own streamed pass, its alloc and leaks views are
 * appended under the process frame of the chain's last image
 * (exec_chain.h, model/source_merge.h), and the first trace's default
 * settings apply. So the numbers agree with the memory views over the
 * chain (docs/memory.md): an exec frees the heap of the image it
 * replaces, so only the last image can have leaks; the heap's peak is
 * the highest of the images' (their heaps never coexist), with the top
 * call sites of that image's peak; allocations, bytes, frees and the
 * other counts are summed; the timelines run over the chain's time,
 * each image placed at its start.
 *
 * Ownership: the caller owns the traces and the stats it is given back.
 */

/*
 * The stats of the @n traces at @paths, the images of one process in the
 * order they ran (`report`'s exec chain, cli/exec_images.h), into @s;
 * @traces (@n of them, initialised here) get the traces as read, without
 * their events (the caller releases each with hs_trace_release()), and
 * @events, when not NULL, the number of events read of each. Returns 0 or a negative
 * errno with @diag filled; @traces and @s are then released.
 */
HS_MUST_CHECK int hs_heap_stats_chain_path(const char *const *paths, size_t n,
					   const struct hs_stats_opts *o,
					   struct hs_trace *traces, uint64_t *events,
					   struct hs_heap_stats *s, struct hs_diag *diag);

/*
 * The pieces of it, apart for tests. Make @acc the stats of no image: no
 * peak, symbolized.
 */
void hs_heap_stats_chain_init(struct hs_heap_stats *acc);

/*
 * Add the stats @part of an image that started @offset_ms after the
 * chain's first to @acc (hs_heap_stats_chain_init()'d): the counts
 * summed, the peaks the highest (with @part's top list at the peak when
 * its peak is the highest), the timelines appended at @offset_ms. @part's
 * lists may be moved into @acc; the caller still releases @part. Returns
 * 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_heap_stats_chain_add(struct hs_heap_stats *acc,
					  struct hs_heap_stats *part, double offset_ms);

/*
 * After the last image: the timelines of @acc cut down to @points points
 * at most (0: 200), each the highest value of an equal stretch of the
 * chain's time, and the allocations per second over that time. Returns
 * 0 or -ENOMEM.
 */
HS_MUST_CHECK int hs_heap_stats_chain_finish(struct hs_heap_stats *acc, size_t points);
#endif
