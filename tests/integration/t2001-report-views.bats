#!/usr/bin/env bats
# `heapscope report`: every view as text, JSON and CSV, on hand-written
# inputs in tests/data/report (recursion.folded: A->B->C->B->D recursion
# and libc frames, times 0; braces.folded: names with braces of their own
# and an annotation; cpu.data.txt: perf script with one sample every
# 10 ms, TimeMetric; defaults.perfView.xml: a saved view state).
# HS_UPDATE_GOLDEN=1 rewrites the goldens.

bats_require_minimum_version 1.5.0
load helpers

R="$DATA/report"
G="$DATA/report/golden"

@test "default: the summary line and ByName as text" {
	hs report "$R/recursion.folded"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Totals Metric: 25  Count: 25  Samples: 7  First: 0.000  Last: 0.000"* ]]
	golden "$G/recursion.byname.txt"
}

@test "ByName as JSON and CSV" {
	hs report "$R/recursion.folded" --format json
	[ "$status" -eq 0 ]
	golden "$G/recursion.byname.json"
	hs report "$R/recursion.folded" --format csv
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Name,Exc %,Exc,Exc Ct,Inc %,Inc,Inc Ct,Fold,Fold Ct,Inc Avg,When,First,Last" ]
	golden "$G/recursion.byname.csv"
}

@test "CallTree as text, JSON and CSV" {
	hs report "$R/recursion.folded" --view calltree
	[ "$status" -eq 0 ]
	golden "$G/recursion.calltree.txt"
	hs report "$R/recursion.folded" --view calltree --format json --depth 3
	[ "$status" -eq 0 ]
	golden "$G/recursion.calltree-depth3.json"
	hs report "$R/recursion.folded" --view calltree --format csv
	[ "$status" -eq 0 ]
	golden "$G/recursion.calltree.csv"
}

@test "names with braces: lambdas and closures whole, a trailing {annotation} left out" {
	hs report "$R/braces.folded"
	[ "$status" -eq 0 ]
	golden "$G/braces.byname.txt"
	hs report "$R/braces.folded" --format csv
	[ "$status" -eq 0 ]
	golden "$G/braces.byname.csv"
}

@test "--depth and --limit cut tree rows" {
	hs report "$R/recursion.folded" --view calltree --depth 2
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 7 ]	# summary, header, ROOT, main, A, malloc + note
	[[ "${lines[6]}" == "(4 of 11 rows shown)" ]]
	hs report "$R/recursion.folded" --view calltree --limit 3
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" == "(3 of 11 rows shown)" ]]
}

@test "Callers, Callees and Caller-Callee of a recursive name" {
	hs report "$R/recursion.folded" --view callers --focus B
	[ "$status" -eq 0 ]
	golden "$G/recursion.callers-B.txt"
	hs report "$R/recursion.folded" --view callees --focus B
	[ "$status" -eq 0 ]
	golden "$G/recursion.callees-B.txt"
	hs report "$R/recursion.folded" --view caller-callee --focus B
	[ "$status" -eq 0 ]
	golden "$G/recursion.caller-callee-B.txt"
	hs report "$R/recursion.folded" --view caller-callee --focus B --format json
	[ "$status" -eq 0 ]
	golden "$G/recursion.caller-callee-B.json"
	hs report "$R/recursion.folded" --view caller-callee --focus B --format csv
	[ "$status" -eq 0 ]
	golden "$G/recursion.caller-callee-B.csv"
}

@test "Flame Graph: folded stacks that read back as the same profile" {
	hs report "$R/recursion.folded" --view flame
	[ "$status" -eq 0 ]
	golden "$G/recursion.flame.folded"
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/again.folded"
	hs report "$BATS_TEST_TMPDIR/again.folded" --view calltree
	[ "$status" -eq 0 ]
	want="$output"
	hs report "$R/recursion.folded" --view calltree
	[ "$output" = "$want" ]
	hs report "$R/recursion.folded" --view flame --format csv
	[ "$status" -eq 0 ]
	golden "$G/recursion.flame.csv"
}

@test "Fold% and GroupPats" {
	hs report "$R/recursion.folded" --view calltree --fold-pct 10 --group '{%}!->module $1'
	[ "$status" -eq 0 ]
	golden "$G/recursion.calltree-fold10-modules.txt"
}

@test "a preset is its GroupPats" {
	hs report "$R/recursion.folded" --view calltree --preset group-modules
	[ "$status" -eq 0 ]
	want="$output"
	hs report "$R/recursion.folded" --view calltree --group '[group modules] {%}!->module $1'
	[ "$output" = "$want" ]
	hs report --list-presets
	[ "$status" -eq 0 ]
	[[ "$output" == *"[group module entries]"* ]]
}

@test "TimeMetric: perf script CPU samples, a time window prorates" {
	hs report "$R/cpu.data.txt" --view calltree
	[ "$status" -eq 0 ]
	golden "$G/cpu.calltree.txt"
	hs report "$R/cpu.data.txt" --start 15 --end 55
	[ "$status" -eq 0 ]
	golden "$G/cpu.byname-15-55.txt"
}

@test "Drill Into a name (inclusive and exclusive) and Flatten" {
	hs report "$R/cpu.data.txt" --view calltree --drill 'app!B'
	[ "$status" -eq 0 ]
	golden "$G/cpu.drill-B.txt"
	hs report "$R/cpu.data.txt" --view calltree --drill 'app!B:exc'
	[ "$status" -eq 0 ]
	golden "$G/cpu.drill-B-exc.txt"
	hs report "$R/cpu.data.txt" --view calltree --flatten
	[ "$status" -eq 0 ]
	golden "$G/cpu.flatten.txt"
}

@test "Drill Into keeps the patterns and clears IncPats and ExcPats" {
	hs report "$R/cpu.data.txt" --view calltree --drill 'app!A' --inc 'app!E' \
		--fold 'app!C' --group 'libc.so.6!->LIBC'
	[ "$status" -eq 0 ]
	golden "$G/cpu.drill-A-patterns.txt"
}

@test "a file's saved view state gives the defaults; options override it" {
	hs report "$R/defaults.perfView.xml" --view calltree
	[ "$status" -eq 0 ]
	golden "$G/defaults.calltree.txt"
	hs report "$R/defaults.perfView.xml" --view calltree --group '' --exc '' \
		--fold-pct 0 --start 0 --end 100
	[ "$status" -eq 0 ]
	golden "$G/defaults.calltree-overridden.txt"
}

@test "a bad pattern fails naming it" {
	hs report "$R/recursion.folded" --group '@a(b'
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"a(b"* ]]
}

@test "an unknown focus or drill name fails" {
	hs report "$R/recursion.folded" --view callers --focus nope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no frame named 'nope'"* ]]
	hs report "$R/recursion.folded" --drill nope:exc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no frame named 'nope'"* ]]
}
