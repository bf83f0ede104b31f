#!/usr/bin/env bats
# heapscope run: options, the trace file's name, exit status, and that the
# program's own behaviour (output, errno, signals, descriptors) is kept.
load trace-helpers

setup() {
	trace_setup
}

@test "run --help shows the usage" {
	hs run --help
	[ "$status" -eq 0 ]
	[[ "$output" == "usage: heapscope run"* ]]
	[[ "$output" == *"--sample-bytes"* ]]
}

@test "run without a program is a usage error" {
	hs run
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"no program to run"* ]]
}

@test "run with an unknown option or a bad value is a usage error" {
	hs run --frobnicate -- true
	[ "$status" -eq 2 ]
	hs run --unwind dwarf -- true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--unwind is libunwind or fp"* ]]
	hs run --max-depth 5000 -- true
	[ "$status" -eq 2 ]
	hs run --sample-bytes lots -- true
	[ "$status" -eq 2 ]
	! ls *.heapscope || false
}

@test "the default trace is COMM.PID.heapscope in the current directory" {
	trace_run "$TARGETS/sites"
	[ "$status" -eq 0 ]
	ls sites.*.heapscope
	[ "$(ls sites.*.heapscope | wc -l)" -eq 1 ]
	[[ "$(ls sites.*.heapscope)" =~ ^sites\.[0-9]+\.heapscope$ ]]
	grep -q "heapscope report sites\.[0-9]*\.heapscope" err.txt
}

@test "an existing file is never overwritten" {
	echo precious > keep.heapscope
	trace_run -o keep.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 1 ]
	grep -q "'keep.heapscope' exists; not overwriting it" err.txt
	[ "$(cat keep.heapscope)" = precious ]
	[ ! -s out.txt ]
}

@test "the exit status is the program's" {
	trace_run -o a.heapscope -- sh -c 'exit 3'
	[ "$status" -eq 3 ]
	trace_run -o b.heapscope -- "$TARGETS/crasher" exit7
	[ "$status" -eq 7 ]
}

@test "a program killed by signal N gives 128+N" {
	trace_run -o a.heapscope -- sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	grep -q "killed by signal 15" err.txt
}

@test "a program that cannot be started gives 127 and no trace" {
	trace_run -o a.heapscope -- ./no-such-program
	[ "$status" -eq 127 ]
	grep -q "cannot run './no-such-program'" err.txt
	[ ! -e a.heapscope ]
}

@test "a statically linked program runs, untraced, with a message and no empty trace" {
	trace_run -o s.heapscope -- "$TARGETS/static"
	[ "$status" -eq 3 ]
	grep -q "^static ran$" out.txt
	grep -q "did not load the collector, so nothing was traced" err.txt
	! grep -q "not a heapscope trace" err.txt || false
	[ ! -e s.heapscope ]
}

@test "the program's stdout, stderr, errno, signals and descriptors are its own" {
	"$TARGETS/behave" > plain.out 2> plain.err || true
	trace_run -o b.heapscope --no-view -- "$TARGETS/behave"
	[ "$status" -eq 42 ]
	diff plain.out out.txt
	grep -q "errno after malloc: 1234" out.txt
	grep -q "SIGSEGV handler is default: yes" out.txt
	grep -q "first fd: " out.txt
	# stderr: the program's line first, then only heapscope's summary
	[ "$(head -1 err.txt)" = "a line on stderr" ]
	[ "$(grep -vc '^heapscope: ' err.txt)" -eq 1 ]
}

@test "the summary names the counts, peaks, leaks and the trace" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
	grep -qE "^heapscope: [0-9]+ allocations? \(.*\), [0-9]+ frees?, peak heap .*, peak RSS .*, leaked .* in [0-9]+ blocks?( \(.* more in known exit-time allocations\))?$" err.txt
	grep -q "trace written to s.heapscope" err.txt
}

@test "the trace records the command line, executable and options" {
	trace_run -o s.heapscope --max-depth 64 -- "$TARGETS/sites" some arg
	[ "$status" -eq 0 ]
	hs dump s.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"max_depth=64 unwind=libunwind"* ]]
	[[ "$output" == *"exe=\"$TARGETS/sites\" comm=\"sites\""* ]]
	[[ "$output" == *"argv =\"$TARGETS/sites\" =\"some\" =\"arg\""* ]]
	[[ "$output" == *"# complete: "* ]]
}
