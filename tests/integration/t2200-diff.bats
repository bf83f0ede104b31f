#!/usr/bin/env bats
# heapscope diff: test minus baseline, with processes and threads ignored.
load helpers

D="$DATA/diff"

json_row() {	# json_row NAME FIELD: a field of a ByName JSON row
	python3 -c "import json,sys
d=json.load(sys.stdin)
print([r for r in d['rows'] if r['name']==sys.argv[1]][0][sys.argv[2]])" "$1" "$2"
}

@test "diff of folded stacks: totals are test minus base" {
	hs diff "$D/base.folded" "$D/test.folded" --format json
	[ "$status" -eq 0 ]
	[ "$(json_row malloc exc <<<"$output")" = "210.0" ]
	[ "$(json_row build inc <<<"$output")" = "200.0" ]
	[ "$(json_row parse inc <<<"$output")" = "10.0" ]
	[ "$(json_row other inc <<<"$output")" = "0.0" ]
}

@test "diff cancels processes and threads with different ids" {
	hs diff "$D/base.perfView.xml" "$D/test.perfView.xml" --view calltree
	[ "$status" -eq 0 ]
	[[ "$output" == *"Totals Metric: 30 "* ]]
	# one process node (named by its command, as PerfView's preset does)
	# and one thread node, whatever the pids and tids were
	[[ "${lines[3]}" =~ ^\ \ app\ +0\.0\ +0\ +0\ +100\.0\ +30\  ]]
	[[ "${lines[4]}" =~ ^\ \ \ \ Thread\ +0\.0\ +0\ +0\ +100\.0\ +30\  ]]
	[ "$(grep -c 'Thread' <<<"$output")" -eq 1 ]
	[[ "$output" != *"(100)"* && "$output" != *"(200)"* ]]
}

@test "diff takes report options, the user's GroupPats after the id patterns" {
	hs diff "$D/base.perfView.xml" "$D/test.perfView.xml" --group '{%}!->module $1' --format json
	[ "$status" -eq 0 ]
	[ "$(json_row 'module libc.so.6' inc <<<"$output")" = "30.0" ]
	[ "$(json_row 'module app' inc <<<"$output")" = "30.0" ]
}

@test "diff of a file with itself is zero everywhere" {
	hs diff "$D/base.perfView.xml" "$D/base.perfView.xml" --format json
	python3 -c "import json,sys
d=json.load(sys.stdin)
assert d['rows'], 'no rows'
for r in d['rows']:
    assert r['inc'] == 0 and r['exc'] == 0, r" <<<"$output"
}

@test "diff needs two files" {
	hs diff "$D/base.folded"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"needs two files, BASE and TEST"* ]]
	hs diff "$D/base.folded" "$D/test.folded" extra
	[ "$status" -eq 2 ]
}

@test "diff names the file it cannot read" {
	hs diff "$D/base.folded" "$D/missing.folded"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing.folded"* ]]
}

@test "diff --help shows its usage" {
	hs diff --help
	[ "$status" -eq 0 ]
	[[ "$output" == "usage: heapscope diff BASE TEST"* ]]
}
