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
