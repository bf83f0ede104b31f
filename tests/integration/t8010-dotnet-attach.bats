#!/usr/bin/env bats
# `heapscope attach PID`: a running .NET program's runtime events recorded
# through its own diagnostic socket, on the program of tests/targets/dotnet
# (held at a gate so that the test controls its lifetime), whose
# allocations are known. Skipped where the .NET SDK (dotnet) is not
# installed.
load dotnet-helpers

# wait_for FILE PATTERN: until FILE has a line matching PATTERN (at most 30 s)
wait_for() {
	local i
	for i in $(seq 300); do
		grep -q "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
	done
	echo "timed out waiting for '$2' in $1" >&2
	cat "$1" >&2
	return 1
}

# start_gated DIR: the program, waiting on DIR/gate; its pid in $pid
start_gated() {
	mkdir -p "$1"
	ALLOCS_GATE="$PWD/$1/gate" dotnet out/allocs.dll 2 > "$1/truth" 2>&1 3>&- &
	pid=$!
	wait_for "$1/truth" '^ready'
	[ "$(truth ready "$1/truth")" = "$pid" ]
}

@test "attach --duration records a running program, rundown included" {
	start_gated a
	"$HS_BIN" attach "$pid" --duration 8 -o a.nettrace 2> a/attach.err 3>&- &
	local attach=$!
	wait_for a/attach.err 'recording process'
	touch a/gate
	wait_for a/truth '^caught'
	wait "$attach"
	touch a/gate.end
	wait "$pid"
	grep -q 'bytes written to a.nettrace' a/attach.err
	check_gc_alloc a.nettrace a/truth
	grep -q '^"System.Private.CoreLib!System.String.Ctor(wchar,int32)",' a.nettrace.csv
}

@test "attach stops at SIGINT, as at Ctrl-C" {
	start_gated i
	"$HS_BIN" attach "$pid" -o i.nettrace 2> i/attach.err 3>&- &
	local attach=$!
	wait_for i/attach.err 'Ctrl-C stops'
	touch i/gate
	wait_for i/truth '^caught'
	kill -INT "$attach"
	wait "$attach"
	touch i/gate.end
	wait "$pid"
	grep -q 'bytes written to i.nettrace' i/attach.err
	check_gc_alloc i.nettrace i/truth
}

@test "attach: a program that exits mid-recording leaves what it sent" {
	start_gated x
	"$HS_BIN" attach "$pid" -o x.nettrace 2> x/attach.err 3>&- &
	local attach=$!
	wait_for x/attach.err 'Ctrl-C stops'
	touch x/gate x/gate.end
	wait "$pid"
	wait "$attach"
	grep -q "process $pid went away during the recording; kept the [0-9]* bytes" x/attach.err
	check_gc_alloc x.nettrace x/truth
	# its exit wrote the rundown
	grep -q '^"System.Private.CoreLib!System.String.Ctor(wchar,int32)",' x.nettrace.csv
}

@test "attach: no such process, and a process that is not .NET" {
	hs attach 2147483000
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no process 2147483000"* ]]
	sleep 30 3>&- &
	local sleeper=$!
	# The forked shell becomes sleep only at exec; name it after that.
	local tries=0
	until [ "$(cat /proc/$sleeper/comm 2>/dev/null)" = sleep ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 500 ]
		sleep 0.01
	done
	# A runtime killed before it removed its socket left one with this pid
	# (pids come back): its key is another process's start time.
	mkdir stale
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
		"stale/dotnet-diagnostic-$sleeper-1-socket"
	TMPDIR=$PWD/stale hs attach "$sleeper"
	kill "$sleeper"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"process $sleeper (sleep) is not a .NET process: it has no diagnostic socket"* ]]
	hs attach
	[ "$status" -eq 2 ]
	hs attach 12x
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'12x' is not a process id"* ]]
}
