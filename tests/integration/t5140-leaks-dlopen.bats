#!/usr/bin/env bats
# The leaks view's known exit-time allocations are recognised by the
# frames that allocate, not by any frame of the stack: a library loaded
# with dlopen() leaks a block in its constructor (tests/targets/dlleak.c,
# loaded by dlhost.c, with the dynamic linker's functions on its stack);
# report, stats and run's summary show exactly that block, and still leave
# out libc's and the dynamic linker's own blocks.
load trace-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run --no-view -o d.heapscope -- "$TARGETS/dlhost" \
		"$TARGETS/libhsdlleak.so" > d.out 2> d.err
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

# total ARGS...: "Metric Count" of the report's summary.
total() {
	"$HS_BIN" report "$@" --format json |
		python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print("%g %g" % (s["metric"], s["count"]))'
}

@test "report: the constructor's leak is shown, to the byte" {
	[ "$(total d.heapscope --source leaks)" = "777 1" ]
	"$HS_BIN" report d.heapscope --source leaks --format csv > leaks.csv
	[ "$(col 'libhsdlleak.so!site_plugin_leak' 3 leaks.csv)" = 777 ]
	[ "$(col 'libhsdlleak.so!site_plugin_leak' 4 leaks.csv)" = 1 ]
	# nothing of the dynamic linker or stdio is left but the path to it
	! grep -q '_dl_new_object\|_IO_file_doallocate\|KnownExitTimeAlloc' leaks.csv || false
}

@test "report --exc '': libc's and the dynamic linker's blocks under KnownExitTimeAlloc" {
	"$HS_BIN" report d.heapscope --source leaks --exc '' --format csv > all.csv
	local all known
	all=$(col ROOT 6 all.csv)
	known=$(col KnownExitTimeAlloc 6 all.csv)
	[ "$((all - known))" -eq 777 ]
	# stdout's buffer and the dynamic linker's data for the library
	[ "$(col 'libc.so.6!_IO_file_doallocate' 3 all.csv)" -ge 1024 ]
	"$HS_BIN" report d.heapscope --source leaks --exc '' --view callees \
		--focus KnownExitTimeAlloc > known.txt
	grep -q 'ld-linux.*!_dl_new_object' known.txt
	grep -q 'libc.so.6!_IO_file_doallocate' known.txt
	! grep -q 'site_plugin_leak' known.txt || false
}

@test "stats and run's summary count the same leak" {
	"$HS_BIN" stats d.heapscope --format json > s.json
	[ "$(jq '.leaked_bytes' s.json)" = 777 ]
	[ "$(jq '.leaked_blocks' s.json)" = 1 ]
	[ "$(jq '.suppressed_leaked_bytes > 4096' s.json)" = true ]
	[ "$(jq -r '.top_by_leaked[0].name' s.json)" = 'libhsdlleak.so!site_plugin_leak' ]
	grep -q ", leaked 777 B in 1 block (.* more in known exit-time allocations)$" d.err
	"$HS_BIN" stats d.heapscope | grep -q '^leaked: *777 bytes in 1 block (and '
}
