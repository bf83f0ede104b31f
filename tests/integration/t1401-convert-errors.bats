#!/usr/bin/env bats
# heapscope convert: usage errors (exit 2), failures (exit 1) with the file
# and line in the message, and never overwriting without -f.
load helpers
bats_require_minimum_version 1.5.0

PV="$DATA/perfview"

@test "--help prints the usage" {
	hs convert --help
	[ "$status" -eq 0 ]
	[[ "$output" == "usage: heapscope convert IN -o OUT"* ]]
	[[ "$output" == *"--force"* ]]
}

@test "an unknown --to is a usage error" {
	hs convert "$PV/mixed.folded" -o - --to bogus
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown output format 'bogus'"* ]]
}

@test "an unknown --from is a usage error" {
	hs convert "$PV/mixed.folded" --from bogus -o - --to xml
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown input format 'bogus'"* ]]
}

@test "formats heapscope only reads cannot be written" {
	hs convert "$PV/mixed.folded" -o "$BATS_TEST_TMPDIR/x.data.txt"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"reads perf-script but does not write it"* ]]
	hs convert "$PV/mixed.folded" -o - --to trace-zip
	[ "$status" -eq 2 ]
}

@test "an output name without a known extension needs --to" {
	hs convert "$PV/mixed.folded" -o "$BATS_TEST_TMPDIR/out.txt"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"cannot tell the output format from"*"--to"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out.txt" ]
	hs convert "$PV/mixed.folded" -o -
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"standard output needs --to"* ]]
}

@test "missing arguments are usage errors" {
	hs convert
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"no input file"* ]]
	hs convert "$PV/mixed.folded"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"no output"* ]]
	hs convert "$PV/mixed.folded" extra -o -
	[ "$status" -eq 2 ]
	hs convert "$PV/mixed.folded" -o
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"needs a value"* ]]
	hs convert --frobnicate
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown option '--frobnicate'"* ]]
}

@test "a missing input file is named" {
	hs convert "$BATS_TEST_TMPDIR/missing.perfView.xml" -o - --to folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing.perfView.xml: cannot open: No such file or directory"* ]]
}

@test "malformed XML names the file and line" {
	printf '<StackSource>\n<Samples>\n<Sample Time="soon"/>\n</Samples>\n</StackSource>\n' \
		> "$BATS_TEST_TMPDIR/bad.perfView.xml"
	hs convert "$BATS_TEST_TMPDIR/bad.perfView.xml" -o - --to folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.perfView.xml:3: Sample Time 'soon' is not a number"* ]]
	[ -z "$output" ]
}

@test "truncated and unclosed XML name the line" {
	head -c 300 "$PV/advanced.perfView.xml" > "$BATS_TEST_TMPDIR/cut.perfView.xml"
	hs convert "$BATS_TEST_TMPDIR/cut.perfView.xml" -o - --to folded
	[ "$status" -eq 1 ]
	[[ "$stderr" =~ cut\.perfView\.xml:[0-9]+:\ XML\ error:\ the\ file\ ends ]]
	printf '<StackSource>\n<Samples>\n<Sample>a</Samples>\n' > "$BATS_TEST_TMPDIR/open.perfView.xml"
	hs convert "$BATS_TEST_TMPDIR/open.perfView.xml" -o - --to folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"open.perfView.xml:3: XML error: mismatched tag"* ]]
}

@test "a sample naming an undefined stack is an error at its line" {
	sed 's/StackID="6"/StackID="66"/' "$PV/advanced.perfView.xml" > "$BATS_TEST_TMPDIR/s.perfView.xml"
	hs convert "$BATS_TEST_TMPDIR/s.perfView.xml" -o - --to folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"s.perfView.xml:27: Sample names StackID=66, which is not defined"* ]]
}

@test "JSON syntax errors name the line, also on standard input" {
	printf '{"StackSource": {"Samples": [\n{"Time": 1},\n{"Time": 2,,}\n]}}\n' > "$BATS_TEST_TMPDIR/j.perfView.json"
	hs convert "$BATS_TEST_TMPDIR/j.perfView.json" -o - --to folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"j.perfView.json:3: JSON parse error"* ]]
	run --separate-stderr sh -c "'$HS_BIN' convert - -o - --to folded < '$BATS_TEST_TMPDIR/j.perfView.json'"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"<stdin>:3: JSON parse error"* ]]
}

@test "a folded line without a number is an error at its line" {
	printf 'a;b 1\n\na;c\n' > "$BATS_TEST_TMPDIR/f.folded"
	hs convert "$BATS_TEST_TMPDIR/f.folded" -o - --to json
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"f.folded:3: expected a number at the end of the line, found 'a;c'"* ]]
}

@test "a PerfView zip must hold exactly one entry" {
	hs convert "$PV/two-entries.perfView.xml.zip" -o - --to folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"two-entries.perfView.xml.zip: expected exactly one entry in the zip, found 2"* ]]
}

@test "input nobody can read is refused" {
	printf 'just some words\n' > "$BATS_TEST_TMPDIR/words"
	hs convert "$BATS_TEST_TMPDIR/words" -o - --to folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"words: cannot tell the input's format; name it with --from"* ]]
	hs convert - -o - --to folded < /dev/null
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"<stdin>: the input is empty"* ]]
}

@test "an existing output is not overwritten without -f" {
	echo keep > "$BATS_TEST_TMPDIR/out.folded"
	hs convert "$PV/mixed.folded" -o "$BATS_TEST_TMPDIR/out.folded"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"out.folded' already exists (use -f to overwrite it)"* ]]
	[ "$(cat "$BATS_TEST_TMPDIR/out.folded")" = keep ]
	hs convert "$PV/mixed.folded" -o "$BATS_TEST_TMPDIR/out.folded" -f
	[ "$status" -eq 0 ]
	cmp "$BATS_TEST_TMPDIR/out.folded" "$PV/mixed.folded.out"
}

@test "failing input leaves no output behind" {
	printf 'a 1\nb\n' > "$BATS_TEST_TMPDIR/bad.folded"
	hs convert "$BATS_TEST_TMPDIR/bad.folded" -o "$BATS_TEST_TMPDIR/never.perfView.xml"
	[ "$status" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/never.perfView.xml" ]
}

@test "write errors are reported" {
	hs convert "$PV/mixed.folded" -o "$BATS_TEST_TMPDIR/no/such/dir.folded"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no/such/dir.folded: cannot create: No such file or directory"* ]]
	if [ -w /dev/full ]; then
		hs convert "$PV/advanced.perfView.xml" -o /dev/full --to xml
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"/dev/full: cannot write"* ]]
		[ -c /dev/full ]
	fi
}
