#!/usr/bin/env bats
# Standard input ('-') works for every command that reads a heap trace,
# whether it is a redirected file or a pipe, and gives what the file does.
load trace-helpers
bats_require_minimum_version 1.5.0

setup() {
	trace_setup
	[ -f s.heapscope ] || "$HS_BIN" run -q --no-view -o s.heapscope -- \
		"$TARGETS/sites" > /dev/null 2>&1
}

# same_as_file 'ARGS with - for the trace': the output of `heapscope ARGS`
# with the trace on standard input, redirected and piped, is the one with
# the file named.
same_as_file() {
	local args=$1 want got
	# shellcheck disable=SC2086
	want=$("$HS_BIN" ${args//-IN-/s.heapscope} 2>&1)
	# shellcheck disable=SC2086
	got=$("$HS_BIN" ${args//-IN-/-} < s.heapscope 2>&1)
	[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
	# shellcheck disable=SC2086
	got=$(cat s.heapscope | "$HS_BIN" ${args//-IN-/-} 2>&1)
	[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
}

@test "report - reads a trace, with or without --from heapscope" {
	same_as_file "report -IN-"
	same_as_file "report -IN- --from heapscope"
	same_as_file "report -IN- --from heapscope --view calltree"
	same_as_file "report -IN- --source net"
	same_as_file "report -IN- --source leaks --start 0 --format json"
	same_as_file "report -IN- --from heapscope --size-classes"
	same_as_file "report -IN- --list-sources"
	run -0 "$HS_BIN" report - --from heapscope < s.heapscope
	[[ "$output" == *"sites!site_deep"* ]]
}

@test "stats - reads a trace and calls it <stdin>" {
	run -0 --separate-stderr "$HS_BIN" stats - < s.heapscope
	[[ "${lines[0]}" == "trace:                  <stdin> (sites, pid "* ]]
	want=$("$HS_BIN" stats s.heapscope | tail -n +2)
	got=$(cat s.heapscope | "$HS_BIN" stats - | tail -n +2)
	[ "$got" = "$want" ]
	run -0 "$HS_BIN" stats - --format json < s.heapscope
	[[ "$output" == *'"trace": "<stdin>"'* ]]
}

@test "source, diff, overweight and convert read a trace on standard input" {
	same_as_file "source -IN- site_leak"
	same_as_file "diff -IN- s.heapscope --view calltree"
	same_as_file "diff s.heapscope -IN-"
	same_as_file "overweight -IN- s.heapscope"
	same_as_file "convert -IN- --from heapscope -o - --to folded"
	same_as_file "convert -IN- --source net -o - --to folded"
}

@test "symbolize - writes to -o, and says that it needs it" {
	run -2 --separate-stderr "$HS_BIN" symbolize - < s.heapscope
	[[ "$stderr" == *"standard input needs -o OUT"* ]]
	run -0 --separate-stderr "$HS_BIN" symbolize - -o piped.heapscope -q < s.heapscope
	same_as_file "report -IN- --view calltree"
	run -0 "$HS_BIN" report piped.heapscope
	[[ "$output" == *"sites!site_deep"* ]]
}

@test "a cut-off trace or another file on standard input is named <stdin>" {
	head -c 1000 s.heapscope > cut.heapscope
	run -0 --separate-stderr "$HS_BIN" stats - < cut.heapscope
	[[ "$stderr" == *"<stdin> was cut off"* ]]
	run -0 --separate-stderr sh -c "cat cut.heapscope | \"$HS_BIN\" report - --from heapscope"
	[[ "$stderr" == *"<stdin> was cut off"* ]]
	run -1 --separate-stderr sh -c "echo 'not a trace' | \"$HS_BIN\" stats -"
	[[ "$stderr" == *"<stdin>: not a heapscope trace"* ]]
	run -1 --separate-stderr sh -c "echo 'not a trace' | \"$HS_BIN\" report - --from heapscope"
	[[ "$stderr" == "heapscope: error: <stdin>: "* ]]
	[[ "$stderr" != *"/proc/self"* ]]
}
