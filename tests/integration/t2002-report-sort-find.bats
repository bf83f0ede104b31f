#!/usr/bin/env bats
# `heapscope report --sort` and `--find`: the GUI's column sort and Find
# (analysis/view_order.c) from the command line, on
# tests/data/report/recursion.folded (A->B->C->B->D recursion, libc frames).

bats_require_minimum_version 1.5.0
load helpers

R="$DATA/report/recursion.folded"

# The names of the CSV rows (no header; trees: after the Depth column),
# joined with spaces.
names() {
	local f=1

	[[ "${lines[0]}" == Depth,* ]] && f=2
	sed 1d <<<"$output" | cut -d, -f$f | tr '\n' ' ' | sed 's/ $//'
}

@test "--sort name: names ascending, :desc reverses" {
	hs report "$R" --sort name --format csv
	[ "$status" -eq 0 ]
	[ "$(names)" = "A B C D E ROOT libc.so.6!free libc.so.6!malloc main" ]
	hs report "$R" --sort name:desc --format csv
	[ "$status" -eq 0 ]
	[ "$(names)" = "main libc.so.6!malloc libc.so.6!free ROOT E D C B A" ]
}

@test "--sort a number: descending unless :asc; --limit counts the sorted rows" {
	hs report "$R" --sort inc:asc --limit 3 --format csv
	[ "$status" -eq 0 ]
	[ "$(names)" = "D libc.so.6!free C" ]
	hs report "$R" --sort exc_count --limit 2
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" == "E "* ]]
	[[ "${lines[3]}" == "libc.so.6!malloc "* ]]
	[ "${lines[4]}" = "(2 of 9 rows shown)" ]
}

@test "--sort in a tree: each row's children, depth first" {
	hs report "$R" --view calltree --sort name --format csv
	[ "$status" -eq 0 ]
	[ "$(names)" = "ROOT main A B C B D libc.so.6!free E libc.so.6!malloc libc.so.6!malloc" ]
	# the JSON tree has the same order
	hs report "$R" --view calltree --sort name --format json
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.tree.children[0].children[0].children[].key]' <<<"$output")" = \
	  '["B","E","libc.so.6!malloc"]' ]
}

@test "--find: the matching rows, in a tree with the rows that lead to them" {
	hs report "$R" --find '^[bd]$' --format csv
	[ "$status" -eq 0 ]
	[ "$(names)" = "B D" ]
	hs report "$R" --find 'LIBC' --sort name --format csv
	[ "$status" -eq 0 ]
	[ "$(names)" = "libc.so.6!free libc.so.6!malloc" ]
	hs report "$R" --view calltree --find '^d$' --format csv
	[ "$status" -eq 0 ]
	[ "$(names)" = "ROOT main A B C B D" ]
	hs report "$R" --view calltree --find '^d$'
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "(7 of 11 rows shown)" ]
	hs report "$R" --find zzz --format csv
	[ "$status" -eq 0 ]
	[ "$(names)" = "" ]
}

@test "--sort and --find errors are usage errors" {
	hs report "$R" --sort size
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown sort column 'size'"* ]]
	hs report "$R" --sort inc:up
	[ "$status" -eq 2 ]
	[[ "$stderr" == *'order must be "asc" or "desc"'* ]]
	hs report "$R" --find '('
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--find: bad pattern '('"* ]]
}
