#!/bin/sh
# record.sh - what recording an allocating .NET program costs: heapscope
# against dotnet-trace recording the same events (make bench; issue 15
# item 8). $1 = the build directory.
#
# It builds tests/targets/dotnet (needs the .NET SDK, else it says so and
# stops) and runs it at SCALE (default 1000: about 6.6 GB allocated in
# small objects, strings and 200 KB arrays) RUNS times (default 5) in each
# configuration:
#   alone          dotnet allocs.dll SCALE
#   run            heapscope run -q --no-view -o F -- dotnet allocs.dll SCALE
#                  (the native heap trace, symbolized at the end, and the
#                  .NET events: what `heapscope run` of a .NET program does)
#   run no-symb    the same with --no-symbolize
#   gated          the program held at its start (ALLOCS_GATE) then let go:
#                  its time from the gate's opening to its exit, startup
#                  left out, as in attach
#   attach         heapscope attach PID -o F.nettrace on the program held
#                  at its start, then let go: the .NET events alone, from
#                  the gate's opening to both exits
#   dotnet-trace   dotnet-trace collect --providers P -o F.nettrace --
#                  dotnet allocs.dll SCALE, P being heapscope's default
#                  providers (the rundown is on in both)
# and prints, per configuration, the wall time and the CPU time (user +
# system of every process of the configuration: what it costs on a busy
# machine) as min and median, the peak RSS of the largest process (GNU
# time's %M: the largest of the processes it waited for), the size of the
# .nettrace (the last run's), and the ratios of the median wall and CPU
# times to dotnet-trace's. Not a test: timings belong here.
set -eu
BUILD=${1:-build}
HS=$(cd "$BUILD" && pwd)/heapscope
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SCALE=${SCALE:-1000}
RUNS=${RUNS:-5}
PROVIDERS='Microsoft-Windows-DotNETRuntime:0x4000C019:5,Microsoft-DotNETCore-SampleProfiler:0:5'

if ! command -v dotnet > /dev/null; then
	echo "dotnet record bench: dotnet (the .NET SDK) is not installed; skipped"
	exit 0
fi
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-bench-dnrec.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
. "$SRC/bench/dotnet/allocs.sh"
build_allocs "$SRC" "$DIR"
APP=$DIR/out/allocs.dll
DT=$(command -v dotnet-trace 2> /dev/null || echo "$HOME/.dotnet/tools/dotnet-trace")

now() {
	date +%s.%N
}

# one_run CONFIG I: run CONFIG once; append "WALL_S RSS_KB CPU_S NETTRACE_BYTES" to $DIR/CONFIG
one_run() {
	cfg=$1 i=$2 out=$DIR/r$2 bytes=0
	rm -f "$out".*
	case $cfg in
	alone)
		t0=$(now)
		/usr/bin/time -f '%M %U %S' -o "$DIR/time" dotnet "$APP" "$SCALE" > "$DIR/truth" ;;
	run)
		t0=$(now)
		/usr/bin/time -f '%M %U %S' -o "$DIR/time" "$HS" run -q --no-view -o "$out.heapscope" \
			-- dotnet "$APP" "$SCALE" > "$DIR/truth" ;;
	run-nosym)
		t0=$(now)
		/usr/bin/time -f '%M %U %S' -o "$DIR/time" "$HS" run -q --no-view --no-symbolize \
			-o "$out.heapscope" -- dotnet "$APP" "$SCALE" > "$DIR/truth" ;;
	gated|attach)
		# hold the program at its start, attach, then let it allocate;
		# the wall time runs from the gate's opening to both exits
		rm -f "$DIR/gate" "$DIR/gate.end" "$DIR/time" "$DIR/truth"
		ALLOCS_GATE=$DIR/gate /usr/bin/time -f '%M %U %S' -o "$DIR/time.app" \
			dotnet "$APP" "$SCALE" > "$DIR/truth" &
		app=$!
		# a whole first line: "ready PID"
		until [ "$(wc -l 2> /dev/null < "$DIR/truth")" -ge 1 ] 2> /dev/null; do
			sleep 0.01
		done
		pid=$(awk '$1 == "ready" { print $2 }' "$DIR/truth")
		att=
		if [ "$cfg" = attach ]; then
			/usr/bin/time -f '%M %U %S' -o "$DIR/time" "$HS" attach "$pid" \
				-o "$out.nettrace" 2> "$DIR/attach.err" &
			att=$!
			until grep -q 'recording process' "$DIR/attach.err" 2> /dev/null; do
				kill -0 "$att" 2> /dev/null || {
					cat "$DIR/attach.err" >&2
					touch "$DIR/gate" "$DIR/gate.end"
					return 1
				}
				sleep 0.01
			done
		fi
		t0=$(now)
		touch "$DIR/gate"
		until grep -q '^caught' "$DIR/truth"; do sleep 0.01; done
		touch "$DIR/gate.end"
		wait "$app"
		[ -z "$att" ] || wait "$att"
		[ -s "$DIR/time" ] || echo "0 0 0" > "$DIR/time"
		# the larger RSS, the CPU times of both
		cat "$DIR/time.app" "$DIR/time" | awk '{ m = $1 > m ? $1 : m; u += $2; s += $3 }
			END { print m, u, s }' > "$DIR/time.both"
		mv "$DIR/time.both" "$DIR/time" ;;
	dotnet-trace)
		t0=$(now)
		/usr/bin/time -f '%M %U %S' -o "$DIR/time" "$DT" collect --providers "$PROVIDERS" \
			-o "$out.nettrace" --show-child-io -- dotnet "$APP" "$SCALE" \
			> "$DIR/truth" 2> "$DIR/dt.err" ;;
	esac
	t1=$(now)
	[ ! -f "$out.nettrace" ] || bytes=$(wc -c < "$out.nettrace")
	# WALL RSS CPU BYTES
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') $(awk '{ print $1, $2 + $3 }' \
		"$DIR/time") $bytes" >> "$DIR/$cfg"
	grep -q '^caught 1' "$DIR/truth" || { echo "$cfg: the program failed" >&2; return 1; }
}

CONFIGS="alone run run-nosym gated attach"
if [ -x "$DT" ]; then
	CONFIGS="$CONFIGS dotnet-trace"
else
	echo "dotnet-trace is not installed (dotnet tool install -g dotnet-trace): no comparison"
fi
# the configurations take turns, so that a slow moment of the machine hits them all
i=0
while [ "$i" -lt "$RUNS" ]; do
	for c in $CONFIGS; do
		one_run "$c" "$i"
	done
	i=$((i + 1))
done

# stat FILE COLUMN: "min median" of a column
stat() {
	cut -d' ' -f"$2" "$1" | sort -g | awk '{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print v[1], m }'
}

echo "scale $SCALE, $RUNS runs each; $(grep '^foo_bytes\|^array_bytes\|^string_bytes' "$DIR/truth" | tr '\n' ' ')"
ref= refc=
[ ! -f "$DIR/dotnet-trace" ] || {
	ref=$(stat "$DIR/dotnet-trace" 1 | cut -d' ' -f2)
	refc=$(stat "$DIR/dotnet-trace" 3 | cut -d' ' -f2)
}
printf '%-13s %9s %9s %9s %9s %10s %10s %9s %s\n' config "wall min" "wall med" "CPU min" \
	"CPU med" "RSS min MB" "RSS med MB" "nettrace" "median wall, CPU / dotnet-trace's"
for c in $CONFIGS; do
	set -- $(stat "$DIR/$c" 1) $(stat "$DIR/$c" 2) $(stat "$DIR/$c" 3) $(stat "$DIR/$c" 4)
	awk -v c="$c" -v w0="$1" -v w1="$2" -v r0="$3" -v r1="$4" -v c0="$5" -v c1="$6" \
	    -v b="$8" -v ref="$ref" -v refc="$refc" 'BEGIN {
		printf "%-13s %8.2fs %8.2fs %8.2fs %8.2fs %10.1f %10.1f %6.1f MB %s\n", c, w0, w1,
		       c0, c1, r0 / 1024, r1 / 1024, b / 1e6,
		       ref == "" ? "-" : sprintf("%.2f, %.2f", w1 / ref, c1 / refc) }'
done
