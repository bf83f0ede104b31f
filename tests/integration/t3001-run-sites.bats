#!/usr/bin/env bats
# heapscope run: every allocation of a program whose allocations are known
# exactly (tests/targets/sites.c): each allocation function, a realloc
# chain, leaks, nested calls, mmap: counts, sizes, frees and stacks.
load trace-helpers

setup() {
	trace_setup
}

@test "the trace reproduces every call site exactly (libunwind)" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
	trace_check out.txt s.heapscope
}

@test "the trace reproduces every call site exactly (frame pointers)" {
	trace_run --unwind fp -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
	trace_check out.txt s.heapscope
}

@test "cached unwind rules give libunwind's stacks, frame for frame" {
	trace_run -o fast.heapscope -- "$TARGETS/sites"
	trace_run --unwind slow -o slow.heapscope -- "$TARGETS/sites"
	"$HS_BIN" dump --events fast.heapscope | cut -d' ' -f3,4,6,7 | sort > fast.txt
	"$HS_BIN" dump --events slow.heapscope | cut -d' ' -f3,4,6,7 | sort > slow.txt
	[ "$(wc -l < fast.txt)" -ge 30 ]
	diff fast.txt slow.txt
	# the stacks are whole: they start at the program's entry point
	! grep -q BROKEN fast.txt || false
}

@test "the sizes and totals of the summary are exact" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	# 10*100 + 5*100 + 200 + 256 + 50 + 300 + 5000 + 21 + 35 +
	# 10 + 20 + 4000 + 100000 + 3*77 + 2*1234 + 16, plus stdout's buffer
	local bytes=$(summary_field s.heapscope "bytes allocated")
	[ "$bytes" -eq $((1000 + 500 + 200 + 256 + 50 + 300 + 5000 + 21 + 35 + 10 + 20 + 4000 + 100000 + 231 + 2468 + 16 + 4096)) ]
	# the failed (overflowing) reallocarray freed nothing: no unmatched free
	[ "$(summary_field s.heapscope "unmatched frees")" -eq 0 ]
	# two mmaps, two munmaps and an mremap, which counts as one of each
	[ "$(summary_field s.heapscope mmaps)" -eq 3 ]
	[ "$(summary_field s.heapscope munmaps)" -eq 3 ]
	[ "$(summary_field s.heapscope status)" = complete ]
	[ "$(summary_field s.heapscope end)" = "exit 0" ]
}

@test "--max-depth cuts stacks on the outer side and marks them BROKEN" {
	trace_run --max-depth 2 -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
	"$HS_BIN" dump --events s.heapscope > ev.txt
	# site_deep's malloc: its call site and middle's call of site_deep
	grep " alloc malloc .* 1234 " ev.txt > deep.txt
	[ "$(wc -l < deep.txt)" -eq 2 ]
	while read -r _ _ _ _ _ _ stack; do
		[[ "$stack" == BROKEN\;*\;* ]]
		[ "$(echo "$stack" | tr ';' '\n' | wc -l)" -eq 3 ]
	done < deep.txt
}

@test "C++ new, new[], delete and over-aligned new are exact" {
	[ -x "$TARGETS/cxx" ] || skip "no C++ compiler"
	trace_run -o c.heapscope -- "$TARGETS/cxx"
	[ "$status" -eq 0 ]
	trace_check out.txt c.heapscope
}

# unwind=check: every stack of the cached-rule unwinder (including walks
# that take their outer frames from the previous walk) is compared with
# libunwind's own walk of the same stack, in the same run.
unwind_check() {
	HEAPSCOPE_OPTIONS=unwind=check LD_PRELOAD="$HS_BUILD/libheapscope-preload.so" \
		"$@" > /dev/null 2> check.err || true
	grep -E "^heapscope: unwind check: [0-9]+ stacks, 0 differ from libunwind's$" check.err
}

@test "every fast stack equals libunwind's (targets)" {
	unwind_check "$TARGETS/sites"
	unwind_check "$TARGETS/threads" 200
	unwind_check "$TARGETS/dlopener" "$TARGETS/libhsdlib.so"
	unwind_check "$TARGETS/crasher" exit7
	[ -x "$TARGETS/cxx" ] && unwind_check "$TARGETS/cxx"
}

@test "every fast stack equals libunwind's (python3, deep varied stacks)" {
	# the interpreter itself: a wrapper script would exec it untraced
	local py=/usr/bin/python3
	[ -x "$py" ] || skip "no /usr/bin/python3"
	PYTHONMALLOC=malloc unwind_check "$py" -c '
import json
def deep(n):
    return deep(n - 1) if n else json.dumps([str(i) * 3 for i in range(3000)])
for k in range(30):
    deep(k)'
	local n=$(sed -n 's/^heapscope: unwind check: \([0-9]*\) stacks.*/\1/p' check.err)
	[ "$n" -gt 1000 ]
}
