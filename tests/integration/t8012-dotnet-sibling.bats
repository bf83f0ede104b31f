#!/usr/bin/env bats
# A heap trace with the .nettrace that `run --dotnet` recorded beside it
# (NAME.PID.heapscope and NAME.PID.nettrace): `view` serves both,
# `report --list-sources` lists the .nettrace's sources too, and
# `--source gc-alloc` on the heap trace says where that source is. The
# pair is made of committed files (a heap trace of the fuzz corpus and a
# .nettrace fixture); the last test records one live where the .NET SDK
# (dotnet) is installed.
load view-helpers

ND="$DATA/dotnet"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	cp "$HS_SRC/tests/fuzz/corpus/fuzz_trace/sites.heapscope" app.4242.heapscope
	cp "$ND/allocs.nettrace" app.4242.nettrace
	cp "$HS_SRC/tests/fuzz/corpus/fuzz_trace/sites.heapscope" alone.77.heapscope
}

teardown() {
	view_stop
	rm -f "$BATS_FILE_TMPDIR/view.pid"
}

@test "sibling: --list-sources adds the .nettrace's sources and how to read them" {
	hs report app.4242.heapscope --list-sources
	[ "$status" -eq 0 ]
	hs report alone.77.heapscope --list-sources
	[ "$status" -eq 0 ]
	alone=$output
	[[ "$alone" != *nettrace* ]]
	hs report app.4242.heapscope --list-sources
	# the heap trace's own sources first, unchanged
	[ "${output:0:${#alone}}" = "$alone" ]
	[[ "$output" == *"(the .NET runtime's events recorded beside it, in app.4242.nettrace:)"* ]]
	grep -q '^gc-alloc ' <<< "$output"
	grep -q '^thread-time ' <<< "$output"
	[[ "$output" == *"(read them with: heapscope report app.4242.nettrace --source gc-alloc)"* ]]
}

@test "sibling: --source gc-alloc on the heap trace names the .nettrace" {
	hs report app.4242.heapscope --source gc-alloc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown source 'gc-alloc'"* ]]
	[[ "$stderr" == *"the .NET events recorded beside it have it: heapscope report app.4242.nettrace --source gc-alloc"* ]]
	hs report app.4242.heapscope --source events:Microsoft-Windows-DotNETRuntime/Exception/Start
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"heapscope report app.4242.nettrace --source events:"* ]]
	# a source neither has: the heap trace's error alone
	hs report app.4242.heapscope --source nosuch
	[ "$status" -eq 2 ]
	[[ "$stderr" != *nettrace* ]]
	hs report alone.77.heapscope --source gc-alloc
	[ "$status" -eq 2 ]
	[[ "$stderr" != *nettrace* ]]
}

@test "sibling: view serves the .nettrace as a second trace, and says so" {
	dir=$BATS_TEST_TMPDIR
	view_start "$dir/app.4242.heapscope"
	view_setup
	[ "$(cat view.err)" = "heapscope: also serving $dir/app.4242.nettrace, the .NET runtime's events recorded beside $dir/app.4242.heapscope" ]
	get /api/info
	[ "$(jq -r '.traces | length' <<< "$output")" = 2 ]
	[ "$(jq -r '.traces[0].name' <<< "$output")" = app.4242.heapscope ]
	[ "$(jq -r '.traces[1].name' <<< "$output")" = app.4242.nettrace ]
	[ "$(jq -c '[.traces[1].sources[].name]' <<< "$output")" = \
	  '["gc-alloc","thread-time","events"]' ]
	# the managed view is the .nettrace's own report
	same "$dir/app.4242.nettrace" 1 view=byname
}

@test "sibling: view does not add it twice, nor beside a lone heap trace" {
	dir=$BATS_TEST_TMPDIR
	view_start "$dir/app.4242.heapscope" "$dir/app.4242.nettrace" "$dir/alone.77.heapscope"
	view_setup
	[ ! -s view.err ]
	get /api/info
	[ "$(jq -r '.traces | length' <<< "$output")" = 3 ]
	[ "$(jq -r '.traces[1].name' <<< "$output")" = app.4242.nettrace ]
}

@test "sibling: view --from reads every FILE as given, without the .nettrace" {
	dir=$BATS_TEST_TMPDIR
	view_start "$dir/app.4242.heapscope" --from heapscope
	view_setup
	get /api/info
	[ "$(jq -r '.traces | length' <<< "$output")" = 1 ]
}

@test "sibling: live, run --dotnet then view and --list-sources of the heap trace" {
	command -v dotnet > /dev/null ||
		skip "dotnet (the .NET SDK) is not installed: the live recording needs it"
	dir=$BATS_TEST_TMPDIR
	dotnet_build dotnet
	hs run -q --no-view --no-symbolize -- dotnet out/allocs.dll 1
	[ "$status" -eq 0 ]
	trace=$(ls ./*.heapscope | grep -v -e app.4242 -e alone.77)
	trace=${trace#./}
	nettrace=${trace%.heapscope}.nettrace
	[ -s "$nettrace" ]
	hs report "$trace" --list-sources
	[ "$status" -eq 0 ]
	grep -q '^gc-alloc ' <<< "$output"
	[[ "$output" == *"heapscope report $nettrace --source gc-alloc"* ]]
	view_start "$dir/$trace"
	view_setup
	[[ "$(cat view.err)" == *"also serving $dir/$nettrace"* ]]
	get /api/info
	[ "$(jq -r '.traces | length' <<< "$output")" = 2 ]
	[ "$(jq -r '.traces[1].name' <<< "$output")" = "$nettrace" ]
	same "$dir/$nettrace" 1 view=byname
}
