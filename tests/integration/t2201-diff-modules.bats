#!/usr/bin/env bats
# diff across differently named binaries: the same program copied under
# two names cancels by default (module names ignored when the programs
# differ), --modules keep shows the two modules apart, and the same
# program keeps its module names.
load trace-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	cp "$TARGETS/memtest" ./memtest2
	"$HS_BIN" run -q --no-view -o a.heapscope -- "$TARGETS/memtest" > /dev/null
	"$HS_BIN" run -q --no-view -o a2.heapscope -- "$TARGETS/memtest" > /dev/null
	"$HS_BIN" run -q --no-view -o b.heapscope -- ./memtest2 > /dev/null
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

@test "two names of one program cancel by default, and it says why" {
	run --separate-stderr "$HS_BIN" diff a.heapscope b.heapscope --format csv
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"different programs"*"--modules keep"* ]]
	printf '%s\n' "$output" > d.csv
	[ "$(col site_large 3 d.csv)" = 0 ]
	[ "$(col site_large 6 d.csv)" = 0 ]
	! grep -q 'memtest2\?!' d.csv || false
	grep -q '^Process,' d.csv
}

@test "--modules keep shows stl!f and stl2!f apart" {
	"$HS_BIN" diff a.heapscope b.heapscope --modules keep --format csv > k.csv 2> k.err
	[ ! -s k.err ]
	[ "$(col memtest!site_large 3 k.csv)" = -200000 ]
	[ "$(col memtest2!site_large 3 k.csv)" = 200000 ]
}

@test "--modules ignore forces it; the same program keeps its modules" {
	"$HS_BIN" diff a.heapscope a2.heapscope --format csv > same.csv 2> same.err
	[ ! -s same.err ]
	grep -q '^memtest!site_large,' same.csv
	"$HS_BIN" diff a.heapscope a2.heapscope --modules ignore --format csv > ign.csv
	grep -q '^site_large,' ign.csv
	! grep -q '^memtest!' ign.csv || false
}

@test "--modules is diff's, with ignore or keep" {
	run --separate-stderr "$HS_BIN" report a.heapscope --modules keep
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--modules is for diff"* ]]
	run --separate-stderr "$HS_BIN" diff a.heapscope b.heapscope --modules drop
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'ignore' or 'keep'"* ]]
}
