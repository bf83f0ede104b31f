#!/usr/bin/env bats
# `heapscope view`: the stack sources of a file — perf script's cpu and
# thread-time, a heap trace's memory views (with the time range of leaks
# and peak) — give the report's JSON; a heap trace's stats and its heap
# and RSS timelines.

bats_require_minimum_version 1.5.0
load view-helpers

R="$DATA/report"

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q --no-view -o m.heapscope -- "$HS_BUILD/tests/targets/memtest" > m.out
	view_start "$R/cpu.data.txt" m.heapscope
}

teardown_file() {
	view_stop
}

setup() {
	view_setup
}

@test "info lists each file's sources" {
	get /api/info
	[ "$(jq -c '[.traces[0].sources[].name]' <<< "$output")" = '["cpu","thread-time"]' ]
	[ "$(jq -c '[.traces[1].sources[].name]' <<< "$output")" = \
	  '["alloc","net","leaks","peak","temporary","mmap"]' ]
	[ "$(jq '.traces[1].heap' <<< "$output")" = true ]
	[ "$(jq '.traces[1].sources[0].loaded' <<< "$output")" = true ]
}

@test "perf script: cpu and thread-time are the report's" {
	same "$R/cpu.data.txt" 0 view=calltree
	same "$R/cpu.data.txt" 0 source=thread-time view=calltree
	same "$R/cpu.data.txt" 0 source=thread-time view=byname fold_pct=5
}

@test "a heap trace: every memory view is the report's" {
	for s in alloc net leaks peak temporary mmap; do
		same m.heapscope 1 "source=$s"
	done
	same m.heapscope 1 source=net view=calltree
}

@test "leaks and peak of a time range are the report's" {
	end=$(jq '.peak_heap_ms' <<< "$("$HS_BIN" stats m.heapscope --format json)")
	same m.heapscope 1 source=leaks start=0 "end=$end"
	same m.heapscope 1 source=peak start=0 "end=$end" view=calltree
	same m.heapscope 1 source=net start=0 "end=$end"
}

@test "peak of a range that holds no event is the heap as it was, as the report gives it" {
	"$HS_BIN" stats m.heapscope --format json > stats.json
	start=$(jq '.duration_ms + 10' stats.json)
	same m.heapscope 1 source=peak "start=$start" view=calltree
	# after the last event: what was live at the end
	[ "$(jq '.summary.metric' api.json)" = \
	  "$(jq '.leaked_bytes + .suppressed_leaked_bytes' stats.json)" ]
	[ "$(jq '.summary.metric' api.json)" -gt 0 ]
}

@test "a heap trace's stats and its heap and RSS timelines" {
	"$HS_BIN" stats m.heapscope --format json > stats.json
	get /api/stats trace=1
	for k in total_allocations total_frees peak_heap_bytes leaked_bytes peak_rss_bytes; do
		[ "$(jq ".heap.$k" <<< "$output")" = "$(jq ".$k" stats.json)" ]
	done
	output=$(curl -s -b "$COOKIE" -d '{"trace":1,"buckets":50}' "$BASE/api/timeline")
	[ "$(jq '.heap | length' <<< "$output")" -ge 1 ]
	[ "$(jq '.rss | length' <<< "$output")" -ge 1 ]
	[ "$(jq '[.heap[][1]] | max' <<< "$output")" = "$(jq '.peak_heap_bytes' stats.json)" ]
	# not a heap trace: no heap series
	output=$(curl -s -b "$COOKIE" -d '{"trace":0}' "$BASE/api/timeline")
	[ "$(jq 'has("heap")' <<< "$output")" = false ]
}

@test "a source the file does not offer is a 404 with the reason" {
	get /api/view trace=0 source=leaks
	jq -e '.error | test("no source .leaks.")' <<< "$output"
	get /api/view trace=1 source=nope
	jq -e '.error' <<< "$output"
}

# source_same FUNCTION SOURCE: /api/source (with the view's default FoldPats,
# as the GUI sends them) gives `heapscope source`'s numbers.
source_same() {
	local fold proj='{names, inc, inc_count, exc, exc_count, total,
		files: [.files[] | {path, lines: [.lines[] | {line, inc, inc_count, exc, exc_count}]}]}'
	get /api/info
	fold=$(jq -c --arg s "$2" '.traces[1].sources[] | select(.name == $s) | .defaults.fold' \
		<<< "$output")
	output=$(curl -s -b "$COOKIE" -d "{\"trace\":1,\"source\":\"$2\",\"name\":\"$1\",
		\"params\":{\"fold\":$fold}}" "$BASE/api/source")
	jq -S "$proj" <<< "$output" > api.json
	"$HS_BIN" source m.heapscope "$1" --source "$2" --format json | jq -S "$proj" > cli.json
	diff -u cli.json api.json
	[ "$(jq '.files | length' cli.json)" -ge 1 ]
}

@test "Goto Source: /api/source gives heapscope source's numbers" {
	source_same memtest!site_leak net
	# the text of the file the trace names, all its lines
	local src="$HS_SRC/tests/targets/memtest.c"
	[ "$(jq '.files[0].found' <<< "$output")" = true ]
	[ "$(jq -r '.files[0].text[]' <<< "$output")" = "$(cat "$src")" ]
	jq -e '.files[0] | .text[.lines[0].line - 1] | contains("LINE:site_leak")' <<< "$output"
	source_same memtest!site_grow alloc
	source_same memtest!run alloc
	source_same "memtest!inl_alloc (inline)" alloc
	source_same memtest!site_large peak
	# percentages of the view's total
	jq -e '.files[0].lines[0] | .inc_pct > 0 and .inc_pct <= 100' <<< "$output"
	# a name no frame is: 404; a trace without line information: 501
	output=$(curl -s -w ' %{http_code}' -b "$COOKIE" -d '{"trace":1,"name":"nope"}' \
		"$BASE/api/source")
	[[ "$output" == *"no frame is the function 'nope'"*" 404" ]]
	output=$(curl -s -w ' %{http_code}' -b "$COOKIE" -d '{"trace":0,"name":"app!B"}' \
		"$BASE/api/source")
	[[ "$output" == *"no line information"*" 501" ]]
}
