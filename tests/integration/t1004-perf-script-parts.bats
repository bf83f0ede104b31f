#!/usr/bin/env bats
# A perf script file parsed in parts on several threads (issue 17,
# io/import_perf_script_parts.c) gives what the serial parse gives: the
# same export and the same views byte for byte, and an error at the same
# line of the whole file.

bats_require_minimum_version 1.5.0
load helpers

# Convert and report FILE with the environment given after it; the
# outputs go to $BATS_TEST_TMPDIR/TAG.*.
views() {
	local file=$1 tag=$2
	shift 2
	env "$@" "$HS_BIN" convert "$file" -o "$BATS_TEST_TMPDIR/$tag.perfView.json" \
		--from perf-script -f
	env "$@" "$HS_BIN" report "$file" --from perf-script --view calltree \
		--format json > "$BATS_TEST_TMPDIR/$tag.calltree.json"
	env "$@" "$HS_BIN" report "$file" --from perf-script --format csv \
		> "$BATS_TEST_TMPDIR/$tag.byname.csv"
}

same_views() {
	local t
	for t in perfView.json calltree.json byname.csv; do
		cmp "$BATS_TEST_TMPDIR/serial.$t" "$BATS_TEST_TMPDIR/parts.$t"
	done
}

@test "parts of every size give the serial export and views, byte for byte" {
	local f size
	for f in "$DATA"/perf/*.data.txt; do
		views "$f" serial HEAPSCOPE_PARSE_THREADS=1 2>/dev/null || continue
		for size in 1 300; do
			views "$f" parts HEAPSCOPE_PARSE_THREADS=3 HEAPSCOPE_PARSE_PART_BYTES=$size
			same_views
		done
	done
}

@test "a generated profile in parts on the default threads gives the serial model" {
	[ -x "$HS_BUILD/bench/gen_perf_script" ] || skip "no bench/gen_perf_script"
	"$HS_BUILD/bench/gen_perf_script" 3000000 2 2000 50 > "$BATS_TEST_TMPDIR/g.data.txt"
	views "$BATS_TEST_TMPDIR/g.data.txt" serial HEAPSCOPE_PARSE_THREADS=1
	views "$BATS_TEST_TMPDIR/g.data.txt" parts HEAPSCOPE_PARSE_PART_BYTES=100000
	same_views
	[ -s "$BATS_TEST_TMPDIR/parts.perfView.json" ]
}

@test "an error in a later part names its line in the whole file" {
	local f="$BATS_TEST_TMPDIR/bad.data.txt" last
	cat "$DATA/perf/workload.data.txt" > "$f"
	printf '\nx 1/1 [000] 9.5: 1 cycles:\n\tnot-hex f (m)\n' >> "$f"
	last=$(wc -l < "$f") # (run sets $lines)
	run -1 env HEAPSCOPE_PARSE_THREADS=3 HEAPSCOPE_PARSE_PART_BYTES=1 \
		"$HS_BIN" report "$f"
	[[ "$output" == *"bad.data.txt:$last: bad frame address 'not-hex'"* ]]
	run -1 env HEAPSCOPE_PARSE_THREADS=1 "$HS_BIN" report "$f"
	[[ "$output" == *"bad.data.txt:$last: bad frame address 'not-hex'"* ]]
}
