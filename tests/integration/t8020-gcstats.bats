#!/usr/bin/env bats
# `heapscope gcstats`: PerfView's GCStats of a .nettrace. The fixtures were
# recorded from tests/targets/dotnet, which calls GC.Collect() three times
# and has no other GC (allocs.truth: gc_count 3); the live test records
# the program at a larger scale and compares with the GC.CollectionCount(0)
# it prints. The live part is skipped where dotnet is not installed.
load helpers

ND="$DATA/dotnet"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

truth() {
	awk -v k="$1" '$1 == k { print $2 }' "${2:-$ND/allocs.truth}"
}

# jget FILE EXPR: a Python expression of the JSON in FILE (as d)
jget() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

@test "gcstats: the fixture's GC count is the program's, all induced gen2" {
	hs gcstats "$ND/allocs.nettrace"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "^GCs: *$(truth gc_count) ($(truth collects) induced)$"
	echo "$output" | grep -q '^GC Rollup By Generation$'
	echo "$output" | grep -q '^GC Events by Time$'
	# three rows of 2N induced GCs, numbered 1 to 3
	[ "$(echo "$output" | grep -cE '^ +[123] +[0-9.]+ Induced +2N NonConcurrentGC ')" -eq 3 ]
	echo "$output" | grep -qE '^2 +3 '
	echo "$output" | grep -qE '^total allocated: +7\.[0-9]+ MB'
	echo "$output" | grep -q '^sizes before GCs: *from GCPerHeapHistory$'
}

@test "gcstats: JSON has one entry per GC and a consistent summary" {
	"$HS_BIN" gcstats --format json "$ND/allocs.nettrace" > g.json
	[ "$(jget g.json 'len(d["gcs"])')" = "$(truth gc_count)" ]
	[ "$(jget g.json 'd["summary"]["gc_count"]')" = "$(truth gc_count)" ]
	[ "$(jget g.json 'd["summary"]["induced"]')" = "$(truth collects)" ]
	[ "$(jget g.json 'abs(sum(g["pause_ms"] for g in d["gcs"]) - d["summary"]["total_pause_ms"]) < 1e-6')" = True ]
	[ "$(jget g.json 'max(g["pause_ms"] for g in d["gcs"]) == d["summary"]["max_pause_ms"]')" = True ]
	[ "$(jget g.json 'all(0 <= g["suspend_ms"] <= g["pause_ms"] for g in d["gcs"])')" = True ]
	[ "$(jget g.json '[g["generation"] for g in d["gcs"]]')" = "[2, 2, 2]" ]
	[ "$(jget g.json '[g["kind"] for g in d["gcs"]]')" = "['NonConcurrentGC', 'NonConcurrentGC', 'NonConcurrentGC']" ]
	[ "$(jget g.json 'd["rollup"][3]["count"]')" = 3 ]
	# the large arrays were allocated before the first GC: 2,000,240 bytes
	[ "$(jget g.json 'abs(d["gcs"][0]["large_alloc_mb"] - 2.00024) < 0.2')" = True ]
	[ "$(jget g.json 'd["gcs"][0]["generations"]["poh"]["size_mb"] > 0')" = True ]
}

@test "gcstats: the zipped and the AllocationSampled fixtures" {
	"$HS_BIN" gcstats --format json "$ND/allocs-rundown.nettrace.zip" > z.json
	[ "$(jget z.json 'd["summary"]["gc_count"]')" = 3 ]
	"$HS_BIN" gcstats --format json - < "$ND/allocs-rundown.nettrace.zip" > s.json
	[ "$(jget s.json 'd["summary"]["total_pause_ms"]')" = "$(jget z.json 'd["summary"]["total_pause_ms"]')" ]
	hs gcstats "$ND/allocs-sampled.nettrace"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^total allocated: *unknown (no AllocationTick events'
	"$HS_BIN" gcstats --format json "$ND/allocs-sampled.nettrace" > n.json
	[ "$(jget n.json 'd["summary"]["total_allocated_mb"]')" = None ]
}

@test "gcstats: background GCs, and foreground GCs while they run" {
	# tests/targets/dotnet-bgc: three requested background GCs, 1 MB gen0
	"$HS_BIN" gcstats --format json "$ND/bgc.nettrace.zip" > b.json
	[ "$(jget b.json 'd["summary"]["gc_count"]')" = "$(truth gen0 "$ND/bgc.truth")" ]
	[ "$(jget b.json 'd["rollup"][3]["count"]')" = "$(truth gen2 "$ND/bgc.truth")" ]
	[ "$(jget b.json 'sum(g["kind"] == "BackgroundGC" for g in d["gcs"])')" = 3 ]
	[ "$(jget b.json 'sum(g["kind"] == "ForegroundGC" for g in d["gcs"]) >= 2')" = True ]
	hs gcstats "$ND/bgc.nettrace.zip"
	[ "$(echo "$output" | grep -cE ' InducedNotForced +2B BackgroundGC ')" -eq 3 ]
	echo "$output" | grep -qE ' AllocSmall +0F ForegroundGC '
}

@test "gcstats: HTML is one page with both tables and nothing external" {
	"$HS_BIN" gcstats --format html "$ND/allocs.nettrace" > g.html
	grep -q '^<!DOCTYPE html>' g.html
	grep -q '<h2>GC Rollup By Generation</h2>' g.html
	grep -q '<h2>GC Events by Time</h2>' g.html
	[ "$(grep -o '<td class="l">Induced</td>' g.html | wc -l)" -eq 3 ]
	! grep -qiE '(src|href)=|@import|url\(' g.html || false
	python3 -c 'import html.parser, sys; html.parser.HTMLParser().feed(open(sys.argv[1]).read())' g.html
}

@test "gcstats: a cut-off trace keeps the GCs before the cut, with a warning" {
	head -c 45000 "$ND/allocs.nettrace" > cut.nettrace
	hs gcstats --format json cut.nettrace
	[ "$status" -eq 0 ]
	echo "$stderr" | grep -q 'cut off at offset'
}

@test "gcstats: clear errors for what is not a .nettrace" {
	printf 'not a trace\n' > x.txt
	hs gcstats x.txt
	[ "$status" -eq 1 ]
	[ "$stderr" = "heapscope: error: gcstats reads .nettrace files (EventPipe traces of .NET programs, plain or zipped); x.txt is not one" ]
	hs gcstats missing.nettrace
	[ "$status" -eq 1 ]
	echo "$stderr" | grep -q 'missing.nettrace'
	hs gcstats --format xml "$ND/allocs.nettrace"
	[ "$status" -eq 2 ]
	echo "$stderr" | grep -q "unknown format 'xml'"
	hs gcstats
	[ "$status" -eq 2 ]
	hs help gcstats
	[ "$status" -eq 0 ]
	echo "$output" | grep -q -- '--format F'
}

@test "gcstats: live, the GC count is the program's GC.CollectionCount" {
	command -v dotnet > /dev/null ||
		skip "dotnet (the .NET SDK) is not installed: the live GCStats test needs it"
	dotnet_build dotnet
	# scale 20: 50 MB allocated, so the runtime collects on its own too
	DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$PWD/live.nettrace" \
	DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x1:5' \
		dotnet out/allocs.dll 20 > truth.txt
	"$HS_BIN" gcstats --format json live.nettrace > l.json
	[ "$(jget l.json 'd["summary"]["gc_count"]')" = "$(truth gc_count truth.txt)" ]
	[ "$(jget l.json 'd["summary"]["incomplete"]')" = 0 ]
	[ "$(jget l.json 'd["summary"]["induced"]')" -ge "$(truth collects truth.txt)" ]
}
