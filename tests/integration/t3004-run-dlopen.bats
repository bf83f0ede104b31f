#!/usr/bin/env bats
# heapscope run: a library loaded with dlopen allocates when it loads and
# when called; its frames are named by the library.
load trace-helpers

setup() {
	trace_setup
}

@test "allocations in a dlopen'ed library, and in its constructor, are exact" {
	trace_run -o d.heapscope -- "$TARGETS/dlopener" "$TARGETS/libhsdlib.so"
	[ "$status" -eq 0 ]
	trace_check out.txt d.heapscope
}

@test "the library's load and unload are module records" {
	trace_run -o d.heapscope -- "$TARGETS/dlopener" "$TARGETS/libhsdlib.so"
	"$HS_BIN" dump d.heapscope > d.txt
	local id=$(sed -n "s/^module .* id=\([0-9]*\) .*path=\"${TARGETS//\//\\/}\/libhsdlib.so\".*/\1/p" d.txt)
	[ -n "$id" ]
	grep -qE "^module-unload t=[0-9]+ id=$id next_node=[0-9]+$" d.txt
	"$HS_BIN" dump --events d.heapscope | grep " 999 " | grep -q "libhsdlib.so!0x"
}

@test "a library's constructor allocating before main is traced (the collector initializes first)" {
	trace_run -o l.heapscope -- "$TARGETS/linked"
	[ "$status" -eq 0 ]
	trace_check out.txt l.heapscope
	[ "$(summary_field l.heapscope "unmatched frees")" -eq 0 ]
}
