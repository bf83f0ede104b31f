#!/bin/sh
# run.sh - reading a heap trace and building its net view, against
# heaptrack_print reading heaptrack's trace of the same workload.
#
#   bench/memviews/run.sh [BUILD [ITERATIONS [RUNS]]]   (build, 20000000, 3)
#
# 1. bench/tracer/malloc_loop 1 ITERATIONS (2 events per iteration: 40M
#    with the default) is traced by `heapscope run` and by heaptrack; then
#    build/bench/memview_bench reads the heapscope trace and builds the
#    net view (hs_memview_build_path: the events streamed from the file
#    through a reading thread), and heaptrack_print reads heaptrack's
#    trace (its default report). Best of RUNS, wall and CPU seconds
#    (/usr/bin/time). The same with 2 threads (ITERATIONS / 2 each).
# heaptrack's and heapscope's numbers on real programs: agree.sh.
set -eu
BUILD=${1:-build}
ITER=${2:-20000000}
RUNS=${3:-3}
HS="$BUILD/heapscope"
LOOP="$BUILD/bench/malloc_loop"
BENCH="$BUILD/bench/memview_bench"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-memviews-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

for tool in heaptrack heaptrack_print /usr/bin/time; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench/memviews: '$tool' is missing (scripts/install-deps.sh --bench)" >&2
		exit 1
	}
done

# best CMD...: the best wall and CPU seconds of RUNS runs, as "WALL CPU"
best() {
	i=0
	bw=""
	bc=""
	while [ "$i" -lt "$RUNS" ]; do
		/usr/bin/time -f '%e %U %S' -o "$DIR/time" "$@" > /dev/null 2> "$DIR/err" ||
			{ echo "bench/memviews: failed: $*" >&2; cat "$DIR/err" >&2; exit 1; }
		w=$(awk '{ print $1 }' "$DIR/time")
		c=$(awk '{ print $2 + $3 }' "$DIR/time")
		if [ -z "$bw" ] || awk "BEGIN { exit !($w < $bw) }"; then bw=$w; fi
		if [ -z "$bc" ] || awk "BEGIN { exit !($c < $bc) }"; then bc=$c; fi
		i=$((i + 1))
	done
	echo "$bw $bc"
}

echo "reading a trace and building the net view: best of $RUNS, $(nproc) cores"
echo
printf '| workload | events | heaptrack_print: wall, CPU | heapscope net view: wall, CPU (reading thread, view thread) | ratio: wall, CPU |\n'
printf '|---|---|---|---|---|\n'
for threads in 1 2; do
	iter=$((ITER / threads))
	rm -f "$DIR"/t.heapscope "$DIR"/ht.*
	"$HS" run -q --no-view -o "$DIR/t.heapscope" -- "$LOOP" "$threads" "$iter" > /dev/null
	heaptrack -o "$DIR/ht" "$LOOP" "$threads" "$iter" > /dev/null 2>&1
	events=$("$HS" dump --summary "$DIR/t.heapscope" | sed -n 's/^events: //p')
	set -- $(best heaptrack_print -f "$DIR"/ht.*)
	hw=$1
	hc=$2
	set -- $(best "$BENCH" "$DIR/t.heapscope" net 1 path)
	sw=$1
	sc=$2
	"$BENCH" "$DIR/t.heapscope" net 1 path > "$DIR/detail"
	split=$(sed -n 's/.*(\([0-9.]*\) s in the view.s thread, \([0-9.]*\) s in the reading thread).*/\2 s, \1 s/p' "$DIR/detail")
	printf '| malloc_loop, %d thread(s) | %s | %.2f s, %.2f s | %.2f s, %.2f s (%s) | %.1fx, %.1fx |\n' \
		"$threads" "$events" "$hw" "$hc" "$sw" "$sc" "$split" \
		"$(awk "BEGIN { print $hw / $sw }")" "$(awk "BEGIN { print $hc / $sc }")"
done
echo
echo "(memview_bench's own figures for the last workload, and loading the whole"
echo " trace instead, hs_trace_load + hs_memview_build:)"
"$BENCH" "$DIR/t.heapscope" net 1 | sed 's/^/    /'

echo
echo "(the numbers of both tools on real programs: bench/memviews/agree.sh)"
