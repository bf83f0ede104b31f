#!/usr/bin/env bats
# heapscope dump: usage, and what it says of damaged input.
load trace-helpers

setup() {
	trace_setup
}

@test "dump without a file is a usage error" {
	hs dump
	[ "$status" -eq 2 ]
	hs dump --frobnicate x
	[ "$status" -eq 2 ]
}

@test "dump of a missing file fails with its name" {
	hs dump nothing.heapscope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"nothing.heapscope"* ]]
}

@test "dump of a file that is not a trace names offset 0" {
	printf 'hello, this is not a trace at all\n' > text.heapscope
	hs dump text.heapscope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"text.heapscope: offset 0: not a heapscope trace"* ]]
}

@test "dump of a corrupt chunk names the chunk's offset" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" exit7
	cp c.heapscope bad.heapscope
	# flip the bits of a byte inside the first chunk's payload (after
	# 16 + 24 bytes): writing a fixed value would leave a byte that already
	# had it unchanged
	local b
	b=$(od -An -tu1 -j60 -N1 bad.heapscope)
	printf "\\$(printf '%03o' $((b ^ 255)))" |
		dd of=bad.heapscope bs=1 seek=60 conv=notrunc 2>/dev/null
	if cmp -s c.heapscope bad.heapscope; then false; fi
	hs dump bad.heapscope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.heapscope: offset 16: corrupt trace: chunk check does not match"* ]]
}

@test "dump prints the records, --events the events, --summary the totals" {
	trace_run -o c.heapscope -- "$TARGETS/crasher" exit7
	hs dump c.heapscope
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "# c.heapscope: heapscope trace format 5.0, "*" bytes" ]]
	[[ "$output" == *$'\nprocess pid='* ]]
	[[ "$output" == *$'\nmodule t='* ]]
	[[ "$output" == *$'\nnode id=1 parent=0 addr=0x'* ]]
	[[ "$output" == *$'\nmalloc tid='*" size=64 stack="* ]]
	[[ "$output" == *$'\nfooter allocs='* ]]
	# the footer counts the module records the file holds
	local modules=$(echo "$output" | grep -c '^module t=')
	[ "$modules" -gt 0 ]
	[[ "$output" == *$'\nfooter '*" modules=$modules "* ]]
	hs dump --events c.heapscope
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c ' alloc malloc 0x[0-9a-f]* 64 ')" -eq 50 ]
	hs dump --summary c.heapscope
	[[ "$output" == *$'\nstatus: complete\n'* ]]
}

# peak_rss_kib CMD...: CMD's peak RSS in KiB (its stdout dropped).
peak_rss_kib() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

# --summary streams the events (issue 14): its memory is bounded by the
# live blocks, where loading the trace took about 34 bytes per event
# (270 MB for these 8M events; 399 MB measured before it streamed).
@test "dump --summary of 8M events reads them in bounded memory" {
	if ldd "$HS_BIN" | grep -q libasan; then
		skip "a sanitizer build's RSS is not the program's"
	fi
	"$HS_BIN" run -q --no-view -o big.heapscope -- "$TARGETS/churn" 1 1 4000000 > /dev/null
	[ "$(summary_field big.heapscope allocations)" -ge 4000000 ]
	[ "$(summary_field big.heapscope frees)" -ge 4000000 ]
	local rss
	rss=$(peak_rss_kib "$HS_BIN" dump --summary big.heapscope)
	echo "peak RSS of dump --summary: $rss KiB"
	[ "$rss" -lt 100000 ]
}
