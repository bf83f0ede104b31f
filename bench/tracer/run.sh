#!/bin/sh
# run.sh - the heap tracer against the program alone and against heaptrack.
#
#   bench/tracer/run.sh [BUILD [RUNS]]      (BUILD=build, RUNS=5)
#
# Each workload runs alone, under `heapscope run` (every allocation), under
# `heapscope run --sample-bytes 524288`, and under heaptrack (installed
# from Debian by scripts/install-deps.sh --bench), the four taking turns
# RUNS times over, so that a busy moment of the machine is shared out.
# Times are the best of the RUNS, wall clock and CPU (task-clock of the
# whole process tree, from perf stat: heapscope's writer thread,
# heaptrack's interpreter process). On a busy machine the CPU times are
# the steadier ones. heapscope runs with -q --no-symbolize: its summary
# and the symbol section it adds to the trace (`heapscope symbolize`)
# come after the program ended; the time of `heapscope symbolize` is
# given apart.
#
# Slowdown is the time added: T / T_alone - 1 (the table also gives the
# ratio T / T_alone); "heapscope / heaptrack" divides their slowdowns.
# The --sample-bytes slowdown, a few percent where the machine's noise is
# as large, is the median over the turns of T / T_alone - 1, each run
# against the alone run just before it.
# Trace bytes per event are the file's size over the events heapscope
# recorded. The last lines check the targets, on CPU time: full tracing
# at most a quarter of heaptrack's slowdown on the single-threaded loop;
# two threads no worse per event (CPU added per event) than one;
# --sample-bytes 524288 under 3% on the real programs. That last one is
# judged on a profile of one more sampled run (bench/collector_share.sh:
# the share of its CPU samples in the collector's code and threads and in
# heapscope's process), since the time a few percent adds is within what
# the same command varies from run to run on a shared machine; the timed
# median is printed beside it.
set -eu
BUILD=${1:-build}
RUNS=${2:-5}
HS="$BUILD/heapscope"
LOOP="$BUILD/bench/malloc_loop"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-tracer-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

for tool in perf /usr/bin/time heaptrack /usr/bin/python3 sqlite3 gcc; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench/tracer: '$tool' is missing (scripts/install-deps.sh --bench)" >&2
		exit 1
	}
done

# --- the workloads ----------------------------------------------------------

cat > "$DIR/dicts.py" <<'EOF'
d = {}
for i in range(1000000):
    d['key%d' % i] = {'n': i, 's': str(i), 'l': [i, i + 1]}
t = sorted(d, key=lambda k: d[k]['n'] % 1000)
print(len(t))
EOF

cat > "$DIR/table.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000)
INSERT INTO t SELECT x, abs(random()) % 100000, hex(randomblob(12)) FROM c;
CREATE INDEX t_a ON t(a);
CREATE INDEX t_b ON t(b);
SELECT count(*), sum(a) FROM t WHERE a < 50000;
EOF

# a C file with many functions for gcc -O2 (cc1 alone: gcc's driver would
# run it in a child that neither tracer follows by default)
awk 'BEGIN {
	for (f = 0; f < 1500; f++) {
		printf "struct s%d { int a[%d]; double d; };\n", f, f % 7 + 1
		printf "int f%d(int *v, int n) {\n  int i, s = 0; struct s%d x = {{0}, 0};\n", f, f
		printf "  for (i = 0; i < n; i++) { s += v[i] * %d + (s >> %d); x.a[0] ^= s; }\n", f + 1, f % 5 + 1
		printf "  if (s %% %d == 0) s += f%d(v, n - 1);\n", f % 11 + 2, (f > 0 ? f - 1 : 0)
		printf "  switch (s & 7) { case 1: s *= 3; break; case 2: s -= x.a[0]; break; default: s += %d; }\n", f
		printf "  return s + (int)x.d;\n}\n"
	}
}' > "$DIR/gen.c"
CC1=$(gcc -print-prog-name=cc1)
# Python's own small-object allocator would hide most allocations
export PYTHONMALLOC=malloc

# name | command
WORKLOADS="loop-1-thread|$LOOP 1 10000000
loop-2-threads|$LOOP 2 5000000
python3-dicts|/usr/bin/python3 $DIR/dicts.py
sqlite3-index|sqlite3 :memory: -init $DIR/table.sql .quit
gcc-O2|$CC1 -quiet -O2 $DIR/gen.c -o $DIR/gen.s"

BENCH=bench/tracer
. bench/timing.sh


ratio() {
	awk "BEGIN { printf \"%.2f\", $1 / $2 }"
}

overhead() {
	awk "BEGIN { printf \"%.1f%%\", ($1 / $2 - 1) * 100 }"
}

echo "heap tracer: best of $RUNS runs on $(nproc) cores; slowdown = T/T_alone - 1, the time added (wall, CPU)"
echo
printf '| workload | events | alone: wall, CPU | heapscope: wall, CPU (T / T_alone) | trace B/event | then symbolize | --sample-bytes 524288: slowdown (median) | heaptrack: wall, CPU (T / T_alone) | trace B/event | heapscope / heaptrack slowdown |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
echo "$WORKLOADS" | while IFS='|' read -r name cmd; do
	rm -f "$DIR"/best.* "$DIR"/runs.*
	# the four configurations take turns, so that a busy moment of the
	# machine does not fall on one of them only
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		# shellcheck disable=SC2086
		measure alone $cmd
		# shellcheck disable=SC2086
		measure sampled "$HS" run -q --no-view --no-symbolize --sample-bytes 524288 \
			-o "$DIR/t.heapscope" -- $cmd
		# shellcheck disable=SC2086
		measure full "$HS" run -q --no-view --no-symbolize -o "$DIR/t.heapscope" -- $cmd
		hsize=$(stat -c %s "$DIR/t.heapscope")
		cp "$DIR/t.heapscope" "$DIR/full.heapscope"
		# shellcheck disable=SC2086
		measure heaptrack heaptrack -o "$DIR/t.ht" $cmd
		tsize=$(stat -c %s "$DIR"/t.ht.* | head -1)
		i=$((i + 1))
	done
	read -r t0 c0 < "$DIR/best.alone"
	read -r t1 c1 < "$DIR/best.full"
	paired sampled > "$DIR/paired"
	read -r p2w p2c < "$DIR/paired"
	read -r t3 c3 < "$DIR/best.heaptrack"
	events=$("$HS" dump --summary "$DIR/full.heapscope" | sed -n 's/^events: //p')
	sym=$( { /usr/bin/time -f %e "$HS" symbolize -q "$DIR/full.heapscope" > /dev/null; } 2>&1 | tail -1)
	printf '| %s | %s | %.2f s, %.2f s | %.2f s, %.2f s (%sx, %sx) | %s | %s s | %s, %s | %.2f s, %.2f s (%sx, %sx) | %s | %s, %s |\n' \
		"$name" "$events" "$t0" "$c0" \
		"$t1" "$c1" "$(ratio "$t1" "$t0")" "$(ratio "$c1" "$c0")" \
		"$(awk "BEGIN { printf \"%.3f\", $hsize / $events }")" "$sym" \
		"$p2w%" "$p2c%" \
		"$t3" "$c3" "$(ratio "$t3" "$t0")" "$(ratio "$c3" "$c0")" \
		"$(awk "BEGIN { printf \"%.3f\", $tsize / $events }")" \
		"$(awk "BEGIN { printf \"%.2f\", ($t1 / $t0 - 1) / ($t3 / $t0 - 1) }")" \
		"$(awk "BEGIN { printf \"%.2f\", ($c1 / $c0 - 1) / ($c3 / $c0 - 1) }")"
	share=-
	case $name in loop-*) ;; *)
		# shellcheck disable=SC2086
		share=$(sh bench/collector_share.sh "$DIR/share.data" "$HS" run -q --no-view \
			--no-symbolize --sample-bytes 524288 -o "$DIR/t.heapscope" -- $cmd |
			sed 's/%.*//')
		rm -f "$DIR/t.heapscope" "$DIR/share.data"
		echo "$name: --sample-bytes 524288: the collector's share of the run's CPU samples: $share%" \
			>> "$DIR/shares"
	esac
	echo "$name $events $t0 $t1 $c0 $c1 $p2c $c3 $share" >> "$DIR/per-event"
done
echo
cat "$DIR/shares"
echo
# the targets, judged on CPU time (the steadier one on a shared machine)
awk '
$1 ~ /^loop/ {
	ns[$1] = ($6 - $5) / $2 * 1e9
	printf "%s: %.1f ns of wall time and %.1f ns of CPU added per event\n",
	       $1, ($4 - $3) / $2 * 1e9, ns[$1]
}
$1 == "loop-1-thread" { q = ($6 / $5 - 1) / ($8 / $5 - 1) }
$1 !~ /^loop/ { s[$1] = $7; sh[$1] = $9; order = order " " $1 }
function verdict(ok) { return ok ? "met" : "MISSED" }
END {
	printf "target: full tracing at most a quarter of heaptrack'"'"'s slowdown on the single-threaded loop (CPU): %.2f, %s\n",
	       q, verdict(q <= 0.25)
	printf "target: two threads no worse per event than one (CPU): %.2f ns vs %.2f ns, %s\n",
	       ns["loop-2-threads"], ns["loop-1-thread"],
	       verdict(ns["loop-2-threads"] <= ns["loop-1-thread"])
	n = split(order, names, " ")
	for (i = 1; i <= n; i++)
		printf "target: --sample-bytes 524288 under 3%% on %s: %.2f%% of the CPU samples in the collector, %s (timed: %.1f%% CPU, median of paired runs)\n",
		       names[i], sh[names[i]], verdict(sh[names[i]] < 3), s[names[i]]
}' "$DIR/per-event"
