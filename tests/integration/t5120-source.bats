#!/usr/bin/env bats
# heapscope source: a function's lines with their cost. The lines and the
# inlined function come from tests/targets/memtest.c, whose "LINE:" marks
# say where each allocation is; the numbers are those of t5100.
load trace-helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q -o m.heapscope -- "$TARGETS/memtest" > m.out
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

SRCFILE="$HS_SRC/tests/targets/memtest.c"

# mark NAME: the line of "LINE:NAME" in memtest.c.
mark() {
	grep -n "LINE:$1 " "$SRCFILE" | cut -d: -f1
}

# lines ARGS...: "line inc inc_count exc exc_count" per costed line of
# `source ARGS --format json`, one per line, files in order.
lines() {
	"$HS_BIN" source "$@" --format json |
		python3 -c 'import json,sys
d = json.load(sys.stdin)
for f in d["files"]:
    for l in f["lines"]:
        print("%d %g %g %g %g" % (l["line"], l["inc"], l["inc_count"], l["exc"], l["exc_count"]))'
}

@test "source: each allocating function's line, with its bytes and count" {
	[ "$(lines m.heapscope site_leak)" = "$(mark site_leak) 231 3 231 3" ]
	[ "$(lines m.heapscope site_block)" = "$(mark site_block) 10000 10 10000 10" ]
	[ "$(lines m.heapscope site_large)" = "$(mark site_large) 200000 1 200000 1" ]
	[ "$(lines m.heapscope site_temp)" = "$(mark site_temp) 320 5 320 5" ]
	[ "$(lines m.heapscope memtest!site_pair)" = "$(mark site_pair) 80 2 80 2" ]
	[ "$(lines m.heapscope site_grow)" = "$(mark site_grow_malloc) 10 1 10 1
$(mark site_grow_realloc) 1000 1 1000 1" ]
}

@test "source: an inlined function has its own frame and lines" {
	# the allocation is in the inlined function, at its line
	[ "$(lines m.heapscope inl_alloc)" = "$(mark inl_alloc) 96 4 96 4" ]
	[ "$(lines m.heapscope "memtest!inl_alloc (inline)")" = "$(mark inl_alloc) 96 4 96 4" ]
	# the function it was inlined into: the line of the inlined call
	[ "$(lines m.heapscope site_inline)" = "$(mark site_inline) 96 4 0 0" ]
	"$HS_BIN" report m.heapscope --view calltree > tree.txt
	grep -Eq '^ +memtest!site_inline +.*96 +4 ' tree.txt
	grep -Eq '^ +memtest!inl_alloc \(inline\) +.*96 +4 ' tree.txt
}

@test "source: callers' lines are inclusive; views and ranges apply" {
	"$HS_BIN" source m.heapscope run --format json > run.json
	python3 - "$(grep -n '	site_peak();' "$SRCFILE" | cut -d: -f1)" <<'EOF'
import json, sys
d = json.load(open("run.json"))
lines = {l["line"]: (l["inc"], l["exc"]) for l in d["files"][0]["lines"]}
assert lines[int(sys.argv[1])] == (210000, 0), lines
assert d["inc"] == 211737 and d["exc"] == 0, d
EOF
	[ "$(lines m.heapscope site_leak --source leaks)" = "$(mark site_leak) 231 3 231 3" ]
	[ "$(lines m.heapscope site_large --source peak)" = "$(mark site_large) 200000 1 200000 1" ]
	[ "$(lines m.heapscope site_block --source temporary)" = "" ]
	[ "$(lines m.heapscope site_map --source mmap)" = "$(mark site_map) 8192 1 8192 1" ]
	# without the default fold the allocator is the leaf: no Exc here
	[ "$(lines m.heapscope site_leak --fold '')" = "$(mark site_leak) 231 3 0 0" ]
}

@test "source text: the file with the costs beside its lines" {
	hs source m.heapscope site_leak
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Function: memtest!site_leak" ]]
	[[ "${lines[1]}" == "Inc: 231 bytes (0.1%) in 3  Exc: 231 bytes (0.1%) in 3" ]]
	[[ "$output" == *"$SRCFILE"* ]]
	local want
	want=$(printf '%6u %10s %10s %10s %10s | %s' "$(mark site_leak)" 231 3 231 3 \
		"$(sed -n "$(mark site_leak)p" "$SRCFILE")")
	[[ "$output" == *"$want"* ]]
	# three lines of context on each side by default
	[ "$(echo "$output" | grep -c ' | ')" -eq 8 ]
	hs source m.heapscope site_leak --context 0
	[ "$(echo "$output" | grep -c ' | ')" -eq 2 ]
	hs source m.heapscope site_leak --whole-file
	[ "$(echo "$output" | grep -c ' | ')" -eq $(($(wc -l < "$SRCFILE") + 1)) ]
}

@test "a trace copied elsewhere, its program deleted, still has names and lines" {
	mkdir -p prog/src
	cp "$SRCFILE" "$HS_SRC/tests/targets/target.h" prog/src/
	(cd prog/src && cc -D_GNU_SOURCE -g -O0 -fno-omit-frame-pointer -rdynamic \
		-o ../app memtest.c -ldl)
	"$HS_BIN" run -q -o app.heapscope -- prog/app > /dev/null
	local line=$(grep -n "LINE:site_leak " prog/src/memtest.c | cut -d: -f1)
	mkdir moved
	mv app.heapscope moved/
	rm prog/app
	mv prog/src elsewhere
	rmdir prog
	cd moved
	[ "$(lines app.heapscope site_leak)" = "$line 231 3 231 3" ]
	# the source moved too: --source-dir finds it by the path's last parts
	hs source app.heapscope site_leak
	[ "$status" -eq 0 ]
	[[ "$output" == *"(not found: only its lines with a cost; try --source-dir)"* ]]
	hs source app.heapscope site_leak --source-dir ../elsewhere
	[ "$status" -eq 0 ]
	[[ "$output" == *"(read from ../elsewhere/memtest.c)"* ]]
	[[ "$output" == *"LINE:site_leak"* ]]
}

@test "source: errors" {
	hs source m.heapscope no_such_function
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no frame is the function 'no_such_function'"* ]]
	printf 'main;f 3\n' > x.folded
	hs source x.folded f
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no source lines"* ]]
	hs source m.heapscope
	[ "$status" -eq 2 ]
	hs source m.heapscope a b
	[ "$status" -eq 2 ]
	hs source m.heapscope site_leak --source bogus
	[ "$status" -eq 2 ]
	hs source m.heapscope site_leak --format csv
	[ "$status" -eq 2 ]
	hs source m.heapscope site_leak --inc '@('
	[ "$status" -eq 1 ]
	hs source --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: heapscope source FILE FUNCTION"* ]]
}
