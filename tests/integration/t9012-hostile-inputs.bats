#!/usr/bin/env bats
# Inputs of issue 19 that were refused wrongly or handled without bounds:
# a JSON file that starts with a byte order mark (item 13), a zip on
# standard input (item 9), a bad pattern saved in a file (item 15).
load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "PerfView JSON after a UTF-8 byte order mark is read, by name and by content" {
	hs report "$DATA/perfview/bom.perfView.json" --view calltree
	[ "$status" -eq 0 ]
	[[ "$output" == *"    leaf "* ]]
	run --separate-stderr sh -c '"$1" report - --view calltree < "$2"' sh "$HS_BIN" "$DATA/perfview/bom.perfView.json"
	[ "$status" -eq 0 ]
	[[ "$output" == *"    leaf "* ]]
	cp "$DATA/perfview/bom.perfView.json" "$T/noext"
	hs report "$T/noext" --format csv
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\nleaf,'* ]]
}

# A zip on standard input is copied to a temporary file (zips need
# seeking): in $TMPDIR, and at most HEAPSCOPE_SPOOL_MAX bytes (item 9; an
# endless stream filled the disk at 1 GB/s, in /tmp whatever TMPDIR said).
@test "an endless zip on standard input is refused at the spool's bound" {
	mkdir "$T/tmp"
	run --separate-stderr timeout 60 bash -c \
		'(printf "PK\3\4"; cat /dev/zero) | TMPDIR="$1" HEAPSCOPE_SPOOL_MAX=4M "$2" report - --from xml-zip' \
		sh "$T/tmp" "$HS_BIN"
	[ "$status" -eq 1 ]
	[ "$stderr" = "heapscope: error: <stdin>: standard input is copied to a temporary file to be read, and this input is larger than 4194304 bytes (HEAPSCOPE_SPOOL_MAX); give the file's name instead" ]
	[ -z "$(ls -A "$T/tmp")" ]
}

@test "a zip on standard input is spooled in TMPDIR" {
	printf 'main;a 5\n' > "$T/a.folded"
	"$HS_BIN" convert "$T/a.folded" --to xml-zip -o "$T/a.perfView.xml.zip"
	# through a pipe: a file redirected to standard input is read in place
	run --separate-stderr bash -c 'cat "$3" | TMPDIR="$1" "$2" report -' \
		sh "$T/none" "$HS_BIN" "$T/a.perfView.xml.zip"
	[ "$status" -eq 1 ]
	[ "$stderr" = "heapscope: error: <stdin>: cannot create a temporary file in $T/none: No such file or directory" ]
	mkdir "$T/tmp"
	run --separate-stderr bash -c 'cat "$3" | TMPDIR="$1" "$2" report - --format csv' \
		sh "$T/tmp" "$HS_BIN" "$T/a.perfView.xml.zip"
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\na,'* ]]
}

# A pattern saved in a file's view state that does not compile made every
# view of the file fail, with a message naming neither the file nor where
# the pattern came from (item 15): it is dropped, with a warning saying so.
@test "a bad pattern saved in a .perfView.xml is not used, and the warning says so" {
	f="$DATA/report/bad-saved-pattern.perfView.xml"
	hs report "$f" --view calltree
	[ "$status" -eq 0 ]
	[ "$stderr" = "heapscope: warning: $f: the GroupRegEx saved in its view state is not used: GroupPats: bad pattern '{': missing closing parenthesis at offset 1" ]
	# the other saved texts still apply: ExcludeRegEx app!E, Start 5 ms
	[[ "$output" != *"app!E"* ]]
	[[ "$output" == *"First: 10.000"* ]]
	# the same view as the file without a group pattern
	hs report "$DATA/report/defaults.perfView.xml" --view calltree --group ''
	expected=$output
	hs report "$f" --view calltree
	[ "$output" = "$expected" ]
	# a pattern given on the command line is used as before
	hs report "$f" --group '{'
	[ "$status" -eq 1 ]
	[ "${stderr##*$'\n'}" = "heapscope: error: GroupPats: bad pattern '{': missing closing parenthesis at offset 1" ]
}

# Item 8: a 4.9 MB perfcollect .trace.zip whose perf map inflated to 1 GiB
# took 1.2 GB, as maps are held whole. Maps are streamed, and what they
# hold is bounded (256 MiB in all; HEAPSCOPE_MAP_MAX): a map past it is
# read again for the profile's addresses only, in memory bounded by them.
# Here a 20 MB map (jit.trace.zip's, then 500,000 lines that name nothing
# sampled) against a bound of 1 MiB, then the default.
@test "a perf map that inflates past the maps' bound is read for the profile's addresses only" {
	mkdir "$T/z"
	(cd "$T/z" && unzip -q "$DATA/perf/jit.trace.zip" && mv jit/* . && rmdir jit &&
		awk 'BEGIN { for (i = 0; i < 500000; i++)
			printf "%X 10 filler_symbol_%d\n", 268435456 + 16 * i, i }' \
			>> perf-4400.map &&
		zip -q ../big.trace.zip ./*)
	rss_args=()
	if [ -x /usr/bin/time ] && ! ldd "$HS_BIN" | grep -q libasan; then
		rss_args=(/usr/bin/time -o "$T/rss" -f %M)
	fi
	run --separate-stderr env HEAPSCOPE_MAP_MAX=1M "${rss_args[@]}" \
		"$HS_BIN" report "$T/big.trace.zip" --view calltree
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	bounded=$output
	[[ "$output" == *"MyApp.Program::Main"* ]]
	[[ "$output" == *"System.Threading.Thread::StartCallback()"* ]]
	[ ${#rss_args[@]} -eq 0 ] || capped=$(cat "$T/rss")
	# the same view with the map held whole
	run --separate-stderr "${rss_args[@]}" \
		"$HS_BIN" report "$T/big.trace.zip" --view calltree
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "$bounded" ]
	if [ ${#rss_args[@]} -gt 0 ]; then
		whole=$(cat "$T/rss")
		echo "peak RSS: $capped KiB bounded, $whole KiB with the map held"
		[ "$capped" -lt 40000 ]
		[ "$whole" -gt $((capped + 20000)) ]
	fi
}

@test "maps read for the profile's addresses name every frame as maps held whole" {
	# a bound of 1 byte: every map of jit.trace.zip (the perf map, and the
	# module's map looked up with and without its base) goes that way
	run --separate-stderr env HEAPSCOPE_MAP_MAX=1 "$HS_BIN" report \
		"$DATA/perf/jit.trace.zip" --view calltree
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	golden "$DATA/perf/golden/jit.calltree.txt"
}
