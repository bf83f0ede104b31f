#!/usr/bin/env bats
# .NET EventPipe traces (.nettrace, .nettrace.zip) read from the fixtures
# recorded from tests/targets/dotnet (tests/data/dotnet; the program's own
# totals are in allocs.truth). docs/dotnet.md says what each source is.
load helpers

ND="$DATA/dotnet"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# truth KEY: the program's own number for KEY
truth() {
	awk -v k="$1" '$1 == k { print $2 }' "$ND/allocs.truth"
}

# near NAME CSV: whether frame NAME's inclusive bytes in CSV are within two
# AllocationTick intervals (about 100 KB each) of TRUTH
near() {
	between "$(col "$1" 6 "$2")" "$(($3 - 212992))" "$(($3 + 212992))"
}

@test "nettrace: gc-alloc bytes by type are the program's, within the tick error" {
	"$HS_BIN" report "$ND/allocs.nettrace" --view byname --format csv > v.csv
	near "Type Allocs.Foo" v.csv "$(truth foo_bytes)"
	near "Type System.String" v.csv "$(truth string_bytes)"
	near "LargeObject" v.csv "$(truth array_bytes)"
	[ "$(col LargeObject 7 v.csv)" = "$(truth array_count)" ]
	near "allocs!Allocs.Program.AllocateFoos(int32)" v.csv "$(truth foo_bytes)"
	near "allocs!Allocs.Program.AllocateLargeArrays(int32)" v.csv "$(truth array_bytes)"
}

@test "nettrace: the call tree goes process, thread, methods, type, LargeObject" {
	hs report "$ND/allocs.nettrace" --view callers --focus LargeObject --format csv
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^1,Type System.Byte\[\],'
	echo "$output" | grep -q '^2,allocs!Allocs.Program.AllocateLargeArrays(int32),'
	hs report "$ND/allocs.nettrace" --view calltree --format csv
	echo "$output" | grep -q '^1,Process dotnet ([0-9]*),'
	echo "$output" | grep -q '^2,Thread ([0-9]*),'
}

@test "nettrace: a zipped trace with its rundown names the framework's methods" {
	"$HS_BIN" report "$ND/allocs-rundown.nettrace.zip" --view byname --format csv > v.csv
	near "Type Allocs.Foo" v.csv "$(truth foo_bytes)"
	grep -q '^"System.Private.CoreLib!System.String.Ctor(wchar,int32)",' v.csv
	# and from standard input, which is spooled to a file for the zip
	"$HS_BIN" report - --view byname --format csv < "$ND/allocs-rundown.nettrace.zip" > s.csv
	cmp v.csv s.csv
}

@test "nettrace: --list-sources offers what the file holds" {
	hs report "$ND/allocs.nettrace" --list-sources
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk '{print $1}' | tr '\n' ' ')" = "gc-alloc thread-time events " ]
	hs report "$ND/allocs-sampled.nettrace" --list-sources
	echo "$output" | grep -q '^gc-alloc-sampled '
}

@test "nettrace: thread-time is in ms with CPU_TIME and UNMANAGED_CODE_TIME leaves" {
	"$HS_BIN" report "$ND/allocs.nettrace" --source thread-time --view byname \
		--format csv > v.csv
	between "$(col CPU_TIME 3 v.csv)" 100 10000
	between "$(col UNMANAGED_CODE_TIME 3 v.csv)" 1 10000
	# the three spinners spin 100 ms each
	between "$(col 'allocs!Allocs.Program.Spin(class System.Object)' 6 v.csv)" 100 10000
}

@test "nettrace: events:PROVIDER/EVENT holds that event's stacks" {
	hs report "$ND/allocs.nettrace" \
		--source events:Microsoft-Windows-DotNETRuntime/Exception/Start \
		--view callers --focus "Event Microsoft-Windows-DotNETRuntime/Exception/Start" \
		--format csv
	[ "$status" -eq 0 ]
	hs report "$ND/allocs.nettrace" \
		--source events:Microsoft-Windows-DotNETRuntime/Exception/Start --view byname \
		--format csv
	[ "$(col 'allocs!Allocs.Program.ThrowNullReference()' 7 <(echo "$output"))" = 1 ]
	hs report "$ND/allocs.nettrace" --source events:No/Such
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no stacks of event 'No/Such'"* ]]
}

@test "nettrace: a cut-off file keeps what was read and says where it stops" {
	head -c 30000 "$ND/allocs.nettrace" > cut.nettrace
	hs report cut.nettrace --view byname --format csv
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"cut off at offset 30000"* ]]
	echo "$output" | grep -q '^Type '
}

@test "nettrace: garbage is an error that names its offset" {
	cp "$ND/allocs.nettrace" bad.nettrace
	# the first object after the 32-byte header and the 70-byte Trace object
	printf '\x09' | dd of=bad.nettrace bs=1 seek=102 conv=notrunc status=none
	hs report bad.nettrace
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"offset 102: expected an object"* ]]
	printf 'Nettrace junk' > junk.nettrace
	hs report junk.nettrace
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"offset 0: not a nettrace stream"* ]]
}
