#!/usr/bin/env bats
# `run -- sh -c 'exec PROG'` and wrapper scripts that exec: run's summary
# is of the process, that is of its last image (memtest, whose numbers
# are exact: 28 allocations, 24 frees, 231 B leaked in 3 blocks once
# stdio's buffer is suppressed), never the shell's blocks as leaks (an
# exec frees the heap of the image it replaces); `report` of run's -o
# file reads the images after the exec with it, as one process.
bats_require_minimum_version 1.5.0
load trace-helpers

setup() {
	trace_setup
}

# the view server of the last test, should it have failed before stopping it
teardown_file() {
	[ ! -f "$BATS_FILE_TMPDIR/view.pid" ] || kill -TERM "$(cat "$BATS_FILE_TMPDIR/view.pid")" 2> /dev/null || true
}

# total ARGS...: "bytes count" of report's summary.
total() {
	"$HS_BIN" report "$@" --format json 2> /dev/null |
		python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print("%.17g %.17g" % (s["metric"], s["count"]))'
}

# The heap line of run's summary in err.txt.
heap_line() {
	grep -E '^heapscope: [0-9]+ allocations? ' err.txt
}

# run_sh_exec_memtest ARGS...: `heapscope run --no-view ARGS -o x.heapscope
# -- sh -c "exec memtest"`, which must end well with one summary, that of
# memtest, the image after the exec (its trace memtest.PID.heapscope);
# sets pid.
run_sh_exec_memtest() {
	trace_run --no-view "$@" -o x.heapscope -- sh -c "exec '$TARGETS/memtest'"
	[ "$status" -eq 0 ]
	cat err.txt
	pid=$(ls memtest.*.heapscope | sed 's/memtest\.\([0-9]*\)\.heapscope/\1/')
	[ -n "$pid" ]
	[ "$(heap_line | wc -l)" -eq 1 ]
	[[ "$(heap_line)" == "heapscope: 28 allocations (210.8 KiB), 24 frees, "* ]]
	[[ "$(heap_line)" == *", leaked 231 B in 3 blocks ("* ]]
	grep -q "^heapscope: process $pid ran sh, then by exec memtest: below is memtest, the last image, traced into memtest.$pid.heapscope " err.txt
}

@test "--follow-exec: the summary is the program's, not the shell's" {
	local pid
	run_sh_exec_memtest --follow-exec
	# the file to look at is still the -o one
	grep -q '^heapscope: trace written to x.heapscope (.*heapscope report x.heapscope$' err.txt
	# the shell's trace itself has no leaks: its exec freed them
	[ "$(total x.heapscope --no-exec-chain --source alloc)" != "0 0" ]
	[ "$(total x.heapscope --no-exec-chain --source leaks)" = "0 0" ]
	"$HS_BIN" stats x.heapscope | grep -q '^leaked: *0 bytes in 0 blocks'
	# and so do its totals (the shell had 48 to 52 blocks live at its exec)
	[ "$(summary_field x.heapscope end)" = "exec 0" ]
	[ "$(summary_field x.heapscope 'leaked blocks')" = 0 ]
	[ "$(summary_field x.heapscope 'leaked bytes')" = 0 ]
	[ "$(summary_field x.heapscope 'peak heap')" -gt 0 ]
	# the image that exited keeps what was live at its end: the 3 leaks
	# and stdio's buffer
	[ "$(summary_field "memtest.$pid.heapscope" 'leaked blocks')" = 4 ]
}

@test "report of run's -o file reads the chain as one process" {
	"$HS_BIN" run -q --no-view --follow-exec -o x.heapscope -- sh -c "exec '$TARGETS/memtest'" > /dev/null
	local image pid
	image=$(ls memtest.*.heapscope)
	pid=$(sed 's/memtest\.\([0-9]*\)\.heapscope/\1/' <<< "$image")
	run --separate-stderr "$HS_BIN" report x.heapscope --view calltree --depth 2 --format json
	[ "$status" -eq 0 ]
	[ "$stderr" = "heapscope: report: x.heapscope ended by exec: $image, the same process after it, is read with it (--no-exec-chain: the files alone)" ]
	[ "$(jq -c '[.tree.children[].name]' <<< "$output")" = "[\"Process memtest ($pid)\"]" ]
	[ "$(jq -c '[.tree.children[0].children[].name] | sort' <<< "$output")" = \
	  "[\"Thread ($pid) memtest\",\"Thread ($pid) sh\"]" ]
	# both images' allocations, the program's leaks only
	[ "$(total x.heapscope)" = "$(total x.heapscope "$image" --no-exec-chain)" ]
	[ "$(total x.heapscope --source leaks)" = "231 3" ]
	[ "$(total x.heapscope --source leaks)" = "$(total "$image" --source leaks)" ]
	"$HS_BIN" report x.heapscope --source leaks --format csv 2> /dev/null > leaks.csv
	[ "$(col memtest!site_leak 3 leaks.csv)" = 231 ]
	! grep -q 'dash\|Thread.* sh' leaks.csv || false
	# given together, the image is read once, and nothing is said
	run --separate-stderr "$HS_BIN" report x.heapscope "$image" --format json
	[ -z "$stderr" ]
	[ "$(total x.heapscope "$image")" = "$(total x.heapscope)" ]
}

@test "a chain of two execs and a wrapper script" {
	trace_run --no-view --follow-exec -o x.heapscope -- \
		sh -c "exec sh -c \"exec '$TARGETS/memtest'\""
	[ "$status" -eq 0 ]
	cat err.txt
	[[ "$(heap_line)" == *", leaked 231 B in 3 blocks ("* ]]
	grep -q "ran sh, then by exec memtest: below is memtest" err.txt
	[ "$(total x.heapscope --source leaks)" = "231 3" ]
	[ "$(ls *.heapscope | wc -l)" -eq 3 ]

	printf '#!/bin/sh\nexec "%s" "$@"\n' "$TARGETS/memtest" > wrap.sh
	chmod +x wrap.sh
	trace_run --no-view --follow-exec -o w.heapscope -- ./wrap.sh
	[ "$status" -eq 0 ]
	cat err.txt
	[[ "$(heap_line)" == "heapscope: 28 allocations (210.8 KiB), 24 frees, "* ]]
	[[ "$(heap_line)" == *", leaked 231 B in 3 blocks ("* ]]
	grep -q "then by exec memtest: below is memtest" err.txt
	[ "$(total w.heapscope --source leaks)" = "231 3" ]
}

@test "by default the exec chain of CMD's own pid is followed, not its children" {
	local pid
	run_sh_exec_memtest
	[ "$(total x.heapscope --source leaks)" = "231 3" ]
	[ "$(ls *.heapscope | wc -l)" -eq 2 ]
	rm -f ./*.heapscope

	printf '#!/bin/sh\nexec "%s" "$@"\n' "$TARGETS/memtest" > wrap.sh
	chmod +x wrap.sh
	trace_run --no-view -o w.heapscope -- ./wrap.sh
	[ "$status" -eq 0 ]
	[[ "$(heap_line)" == "heapscope: 28 allocations (210.8 KiB), 24 frees, "* ]]
	[[ "$(heap_line)" == *", leaked 231 B in 3 blocks ("* ]]
	rm -f ./*.heapscope

	# a child the shell starts (vfork or fork, then exec) is not traced
	trace_run --no-view -o c.heapscope -- sh -c "'$TARGETS/memtest'; ( exec '$TARGETS/memtest' ); exit 0"
	[ "$status" -eq 0 ]
	cat err.txt
	[ "$(ls *.heapscope)" = c.heapscope ]
	! grep -q 'exec\|28 allocations' err.txt || false
	[ "$(total c.heapscope --source alloc)" != "0 0" ]
	! "$HS_BIN" report c.heapscope --format csv 2> /dev/null | grep -q memtest || false
	rm -f ./*.heapscope

	# with --follow-fork the forked child is traced, but not past its exec
	trace_run --no-view --follow-fork -o f.heapscope -- sh -c "( exec '$TARGETS/memtest' ); exit 0"
	[ "$status" -eq 0 ]
	cat err.txt
	[ "$(ls memtest.*.heapscope 2> /dev/null | wc -l)" -eq 0 ]
	[ "$(ls sh.*.heapscope | wc -l)" -eq 1 ]
}

@test "--no-follow-exec: no leaks of the shell, and run says why" {
	trace_run --no-view --no-follow-exec -o y.heapscope -- sh -c "exec '$TARGETS/memtest'"
	[ "$status" -eq 0 ]
	cat err.txt
	grep -q "^heapscope: sh (pid [0-9]*) replaced itself by exec, and the program it ran was not traced ('heapscope run --follow-exec' traces it)" err.txt
	[[ "$(heap_line)" == *", no leaks (its exec freed the heap)" ]]
	! grep -q leaked err.txt || false
	[ "$(total y.heapscope --source leaks)" = "0 0" ]
	[ "$(ls *.heapscope)" = y.heapscope ]
	# a program that did not exec keeps its summary as it was
	trace_run --no-view -o m.heapscope -- "$TARGETS/memtest"
	! grep -q 'exec' err.txt || false
	[[ "$(heap_line)" == *", leaked 231 B in 3 blocks ("* ]]
}

@test "view of run's -o file serves the chain merged, first; --no-exec-chain alone" {
	load view-helpers
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q --no-view --follow-exec -o v.heapscope -- sh -c "exec '$TARGETS/memtest'" > /dev/null
	local image pid
	image=$(ls memtest.*.heapscope)
	pid=$(sed 's/memtest\.\([0-9]*\)\.heapscope/\1/' <<< "$image")
	view_start v.heapscope
	view_setup
	grep -q "v.heapscope ended by exec: $image, the same process after it" view.err
	get /api/info
	[ "$(jq -c '[.traces[].name]' <<< "$output")" = "[\"all 2 files\",\"v.heapscope\",\"$image\"]" ]
	get /api/view trace=0 view=calltree depth=1
	[ "$(jq -c '[.tree.children[].name]' <<< "$output")" = "[\"Process memtest ($pid)\"]" ]
	get /api/view trace=0 source=leaks view=calltree depth=1
	[ "$(jq -r '.summary.metric' <<< "$output")" = 231 ]
	view_stop
	view_start v.heapscope --no-exec-chain
	view_setup
	get /api/info
	[ "$(jq -c '[.traces[].name]' <<< "$output")" = '["v.heapscope"]' ]
	view_stop
}

@test "--follow-exec of a program that cannot be traced: run says so" {
	trace_run --no-view --follow-exec -o s.heapscope -- sh -c "exec '$TARGETS/static'"
	[ "$status" -eq 3 ]
	cat err.txt
	grep -q "^heapscope: sh (pid [0-9]*) replaced itself by exec, and the program it ran left no trace beside s.heapscope (it did not load the collector: a static or setuid program?)" err.txt
	[[ "$(heap_line)" == *", no leaks (its exec freed the heap)" ]]
	run --separate-stderr "$HS_BIN" report s.heapscope --format csv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}
