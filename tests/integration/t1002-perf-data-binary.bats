#!/usr/bin/env bats
# A binary perf.data, whatever its name, is refused with the `perf script`
# command that converts it (docs/formats.md), not "cannot tell the format".
load helpers
bats_require_minimum_version 1.5.0

# perf.data's file header: magic, header size, attr size, then sections.
make_perf_data() {
	{ printf 'PERFILE2\150\0\0\0\0\0\0\0\210\0\0\0\0\0\0\0'; head -c 200 /dev/zero
	  printf '\n'; head -c 64 /dev/zero; } > "$1"
}

@test "perf.data by content: the perf script hint, exit 1" {
	cd "$BATS_TEST_TMPDIR"
	make_perf_data perf.data
	for args in "report perf.data" "report perf.data --view calltree" \
		"convert perf.data -o out.folded" "overweight perf.data perf.data"; do
		# shellcheck disable=SC2086
		run -1 --separate-stderr "$HS_BIN" $args
		[[ "$stderr" == *"perf.data:1: this is a binary perf.data file: convert it with 'perf script -i FILE > FILE.data.txt'"* ]]
		[[ "$stderr" != *"cannot tell the input's format"* ]]
	done
	[ ! -e out.folded ]
}

@test "perf.data under any name and on standard input gets the hint" {
	cd "$BATS_TEST_TMPDIR"
	make_perf_data recording.bin
	run -1 --separate-stderr "$HS_BIN" report recording.bin
	[[ "$stderr" == *"recording.bin:1: this is a binary perf.data file"* ]]
	run -1 --separate-stderr "$HS_BIN" report - < recording.bin
	[[ "$stderr" == *"<stdin>:1: this is a binary perf.data file"* ]]
	run -0 "$HS_BIN" report recording.bin --list-sources
	[[ "$output" == "cpu "* ]]
}

@test "a file that only starts like perf.data's magic is not taken for it" {
	cd "$BATS_TEST_TMPDIR"
	printf 'PERFILE\n' > odd.bin
	run -1 --separate-stderr "$HS_BIN" report odd.bin
	[[ "$stderr" == *"cannot tell the input's format"* ]]
}

@test "a real perf record file gets the hint (where perf records)" {
	cd "$BATS_TEST_TMPDIR"
	command -v perf > /dev/null || skip "perf is not installed"
	perf record -q -o rec.data -- true > /dev/null 2>&1 || skip "perf record is not allowed here"
	run -1 --separate-stderr "$HS_BIN" report rec.data
	[[ "$stderr" == *"rec.data:1: this is a binary perf.data file"* ]]
}
