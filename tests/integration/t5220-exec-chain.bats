#!/usr/bin/env bats
# A traced program that exec'd another (`run --follow-exec -- sh -c 'exec
# PROG'`) leaves the shell's image before the exec in the -o trace and
# the program's in PROG.PID.heapscope. Read together (`report a b`,
# `view --merge a b`), the two are one process: one "Process temps (PID)"
# node holding both images, each under its own Thread frame, and the
# totals of both.

bats_require_minimum_version 1.5.0
load view-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q --no-view --follow-exec -o x.heapscope -- \
		sh -c "exec '$HS_BUILD/tests/targets/temps' 100"
	ls temps.*.heapscope > image.txt
	view_start --merge x.heapscope "$(cat image.txt)"
}

teardown_file() {
	view_stop
}

setup() {
	view_setup
}

# total FILE...: "bytes count" of report's summary, of the files alone.
total() {
	"$HS_BIN" report "$@" --no-exec-chain --format json | jq -r '"\(.summary.metric) \(.summary.count)"'
}

@test "the shell's trace ended by exec and the program's was started by it" {
	[ "$(wc -l < image.txt)" = 1 ]
	"$HS_BIN" dump x.heapscope | grep -q '^end .* reason=exec '
	# flags bit 3: an exec started it
	"$HS_BIN" dump "$(cat image.txt)" | grep -q '^process .* flags=0x[0-9a-f]*[89a-f] '
	pid=$(sed 's/temps\.\([0-9]*\)\.heapscope/\1/' image.txt)
	"$HS_BIN" report x.heapscope --no-exec-chain --view calltree --depth 1 --format csv |
		grep -q "Process sh ($pid)"
}

@test "report a b: one process node, named after the program, with both" {
	local pid image
	image=$(cat image.txt)
	pid=$(sed 's/temps\.\([0-9]*\)\.heapscope/\1/' image.txt)
	"$HS_BIN" report x.heapscope "$image" --view calltree --depth 2 --format json > both.json
	[ "$(jq -c '[.tree.children[].name]' both.json)" = "[\"Process temps ($pid)\"]" ]
	# its threads: the shell's image and the program's
	[ "$(jq -c '[.tree.children[0].children[].name] | sort' both.json)" = \
	  "[\"Thread ($pid) sh\",\"Thread ($pid) temps\"]" ]
	# the totals of both files
	read -r b1 c1 <<< "$(total x.heapscope)"
	read -r b2 c2 <<< "$(total "$image")"
	[ "$(total x.heapscope "$image")" = "$((b1 + b2)) $((c1 + c2))" ]
}

@test "view --merge: the merged trace has the one process node too" {
	local pid
	pid=$(sed 's/temps\.\([0-9]*\)\.heapscope/\1/' image.txt)
	get /api/view trace=0 view=calltree depth=1
	[ "$(jq -c '[.tree.children[].name]' <<< "$output")" = "[\"Process temps ($pid)\"]" ]
	get /api/view trace=0 source=leaks view=calltree depth=1
	jq -e '[.tree.children[].name] | all(startswith("Process temps"))' <<< "$output"
}
