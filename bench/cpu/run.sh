#!/bin/sh
# run.sh - the CPU sampler's overhead against the program alone and
# against perf record -g at the same rate.
#
#   bench/cpu/run.sh [BUILD [RUNS [HZ]]]      (BUILD=build, RUNS=5, HZ=999)
#
# Each CPU-bound workload runs alone, under `heapscope run --cpu=HZ
# --no-heap` (samples only, no symbolization afterwards) and under
# `perf record -g -F HZ` (frame-pointer call graphs, perf's default), the
# three taking turns RUNS times over so that a busy moment of the machine
# is shared out. Times are the best of the RUNS: wall clock, and CPU
# (task-clock of the whole process tree from perf stat, which counts
# heapscope's sampler thread and perf's own process). Overhead is
# T / T_alone - 1, the best times' and the median of each turn's runs.
# Target: heapscope --cpu under 5% of CPU time. Each workload is also
# profiled under --cpu once (bench/collector_share.sh): the share of the
# run's CPU samples in the collector's code and threads, a figure that
# does not drift with the machine's speed but leaves out the kernel's work
# of delivering the sampling signals. A fourth configuration takes the
# turns too: the program with only an empty handler of the same signals
# (build/bench/libsignal_floor.so: the task-clock perf event at HZ and a
# real-time signal, what any sampler of this design pays before it reads
# a stack), the floor under the overhead on this machine; the table gives
# heapscope's time above it, the median of each turn's pair. Last, the
# cost of --wall on a program that sleeps.
#
# The samples each took are given too (heapscope: SAMPLE records; perf:
# the samples perf script prints), and the ms of CPU heapscope's samples
# add up to, against the CPU time of the run alone.
set -eu
BUILD=${1:-build}
RUNS=${2:-5}
HZ=${3:-999}
HS="$BUILD/heapscope"
SPINNER="$BUILD/tests/targets/spinner"
FLOOR="$BUILD/bench/libsignal_floor.so"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-cpu-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

for tool in perf /usr/bin/python3 gcc; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench/cpu: '$tool' is missing" >&2
		exit 1
	}
done
for f in "$SPINNER" "$FLOOR"; do
	[ -e "$f" ] || { echo "bench/cpu: $f is not built" >&2; exit 1; }
done
perf record -q -o "$DIR/probe.data" -- true >/dev/null 2>&1 || {
	echo "bench/cpu: perf record is refused (kernel.perf_event_paranoid)" >&2
	exit 1
}

cat > "$DIR/loop.py" <<'PY'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(sum(fib(25) for _ in range(200)))
PY
awk 'BEGIN {
	for (f = 0; f < 1200; f++) {
		printf "int f%d(int *v, int n) {\n  int i, s = 0;\n", f
		printf "  for (i = 0; i < n; i++) s += v[i] * %d + (s >> %d);\n", f + 1, f % 5 + 1
		printf "  if (s %% %d == 0) s += f%d(v, n - 1);\n  return s;\n}\n", f % 11 + 2, (f > 0 ? f - 1 : 0)
	}
}' > "$DIR/gen.c"
CC1=$(gcc -print-prog-name=cc1)

# name | command
WORKLOADS="spin (4 frames)|$SPINNER rounds 4000
python3 fib (deep stacks)|/usr/bin/python3 $DIR/loop.py
gcc -O2 (cc1)|$CC1 -quiet -O2 $DIR/gen.c -o $DIR/gen.s"

BENCH=bench/cpu
. bench/timing.sh

# paired_pct CONFIG [BASE]: paired's medians as "+W%, +C%"
paired_pct() {
	paired "$@" | awk '{ printf "%+.1f%%, %+.1f%%", $1, $2 }'
}

overhead() {
	awk "BEGIN { printf \"%+.1f%%\", ($1 / $2 - 1) * 100 }"
}

echo "CPU sampling at $HZ Hz: best of $RUNS runs on $(nproc) cores; overhead = T/T_alone - 1"
echo
printf '| workload | alone: wall, cpu | empty handler (floor): wall, cpu | median of paired runs | heapscope --cpu: wall, cpu | median of paired runs | above the floor: median | samples (ms of CPU) | perf record -g: wall, cpu | median of paired runs | samples |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
echo "$WORKLOADS" | while IFS='|' read -r name cmd; do
	rm -f "$DIR"/best.* "$DIR"/runs.*
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		# shellcheck disable=SC2086
		measure alone $cmd
		# shellcheck disable=SC2086
		measure floor env LD_PRELOAD="$FLOOR" HS_FLOOR_HZ="$HZ" $cmd
		# shellcheck disable=SC2086
		measure heapscope "$HS" run -q --no-view --no-symbolize --cpu="$HZ" --no-heap \
			-o "$DIR/t.heapscope" -- $cmd
		cp "$DIR/t.heapscope" "$DIR/last.heapscope"
		# shellcheck disable=SC2086
		measure perf perf record -q -g -F "$HZ" -o "$DIR/t.data" -- $cmd
		cp "$DIR/t.data" "$DIR/last.data"
		i=$((i + 1))
	done
	read -r t0 c0 < "$DIR/best.alone"
	read -r tf cf < "$DIR/best.floor"
	read -r t1 c1 < "$DIR/best.heapscope"
	read -r t2 c2 < "$DIR/best.perf"
	hs_samples=$("$HS" stats "$DIR/last.heapscope" 2>/dev/null |
		awk '/^cpu samples:/ { sub(/^\(/, "", $4); print $3 " (" $4 " ms)" }')
	perf_samples=$(perf script -i "$DIR/last.data" -F comm 2>/dev/null | grep -c . || true)
	# shellcheck disable=SC2086
	share=$(sh bench/collector_share.sh "$DIR/share.data" "$HS" run -q --no-view \
		--no-symbolize --cpu="$HZ" --no-heap -o "$DIR/t.heapscope" -- $cmd)
	echo "$name: the collector's share of the run's CPU samples: $share" >> "$DIR/shares"
	printf '| %s | %.2f s, %.2f s | %.2f s (%s), %.2f s (%s) | %s | %.2f s (%s), %.2f s (%s) | %s | %s | %s | %.2f s (%s), %.2f s (%s) | %s | %s |\n' \
		"$name" "$t0" "$c0" \
		"$tf" "$(overhead "$tf" "$t0")" "$cf" "$(overhead "$cf" "$c0")" "$(paired_pct floor)" \
		"$t1" "$(overhead "$t1" "$t0")" "$c1" "$(overhead "$c1" "$c0")" \
		"$(paired_pct heapscope)" "$(paired_pct heapscope floor)" "$hs_samples" \
		"$t2" "$(overhead "$t2" "$t0")" "$c2" "$(overhead "$c2" "$c0")" \
		"$(paired_pct perf)" "$perf_samples"
done

echo
cat "$DIR/shares"

# --wall on a program asleep for a second: the sampler's own cost, at the
# default rate against one tick a second (the same start-up)
SLEEPER="$BUILD/tests/targets/sleeper"
if [ -x "$SLEEPER" ]; then
	rm -f "$DIR"/best.* "$DIR"/runs.*
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		measure slow "$HS" run -q --no-view --no-symbolize --wall=1 --no-heap \
			-o "$DIR/t.heapscope" -- "$SLEEPER" idle 1000
		measure idle "$HS" run -q --no-view --no-symbolize --wall="$HZ" --no-heap \
			-o "$DIR/t.heapscope" -- "$SLEEPER" idle 1000
		i=$((i + 1))
	done
	read -r _ cs < "$DIR/best.slow"
	read -r _ ci < "$DIR/best.idle"
	echo
	awk -v s="$cs" -v i="$ci" -v hz="$HZ" 'BEGIN {
		printf "--wall=%d on a program asleep for 1 s: %.1f ms of CPU, %.1f ms more than at one tick a second\n",
		       hz, i * 1000, (i - s) * 1000 }'
fi
