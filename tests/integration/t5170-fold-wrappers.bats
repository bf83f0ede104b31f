#!/usr/bin/env bats
# Allocation wrappers (tests/targets/wrappers.c: git's do_xmalloc under
# xmalloc and xmallocz, xcalloc, xrealloc, xstrdup): `--fold +PATS` adds
# to the heap views' default FoldPats instead of replacing it, so the
# wrappers fold into the user functions that call them and the
# allocator stays folded.
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
	[ "$(grep -c '^exc ' w.out)" -eq 4 ]
	while read -r _ bytes blocks fn; do
		echo "$fn: want $bytes in $blocks, have $(col "wrappers!$fn" 3 "$1") in $(col "wrappers!$fn" 4 "$1")"
		[ "$(col "wrappers!$fn" 3 "$1")" = "$bytes" ]
		[ "$(col "wrappers!$fn" 4 "$1")" = "$blocks" ]
	done < <(grep '^exc ' w.out)
}

@test "--fold +PATS: the default and PATS, each user function's Exc exact" {
	"$HS_BIN" report w.heapscope --fold "+$WRAPPERS" --format csv > plus.csv
	exc_matches plus.csv
	! grep -q '^wrappers!x\|^wrappers!do_xmalloc\|!malloc,\|!calloc,\|!realloc,' plus.csv
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
