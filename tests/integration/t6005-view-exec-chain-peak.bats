#!/usr/bin/env bats
# The GUI's merged trace reads the peak view over an exec chain as
# `report` does: an exec frees the heap of the image it replaces, so the
# process's peak is its highest image's alone, while independent
# processes given with it are still summed. `view --merge x a`: x is
# `sh -c 'exec memtest'` (x.heapscope ended by exec, memtest.PID.heapscope
# continues it, added by view), a an unrelated memtest run.

bats_require_minimum_version 1.5.0
load view-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q --no-view -o x.heapscope -- \
		sh -c "exec '$HS_BUILD/tests/targets/memtest'" > /dev/null
	ls memtest.*.heapscope > image.txt
	"$HS_BIN" run -q --no-view -o a.heapscope -- "$HS_BUILD/tests/targets/memtest" > /dev/null
	view_start --merge x.heapscope a.heapscope
}

teardown_file() {
	view_stop
}

setup() {
	view_setup
}

# metric ARGS...: the metric of report's summary, stderr dropped.
metric() {
	"$HS_BIN" report "$@" --format json 2> /dev/null | jq -r .summary.metric
}

@test "the merged trace holds the chain's images and the other process" {
	[ "$(wc -l < image.txt)" = 1 ]
	get /api/info
	[ "$(jq -c '[.traces[].name]' <<< "$output")" = \
	  "[\"all 3 files\",\"x.heapscope\",\"a.heapscope\",\"$(cat image.txt)\"]" ]
}

@test "its peak: the chain's highest image's, plus the other process's" {
	local image shell program other
	image=$(cat image.txt)
	shell=$(metric x.heapscope --no-exec-chain --source peak)
	program=$(metric "$image" --no-exec-chain --source peak)
	other=$(metric a.heapscope --source peak)
	# memtest's peak is above the shell's: the shell's blocks are left out
	[ "$shell" -gt 0 ]
	[ "$program" -gt "$shell" ]
	get /api/view trace=0 source=peak view=byname
	printf '%s\n' "$output" > api.json
	[ "$(jq -r .summary.metric api.json)" -eq $((program + other)) ]
	# report of the same files says the same, to the byte
	"$HS_BIN" report x.heapscope a.heapscope --source peak --view byname --format json \
		> cli.json 2> /dev/null
	diff -u cli.json api.json
}

@test "its other views still sum every image" {
	local image sum
	image=$(cat image.txt)
	sum=$(($(metric x.heapscope --no-exec-chain --source alloc) +
		$(metric "$image" --no-exec-chain --source alloc) +
		$(metric a.heapscope --source alloc)))
	get /api/view trace=0 source=alloc view=byname
	[ "$(jq -r .summary.metric <<< "$output")" -eq "$sum" ]
}
