#!/usr/bin/env bats
# heapscope run --sample-bytes: a Poisson sample of the allocations.
load trace-helpers

setup() {
	trace_setup
}

@test "the sampling rate is in the trace and frees match sampled blocks only" {
	trace_run --sample-bytes 100000 -o s.heapscope -- "$TARGETS/stress" 1 200000
	[ "$status" -eq 0 ]
	grep -q "sampled one allocation per 100000 bytes" err.txt
	"$HS_BIN" dump --summary s.heapscope > sum.txt
	grep -q "^sample bytes: 100000$" sum.txt
	grep -q "^unmatched frees: 0$" sum.txt
	# 200000 allocations of 1..1000 bytes (100.1 MB): about 1000 samples
	local n=$(sed -n 's/^allocations: //p' sum.txt)
	[ "$n" -gt 700 ] && [ "$n" -lt 1400 ]
	# every sampled block of the loop is freed in it
	local frees=$(sed -n 's/^frees: //p' sum.txt)
	[ "$frees" -ge $((n - 40)) ] && [ "$frees" -le "$n" ]
}

@test "a full trace has sample bytes 0" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	[ "$(summary_field s.heapscope "sample bytes")" -eq 0 ]
}
