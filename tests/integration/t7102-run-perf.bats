#!/usr/bin/env bats
# heapscope run --perf: perf record and perf script run for the user with
# the commands of docs/perf.md, into a file `report` reads.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	SPINNER="$HS_BUILD/tests/targets/spinner"
	[ -x "$SPINNER" ] || skip "test target $SPINNER not built"
	cd "$BATS_TEST_TMPDIR"
}

@test "run --perf: a clear error without perf" {
	run --separate-stderr env PATH=/nonexistent "$HS_BIN" run --perf -o p.txt -- \
		"$SPINNER" rounds 10
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"--perf needs perf, which is not on the PATH"* ]]
	[ ! -e p.txt ]
}

@test "run --perf: options that are the collector's are refused" {
	hs run --perf --wall -- "$SPINNER" rounds 10
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--perf records with perf alone"* ]]
}

@test "run --perf: perf's samples, read by report" {
	command -v perf >/dev/null 2>&1 || skip "perf is not installed"
	perf record -q -o probe.data -- true >/dev/null 2>&1 ||
		skip "perf_event_open refused here"
	hs run --perf -o p.txt -- "$SPINNER" rounds 300
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"perf script output written to p.txt"* ]]
	[ ! -e p.txt.perf.data ]
	"$HS_BIN" report --format csv p.txt > p.csv
	grep -q '^spinner!hot_work,' p.csv
	# an existing output is never overwritten
	hs run --perf -o p.txt -- "$SPINNER" rounds 10
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"exists; not overwriting it"* ]]
}
