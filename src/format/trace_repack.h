#ifndef HS_FORMAT_TRACE_REPACK_H
#define HS_FORMAT_TRACE_REPACK_H
#include <stddef.h>
#include <stdint.h>
#include "common/log.h"

/*
 * trace_repack - rewrite a finished trace into fewer, bigger EVENTS
 * chunks (issue 14 item 4). While the program runs, the collector
 * flushes a chunk at 512 KiB or 50 ms (the crash-safety bound), so a
 * slow program writes many small chunks, each of which starts its
 * address histories and zstd's window afresh, and whose frees of blocks
 * allocated in earlier chunks are literal addresses. Once the program
 * has ended that bound no longer needs small chunks: consecutive EVENTS
 * chunks are joined (their records, unchanged, one after the other) into
 * chunks of up to HS_REPACK_RECORDS bytes of records, each encoded
 * compact again (hs_chunk_compact_5_0()) and compressed as its own zstd
 * frame, so that every chunk still decodes on its own and the parallel
 * reader (trace_prefetch) reads them as before.
 *
 * The records a reader gets are the same, record for record (SPAN records
 * set the thread, time and address absolutely, so a chunk's records mean
 * the same after another chunk's); the END chunk's footer gets the new
 * chunk index; the symbol section is copied as it is. The new file is
 * written beside the trace (PATH.repack) and renamed over it only when
 * complete and synced: a crash or SIGKILL during the rewrite leaves the
 * original whole (and a stale PATH.repack, which the next rewrite
 * replaces), and anything that has the trace open keeps reading the
 * original. The rewrite holds an exclusive flock() on the trace
 * (hs_open_locked()) up to the rename, as `heapscope symbolize` does:
 * when another holds it the trace is skipped, and PATH.repack is only
 * written by the lock's holder.
 *
 * What is repacked: a trace of this format version with EVENTS chunks,
 * one END chunk and then only SYMBOLS chunks, every chunk whole and
 * checked. Anything else (a cut-off trace, one that survived a failed
 * exec, an older version) is left as it is. Nothing here prints: the
 * caller says what it wants to.
 */

/* Records (plain, as the collector wrote them) per repacked chunk: what
 * the compact encoder's numbering takes (HS_CC_RECORDS_MAX), 1.5 MiB. */
#define HS_REPACK_RECORDS_DEFAULT ((size_t)3 * ((1u << 19) - 2))

struct hs_repack_opts {
	/* records per repacked chunk, at most the default; 0: the default */
	size_t chunk_records;
	/* keep the rewrite only when it is at least this many 1/1000 of the
	 * file smaller (0: whenever it is smaller) */
	unsigned min_gain_permille;
	/*
	 * Decide first on a sample (the chunks from the middle of the trace
	 * that fit one repacked chunk, joined): skip the rewrite when the
	 * sample comes out less than min_gain_permille smaller, or less than
	 * large_min_gain_permille when the EVENTS chunks hold more than
	 * large_records bytes of records (a pass over them all costs more).
	 */
	int probe;
	uint64_t large_records;
	unsigned large_min_gain_permille;
	/*
	 * Skip, without reading a payload, a trace whose EVENTS chunks take
	 * on average this many bytes or more in the file (0: never): chunks
	 * that zstd leaves that big start their histories and zstd's window
	 * afresh too rarely for joining to pay (rand_loop's, 166 KB each).
	 */
	uint64_t skip_stored_mean;
	/* tests: fail as a write error would after this many chunks (0: never) */
	unsigned fault_after_chunks;
};

struct hs_repack_stats {
	uint64_t bytes_in, bytes_out;	/* the file's size before and after */
	uint64_t chunks_in, chunks_out; /* EVENTS chunks before and after */
	uint64_t records_in;	 /* payload bytes of the EVENTS chunks, before zstd */
	uint64_t stored_in;	 /* and in the file */
	int probe_gain_permille; /* the sample's gain; INT32_MIN: none */
	const char *skipped;	 /* why it was not rewritten, or NULL */
};

/*
 * Rewrite the trace at @path as described above, with @opts (NULL: the
 * defaults). Returns 0 when rewritten or skipped (@st->skipped says why
 * when not NULL), or -errno when an I/O or memory error stopped it: the
 * trace is then as it was. @st may be NULL.
 */
HS_MUST_CHECK
int hs_trace_repack(const char *path, const struct hs_repack_opts *opts,
		    struct hs_repack_stats *st);

#endif
