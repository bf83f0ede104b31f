#!/usr/bin/env bats
# perf script text and perfcollect .trace.zip files, reported and converted.
# The inputs in tests/data/perf: hotloop/workload*.data.txt were recorded
# with `perf record -g` on Linux 6.x (perf 6.1) and printed with
# `perf script` (default fields, -F comm,pid,tid,time,event,ip,sym,dso and
# -F comm,pid,tid,cpu,time,period,event,ip,sym,dso); tricky.data.txt and
# jit.trace.zip are hand-written. HS_UPDATE_GOLDEN=1 rewrites the goldens.

bats_require_minimum_version 1.5.0
load helpers

P="$DATA/perf"
G="$DATA/perf/golden"

@test "perf script default output: ByName of a recorded run" {
	hs report "$P/hotloop.data.txt"
	[ "$status" -eq 0 ]
	golden "$G/hotloop.byname.txt"
}

@test "perf script with sched tracepoints: call tree of CPU samples only" {
	hs report "$P/workload.data.txt" --view calltree
	[ "$status" -eq 0 ]
	golden "$G/workload.calltree.txt"
}

@test "perf script -F comm,pid,tid,time,event,ip,sym,dso reads as the default output" {
	hs report "$P/workload.data.txt" --view calltree
	[ "$status" -eq 0 ]
	want="$output"
	hs report "$P/workload-fields.data.txt" --view calltree
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
}

@test "perf script -F ...,cpu,time,period,...: weights per CPU" {
	hs report "$P/workload-cpu.data.txt" --view calltree
	[ "$status" -eq 0 ]
	golden "$G/workload-cpu.calltree.txt"
}

@test "hand-written edge cases: names, modules, offsets, JIT maps, tiers" {
	hs report "$P/tricky.data.txt" --view calltree
	[ "$status" -eq 0 ]
	golden "$G/tricky.calltree.txt"
}

@test "hand-written edge cases: every sample's time and weight" {
	hs convert "$P/tricky.data.txt" -o - --to xml
	[ "$status" -eq 0 ]
	golden "$G/tricky.perfView.xml"
}

@test ".trace.zip: perf-<pid>.map and perfinfo-<pid>.map name unknown frames" {
	hs report "$P/jit.trace.zip" --view calltree
	[ "$status" -eq 0 ]
	golden "$G/jit.calltree.txt"
}

@test "perf script read from standard input" {
	run --separate-stderr sh -c "\"$HS_BIN\" report - --view calltree < \"$P/workload.data.txt\""
	[ "$status" -eq 0 ]
	golden "$G/workload.calltree.txt"
}

@test "malformed header: FILE:LINE and what is wrong, exit 1" {
	printf 'a 1 1.0: cpu-clock:\n\t1 f (/m)\n\nb 12/12 x.5: cpu-clock:\n' \
		> "$BATS_TEST_TMPDIR/bad.data.txt"
	hs report "$BATS_TEST_TMPDIR/bad.data.txt"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.data.txt:4: bad time 'x.5:'"* ]]
}

@test "frame line without a module: FILE:LINE, exit 1" {
	printf 'a 1 1.0: cpu-clock:\n\t1 f (/m)\n\t2 main\n' > "$BATS_TEST_TMPDIR/nomod.data.txt"
	hs report "$BATS_TEST_TMPDIR/nomod.data.txt"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"nomod.data.txt:3: frame line has no '(MODULE)'"* ]]
}

@test "a file cut off inside a frame line is an error, not a shorter profile" {
	head -c 1040 "$P/hotloop.data.txt" > "$BATS_TEST_TMPDIR/cut.data.txt"
	hs report "$BATS_TEST_TMPDIR/cut.data.txt"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cut.data.txt:22: frame line has no '(MODULE)' after 'hot_fu' (the file ends here: cut off?)"* ]]
}

@test "a binary perf.data file is refused with a hint" {
	printf 'PERFILE2\150\0\0\0\0\0\0\0\n' > "$BATS_TEST_TMPDIR/perf.data.txt"
	hs report "$BATS_TEST_TMPDIR/perf.data.txt"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"binary perf.data file"*"perf script"* ]]
}

@test ".trace.zip without a .data.txt entry" {
	(cd "$BATS_TEST_TMPDIR" && echo x > perf-1.map && zip -q none.trace.zip perf-1.map)
	hs report "$BATS_TEST_TMPDIR/none.trace.zip"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"none.trace.zip"*".data.txt"* ]]
}
