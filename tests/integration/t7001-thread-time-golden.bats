#!/usr/bin/env bats
# The thread-time source of perf script text on the hand-written
# tests/data/perf/threadtime.data.txt, and choosing a file's source with
# --source / --list-sources. The expected samples, worked out by hand (ms):
#
#   time  weight  thread  what
#   0     1.0     main    CPU_TIME (to the next sample on CPU 0)
#   0.5   1.5     worker  CPU_TIME (CPU 1)
#   1     0.5     main    CPU_TIME (ended by its switch-out at 1.5)
#   1.5   2.5     main    BLOCKED_TIME in read() until other's wakeup at 4,
#                         READIED BY TID(200) other (200) -> produce, write,
#                         try_to_wake_up (READIED_BY)
#   2     0.5     worker  CPU_TIME (ended by its preemption at 2.5)
#   2.5   2.5     worker  READIED_TIME, preempted until switched in at 5
#   4     2.0     main    READIED_TIME, woken at 4, running again at 6
#   5     3.0     other   BLOCKED_TIME in poll() to the end of the trace (8)
#   6     2.0     main    CPU_TIME (CPU 0, to 8)
#   6.5   0.5     worker  CPU_TIME (ended by its exit at 7)
#
# 16 ms in all; the CPU view has 5 samples and 14 ms. The same trace
# recorded with sched_waking instead of sched_wakeup
# (threadtime-waking.data.txt) and with both (threadtime-both.data.txt)
# gives the same samples. HS_UPDATE_GOLDEN=1 rewrites the goldens.

bats_require_minimum_version 1.5.0
load helpers

P="$DATA/perf"
G="$DATA/perf/golden"

@test "thread time: the call tree of the hand-written trace" {
	hs report "$P/threadtime.data.txt" --source thread-time --view calltree
	[ "$status" -eq 0 ]
	golden "$G/threadtime.calltree.txt"
}

@test "thread time: every sample's time, weight and stack" {
	hs convert "$P/threadtime.data.txt" --source thread-time -o - --to xml
	[ "$status" -eq 0 ]
	golden "$G/threadtime.perfView.xml"
}

@test "thread time: sched_waking, sched_wakeup or both give the same samples" {
	for f in threadtime-waking threadtime-both; do
		hs convert "$P/$f.data.txt" --source thread-time -o - --to xml
		[ "$status" -eq 0 ]
		# the same frames too: the sched_wakeup after a sched_waking keeps none
		golden "$G/threadtime.perfView.xml"
		hs report "$P/$f.data.txt" --source thread-time --view calltree
		[ "$status" -eq 0 ]
		golden "$G/threadtime.calltree.txt"
		# neither is a CPU sample
		hs report "$P/$f.data.txt"
		[ "$status" -eq 0 ]
		[[ "${lines[0]}" == "Totals Metric: 14 ms  Count: 5  Samples: 5 "* ]]
	done
}

@test "thread time: ByName totals per pseudo-frame" {
	hs report "$P/threadtime.data.txt" --source thread-time --format csv
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\nCPU_TIME,37.5,6,6,37.5,6,6,'* ]]
	[[ "$output" == *$'\nBLOCKED_TIME,34.375,5.5,2,34.375,5.5,2,'* ]]
	[[ "$output" == *$'\nREADIED_TIME (waiting for cpu),28.125,4.5,2,28.125,4.5,2,'* ]]
}

@test "the CPU view stays the default" {
	hs report "$P/threadtime.data.txt"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Totals Metric: 14 ms  Count: 5  Samples: 5 "* ]]
	hs report "$P/threadtime.data.txt" --source cpu
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Totals Metric: 14 ms  Count: 5  Samples: 5 "* ]]
}

@test "thread time from standard input" {
	run --separate-stderr sh -c "\"$HS_BIN\" report - --source thread-time --view calltree \
		< \"$P/threadtime.data.txt\""
	[ "$status" -eq 0 ]
	golden "$G/threadtime.calltree.txt"
}

@test "--list-sources names the sources of a file's format" {
	hs report "$P/threadtime.data.txt" --list-sources
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == "cpu "* ]]
	[[ "${lines[1]}" == "thread-time "* ]]
	hs report "$DATA/perfview/guide-simple.perfView.xml" --list-sources
	[ "$status" -eq 0 ]
	[ "$output" = "(xml input has one source: no --source choice)" ]
	hs report --list-sources
	[ "$status" -eq 2 ]
	hs report "$BATS_TEST_TMPDIR/missing.data.txt" --list-sources
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing.data.txt: cannot open: No such file or directory"* ]]
}

@test "--source names a source the file does not have: usage error, the names it has" {
	hs report "$P/threadtime.data.txt" --source wall
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"threadtime.data.txt: perf-script input has no source 'wall' (it has: cpu, thread-time)"* ]]
	hs convert "$DATA/perfview/guide-simple.perfView.xml" --source cpu -o - --to folded
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"xml input has one source; --source is for perf script files"* ]]
	# standard input is read once: the importer tells it
	run --separate-stderr sh -c "\"$HS_BIN\" report - --source wall < \"$P/threadtime.data.txt\""
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"<stdin>: perf-script input has no source 'wall' (it has: cpu, thread-time)"* ]]
}

@test "diff and overweight take --source" {
	hs diff "$P/threadtime.data.txt" "$P/threadtime.data.txt" --source thread-time
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Totals Metric: 0 ms  Count: 0  Samples: 20 "* ]]
	hs overweight "$P/threadtime.data.txt" "$P/threadtime.data.txt" --source thread-time
	[ "$status" -eq 0 ]
}

@test "malformed sched_switch: FILE:LINE of its header, exit 1; the CPU view ignores it" {
	printf 'a 1/2 [000] 1.0: cpu-clock:\n\t1 f (/m)\n\n%s\n\t1 f (/m)\n\n' \
		'a 1/2 [000] 1.5: sched:sched_switch: prev_comm=a prev_pid=2 prev_state=S ==> next_comm=b' \
		> "$BATS_TEST_TMPDIR/bad.data.txt"
	hs report "$BATS_TEST_TMPDIR/bad.data.txt" --source thread-time
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.data.txt:4: sched_switch event without 'next_pid=N'"* ]]
	hs report "$BATS_TEST_TMPDIR/bad.data.txt"
	[ "$status" -eq 0 ]
}

@test "malformed sched_wakeup or sched_waking: FILE:LINE of its header, exit 1" {
	printf 'w 9/9 [001] 2.0: sched:sched_wakeup: comm=a pid=x2 prio=120\n' \
		> "$BATS_TEST_TMPDIR/bad.data.txt"
	hs report "$BATS_TEST_TMPDIR/bad.data.txt" --source thread-time
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.data.txt:1: bad 'pid=x2' (expected a whole number)"* ]]
	printf 'w 9/9 [001] 2.0: sched:sched_waking: comm=a prio=120\n' \
		> "$BATS_TEST_TMPDIR/bad.data.txt"
	hs report "$BATS_TEST_TMPDIR/bad.data.txt" --source thread-time
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.data.txt:1: sched_waking event without 'pid=N'"* ]]
}

@test "help for report and convert mentions --source" {
	hs help report
	[[ "$output" == *"--source NAME"* ]]
	[[ "$output" == *"--list-sources"* ]]
	hs help convert
	[[ "$output" == *"--source NAME"* ]]
}

@test "a heapscope trace's sources are its memory views" {
	cd "$BATS_TEST_TMPDIR"
	"$HS_BIN" run -o s.heapscope -- "$HS_BUILD/tests/targets/sites" > /dev/null 2>&1
	hs report s.heapscope --list-sources
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | awk '{ print $1 }' | tr '\n' ' ')" = \
		"alloc net leaks peak temporary mmap " ]
	# convert reads a memory view by the same names
	hs convert s.heapscope --source net -o net.folded
	[ "$status" -eq 0 ]
	hs convert s.heapscope --source alloc -o alloc.folded
	[ "$status" -eq 0 ]
	! cmp -s net.folded alloc.folded || false
	hs convert s.heapscope --source thread-time -o x.folded
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"heapscope input has no source 'thread-time' (it has: alloc, net, leaks, peak, temporary, mmap)"* ]]
	# report: a perf script source on a trace is a usage error
	hs report s.heapscope --source thread-time
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown source 'thread-time'"* ]]
	# and a memory view on perf script text is one the file does not have
	hs report "$P/threadtime.data.txt" --source leaks
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"has no source 'leaks' (it has: cpu, thread-time)"* ]]
}
