#!/usr/bin/env bats
# heapscope overweight: PerfView's Overweight report.
load helpers

D="$DATA/diff"

@test "overweight ranks the name that grew out of proportion first" {
	hs overweight "$D/base.folded" "$D/test.folded"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Base: 250.000  Test: 460.000  Delta: 210.000  Delta %: 84.0" ]]
	# growth 460/250 = 1.84: build 100 -> 300 is 200 / (100 * 0.84) = 238.1% overweight
	[[ "${lines[2]}" =~ ^build\ +100\.000\ +300\.000\ +200\.000\ +95\.2\ +238\.1\ +5$ ]]
	# ROOT grew exactly in proportion
	[[ "$output" =~ ROOT\ +250\.000\ +460\.000\ +210\.000\ +100\.0\ +100\.0\ +2 ]]
	# "other" did not change: under 2% responsibility, left out
	[[ "$output" != *other* ]]
}

@test "overweight --format json carries every column" {
	hs overweight "$D/base.folded" "$D/test.folded" --format json
	[ "$status" -eq 0 ]
	python3 -c "import json,sys
d=json.load(sys.stdin)
assert d['base_total'] == 250 and d['test_total'] == 460
r=d['rows'][0]
assert r['name'] == 'build' and r['interest'] == 5
assert abs(r['overweight_pct'] - 100*200/(100*0.84)) < 1e-6
assert abs(r['responsibility_pct'] - 100*200/210) < 1e-6" <<<"$output"
}

@test "overweight --format html is a self-contained page" {
	hs overweight "$D/base.perfView.xml" "$D/test.perfView.xml" --format html --group '{%}!->module $1'
	[ "$status" -eq 0 ]
	[[ "$output" == "<!DOCTYPE html>"* ]]
	[[ "$output" == *"<th>Responsibility %</th>"* ]]
	[[ "$output" == *"module app"* ]]
	[[ "$output" != *"<script"* && "$output" != *"http"* ]]
}

@test "overweight of equal totals says nothing is overweight" {
	hs overweight "$D/base.folded" "$D/base.folded"
	[ "$status" -eq 0 ]
	[[ "$output" == *"equal totals"* ]]
}

@test "overweight usage errors" {
	hs overweight "$D/base.folded"
	[ "$status" -eq 2 ]
	hs overweight "$D/base.folded" "$D/test.folded" --format pdf
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown format 'pdf'"* ]]
	hs overweight "$D/base.folded" "$D/test.folded" --group '{'
	[ "$status" -eq 1 ]
}
