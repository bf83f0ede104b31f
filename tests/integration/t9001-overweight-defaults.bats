#!/usr/bin/env bats
# heapscope overweight: what the command line leaves out comes from each
# file's saved view state (its own GroupPats, time range, ...), as report
# and diff do; options given win.
load helpers
bats_require_minimum_version 1.5.0

# xml FILE START METRIC_A METRIC_B: two samples at 1 and 3 ms, saved
# GroupPats {%}!->module $1 and Start = START
xml() {
	cat > "$1" <<-XML
	<StackWindow><StackSource><Samples>
	<Sample Time="1" Metric="$3">/bin/app!a
	/bin/app!main</Sample>
	<Sample Time="3" Metric="$4">/lib/libc.so.6!malloc
	/bin/app!main</Sample>
	</Samples></StackSource>
	<StackWindowGuiState><FilterGuiState>
	<Start><Value>$2</Value></Start>
	<GroupRegEx><Value>[group modules] {%}!-&gt;module \$1</Value></GroupRegEx>
	</FilterGuiState></StackWindowGuiState></StackWindow>
	XML
}

setup() {
	T="$BATS_TEST_TMPDIR"
	xml "$T/base.perfView.xml" "" 10 10
	xml "$T/test.perfView.xml" "" 10 30
}

@test "each file's saved GroupPats apply" {
	hs overweight "$T/base.perfView.xml" "$T/test.perfView.xml"
	[ "$status" -eq 0 ]
	# base 20 -> test 40: growth 2; module libc.so.6 10 -> 30: expected
	# 10, overweight 200%, responsibility 100%
	[[ "$output" == *"module libc.so.6       10.000       30.000       20.000    100.0      200.0        4"* ]]
	[[ "$output" != *"app!main"* ]]
}

@test "--group on the command line wins over the saved GroupPats" {
	hs overweight "$T/base.perfView.xml" "$T/test.perfView.xml" --group ''
	[ "$status" -eq 0 ]
	[[ "$output" == *"libc.so.6!malloc"* ]]
	[[ "$output" != *"module libc.so.6"* ]]
}

@test "each file's saved Start applies to that file only" {
	xml "$T/base.perfView.xml" 2 10 10
	hs overweight "$T/base.perfView.xml" "$T/test.perfView.xml"
	[ "$status" -eq 0 ]
	# base keeps only its sample at 3 ms: 10 -> 40
	[[ "$output" == "Base: 10.000  Test: 40.000  Delta: 30.000  Delta %: 300.0"* ]]
	hs overweight "$T/base.perfView.xml" "$T/test.perfView.xml" --start 0
	[[ "$output" == "Base: 20.000  Test: 40.000  Delta: 20.000  Delta %: 100.0"* ]]
}
