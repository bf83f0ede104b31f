#!/usr/bin/env bats
# perf script text that perf does not print but a file can hold (issue 19):
# samples out of time order on one CPU, a time out of range, a stack past
# the frame cap. tests/data/perf/out-of-order.data.txt is hand-written.

bats_require_minimum_version 1.5.0
load helpers

P="$DATA/perf"

@test "samples out of time order on a CPU are weighed in time order, none negative" {
	hs report "$P/out-of-order.data.txt" --format csv
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/v.csv"
	# CPU 0 at 2.0, 1.0, 3.0: 1.0 and 2.0 weigh 1000 ms each; CPU 1: 500 ms
	[ "$(col 'app!one' 3 "$BATS_TEST_TMPDIR/v.csv")" = 1000 ]
	[ "$(col 'app!two' 3 "$BATS_TEST_TMPDIR/v.csv")" = 1000 ]
	[ "$(col 'app!three' 3 "$BATS_TEST_TMPDIR/v.csv")" = 0 ]
	[ "$(col 'app!on_cpu1' 3 "$BATS_TEST_TMPDIR/v.csv")" = 500 ]
	hs report "$P/out-of-order.data.txt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Totals Metric: 2500 ms  Count: 3  Samples: 3  First: 0.000  Last: 1000.000"* ]]
	[[ "$output" != *" -"[0-9]* ]]
}

@test "the thread-time source refuses samples out of time order, with the line" {
	hs report "$P/out-of-order.data.txt" --source thread-time
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"out-of-order.data.txt:13: sample at 1.000000 s on CPU 0 is earlier than the one before it on that CPU (2.000000 s)"* ]]
}

@test "a time out of range is said to be out of range" {
	printf 'app 1/1 [000] 99999999999.5: cpu-clock:\n\t401000 f (/bin/app)\n' \
		> "$BATS_TEST_TMPDIR/far.data.txt"
	hs report "$BATS_TEST_TMPDIR/far.data.txt"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"far.data.txt:1: bad time '99999999999.5:' (out of range: perf times are seconds, at most 9000000000)"* ]]
	[[ "$stderr" != *"expected SECONDS"* ]]
	printf 'app 1/1 [000] 9000000000.5: cpu-clock:\n\t401000 f (/bin/app)\n' \
		> "$BATS_TEST_TMPDIR/edge.data.txt"
	hs report "$BATS_TEST_TMPDIR/edge.data.txt"
	[ "$status" -eq 0 ]
}

@test "the perf script frame cap is the one docs/formats.md gives" {
	max=$(sed -n 's/^#define MAX_FRAMES \([0-9]*\).*/\1/p' "$HS_SRC/src/io/import_perf_script.h")
	[ -n "$max" ]
	grep -q "at $max frames in perf script text" "$HS_SRC/docs/formats.md"
	grep -q "a stack of more than $max frames" "$HS_SRC/docs/formats.md"
	# $max frames are read, one more is refused at the line after them
	awk -v n="$max" 'BEGIN { print "app 1/1 [000] 1.0: cpu-clock:";
		for (i = 0; i < n; i++) print "\t401000 f (/bin/app)";
		print ""; print "app 1/1 [000] 2.0: cpu-clock:" }' > "$BATS_TEST_TMPDIR/deep.data.txt"
	hs report "$BATS_TEST_TMPDIR/deep.data.txt"
	[ "$status" -eq 0 ]
	awk -v n="$max" 'BEGIN { print "app 1/1 [000] 1.0: cpu-clock:";
		for (i = 0; i <= n; i++) print "\t401000 f (/bin/app)" }' > "$BATS_TEST_TMPDIR/deeper.data.txt"
	hs report "$BATS_TEST_TMPDIR/deeper.data.txt"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"deeper.data.txt:$((max + 2)): more than $max frames in one stack"* ]]
}
