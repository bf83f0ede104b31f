#!/usr/bin/env bats
# report a b c: several traces as one source, each under its process
# frame (PerfView's multi-file view), from a --follow-fork --follow-exec
# run that writes one trace per process.
load trace-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q --no-view --follow-fork --follow-exec -o sh.heapscope -- \
		sh -c "'$TARGETS/memtest' > /dev/null; '$TARGETS/memtest' > /dev/null" 2> run.err
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

# total ARGS...: "Metric Count" of the report's summary, of the files alone.
total() {
	"$HS_BIN" report "$@" --no-exec-chain --format json |
		python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print("%.17g %.17g" % (s["metric"], s["count"]))'
}

@test "the run wrote one trace per process" {
	ls memtest.*.heapscope
	[ "$(ls memtest.*.heapscope | wc -l)" -eq 2 ]
}

@test "the merged totals are the sum of each trace's, for each view" {
	local src sum
	for src in alloc leaks peak; do
		sum=$(for f in sh.heapscope memtest.*.heapscope; do total "$f" --source "$src"; done |
			awk '{ m += $1; c += $2 } END { printf "%.17g %.17g\n", m, c }')
		echo "$src: $sum vs $(total sh.heapscope memtest.*.heapscope --source "$src")"
		[ "$(total sh.heapscope memtest.*.heapscope --source "$src")" = "$sum" ]
	done
}

@test "each trace is under its process frame: which process used the most" {
	"$HS_BIN" report sh.heapscope memtest.*.heapscope --view calltree --depth 1 \
		--format csv > tree.csv
	cat tree.csv
	[ "$(grep -c '^1,Process memtest (' tree.csv)" -eq 2 ]
	[ "$(grep -c '^1,Process sh (' tree.csv)" -eq 1 ]
	# and where: the memtest functions, from both processes, in ByName
	"$HS_BIN" report sh.heapscope memtest.*.heapscope --format csv > byname.csv
	[ "$(col memtest!site_large 3 byname.csv)" = 400000 ]
}

@test "files without process frames go under a Trace frame" {
	printf 'main;f 3\n' > a.folded
	printf 'main;g 4\n' > b.folded
	"$HS_BIN" report a.folded b.folded --view calltree --format csv > t.csv
	cat t.csv
	grep -q '^1,Trace a.folded,' t.csv
	grep -q '^1,Trace b.folded,' t.csv
	[ "$(total a.folded b.folded)" = "7 7" ]
}

@test "files in different units are refused, naming both" {
	run --separate-stderr "$HS_BIN" report sh.heapscope "$DATA/perf/hotloop.data.txt"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"hotloop.data.txt is in ms, the first file in bytes"* ]]
	# diff still takes exactly two
	run --separate-stderr "$HS_BIN" diff a.folded b.folded a.folded
	[ "$status" -eq 2 ]
}
