#!/usr/bin/env bats
# `heapscope view` answers several requests at once (issue 17, item 5):
# Stats of a big heap trace (seconds) does not hold the fast requests
# that come while it runs, and what it computed serves the next Stats.

bats_require_minimum_version 1.5.0
load view-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	# 4M allocations: `heapscope stats` takes seconds on them
	"$HS_BIN" run -q --no-view -o big.heapscope -- \
		"$HS_BUILD/tests/targets/churn" 40 4 25000 > big.out
	view_start big.heapscope
}

teardown_file() {
	view_stop
}

setup() {
	view_setup
}

# timed NAME PATH [CURL ARGS...]: GET PATH; NAME.time gets curl's total
# time, NAME.done the clock when the answer was in, NAME.code the status.
timed() {
	local name=$1 path=$2
	shift 2
	curl -s -o "$name.json" -w '%{http_code} %{time_total}\n' -b "$COOKIE" "$@" \
		"$BASE$path" > "$name.res"
	date +%s.%N > "$name.done"
}

@test "a slow Stats does not hold the requests that come after it" {
	timed stats '/api/stats?trace=0' &
	slow=$!
	sleep 0.3
	timed info /api/info
	timed view '/api/view?trace=0&view=byname'
	timed tree '/api/tree?trace=0&view=calltree'
	wait "$slow"
	read -r code stats_time < stats.res
	[ "$code" = 200 ]
	jq -e '.heap.total_allocations >= 4000000' stats.json
	# Stats took long enough for the test to mean something
	awk -v t="$stats_time" 'BEGIN { exit !(t > 1.0) }'
	for name in info view tree; do
		read -r code t < "$name.res"
		[ "$code" = 200 ]
		# each answered while Stats still ran, and quickly (loose bound)
		awk -v a="$(cat "$name.done")" -v b="$(cat stats.done)" \
			'BEGIN { exit !(a < b) }'
		awk -v t="$t" -v s="$stats_time" 'BEGIN { exit !(t < s / 2) }'
	done
}

@test "the heap trace's stats are computed once" {
	timed again '/api/stats?trace=0'
	read -r code t < again.res
	[ "$code" = 200 ]
	jq -e '.heap.total_allocations >= 4000000' again.json
	awk -v t="$t" 'BEGIN { exit !(t < 1.0) }'
}

@test "requests at once for one timeline compute it once and agree" {
	for i in 1 2 3 4; do
		timed "tl$i" '/api/timeline?trace=0&source=net' &
	done
	wait
	for i in 1 2 3 4; do
		read -r code t < "tl$i.res"
		[ "$code" = 200 ]
		cmp tl1.json "tl$i.json"
	done
	jq -e '.heap | length > 0' tl1.json
}

@test "GET /api/find takes its pattern from the URL (issue 19, item 18)" {
	get /api/find trace=0 view=calltree pattern=site_churn
	[ "$(jq -r '.row.name' <<< "$output")" != null ]
	jq -r '.row.name' <<< "$output" | grep -q site_churn
	get /api/find trace=0 pattern=site_churn backward=perhaps
	jq -r .error <<< "$output" | grep -q 'backward must be true or false'
}

@test "a source switch's stats can leave the heap stats out" {
	get /api/stats trace=0 source=leaks heap=false
	jq -e '.source.samples >= 0 and (has("heap") | not)' <<< "$output"
	get /api/stats trace=0 source=leaks
	jq -e '.heap.total_allocations >= 4000000' <<< "$output"
}

@test "the peak source streamed from the file equals report's" {
	get /api/view trace=0 source=peak view=calltree
	printf '%s\n' "$output" > api-peak.json
	"$HS_BIN" report big.heapscope --source peak --view calltree --format json > cli-peak.json
	diff -u cli-peak.json api-peak.json
}

@test "a request older than its client's last Cancel is skipped (409)" {
	gen() {
		curl -s -o "$1.json" -w '%{http_code}' -b "$COOKIE" \
			-H "X-Heapscope-Generation: 0123abcd:$2" \
			"$BASE/api/view?trace=0&view=calltree&fold_pct=3"
	}
	[ "$(gen first 1)" = 200 ]
	# generation 0 came after 1 from the same client: it was cancelled
	[ "$(gen stale 0)" = 409 ]
	jq -r .error stale.json | grep -q 'cancelled by the client'
	[ "$(gen again 1)" = 200 ]
	# another client, or none, is not affected
	code=$(curl -s -o /dev/null -w '%{http_code}' -b "$COOKIE" \
		-H 'X-Heapscope-Generation: 99ff:0' "$BASE/api/view?trace=0&view=calltree")
	[ "$code" = 200 ]
	get /api/info
	jq -e '.traces | length == 1' <<< "$output"
}
