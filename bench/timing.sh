# timing.sh - what the timing benches share (sourced by bench/tracer/run.sh
# and bench/cpu/run.sh). The caller sets DIR (its scratch directory) and
# BENCH (its name, for messages); a command measured writes its files as
# $DIR/t.*, which are removed before each run (heapscope never overwrites).

# measure CONFIG CMD...: one run under perf stat; appends its wall and CPU
# seconds (task-clock of the whole process tree) to $DIR/runs.CONFIG and
# keeps the best of each in $DIR/best.CONFIG
measure() {
	config=$1
	shift
	rm -f "$DIR"/t.*
	perf stat -e task-clock -o "$DIR/stat" "$@" > /dev/null 2> "$DIR/err" ||
		{ echo "$BENCH: failed: $*" >&2; cat "$DIR/err" >&2; exit 1; }
	c=$(awk '/msec task-clock/ { gsub(",", "", $1); print $1 / 1000 }' "$DIR/stat")
	w=$(awk '/seconds time elapsed/ { print $1 }' "$DIR/stat")
	echo "$w $c" >> "$DIR/runs.$config"
	if [ -f "$DIR/best.$config" ]; then
		read -r bw bc < "$DIR/best.$config"
		w=$(awk "BEGIN { print ($w < $bw) ? $w : $bw }")
		c=$(awk "BEGIN { print ($c < $bc) ? $c : $bc }")
	fi
	echo "$w $c" > "$DIR/best.$config"
}

# paired CONFIG [BASE]: "WALL CPU", the median over the turns of
# T_CONFIG / T_BASE - 1 in percent, each run against the BASE run (default:
# alone) of its own turn: steadier than the best times on a machine whose
# speed drifts
paired() {
	paste -d ' ' "$DIR/runs.${2:-alone}" "$DIR/runs.$1" | awk '
	{ w[NR] = ($3 / $1 - 1) * 100; c[NR] = ($4 / $2 - 1) * 100 }
	function median(a, n,    i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END { printf "%.1f %.1f\n", median(w, NR), median(c, NR) }'
}
