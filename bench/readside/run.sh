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
# The program alone, `run -q --no-symbolize`, the default run and
# heaptrack take turns TURNS times (environment, default 3; the big pair
# once) and the best wall and CPU time of each is shown with the highest
# peak RSS; the readers run once. On a shared machine compare CPU times.
set -eu
BUILD=${1:-build}
ITER=${2:-5000000}
BIG=${3:-50000000}
CORES=$(nproc 2>/dev/null || echo 2)
[ "$CORES" -ge 2 ] || CORES=2
MAXT=${4:-$CORES}
TURNS=${TURNS:-3}
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

# timed WORKLOAD LABEL CMD...: one run, "WORKLOAD|LABEL|wall|cpu|rss MB"
# appended to $DIR/results (0 when it failed: said on stdout)
timed() {
	wl=$1
	label=$2
	shift 2
	if /usr/bin/time -f '%e %U %S %M' -o "$DIR/t" "$@" >/dev/null 2>"$DIR/err"; then
		awk -v w="$wl" -v l="$label" '{ printf "%s|%s|%s|%s|%s\n", w, l, $1, $2 + $3, $4 / 1024 }' \
			"$DIR/t" >> "$DIR/results"
	else
		echo "  $label: failed"
		tail -3 "$DIR/err" | sed 's/^/    /'
	fi
}

# show WORKLOAD LABEL: the best wall and CPU times of its runs, the
# highest peak RSS, and how many runs
show() {
	awk -F'|' -v w="$1" -v l="$2" '
		$1 == w && $2 == l {
			if (!n || $3 < wall) wall = $3
			if (!n || $4 < cpu) cpu = $4
			if ($5 > rss) rss = $5
			n++
		}
		END {
			if (!n)
				exit
			best = n > 1 ? sprintf("  (best of %d)", n) : ""
			printf "  %-34s %7.2f s %7.2f s cpu %8.1f MB%s\n", l, wall, cpu, rss, best
		}' "$DIR/results"
}

# measure WORKLOAD LABEL CMD...: one run, shown
measure() {
	timed "$@"
	show "$1" "$2"
}

# workload NAME full|scaling TURNS CMD...: the program alone, under `run
# -q --no-symbolize`, the default `run` and heaptrack, taking turns TURNS
# times (a busy moment of the shared machine falls on all of them), then
# the readers once on the last traces
workload() {
	name=$1
	what=$2
	turns=$3
	shift 3
	echo "== $name: $*"
	turn=0
	while [ "$turn" -lt "$turns" ]; do
		rm -f "$DIR"/*.hstrace "$DIR"/ht.*
		timed "$name" "alone" "$@"
		timed "$name" "run -q --no-symbolize" "$HS" run -q --no-symbolize -o "$DIR/q.hstrace" "$@"
		timed "$name" "run (summary, symbols)" "$HS" run --no-view -o "$DIR/d.hstrace" "$@"
		[ "$HAVE_HT" = 1 ] && timed "$name" "heaptrack" heaptrack -o "$DIR/ht" "$@"
		turn=$((turn + 1))
	done
	for l in "alone" "run -q --no-symbolize" "run (summary, symbols)"; do
		show "$name" "$l"
	done
	ls -l "$DIR/d.hstrace" | awk '{ printf "  trace %.1f MB\n", $5 / 1048576 }'
	measure "$name" "stats" "$HS" stats "$DIR/d.hstrace"
	if [ "$what" = full ]; then
		for s in alloc net leaks peak temporary mmap; do
			measure "$name" "report --source $s" "$HS" report "$DIR/d.hstrace" --source "$s"
		done
	fi
	if [ "$HAVE_HT" = 1 ]; then
		show "$name" "heaptrack"
		ls -l "$DIR"/ht.* | awk '{ printf "  heaptrack file %.1f MB\n", $5 / 1048576 }'
		measure "$name" "heaptrack_print" heaptrack_print "$DIR"/ht.*
	fi
	rm -f "$DIR"/*.hstrace "$DIR"/ht.*
}

: > "$DIR/results"
workload rand1 full "$TURNS" "$LOOP" 1 "$ITER"
workload rand2 full "$TURNS" "$LOOP" 2 "$ITER"
# the interpreter itself, not a wrapper script (pyenv's shims are shell
# scripts, which neither heapscope run nor heaptrack follow into)
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [ -n "$PY" ]; then
	PYTHONMALLOC=malloc
	export PYTHONMALLOC
	workload python full "$TURNS" "$PY" "$DIR/dicts.py"
	unset PYTHONMALLOC
fi
if command -v sqlite3 >/dev/null 2>&1; then
	workload sqlite3 full "$TURNS" sqlite3 :memory: -init "$DIR/table.sql" .quit
fi
n=1
while [ "$n" -le "$MAXT" ]; do
	workload "threads-$n" scaling "$TURNS" "$LOOP" "$n" $((ITER / 2))
	n=$((n + 1))
done
if [ "$BIG" -gt 0 ]; then
	workload "big/10" full 1 "$LOOP" 1 $((BIG / 10))
	workload big full 1 "$LOOP" 1 "$BIG"
fi

# the targets, per workload: CPU then wall
echo "== default run against heaptrack (slowdown = T / T_alone - 1)"
awk -F'|' '
	{
		if (!(($1, $2) in cpu) || $3 < wall[$1, $2]) wall[$1, $2] = $3
		if (!(($1, $2) in cpu) || $4 < cpu[$1, $2]) cpu[$1, $2] = $4
		if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 }
	}
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
