#!/usr/bin/env bats
# Inputs the fuzz targets (tests/fuzz) found a defect with, one test each:
# the crafted input is in tests/data, and the ASan+UBSan build of `make
# check` runs these too, which is where a sanitizer report fails them.
load helpers
bats_require_minimum_version 1.5.0

@test "a .trace.zip whose perf map has no usable line keeps its frames unknown" {
	# symmap_read() sorted a map of no range with qsort(NULL, 0): UB
	hs report "$HS_SRC/tests/data/perf/map-without-ranges.trace.zip" \
		--view calltree --format csv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[4]}" = "3,dotnet!main,0,0,0,100,1,1,0,0,1,________________AAAAAAAAAAAAAAAA,0.000000,0.000000" ]
	[ "${lines[5]}" = "4,unknown!unknown,100,1,1,100,1,1,0,0,1,________________AAAAAAAAAAAAAAAA,0.000000,0.000000" ]
}

@test "a zip entry that cannot be read is refused without a leak" {
	# hs_zip_open_entry() kept the entry's name when the entry would not
	# open (here: compression method 77); LeakSanitizer saw it in ASan
	for f in perf/unreadable-entry.trace.zip perfview/unreadable-entry.perfView.xml.zip; do
		hs report "$HS_SRC/tests/data/$f"
		[ "$status" -eq 1 ]
		[[ "$stderr" == "heapscope: error: "*": cannot read zip entry '"*"': Compression method not supported" ]]
	done
}
