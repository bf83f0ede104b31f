#!/usr/bin/env bats
# Slow clients without the token (issue 19, item 7): 70 sockets that
# trickle header bytes held all 64 connection slots, each byte restarting
# the 30 s timeout, and locked the user out. Now such guests have 10 s in
# all and a limit on their number, and the user gets in at once. The
# clients (slow-clients.py) stay on 127.0.0.1 and stop by themselves.
load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
	printf 'main;a 5\n' > "$T/a.folded"
	"$HS_BIN" view "$T/a.folded" --no-browser --bind 127.0.0.1 --port 0 \
		> "$T/view.out" 2> "$T/view.err" &
	PID=$!
	for _ in $(seq 200); do
		grep -q 'http://' "$T/view.out" && break
		sleep 0.05
	done
	url=$(grep -o 'http://[^ ]*' "$T/view.out")
	base=${url%%/\?token=*}
	PORT=${base##*:}
	COOKIE="hs_token_$PORT=${url##*token=}"
}

teardown() {
	kill -TERM "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
}

@test "70 trickling clients without the token neither lock the user out nor stay" {
	run timeout 40 python3 "$BATS_TEST_DIRNAME/slow-clients.py" "$PORT" "$COOKIE" 70 30
	echo "$output"
	[ "$status" -eq 0 ]
	# the user is answered at once
	[[ "${lines[0]}" =~ ^user\ 200\ [0-9.]+$ ]]
	secs=${lines[0]##* }
	awk -v s="$secs" 'BEGIN { exit !(s < 2) }'
	# every slow client was closed, none later than the 10 s deadline
	# (and a little polling)
	[[ "${lines[1]}" =~ ^closed\ 70\ [0-9.]+$ ]]
	last=${lines[1]##* }
	awk -v s="$last" 'BEGIN { exit !(s < 13) }'
	# the server still answers
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -b "$COOKIE" \
		"http://127.0.0.1:$PORT/api/info")
	[ "$code" = 200 ]
}
