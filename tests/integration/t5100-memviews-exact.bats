#!/usr/bin/env bats
# The memory views of a program whose allocations are known exactly
# (tests/targets/memtest.c): per function, allocated bytes and counts,
# leaks, the peak, temporary allocations, mappings, and time ranges.
load trace-helpers

setup_file() {
	memtest_traces
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

# view ARGS...: report ARGS as CSV into view.csv (ByName unless told).
view() {
	"$HS_BIN" report "$@" --format csv > view.csv
}

# row NAME: "Exc ExcCt Inc IncCt" of NAME in view.csv ("-" if absent).
row() {
	awk -F, -v n="$1" '$1 == n { print $3, $4, $6, $7; f = 1 } END { if (!f) print "-" }' view.csv
}

# total ARGS...: "Metric Count" of the report's summary.
total() {
	"$HS_BIN" report "$@" --format json |
		python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print("%g %g" % (s["metric"], s["count"]))'
}

# stdout's buffer, allocated by the target's first printf and never freed
STDIO=4096

@test "alloc: bytes and counts per function" {
	[ "$(total m.heapscope)" = "$((211737 + STDIO)) 28" ]
	view m.heapscope
	[ "$(row memtest!site_large)" = "200000 1 200000 1" ]
	[ "$(row memtest!site_block)" = "10000 10 10000 10" ]
	[ "$(row memtest!site_grow)" = "1010 2 1010 2" ]
	[ "$(row memtest!site_temp)" = "320 5 320 5" ]
	[ "$(row memtest!site_leak)" = "231 3 231 3" ]
	[ "$(row memtest!site_pair)" = "80 2 80 2" ]
	# the inlined function is a frame of its own, inside site_inline
	[ "$(row "memtest!inl_alloc (inline)")" = "96 4 96 4" ]
	[ "$(row memtest!site_inline)" = "0 0 96 4" ]
	[ "$(row memtest!site_peak)" = "0 0 210000 11" ]
	[ "$(row memtest!run)" = "0 0 211737 27" ]
	[ "$(row libc.so.6!_IO_file_doallocate)" = "$STDIO 1 $STDIO 1" ]
	# the allocator is folded into its callers by default
	[ "$(row libc.so.6!malloc)" = "-" ]
}

@test "alloc: the allocation function is the leaf (without the default fold)" {
	view m.heapscope --fold ''
	[ "$(row libc.so.6!malloc)" = "$((210737 + STDIO)) 27 $((210737 + STDIO)) 27" ]
	[ "$(row libc.so.6!realloc)" = "1000 1 1000 1" ]
	[ "$(row memtest!site_leak)" = "0 0 231 3" ]
	"$HS_BIN" report m.heapscope --fold '' --view callers --focus libc.so.6!realloc \
		> callers.txt
	grep -q '^  memtest!site_grow ' callers.txt
}

@test "net: the whole trace nets to what leaked" {
	[ "$(total m.heapscope --source net)" = "$((231 + STDIO)) 4" ]
	view m.heapscope --source net
	[ "$(row memtest!site_leak)" = "231 3 231 3" ]
	[ "$(row memtest!site_large)" = "0 0 0 0" ]
	[ "$(row memtest!site_block)" = "0 0 0 0" ]
}

@test "leaks: allocated and never freed; stdio's buffer suppressed by default" {
	[ "$(total m.heapscope --source leaks)" = "231 3" ]
	view m.heapscope --source leaks
	[ "$(row memtest!site_leak)" = "231 3 231 3" ]
	[ "$(total m.heapscope --source leaks --exc '')" = "$((231 + STDIO)) 4" ]
}

@test "peak: the blocks live when heap in use was highest" {
	[ "$(total m.heapscope --source peak)" = "$((210231 + STDIO)) 15" ]
	view m.heapscope --source peak
	[ "$(row memtest!site_large)" = "200000 1 200000 1" ]
	[ "$(row memtest!site_block)" = "10000 10 10000 10" ]
	[ "$(row memtest!site_leak)" = "231 3 231 3" ]
	[ "$(row memtest!site_temp)" = "-" ]
}

@test "temporary: freed before any other allocation" {
	[ "$(total m.heapscope --source temporary)" = "201474 13" ]
	view m.heapscope --source temporary
	[ "$(row memtest!site_large)" = "200000 1 200000 1" ]
	[ "$(row memtest!site_temp)" = "320 5 320 5" ]
	[ "$(row memtest!site_pair)" = "48 1 48 1" ]
	[ "$(row "memtest!inl_alloc (inline)")" = "96 4 96 4" ]
	[ "$(row memtest!site_grow)" = "1010 2 1010 2" ]
	[ "$(row memtest!site_block)" = "-" ]
	[ "$(row memtest!site_leak)" = "-" ]
}

@test "mmap: mapped minus unmapped bytes, a partial munmap included" {
	local page=$(getconf PAGESIZE)
	[ "$(total m.heapscope --source mmap)" = "$((2 * page)) 1" ]
	view m.heapscope --source mmap --fold ''
	[ "$(row libc.so.6!mmap)" = "$((2 * page)) 1 $((2 * page)) 1" ]
	view m.heapscope --source mmap
	[ "$(row memtest!site_map)" = "$((2 * page)) 1 $((2 * page)) 1" ]
}

@test "LargeAlloc and size classes are pseudo-frames under the thread" {
	"$HS_BIN" report m.heapscope --view calltree --depth 3 > tree.txt
	grep -Eq '^      LargeAlloc +0\.0 +0 +0 +[0-9.]+ +200000 +1 ' tree.txt
	view m.heapscope
	[ "$(row LargeAlloc)" = "0 0 200000 1" ]
	view m.heapscope --large-threshold 1000
	[ "$(row LargeAlloc)" = "0 0 $((211000 + STDIO)) 13" ]
	view m.heapscope --large-threshold 0
	[ "$(row LargeAlloc)" = "-" ]
	view m.heapscope --size-classes
	[ "$(row "Alloc < 16")" = "0 0 10 1" ]
	[ "$(row "Alloc < 32")" = "0 0 96 4" ]
	[ "$(row "Alloc < 64")" = "0 0 80 2" ]
	[ "$(row "Alloc < 128")" = "0 0 551 8" ]
	[ "$(row "Alloc < 1024")" = "0 0 11000 11" ]
	[ "$(row "Alloc < 262144")" = "0 0 200000 1" ]
	# a size class's callers are the functions that allocate in it
	view m.heapscope --size-classes --inc "Alloc < 128"
	[ "$(row memtest!site_leak)" = "231 3 231 3" ]
	[ "$(row memtest!site_temp)" = "320 5 320 5" ]
}

# ms SOURCE NAME FIELD: a row's first_ms or last_ms in the JSON report.
ms() {
	"$HS_BIN" report slow.heapscope --source "$1" --format json |
		python3 -c 'import json,sys
for r in json.load(sys.stdin)["rows"]:
    if r["name"] == sys.argv[1]: print(r[sys.argv[2]])' "$2" "$3"
}

@test "ranges: leaks and net of a time range" {
	local big=$(ms alloc memtest!site_large first_ms)
	local freed=$(ms net memtest!site_block last_ms)
	# the large block was freed 50 ms after its allocation (the clock of
	# a busy machine may lag, but not by that much)
	python3 -c "import sys; sys.exit(not ($freed - $big >= 2))"
	local mid=$(python3 -c "print(($big + $freed) / 2)")
	# up to the middle of the pause: everything allocated so far is live
	[ "$(total slow.heapscope --source leaks --end "$mid" --exc '')" = "$((210231 + STDIO)) 15" ]
	[ "$(total slow.heapscope --source leaks --end "$mid")" = "210231 14" ]
	# blocks allocated inside the range only
	[ "$(total slow.heapscope --source leaks --start "$mid" --exc '')" = "0 0" ]
	# net from the middle of the pause on: the peak's blocks come back
	[ "$(total slow.heapscope --source net --start "$mid")" = "-210000 -11" ]
}

@test "ranges: the peak within a range, with blocks from before it" {
	local freed=$(ms net memtest!site_block last_ms)
	local temp=$(ms alloc memtest!site_temp first_ms)
	local big=$(ms alloc memtest!site_large first_ms)
	python3 -c "import sys; sys.exit(not ($temp - $freed >= 2 and $freed - $big >= 2))"
	local after=$(python3 -c "print(($freed + $temp) / 2)")
	# from the second pause on, the highest heap is at the realloc
	[ "$(total slow.heapscope --source peak --start "$after")" = "$((1231 + STDIO)) 5" ]
	"$HS_BIN" report slow.heapscope --source peak --start "$after" --format csv > view.csv
	[ "$(row memtest!site_grow)" = "1000 1 1000 1" ]
	[ "$(row memtest!site_leak)" = "231 3 231 3" ]
	# up to the first pause: the whole peak
	[ "$(total slow.heapscope --source peak --end "$(python3 -c "print(($big + $freed) / 2)")")" = \
		"$((210231 + STDIO)) 15" ]
}

@test "--source on other files is a usage error; unknown views too" {
	printf 'a;b 3\n' > x.folded
	hs report x.folded --source leaks
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"heapscope traces"* ]]
	hs report m.heapscope --source bogus
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown source 'bogus'"* ]]
	hs report m.heapscope --large-threshold -5
	[ "$status" -eq 2 ]
}
