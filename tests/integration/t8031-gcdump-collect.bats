#!/usr/bin/env bats
# `heapscope gcdump PID`: a heap snapshot taken over the diagnostic port.
# Without dotnet, only the failures run. The live test snapshots
# tests/targets/dotnet-heap (1,000 nodes: tests/data/dotnet/heap.md), checks
# the known graph in heapscope's views, that dotnet-gcdump report reads the
# file and prints the same type table as heapscope stats, and that a
# snapshot by dotnet-gcdump collect of the same process agrees.
load helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# "COUNT NAME" per type with bytes, from the type table of `heapscope
# stats` or `dotnet-gcdump report` in file $1, sorted.
type_counts() {
	awk '/Object Bytes/ { on = 1; next }
	     on && NF == 0 { on = 0 }
	     on { b = $1; gsub(",", "", b); c = $2; gsub(",", "", c)
	          if (b + 0 == 0) next
	          $1 = ""; $2 = ""; sub(/^ +/, ""); print c, $0 }' "$1" | sort
}

# The number on the line of `report` output $1 that ends with $2.
report_total() {
	awk -v k="$2" 'index($0, k) { gsub(",", "", $1); print $1 }' "$1"
}

@test "gcdump: a process that is not .NET fails clearly, and leaves no file" {
	hs gcdump -o x.gcdump $$
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"process $$ ("*") is not a .NET process: it has no diagnostic socket"* ]]
	[ ! -e x.gcdump ]
	hs gcdump 2147483647
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no process 2147483647"* ]]
	hs gcdump
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"give its PID"* ]]
	hs gcdump 12x
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'12x' is not a process id"* ]]
}

@test "gcdump: live snapshot of dotnet-heap: known graph, dotnet-gcdump agrees" {
	PATH="$PATH:$HOME/.dotnet/tools"
	command -v dotnet > /dev/null ||
		skip "dotnet (the .NET SDK) is not installed: the live .NET tests need it"
	dotnet_build dotnet-heap
	dotnet out/dotnet-heap.dll "$PWD/go" > ready.txt &
	for _ in $(seq 100); do grep -q ready ready.txt && break; sleep 0.2; done
	pid=$(awk '/ready/ { print $2 }' ready.txt)
	hs gcdump "$pid" -o x.gcdump
	gcdump_status=$status
	gcdump_stderr=$stderr
	have_tool=0
	if command -v dotnet-gcdump > /dev/null; then
		have_tool=1
		dotnet-gcdump collect -p "$pid" -o ref.gcdump > collect.log 2>&1
	fi
	touch go
	wait
	echo "$gcdump_stderr"
	[ "$gcdump_status" -eq 0 ]
	[[ "$gcdump_stderr" == *"objects, "*" bytes, "*" types in "*" written to x.gcdump"* ]]
	# an existing file is not overwritten
	hs gcdump "$pid" -o x.gcdump
	[ "$status" -eq 1 ]

	hs stats x.gcdump
	[ "$status" -eq 0 ]
	echo "$output" > x.stats
	echo "$output" | grep -E "^ +32000 +1000  Node  \[dotnet-heap.dll\]$"
	echo "$output" | grep -E "^ +1024000 +1000  System.Byte\[\] \(Bytes > 1K\)  \[System.Private.CoreLib.dll\]$"
	echo "$output" | grep -E "^ +2400 +100  CacheEntry  \[dotnet-heap.dll\]$"
	# the static list retains its array, its nodes and their payloads
	echo "$output" | grep -A1 "Largest retainers" | grep -E "1064248 .*List<Node>"
	! echo "$output" | grep -q "Garbage  " || false
	echo "$output" | grep -F "[static var System.Collections.Generic.List<Node>.Nodes]"
	hs report x.gcdump --source retained --format csv
	[ "$status" -eq 0 ]
	echo "$output" > retained.csv
	[ "$(col 'System.Private.CoreLib.dll!System.Collections.Generic.List<Node>' 6 retained.csv)" = 1064248 ]

	[ "$have_tool" -eq 1 ] ||
		skip "dotnet-gcdump is not installed (dotnet tool install -g dotnet-gcdump): not compared"
	# dotnet-gcdump reads heapscope's file: the same totals and type table
	dotnet-gcdump report x.gcdump > x.report.txt
	grep -E "^ +$(report_total x.report.txt "GC Heap bytes")  GC Heap bytes$" x.stats
	grep -E "^ +$(report_total x.report.txt "GC Heap objects")  GC Heap objects$" x.stats
	type_counts x.stats > x.types
	type_counts x.report.txt > x.report.types
	[ "$(wc -l < x.types)" -gt 50 ]
	diff x.types x.report.types
	# dotnet-gcdump's own snapshot of the process, taken just after: the
	# program's graph is the same
	hs stats ref.gcdump
	[ "$status" -eq 0 ]
	echo "$output" | grep -E "^ +32000 +1000  Node  \[dotnet-heap.dll\]$"
	echo "$output" | grep -E "^ +1024000 +1000  System.Byte\[\] \(Bytes > 1K\)  \[System.Private.CoreLib.dll\]$"
	echo "$output" | grep -E "^ +2400 +100  CacheEntry  \[dotnet-heap.dll\]$"
	echo "$output" | grep -A1 "Largest retainers" | grep -E "1064248 .*List<Node>"
}
