#!/usr/bin/env bats
# .NET heap snapshots (.gcdump): `stats` against what `dotnet-gcdump report`
# printed for the committed fixtures (tests/data/dotnet/heap.md), the heap
# and retained views, `diff` of two snapshots, and damaged files. The live
# test records a snapshot of tests/targets/dotnet-heap and compares with
# dotnet-gcdump itself; it is skipped without dotnet and dotnet-gcdump.
load helpers

D="$HS_SRC/tests/data/dotnet"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# The number on the line of `report` output $1 that ends with $2.
report_total() {
	awk -v k="$2" 'index($0, k) { gsub(",", "", $1); print $1 }' "$1"
}

@test "gcdump: stats prints the report's totals and the type table" {
	hs stats "$D/heap-1000.gcdump"
	[ "$status" -eq 0 ]
	bytes=$(report_total "$D/heap-1000.report.txt" "GC Heap bytes")
	objects=$(report_total "$D/heap-1000.report.txt" "GC Heap objects")
	[ "$bytes" = 1182922 ]
	echo "$output" | grep -E "^ +$bytes  GC Heap bytes$"
	echo "$output" | grep -E "^ +$objects  GC Heap objects$"
	# types with their total bytes, largest first: the payloads lead
	echo "$output" | grep -A1 "Object Bytes" | grep -E "1024000 +1000  System.Byte\[\] \(Bytes > 1K\)"
	echo "$output" | grep -E "^ +32000 +1000  Node  \[dotnet-heap.dll\]$"
	# the largest retainer is the static list: all of its nodes and payloads
	echo "$output" | grep -A1 "Largest retainers" | grep -E "1064248 .*List<Node>"
	! echo "$output" | grep -q "Garbage  " || false
}

@test "gcdump: stats --format json" {
	hs stats "$D/heap-1500.gcdump" --format json --top 3
	[ "$status" -eq 0 ]
	[[ "$output" == *'"objects": 3542'* ]]
	[[ "$output" == *'"bytes": 1719114'* ]]
	[ "$(echo "$output" | grep -c '"retained_bytes"')" -eq 3 ]
}

@test "gcdump: heap view by type, retained view by dominator" {
	hs report "$D/heap-1000.gcdump" --format csv
	[ "$status" -eq 0 ]
	echo "$output" > byname.csv
	[ "$(col 'System.Private.CoreLib.dll!System.Byte[] (Bytes > 1K)' 3 byname.csv)" = 1024000 ]
	[ "$(col 'dotnet-heap.dll!Node' 4 byname.csv)" = 1000 ]
	hs report "$D/heap-1000.gcdump" --source retained --format csv
	[ "$status" -eq 0 ]
	echo "$output" > retained.csv
	[ "$(col 'System.Private.CoreLib.dll!System.Collections.Generic.List<Node>' 6 retained.csv)" = 1064248 ]
	hs report "$D/heap-1000.gcdump" --list-sources
	[[ "$output" == *heap*retained* ]]
}

@test "gcdump: heap-retained has the heap view's paths and retained bytes, no When" {
	hs report "$D/heap-1000.gcdump" --source heap-retained --format csv
	[ "$status" -eq 0 ]
	echo "$output" > hr.csv
	# Exc: what the objects of that name retain, each counted on its own path
	[ "$(col 'System.Private.CoreLib.dll!System.Collections.Generic.List<Node>' 3 hr.csv)" = 1064248 ]
	[ "$(col 'dotnet-heap.dll!Node' 3 hr.csv)" = 1056000 ]
	[ "$(col 'dotnet-heap.dll!Node' 4 hr.csv)" = 1000 ]
	# a snapshot has no times: the When column (11th) is empty on every row
	[ "$(tail -n +2 hr.csv | grep -v '^"' | cut -d, -f11 | sort -u)" = "" ]
	hs report "$D/heap-1000.gcdump" --list-sources
	[[ "$output" == *heap-retained* ]]
}

@test "gcdump: the perfview heap preset folds arrays and strings, drops orphans" {
	hs report "$D/heap-1000.gcdump" --view calltree --format csv
	[ "$status" -eq 0 ]
	echo "$output" > tree.csv
	grep -F ",[not reachable from roots]," tree.csv
	hs report "$D/heap-1000.gcdump" --preset "perfview heap" --format csv
	[ "$status" -eq 0 ]
	echo "$output" > byname.csv
	# each node's byte[1000] is charged to the node: 32000 + 1024000 bytes
	[ "$(col 'dotnet-heap.dll!Node' 3 byname.csv)" = 1056000 ]
	[ "$(col 'dotnet-heap.dll!Node' 8 byname.csv)" = 1024000 ]
	# the list's Node[] is folded into the list, a framework type: LIB
	[ "$(col 'LIB <<System.Private.CoreLib.dll!System.Collections.Generic.List<Node>>>' 6 byname.csv)" = 1064248 ]
	# no array and no string is left on its own, no orphan in the totals
	! grep -F '[]' byname.csv || false
	! grep -E '!System\.String[,"]' byname.csv || false
	! grep -F "not reachable" byname.csv || false
	# (a CallTree row starts with its depth)
	orphans=$(awk -F, '$2 == "[not reachable from roots]" { print $7 }' tree.csv)
	[ "$orphans" -gt 0 ]
	hs report "$D/heap-1000.gcdump"
	all=$(echo "$output" | awk '/^Totals Metric:/ { print $3 }')
	hs report "$D/heap-1000.gcdump" --preset "perfview heap"
	kept=$(echo "$output" | awk '/^Totals Metric:/ { print $3 }')
	[ "$kept" -eq $((all - orphans)) ]
	# what the command line gives wins over the preset's ExcPats
	hs report "$D/heap-1000.gcdump" --preset "perfview heap" --exc "" --format csv
	echo "$output" | grep -F "[not reachable from roots]"
	hs report --list-presets
	echo "$output" | grep -A4 -F "[perfview heap]" | grep -F "ExcPats: [not reachable from roots]"
}

@test "gcdump: diff of two snapshots shows what grew" {
	hs diff "$D/heap-1000.gcdump" "$D/heap-1500.gcdump" --format csv
	[ "$status" -eq 0 ]
	echo "$output" > diff.csv
	# 500 more nodes of 32 bytes, each with a 1024-byte payload, and the
	# list's array grown from 1024 to 2048 slots: 8 KB more
	[ "$(col 'System.Private.CoreLib.dll!System.Byte[] (Bytes > 1K)' 3 diff.csv)" = 512000 ]
	[ "$(col 'dotnet-heap.dll!Node' 3 diff.csv)" = 16000 ]
	[ "$(col 'dotnet-heap.dll!Node[] (Bytes > 10K)' 3 diff.csv)" = 16408 ]
	[ "$(col 'dotnet-heap.dll!Node[] (Bytes > 1K)' 3 diff.csv)" = -8216 ]
}

@test "gcdump: a cut-off or damaged snapshot is an error naming an offset" {
	head -c 60100 "$D/heap-1000.gcdump" > cut.gcdump
	hs stats cut.gcdump
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cut.gcdump: offset 600"*": cut off: the file ends inside"* ]]
	# a count larger than what is left is found before reading on
	head -c 30000 "$D/heap-1000.gcdump" > cut.gcdump
	hs report cut.gcdump
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cut.gcdump: offset "*"bytes left"* ]]
	cp "$D/heap-1000.gcdump" bad.gcdump
	printf '\377\377\377\177' | dd of=bad.gcdump bs=1 seek=96 conv=notrunc 2> /dev/null
	hs report bad.gcdump
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"offset 96: bad type count"* ]]
}

@test "gcdump: dotnet-gcdump report still prints the committed reports" {
	PATH="$PATH:$HOME/.dotnet/tools"
	command -v dotnet-gcdump > /dev/null ||
		skip "dotnet-gcdump is not installed (dotnet tool install -g dotnet-gcdump)"
	for f in heap-1000 heap-1500; do
		DOTNET_CLI_TELEMETRY_OPTOUT=1 dotnet-gcdump report "$D/$f.gcdump" > "$f.txt"
		diff "$D/$f.report.txt" "$f.txt"
	done
}

@test "gcdump: live snapshot agrees with dotnet-gcdump report" {
	PATH="$PATH:$HOME/.dotnet/tools"
	command -v dotnet > /dev/null ||
		skip "dotnet (the .NET SDK) is not installed: the live .NET tests need it"
	command -v dotnet-gcdump > /dev/null ||
		skip "dotnet-gcdump is not installed (dotnet tool install -g dotnet-gcdump)"
	dotnet_build dotnet-heap
	dotnet out/dotnet-heap.dll "$PWD/go" 1200 > ready.txt &
	for _ in $(seq 100); do grep -q ready ready.txt && break; sleep 0.2; done
	pid=$(awk '/ready/ { print $2 }' ready.txt)
	dotnet-gcdump collect -p "$pid" -o live.gcdump > collect.log 2>&1
	touch go
	wait
	dotnet-gcdump report live.gcdump > live.report.txt
	hs stats live.gcdump
	[ "$status" -eq 0 ]
	echo "$output" | grep -E "^ +$(report_total live.report.txt "GC Heap bytes")  GC Heap bytes$"
	echo "$output" | grep -E "^ +$(report_total live.report.txt "GC Heap objects")  GC Heap objects$"
	echo "$output" | grep -E "^ +38400 +1200  Node  \[dotnet-heap.dll\]$"
}
