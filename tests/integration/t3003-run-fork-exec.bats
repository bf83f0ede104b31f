#!/usr/bin/env bats
# heapscope run: fork and exec, followed or not.
load trace-helpers

setup() {
	trace_setup
}

@test "without --follow-fork the child is not traced and the parent is exact" {
	trace_run -o p.heapscope -- "$TARGETS/forker"
	[ "$status" -eq 0 ]
	trace_check out.txt p.heapscope site_parent
	[ -z "$(trace_found out.txt p.heapscope site_child)" ]
	[ "$(ls *.heapscope)" = p.heapscope ]
	"$HS_BIN" dump p.heapscope | grep -qE "^fork t=[0-9]+ child=[0-9]+ followed=0$"
}

@test "with --follow-fork the child writes its own trace, named with its pid" {
	trace_run --follow-fork -o p.heapscope -- "$TARGETS/forker"
	[ "$status" -eq 0 ]
	local child=$(awk '/^child /{print $2}' out.txt)
	[ -n "$child" ]
	[ -e "forker.$child.heapscope" ]
	trace_check out.txt p.heapscope site_parent
	trace_check out.txt "forker.$child.heapscope" site_child
	[ -z "$(trace_found out.txt "forker.$child.heapscope" site_parent)" ]
	"$HS_BIN" dump "forker.$child.heapscope" | grep -qE "flags=0x5 parent_pid=[0-9]+ "
	# run symbolized the child's trace too, and said where it is
	grep -q "process $child traced into .*forker.$child.heapscope" err.txt
	hs report "forker.$child.heapscope" --format csv
	[[ "$output" == *"forker!site_child,"* ]]
}

@test "with --no-follow-exec the new image is not traced" {
	trace_run --no-follow-exec -o e.heapscope -- "$TARGETS/execer"
	[ "$status" -eq 5 ]
	grep -q "^second " out.txt
	trace_check out.txt e.heapscope site_first
	[ "$(ls *.heapscope)" = e.heapscope ]
	"$HS_BIN" dump e.heapscope > d.txt
	grep -q '^exec t=[0-9]* path="/proc/self/exe"$' d.txt
	grep -q "^end t=.* reason=exec" d.txt
}

@test "with --follow-exec the new image writes its own trace" {
	trace_run --follow-exec -o e.heapscope -- "$TARGETS/execer"
	[ "$status" -eq 5 ]
	local pid=$(awk '/^second /{print $2}' out.txt)
	# the new image runs /proc/self/exe: its name is "exe"
	[ -e "exe.$pid.heapscope" ]
	trace_check out.txt e.heapscope site_first
	trace_check out.txt "exe.$pid.heapscope" site_second
	hs stats --format json "exe.$pid.heapscope"
	[[ "$output" == *'"symbolized": true'* ]]
}

@test "by default the new image of run's own process writes its own trace" {
	trace_run -o e.heapscope -- "$TARGETS/execer"
	[ "$status" -eq 5 ]
	local pid=$(awk '/^second /{print $2}' out.txt)
	[ -e "exe.$pid.heapscope" ]
	[ "$(ls *.heapscope | wc -l)" -eq 2 ]
	trace_check out.txt e.heapscope site_first
	trace_check out.txt "exe.$pid.heapscope" site_second
	# both say their exec is followed (PROCESS flags bit 1); the image was exec'd
	"$HS_BIN" dump e.heapscope | grep -qE "flags=0x2 parent_pid=0 "
	"$HS_BIN" dump "exe.$pid.heapscope" | grep -qE "flags=0xa parent_pid=0 "
	grep -q "process $pid traced into .*exe.$pid.heapscope" err.txt
}
