#!/usr/bin/env bats
# Names that are not UTF-8 and metrics too large for PerfView's float:
# JSON stays valid JSON, and out-of-range numbers are refused with the
# file and line instead of turning into inf and NaN downstream.
load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
	printf 'main;b\377d;x 5\nmain;ok 3\n' > "$T/bad.folded"
}

@test "report --format json of names that are not UTF-8 is valid JSON" {
	for view in byname calltree flame; do
		hs report "$T/bad.folded" --format json --view "$view"
		[ "$status" -eq 0 ]
		python3 -c 'import json,sys; json.loads(sys.argv[1])' "$output"
	done
	hs report "$T/bad.folded" --format json --view calltree
	# the bad byte is U+FFFD (escaped or not, jansson writes UTF-8 as is)
	[[ "$output" == *"\"name\": \"b"$'\xef\xbf\xbd'"d\""* ]]
}

@test "caller-callee JSON with a focus that is not UTF-8" {
	hs report "$T/bad.folded" --format json --view caller-callee \
		--focus $'b\377d'
	[ "$status" -eq 0 ]
	[[ "$output" == *"\"focus\": \"b"$'\xef\xbf\xbd'"d\""* ]]
	python3 -c 'import json,sys; json.loads(sys.argv[1])' "$output"
}

@test "a folded metric beyond 3.4e38 is refused with its line" {
	printf 'main;a 1\nmain;b 1e308\n' > "$T/big.folded"
	hs report "$T/big.folded" --format json
	[ "$status" -eq 1 ]
	[ "$stderr" = "heapscope: error: $T/big.folded:2: the number '1e308' is out of range" ]
	printf 'main;a 3.4e38\nmain;b -3.4e38\n' > "$T/edge.folded"
	hs report "$T/edge.folded"
	[ "$status" -eq 0 ]
}

@test "an XML Metric or Count beyond 3.4e38 is refused with its line" {
	cat > "$T/big.perfView.xml" <<-'XML'
	<StackSource><Samples>
	<Sample Time="1" Metric="5">a</Sample>
	<Sample Time="2" Metric="1e300">b</Sample>
	</Samples></StackSource>
	XML
	hs report "$T/big.perfView.xml"
	[ "$status" -eq 1 ]
	[ "$stderr" = "heapscope: error: $T/big.perfView.xml:3: Sample Metric '1e300' is out of range" ]
	sed -i 's/Metric="1e300"/Count="-4e38"/' "$T/big.perfView.xml"
	hs report "$T/big.perfView.xml"
	[ "$status" -eq 1 ]
	[ "$stderr" = "heapscope: error: $T/big.perfView.xml:3: Sample Count '-4e38' is out of range" ]
}

@test "a JSON Metric beyond 3.4e38 is refused with its line" {
	printf '{"StackSource":{"Samples":[\n{"Time":1,"Metric":5,"Stack":["a"]},\n{"Time":2,"Metric":1e300,"Stack":["b"]}]}}\n' \
		> "$T/big.perfView.json"
	hs report "$T/big.perfView.json"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "heapscope: error: $T/big.perfView.json:3: sample Metric '1e300' is out of range" ]]
}

@test "percentages of huge metrics stay finite" {
	printf 'main;a 3.4e38\nmain;b 3.4e38\n' > "$T/huge.folded"
	hs report "$T/huge.folded" --format csv
	[ "$status" -eq 0 ]
	[[ "$output" != *inf* && "$output" != *nan* ]]
	[[ "$output" == *$'\na,50,3.4e+38,'* ]]
	hs report "$T/huge.folded" --format json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"exc_pct": 50.0'* ]]
}
