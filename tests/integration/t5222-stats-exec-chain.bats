#!/usr/bin/env bats
# `stats` of a trace that ended by exec reads the chain of its process's
# images as `report` does, with the same message on stderr, and its
# numbers are those of the memory views over the chain: allocations and
# bytes summed, the leaks the last image's (an exec frees the heap of the
# image it replaces), the peak the highest image's. execer's allocations
# are known exactly: 3 of 111 bytes at site_first before its exec, 4 of
# 222 at site_second after it; memtest's too (28 allocations, 231 B
# leaked in 3 blocks). --no-exec-chain reads the file alone. report
# --source peak over the chain is its highest image's peak view alone,
# as stats' peak; unrelated processes' peaks are still summed.
bats_require_minimum_version 1.5.0
load trace-helpers

setup() {
	trace_setup
}

# report_total ARGS...: "bytes count" of report's summary.
report_total() {
	"$HS_BIN" report "$@" --format json 2> /dev/null | jq -r '.summary | "\(.metric) \(.count)"'
}

# stats_json TRACE ARGS...: `heapscope stats --format json`, stderr dropped.
stats_json() {
	"$HS_BIN" stats --format json "$@" 2> /dev/null
}

# The higher of two numbers.
higher() {
	if [ "$1" -gt "$2" ]; then echo "$1"; else echo "$2"; fi
}

@test "stats of execer's -o file: both images, as report's views over the chain" {
	trace_run -o e.heapscope -- "$TARGETS/execer"
	[ "$status" -eq 5 ]
	local pid image
	pid=$(awk '/^second /{print $2}' out.txt)
	image="exe.$pid.heapscope"
	[ -e "$image" ]

	run --separate-stderr "$HS_BIN" stats --format json e.heapscope
	[ "$status" -eq 0 ]
	[ "$stderr" = "heapscope: stats: e.heapscope ended by exec: $image, the same process after it, is read with it (--no-exec-chain: the files alone)" ]
	echo "$output" > s.json
	# report says the same of the same file
	run --separate-stderr "$HS_BIN" report e.heapscope --format json
	[ "$stderr" = "heapscope: report: e.heapscope ended by exec: $image, the same process after it, is read with it (--no-exec-chain: the files alone)" ]

	[ "$(jq -c .images s.json)" = "[\"e.heapscope\",\"$image\"]" ]
	# both images' sites, exactly
	[ "$(jq -c '.top_by_bytes[] | select(.name == "execer!site_first") | [.bytes, .count]' s.json)" = "[333,3]" ]
	[ "$(jq -c '.top_by_bytes[] | select(.name == "exe!site_second" or .name == "execer!site_second") | [.bytes, .count]' s.json)" = "[888,4]" ]
	# allocations and bytes: the alloc view over the chain, the images' sum
	[ "$(jq -r '"\(.bytes_allocated) \(.total_allocations)"' s.json)" = "$(report_total e.heapscope --source alloc)" ]
	local first second
	first=$(stats_json e.heapscope --no-exec-chain | jq -r .total_allocations)
	second=$(stats_json "$image" | jq -r .total_allocations)
	[ "$(jq -r .total_allocations s.json)" -eq $((first + second)) ]
	# leaks: the leaks view over the chain, which is the last image's
	[ "$(jq -r '"\(.leaked_bytes) \(.leaked_blocks)"' s.json)" = "$(report_total e.heapscope --source leaks)" ]
	[ "$(report_total e.heapscope --source leaks)" = "$(report_total "$image" --source leaks)" ]
	# the peak: the highest of the images' peak views (their heaps never coexist)
	local p1 p2
	p1=$(report_total e.heapscope --no-exec-chain --source peak | cut -d' ' -f1)
	p2=$(report_total "$image" --source peak | cut -d' ' -f1)
	[ "$(jq -r .peak_heap_bytes s.json)" -eq "$(higher "$p1" "$p2")" ]
	# the timeline runs over the chain: past the first image's end (its
	# points are the starts of stretches of duration / points: at the
	# default 200, the last stretch of a run slowed by the machine's load
	# can start before the first image's end)
	local d1
	d1=$(stats_json e.heapscope --no-exec-chain | jq -r .duration_ms)
	jq -e --argjson d1 "$d1" '.duration_ms > $d1' s.json
	stats_json e.heapscope --points 100000 |
		jq -e --argjson d1 "$d1" '(.heap_timeline | last | .[0]) > $d1'

	# the text says the same numbers, and names the images
	"$HS_BIN" stats e.heapscope > s.txt 2> /dev/null
	grep -q "^exec chain: *execer (e.heapscope), then by exec exe ($image), read as one process$" s.txt
	grep -q "^allocations: *$(jq -r .total_allocations s.json) (" s.txt
	grep -q "^bytes allocated: *$(jq -r .bytes_allocated s.json) (" s.txt
	grep -q "^peak heap: *$(jq -r .peak_heap_bytes s.json) (" s.txt
	grep -q "^leaked: *$(jq -r .leaked_bytes s.json) bytes\? in $(jq -r .leaked_blocks s.json) block" s.txt
}

@test "stats --no-exec-chain: the file alone, and nothing said" {
	trace_run -o e.heapscope -- "$TARGETS/execer"
	[ "$status" -eq 5 ]
	run --separate-stderr "$HS_BIN" stats --format json --no-exec-chain e.heapscope
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	echo "$output" > s.json
	[ "$(jq -c .images s.json)" = '["e.heapscope"]' ]
	[ "$(jq -r '"\(.bytes_allocated) \(.total_allocations)"' s.json)" = "$(report_total e.heapscope --no-exec-chain --source alloc)" ]
	[ "$(jq -r '"\(.leaked_bytes) \(.leaked_blocks)"' s.json)" = "0 0" ]
	[ "$(jq -c '.top_by_bytes[] | select(.name == "execer!site_first") | [.bytes, .count]' s.json)" = "[333,3]" ]
	! grep -q site_second s.json || false
	"$HS_BIN" stats --no-exec-chain e.heapscope > s.txt 2> /dev/null
	! grep -q "^exec chain:" s.txt || false
	# a trace that did not end by exec is read alone either way
	run --separate-stderr "$HS_BIN" stats exe.*.heapscope
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	! grep -q "^exec chain:" <<< "$output" || false
}

@test "sh -c 'exec memtest': stats of -o is the chain, of the last image run's summary" {
	trace_run --no-view -o x.heapscope -- sh -c "exec '$TARGETS/memtest'"
	[ "$status" -eq 0 ]
	local image
	image=$(ls memtest.*.heapscope)
	# run's summary is of the last image: so is stats of that image
	grep -qE '^heapscope: 28 allocations \(210.8 KiB\), 24 frees, ' err.txt
	stats_json "$image" > last.json
	[ "$(jq -r '"\(.total_allocations) \(.total_frees) \(.leaked_bytes) \(.leaked_blocks)"' last.json)" = "28 24 231 3" ]
	# stats of -o: the shell's allocations too, the program's leaks only
	stats_json x.heapscope > s.json
	[ "$(jq -r '"\(.bytes_allocated) \(.total_allocations)"' s.json)" = "$(report_total x.heapscope --source alloc)" ]
	[ "$(jq -r .total_allocations s.json)" -gt 28 ]
	[ "$(jq -r '"\(.leaked_bytes) \(.leaked_blocks)"' s.json)" = "231 3" ]
	[ "$(report_total x.heapscope --source leaks)" = "231 3" ]
	[ "$(jq -r .peak_heap_bytes s.json)" -eq "$(higher \
		"$(stats_json x.heapscope --no-exec-chain | jq -r .peak_heap_bytes)" \
		"$(jq -r .peak_heap_bytes last.json)")" ]
	"$HS_BIN" stats x.heapscope 2> /dev/null | grep -q '^leaked: *231 bytes in 3 blocks'
	"$HS_BIN" stats x.heapscope 2> /dev/null | grep -q "^exec chain: *sh (x.heapscope), then by exec memtest ($image), read as one process$"
}

@test "report --source peak over sh -c 'exec memtest': the highest image's, stats' peak" {
	trace_run --no-view -o x.heapscope -- sh -c "exec '$TARGETS/memtest'"
	[ "$status" -eq 0 ]
	local image chain shell program
	image=$(ls memtest.*.heapscope)
	chain=$(report_total x.heapscope --source peak)
	shell=$(report_total x.heapscope --no-exec-chain --source peak)
	program=$(report_total "$image" --no-exec-chain --source peak)
	# both images have blocks at their peak; memtest's heap is the higher
	[ "${shell%% *}" -gt 0 ]
	[ "${program%% *}" -gt "${shell%% *}" ]
	# the chain's peak view is memtest's alone, bytes and blocks
	[ "$chain" = "$program" ]
	[ "${chain%% *}" -eq "$(stats_json x.heapscope | jq -r .peak_heap_bytes)" ]
	# the same with the images given, in either order
	[ "$(report_total x.heapscope "$image" --source peak)" = "$program" ]
	[ "$(report_total "$image" x.heapscope --no-exec-chain --source peak)" = "$program" ]
	# none of the shell's frames: one process, memtest's thread only
	"$HS_BIN" report x.heapscope --source peak --view calltree --depth 2 --format csv \
		> tree.csv 2> /dev/null
	[ "$(grep -c '^1,Process ' tree.csv)" -eq 1 ]
	[ "$(grep -c '^2,Thread ' tree.csv)" -eq 1 ]
	grep -q '^2,Thread ([0-9]*) memtest,' tree.csv
	# the other views still take every image: the alloc view sums them
	[ "$(report_total x.heapscope --source alloc | cut -d' ' -f2)" -eq \
	  $(($(report_total x.heapscope --no-exec-chain --source alloc | cut -d' ' -f2) +
	     $(report_total "$image" --source alloc | cut -d' ' -f2))) ]
}

@test "report --source peak of unrelated processes still sums their peaks" {
	trace_run --no-view -o x.heapscope -- sh -c "exec '$TARGETS/memtest'"
	[ "$status" -eq 0 ]
	trace_run --no-view -o a.heapscope -- "$TARGETS/memtest"
	[ "$status" -eq 0 ]
	trace_run --no-view -o b.heapscope -- "$TARGETS/execer"
	local image a b chain
	image=$(ls memtest.*.heapscope)
	a=$(report_total a.heapscope --source peak | cut -d' ' -f1)
	b=$(report_total b.heapscope --no-exec-chain --source peak | cut -d' ' -f1)
	[ "$a" -gt 0 ]
	[ "$b" -gt 0 ]
	# two independent processes: each one's peak, added
	[ "$(report_total a.heapscope b.heapscope --no-exec-chain --source peak | cut -d' ' -f1)" \
	  -eq $((a + b)) ]
	# a chain among them counts once, at its highest image
	chain=$(report_total "$image" --source peak | cut -d' ' -f1)
	[ "$(report_total x.heapscope a.heapscope --source peak | cut -d' ' -f1)" -eq $((chain + a)) ]
}
