#!/usr/bin/env bats
# heapscope convert: every pair of formats it writes, the guide's examples,
# standard input and output, zips, detection by content.
load helpers
bats_require_minimum_version 1.5.0

PV="$DATA/perfview"
FORMATS="xml xml-zip json json-zip folded"

ext() {
	case "$1" in
	xml) echo .perfView.xml ;;
	xml-zip) echo .perfView.xml.zip ;;
	json) echo .perfView.json ;;
	json-zip) echo .perfView.json.zip ;;
	folded) echo .folded ;;
	esac
}

@test "the guide's simple XML example converts to folded stacks" {
	hs convert "$PV/guide-simple.perfView.xml" -o -  --to folded
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	golden "$PV/guide-simple.folded"
}

@test "the guide's JSON example converts to folded stacks" {
	hs convert "$PV/guide-simple.perfView.json" -o - --to folded
	[ "$status" -eq 0 ]
	golden "$PV/guide-simple-json.folded"
}

@test "a saved PerfView view converts to heapscope's XML and JSON" {
	hs convert "$PV/advanced.perfView.xml" -o - --to xml
	[ "$status" -eq 0 ]
	golden "$PV/advanced.out.perfView.xml"
	hs convert "$PV/advanced.perfView.xml" -o - --to json
	[ "$status" -eq 0 ]
	golden "$PV/advanced.out.perfView.json"
}

@test "folded stacks convert to XML with time 0 and count = metric" {
	hs convert "$PV/mixed.folded" -o - --to xml
	[ "$status" -eq 0 ]
	golden "$PV/mixed.out.perfView.xml"
}

@test "every pair of written formats keeps the stacks and their metrics" {
	local a b
	for a in $FORMATS; do
		for b in $FORMATS; do
			rm -f "$BATS_TEST_TMPDIR"/a* "$BATS_TEST_TMPDIR"/b*
			"$HS_BIN" convert "$PV/advanced.perfView.xml" -o "$BATS_TEST_TMPDIR/a$(ext $a)"
			"$HS_BIN" convert "$BATS_TEST_TMPDIR/a$(ext $a)" -o "$BATS_TEST_TMPDIR/b$(ext $b)"
			hs convert "$BATS_TEST_TMPDIR/b$(ext $b)" -o - --to folded
			[ "$status" -eq 0 ] || { echo "$a -> $b: $stderr"; false; }
			golden "$PV/advanced.folded" || { echo "$a -> $b"; false; }
		done
	done
}

@test "XML and JSON round trips are exact, GUI state included" {
	local f
	# JSON names every frame in full, so equal JSON means equal data
	for f in xml xml-zip json json-zip; do
		"$HS_BIN" convert "$PV/advanced.perfView.xml" -o "$BATS_TEST_TMPDIR/r$(ext $f)"
		hs convert "$BATS_TEST_TMPDIR/r$(ext $f)" -o - --to json
		[ "$status" -eq 0 ]
		golden "$PV/advanced.out.perfView.json" || { echo "via $f"; false; }
	done
}

@test "standard input to standard output, the format found by content" {
	run --separate-stderr sh -c "'$HS_BIN' convert - -o - --to folded < '$PV/guide-simple.perfView.json'"
	[ "$status" -eq 0 ]
	golden "$PV/guide-simple-json.folded"
	run --separate-stderr sh -c "cat '$PV/mixed.folded' | '$HS_BIN' convert - -o - --to json | '$HS_BIN' convert - -o - --to folded"
	[ "$status" -eq 0 ]
	golden "$PV/mixed.folded.out"
}

@test "zips travel through pipes both ways" {
	run --separate-stderr sh -c "'$HS_BIN' convert '$PV/advanced.perfView.xml' -o - --to json-zip | '$HS_BIN' convert - -o - --to xml-zip | '$HS_BIN' convert - -o - --to folded"
	[ "$status" -eq 0 ]
	golden "$PV/advanced.folded"
}

@test "a zip's single entry is named after the file" {
	"$HS_BIN" convert "$PV/guide-simple.perfView.xml" -o "$BATS_TEST_TMPDIR/run1.perfView.xml.zip"
	run python3 -c "import zipfile,sys; print(zipfile.ZipFile(sys.argv[1]).namelist())" \
		"$BATS_TEST_TMPDIR/run1.perfView.xml.zip"
	[ "$output" = "['run1.perfView.xml']" ]
}

@test "a file without a telling extension is read by its content" {
	local f
	for f in xml json-zip folded; do
		"$HS_BIN" convert "$PV/guide-simple.perfView.xml" -o "$BATS_TEST_TMPDIR/x$(ext $f)"
		mv "$BATS_TEST_TMPDIR/x$(ext $f)" "$BATS_TEST_TMPDIR/x.dat"
		hs convert "$BATS_TEST_TMPDIR/x.dat" -o - --to folded
		[ "$status" -eq 0 ] || { echo "$f: $stderr"; false; }
		golden "$PV/guide-simple.folded"
	done
}

@test "--from overrides the extension" {
	cp "$PV/mixed.folded" "$BATS_TEST_TMPDIR/stacks.perfView.xml"
	hs convert "$BATS_TEST_TMPDIR/stacks.perfView.xml" --from folded -o - --to folded
	[ "$status" -eq 0 ]
	golden "$PV/mixed.folded.out"
}

@test "perf script input converts" {
	hs convert "$HS_SRC/examples/demo-cpu.data.txt" -o "$BATS_TEST_TMPDIR/cpu.folded"
	[ "$status" -eq 0 ]
	grep -q '^Process demo (8228);Thread (8228);.*demo!build_index [0-9.]*$' "$BATS_TEST_TMPDIR/cpu.folded"
}
