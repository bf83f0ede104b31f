#!/usr/bin/env bats
# heapscope run's end: the summary reads the events while the trace is
# symbolized (in a child process), and takes the names the symbolizer
# wrote only for its leaks. What it prints is what it printed when the
# two ran one after the other: `heapscope stats`'s figures of the
# symbolized trace. A trace cut inside a chunk (SIGKILL) is symbolized
# first, since the symbolizer writes over its end.
load trace-helpers

setup() {
	trace_setup
}

# summary_is_stats RUN_STDERR TRACE: run's heap line gives stats's
# counts, bytes, peak heap and leaks of TRACE, formatted as run does,
# and its last line the size of the whole (symbolized) file.
summary_is_stats() {
	"$HS_BIN" stats "$2" --format json > s.json
	PYTHONPATH="$HS_SRC/tests/integration" python3 - "$1" s.json "$2" <<'EOF'
import json, sys
from run_sizes import count, human
line = [l for l in open(sys.argv[1]) if ", leaked " in l]
assert len(line) == 1, line
s = json.load(open(sys.argv[2]))
def s_(n):
    return "" if n == 1 else "s"
want = "heapscope: %d allocation%s (%s), %d free%s, peak heap %s, peak RSS %s" % (
    s["total_allocations"], s_(s["total_allocations"]), human(s["bytes_allocated"]),
    s["total_frees"], s_(s["total_frees"]), human(s["peak_heap_bytes"]),
    human(s["peak_rss_bytes"]))
want += ", leaked %s in %s block%s" % (human(s["leaked_bytes"]), count(s["leaked_blocks"]),
                                      s_(s["leaked_blocks"]))
if s["suppressed_leaked_blocks"] > 0:
    want += " (%s more in known exit-time allocations)" % human(s["suppressed_leaked_bytes"])
assert line[0] == want + "\n", (line[0], want)
# written after the symbolizer's work: the size of the whole file
import os
last = open(sys.argv[1]).read().splitlines()[-1]
want = "heapscope: trace written to %s (%s); look at it with: heapscope report %s" % (
    sys.argv[3], human(os.path.getsize(sys.argv[3])), sys.argv[3])
assert last == want, (last, want)
EOF
}

@test "the summary reads the events while the trace is symbolized, names included" {
	HS_LOG=debug trace_run --no-view -o m.heapscope -- "$TARGETS/memtest"
	[ "$status" -eq 0 ]
	grep -q "^heapscope: debug: run: the summary read the events while the trace was symbolized$" err.txt
	# the known exit-time allocation is told by its name, which only the
	# symbol section written beside the summary's pass has
	grep -q ", leaked 231 B in 3 blocks (4.0 KiB more in known exit-time allocations)$" err.txt
	summary_is_stats err.txt m.heapscope
	[ "$("$HS_BIN" stats m.heapscope --format json | jq .symbolized)" = true ]
}

@test "threads: the summary beside the symbolizer gives stats's figures" {
	HS_LOG=debug trace_run --no-view -o t.heapscope -- "$TARGETS/threads" 20000
	[ "$status" -eq 0 ]
	grep -q "^heapscope: debug: run: the summary read the events while the trace was symbolized$" err.txt
	summary_is_stats err.txt t.heapscope
}

@test "a trace cut inside a chunk is symbolized first, then summarized" {
	HS_LOG=debug trace_run --no-view -o c.heapscope -- "$TARGETS/crasher" kill
	[ "$status" -eq 137 ]
	grep -q "^heapscope: debug: run: c.heapscope does not end with its data: symbolized before the summary reads it$" err.txt
	! grep -q "the summary read the events while" err.txt
	grep -q "the trace was cut off (the program did not finish)" err.txt
	[ "$("$HS_BIN" stats c.heapscope --format json | jq .symbolized)" = true ]
}

@test "without symbols or without a summary, run does not start the other" {
	HS_LOG=debug trace_run --no-view --no-symbolize -o n.heapscope -- "$TARGETS/memtest"
	[ "$status" -eq 0 ]
	! grep -q "while the trace was symbolized" err.txt
	grep -q ", leaked 4.2 KiB in 4 blocks$" err.txt	# no names: nothing said apart
	HS_LOG=debug trace_run --no-view -q -o q.heapscope -- "$TARGETS/memtest"
	[ "$status" -eq 0 ]
	! grep -q "while the trace was symbolized" err.txt
	! grep -q "allocations" err.txt
	[ "$("$HS_BIN" stats q.heapscope --format json | jq .symbolized)" = true ]
}
