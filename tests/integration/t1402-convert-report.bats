#!/usr/bin/env bats
# What convert writes reads back to the same stack-viewer numbers: the
# guide's two examples, and a saved view whose defaults (time range,
# GroupPats, ExcPats, TimeMetric) travel with it.
load helpers
bats_require_minimum_version 1.5.0

PV="$DATA/perfview"

@test "the guide's XML and JSON examples give the same totals" {
	hs report "$PV/guide-simple.perfView.xml"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Totals Metric: 40  Count: 4  Samples: 4  First: 10.000  Last: 40.000"* ]]
	hs report "$PV/guide-simple.perfView.json"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Totals Metric: 40  Count: 4  Samples: 4  First: 10.000  Last: 40.000"* ]]
}

@test "converted files report exactly what the original does" {
	local f ext
	hs report "$PV/advanced.perfView.xml" --view calltree
	[ "$status" -eq 0 ]
	local want="$output"
	# the defaults apply: BROKEN excluded, the time range from 0.5 ms
	[[ "${lines[0]}" == "Totals Metric: 514  Count: 4  Samples: 4"* ]]
	for ext in .perfView.xml .perfView.xml.zip .perfView.json .perfView.json.zip; do
		"$HS_BIN" convert "$PV/advanced.perfView.xml" -o "$BATS_TEST_TMPDIR/c$ext"
		hs report "$BATS_TEST_TMPDIR/c$ext" --view calltree
		[ "$status" -eq 0 ]
		[ "$output" = "$want" ] || { echo "via $ext"; diff <(echo "$want") <(echo "$output"); false; }
	done
}

@test "folded keeps the metric per stack; its counts are the metric" {
	"$HS_BIN" convert "$PV/guide-simple.perfView.xml" -o "$BATS_TEST_TMPDIR/g.folded"
	hs report "$BATS_TEST_TMPDIR/g.folded"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Totals Metric: 40  Count: 40  Samples: 4  First: 0.000  Last: 0.000"* ]]
	hs report "$BATS_TEST_TMPDIR/g.folded" --format csv
	local folded="$output"
	hs report "$PV/guide-simple.perfView.xml" --format csv
	# the Name, Exc and Inc columns agree (rows compared in name order)
	[ "$(cut -d, -f1,3,6 <<<"$folded" | sort)" = "$(cut -d, -f1,3,6 <<<"$output" | sort)" ]
}
