#!/usr/bin/env bats
# heapscope report on a heapscope trace: allocations as samples, bytes as
# the metric, stacks under the process and thread pseudo-frames.
load trace-helpers

setup() {
	trace_setup
}

@test "report totals a trace's allocations in bytes" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	local bytes=$(summary_field s.heapscope "bytes allocated")
	local n=$(summary_field s.heapscope allocations)
	hs report s.heapscope
	[ "$status" -eq 0 ]
	# (one sample per stack and clock tick: the Samples are fewer)
	[[ "${lines[0]}" == "Totals Metric: $bytes bytes  Count: $n  Samples: "* ]]
}

@test "report's call tree starts with the process and thread frames" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	hs report --view calltree s.heapscope
	[ "$status" -eq 0 ]
	[[ "${lines[3]}" =~ ^\ \ Process\ sites\ \([0-9]+\) ]]
	[[ "${lines[4]}" =~ ^\ \ \ \ Thread\ \([0-9]+\)\ sites ]]
	# the realloc chain (10 + 20 + 4000 + 100000 bytes) allocates most:
	# with the allocator folded into its callers, the function itself
	hs report s.heapscope --limit 1
	[[ "${lines[2]}" =~ ^sites!site_realloc_chain\ .*104030 ]]
}

@test "report takes a trace whatever its name" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	cp s.heapscope renamed.bin
	hs report renamed.bin --limit 1
	[ "$status" -eq 0 ]
	hs report --from heapscope renamed.bin --limit 1
	[ "$status" -eq 0 ]
}
