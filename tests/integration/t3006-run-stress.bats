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
