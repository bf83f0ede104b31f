#!/usr/bin/env bats
# heapscope stats: the numbers of tests/targets/memtest.c's trace, exactly,
# as JSON and as text; damaged and foreign inputs.
load trace-helpers

setup_file() {
	memtest_traces
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

# key FILE KEY: a value of `stats --format json`, as Python prints it.
key() {
	"$HS_BIN" stats "$1" --format json |
		python3 -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print(json.dumps(v))' "$2"
}

STDIO=4096	# stdout's buffer (see t5100)

@test "stats --format json: totals, peak, leaks, temporaries" {
	"$HS_BIN" stats m.heapscope --format json > s.json
	python3 - "$STDIO" <<'EOF'
import json, sys
stdio = int(sys.argv[1])
s = json.load(open("s.json"))
want = {
    "total_allocations": 28, "total_frees": 24, "total_reallocs": 1,
    "bytes_allocated": 211737 + stdio, "peak_heap_bytes": 210231 + stdio,
    "leaked_bytes": 231, "leaked_blocks": 3,
    "suppressed_leaked_bytes": stdio, "suppressed_leaked_blocks": 1,
    "temporary_allocations": 13, "temporary_bytes": 201474,
    "unmatched_frees": 0, "mmaps": 2, "munmaps": 2, "threads": 1,
    "complete": True, "lost": 0, "symbolized": True, "sampled": False,
}
for k, v in want.items():
    assert s[k] == v, (k, s[k], v)
assert s["peak_rss_bytes"] > 0 and s["peak_heap_ms"] >= 0
assert s["allocations_per_second"] > 0 and s["duration_ms"] >= 0
assert s["command"][0].endswith("/memtest") and s["trace"] == "m.heapscope"
hist = {(b["min"], b["max"]): (b["count"], b["bytes"]) for b in s["size_histogram"]}
assert hist[(64, 127)] == (8, 551), hist
assert hist[(512, 1023)] == (11, 11000), hist
assert hist[(131072, 262143)] == (1, 200000), hist
top = [(t["name"], t["bytes"], t["count"]) for t in s["top_by_bytes"]]
assert top[:2] == [("memtest!site_large", 200000, 1), ("memtest!site_block", 10000, 10)], top
top = [(t["name"], t["count"]) for t in s["top_by_count"]]
assert top[:3] == [("memtest!site_block", 10), ("memtest!site_temp", 5),
                   ("memtest!inl_alloc (inline)", 4)], top
assert [(t["name"], t["bytes"]) for t in s["top_by_leaked"]] == [("memtest!site_leak", 231)]
peak = {t["name"]: t["bytes"] for t in s["top_at_peak"]}
assert peak == {"memtest!site_large": 200000, "memtest!site_block": 10000,
                "libc.so.6!_IO_file_doallocate": stdio, "memtest!site_leak": 231}, peak
for name in ("heap_timeline", "rss_timeline"):
    tl = s[name]
    assert 0 < len(tl) <= 200 and all(len(p) == 2 for p in tl), name
assert max(p[1] for p in s["heap_timeline"]) == 210231 + stdio
EOF
}

@test "stats: the heap timeline shows the peak and its fall" {
	"$HS_BIN" stats slow.heapscope --format json --points 50 > s.json
	python3 - "$STDIO" <<'EOF'
import json, sys
stdio = int(sys.argv[1])
s = json.load(open("s.json"))
tl = s["heap_timeline"]
assert len(tl) <= 50
# the peak lasts 50 ms, then the heap falls to the leaks for 50 ms, then
# the last allocations (the realloc'ed 1000 bytes at most) come
values = [p[1] for p in tl]
peak = values.index(210231 + stdio)
fall = values.index(231 + stdio, peak)
assert max(values[fall:]) == 1231 + stdio, tl
assert values[-1] >= 231 + stdio, tl
assert s["duration_ms"] >= 100
EOF
}

@test "stats text: the summary, the lists and the charts" {
	hs stats m.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"allocations:            28 ("* ]]
	[[ "$output" == *"bytes allocated:        $((211737 + STDIO)) ("* ]]
	[[ "$output" == *"peak heap:              $((210231 + STDIO)) ("* ]]
	[[ "$output" == *"leaked:                 231 bytes in 3 blocks (and $STDIO bytes in 1 block of"* ]]
	[[ "$output" == *"temporary allocations:  13 (201474 bytes)"* ]]
	[[ "$output" == *"top call sites by bytes allocated:"*"200000 bytes  (1 allocation)  memtest!site_large"* ]]
	[[ "$output" == *"top call sites by bytes leaked:"*"231 bytes  (3 allocations)  memtest!site_leak"* ]]
	[[ "$output" == *"heap in use (highest "*"  |"*"#"* ]]
	[[ "$output" == *"RSS (highest "* ]]
	hs stats --top 1 m.heapscope
	[ "$(echo "$output" | grep -c 'memtest!site_large')" -eq 2 ]	# by bytes and at the peak
}

@test "run's summary and stats give the same peak RSS: the trace's highest RSS record" {
	"$HS_BIN" run --no-view -o r.heapscope -- "$TARGETS/memtest" > /dev/null 2> r.err
	local run stats bytes
	run=$(sed -n 's/.*, peak RSS \([^,]*\), leaked .*/\1/p' r.err)
	stats=$("$HS_BIN" stats r.heapscope | sed -n 's/^peak RSS: *[0-9]* (\(.*\)) at .*/\1/p')
	[ -n "$run" ] && [ "$run" = "$stats" ]
	# the number is the highest RSS record of the trace
	bytes=$("$HS_BIN" dump r.heapscope |
		sed -n 's/.*rss t=[0-9]* bytes=\([0-9]*\).*/\1/p' | sort -n | tail -1)
	[ -n "$bytes" ]
	[ "$(key r.heapscope peak_rss_bytes)" = "$bytes" ]
}

# leak_check RUN_STDERR TRACE: run's summary gives stats's leaks, formatted
# as run formats sizes and counts.
leak_check() {
	"$HS_BIN" stats "$2" --format json > lk.json
	PYTHONPATH="$HS_SRC/tests/integration" python3 - "$1" lk.json <<'EOF'
import json, sys
from run_sizes import count, human
line = [l for l in open(sys.argv[1]) if ", leaked " in l]
assert len(line) == 1, line
s = json.load(open(sys.argv[2]))
want = ", leaked %s in %s block%s" % (human(s["leaked_bytes"]), count(s["leaked_blocks"]),
                                     "" if s["leaked_blocks"] == 1 else "s")
if s["suppressed_leaked_blocks"] > 0:
    want += " (%s more in known exit-time allocations)" % human(s["suppressed_leaked_bytes"])
assert line[0].endswith(want + "\n"), (line[0], want)
EOF
}

@test "run's summary gives stats's leaks: the known exit-time allocations said apart" {
	"$HS_BIN" run --no-view -o l.heapscope -- "$TARGETS/memtest" > /dev/null 2> l.err
	grep -q ", leaked 231 B in 3 blocks (4.0 KiB more in known exit-time allocations)$" l.err
	leak_check l.err l.heapscope
	# without symbols no suppression matches: all that was live at exit
	"$HS_BIN" run --no-view --no-symbolize -o l2.heapscope -- "$TARGETS/memtest" \
		> /dev/null 2> l2.err
	grep -q ", leaked 4.2 KiB in 4 blocks$" l2.err	# 231 + 4096 bytes
	leak_check l2.err l2.heapscope
	# sampled: the same estimates
	"$HS_BIN" run --no-view --sample-bytes 64 -o l3.heapscope -- "$TARGETS/memtest" \
		> /dev/null 2> l3.err
	grep -q "leaks are estimates" l3.err
	leak_check l3.err l3.heapscope
}

@test "stats: a cut-off trace says what it recovered; garbage is an error" {
	local size=$(stat -c %s m.heapscope)
	"$HS_BIN" run -q --no-symbolize -o plain.heapscope -- "$TARGETS/memtest" > /dev/null
	size=$(stat -c %s plain.heapscope)
	head -c $((size - 8)) plain.heapscope > cut.heapscope
	hs stats cut.heapscope
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"cut off"*"events recovered"* ]]
	[[ "$output" == *"cut off"* ]]
	head -c 40 plain.heapscope > tiny.heapscope
	hs stats tiny.heapscope --format json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"total_allocations": 0'* ]]
	printf 'a;b 3\n' > x.folded
	hs stats x.folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"not a heapscope trace"* ]]
	hs stats missing.heapscope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing.heapscope"* ]]
}

@test "stats: usage" {
	hs stats
	[ "$status" -eq 2 ]
	hs stats m.heapscope --format csv
	[ "$status" -eq 2 ]
	hs stats m.heapscope --top 0
	[ "$status" -eq 2 ]
	hs stats m.heapscope --points 1
	[ "$status" -eq 2 ]
	hs stats --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: heapscope stats TRACE"* ]]
}
