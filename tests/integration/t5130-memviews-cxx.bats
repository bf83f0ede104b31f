#!/usr/bin/env bats
# The heap views' default FoldPats on C++ built as a release (-O2 -g,
# tests/targets/containers.cc): ByName's Exc of each function that uses a
# standard container, string or shared pointer is exactly what they
# allocated, and frames above user code stay (std::thread's runner,
# std::sort calling a comparator); heapscope source finds a C++ function
# by its bare name.
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

@test "each use: Exc is what its containers allocated, to the byte" {
	[ "$(grep -c '^exc ' c.out)" -eq 10 ]
	while read -r _ bytes blocks fn; do
		echo "$fn: $bytes bytes in $blocks blocks"
		[ "$(cell fold.csv "containers!$fn" Exc)" = "$bytes" ]
		[ "$(cell fold.csv "containers!$fn" "Exc Ct")" = "$blocks" ]
		# all it allocated, with the library code inlined into it
		[ "$(cell nofold.csv "containers!$fn" Inc)" = "$bytes" ]
		[ "$(cell fold.csv "containers!$fn" Inc)" = "$bytes" ]
	done < <(grep '^exc ' c.out)
}

@test "the library's frames between a use and the allocator are folded" {
	"$HS_BIN" report c.heapscope --view callees --focus 'containers!use_map()' > callees.txt
	# nothing below use_map: its container's frames are gone
	[ "$(grep -c '^ *containers!' callees.txt)" -eq 1 ]
	! grep -q '_Rb_tree\|operator new\|malloc' callees.txt || false
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

@test "source: a C++ function by its bare name, with its namespace, or as shown" {
	local fill="std::vector<long, std::allocator<long> >* store::fill<long>(int)" want
	want=$(sed -n 's/^exc \([0-9]*\) .* store::fill.*/\1/p' c.out)
	for name in fill store::fill 'fill<long>' 'containers!fill' "$fill" "containers!$fill"; do
		hs source c.heapscope "$name" --format json
		[ "$status" -eq 0 ]
		[ "$(jq -r '.names[0]' <<< "$output")" = "containers!$fill" ]
		[ "$(jq '.exc' <<< "$output")" = "$want" ]
	done
	hs source c.heapscope use_deque
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Function: containers!store::use_deque()" ]]
	hs source c.heapscope store::use_deque
	[ "$status" -eq 0 ]
	hs source c.heapscope tore::use_deque
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no frame is the function 'tore::use_deque'"* ]]
}

@test "source: a bare name of several functions lists them" {
	hs source c.heapscope push_back --fold ''
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'push_back' is ambiguous, it names "*" functions: "* ]]
	[[ "$stderr" == *"std::vector<int, std::allocator<int> >::push_back(int const&)"* ]]
	[[ "$stderr" == *"std::__cxx11::list<int, std::allocator<int> >::push_back(int&&)"* ]]
	# one of them, as shown
	hs source c.heapscope "std::__cxx11::list<int, std::allocator<int> >::push_back(int&&)" \
		--fold ''
	[ "$status" -eq 0 ]
	hs source c.heapscope 'list<int, std::allocator<int> >::push_back' --fold ''
	[ "$status" -eq 0 ]
}
