/*
 * cmd_repack - `heapscope repack TRACE`: a finished trace rewritten into
 * fewer, bigger chunks (format/trace_repack.h), which `heapscope run`
 * does by itself when the program has ended (cli_repack_after_run()).
 * The records a reader gets do not change; the file gets smaller where
 * the program wrote many small chunks (a slow program's, flushed every
 * 50 ms while it ran).
 */
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "format/trace_repack.h"
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * When `run` rewrites (measured in bench/README.md, "Repacked at the end
 * of `run`"): not where the chunks take 64 KiB each or more in the file
 * (rand_loop's, 166 KB: joined, 2% smaller); else when a sample of the
 * chunks, joined, comes out at least 2% smaller, or 25% where the chunks
 * hold more than 16 MiB before zstd: a pass over every event then costs
 * the run more than about 3% of its wall unless the program took much
 * longer (cc1: 64% smaller, sqlite3 10%; python3's sample 3%: skipped).
 */
#define RUN_SKIP_STORED_MEAN ((uint64_t)64 << 10)
#define RUN_MIN_GAIN_PERMILLE 20
#define RUN_LARGE_RECORDS ((uint64_t)16 << 20)
#define RUN_LARGE_MIN_GAIN_PERMILLE 250

static const struct hs_repack_opts run_rule = {
    .min_gain_permille = RUN_MIN_GAIN_PERMILLE,
    .probe = 1,
    .large_records = RUN_LARGE_RECORDS,
    .large_min_gain_permille = RUN_LARGE_MIN_GAIN_PERMILLE,
    .skip_stored_mean = RUN_SKIP_STORED_MEAN,
};

/*
 * The rewrite runs in a child process that `run` waits for: its buffers
 * (a few tens of MiB for the encoder and zstd) then never add to the
 * memory of the summary that follows in `run`'s own process, nor stay
 * in its heap.
 */
void cli_repack_after_run(const char *path)
{
	struct hs_repack_stats st;
	pid_t pid;
	int err, ws;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		hs_log(HS_LOG_DEBUG, "run: %s was not repacked: %s", path,
		       strerror(errno));
		return;
	}
	if (pid > 0) {
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
		return;
	}
	err = hs_trace_repack(path, &run_rule, &st);
	if (err)
		hs_log(HS_LOG_DEBUG, "run: %s was not repacked: %s", path,
		       strerror(-err));
	else if (st.skipped && st.probe_gain_permille > INT32_MIN)
		hs_log(HS_LOG_DEBUG, "run: %s was not repacked: %s: %.1f%%", path,
		       st.skipped, st.probe_gain_permille / 10.0);
	else if (st.skipped)
		hs_log(HS_LOG_DEBUG, "run: %s was not repacked: %s", path, st.skipped);
	else
		hs_log(HS_LOG_DEBUG,
		       "run: %s repacked: %" PRIu64 " chunks of events -> %" PRIu64
		       ", %" PRIu64 " -> %" PRIu64 " bytes",
		       path, st.chunks_in, st.chunks_out, st.bytes_in, st.bytes_out);
	fflush(stderr);
	_exit(0);
}

struct repack_opts {
	unsigned long chunk_records;
	int if_it_pays;
	int quiet;
};

static const struct cli_option repack_options[] = {
    OPT_ULONG(0, "chunk-records", struct repack_opts, chunk_records, "BYTES",
	      "records per rewritten chunk, before compression (default and\n"
	      "most: 1572858, about 1.5 MiB)"),
    OPT_FLAG(0, "if-it-pays", struct repack_opts, if_it_pays,
	     "only where `run` would: chunks of under 64 KiB\n"
	     "each, a sample of which, joined, comes out at\n"
	     "least 2% smaller (25% when they hold more than\n"
	     "16 MiB)"),
    OPT_FLAG('q', "quiet", struct repack_opts, quiet, "print nothing but errors"),
    OPT_END(),
};

const struct cli_syntax cli_repack_syntax = {
    .cmd = "repack",
    .usage =
	"usage: heapscope repack [--chunk-records BYTES] [--if-it-pays] [-q] TRACE\n",
    .intro = "Rewrite TRACE (a finished .heapscope file) into fewer, bigger chunks of\n"
	     "events, each still readable on its own: the same records, fewer bytes\n"
	     "where the program wrote many small chunks. The new file is written\n"
	     "beside TRACE (TRACE.repack) and renamed over it when complete, so an\n"
	     "interrupted rewrite leaves TRACE as it was. A trace that was cut off,\n"
	     "or that the rewrite would not make smaller, is left as it is.\n"
	     "'heapscope run' does this by itself when the program has ended.\n",
    .options = repack_options,
    .help_column = 22,
};

int cmd_repack(int argc, char **argv)
{
	struct repack_opts o = {0};
	struct hs_repack_opts ro = {0};
	struct hs_repack_stats st;
	int n, status, err;

	n = cli_parse_options(&cli_repack_syntax, &o, argc, argv, &status);
	if (n < 0)
		return status;
	if (n > 1)
		return cli_usage_error("repack", "too many arguments");
	if (n == 0)
		return cli_usage_error("repack", "no trace file given");
	if (o.chunk_records > HS_REPACK_RECORDS_DEFAULT)
		return cli_usage_error("repack", "--chunk-records is at most %zu",
				       HS_REPACK_RECORDS_DEFAULT);
	if (o.if_it_pays)
		ro = run_rule;
	ro.chunk_records = o.chunk_records;
	err = hs_trace_repack(argv[0], &ro, &st);
	if (err)
		return cli_fail("cannot repack %s: %s (it is left as it was)", argv[0],
				strerror(-err));
	if (o.quiet)
		return HS_EXIT_OK;
	if (st.skipped && st.probe_gain_permille > INT32_MIN)
		printf("%s: left as it is (%s: %.1f%%)\n", argv[0], st.skipped,
		       st.probe_gain_permille / 10.0);
	else if (st.skipped)
		printf("%s: left as it is (%s)\n", argv[0], st.skipped);
	else
		printf("%s: %" PRIu64 " chunks of events -> %" PRIu64 ", %" PRIu64
		       " -> %" PRIu64 " bytes\n",
		       argv[0], st.chunks_in, st.chunks_out, st.bytes_in, st.bytes_out);
	return HS_EXIT_OK;
}
