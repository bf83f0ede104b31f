#!/usr/bin/env bats
# heapscope run: several threads, each recorded in its own stream.
load trace-helpers

setup() {
	trace_setup
}

@test "each thread's allocations, frees and stacks are exact" {
	trace_run -o t.heapscope -- "$TARGETS/threads" 2000
	[ "$status" -eq 0 ]
	trace_check out.txt t.heapscope
}

@test "threads are named, counted and kept apart" {
	trace_run -o t.heapscope -- "$TARGETS/threads" 500
	[ "$status" -eq 0 ]
	"$HS_BIN" dump --summary t.heapscope > sum.txt
	for i in 0 1 2 3; do
		grep -qE "^thread [0-9]+ worker-$i allocs=500 frees=500 bytes=$((500 * 16 * (i + 1)))$" sum.txt
	done
	grep -q "^lost: 0$" sum.txt
}
