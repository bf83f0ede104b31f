#!/usr/bin/env bats
# End to end with the real perf: record tests/targets/hotloop (whose
# hot_function runs the same loop three times as often as cold_function)
# with `perf record -g -F 999`, print it with `perf script`, report it with
# heapscope and check hot_function's share of hot+cold samples: 75%
# expected, accepted within 0.65..0.85 (about four standard deviations for
# ~450 samples). The share is of sample counts (Inc Ct), not of the time
# weights: a sample's weight runs to the next sample on its CPU, which a
# busy machine stretches at random when it preempts the target.
# Skipped only where perf is missing or perf_event_open is refused.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	HOTLOOP="$HS_BUILD/tests/targets/hotloop"
	[ -x "$HOTLOOP" ] || skip "test target $HOTLOOP not built"
	command -v perf >/dev/null 2>&1 || skip "perf is not installed"
	if ! perf record -q -o "$BATS_TEST_TMPDIR/probe.data" -- true >/dev/null 2>&1; then
		skip "perf_event_open refused (kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?'))"
	fi
	cd "$BATS_TEST_TMPDIR"
}

# share CSV: hot_function's Inc Ct / (hot_function's + cold_function's)
share() {
	awk -F, '$1 == "hotloop!hot_function" { h = $7 }
		 $1 == "hotloop!cold_function" { c = $7 }
		 END { if (h + c > 0) printf "%.3f\n", h / (h + c); else print "none" }' "$1"
}

# in_range SHARE: 0.65 <= SHARE <= 0.85
in_range() {
	awk -v s="$1" 'BEGIN { exit !(s != "none" && s >= 0.65 && s <= 0.85) }'
}

@test "perf record -g -F 999 + perf script: hot_function gets 75% (0.65..0.85)" {
	perf record -q -g -F 999 -o hl.data -- "$HOTLOOP" 100 >/dev/null 2>&1
	perf script -i hl.data > hl.data.txt 2>/dev/null
	hs report hl.data.txt --format csv
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > byname.csv
	s=$(share byname.csv)
	echo "hot_function share: $s"
	in_range "$s"
	# the stacks are whole: Process -> Thread -> ... -> main -> hot_function
	hs report hl.data.txt --view callers --focus 'hotloop!hot_function' --format csv
	[ "$status" -eq 0 ]
	[[ "$output" == *"hotloop!main"* ]]
	[[ "$output" == *"Process hotloop ("* ]]
}

@test "perf record --sample-cpu + perf script -F ...,cpu,period,...: same share" {
	perf record -q -g -F 999 --sample-cpu -o hl.data -- "$HOTLOOP" 100 >/dev/null 2>&1
	perf script -i hl.data -F comm,pid,tid,cpu,time,period,event,ip,sym,dso \
		> hl.data.txt 2>/dev/null
	grep -q '\[[0-9]*\]' hl.data.txt
	hs report hl.data.txt --format csv
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > byname.csv
	s=$(share byname.csv)
	echo "hot_function share: $s"
	in_range "$s"
}

@test "perf script -F comm,pid,tid,time,event,ip,sym,dso: same share" {
	perf record -q -g -F 999 -o hl.data -- "$HOTLOOP" 100 >/dev/null 2>&1
	perf script -i hl.data -F comm,pid,tid,time,event,ip,sym,dso > hl.data.txt 2>/dev/null
	hs report hl.data.txt --format csv
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > byname.csv
	s=$(share byname.csv)
	echo "hot_function share: $s"
	in_range "$s"
}

@test "perf script -F +srcline: source lines under frames change nothing" {
	perf record -q -g -F 999 -o hl.data -- "$HOTLOOP" 20 >/dev/null 2>&1
	perf script -i hl.data > plain.data.txt 2>/dev/null
	perf script -i hl.data -F +srcline > srcline.data.txt 2>/dev/null
	hs report plain.data.txt --view calltree
	[ "$status" -eq 0 ]
	want="$output"
	hs report srcline.data.txt --view calltree
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
}
