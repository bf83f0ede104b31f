#!/usr/bin/env bats
# Option combinations that used to be accepted silently are usage errors.
load helpers
bats_require_minimum_version 1.5.0

@test "report --exe-dir without the Just My App preset is a usage error" {
	hs report "$DATA/report/recursion.folded" --exe-dir /usr/bin
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--exe-dir is for --preset 'Just My App'"* ]]
	hs report "$DATA/report/recursion.folded" --preset group-modules --exe-dir /usr/bin
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--exe-dir is for the 'Just My App' preset, not 'group modules'"* ]]
	hs report "$DATA/report/recursion.folded" --preset just-my-app --exe-dir /usr/bin
	[ "$status" -eq 0 ]
}

@test "dump --events --summary is a usage error" {
	hs dump --events --summary "$DATA/report/recursion.folded"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--events and --summary exclude each other"* ]]
}

@test "dump - is a usage error, not 'No such file'" {
	hs dump - < "$DATA/report/recursion.folded"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"reads a trace file, not standard input"* ]]
}

@test "an empty input is an error naming the file, whatever the format" {
	cd "$BATS_TEST_TMPDIR"
	: > empty.folded
	for args in "/dev/null" "/dev/null --from folded" "/dev/null --from perf" \
		"empty.folded" "empty.folded --from folded"; do
		# shellcheck disable=SC2086
		hs report $args
		[ "$status" -eq 1 ]
		[[ "$stderr" == "heapscope: error: ${args%% *}: the input is empty" ]]
	done
	hs report - --from folded < /dev/null
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"<stdin>: the input is empty"* ]]
	hs convert /dev/null --from folded -o out.folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"/dev/null: the input is empty"* ]]
	[ ! -e out.folded ]
}

@test "--focus outside the callers, callees and caller-callee views is a usage error" {
	for view in byname calltree flame; do
		hs report "$DATA/report/recursion.folded" --view "$view" --focus B
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"--focus is for the callers, callees and caller-callee views, not '$view'"* ]]
	done
	hs report "$DATA/report/recursion.folded" --focus B
	[ "$status" -eq 2 ]
	hs report "$DATA/report/recursion.folded" --view callers --focus B
	[ "$status" -eq 0 ]
}
