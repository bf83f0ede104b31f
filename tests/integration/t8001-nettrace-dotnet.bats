#!/usr/bin/env bats
# A live .NET program (tests/targets/dotnet) recorded with the runtime's
# own EventPipe variables, then read: the bytes per type, the large-object
# frames and the method names against what the program says it allocated.
# Skipped where the .NET SDK (dotnet) is not installed.
load helpers

setup_file() {
	command -v dotnet > /dev/null || return 0
	cd "$BATS_FILE_TMPDIR" || return 1
	dotnet_build dotnet || return 1
	# scale 2: twice the counts of the committed fixtures
	DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$PWD/live.nettrace" \
	DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x4000C019:5,Microsoft-DotNETCore-SampleProfiler:0:5' \
		dotnet out/allocs.dll 2 > truth.txt
}

setup() {
	command -v dotnet > /dev/null ||
		skip "dotnet (the .NET SDK) is not installed: the live .NET tests need it"
	cd "$BATS_FILE_TMPDIR" || return 1
}

truth() {
	awk -v k="$1" '$1 == k { print $2 }' truth.txt
}

near() {
	between "$(col "$1" 6 "$2")" "$(($3 - 212992))" "$(($3 + 212992))"
}

@test "dotnet: the program ran and the trace was written" {
	[ "$(truth caught)" = 1 ]
	[ "$(truth gc_count)" -ge "$(truth collects)" ]
	[ -s live.nettrace ]
}

@test "dotnet: each type's bytes are within the tick error of the truth" {
	"$HS_BIN" report live.nettrace --view byname --format csv > v.csv
	near "Type Allocs.Foo" v.csv "$(truth foo_bytes)"
	near "Type System.String" v.csv "$(truth string_bytes)"
	near "LargeObject" v.csv "$(truth array_bytes)"
	[ "$(col LargeObject 7 v.csv)" = "$(truth array_count)" ]
}

@test "dotnet: the allocating methods are named in the stacks" {
	"$HS_BIN" report live.nettrace --view byname --format csv > v.csv
	near "allocs!Allocs.Program.AllocateFoos(int32)" v.csv "$(truth foo_bytes)"
	near "allocs!Allocs.Program.AllocateStrings(int32)" v.csv "$(truth string_bytes)"
	near "allocs!Allocs.Program.AllocateLargeArrays(int32)" v.csv "$(truth array_bytes)"
}

@test "dotnet: the spinning threads show in thread time, and the exception in events" {
	"$HS_BIN" report live.nettrace --source thread-time --view byname --format csv > t.csv
	between "$(col 'allocs!Allocs.Program.Spin(class System.Object)' 6 t.csv)" 100 100000
	"$HS_BIN" report live.nettrace --source events:Microsoft-Windows-DotNETRuntime/Exception/Start \
		--view byname --format csv > e.csv
	[ "$(col 'allocs!Allocs.Program.ThrowNullReference()' 7 e.csv)" = 1 ]
}

# dotnet_trace: dotnet-trace on PATH or where `dotnet tool install -g` puts it
dotnet_trace() {
	command -v dotnet-trace 2> /dev/null ||
		{ [ -x "$HOME/.dotnet/tools/dotnet-trace" ] && echo "$HOME/.dotnet/tools/dotnet-trace"; }
}

@test "dotnet: a trace dotnet-trace records of the same program gives the same totals" {
	local dt
	dt=$(dotnet_trace) ||
		skip "dotnet-trace is not installed (dotnet tool install -g dotnet-trace)"
	"$dt" collect -o dt.nettrace --show-child-io \
		--providers 'Microsoft-Windows-DotNETRuntime:0x4000C019:5,Microsoft-DotNETCore-SampleProfiler' \
		-- dotnet out/allocs.dll 2 > dt.out 2>&1
	grep -q '^caught 1' dt.out
	"$HS_BIN" report dt.nettrace --view byname --format csv > d.csv
	"$HS_BIN" report live.nettrace --view byname --format csv > v.csv
	near "Type Allocs.Foo" d.csv "$(truth foo_bytes)"
	near "Type System.String" d.csv "$(truth string_bytes)"
	[ "$(col LargeObject 7 d.csv)" = "$(col LargeObject 7 v.csv)" ]
	[ "$(col LargeObject 6 d.csv)" = "$(col LargeObject 6 v.csv)" ]
	near "allocs!Allocs.Program.AllocateFoos(int32)" d.csv \
		"$(col 'allocs!Allocs.Program.AllocateFoos(int32)' 6 v.csv)"
}
