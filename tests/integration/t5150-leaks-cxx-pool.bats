#!/usr/bin/env bats
# libstdc++'s emergency exception pool is no leak: the collector calls
# libstdc++'s free-at-exit hook (__gnu_cxx::__freeres) at the exit, as
# memcheck and heaptrack do, so a C++ program's trace shows its own leak
# (tests/targets/cxxleak.cc: 64,000 bytes in leak_buffer) and no
# libstdc++ row, whether libstdc++ has symbols or not (--no-symbolize:
# no names at all), and whatever the leaks view suppresses.
load trace-helpers

setup_file() {
	[ -x "$TARGETS/cxxleak" ] || return 0
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run --no-view -o sym.heapscope -- "$TARGETS/cxxleak" > sym.out 2> sym.err
	"$HS_BIN" run --no-view --no-symbolize -o nosym.heapscope -- \
		"$TARGETS/cxxleak" > nosym.out 2> nosym.err
}

setup() {
	[ -x "$TARGETS/cxxleak" ] || skip "no C++ compiler"
	cd "$BATS_FILE_TMPDIR" || return 1
}

# leaked TRACE ARGS...: "bytes blocks" of the leaks view.
leaked() {
	local trace=$1
	shift
	"$HS_BIN" report "$trace" --source leaks "$@" --format json |
		python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print("%g %g" % (s["metric"], s["count"]))'
}

@test "the leaks view: the program's leak alone, no libstdc++ row" {
	grep -qx 'leak 64000 1 leak_buffer' sym.out
	[ "$(leaked sym.heapscope)" = "64000 1" ]
	"$HS_BIN" report sym.heapscope --source leaks --format csv > leaks.csv
	[ "$(col 'cxxleak!leak_buffer()' 3 leaks.csv)" = 64000 ]
	! grep -q 'libstdc++' leaks.csv || false
}

@test "no suppression hides the pool: with --exc '' it is not live either" {
	"$HS_BIN" report sym.heapscope --source leaks --exc '' --format csv > all.csv
	! grep -q 'libstdc++' all.csv || false
	! grep -q ',72704,' all.csv || false
}

@test "without symbols: the pool's block is freed, the 64000 bytes are live" {
	"$HS_BIN" dump --events nosym.heapscope > events.txt
	# the pool: allocated from libstdc++ in the loader's _dl_init, freed
	local pool
	pool=$(awk '$3 == "alloc" && $6 == 72704 && $7 ~ /libstdc\+\+/ { print $5 }' events.txt)
	[ -n "$pool" ]
	[ "$(awk -v a="$pool" '$3 == "free" && $5 == a' events.txt | wc -l)" -eq 1 ]
	# live at the exit: the leak, and stdio's buffer (libc has no names
	# for the suppression here), nothing else
	"$HS_BIN" report nosym.heapscope --source leaks --exc '' --format csv > all.csv
	local all
	all=$(col ROOT 6 all.csv)
	echo "live at exit: $all bytes"
	[ "$all" -ge 64000 ] && [ "$all" -lt 72704 ]
	[ "$(col ROOT 7 all.csv)" -le 2 ]
}

@test "stats and run's summary agree: 64000 bytes in 1 block" {
	hs stats sym.heapscope --format json
	[ "$(jq '.leaked_bytes' <<< "$output")" = 64000 ]
	[ "$(jq '.leaked_blocks' <<< "$output")" = 1 ]
	grep -q 'leaked 62.5 KiB in 1 block' sym.err
}
