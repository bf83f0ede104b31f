#!/bin/sh
# perf_script_import.sh - speed and memory of the perf script importer.
#
#   bench/perf_script_import.sh [BUILD [BYTES [SEED]]]
#
# Generates BYTES (default 1 GiB) of realistic `perf script` text with
# many distinct stacks (build/bench/gen_perf_script), imports it with
# build/bench/import_bench, as the cpu and the thread-time source, and
# prints input MB/s and the process's peak RSS against the size of the
# resulting model (hs_source_memory).
# Targets: at least 50 MB/s, peak RSS at most 2x the model.
set -eu
BUILD=${1:-build}
BYTES=${2:-1073741824}
SEED=${3:-1}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-perf-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

"$BUILD/bench/gen_perf_script" "$BYTES" "$SEED" > "$DIR/gen.data.txt"
for source in cpu thread-time; do
	out=$("$BUILD/bench/import_bench" "$DIR/gen.data.txt" "$source")
	echo "$out"
	echo "$out" | awk -v s="$source" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		ok = v["MB/s"] >= 50 && v["rss/model"] <= 2
		printf "perf script import (%s): %s MB/s (%s MB per CPU second; " \
		       "target >= 50), peak RSS %.2fx the model (target <= 2): %s\n",
		       s, v["MB/s"], v["MB/cpu_s"], v["rss/model"], ok ? "ok" : "MISSED"
	}'
done
