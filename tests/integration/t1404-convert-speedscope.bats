#!/usr/bin/env bats
# convert --to speedscope: speedscope's JSON file format, golden for a tiny
# input, chosen by suffix or --to, read back with the same totals. Loading
# it into speedscope itself is tests/browser/speedscope.test.mjs.
load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

@test "a tiny input matches its golden speedscope file" {
	hs convert "$DATA/pprof/tiny.folded" -o - --to speedscope
	[ "$status" -eq 0 ]
	golden "$DATA/speedscope/tiny.speedscope.json"
}

@test "the suffix chooses it, content is sniffed, and totals read back" {
	hs convert "$DATA/perf/hotloop.data.txt" -o cpu.speedscope.json
	[ "$status" -eq 0 ]
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["profiles"][0]; assert p["type"]=="sampled" and p["unit"]=="milliseconds" and len(p["samples"])==len(p["weights"]), p' cpu.speedscope.json
	a=$("$HS_BIN" report "$DATA/perf/hotloop.data.txt" | head -1 | awk '{print $3}')
	b=$("$HS_BIN" report cpu.speedscope.json | head -1 | awk '{print $3}')
	echo "$a $b"
	[ "$a" = "$b" ]
	cp cpu.speedscope.json cpu.profile
	hs report cpu.profile
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"$a ms"* ]]
}
