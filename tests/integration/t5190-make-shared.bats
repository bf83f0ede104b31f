#!/usr/bin/env bats
# std::make_shared and std::allocate_shared in a release build
# (tests/targets/makeshared.cc, -O2 -g): the heap views' default FoldPats
# fold libstdc++'s _Sp_counted_ptr_inplace constructor, which builds the
# object in place, so the control block and what a library type's
# constructor allocates are the calling user function's Exc, and a user
# constructor keeps what it allocates.
load trace-helpers

setup_file() {
	[ -x "$TARGETS/makeshared" ] || return 0
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run --no-view -o s.heapscope -- "$TARGETS/makeshared" > s.out 2> s.err
	"$HS_BIN" report s.heapscope --format csv > fold.csv
	"$HS_BIN" report s.heapscope --fold '' --format csv > nofold.csv
}

setup() {
	[ -x "$TARGETS/makeshared" ] || skip "no C++ compiler"
	cd "$BATS_FILE_TMPDIR" || return 1
}

@test "make_shared of a vector and allocate_shared of a string: the caller's Exc" {
	local fn inc
	for fn in shared_vectors shared_strings; do
		inc=$(cell nofold.csv "makeshared!$fn()" Inc)
		echo "$fn: Inc $inc, Exc $(cell fold.csv "makeshared!$fn()" Exc)"
		[ "$inc" -gt 0 ]
		[ "$(cell fold.csv "makeshared!$fn()" Exc)" = "$inc" ]
	done
	# 3 control blocks with their vectors, 2 with their strings
	[ "$(cell fold.csv "makeshared!shared_vectors()" "Exc Ct")" = 6 ]
	[ "$(cell fold.csv "makeshared!shared_strings()" "Exc Ct")" = 4 ]
}

@test "make_shared of a user type: its constructor keeps what it allocates" {
	local ctor="makeshared!Record::Record(char const*, int)*"
	[ "$(cell fold.csv "$ctor" Exc)" = "$(cell nofold.csv "$ctor" Inc)" ]
	[ "$(cell fold.csv "$ctor" "Exc Ct")" = 4 ]
	# the control blocks: the caller's
	[ "$(cell fold.csv "makeshared!shared_records()" "Exc Ct")" = 2 ]
}

@test "no _Sp_counted_ptr_inplace row is left" {
	grep -q '_Sp_counted_ptr_inplace' nofold.csv
	! grep -q '_Sp_counted' fold.csv || false
}
