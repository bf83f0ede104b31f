#!/usr/bin/env bats
# Allocation wrappers (tests/targets/wrappers.c: git's do_xmalloc under
# xmalloc and xmallocz, xcalloc, xrealloc, xstrdup): the heap views'
# default FoldPats fold them, found by the shape of the trace's call
# graph, so ByName's top rows are the user functions with what they
# allocated (--keep-wrappers turns it off); and `--fold +PATS` adds to
# the default FoldPats instead of replacing it.
load trace-helpers

WRAPPERS='xmalloc;xmallocz;do_xmalloc;xcalloc;xrealloc;xstrdup'

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run --no-view -o w.heapscope -- "$TARGETS/wrappers" > w.out 2> w.err
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

# exc_matches CSV: each "exc BYTES BLOCKS FN" line of w.out is FN's Exc row.
exc_matches() {
	local _ bytes blocks fn
	[ "$(grep -c "^exc " w.out)" -eq 5 ]
	while read -r _ bytes blocks fn; do
		echo "$fn: want $bytes in $blocks, have $(col "wrappers!$fn" 3 "$1") in $(col "wrappers!$fn" 4 "$1")"
		[ "$(col "wrappers!$fn" 3 "$1")" = "$bytes" ]
		[ "$(col "wrappers!$fn" 4 "$1")" = "$blocks" ]
	done < <(grep '^exc ' w.out)
}

@test "--fold +PATS: the default and PATS, each user function's Exc exact" {
	"$HS_BIN" report w.heapscope --fold "+$WRAPPERS" --format csv > plus.csv
	exc_matches plus.csv
	! grep -q '^wrappers!x\|^wrappers!do_xmalloc\|!malloc,\|!calloc,\|!realloc,' plus.csv || false
}

@test "--fold PATS without '+' replaces the default: the allocator is back" {
	"$HS_BIN" report w.heapscope --fold "$WRAPPERS" --format csv > only.csv
	grep -q '^libc.so.6!malloc,' only.csv
}

@test "+PATS in diff and source, and '+' alone is the default" {
	"$HS_BIN" report w.heapscope --fold + --format csv > dflt.csv
	"$HS_BIN" report w.heapscope --format csv > none.csv
	cmp dflt.csv none.csv
	hs source w.heapscope grow_text --fold "+$WRAPPERS" --format json
	[ "$status" -eq 0 ]
	[ "$(jq '.exc' <<< "$output")" = 1920 ]
	hs diff w.heapscope w.heapscope --fold "+$WRAPPERS" --format csv
	[ "$status" -eq 0 ]
}

@test "the default folds the wrappers: the top rows are the user functions" {
	"$HS_BIN" report w.heapscope --format csv > auto.csv
	exc_matches auto.csv
	! grep -q '^wrappers!x\|^wrappers!do_xmalloc' auto.csv || false
	# the top rows by Exc: the user's functions and stdout's buffer
	[ "$(tail -n +2 auto.csv | sort -t, -k3,3nr | head -6 | cut -d, -f1 | sort | tr '\n' ' ')" = \
		"libc.so.6!_IO_file_doallocate wrappers!grow_text wrappers!join_words wrappers!keep_table wrappers!load_items wrappers!parse_names " ]
	# the same in stats' top call sites
	hs stats w.heapscope --format json
	[ "$status" -eq 0 ]
	! jq -r '.top_by_bytes[].name' <<< "$output" | grep -q 'xmalloc\|xrealloc\|xcalloc\|xstrdup' || false
}

@test "keep_table allocates for one caller: a user function, not a wrapper" {
	[ "$(col 'wrappers!keep_table' 3 auto.csv)" = 4000 ]
}

@test "--keep-wrappers: the wrappers are rows again, the allocator still folded" {
	"$HS_BIN" report w.heapscope --keep-wrappers --format csv > keep.csv
	[ "$(col 'wrappers!do_xmalloc' 3 keep.csv)" -gt 0 ]
	[ "$(col 'wrappers!xrealloc' 3 keep.csv)" -gt 0 ]
	! grep -q '^libc.so.6!malloc,' keep.csv || false
	# and --fold +PATS on top of it folds them again
	"$HS_BIN" report w.heapscope --keep-wrappers --fold "+$WRAPPERS" --format csv > again.csv
	exc_matches again.csv
}

@test "the leaks view folds them too: the leak is the user function's" {
	grep -qx 'leak 41 1 parse_names' w.out
	"$HS_BIN" report w.heapscope --source leaks --format csv > leaks.csv
	[ "$(col 'wrappers!parse_names' 3 leaks.csv)" = 41 ]
	[ "$(col 'wrappers!parse_names' 4 leaks.csv)" = 1 ]
	! grep -q '^wrappers!x\|^wrappers!do_xmalloc' leaks.csv || false
}
