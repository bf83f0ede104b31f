#!/usr/bin/env bats
# One very deep stack (issue 19, items 1 and 3): the JSON views are written
# without recursion (jansson's dumper overflowed the stack at 14,000
# frames, in report and in the GUI server), and the text views cap the
# indentation of a row's name, so that time and memory stay linear in the
# rows (100,000 frames took 5.2 GB before). The inputs are generated here.
load helpers
load view-helpers
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

# serve_deep N: `heapscope view` of one N-frame stack ($T/deep.folded) in
# the background, on a free port of 127.0.0.1 (view-helpers' view_start);
# sets pid, base and cookie.
serve_deep() {
	deep_folded "$1" "$T/deep.folded"
	view_start "$T/deep.folded" --bind 127.0.0.1
	pid=$(cat view.pid)
	base=$(cat base)
	cookie=$(cat cookie)
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
		! grep -q '^ \{65\}' "$T/$view.json" || false
	done
}

@test "/api/view of a 14,000-frame stack answers, and the server lives on" {
	serve_deep 14000
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

# bounded ARGS...: heapscope ARGS under 300 MB of address space and 30 s,
# standard output to $T/out (a quadratic view took 5.2 GB and was killed
# after 30 s; this one needs about 80 MB and 2 s). A sanitizer build
# reserves terabytes of address space: it gets the time bound only.
bounded() {
	local vm=300000
	! ldd "$HS_BIN" | grep -q libasan || vm=unlimited
	run --separate-stderr bash -c 'ulimit -v "$1" && shift && exec timeout 30 "$@" > "$T/out"' \
		bounded "$vm" "$HS_BIN" "$@"
}

@test "text views of a 100,000-frame stack stay within time and memory bounds" {
	deep_folded 100000 "$T/deep.folded"
	export T
	bounded report "$T/deep.folded" --view calltree
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(wc -l < "$T/out")" -eq 100004 ]	# 3 lines of heading, ROOT
	# indentation stops at 50 levels; deeper rows say their depth
	grep -q '^ \{100\}f49 ' "$T/out"
	grep -q '^ \{100\}\[51\] f50 ' "$T/out"
	grep -q '^ \{100\}\[100000\] f99999 ' "$T/out"
	! grep -q '^ \{101\}' "$T/out" || false
	# the Name column is padded to 200 characters at most
	[ "$(awk 'length > m { m = length } END { print m }' "$T/out")" -lt 400 ]
	bounded report "$T/deep.folded" --view callers --focus f50000
	[ "$status" -eq 0 ]
	[ "$(wc -l < "$T/out")" -eq 50006 ]	# 4 lines of heading, ROOT
	bounded report "$T/deep.folded" --view callees --focus f50000
	[ "$status" -eq 0 ]
	[ "$(wc -l < "$T/out")" -eq 50004 ]
	bounded report "$T/deep.folded" --view flame
	[ "$status" -eq 0 ]
	[ "$(wc -l < "$T/out")" -eq 1 ]
	bounded report "$T/deep.folded" --view calltree --format json
	[ "$status" -eq 0 ]
	grep -q '"name": "f99999"' "$T/out"
}

@test "one very long name does not widen every row" {
	{
		awk 'BEGIN { for (i = 0; i < 2000; i++) printf "%sf%d", (i ? ";" : ""), i; print " 5" }'
		printf 'main;%s 1\n' "$(head -c 60000 /dev/zero | tr '\0' x)"
	} > "$T/long.folded"
	export T
	bounded report "$T/long.folded" --view calltree
	[ "$status" -eq 0 ]
	# the long name's own line is long; the others are not padded to it
	[ "$(awk 'length > 60000' "$T/out" | wc -l)" -eq 1 ]
	[ "$(awk 'length > 400' "$T/out" | wc -l)" -eq 1 ]
}

@test "/api/view of a 50,000-frame stack is cut to a bounded answer that says so" {
	# issue 19, item 4: a 10,000-frame tree made a 4 GB answer; now an
	# answer holds at most 200,000 rows and about 64 MiB, depth first
	serve_deep 50000
	curl -s -o "$T/api.json" -w '%{http_code}' -b "$cookie" \
		"$base/api/view?trace=0&view=calltree" > "$T/code" &
	fetch=$!
	# another client is answered meanwhile
	code2=$(curl -s -o /dev/null -w '%{http_code}' -m 10 -b "$cookie" "$base/api/info")
	wait "$fetch"
	code3=$(curl -s -o "$T/small.json" -w '%{http_code}' -b "$cookie" \
		"$base/api/view?trace=0&view=calltree&max_rows=100")
	hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
	kill -TERM "$pid"
	wait "$pid"
	[ "$(cat "$T/code")" = 200 ]
	[ "$code2" = 200 ]
	[ "$code3" = 200 ]
	# at most about 64 MiB, and what it holds is valid and says it is cut
	[ "$(stat -c %s "$T/api.json")" -lt $((72 << 20)) ]
	valid_json "$T/api.json"
	tail -c 40 "$T/api.json" | grep -q '"truncated": true'
	total=$(grep -m1 '"total_rows"' "$T/api.json" | tr -dc 0-9)
	shown=$(grep -m1 '"shown_rows"' "$T/api.json" | tr -dc 0-9)
	[ "$total" -eq 50001 ]
	[ "$shown" -gt 1000 ]
	[ "$shown" -lt "$total" ]
	grep -q '"name": "f1000"' "$T/api.json"
	! grep -q '"name": "f49999"' "$T/api.json" || false
	# the server's memory stays well under the 7.9 GB it took
	[ "$hwm" -lt $((1024 * 1024)) ]
	valid_json "$T/small.json"
	grep -q '"shown_rows": 100,' "$T/small.json"
	grep -q '"truncated": true' "$T/small.json"
}
