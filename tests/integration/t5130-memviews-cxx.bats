#!/usr/bin/env bats
# The heap views' default FoldPats on C++ built as a release (-O2 -g,
# tests/targets/containers.cc): ByName's Exc of each function that uses a
# standard container, string or shared pointer is exactly what they
# allocated, and frames above user code stay (std::thread's runner,
# std::sort calling a comparator).
load trace-helpers

setup_file() {
	[ -x "$TARGETS/containers" ] || return 0
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q -o c.heapscope -- "$TARGETS/containers" > c.out
	"$HS_BIN" report c.heapscope --format csv > fold.csv
	"$HS_BIN" report c.heapscope --fold '' --format csv > nofold.csv
}

setup() {
	[ -x "$TARGETS/containers" ] || skip "no C++ compiler"
	cd "$BATS_FILE_TMPDIR" || return 1
}

# cell CSV NAME COLUMN: a cell of ByName's CSV (names may hold commas);
# "-" when NAME has no row. NAME ending in '*' is a prefix.
cell() {
	python3 - "$@" <<'PY'
import csv, sys
path, name, col = sys.argv[1], sys.argv[2], sys.argv[3]
rows = list(csv.DictReader(open(path)))
hit = [r for r in rows if r["Name"] == name or
       (name.endswith("*") and r["Name"].startswith(name[:-1]))]
print(hit[0][col] if len(hit) == 1 else "-" if not hit else "ambiguous")
PY
}

@test "each use: Exc is what its containers allocated, to the byte" {
	[ "$(grep -c '^exc ' c.out)" -eq 9 ]
	while read -r _ fn bytes blocks; do
		echo "$fn: $bytes bytes in $blocks blocks"
		[ "$(cell fold.csv "containers!$fn()" Exc)" = "$bytes" ]
		[ "$(cell fold.csv "containers!$fn()" "Exc Ct")" = "$blocks" ]
		# all it allocated, with the library code inlined into it
		[ "$(cell nofold.csv "containers!$fn()" Inc)" = "$bytes" ]
		[ "$(cell fold.csv "containers!$fn()" Inc)" = "$bytes" ]
	done < <(grep '^exc ' c.out)
}

@test "the library's frames between a use and the allocator are folded" {
	"$HS_BIN" report c.heapscope --view callees --focus 'containers!use_map()' > callees.txt
	# nothing below use_map: its container's frames are gone
	[ "$(grep -c '^ *containers!' callees.txt)" -eq 1 ]
	! grep -q '_Rb_tree\|operator new\|malloc' callees.txt
	# without the fold they are there
	"$HS_BIN" report c.heapscope --fold '' --view callees --focus 'containers!use_map()' \
		> callees.txt
	grep -q '_Rb_tree' callees.txt
}

@test "std::thread's runner and std::sort stay above the user's code they call" {
	# worker runs in the thread; the runner is its caller
	[ "$(cell fold.csv "containers!std::thread::_State_impl<*" Inc)" = 123 ]
	# by_len allocates in each comparison std::sort makes
	local exc inc
	exc=$(cell fold.csv "containers!by_len(*" Exc)
	inc=$(cell nofold.csv "containers!by_len(*" Inc)
	[ "$exc" -gt 0 ] && [ "$exc" = "$inc" ]
	[ "$(cell fold.csv "containers!void std::sort<*" Inc)" = "$inc" ]
	[ "$(cell fold.csv "containers!use_sort()" Exc)" = 0 ]
}
