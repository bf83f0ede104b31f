#!/usr/bin/env bats
# Text output on template-heavy C++: --short-templates writes template
# arguments as <…>, --width N and --fit cut names so that lines fit.
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

# widest: the widest table line of report ARGS, in characters
widest() {
	"$HS_BIN" report "$@" | tail -n +4 | python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in sys.stdin))'
}

@test "--short-templates shortens the real C++ names, keeping their totals" {
	[ -f c.heapscope ] || skip "no C++ compiler: the containers target is not built"
	"$HS_BIN" report c.heapscope --fold '' --short-templates > short.txt
	grep -qF 'containers!std::deque<…>::deque() (inline)' short.txt
	! grep -q 'std::allocator<int> >' short.txt || false
	[ "$(head -1 short.txt)" = "$("$HS_BIN" report c.heapscope --fold '' | head -1)" ]
	plain=$(widest c.heapscope --fold '')
	short=$(widest c.heapscope --fold '' --short-templates)
	echo "plain $plain short $short"
	[ "$short" -lt "$plain" ]
}

@test "--width and --fit cut names to fit, with an ellipsis" {
	[ "$(widest m.heapscope --width 120)" -le 120 ]
	"$HS_BIN" report m.heapscope --width 100 > cut.txt
	grep -qF '…' cut.txt
	[ "$(COLUMNS=130 widest m.heapscope --fit)" -le 130 ]
	# names keep 16 characters however narrow the width
	"$HS_BIN" report m.heapscope --width 10 | grep -qF 'Thread ('
	# csv and json are never cut
	"$HS_BIN" report m.heapscope --width 60 --format csv | grep -q '^Process memtest ('
}
