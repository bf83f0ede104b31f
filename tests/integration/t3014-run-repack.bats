#!/usr/bin/env bats
# heapscope repack, and run's own rewrite of its trace into bigger chunks
# at the end: the same records, fewer chunks; an interrupted rewrite
# leaves the trace as it was.
load trace-helpers

setup() {
	trace_setup
}

# records FILE: `dump` of FILE without what names its chunks (their
# offsets and sizes, the footer's index), which a rewrite changes
records() {
	"$HS_BIN" dump "$1" | grep -v -e '^chunk ' -e '^  chunk at ' -e '^# ' \
		-e '^  chunks with records other than events' |
		sed 's/ index=[0-9]*$//'
}

chunks() {
	"$HS_BIN" dump "$1" | grep -c '^chunk [0-9]* at [0-9]*: events'
}

@test "repack gives the same records in fewer chunks" {
	trace_run --no-repack -o a.heapscope -- "$TARGETS/churn" 200 8 300
	[ "$status" -eq 0 ]
	cp a.heapscope b.heapscope
	hs repack b.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"chunks of events ->"* ]]
	[ "$(chunks b.heapscope)" -lt "$(chunks a.heapscope)" ]
	[ "$(stat -c %s b.heapscope)" -lt "$(stat -c %s a.heapscope)" ]
	[ ! -e b.heapscope.repack ]
	records a.heapscope > a.txt
	records b.heapscope > b.txt
	[ -s a.txt ]
	cmp a.txt b.txt
	"$HS_BIN" dump --events a.heapscope > a.ev
	"$HS_BIN" dump --events b.heapscope > b.ev
	cmp a.ev b.ev
	"$HS_BIN" stats a.heapscope | sed 1d > a.st
	"$HS_BIN" stats b.heapscope | sed 1d > b.st
	cmp a.st b.st
}

@test "repack into small chunks keeps the symbol section and every record" {
	trace_run --no-repack -o a.heapscope -- "$TARGETS/stress" 2 300000
	[ "$status" -eq 0 ]
	cp a.heapscope b.heapscope
	hs repack --chunk-records 300000 b.heapscope
	[ "$status" -eq 0 ]
	[ "$(chunks b.heapscope)" -gt 1 ]
	"$HS_BIN" dump b.heapscope | grep -q '^chunk [0-9]* at [0-9]*: symbols'
	records a.heapscope > a.txt
	records b.heapscope > b.txt
	cmp a.txt b.txt
	# the names are read from the copied section
	"$HS_BIN" report --source alloc --view byname a.heapscope > a.rep
	"$HS_BIN" report --source alloc --view byname b.heapscope > b.rep
	grep -q site_stress b.rep
	cmp a.rep b.rep
}

@test "a rewrite left behind does not touch the trace, and the next replaces it" {
	trace_run --no-repack -o a.heapscope -- "$TARGETS/churn" 100 8 300
	[ "$status" -eq 0 ]
	cp a.heapscope b.heapscope
	# what a rewrite killed before its rename leaves: a partial file beside
	head -c 100 a.heapscope > b.heapscope.repack
	cmp a.heapscope b.heapscope
	"$HS_BIN" dump b.heapscope | tail -1 | grep -q '^# complete:'
	hs repack b.heapscope
	[ "$status" -eq 0 ]
	[ ! -e b.heapscope.repack ]
	records a.heapscope > a.txt
	records b.heapscope > b.txt
	cmp a.txt b.txt
	# a link left there is replaced, not written through
	cp a.heapscope c.heapscope
	echo keep > victim
	ln -s victim c.heapscope.repack
	hs repack c.heapscope
	[ "$status" -eq 0 ]
	[ "$(cat victim)" = keep ]
	[ ! -e c.heapscope.repack ]
	records c.heapscope > c.txt
	cmp a.txt c.txt
}

@test "repack leaves a cut-off trace as it is" {
	trace_run --no-repack -o a.heapscope -- "$TARGETS/churn" 100 8 300
	[ "$status" -eq 0 ]
	head -c $(($(stat -c %s a.heapscope) - 5)) a.heapscope > cut.heapscope
	cp cut.heapscope before.heapscope
	hs repack cut.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"left as it is"* ]]
	cmp cut.heapscope before.heapscope
	[ ! -e cut.heapscope.repack ]
}

@test "repack leaves a symbolic link and a file with other hard links alone" {
	trace_run --no-repack -o a.heapscope -- "$TARGETS/churn" 100 8 300
	[ "$status" -eq 0 ]
	cp a.heapscope b.heapscope
	ln -s b.heapscope link.heapscope
	hs repack link.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"left as it is (it is a symbolic link"* ]]
	[ -L link.heapscope ]
	cmp a.heapscope b.heapscope
	[ ! -e link.heapscope.repack ]
	ln b.heapscope hard.heapscope
	hs repack b.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"left as it is (it has other hard links)"* ]]
	[ "$(stat -c %i b.heapscope)" = "$(stat -c %i hard.heapscope)" ]
	cmp a.heapscope b.heapscope
	[ ! -e b.heapscope.repack ]
	mkfifo fifo.heapscope
	run timeout 20 "$HS_BIN" repack fifo.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"left as it is (it is not a regular file)"* ]]
	# one link again: repacked
	rm hard.heapscope
	hs repack b.heapscope
	[ "$status" -eq 0 ]
	[[ "$output" == *"chunks of events ->"* ]]
	[ -L link.heapscope ]
}

@test "repack usage errors" {
	hs repack
	[ "$status" -eq 2 ]
	hs repack a b
	[ "$status" -eq 2 ]
	hs repack --chunk-records 99999999 x.heapscope
	[ "$status" -eq 2 ]
	hs repack missing.heapscope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"missing.heapscope"* ]]
}

@test "run rewrites a trace of many small chunks at its end, --no-repack does not" {
	# a program that sleeps between its allocations: a chunk every 50 ms
	"$HS_BIN" -v run -o w.heapscope -- "$TARGETS/sleeper" waits > out.txt 2> err.txt
	grep -q 'run: w.heapscope repacked' err.txt
	[ "$(chunks w.heapscope)" -eq 1 ]
	hs dump --summary w.heapscope
	[ "$status" -eq 0 ]
	"$HS_BIN" -v run --no-repack -o n.heapscope -- "$TARGETS/sleeper" waits > out.txt 2> err.txt
	! grep -q 'repack' err.txt
	[ "$(chunks n.heapscope)" -gt 1 ]
}
