#!/usr/bin/env bats
# `heapscope view` of traces with CPU and wall-clock samples: the GUI's
# Source list offers cpu and wall beside the memory views (and only them
# for a --no-heap trace, cpu first, the default), and their views are the
# report's.

bats_require_minimum_version 1.5.0
load view-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	SPINNER="$HS_BUILD/tests/targets/spinner"
	"$HS_BIN" run -q --no-view --cpu --wall -o both.heapscope -- "$SPINNER" late 100 \
		> both.out
	"$HS_BIN" run -q --no-view --cpu --no-heap -o cpu.heapscope -- "$SPINNER" late 100 \
		> cpu.out
	view_start both.heapscope cpu.heapscope
}

teardown_file() {
	view_stop
}

setup() {
	view_setup
}

@test "the Source list has cpu and wall when the trace has samples" {
	get /api/info
	[ "$(jq -c '[.traces[0].sources[].name]' <<< "$output")" = \
	  '["alloc","net","leaks","peak","temporary","mmap","cpu","wall"]' ]
	[ "$(jq -c '[.traces[1].sources[].name]' <<< "$output")" = '["cpu"]' ]
	[ "$(jq '.traces[1].sources[0].loaded' <<< "$output")" = true ]
}

@test "the cpu and wall views are the report's" {
	same both.heapscope 0 source=cpu view=calltree
	same both.heapscope 0 source=wall view=calltree
	same both.heapscope 0 source=cpu start=20 end=60
	same cpu.heapscope 1 view=calltree
}

@test "report and --list-sources of a --no-heap trace: cpu" {
	run --separate-stderr "$HS_BIN" report cpu.heapscope --list-sources
	[ "$status" -eq 0 ]
	[ "$(awk '{ print $1 }' <<< "$output" | tr '\n' ' ')" = "cpu " ]
	"$HS_BIN" report cpu.heapscope --format csv > r.csv 2>/dev/null
	grep -q '^spinner!late_spin,' r.csv
}
