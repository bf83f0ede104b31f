#!/usr/bin/env bats
# Inputs of issue 19 that were refused wrongly or handled without bounds:
# a JSON file that starts with a byte order mark (item 13).
load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "PerfView JSON after a UTF-8 byte order mark is read, by name and by content" {
	hs report "$DATA/perfview/bom.perfView.json" --view calltree
	[ "$status" -eq 0 ]
	[[ "$output" == *"    leaf "* ]]
	run --separate-stderr sh -c '"$1" report - --view calltree < "$2"' sh "$HS_BIN" "$DATA/perfview/bom.perfView.json"
	[ "$status" -eq 0 ]
	[[ "$output" == *"    leaf "* ]]
	cp "$DATA/perfview/bom.perfView.json" "$T/noext"
	hs report "$T/noext" --format csv
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\nleaf,'* ]]
}
