#!/usr/bin/env bats
# Symbols in traces: `heapscope run` stores names and file:line of every
# address in the trace (its symbol section), `heapscope symbolize` does
# it again offline; a trace keeps its names when the program is gone.
load trace-helpers

setup() {
	trace_setup
}

@test "run stores the symbols: report names functions, not offsets" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
	"$HS_BIN" dump s.heapscope > dump.txt
	grep -q '^chunk [0-9]* at [0-9]*: symbols, zstd' dump.txt
	grep -q '^sym-string s="site_malloc"' dump.txt
	hs report s.heapscope --view calltree
	[ "$status" -eq 0 ]
	[[ "$output" == *"sites!main"* ]]
	[[ "$output" == *"sites!run_sites"* ]]
	[[ "$output" == *"sites!outer"*"sites!middle"*"sites!site_deep"* ]]
	[[ "$output" != *"sites!0x"* ]]
}

@test "a trace copied elsewhere shows names after the program is deleted" {
	mkdir prog
	cp "$TARGETS/sites" prog/sitescopy
	trace_run -o s.heapscope -- prog/sitescopy
	[ "$status" -eq 0 ]
	rm -r prog
	mkdir other
	mv s.heapscope other/
	cd other
	hs report s.heapscope --view calltree
	[ "$status" -eq 0 ]
	[[ "$output" == *"sitescopy!site_realloc_chain"* ]]
	[[ "$output" == *"sitescopy!site_leak"* ]]
	# symbolizing again without the program gives module!? and says why
	hs symbolize s.heapscope
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"no symbols for "*"sitescopy"* ]]
	hs report s.heapscope --view calltree
	[[ "$output" == *"sitescopy!?"* ]]
	[[ "$output" != *"sitescopy!site_leak"* ]]
}

@test "--no-symbolize leaves offsets; symbolize adds the names later" {
	trace_run --no-symbolize -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
	! "$HS_BIN" dump s.heapscope | grep -q ': symbols,' || false
	hs report s.heapscope --view calltree
	[[ "$output" == *"sites!0x"* ]]
	hs symbolize s.heapscope
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"addresses: "*" named ("*" with file:line"* ]]
	hs report s.heapscope --view calltree
	[[ "$output" == *"sites!site_deep"* ]]
	[[ "$output" != *"sites!0x"* ]]
}

@test "symbolize replaces the section; -o writes a copy and leaves the trace" {
	trace_run --no-symbolize -o s.heapscope -- "$TARGETS/sites"
	local plain=$(stat -c %s s.heapscope)
	hs symbolize -q -o named.heapscope s.heapscope
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(stat -c %s s.heapscope)" -eq "$plain" ]
	local named=$(stat -c %s named.heapscope)
	[ "$named" -gt "$plain" ]
	cmp -n "$plain" s.heapscope named.heapscope
	# again, in place: the same size (the old section was replaced)
	hs symbolize -q named.heapscope
	[ "$status" -eq 0 ]
	[ "$(stat -c %s named.heapscope)" -eq "$named" ]
	[ "$("$HS_BIN" dump named.heapscope | grep -c ': symbols,')" -eq 1 ]
	"$HS_BIN" dump --summary named.heapscope | grep -q '^status: complete'
}

@test "symbolize drops a half-written chunk of a cut-off trace" {
	trace_run --no-symbolize -o s.heapscope -- "$TARGETS/sites"
	local size=$(stat -c %s s.heapscope)
	head -c $((size - 10)) s.heapscope > cut.heapscope
	hs symbolize -q cut.heapscope
	[ "$status" -eq 0 ]
	hs report cut.heapscope --view calltree
	[ "$status" -eq 0 ]
	[[ "$output" == *"sites!"* ]]
	"$HS_BIN" dump cut.heapscope > dump.txt
	grep -q ': symbols,' dump.txt
	grep -q '^# no end chunk' dump.txt
}

@test "a damaged symbol section: the events whole, no names, one warning" {
	trace_run -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
	local size=$(stat -c %s s.heapscope) at cut
	at=$("$HS_BIN" dump s.heapscope | sed -n 's/^chunk [0-9]* at \([0-9]*\): symbols,.*/\1/p')
	[ -n "$at" ]
	local events=$(summary_field s.heapscope events)
	local warning="heapscope: warning: d.heapscope: the symbol section is damaged at offset $at"
	local restore="names are missing; \`heapscope symbolize d.heapscope\` restores them"
	for cut in $((at + 3)) $((at + 30)) $((size - 1)); do
		head -c "$cut" s.heapscope > d.heapscope
		hs stats d.heapscope
		[ "$status" -eq 0 ]
		[ "$stderr" = "$warning (cut off); $restore" ]
		[[ "$output" == *", not symbolized"* ]]
		[ "$(summary_field d.heapscope status)" = complete ]
		[ "$(summary_field d.heapscope events)" = "$events" ]
	done
	# a byte changed inside it
	cp s.heapscope d.heapscope
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x55]))' \
		d.heapscope $((at + 40))
	hs report d.heapscope --view calltree
	[ "$status" -eq 0 ]
	[ "$stderr" = "$warning (chunk check does not match its content); $restore" ]
	[[ "$output" == *"sites!0x"* ]]
	"$HS_BIN" dump d.heapscope > dump.txt
	grep -q "^# the symbol section is damaged at offset $at (chunk check" dump.txt
	# dump counts the events as the loaded trace does
	grep -q "^# complete: .* records, $events events$" dump.txt
	hs symbolize -q d.heapscope
	[ "$status" -eq 0 ]
	hs report d.heapscope --view calltree
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *"sites!site_deep"* ]]
}

@test "symbolize: usage and errors" {
	hs symbolize
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"no trace file"* ]]
	hs symbolize a b
	[ "$status" -eq 2 ]
	hs symbolize --bogus x
	[ "$status" -eq 2 ]
	hs symbolize missing.heapscope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing.heapscope"* ]]
	echo "not a trace" > junk.heapscope
	hs symbolize junk.heapscope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"not a heapscope trace"* ]]
	trace_run --no-symbolize -o s.heapscope -- "$TARGETS/sites"
	hs symbolize --debug-dir /nonexistent/dir s.heapscope
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"/nonexistent/dir"* ]]
	hs symbolize --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: heapscope symbolize TRACE"* ]]
}

@test "symbolize waits for a repack's lock and writes the file that repack left" {
	trace_run --no-symbolize --no-repack -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
	cp s.heapscope copy.heapscope
	# a rewrite that holds the lock and then renames its file over the trace
	flock s.heapscope -c 'touch locked; sleep 2; mv copy.heapscope s.heapscope' &
	while [ ! -e locked ]; do sleep 0.05; done
	hs symbolize s.heapscope
	wait
	[ "$status" -eq 0 ]
	"$HS_BIN" dump s.heapscope | grep -q ': symbols,'
	hs report s.heapscope --view calltree
	[[ "$output" == *"sites!site_deep"* ]]
	[[ "$output" != *"sites!0x"* ]]
}
