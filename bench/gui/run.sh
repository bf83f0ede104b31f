#!/bin/bash
# run.sh - the GUI's targets of issue 17, measured against the API with
# curl as the browser sends it (POST bodies, the calls of one Update at
# once): how long `heapscope view` takes to open, each Update, a source
# switch, Stats, and the server's peak memory.
#
#   bench/gui/run.sh HEAPSCOPE PERF_SCRIPT HEAP_TRACE
#
# PERF_SCRIPT: issue 17's 2M samples of 50k frames are
# `build/bench/gen_perf_script 6170000000 1 50000 20000 > p.data.txt`
# (6.2 GB; 20000 distinct walks, bench/README.md); HEAP_TRACE: e.g.
# `heapscope run -q --no-view -o h.hstrace build/bench/rand_loop 1
# 7000000` (7M allocations). Each step prints "STEP seconds (server CPU
# seconds)", an Update also the server's resident memory after it and
# its peak so far; run it with the old and the new binary and compare
# (bench/README.md has the numbers). Targets: perf script opens in under
# 5 s, each Update under 1 s, server under 1.5 GB; heap trace: any
# Update under 200 ms, a first source switch under 2 s. Either file may
# be given as - to leave its part out.
set -eu
HS=$1
PERF=$2
HEAP=$3
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-gui-bench.XXXXXX")
PID=
cleanup() {
	[ -z "$PID" ] || kill "$PID" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# start FILE: serve FILE; prints how long until /api/info answered
start() {
	local t0 url
	t0=$(now)
	"$HS" view "$1" --no-browser --port 0 > "$DIR/out" 2> "$DIR/err" &
	PID=$!
	until grep -q 'http://' "$DIR/out" 2> /dev/null; do
		kill -0 "$PID" || { cat "$DIR/err" >&2; exit 1; }
		sleep 0.05
	done
	url=$(grep -o 'http://[^ ]*' "$DIR/out")
	BASE=${url%%/\?token=*}
	COOKIE="hs_token_${BASE##*:}=${url##*token=}"
	curl -sf -o /dev/null -b "$COOKIE" "$BASE/api/info"
	echo "open $(since "$t0") (server CPU $(cpu))"
}

# the server's CPU seconds so far: utime + stime (fields 14 and 15 of
# stat; the command name has no ')' here)
cpu() {
	awk -v hz="$(getconf CLK_TCK)" -F') ' \
		'{ split($2, f, " "); printf "%.2f", (f[12] + f[13]) / hz }' "/proc/$PID/stat"
}
cpu_since() { awk -v a="$1" -v b="$(cpu)" 'BEGIN { printf "%.2f", b - a }'; }

# the server's resident memory now and its peak so far, MB
mem() {
	awk '/VmRSS/ { r = $2 } /VmHWM/ { h = $2 }
		END { printf "RSS %d MB, peak %d MB", r / 1024, h / 1024 }' "/proc/$PID/status"
}

stop() {
	echo "server peak RSS MB $(awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$PID/status")"
	echo "server CPU s $(cpu)"
	kill "$PID"
	wait "$PID" 2> /dev/null || true
	PID=
}

# call NAME BODY: POST BODY to /api/NAME (fails on an HTTP error)
call() {
	curl -sf -o /dev/null -b "$COOKIE" -H 'Content-Type: application/json' \
		--data-binary "$2" "$BASE/api/$1"
}

# update LABEL QUERY: what the GUI asks after Update on the CallTree tab
# (tree skeleton, the first ByName page, the timeline), all at once
update() {
	local t0 c0 q=$2 pids=()
	t0=$(now)
	c0=$(cpu)
	call tree "{$q,\"view\":\"calltree\",\"levels\":1,\"auto\":true,\"skeleton\":true,\"detail\":200}" & pids+=($!)
	call rows "{$q,\"view\":\"byname\",\"offset\":0,\"count\":200}" & pids+=($!)
	call timeline "{$q,\"buckets\":600}" & pids+=($!)
	wait "${pids[@]}"
	echo "update $1 $(since "$t0") (server CPU $(cpu_since "$c0"), $(mem))"
}

# timed LABEL NAME BODY: one call's time
timed() {
	local t0
	t0=$(now)
	call "$2" "$3"
	echo "$1 $(since "$t0")"
}

T='"trace":0'
if [ "$PERF" != - ]; then
echo "== perf script: $PERF"
start "$PERF"
update first "$T"
update fold_pct "$T,\"params\":{\"fold_pct\":1}"
update inc "$T,\"params\":{\"fold_pct\":1,\"inc\":\"module0\"}"
update range "$T,\"params\":{\"fold_pct\":1,\"start\":1000,\"end\":2000}"
update group "$T,\"params\":{\"group\":\"{%}!->module \$1\"}"
update back "$T"
stop
fi

[ "$HEAP" != - ] || exit 0
echo "== heap trace: $HEAP"
start "$HEAP"
update first "$T"
update fold_pct "$T,\"params\":{\"fold_pct\":1}"
update range "$T,\"params\":{\"start\":100,\"end\":300}"
update inc "$T,\"params\":{\"inc\":\"work\"}"
update back "$T"
# a source switch: the GUI reads the source through stats, then updates
timed "switch peak (stats)" stats "{$T,\"source\":\"peak\",\"heap\":false}"
update "switch peak" "$T,\"source\":\"peak\""
update "switch back" "$T,\"source\":\"alloc\""
update "switch peak again" "$T,\"source\":\"peak\""
# Stats, and an Update while it runs
t0=$(now)
call stats "{$T}" &
stats=$!
sleep 0.2
update "during Stats" "$T,\"params\":{\"fold_pct\":2}"
wait "$stats"
echo "Stats $(since "$t0")"
timed "Stats again" stats "{$T}"
stop
