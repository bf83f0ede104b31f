#!/usr/bin/env bats
# `heapscope view --merge a b`: the files as one more trace, "all 2
# files", shown first (the others one further), whose sources are the
# report's of `report a b`: each trace under its process, the first
# file's defaults; its other sources are merged when asked for. Without
# --merge nothing changes; files whose sources differ are refused.

bats_require_minimum_version 1.5.0
load view-helpers

R="$DATA/report"

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q --no-view -o a.heapscope -- "$HS_BUILD/tests/targets/memtest" > a.out
	"$HS_BIN" run -q --no-view -o b.heapscope -- "$HS_BUILD/tests/targets/temps" 2000
	view_start --merge a.heapscope b.heapscope
}

teardown_file() {
	view_stop
}

setup() {
	view_setup
}

# merged ARGS...: /api/view of trace 0 with ARGS equals `report a b`'s JSON.
merged() {
	local a k
	local opts=()
	for a in "$@"; do
		k=${a%%=*}
		opts+=("--${k//_/-}" "${a#*=}")
	done
	get /api/view trace=0 "$@"
	printf '%s\n' "$output" > api.json
	"$HS_BIN" report a.heapscope b.heapscope "${opts[@]}" --format json > cli.json
	diff -u cli.json api.json
}

@test "the merged trace comes first, the files after it" {
	grep -q 'serving all 2 files at' view.out
	get /api/info
	[ "$(jq -c '[.traces[].name]' <<< "$output")" = '["all 2 files","a.heapscope","b.heapscope"]' ]
	[ "$(jq -c '[.traces[0].sources[].name]' <<< "$output")" = \
	  '["alloc","net","leaks","peak","temporary","mmap"]' ]
}

@test "its default source is report a b's, each process under its own frame" {
	merged view=byname
	merged view=calltree depth=2
	[ "$(jq '[.tree.children[].name | select(startswith("Process "))] | length' api.json)" = 2 ]
}

@test "its other sources are merged when asked for" {
	merged source=leaks view=byname
	merged source=temporary view=calltree depth=3
}

@test "the files themselves are still there, one further" {
	same a.heapscope 1 view=byname
	same b.heapscope 2 source=leaks view=byname
}

@test "--merge of a CPU profile and a heap trace is refused, saying why" {
	run -1 "$HS_BIN" view --merge "$R/cpu.data.txt" a.heapscope --no-browser --port 0
	[[ "$output" == *"--merge: 'a.heapscope' has no source 'cpu'"* ]]
}
