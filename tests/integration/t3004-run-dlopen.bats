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

@test "two libraries loaded in turn at one address: each frame names its own" {
	trace_run -o s.heapscope -- "$TARGETS/dlswap" "$TARGETS/libhsdlswap_a.so" \
		"$TARGETS/libhsdlswap_b.so"
	[ "$status" -eq 0 ]
	# (the loader did put them at one address: else this tests nothing)
	[ "$(grep -c '^base ' out.txt)" -eq 4 ]
	[ "$(sed -n 's/^base //p' out.txt | sort -u | wc -l)" -eq 1 ]
	trace_check out.txt s.heapscope
	# run symbolized the trace: each function's bytes, exactly
	"$HS_BIN" report s.heapscope --format csv > alloc.csv
	[ "$(col libhsdlswap_a.so!site_a_ctor 3 alloc.csv)" = 1002 ]
	[ "$(col libhsdlswap_a.so!site_a 3 alloc.csv)" = 1004 ]
	[ "$(col libhsdlswap_b.so!site_b_ctor 3 alloc.csv)" = 1202 ]
	[ "$(col libhsdlswap_b.so!site_b 3 alloc.csv)" = 1204 ]
}

@test "a library's dlsym(RTLD_NEXT) finds the next library, as without the collector" {
	# the collector interposes dlsym() (for .NET's shutdown, dotnet_exit.c);
	# RTLD_NEXT must still search after the library that called it
	"$TARGETS/nextsym" | grep -qx "probe 42"
	trace_run -o n.heapscope -- "$TARGETS/nextsym"
	cat out.txt err.txt
	[ "$status" -eq 0 ]
	grep -qx "probe 42" out.txt
}
