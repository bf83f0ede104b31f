#!/usr/bin/env bats
# heapscope run --wall: every thread sampled on a wall-clock timer, the
# `wall` source with CPU_TIME, BLOCKED_TIME and READIED_TIME leaves (a
# Thread Time view without kernel events).
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
	SLEEPER="$HS_BUILD/tests/targets/sleeper"
	SPINNER="$HS_BUILD/tests/targets/spinner"
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
	# and the thread that spins meanwhile is CPU_TIME, or READIED_TIME
	# while a loaded machine gave it no CPU
	"$HS_BIN" report --source wall --format csv --inc 'blocker!pipe_writer' \
		pipe.hs > w.csv 2>/dev/null
	between "$(awk -v c="$(col CPU_TIME 6 w.csv)" \
		-v r="$(col 'READIED_TIME (waiting for cpu)' 6 w.csv)" 'BEGIN { print c + r }')" 400 560
	[ "$(col BLOCKED_TIME 6 w.csv)" = 0 ]
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

@test "run --wall: sleeps, poll, select, epoll_wait and sigtimedwait are not cut short" {
	# A signal to a thread blocked in these makes them return EINTR (with
	# SA_RESTART too): the wall sampler signals no blocked thread. Each
	# call returns 0 and takes its whole time (200 ms, sleep 1 s, the
	# other thread's usleep 300 ms; at most 300 ms more on a loaded
	# machine), and of 100 rounds of 200 us of CPU then usleep(3 ms), no
	# usleep returns EINTR.
	[ -x "$SLEEPER" ] || skip "test target $SLEEPER not built"
	hs run -q --no-view --wall --no-heap -o w.hs -- "$SLEEPER" waits
	[ "$status" -eq 0 ]
	echo "$output"
	while read -r name ret err ms; do
		case $name in
		rounds) [ "$ret" -eq 0 ]; continue ;;
		sleep) want=1000 ;;
		other) want=300 ;;
		*) want=200 ;;
		esac
		[ "$ret" -eq 0 ] && [ "$err" -eq 0 ]
		between "$ms" "$((want - 1))" "$((want + 300))"
	done <<< "$output"
	[ "${#lines[@]}" -eq 9 ]
	# and the waits are BLOCKED_TIME under their calls
	"$HS_BIN" report --source wall --format csv --inc 'sleeper!waits;libc.so.6!__poll' \
		w.hs > p.csv 2>/dev/null
	between "$(col BLOCKED_TIME 6 p.csv)" 150 500
}

@test "run --wall: two waits back to back are each under its own stack" {
	# thread "seq" blocks in read() for about 500 ms, then at once in
	# pthread_mutex_lock() for about 500 ms: each wait's BLOCKED_TIME is
	# under its own call, 75% to 130% of what the program measured (the
	# tick in which one wait ends and the next begins goes to one of them,
	# and a loaded machine may make that tick long).
	hs run -q --no-view --wall --no-heap -o seq.hs -- "$BLOCKER" seq 500
	[ "$status" -eq 0 ]
	for what in 'seq_read;libc.so.6!read' 'seq_lock;pthread_mutex_lock'; do
		took=$(awk -v f="${what%%;*}" '$1 == "blocked" && $2 == f { print $3 }' <<< "$output")
		"$HS_BIN" report --source wall --format csv --inc "blocker!$what" seq.hs \
			> s.csv 2>/dev/null
		between "$(col BLOCKED_TIME 6 s.csv)" "$(awk -v t="$took" 'BEGIN { print t * 0.75 }')" \
			"$(awk -v t="$took" 'BEGIN { print t * 1.3 }')"
	done
}

@test "run --wall: a blocked stack is walked through frame pointers, not through stale frames" {
	# stale_reader() (built with frame pointers: its caller is found from
	# rbp, which /proc does not give) blocks in read() with frames that
	# leave_frames() left in its uninitialised buffer: the stack is
	# main -> stale_main -> stale_reader -> read, complete, without them.
	hs run -q --no-view --wall --no-heap -o st.hs -- "$BLOCKER" stale 300
	[ "$status" -eq 0 ]
	took=$(awk '$1 == "blocked" { print $3 }' <<< "$output")
	"$HS_BIN" report --source wall --format csv \
		--inc 'blocker!main;blocker!stale_main;blocker!stale_reader;libc.so.6!read' \
		st.hs > st.csv 2>/dev/null
	between "$(col BLOCKED_TIME 6 st.csv)" "$(awk -v t="$took" 'BEGIN { print t * 0.75 }')" \
		"$(awk -v t="$took" 'BEGIN { print t * 1.3 }')"
	"$HS_BIN" report --source wall --format csv --inc 'blocker!leave_frames' st.hs \
		> lf.csv 2>/dev/null
	[ "$(col BLOCKED_TIME 6 lf.csv)" = 0 ]
}

@test "run --wall: a thread waiting for a CPU is READIED_TIME, its CPU_TIME is the CPU it used" {
	# Two threads pinned to one CPU spin 300 ms of CPU each: each runs
	# about half the time and waits for the CPU the other half.
	[ -x "$SPINNER" ] || skip "test target $SPINNER not built"
	hs run -q --no-view --wall --no-heap -o pin.hs -- "$SPINNER" pinned 300
	[ "$status" -eq 0 ]
	ready=0
	for fn in pinned_spin rival_spin; do
		"$HS_BIN" report --source wall --format csv --inc "spinner!$fn" pin.hs \
			> pin.csv 2>/dev/null
		# the CPU time used (less what ran after the last tick), not the
		# wall time (about 600 ms)
		between "$(col CPU_TIME 6 pin.csv)" 200 330
		[ "$(awk -v b="$(col BLOCKED_TIME 6 pin.csv)" 'BEGIN { print (b < 30) }')" = 1 ]
		ready=$(awk -v a="$ready" -v r="$(col 'READIED_TIME (waiting for cpu)' 6 pin.csv)" \
			'BEGIN { print a + r }')
	done
	# each waited while the other ran: at least half of 600 ms between them
	between "$ready" 300 100000
}

@test "run --wall: an idle program is not signalled" {
	# a program asleep for a second: its thread is never signalled (one
	# look at its start, at most). What the sampler costs meanwhile is
	# measured in bench/cpu/run.sh, not here.
	[ -x "$SLEEPER" ] || skip "test target $SLEEPER not built"
	hs run -q --no-view --wall --no-heap -o idle.hs -- "$SLEEPER" idle 1000
	[ "$status" -eq 0 ]
	signals=$("$HS_BIN" dump idle.hs | awk '$1 == "sampling-end" { sub("signals=", "", $6); print $6 }')
	echo "signals $signals"
	[ "$signals" -le 2 ]
}
