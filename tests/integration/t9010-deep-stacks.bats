#!/usr/bin/env bats
# One very deep stack (issue 19, item 1): the JSON views are written
# without recursion (jansson's dumper overflowed the stack at 14,000
# frames, in report and in the GUI server). The inputs are generated here.
load helpers
bats_require_minimum_version 1.5.0

# deep_folded N FILE: one stack "f0;f1;...;fN-1" of metric 5, as folded text.
deep_folded() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "%sf%d", (i ? ";" : ""), i; print " 5" }' > "$2"
}

# valid_json FILE: FILE parses as JSON (on a thread with room for its depth).
valid_json() {
	python3 -c '
import json, sys, threading
sys.setrecursionlimit(1000000)
threading.stack_size(512 << 20)
ok = []
t = threading.Thread(target=lambda: ok.append(json.load(open(sys.argv[1]))))
t.start(); t.join()
sys.exit(0 if ok else 1)' "$1"
}

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "JSON tree views of a 14,000-frame stack are valid JSON" {
	deep_folded 14000 "$T/deep.folded"
	for view in calltree flame callers callees; do
		focus=()
		[[ $view != callers && $view != callees ]] || focus=(--focus f7000)
		# to a file: bats' run splits 22 MB into lines slowly
		"$HS_BIN" report "$T/deep.folded" --view "$view" "${focus[@]}" \
			--format json > "$T/$view.json" 2> "$T/err"
		[ ! -s "$T/err" ]
		valid_json "$T/$view.json"
		# the far end of the stack is there, and no line is indented
		# past 64 spaces
		far=f13999
		[ "$view" != callers ] || far=f0
		grep -q "\"name\": \"$far\"" "$T/$view.json"
		! grep -q '^ \{65\}' "$T/$view.json"
	done
}

@test "/api/view of a 14,000-frame stack answers, and the server lives on" {
	deep_folded 14000 "$T/deep.folded"
	"$HS_BIN" view "$T/deep.folded" --no-browser --bind 127.0.0.1 --port 0 \
		> "$T/view.out" 2> "$T/view.err" &
	pid=$!
	for _ in $(seq 200); do
		grep -q 'http://' "$T/view.out" && break
		sleep 0.05
	done
	url=$(grep -o 'http://[^ ]*' "$T/view.out")
	base=${url%%/\?token=*}
	cookie="hs_token_${base##*:}=${url##*token=}"
	code=$(curl -s -o "$T/api.json" -w '%{http_code}' -b "$cookie" \
		"$base/api/view?trace=0&view=calltree")
	code2=$(curl -s -o /dev/null -w '%{http_code}' -b "$cookie" "$base/api/info")
	kill -TERM "$pid"
	wait "$pid"
	[ "$code" = 200 ]
	[ "$code2" = 200 ]
	valid_json "$T/api.json"
	"$HS_BIN" report "$T/deep.folded" --view calltree --format json > "$T/cli.json"
	cmp "$T/cli.json" "$T/api.json"
}
