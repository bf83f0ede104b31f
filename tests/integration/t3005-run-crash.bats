#!/usr/bin/env bats
# heapscope run: a program that dies keeps a readable trace. A fatal signal
# is caught, the trace finished, and the signal delivered as it would have
# been; SIGKILL cannot be caught, and loses at most the last 100 ms.
load trace-helpers

setup() {
	trace_setup
}

@test "abort in the middle: exit 134, every allocation before it, END signal 6" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" abort
	[ "$status" -eq 134 ]
	trace_check out.txt c.heapscope
	[ "$(summary_field c.heapscope end)" = "signal 6" ]
	[ "$(summary_field c.heapscope status)" = complete ]
}

@test "SIGSEGV: exit 139 and a complete trace" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" segv
	[ "$status" -eq 139 ]
	trace_check out.txt c.heapscope
	[ "$(summary_field c.heapscope end)" = "signal 11" ]
}

@test "a stack overflow: exit 139 and a complete trace (the handler runs on its own stack)" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" overflow
	[ "$status" -eq 139 ]
	trace_check out.txt c.heapscope
	[ "$(summary_field c.heapscope end)" = "signal 11" ]
}

@test "SIGKILL 300 ms after the last allocation: the trace holds every allocation" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" kill-soon
	[ "$status" -eq 137 ]
	trace_check out.txt c.heapscope
}

@test "SIGKILL: exit 137, a cut-off trace that still holds the allocations" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" kill
	[ "$status" -eq 137 ]
	grep -q "the trace was cut off" err.txt
	trace_check out.txt c.heapscope
	[[ "$(summary_field c.heapscope status)" == "cut off at offset "* ]]
	hs dump c.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"# no end chunk (the program did not finish): "*" 51 events recovered"* ]]
}

@test "_exit finishes the trace" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" _exit7
	[ "$status" -eq 7 ]
	trace_check out.txt c.heapscope
	[ "$(summary_field c.heapscope end)" = "_exit 7" ]
}

@test "a trace cut anywhere before its symbols is read up to the cut" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" exit7
	# (a cut in the symbol section leaves the events whole: t5050)
	local end cut events
	end=$("$HS_BIN" dump c.heapscope | sed -n 's/^chunk [0-9]* at \([0-9]*\): symbols,.*/\1/p')
	[ -n "$end" ]
	for cut in 16 40 $((end / 2)) $((end - 1)); do
		head -c "$cut" c.heapscope > cut.heapscope
		hs dump cut.heapscope
		[ "$status" -eq 0 ]
		[[ "$output" == *"events recovered"* ]]
		# the events as the loaded trace counts them
		events=$(printf '%s\n' "$output" | sed -n 's/.*, \([0-9]*\) events recovered$/\1/p')
		[ "$(summary_field cut.heapscope events)" = "$events" ]
		[[ "$(summary_field cut.heapscope status)" == "cut off at offset "* ]]
	done
}
