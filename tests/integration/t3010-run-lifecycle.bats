#!/usr/bin/env bats
# heapscope run: lives that do not end by main's return, forks that do not
# go through fork() (tests/targets/lifecycle.c).
load trace-helpers

setup() {
	trace_setup
}

@test "main's pthread_exit: the process ends with its last thread, exit 0, stdio flushed" {
	timeout 20 "$HS_BIN" run -q -o p.heapscope -- "$TARGETS/lifecycle" pthread-exit \
		> out.txt 2> err.txt || status=$?
	[ "${status:-0}" -eq 0 ]
	[[ "$(tail -c 9 out.txt)" == "main gone" ]]
	trace_check out.txt p.heapscope
	[ "$(summary_field p.heapscope status)" = complete ]
	[ "$(summary_field p.heapscope end)" = "exit 0" ]
}

@test "main's pthread_exit with no other thread ends the process" {
	timeout 20 "$HS_BIN" run -q -o a.heapscope -- "$TARGETS/lifecycle" alone-exit \
		> out.txt 2> err.txt || status=$?
	[ "${status:-0}" -eq 0 ]
	[[ "$(tail -c 9 out.txt)" == "main gone" ]]
	trace_check out.txt a.heapscope
	[ "$(summary_field a.heapscope end)" = "exit 0" ]
}

# wait_end TRACE: until TRACE has its END record (at most 20 s)
wait_end() {
	local i
	for i in $(seq 200); do
		[ -f "$1" ] && [ "$(summary_field "$1" status 2>/dev/null)" = complete ] && return 0
		sleep 0.1
	done
	return 1
}

@test "daemon()'s fork inside glibc is followed with --follow-fork" {
	LIFECYCLE_PID=$PWD/child.pid trace_run --follow-fork -o p.heapscope -- \
		"$TARGETS/lifecycle" daemon
	[ "$status" -eq 0 ]
	for i in $(seq 200); do [ -s child.pid ] && break; sleep 0.1; done
	local child=$(cat child.pid)
	wait_end "lifecycle.$child.heapscope"
	trace_check out.txt "lifecycle.$child.heapscope" site_child
	# the parent's trace has the parent's allocations only
	[ -z "$(trace_found out.txt p.heapscope site_child)" ]
	"$HS_BIN" dump "lifecycle.$child.heapscope" | grep -qE "flags=0x5 parent_pid=[0-9]+ "
}

@test "daemon()'s child is not traced without --follow-fork" {
	LIFECYCLE_PID=$PWD/child.pid trace_run -o p.heapscope -- "$TARGETS/lifecycle" daemon
	[ "$status" -eq 0 ]
	for i in $(seq 200); do [ -s child.pid ] && break; sleep 0.1; done
	[ -s child.pid ]
	[ "$(ls *.heapscope)" = p.heapscope ]
}

@test "a program that closes every descriptor keeps its trace (close, close_range, closefrom)" {
	local how
	for how in close-loop close-range closefrom; do
		trace_run -o "$how.heapscope" -- "$TARGETS/lifecycle" "$how"
		[ "$status" -eq 0 ]
		! grep -q "cannot write the trace" err.txt || false
		trace_check out.txt "$how.heapscope"
		[ "$(summary_field "$how.heapscope" status)" = complete ]
	done
}

# Issue 19, item 11: a close system call made without the libc function
# (syscall(SYS_close), which no hook sees) closed the trace file, and the
# whole trace was lost, the events recorded before too. The trace is now
# in a descriptor table of the collector's own, which the program's
# closes and dup2()s do not reach (src/collector/fdkeep.c); every number
# is the program's to dup2() onto and to close. (Without that table, the
# writer notices and opens the trace again by its path: next test.)
@test "a raw close system call on the trace's descriptor loses nothing" {
	trace_run -o r.heapscope -- "$TARGETS/lifecycle" raw-close
	[ "$status" -eq 0 ]
	! grep -q "cannot write the trace" err.txt || false
	trace_check out.txt r.heapscope
	[ "$(summary_field r.heapscope status)" = complete ]
	# and when the program gives the numbers to files of its own, it can
	# close them all, and the trace goes on
	trace_run -o u.heapscope -- "$TARGETS/lifecycle" raw-close reuse
	[ "$status" -eq 0 ]
	! grep -q "cannot write the trace" err.txt || false
	trace_check out.txt u.heapscope
	[ "$(summary_field u.heapscope status)" = complete ]
}

# The collector keeps the trace in a descriptor table of its own (a thread
# that unshare()d it), which the program's closes and dup2()s do not
# reach. Where unshare() is refused (a seccomp filter, as in containers),
# the trace is in the program's table: a raw close is noticed and the
# trace opened again; a chunk that then finds every number taken waits
# for one (here 150 ms, until the program closes its numbers) instead of
# stopping the trace.
@test "where unshare() is refused, the trace waits for a free descriptor number" {
	status=0
	"$TARGETS/nounshare" "$HS_BIN" run -o r.heapscope -- "$TARGETS/lifecycle" raw-close \
		> out.txt 2> err.txt || status=$?
	[ "$status" -eq 0 ]
	! grep -q "cannot write the trace" err.txt || false
	trace_check out.txt r.heapscope
	[ "$(summary_field r.heapscope status)" = complete ]
	status=0
	"$TARGETS/nounshare" "$HS_BIN" run -o f.heapscope -- "$TARGETS/lifecycle" raw-close fill \
		> out.txt 2> err.txt || status=$?
	[ "$status" -eq 0 ]
	! grep -q "cannot write the trace" err.txt || false
	trace_check out.txt f.heapscope
	[ "$(summary_field f.heapscope status)" = complete ]
}

@test "with --cpu, the samples go on after the program closed every descriptor" {
	trace_run --cpu --no-heap -o c.heapscope -- "$TARGETS/lifecycle" closefrom
	[ "$status" -eq 0 ]
	hs report --source cpu c.heapscope --format csv
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > cpu.csv
	# 200 ms of CPU spun after closefrom(): at least half of it sampled
	between "$(col 'lifecycle!site_spin' 6 cpu.csv)" 100 400
}
