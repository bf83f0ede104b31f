#!/usr/bin/env bats
# heapscope run --wall: every thread sampled on a wall-clock timer, the
# `wall` source with CPU_TIME and BLOCKED_TIME leaves (a Thread Time view
# without kernel events).
#
# tests/targets/blocker blocks one thread for 500 ms (in read() on a pipe,
# or in pthread_mutex_lock()) and prints how long the blocking call took.
# Wall samples carry the wall time since the thread's previous one, so
# the BLOCKED_TIME under the blocking call must add up to that time: at
# most 10% + 20 ms more, and at most 25% + 20 ms less (the ticks around
# the block's start and end count as CPU_TIME, the thread ran in them,
# and a sampler thread kept waiting by a loaded machine makes them long).

bats_require_minimum_version 1.5.0
load helpers

setup() {
	BLOCKER="$HS_BUILD/tests/targets/blocker"
	[ -x "$BLOCKER" ] || skip "test target $BLOCKER not built"
	cd "$BATS_TEST_TMPDIR"
}

# blocked MODE INCPATS: run blocker MODE, check BLOCKED_TIME under INCPATS
blocked() {
	hs run -q --no-view --wall --no-heap -o "$1.hs" -- "$BLOCKER" "$1" 500
	[ "$status" -eq 0 ]
	took=$(awk '$1 == "blocked" { print $3 }' <<< "$output")
	"$HS_BIN" report --source wall --format csv --inc "$2" "$1.hs" > "$1.csv" 2>/dev/null
	ms=$(col BLOCKED_TIME 6 "$1.csv")
	between "$ms" "$(awk -v t="$took" 'BEGIN { print t * 0.75 - 20 }')" \
		"$(awk -v t="$took" 'BEGIN { print t * 1.1 + 20 }')"
}

@test "run --wall: a thread blocked in read() is BLOCKED_TIME under read" {
	blocked pipe 'blocker!pipe_reader;libc.so.6!read'
	# and the thread that spins meanwhile is CPU_TIME
	"$HS_BIN" report --source wall --format csv --inc 'blocker!pipe_writer' \
		pipe.hs > w.csv 2>/dev/null
	between "$(col CPU_TIME 6 w.csv)" 400 560
}

@test "run --wall: a thread blocked on a mutex is BLOCKED_TIME under pthread_mutex_lock" {
	blocked mutex 'blocker!mutex_waiter;pthread_mutex_lock'
}

@test "run --wall: every thread's time adds up to the wall time" {
	hs run -q --no-view --wall --no-heap -o all.hs -- "$BLOCKER" pipe 300
	[ "$status" -eq 0 ]
	took=$(awk '$1 == "blocked" { print $3 }' <<< "$output")
	"$HS_BIN" report --source wall --format csv all.hs > all.csv 2>/dev/null
	# each thread lives about as long as the block (plus its start-up)
	for th in reader writer; do
		ms=$(awk -F, -v t="$th" '$1 ~ "^Thread \\([0-9]+\\) " t "$" { print $6 }' all.csv)
		between "$ms" 250 "$(awk -v t="$took" 'BEGIN { print t + 150 }')"
	done
	# one signal per blocked episode: the reader is not signalled every tick
	signals=$("$HS_BIN" dump all.hs | awk '$1 == "sampling-end" { sub("signals=", "", $6); print $6 }')
	echo "signals $signals"
	[ "$signals" -lt 500 ]
}
