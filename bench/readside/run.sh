#!/bin/sh
# run.sh - what a user types and waits for (issue 14, item 5): on the same
# runs, each command with its wall and CPU time and its peak RSS.
#
#   bench/readside/run.sh [BUILD [ITERATIONS [BIG_ITERATIONS]]]
#       (BUILD=build, ITERATIONS=5000000, BIG_ITERATIONS=0: no big pair)
#
# Workloads:
#   rand1, rand2  build/bench/rand_loop at 1 and 2 threads, ITERATIONS
#                 iterations each (random sizes 16-527 B, random free
#                 order; 2 events per iteration)
#   python        python3 building dicts, PYTHONMALLOC=malloc
#   big/10, big   with BIG_ITERATIONS > 0: rand_loop at 1 thread with
#                 BIG_ITERATIONS/10 and BIG_ITERATIONS iterations, to see
#                 whether a command's memory grows with the trace's length
#                 (BIG_ITERATIONS=50000000 makes the 10M- and 100M-event
#                 pair)
# For each: the program alone; `heapscope run -q --no-symbolize`; the
# default `heapscope run --no-view` (summary and symbols); then on the
# default run's trace `heapscope stats` and `heapscope report --source S`
# for every memory source; heaptrack and heaptrack_print on its file.
# Times and peak RSS come from /usr/bin/time (scripts/install-deps.sh
# --bench installs it): "wall s, user+sys s, max RSS MB". Under `run`
# the RSS is the largest of heapscope's process and the program's.
# One run of each: on a shared machine compare CPU times, and rerun.
set -eu
BUILD=${1:-build}
ITER=${2:-5000000}
BIG=${3:-0}
HS="$BUILD/heapscope"
LOOP="$BUILD/bench/rand_loop"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-readside-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

if [ ! -x /usr/bin/time ]; then
	echo "run.sh: /usr/bin/time is missing (scripts/install-deps.sh --bench)" >&2
	exit 1
fi
HAVE_HT=0
command -v heaptrack >/dev/null 2>&1 && command -v heaptrack_print >/dev/null 2>&1 &&
	HAVE_HT=1

cat > "$DIR/dicts.py" <<'PY'
d = {}
for i in range(300000):
    d[str(i)] = {"k": i, "v": [i, str(i)]}
    if i % 3 == 0:
        del d[str(i // 2)]
PY

# measure LABEL CMD...: one line "LABEL  wall  cpu  rss"
measure() {
	label=$1
	shift
	if /usr/bin/time -f '%e %U %S %M' -o "$DIR/t" "$@" >/dev/null 2>"$DIR/err"; then
		awk -v l="$label" '{ printf "  %-34s %7.2f s %7.2f s cpu %8.1f MB\n", l, $1, $2 + $3, $4 / 1024 }' "$DIR/t"
	else
		echo "  $label: failed"
		tail -3 "$DIR/err" | sed 's/^/    /'
	fi
}

workload() {
	name=$1
	shift
	echo "== $name: $*"
	measure "alone" "$@"
	measure "run -q --no-symbolize" "$HS" run -q --no-symbolize -o "$DIR/q.hstrace" "$@"
	measure "run (summary, symbols)" "$HS" run --no-view -o "$DIR/d.hstrace" "$@"
	ls -l "$DIR/d.hstrace" | awk '{ printf "  trace %.1f MB\n", $5 / 1048576 }'
	measure "stats" "$HS" stats "$DIR/d.hstrace"
	for s in alloc net leaks peak temporary mmap; do
		measure "report --source $s" "$HS" report "$DIR/d.hstrace" --source "$s"
	done
	if [ "$HAVE_HT" = 1 ]; then
		rm -f "$DIR"/ht.*
		measure "heaptrack" heaptrack -o "$DIR/ht" "$@"
		ls -l "$DIR"/ht.* | awk '{ printf "  heaptrack file %.1f MB\n", $5 / 1048576 }'
		measure "heaptrack_print" heaptrack_print "$DIR"/ht.*
	fi
	rm -f "$DIR"/*.hstrace "$DIR"/ht.*
}

workload rand1 "$LOOP" 1 "$ITER"
workload rand2 "$LOOP" 2 "$ITER"
# the interpreter itself, not a wrapper script (pyenv's shims are shell
# scripts, which neither heapscope run nor heaptrack follow into)
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [ -n "$PY" ]; then
	PYTHONMALLOC=malloc
	export PYTHONMALLOC
	workload python "$PY" "$DIR/dicts.py"
	unset PYTHONMALLOC
fi
if [ "$BIG" -gt 0 ]; then
	workload "big/10" "$LOOP" 1 $((BIG / 10))
	workload big "$LOOP" 1 "$BIG"
fi
