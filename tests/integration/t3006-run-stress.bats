#!/usr/bin/env bats
# heapscope run: four threads making a million allocations each lose none.
load trace-helpers

setup() {
	trace_setup
}

@test "4 threads x 1M allocations and frees: every event is in the trace" {
	trace_run -o s.heapscope -- "$TARGETS/stress" 4 1000000
	[ "$status" -eq 0 ]
	grep -q "^per thread: allocs=1000000 frees=1000000 bytes=500500000$" out.txt
	grep -qE "^heapscope: 4000[0-9][0-9][0-9] allocations .*, 4000000 frees," err.txt
	"$HS_BIN" dump --summary s.heapscope > sum.txt
	[ "$(grep -c '^thread [0-9]* stress allocs=1000000 frees=1000000 bytes=500500000$' sum.txt)" -eq 4 ]
	grep -q "^lost: 0$" sum.txt
	grep -q "^unmatched frees: 0$" sum.txt
	grep -q "^status: complete$" sum.txt
}

@test "after an idle start, the chunks of events are compact" {
	# 200 ms of sleep first: the first chunks hold little but RSS
	# records, which come out smaller plain; the writer's trial of the
	# compact encoding must not take them for the events after them
	trace_run -o c.heapscope -- "$TARGETS/stress" 1 400000 200
	[ "$status" -eq 0 ]
	"$HS_BIN" dump c.heapscope | grep '^chunk [0-9]* at [0-9]*: events' > chunks.txt
	# the chunks of 64 KiB of records or more: every one compact
	awk '$NF == "bytes" && $(NF - 1) + 0 >= 65536 { big++; if ($0 !~ / compact /) plain++ }
	     END { print big + 0, plain + 0 }' chunks.txt > counts.txt
	read -r big plain < counts.txt
	[ "$big" -ge 3 ]
	[ "$plain" -eq 0 ]
}
