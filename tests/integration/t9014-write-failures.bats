#!/usr/bin/env bats
# When memory or the disk runs out after the program ran (issue 19, items
# 6, 17 and 20). libdw ended `heapscope run` after the program had
# finished (exit() from its out-of-memory handler at ulimit -v
# 35000-40000, or a crash in dwarf_getsrclines), so run returned 1 instead
# of the program's status. Symbolizing now happens in a child process:
# run returns the program's status, says symbolization was skipped, and
# `heapscope symbolize` adds the names later. A trace cut short by a
# failed write no longer says the program did not finish.
load trace-helpers

setup() {
	trace_setup
}

@test "libdw out of memory: run keeps the program's status and warns" {
	skip_without_ulimit_v
	skipped=0
	for limit in $(seq 30000 1000 44000); do
		rm -f "m.heapscope"
		trace_run_limited -v "$limit" -q -o m.heapscope -- "$TARGETS/sites"
		echo "limit $limit: status $status"
		cat err.txt
		# a limit too tight for the program or the collector is the
		# program's failure; past that, the status is the program's
		grep -q 'symbolization of m.heapscope was skipped' err.txt &&
			skipped=$((skipped + 1))
		if [ -s m.heapscope ] && ! grep -q 'cannot\|error' err.txt; then
			[ "$status" -eq 0 ]	# sites's own
		fi
		# every message is heapscope's, libdw's included
		! grep -v '^heapscope: ' err.txt || false
		if grep -q 'was skipped' err.txt; then
			grep -q "^heapscope: warning: symbolization of m.heapscope was skipped (.*); the trace is complete without names: 'heapscope symbolize m.heapscope' adds them later$" err.txt
			[ "$status" -eq 0 ]
			# the names come later
			"$HS_BIN" symbolize m.heapscope
			hs report m.heapscope --view calltree
			[ "$status" -eq 0 ]
			[[ "$output" == *"sites!run_sites"* ]]
		fi
	done
	[ "$skipped" -gt 0 ] || skip "libdw did not run out of memory at these limits here"
}

# A full disk, played by a file size limit (SIGXFSZ ignored, so writes
# fail with EFBIG) (item 17): the trace cut short is not "the program did
# not finish", and a symbol section that cannot be written is said to be
# skipped.
@test "a trace cut short by a failed write says so, and symbolization says it was skipped" {
	cut=0
	for kb in 1 2 3 4; do
		rm -f f.heapscope
		trace_run_limited -f "$kb" -o f.heapscope -- "$TARGETS/sites"
		echo "limit $kb KiB: status $status"
		cat err.txt
		[ "$status" -eq 0 ]
		! grep -q 'did not finish' err.txt || false
		if grep -q 'cut off' err.txt; then
			cut=$((cut + 1))
			grep -q '^heapscope: the trace was cut off although the program finished: the collector could not write all of it (a full disk, or a file size limit?): [0-9]* events\? recovered$' err.txt
		fi
		if grep -q 'cannot write the symbols' err.txt; then
			grep -q "^heapscope: warning: symbolization of f.heapscope was skipped (see above);" err.txt
		fi
	done
	[ "$cut" -gt 0 ]
}

# Item 20: a zip written to /dev/full said "Input/output error".
@test "a zip to a device says a zip needs a regular file" {
	printf 'main;a 5\n' > a.folded
	hs convert a.folded --to xml-zip -o /dev/full
	[ "$status" -eq 1 ]
	[ "$stderr" = "heapscope: error: /dev/full: a zip can only be written to a regular file, not to a device, pipe or directory" ]
	[ -c /dev/full ]
}
