#!/usr/bin/env bats
# `heapscope report`: usage errors are caught before the input is read.
load helpers

@test "report --help shows the usage" {
	hs report --help
	[ "$status" -eq 0 ]
	[[ "$output" == "usage: heapscope report FILE"* ]]
	[[ "$output" == *"--view VIEW"* ]]
}

@test "report without a file is a usage error" {
	hs report
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"no input file"* ]]
}

@test "report with an unknown view is a usage error" {
	hs report --view nope x.folded
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown view 'nope'"* ]]
}

@test "report with an unknown format is a usage error" {
	hs report --format xml x.folded
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown format 'xml'"* ]]
}

@test "report with an unknown option is a usage error" {
	hs report --frobnicate x.folded
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown option '--frobnicate'"* ]]
}

@test "report options that need a value say so" {
	hs report x.folded --limit
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'--limit' needs a value"* ]]
}

@test "report checks numbers" {
	hs report --fold-pct ten x.folded
	[ "$status" -eq 2 ]
	hs report --fold-pct -1 x.folded
	[ "$status" -eq 2 ]
	hs report --limit -3 x.folded
	[ "$status" -eq 2 ]
	hs report --start 10 --end 5 x.folded
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--end is before --start"* ]]
}

@test "focus views need --focus" {
	for v in callers callees caller-callee; do
		hs report --view "$v" x.folded
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"needs --focus NAME"* ]]
	done
}

@test "report of a missing file fails naming it" {
	hs report "$BATS_TEST_TMPDIR/missing.folded"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing.folded"* ]]
}
