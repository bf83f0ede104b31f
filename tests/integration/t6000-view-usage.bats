#!/usr/bin/env bats
# `heapscope view`: usage errors and unreadable inputs, before any server.

bats_require_minimum_version 1.5.0
load helpers

@test "view --help prints the usage" {
	hs view --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: heapscope view FILE"* ]]
}

@test "view without a file is a usage error" {
	hs view
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"no input file"* ]]
}

@test "view with a bad port, address or option is a usage error" {
	hs view "$DATA/report/recursion.folded" --port 70000
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--port must be at most 65535"* ]]
	hs view "$DATA/report/recursion.folded" --port x
	[ "$status" -eq 2 ]
	hs view "$DATA/report/recursion.folded" --bind localhost --no-browser
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'localhost' is not a numeric IPv4 or IPv6 address"* ]]
	hs view "$DATA/report/recursion.folded" --nope
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown option '--nope'"* ]]
}

@test "view of a missing or malformed file fails before serving" {
	hs view "$BATS_TEST_TMPDIR/missing.folded" --no-browser
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing.folded"* ]]
	[ -z "$output" ]
	printf '<StackSource><Samples><Sample Time="x">' > "$BATS_TEST_TMPDIR/bad.perfView.xml"
	hs view "$BATS_TEST_TMPDIR/bad.perfView.xml" --no-browser
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.perfView.xml"* ]]
}

@test "view on a port that is taken fails with a message" {
	"$HS_BIN" view "$DATA/report/recursion.folded" --no-browser --port 0 \
		> "$BATS_TEST_TMPDIR/out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		grep -q 'http://' "$BATS_TEST_TMPDIR/out" && break
		sleep 0.1
	done
	port=$(grep -o '127.0.0.1:[0-9]*' "$BATS_TEST_TMPDIR/out" | cut -d: -f2)
	hs view "$DATA/report/recursion.folded" --no-browser --port "$port"
	kill -TERM "$pid"
	wait "$pid"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cannot listen on 127.0.0.1 port $port"* ]]
}

@test "view --bind 0.0.0.0 names the address it listens on, with a warning" {
	"$HS_BIN" view "$DATA/report/recursion.folded" --no-browser --port 0 --bind 0.0.0.0 \
		> "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q 'warning' "$BATS_TEST_TMPDIR/err" && break
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid" || true
	port=$(grep -o '127.0.0.1:[0-9]*' "$BATS_TEST_TMPDIR/out" | cut -d: -f2)
	[ -n "$port" ]
	grep -q "warning: listening on 0.0.0.0 port $port: the GUI is reachable from the network" \
		"$BATS_TEST_TMPDIR/err"
	# on the loopback address: no warning
	"$HS_BIN" view "$DATA/report/recursion.folded" --no-browser --port 0 \
		> "$BATS_TEST_TMPDIR/out2" 2> "$BATS_TEST_TMPDIR/err2" &
	pid=$!
	for _ in $(seq 100); do
		grep -q 'http://' "$BATS_TEST_TMPDIR/out2" && break
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid" || true
	grep -q 'http://127.0.0.1:' "$BATS_TEST_TMPDIR/out2"
	! grep -q 'warning' "$BATS_TEST_TMPDIR/err2" || false
}
