#!/usr/bin/env bats
# No silent empty answer: a --source the trace does not have (a memory
# view of a --no-heap trace, cpu of a heap-only one) fails with exit 1
# naming the sources it has, in report, source and diff; and a --no-heap
# run's end summary has no heap line of zeros.
load trace-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	SPINNER="$HS_BUILD/tests/targets/spinner"
	"$HS_BIN" run --no-view --cpu --no-heap -o cpu.heapscope -- "$SPINNER" late 100 \
		> cpu.out 2> cpu.err
	"$HS_BIN" run --no-view -o heap.heapscope -- "$TARGETS/sites" > heap.out 2> heap.err
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

@test "report --source leaks of a CPU-only trace: exit 1, it has cpu" {
	hs report cpu.heapscope --source leaks
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == *"cpu.heapscope: the trace has no 'leaks' source (it has: cpu)"* ]]
}

@test "report --source cpu of a heap-only trace: exit 1, it has the memory views" {
	hs report heap.heapscope --source cpu
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == *"heap.heapscope: the trace has no 'cpu' source (it has: alloc, net, leaks, peak, temporary"* ]]
	hs source heap.heapscope main --source wall
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no 'wall' source"* ]]
	hs diff heap.heapscope heap.heapscope --source cpu
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no 'cpu' source"* ]]
}

@test "the sources a trace has still work, and an unknown one is a usage error" {
	hs report cpu.heapscope --source cpu --format csv
	[ "$status" -eq 0 ]
	grep -q '^spinner!late_spin,' <<< "$output"
	hs report heap.heapscope --source leaks --format csv
	[ "$status" -eq 0 ]
	hs report heap.heapscope --source nosuch
	[ "$status" -eq 2 ]
}

@test "run --no-heap: no heap summary of zeros" {
	! grep -q 'allocation\|peak heap\|leaked' cpu.err || false
	grep -q '^heapscope: heap not recorded (--no-heap), peak RSS ' cpu.err
	grep -q 'CPU samples' cpu.err
	grep -q 'peak heap' heap.err
}
