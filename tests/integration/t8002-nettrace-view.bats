#!/usr/bin/env bats
# `heapscope view` of .NET traces: the GUI's API offers a .nettrace's
# sources and gives the same views as `report`.

bats_require_minimum_version 1.5.0
load view-helpers

ND="$DATA/dotnet"

setup_file() {
	view_start "$ND/allocs.nettrace" "$ND/allocs-rundown.nettrace.zip"
}

teardown_file() {
	view_stop
}

setup() {
	view_setup
}

@test "nettrace view: info lists each trace's sources" {
	get /api/info
	[ "$(jq -c '[.traces[0].sources[].name]' <<< "$output")" = \
	  '["gc-alloc","thread-time","events"]' ]
	[ "$(jq -c '[.traces[1].sources[].name]' <<< "$output")" = \
	  '["gc-alloc","thread-time","events"]' ]
}

@test "nettrace view: each source's byname view is the report's" {
	same "$ND/allocs.nettrace" 0 view=byname
	same "$ND/allocs.nettrace" 0 source=thread-time view=calltree
	same "$ND/allocs-rundown.nettrace.zip" 1 source=gc-alloc view=callers focus=LargeObject
	same "$ND/allocs.nettrace" 0 source=events view=callers \
		"focus=Event Microsoft-Windows-DotNETRuntime/Exception/Start"
}
