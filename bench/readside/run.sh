#!/bin/sh
# run.sh - what a user types and waits for (issue 14, item 5): on the same
# runs, each command with its wall and CPU time and its peak RSS.
#
#   bench/readside/run.sh [BUILD [ITERATIONS [BIG_ITERATIONS [MAX_THREADS]]]]
#       (BUILD=build, ITERATIONS=5000000, BIG_ITERATIONS=50000000 (0: no
#       big pair), MAX_THREADS=the number of cores, at least 2)
#
# Workloads:
#   rand1, rand2  build/bench/rand_loop at 1 and 2 threads, ITERATIONS
#                 iterations each (random sizes 16-527 B, random free
#                 order; 2 events per iteration)
#   python        python3 building dicts, PYTHONMALLOC=malloc
#   sqlite3       sqlite3 in memory: a 300k-row table and two indexes
#                 (no random(): the same allocations in every run)
#   threads-N     rand_loop at N = 1, 2, ... MAX_THREADS threads with
#                 ITERATIONS/2 iterations each (the thread scaling: the
#                 program, `run -q --no-symbolize`, the default `run`,
#                 `stats`, heaptrack and heaptrack_print only)
#   big/10, big   rand_loop at 1 thread with BIG_ITERATIONS/10 and
#                 BIG_ITERATIONS iterations (50000000: the 10M- and the
#                 100M-event trace), to see whether a command's memory
#                 grows with the trace's length
# For each: the program alone; `heapscope run -q --no-symbolize`; the
# default `heapscope run --no-view` (end summary and symbols); then on the
# default run's trace `heapscope stats` and `heapscope report --source S`
# for every memory source; heaptrack and heaptrack_print on its file.
# Times and peak RSS come from /usr/bin/time (scripts/install-deps.sh
# --bench installs it): "wall s, user+sys s, max RSS MB". Under `run`
# the RSS is the largest of heapscope's process and the program's.
# The last lines give, per workload, the slowdown (T / T_alone - 1) of
# the default run and of heaptrack and their ratio (issue 14's target: at
# most 0.3), and T / T_alone of the default run (target on python3 and
# sqlite3: at most 1.3), in CPU and in wall time.
# One run of each: on a shared machine compare CPU times, and rerun.
set -eu
BUILD=${1:-build}
ITER=${2:-5000000}
BIG=${3:-50000000}
CORES=$(nproc 2>/dev/null || echo 2)
[ "$CORES" -ge 2 ] || CORES=2
MAXT=${4:-$CORES}
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

cat > "$DIR/table.sql" <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000)
INSERT INTO t SELECT x, (x * 7919) % 100000, hex(x * 2654435761) FROM c;
CREATE INDEX t_a ON t(a);
CREATE INDEX t_b ON t(b);
SELECT count(*), sum(a) FROM t WHERE a < 50000;
SQL

# measure WORKLOAD LABEL CMD...: one line "LABEL  wall  cpu  rss", and the
# same in $DIR/results for the ratios at the end
measure() {
	wl=$1
	label=$2
	shift 2
	if /usr/bin/time -f '%e %U %S %M' -o "$DIR/t" "$@" >/dev/null 2>"$DIR/err"; then
		awk -v l="$label" '{ printf "  %-34s %7.2f s %7.2f s cpu %8.1f MB\n", l, $1, $2 + $3, $4 / 1024 }' "$DIR/t"
		awk -v w="$wl" -v l="$label" '{ printf "%s|%s|%s|%s\n", w, l, $1, $2 + $3 }' \
			"$DIR/t" >> "$DIR/results"
	else
		echo "  $label: failed"
		tail -3 "$DIR/err" | sed 's/^/    /'
	fi
}

# workload NAME full|scaling CMD...
workload() {
	name=$1
	what=$2
	shift 2
	echo "== $name: $*"
	measure "$name" "alone" "$@"
	measure "$name" "run -q --no-symbolize" "$HS" run -q --no-symbolize -o "$DIR/q.hstrace" "$@"
	measure "$name" "run (summary, symbols)" "$HS" run --no-view -o "$DIR/d.hstrace" "$@"
	ls -l "$DIR/d.hstrace" | awk '{ printf "  trace %.1f MB\n", $5 / 1048576 }'
	measure "$name" "stats" "$HS" stats "$DIR/d.hstrace"
	if [ "$what" = full ]; then
		for s in alloc net leaks peak temporary mmap; do
			measure "$name" "report --source $s" "$HS" report "$DIR/d.hstrace" --source "$s"
		done
	fi
	if [ "$HAVE_HT" = 1 ]; then
		rm -f "$DIR"/ht.*
		measure "$name" "heaptrack" heaptrack -o "$DIR/ht" "$@"
		ls -l "$DIR"/ht.* | awk '{ printf "  heaptrack file %.1f MB\n", $5 / 1048576 }'
		measure "$name" "heaptrack_print" heaptrack_print "$DIR"/ht.*
	fi
	rm -f "$DIR"/*.hstrace "$DIR"/ht.*
}

: > "$DIR/results"
workload rand1 full "$LOOP" 1 "$ITER"
workload rand2 full "$LOOP" 2 "$ITER"
# the interpreter itself, not a wrapper script (pyenv's shims are shell
# scripts, which neither heapscope run nor heaptrack follow into)
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [ -n "$PY" ]; then
	PYTHONMALLOC=malloc
	export PYTHONMALLOC
	workload python full "$PY" "$DIR/dicts.py"
	unset PYTHONMALLOC
fi
if command -v sqlite3 >/dev/null 2>&1; then
	workload sqlite3 full sqlite3 :memory: -init "$DIR/table.sql" .quit
fi
n=1
while [ "$n" -le "$MAXT" ]; do
	workload "threads-$n" scaling "$LOOP" "$n" $((ITER / 2))
	n=$((n + 1))
done
if [ "$BIG" -gt 0 ]; then
	workload "big/10" full "$LOOP" 1 $((BIG / 10))
	workload big full "$LOOP" 1 "$BIG"
fi

# the targets, per workload: CPU then wall
echo "== default run against heaptrack (slowdown = T / T_alone - 1)"
awk -F'|' '
	{ wall[$1, $2] = $3; cpu[$1, $2] = $4; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
	function line(w, kind, t, a, r, h) {
		if (a <= 0) {
			printf "  %-12s %-4s: the program alone took no measurable time\n", w, kind
			return
		}
		printf "  %-12s %-4s: alone %.2f s, default run %.2f s (%.2fx)", w, kind, a, r, r / a
		if (h > 0)
			printf ", heaptrack %.2f s: slowdown %.2f against %.2f, ratio %.2f", h,
				r / a - 1, h / a - 1, (h / a - 1 > 0 ? (r / a - 1) / (h / a - 1) : 0)
		printf "\n"
	}
	END {
		for (i = 0; i < n; i++) {
			w = order[i]
			line(w, "cpu", 0, cpu[w, "alone"], cpu[w, "run (summary, symbols)"], cpu[w, "heaptrack"])
			line(w, "wall", 0, wall[w, "alone"], wall[w, "run (summary, symbols)"], wall[w, "heaptrack"])
		}
	}' "$DIR/results"
