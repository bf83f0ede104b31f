#!/usr/bin/env bats
# convert --to pprof: gzip'd profile.proto that reads back, matches a
# golden decoding, and that the real `go tool pprof` reads with the same
# totals as `heapscope report` (memory views and CPU).
load trace-helpers
bats_require_minimum_version 1.5.0

PROTO="$HS_SRC/src/io"

setup_file() {
	memtest_traces
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

# decode FILE.pb.gz: the profile as protoc's text format, in $output
decode() {
	run sh -c "gzip -dc '$1' | protoc-c --decode=perftools.profiles.Profile \
		--proto_path='$PROTO' profile.proto"
}

# profile_text FILE: pprof FILE as protoc's text, on standard output.
profile_text() {
	gzip -dc "$1" | protoc-c --decode=perftools.profiles.Profile \
		--proto_path="$PROTO" profile.proto
}

# total ARGS...: "Metric Count" of the report's summary.
total() {
	"$HS_BIN" report "$@" --format json |
		python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print("%.6g %.6g" % (s["metric"], s["count"]))'
}

# needs_go: skip, saying why, where Debian's golang-go is not installed.
needs_go() {
	command -v go > /dev/null ||
		skip "go is not installed (Debian: golang-go); go tool pprof checks skipped"
}

# pprof_total FILE INDEX UNIT: the total `go tool pprof -top` shows.
pprof_total() {
	go tool pprof -symbolize=none -top -sample_index="$2" -unit="$3" "$1" 2> /dev/null |
		sed -n "s/^Showing nodes accounting for .* of \([0-9.]*\)$3 total$/\1/p"
}

# pprof_traces_sum FILE INDEX UNIT: the sum of every trace `-traces` shows.
pprof_traces_sum() {
	go tool pprof -symbolize=none -traces -sample_index="$2" -unit="$3" "$1" 2> /dev/null |
		awk -v u="$3" '$1 ~ "^-?[0-9.]+" u "$" { s += $1 + 0 } END { printf "%.0f\n", s }'
}

@test "a tiny profile matches its golden decoding" {
	hs convert "$DATA/pprof/tiny.folded" -o tiny.pb.gz -f
	[ "$status" -eq 0 ]
	[ "$(head -c 2 tiny.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ]
	decode tiny.pb.gz
	[ "$status" -eq 0 ]
	golden "$DATA/pprof/tiny.golden.txt"
}

@test "the suffix .pb.gz and --to pprof choose it; it reads back the same" {
	hs convert m.heapscope -o m.pb.gz -f
	[ "$status" -eq 0 ]
	hs convert m.heapscope -o - --to pprof
	[ "$status" -eq 0 ]
	[ "$(total m.pb.gz)" = "$(total m.heapscope)" ]
	hs convert m.pb.gz -o m2.pb.gz -f
	# the same profile, but for duration_nanos: pprof samples carry no
	# times, so a profile read back spans nothing. The trace's clock
	# ticks in milliseconds, and a loaded machine can stretch memtest
	# over a tick, which made the bytes differ there.
	diff <(profile_text m.pb.gz | grep -v '^duration_nanos:') \
		<(profile_text m2.pb.gz | grep -v '^duration_nanos:')
	[ "$(profile_text m2.pb.gz | grep -c '^duration_nanos:')" = 0 ]
	# sniffed without the suffix too
	cp m.pb.gz m.profile
	[ "$(total m.profile)" = "$(total m.heapscope)" ]
}

@test "each memory view is its sample types; CPU is cpu/nanoseconds" {
	hs convert m.heapscope -o alloc.pb.gz -f
	decode alloc.pb.gz
	[[ "$output" == *'string_table: "alloc_objects"'* ]]
	[[ "$output" == *'string_table: "alloc_space"'* ]]
	hs convert m.heapscope --source leaks -o leaks.pb.gz -f
	decode leaks.pb.gz
	[[ "$output" == *'string_table: "inuse_objects"'* ]]
	[[ "$output" == *'string_table: "inuse_space"'* ]]
	hs convert "$DATA/perf/hotloop.data.txt" -o cpu.pb.gz -f
	decode cpu.pb.gz
	[[ "$output" == *'string_table: "cpu"'* ]]
	[[ "$output" == *'string_table: "nanoseconds"'* ]]
}

@test "go tool pprof -top and -traces show report's memory totals" {
	needs_go
	local src metric count
	for src in alloc leaks peak; do
		"$HS_BIN" convert m.heapscope --source "$src" -o "$src.pb.gz" -f
		# every sample: pprof cannot carry the view's default ExcPats
		read -r metric count <<< "$(total m.heapscope --source "$src" --exc '')"
		kind=alloc
		[ "$src" = alloc ] || kind=inuse
		echo "$src: report $metric B $count objects"
		[ "$(pprof_total "$src.pb.gz" "${kind}_space" B)" = "$metric" ]
		[ "$(pprof_traces_sum "$src.pb.gz" "${kind}_space" B)" = "$metric" ]
		[ "$(go tool pprof -symbolize=none -top -sample_index="${kind}_objects" "$src.pb.gz" |
			sed -n 's/^Showing nodes accounting for .* of \([0-9]*\) total$/\1/p')" = "$count" ]
	done
	# the program's own module is pprof's main binary
	go tool pprof -symbolize=none -top alloc.pb.gz | grep -x 'File: memtest'
	# file:line reach pprof's -lines
	go tool pprof -symbolize=none -lines -top -nodefraction=0 alloc.pb.gz > lines.txt
	grep -E 'site_large [^ ]*memtest\.c:[0-9]+' lines.txt
}

@test "go tool pprof shows report's CPU total in nanoseconds" {
	needs_go
	local ms ns
	"$HS_BIN" convert "$DATA/perf/hotloop.data.txt" -o cpu.pb.gz -f
	ms=$(total "$DATA/perf/hotloop.data.txt" | cut -d' ' -f1)
	ns=$(awk -v m="$ms" 'BEGIN { printf "%.0f", m * 1e6 }')
	[ "$(pprof_total cpu.pb.gz cpu ns)" = "$ns" ]
	[ "$(pprof_traces_sum cpu.pb.gz cpu ns)" = "$ns" ]
	go tool pprof -symbolize=none -top cpu.pb.gz | grep -E 'hot_function$'
}
