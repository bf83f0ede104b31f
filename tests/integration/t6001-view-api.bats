#!/usr/bin/env bats
# `heapscope view`: a server on a free port of 127.0.0.1; its API gives
# the JSON `heapscope report --format json` prints for the same parameters;
# the token, the assets-only rule and the request limits; a clean stop.

bats_require_minimum_version 1.5.0
load helpers

R="$DATA/report"

# start_server FILE...: run `heapscope view` in the background; sets PID,
# BASE (http://127.0.0.1:PORT), TOKEN and COOKIE (the cookie's name).
start_server() {
	# emptied here, not only by the redirection in the child: a URL left
	# by an earlier server would pass for this one's before it is ready
	: > "$BATS_TEST_TMPDIR/view.out"
	"$HS_BIN" view "$@" --no-browser --bind 127.0.0.1 --port 0 \
		> "$BATS_TEST_TMPDIR/view.out" 2> "$BATS_TEST_TMPDIR/view.err" &
	PID=$!
	for _ in $(seq 200); do
		grep -q 'http://' "$BATS_TEST_TMPDIR/view.out" && break
		sleep 0.05
	done
	url=$(grep -o 'http://[^ ]*' "$BATS_TEST_TMPDIR/view.out")
	[ -n "$url" ]
	BASE=${url%%/\?token=*}
	TOKEN=${url##*token=}
	COOKIE="hs_token_${BASE##*:}"
}

stop_server() {
	kill -TERM "$PID" 2>/dev/null || true
	wait "$PID" || return 1
}

teardown() {
	[ -z "${PID:-}" ] || kill -KILL "$PID" 2>/dev/null || true
}

# api PATH [CURL ARGS...]: GET with the token cookie; the body in $output,
# the status in $code.
api() {
	local path=$1
	shift
	code=$(curl -s -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' \
		-b "$COOKIE=$TOKEN" "$@" "$BASE$path")
	output=$(cat "$BATS_TEST_TMPDIR/body")
}

# same_as_report ARGS...: /api/view with the report options as arguments
# (--opt value -> opt=value) equals `heapscope report FILE ARGS --format json`.
same_as_report() {
	local file=$1 query=() a
	shift
	local -a args=("$@")
	local i=0
	while [ $i -lt ${#args[@]} ]; do
		a=${args[$i]#--}
		a=${a//-/_}
		if [ "$a" = flatten ]; then
			query+=(--data-urlencode "flatten=1")
			i=$((i + 1))
		else
			query+=(--data-urlencode "$a=${args[$((i + 1))]}")
			i=$((i + 2))
		fi
	done
	curl -s -G -b "$COOKIE=$TOKEN" "${query[@]}" "$BASE/api/view" > "$BATS_TEST_TMPDIR/api.json"
	"$HS_BIN" report "$file" "$@" --format json > "$BATS_TEST_TMPDIR/cli.json"
	diff -u "$BATS_TEST_TMPDIR/cli.json" "$BATS_TEST_TMPDIR/api.json"
}

@test "the URL, the token and a clean stop on SIGTERM and SIGINT" {
	start_server "$R/recursion.folded"
	[[ "$(head -1 "$BATS_TEST_TMPDIR/view.out")" == "heapscope: serving recursion.folded at http://127.0.0.1:"*"/?token="* ]]
	[[ "$TOKEN" =~ ^[0-9a-f]{32}$ ]]
	stop_server
	grep -q 'stopped (Terminated)' "$BATS_TEST_TMPDIR/view.err"
	start_server "$R/recursion.folded"
	kill -INT "$PID"
	wait "$PID"
	grep -q 'stopped (Interrupt)' "$BATS_TEST_TMPDIR/view.err"
}

@test "no token is 403, the token sets a cookie, the cookie is enough" {
	start_server "$R/recursion.folded"
	code=$(curl -s -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' "$BASE/")
	[ "$code" = 403 ]
	jq -e '.error | test("token")' "$BATS_TEST_TMPDIR/body"
	code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/api/info?token=0123456789abcdef0123456789abcdef")
	[ "$code" = 403 ]
	code=$(curl -s -o /dev/null -w '%{http_code}' -b "$COOKIE=nope" "$BASE/api/info")
	[ "$code" = 403 ]
	curl -s -D "$BATS_TEST_TMPDIR/headers" -o "$BATS_TEST_TMPDIR/page" "$BASE/?token=$TOKEN"
	grep -qi "^Set-Cookie: $COOKIE=$TOKEN; Path=/; HttpOnly; SameSite=Strict" "$BATS_TEST_TMPDIR/headers"
	grep -qi '^Content-Security-Policy: ' "$BATS_TEST_TMPDIR/headers"
	grep -q '<title>heapscope</title>' "$BATS_TEST_TMPDIR/page"
	api /js/main.js
	[ "$code" = 200 ]
	api /vendor/uPlot.esm.js
	[ "$code" = 200 ]
	api /api/info
	[ "$code" = 200 ]
	[ "$(jq -r '.traces[0].name' <<< "$output")" = recursion.folded ]
	stop_server
}

@test "no file outside the embedded assets is served" {
	start_server "$R/recursion.folded"
	for p in /../../../../etc/passwd /etc/passwd /%2e%2e/%2e%2e/etc/passwd \
		/js/../../README.md /web/index.html /meson.build /api/../index.html/x; do
		api "$p" --path-as-is
		[ "$code" = 404 ] || [ "$code" = 400 ]
		[[ "$output" != *"root:"* ]]
	done
	api /etc/passwd --path-as-is
	[ "$code" = 404 ]
	jq -e '.error' <<< "$output"
	stop_server
}

@test "huge and malformed requests get a 4xx and the server still answers" {
	start_server "$R/recursion.folded"
	# a URL of 100 KB
	long=$(head -c 100000 /dev/zero | tr '\0' 'a')
	api "/api/view?group=$long"
	[[ "$code" =~ ^4 ]]
	# a body of 2 MB
	head -c 2000000 /dev/zero | tr '\0' ' ' > "$BATS_TEST_TMPDIR/big"
	api /api/view --data-binary "@$BATS_TEST_TMPDIR/big"
	[ "$code" = 413 ]
	# malformed JSON, a bad pattern, a bad view, a method
	api /api/view --data-binary '{"view":'
	[ "$code" = 400 ]
	jq -e '.error | test("not JSON")' <<< "$output"
	api /api/view --data-binary '{"params":{"inc":"@((("}}'
	[ "$code" = 400 ]
	jq -e '.error | test("IncPats")' <<< "$output"
	api /api/view --data-binary '{"view":"pie"}'
	[ "$code" = 400 ]
	api /api/view -X DELETE
	[ "$code" = 405 ]
	# a pattern that makes the regular expression engine work hard
	api /api/view --data-binary '{"params":{"inc":"@(a*)*(a*)*(a*)*b"}}'
	[[ "$code" =~ ^[24] ]]
	# a garbage request line
	printf 'GARBAGE\r\n\r\n' | timeout 5 bash -c "cat > /dev/tcp/127.0.0.1/${BASE##*:}" || true
	api /api/info
	[ "$code" = 200 ]
	stop_server
}

@test "the API's view JSON is the report's JSON, view by view" {
	start_server "$R/recursion.folded"
	same_as_report "$R/recursion.folded"
	same_as_report "$R/recursion.folded" --view calltree
	same_as_report "$R/recursion.folded" --view calltree --depth 3 --limit 5
	same_as_report "$R/recursion.folded" --view callers --focus B
	same_as_report "$R/recursion.folded" --view callees --focus B
	same_as_report "$R/recursion.folded" --view caller-callee --focus B
	same_as_report "$R/recursion.folded" --view flame
	same_as_report "$R/recursion.folded" --group '{%}!->module $1' --fold-pct 10
	same_as_report "$R/recursion.folded" --view calltree --fold C --inc A --exc E
	same_as_report "$R/recursion.folded" --view calltree --drill B:exc
	same_as_report "$R/recursion.folded" --drill B --flatten
	same_as_report "$R/recursion.folded" --preset group-modules
	stop_server
}

@test "time windows, TimeMetric and saved defaults give the report's JSON" {
	start_server "$R/cpu.data.txt" "$R/defaults.perfView.xml"
	same_as_report "$R/cpu.data.txt" --view calltree --start 5 --end 25
	same_as_report "$R/cpu.data.txt" --view byname --start 12.5
	# the second file: trace=1, whose saved text boxes are the defaults
	curl -s -G -b "$COOKIE=$TOKEN" --data-urlencode trace=1 --data-urlencode view=calltree \
		"$BASE/api/view" > "$BATS_TEST_TMPDIR/api.json"
	"$HS_BIN" report "$R/defaults.perfView.xml" --view calltree --format json \
		> "$BATS_TEST_TMPDIR/cli.json"
	diff -u "$BATS_TEST_TMPDIR/cli.json" "$BATS_TEST_TMPDIR/api.json"
	api /api/info
	[ "$(jq '.traces | length' <<< "$output")" = 2 ]
	[ "$(jq -r '.traces[0].time_metric' <<< "$output")" = true ]
	stop_server
}

@test "tree rows, pages, timeline, events and a diff of two traces" {
	start_server "$R/recursion.folded" "$R/recursion.folded"
	api /api/tree --data-binary '{"view":"calltree","of":[0],"levels":0}'
	[ "$code" = 200 ]
	total=$(jq '.total_rows' <<< "$output")
	[ "$(jq '.rows | length' <<< "$output")" = $((total - 1)) ]
	api /api/rows --data-binary '{"sort":"inc","count":2}'
	[ "$(jq -r '.rows[0].name' <<< "$output")" = ROOT ]
	[ "$(jq '.rows | length' <<< "$output")" = 2 ]
	api /api/timeline --data-binary '{"buckets":10}'
	[ "$(jq '.all | length' <<< "$output")" = 10 ]
	api /api/samples --data-binary '{"name":"B","what":"exc"}'
	[ "$code" = 200 ]
	# the same trace against itself: every number cancels
	api /api/view --data-binary '{"diff":{"test":{"trace":0},"base":{"trace":1}}}'
	[ "$(jq '.summary.metric' <<< "$output")" = 0 ]
	api /api/overweight --data-binary '{"trace":0,"base":{"trace":1}}'
	[ "$code" = 200 ]
	[ "$(jq '.rows | length' <<< "$output")" = 0 ]
	stop_server
}
