#!/usr/bin/env bats
# The collector under a tight address space (issue 19, item 5). Each
# thread's state (its ring, caches and signal stack: about half a MiB)
# used to be mapped at the thread's first event; when that failed, the
# thread's events were dropped without a word and the trace said "lost:
# 0". The state is now mapped in pthread_create, before the thread's
# stack, so the creation fails instead; a thread whose state cannot be
# mapped all the same (here a crowd of threads with 64 KiB stacks, each
# created when only 128 KiB of address space are left) has its events
# counted in the footer's lost count, and the collector, `run`, `stats`
# and `report` say so.
load trace-helpers

setup() {
	trace_setup
}

@test "under ulimit -v, every allocation is in the trace or counted lost, and lost ones are said" {
	skip_without_ulimit_v
	runs=0
	lost_runs=0
	for limit in 80000 100000 120000; do
		rm -f c.heapscope
		trace_run_limited -v "$limit" -o c.heapscope -- "$TARGETS/crowd" 16 200 fill
		echo "limit $limit: status $status: $(cat out.txt)"
		cat err.txt
		# too tight for heapscope itself or for the program: not this test's
		grep -q '^crowd ' out.txt && [ -s c.heapscope ] || continue
		[ "$status" -eq 0 ]
		made=$(awk '/^crowd /{print $3}' out.txt)
		recorded=$("$HS_BIN" dump --events c.heapscope | awk '$6 == 1234' | wc -l)
		lost=$("$HS_BIN" dump --summary c.heapscope | awk '/^lost: /{print $2}')
		echo "made $made recorded $recorded lost $lost"
		# the crowd's threads make nothing but these allocations
		[ "$((recorded + lost))" -eq "$made" ]
		runs=$((runs + 1))
		if [ "$lost" -gt 0 ]; then
			lost_runs=$((lost_runs + 1))
			grep -q '^heapscope: cannot map the state of thread [0-9]* (out of address space?): its events are counted as lost in the trace$' err.txt
			grep -q "^heapscope: warning: the collector could not record $lost events\? (out of memory for a thread, or its writer had stopped): the counts above miss them$" err.txt
			hs stats c.heapscope
			[ "$status" -eq 0 ]
			[[ "$stderr" == *"heapscope: warning: c.heapscope: the collector could not record $lost event"* ]]
			[[ "${lines[0]}" == "trace: "*", $lost event"*" lost"* ]]
			# dump --summary and stats' JSON say it too
			[[ "$(summary_field c.heapscope status)" =~ ^"complete, $lost event"s?" lost"$ ]]
			[ "$("$HS_BIN" stats --format json c.heapscope 2> /dev/null | jq .lost)" = "$lost" ]
			hs report c.heapscope --view calltree
			[ "$status" -eq 0 ]
			[[ "$stderr" == *"the collector could not record $lost event"* ]]
		else
			! grep -q 'could not record\|cannot map the state' err.txt || false
		fi
	done
	[ "$runs" -gt 0 ]
	[ "$lost_runs" -gt 0 ]
}

@test "without pressure, nothing is lost and nothing is said" {
	trace_run -o c.heapscope -- "$TARGETS/crowd" 32 100
	[ "$status" -eq 0 ]
	grep -qx 'crowd 32 3200' out.txt
	[ "$("$HS_BIN" dump --events c.heapscope | awk '$6 == 1234' | wc -l)" -eq 3200 ]
	"$HS_BIN" dump --summary c.heapscope | grep -qx 'lost: 0'
	[ "$(summary_field c.heapscope status)" = complete ]
	[ "$("$HS_BIN" stats --format json c.heapscope | jq .lost)" = 0 ]
	! "$HS_BIN" stats c.heapscope | grep -q 'lost' || false
	! grep -q 'could not record\|cannot map' err.txt || false
	# every thread is in the trace: main and the crowd's 32
	"$HS_BIN" dump c.heapscope | grep -q ' threads=33 '
}
