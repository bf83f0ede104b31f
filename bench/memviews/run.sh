#!/bin/sh
# run.sh - reading a heap trace and building its net view, against
# heaptrack_print reading heaptrack's trace of the same workload; and the
# numbers of both tools on the same run of real programs.
#
#   bench/memviews/run.sh [BUILD [ITERATIONS [RUNS]]]   (build, 20000000, 3)
#
# 1. bench/tracer/malloc_loop 1 ITERATIONS (2 events per iteration: 40M
#    with the default) is traced by `heapscope run` and by heaptrack; then
#    build/bench/memview_bench reads the heapscope trace and builds the
#    net view (hs_memview_build_path: the events streamed from the file
#    through a reading thread), and heaptrack_print reads heaptrack's
#    trace (its default report). Best of RUNS, wall and CPU seconds
#    (/usr/bin/time). The same with 2 threads (5M iterations each).
# 2. Allocations, leaked bytes and the peak of heap in use of a real
#    program, from `heapscope stats` and from heaptrack_print, on one run
#    traced by both at once (heaptrack preloaded under heapscope's
#    collector would count heapscope's own allocations, so each tool
#    traces its own run of a deterministic program instead).
set -eu
BUILD=${1:-build}
ITER=${2:-20000000}
RUNS=${3:-3}
HS="$BUILD/heapscope"
LOOP="$BUILD/bench/malloc_loop"
BENCH="$BUILD/bench/memview_bench"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-memviews-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

for tool in heaptrack heaptrack_print /usr/bin/time python3 sqlite3; do
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

# --- agreement with heaptrack on real programs ---------------------------------

cat > "$DIR/dicts.py" <<'EOF'
d = {}
for i in range(200000):
    d['key%d' % i] = {'n': i, 's': str(i), 'l': [i, i + 1]}
keep = [d[k] for k in list(d)[:1000]]
t = sorted(d, key=lambda k: d[k]['n'] % 1000)
print(len(t))
EOF
cat > "$DIR/table.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
INSERT INTO t SELECT x, x % 1000, hex(x) FROM c;
CREATE INDEX t_a ON t(a);
SELECT count(*), sum(a) FROM t WHERE a < 500;
EOF
export PYTHONMALLOC=malloc

echo
echo "the same program traced by each tool (its own run; deterministic programs):"
echo
printf '| program | tool | allocations | leaked bytes | peak heap bytes | temporary |\n'
printf '|---|---|---|---|---|---|\n'
for prog in "python3 $DIR/dicts.py" "sqlite3 :memory: -init $DIR/table.sql .quit"; do
	rm -f "$DIR"/p.heapscope "$DIR"/hp.*
	# shellcheck disable=SC2086
	"$HS" run -q --no-view -o "$DIR/p.heapscope" -- $prog > /dev/null
	# shellcheck disable=SC2086
	heaptrack -o "$DIR/hp" $prog > /dev/null 2>&1
	"$HS" stats --format json "$DIR/p.heapscope" > "$DIR/s.json"
	heaptrack_print -f "$DIR"/hp.* --print-peaks 0 --print-allocators 0 \
		--print-temporary 0 --print-leaks 0 > "$DIR/h.txt" 2>&1 || true
	python3 - "$prog" "$DIR/s.json" "$DIR/h.txt" <<'EOF'
import json, re, sys
prog, sj, ht = sys.argv[1].split()[0], json.load(open(sys.argv[2])), open(sys.argv[3]).read()
def size(s):
    m = re.match(r"([0-9.]+)([KMGT]?)B?", s)
    return float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[m.group(2)]
calls = int(re.search(r"calls to allocation functions: (\d+)", ht).group(1))
temp = int(re.search(r"temporary memory allocations: (\d+)", ht).group(1))
peak = size(re.search(r"peak heap memory consumption: (\S+)", ht).group(1))
leak = size(re.search(r"total memory leaked: (\S+)", ht).group(1))
sup = re.search(r"suppressed leaks: (\S+)", ht)
leak_all = leak + (size(sup.group(1)) if sup else 0)
print("| %s | heaptrack | %d | %.0f (%.0f with suppressed) | %.0f | %d |" % (prog, calls, leak, leak_all, peak, temp))
print("| %s | heapscope | %d | %d (%d with suppressed) | %d | %d |" % (
    prog, sj["total_allocations"], sj["leaked_bytes"],
    sj["leaked_bytes"] + sj["suppressed_leaked_bytes"], sj["peak_heap_bytes"],
    sj["temporary_allocations"]))
EOF
done
echo
echo "heaptrack_print rounds its sizes (K = 1000 bytes); see docs/memory.md"
echo "for where the definitions differ."
