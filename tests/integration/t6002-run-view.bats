#!/usr/bin/env bats
# `heapscope run` ends in the viewer at a terminal (a pty from script(1)),
# not when its output goes to a file or with --no-view.

bats_require_minimum_version 1.5.0
load helpers

teardown() {
	[ -z "${SPID:-}" ] || kill -KILL "$SPID" 2>/dev/null || true
}

@test "run at a terminal serves the trace until SIGTERM, then exits with the program's status" {
	command -v script >/dev/null || skip "script(1) is missing"
	T=$BATS_TEST_TMPDIR
	env -u DISPLAY -u WAYLAND_DISPLAY script -qfec \
		"exec '$HS_BIN' run -o '$T/t.heapscope' -- /bin/sh -c 'exit 3'" /dev/null \
		> "$T/out" 2>&1 < /dev/null &
	SPID=$!
	for _ in $(seq 200); do
		grep -q 'http://' "$T/out" && break
		sleep 0.05
	done
	url=$(grep -o 'http://[^ ]*' "$T/out" | tr -d '\r')
	[[ "$url" == http://127.0.0.1:*/\?token=* ]]
	code=$(curl -s -o "$T/info" -w '%{http_code}' "${url%%\?token=*}api/info?token=${url##*token=}")
	[ "$code" = 200 ]
	jq -e '.traces[0].name == "t.heapscope"' "$T/info"
	kill -TERM "$(pgrep -P "$SPID")"
	status=0
	wait "$SPID" || status=$?
	SPID=
	[ "$status" -eq 3 ]
	grep -q 'stopped (Terminated)' "$T/out"
}

@test "run with its output in a file, or with --no-view, does not serve" {
	T=$BATS_TEST_TMPDIR
	run --separate-stderr "$HS_BIN" run -o "$T/a.heapscope" -- /bin/true
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"serving"* ]]
	[ -s "$T/a.heapscope" ]
	command -v script >/dev/null || skip "script(1) is missing"
	timeout 30 script -qfec "exec '$HS_BIN' run --no-view -o '$T/b.heapscope' -- /bin/true" \
		/dev/null > "$T/out" 2>&1 < /dev/null
	grep -q 'trace written to' "$T/out"
	! grep -q 'serving' "$T/out" || false
}
