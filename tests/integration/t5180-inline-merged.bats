#!/usr/bin/env bats
# A function's inlined and out-of-line copies are one frame in the memory
# views (tests/targets/inlinedup.c: make_buf inlined into direct, called
# through a pointer from indirect), so ByName has one row for it;
# --split-inline shows them apart. A function that is only ever inlined
# keeps its " (inline)" name (t5100's inl_alloc).
load trace-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run --no-view -o i.heapscope -- "$TARGETS/inlinedup" > i.out 2> i.err
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

@test "one ByName row for both copies, with all they allocated" {
	grep -qx 'inc 700 5 make_buf' i.out
	# --keep-wrappers: make_buf, called from two functions, is a wrapper
	"$HS_BIN" report i.heapscope --keep-wrappers --format csv > merged.csv
	[ "$(col 'inlinedup!make_buf' 3 merged.csv)" = 700 ]
	[ "$(col 'inlinedup!make_buf' 4 merged.csv)" = 5 ]
	! grep -q 'make_buf (inline)' merged.csv || false
	# the callers tree: make_buf under both
	"$HS_BIN" report i.heapscope --keep-wrappers --view callers \
		--focus 'inlinedup!make_buf' > callers.txt
	grep -q 'inlinedup!direct' callers.txt
	grep -q 'inlinedup!indirect' callers.txt
}

@test "--split-inline: the two copies apart" {
	"$HS_BIN" report i.heapscope --keep-wrappers --split-inline --format csv > split.csv
	[ "$(col 'inlinedup!make_buf' 3 split.csv)" = 400 ]
	[ "$(col 'inlinedup!make_buf (inline)' 3 split.csv)" = 300 ]
	[ "$(col 'inlinedup!make_buf (inline)' 4 split.csv)" = 3 ]
}

@test "source finds the merged function: both copies' cost" {
	hs source i.heapscope make_buf --fold '' --format json
	[ "$status" -eq 0 ]
	[ "$(jq -c '.names' <<< "$output")" = '["inlinedup!make_buf"]' ]
	[ "$(jq '.inc' <<< "$output")" = 700 ]
}
