#!/bin/sh
# run.sh - reading .nettrace: heapscope's speed in MB/s per core and its
# peak RSS, against dotnet-trace's report and convert when installed
# (make bench; issue 15 item 8). $1 = the build directory.
#
# It builds tests/targets/dotnet (needs the .NET SDK, else it says so and
# stops), records it at SCALE (default 10000: about 66 GB allocated in
# small objects, strings and 200 KB arrays, about 6,800 GCs, a 49 MB trace)
# with the GC events at level Verbose, loader, JIT, stacks and the
# SampleProfiler, then runs each reader RUNS times (default 3) and keeps
# the best CPU time (user + system) and the highest RSS. MB/s per core is
# the file's size over the CPU seconds: what one core reads, whatever else
# the machine runs. Not a test: timings belong here.
set -eu
BUILD=${1:-build}
HS=$(cd "$BUILD" && pwd)/heapscope
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SCALE=${SCALE:-10000}
RUNS=${RUNS:-3}

if ! command -v dotnet > /dev/null; then
	echo "dotnet bench: dotnet (the .NET SDK) is not installed; skipped"
	exit 0
fi
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-bench-dotnet.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$SRC/bench/dotnet/allocs.sh"
build_allocs "$SRC" "$DIR"
TRACE=$DIR/big.nettrace
# KEEP=DIR: keep the recording in DIR and reuse it on the next run
if [ -n "${KEEP:-}" ] && [ -s "$KEEP/big.nettrace" ]; then
	cp "$KEEP/big.nettrace" "$KEEP/truth.txt" "$DIR/"
else
DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$TRACE" \
DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x4000C019:5,Microsoft-DotNETCore-SampleProfiler:0:5' \
	dotnet "$DIR/out/allocs.dll" "$SCALE" > "$DIR/truth.txt"
	[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp "$TRACE" "$DIR/truth.txt" "$KEEP/"; }
fi
BYTES=$(wc -c < "$TRACE")
echo "trace: scale $SCALE, $BYTES bytes, the program's GC.CollectionCount(0) $(awk '$1 == "gc_count" { print $2 }' "$DIR/truth.txt")"

# best NAME CMD...: run CMD RUNS times; print NAME, best CPU s, MB/s per core, max RSS
best() {
	name=$1
	shift
	cpu= rss=0 i=0
	while [ "$i" -lt "$RUNS" ]; do
		/usr/bin/time -f '%U %S %M' -o "$DIR/time" "$@" > "$DIR/out.txt" 2> "$DIR/err.txt" ||
			{ echo "$name: failed: $*" >&2; cat "$DIR/err.txt" >&2; return 1; }
		read -r u s m < "$DIR/time"
		cpu=$(awk -v u="$u" -v s="$s" -v b="$cpu" \
			'BEGIN { c = u + s; print (b == "" || c < b + 0) ? c : b }')
		[ "$m" -gt "$rss" ] && rss=$m
		i=$((i + 1))
	done
	awk -v n="$name" -v c="$cpu" -v b="$BYTES" -v r="$rss" 'BEGIN {
		printf "%-44s %7.2f s CPU %9.0f MB/s per core %7.1f MB peak RSS\n", n, c,
		       (c > 0 ? b / 1e6 / c : 0), r / 1024 }'
}

best "heapscope gcstats (text)" "$HS" gcstats "$TRACE"
best "heapscope gcstats --format json" "$HS" gcstats --format json "$TRACE"
best "heapscope report (gc-alloc ByName)" "$HS" report "$TRACE" --view byname
best "heapscope report --source thread-time" "$HS" report "$TRACE" --source thread-time --view byname
DT=$(command -v dotnet-trace 2> /dev/null || echo "$HOME/.dotnet/tools/dotnet-trace")
if [ -x "$DT" ]; then
	best "dotnet-trace report topN" "$DT" report "$TRACE" topN
	best "dotnet-trace convert --format speedscope" \
		"$DT" convert "$TRACE" --format speedscope -o "$DIR/t.speedscope.json"
else
	echo "dotnet-trace is not installed (dotnet tool install -g dotnet-trace): no comparison"
fi
