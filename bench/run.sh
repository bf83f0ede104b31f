#!/bin/sh
# run.sh - run heapscope's benchmarks (make bench). $1 = the build directory.
set -eu
BUILD=${1:-build}

echo "== filter: one stack-viewer recompute (budget: 10M samples in 0.5 s)"
"$BUILD/bench/filter_bench"

echo "== views: recompute (filter, call tree, Fold%) and every view (budget: 0.5 s)"
"$BUILD/bench/views_bench"

echo "== perf script import: 1 GiB of generated text (targets: >= 50 MB/s, RSS <= 2x model)"
sh bench/perf_script_import.sh "$BUILD"

echo "== convert: PerfView XML/JSON and folded, write and read back"
"$BUILD/bench/convert_bench"

echo "== symbols: distinct addresses resolved per second (target: thousands)"
if ninja -C "$BUILD" bench/symbols_input >/dev/null 2>&1; then
	"$BUILD/bench/symbols_bench" "$BUILD/bench/symbols_input"
fi
"$BUILD/bench/symbols_bench" "$BUILD/heapscope"

echo "== view: the GUI's actions through the HTTP API on 1M samples (budget: 300 ms each)"
"$BUILD/bench/view_bench"

echo "== heap tracer: heapscope run against the program alone and heaptrack"
sh bench/tracer/run.sh "$BUILD"

echo "== CPU sampling: heapscope run --cpu against perf record -g (target: under 5% of CPU)"
sh bench/cpu/run.sh "$BUILD"

echo "== memory views: reading a 40M-event heap trace against heaptrack_print (target: 3x)"
sh bench/memviews/run.sh "$BUILD"

echo "== heapscope's and heaptrack's numbers on the same programs"
sh bench/memviews/agree.sh "$BUILD"

echo "== .nettrace: reading in MB/s per core against dotnet-trace (target: >= 150 MB/s)"
sh bench/dotnet/run.sh "$BUILD"

echo "== .NET recording: heapscope run and attach against dotnet-trace collect (target: no more)"
sh bench/dotnet/record.sh "$BUILD"

echo "== .gcdump: a 10M-object heap snapshot, heap and retained views (budget: 10 s, 3x the file)"
GCDUMP_TMP=$(mktemp -d)
"$BUILD/bench/gcdump_bench" gen "$GCDUMP_TMP/big.gcdump" 10000000
"$BUILD/bench/gcdump_bench" open "$GCDUMP_TMP/big.gcdump"
rm -rf "$GCDUMP_TMP"
