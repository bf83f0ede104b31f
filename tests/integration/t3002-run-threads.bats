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

@test "threads that come and go in one clock tick and reuse each other's blocks" {
	# (the reader orders their events; a free before the allocation it
	# frees would be unmatched and leave the block live at the end)
	trace_run -o c.heapscope -- "$TARGETS/churn"
	[ "$status" -eq 0 ]
	trace_check out.txt c.heapscope
	[ "$(summary_field c.heapscope 'unmatched frees')" = 0 ]
	"$HS_BIN" stats c.heapscope > stats.txt
	grep -qE '^unmatched frees: +0$' stats.txt
	# every block of the workers is freed: nothing left in net or leaks
	"$HS_BIN" report c.heapscope --source net --format csv > net.csv
	[ "$(col churn!site_churn 3 net.csv)" = 0 ]
	[ "$(col churn!site_churn 4 net.csv)" = 0 ]
	"$HS_BIN" report c.heapscope --source leaks --exc '' --format csv > leaks.csv
	[ "$(col churn!site_churn 3 leaks.csv)" = 0 ]
}
