#!/usr/bin/env bats
# --focus and --drill take the name forms `source` takes: the name as
# shown, without its module, or the bare (qualified) C++ function name;
# several matches list them, no match suggests the names that contain it.
load trace-helpers
bats_require_minimum_version 1.5.0

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q --no-view -o m.heapscope -- "$TARGETS/memtest" > /dev/null
	if [ -x "$TARGETS/containers" ]; then
		"$HS_BIN" run -q --no-view -o c.heapscope -- "$TARGETS/containers" > /dev/null
	fi
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

@test "--focus takes the name without its module" {
	hs report m.heapscope --view callers --focus site_large
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "Focus: memtest!site_large" ]
	hs report m.heapscope --view callers --focus memtest!site_large
	[ "${lines[1]}" = "Focus: memtest!site_large" ]
}

@test "--drill takes the name without its module" {
	a=$("$HS_BIN" report m.heapscope --drill site_block | head -1)
	b=$("$HS_BIN" report m.heapscope --drill memtest!site_block | head -1)
	[ "$a" = "$b" ]
	[[ "$a" == "Totals Metric: 10000 bytes  Count: 10 "* ]]
}

@test "a miss suggests the names that contain it" {
	hs report m.heapscope --view callers --focus larg
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no frame named 'larg'; did you mean "*"'memtest!site_large'"* ]]
	hs report m.heapscope --drill nosuchthing
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"--drill: no frame named 'nosuchthing'" ]]
}

@test "C++: the bare and the qualified name, and ambiguity listed" {
	[ -f c.heapscope ] || skip "no C++ compiler: the containers target is not built"
	hs report c.heapscope --fold '' --view callers --focus use_deque
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "Focus: containers!store::use_deque()" ]
	hs report c.heapscope --fold '' --view callees --focus store::use_deque
	[ "${lines[1]}" = "Focus: containers!store::use_deque()" ]
	hs report c.heapscope --fold '' --drill _M_initialize_map
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Totals Metric: "[1-9]* ]]
	hs report c.heapscope --fold '' --view callees --focus allocate
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'allocate' names "*" frames (give one as shown): "*"::allocate("* ]]
}
