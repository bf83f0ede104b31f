#!/usr/bin/env bats
# `heapscope run --gcdump-on SIG` and `--gcdump-at-exit`: heap snapshots of
# the .NET program run runs (tests/targets/dotnet-heap, its known graph:
# tests/data/dotnet/heap.md). Without dotnet, only the usage checks run.
load helpers

setup_file() {
	command -v dotnet > /dev/null || return 0
	cd "$BATS_FILE_TMPDIR" || return 1
	dotnet_build dotnet-heap || return 1
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
}

need_dotnet() {
	command -v dotnet > /dev/null ||
		skip "dotnet (the .NET SDK) is not installed: the live .NET tests need it"
}

# start_run [RUN_ARGS...] [-- PROGRAM_ARGS...]: heapscope run RUN_ARGS...
# dotnet-heap PROGRAM_ARGS... in the background; sets RUN_PID and waits
# for the program's "ready" line.
start_run() {
	local run_args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		run_args+=("$1")
		shift
	done
	[ $# -eq 0 ] || shift
	"$HS_BIN" run --no-view "${run_args[@]}" -- dotnet "$BATS_FILE_TMPDIR/out/dotnet-heap.dll" \
		"$PWD/go" "$@" > ready.txt 2> run.err &
	RUN_PID=$!
	for _ in $(seq 150); do grep -q ready ready.txt && return 0; sleep 0.2; done
	cat run.err
	return 1
}

# end_run: waits for the run started by start_run to end; its status in
# rc, its stderr shown.
end_run() {
	rc=0
	wait "$RUN_PID" || rc=$?
	cat run.err
}

# wait_for_line TEXT: until run.err holds TEXT (up to 60 s)
wait_for_line() {
	for _ in $(seq 300); do grep -q "$1" run.err && return 0; sleep 0.2; done
	cat run.err
	return 1
}

# check_graph SNAPSHOT [after-main]: the known graph in SNAPSHOT; with
# after-main, without the cache (Main freed its handle before returning)
check_graph() {
	hs stats "$1"
	[ "$status" -eq 0 ]
	echo "$output" | grep -E "^ +32000 +1000  Node  \[dotnet-heap.dll\]$"
	if [ "${2:-}" = after-main ]; then
		! echo "$output" | grep -q "CacheEntry" || return 1
	else
		echo "$output" | grep -E "^ +2400 +100  CacheEntry  \[dotnet-heap.dll\]$"
	fi
	echo "$output" | grep -A1 "Largest retainers" | grep -E "1064248 .*List<Node>"
	! echo "$output" | grep -q "Garbage  " || false
}

@test "run --gcdump-on: a bad signal or a program that is not .NET is refused" {
	hs run --gcdump-on SIGTERM -- true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--gcdump-on takes a signal such as SIGUSR2"*"not 'SIGTERM'"* ]]
	hs run --gcdump-on bogus -- true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"not 'bogus'"* ]]
	hs run --no-dotnet --gcdump-on USR2 -- true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--gcdump-on and --gcdump-at-exit are for a .NET program"* ]]
	hs run --no-dotnet --gcdump-at-exit -- true
	[ "$status" -eq 2 ]
	[ ! -e true.*.gcdump ]
	! ls ./*.heapscope 2> /dev/null || false
}

@test "run of heapscope itself, or of a program naming libhostfxr.so, is not .NET" {
	# naming libhostfxr.so made heapscope take itself for an apphost
	printf '#!/bin/sh\n# loads libhostfxr.so? no\nexit 0\n' > names-hostfxr
	chmod +x names-hostfxr
	hs run --gcdump-on USR2 -- ./names-hostfxr
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--gcdump-on and --gcdump-at-exit are for a .NET program"* ]]
	hs run --gcdump-at-exit -- "$HS_BIN" --version
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--gcdump-on and --gcdump-at-exit are for a .NET program"* ]]
}

@test "run of heapscope itself traces its heap and waits for no diagnostic port" {
	if ldd "$HS_BIN" | grep -q libasan; then
		skip "a sanitizer build cannot run with the collector preloaded before its runtime"
	fi
	printf 'main;a 5\n' > a.folded
	hs run --no-view -o h.heapscope -- "$HS_BIN" report a.folded --view byname --format csv
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\nmain,0,0,0,100,5,5,'* ]]
	[[ "$stderr" != *"diagnostic port"* ]]
	[ -s h.heapscope ]
	[ ! -e h.nettrace ]
}

@test "run --gcdump-on SIGUSR2: one snapshot per signal, the program runs on" {
	need_dotnet
	start_run --gcdump-on SIGUSR2
	kill -USR2 "$RUN_PID"
	wait_for_line "written to "
	kill -USR2 "$RUN_PID"
	for _ in $(seq 300); do [ "$(grep -c "written to " run.err)" -ge 2 ] && break; sleep 0.2; done
	touch go
	end_run
	[ "$rc" -eq 0 ]
	base=$(ls -- *.heapscope | sed 's/\.heapscope$//')
	[ -n "$base" ]
	grep -F "User defined signal 2: taking a heap snapshot into $base.1.gcdump" run.err
	[ -s "$base.1.gcdump" ]
	[ -s "$base.2.gcdump" ]
	check_graph "$base.1.gcdump"
	# the second names its types too, though the runtime described them
	# only to the first (run's own session keeps the provider on)
	check_graph "$base.2.gcdump"
	hs stats "$base.2.gcdump"
	! echo "$output" | grep -E "^ +[0-9]+ +[0-9]+  \?" || false
	# the program was not disturbed: it ended by itself, and run's own
	# .NET recording is complete
	[ -s "$base.nettrace" ]
}

@test "run --gcdump-at-exit: SIGTERM to heapscope snapshots, then ends the program" {
	need_dotnet
	start_run --gcdump-at-exit
	kill -TERM "$RUN_PID"
	end_run
	# the program got the SIGTERM after the snapshot
	[ "$rc" -eq 143 ]
	grep -F "was killed by signal 15" run.err
	base=$(ls -- *.heapscope | sed 's/\.heapscope$//')
	grep -F "ending the run (SIGTERM): taking a heap snapshot into $base.1.gcdump" run.err
	check_graph "$base.1.gcdump"
}

@test "run --gcdump-at-exit: a program that ends by itself is snapshotted after Main" {
	need_dotnet
	start_run --gcdump-at-exit -- 1000 3
	touch go
	end_run
	# Main's return value is the run's status, as without the snapshot
	[ "$rc" -eq 3 ]
	base=$(ls -- *.heapscope | sed 's/\.heapscope$//')
	grep -F "the program's Main returned: taking a heap snapshot into $base.1.gcdump" run.err
	! grep -F "no heap snapshot at exit" run.err || false
	# taken after Main returned: Main freed the cache's handle before
	check_graph "$base.1.gcdump" after-main
	# the runtime shut down normally after the snapshot: run's own .NET
	# recording is complete
	[ -s "$base.nettrace" ]
}

@test "run --gcdump-at-exit: a program whose Main does not return gets a clear message" {
	need_dotnet
	start_run --gcdump-at-exit
	kill -KILL "$(awk '/ready/ {print $2}' ready.txt)"
	end_run
	[ "$rc" -eq 137 ]
	grep -F "no heap snapshot at exit: the program ended without its Main returning" run.err
	! ls ./*.gcdump 2> /dev/null || false
}
