#!/usr/bin/env bats
# Terminal escapes in frame names, file names and quoted input (issue 19,
# item 10): text, folded and CSV output and every message escape control
# characters (\x1b, \u009b), so a file cannot clear the screen or set the
# terminal's title. JSON escapes them its own way.
load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
	printf 'main;\x1b[2J\x1b[31mevil 5\nmain;\xc2\x9b1mcsi 1\n' > "$T/esc.folded"
}

# no_controls TEXT: TEXT has no control character but line feeds.
no_controls() {
	! printf '%s' "$1" | LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' || false
	! printf '%s' "$1" | grep -q $'\xc2[\x80-\x9f]' || false
}

@test "text, folded and CSV views escape control characters in names" {
	for args in "--view calltree" "--view byname" "--view flame" "--format csv" \
		    "--view callees --focus main"; do
		# shellcheck disable=SC2086
		hs report "$T/esc.folded" $args
		[ "$status" -eq 0 ]
		no_controls "$output"
		[[ "$output" == *'\x1b[2J\x1b[31mevil'* ]]
		[[ "$output" == *'\u009b1mcsi'* ]]
	done
	hs report "$T/esc.folded" --view callees --focus $'\x1b[2J\x1b[31mevil'
	[ "$status" -eq 0 ]
	no_controls "$output"
	[[ "$output" == *'Focus: \x1b[2J\x1b[31mevil'* ]]
}

@test "JSON keeps the name, escaped as JSON" {
	hs report "$T/esc.folded" --format json
	[ "$status" -eq 0 ]
	no_controls "$output"
	[[ "$output" == *'"name": "\u001B[2J\u001B[31mevil"'* ]]
}

@test "messages escape control characters in excerpts and file names" {
	printf 'main;a 1\x1b[2J\n' > "$T/bad.folded"
	hs report "$T/bad.folded"
	[ "$status" -eq 1 ]
	no_controls "$stderr"
	[ "$stderr" = "heapscope: error: $T/bad.folded:1: expected a number at the end of the line, found '1\\x1b[2J'" ]
	hs report "$T/no"$'\x1b]0;pwned\x07'".folded"
	[ "$status" -eq 1 ]
	no_controls "$stderr"
	[[ "$stderr" == *'no\x1b]0;pwned\x07.folded'* ]]
	hs report "$T/esc.folded" --view callers --focus $'\x1b[31mnone'
	[ "$status" -eq 1 ]
	no_controls "$stderr"
	[[ "$stderr" == *"'\\x1b[31mnone'"* ]]
}
