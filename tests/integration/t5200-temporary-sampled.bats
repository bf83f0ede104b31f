#!/usr/bin/env bats
# Temporary allocations of a sampled trace (run --sample-bytes) against
# the full trace's, on tests/targets/temps.c, whose temporaries are known
# exactly: 4N + 1 blocks of N * 1472 + 32 bytes (N = 50000 rounds).
#
# The collector marks the free of a sampled block that was its thread's
# latest allocation, none made since (sampled or not), so each sampled
# block counts as temporary exactly when it is, and its weight makes the
# estimate unbiased. At --sample-bytes 1024 its standard deviation is
# 0.6% of the count and 0.3% of the bytes (sum over the rounds' blocks of
# (1 - p) / p, and of size^2 (1 - p) / p, p = 1 - exp(-size / 1024)), so
# the 5% tolerance below is more than 8 standard deviations: a correct
# collector fails it less than once in 10^15 runs. A test on the recorded
# allocations alone counts most sampled 4096-byte blocks temporary (the
# 64-byte allocation after each is rarely recorded): bytes came out 3.6
# times too high, the count 1.24 times.
load trace-helpers

N=50000
COUNT=$((4 * N + 1))
BYTES=$((N * 1472 + 32))

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q -o full.heapscope -- "$TARGETS/temps" $N
	"$HS_BIN" run -q --sample-bytes 1024 -o sampled.heapscope -- "$TARGETS/temps" $N
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

# temporary TRACE: "bytes count" of its temporary view, rounded.
temporary() {
	"$HS_BIN" report "$1" --source temporary --format json |
		python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print("%d %d" % (round(s["metric"]), round(s["count"])))'
}

@test "the full trace's temporaries are the program's, exactly" {
	[ "$(temporary full.heapscope)" = "$BYTES $COUNT" ]
}

@test "the sampled estimate is within 5% of the full trace's" {
	local full sampled
	full=$(temporary full.heapscope)
	sampled=$(temporary sampled.heapscope)
	echo "full: $full, sampled: $sampled"
	python3 - "$full" "$sampled" <<'PY'
import sys
fb, fc = map(float, sys.argv[1].split())
sb, sc = map(float, sys.argv[2].split())
print("bytes %+.2f%%, count %+.2f%%" % (100 * (sb / fb - 1), 100 * (sc / fc - 1)))
assert abs(sb / fb - 1) < 0.05 and abs(sc / fc - 1) < 0.05
PY
}

@test "the marks are FREE_TEMPORARY records, only in the sampled trace" {
	"$HS_BIN" dump sampled.heapscope > sampled.dump
	"$HS_BIN" dump full.heapscope > full.dump
	grep -q 'free-temporary' sampled.dump
	! grep -q 'free-temporary' full.dump || false
}

@test "stats and the temporary view agree on the sampled trace" {
	"$HS_BIN" stats sampled.heapscope --format json > stats.json
	python3 - "$(temporary sampled.heapscope)" <<'PY'
import json, sys
s = json.load(open("stats.json"))
b, c = map(int, sys.argv[1].split())
assert round(s["temporary_bytes"]) == b and round(s["temporary_allocations"]) == c, s
PY
}
