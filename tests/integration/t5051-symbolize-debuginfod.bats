#!/usr/bin/env bats
# heapscope symbolize and debuginfod: a stripped program's debug file,
# served over HTTP on 127.0.0.1 in debuginfod's layout
# (/buildid/BUILDID/debuginfo) by a small Python server, names its frames
# (inline frames and file:line come only from it) when DEBUGINFOD_URLS
# points there, for the program on disk and for one that is gone.
load trace-helpers

SERVER_PID=

setup() {
	trace_setup
	command -v objcopy > /dev/null || skip "no objcopy (binutils) to make a debug file"
	python3 -c 'import ctypes; ctypes.CDLL("libdebuginfod.so.1")' 2> /dev/null ||
		skip "no libdebuginfod.so.1 (elfutils' debuginfod client) to load"
	# a stripped copy of memtest and its debug file; memtest is -O2 -g, with
	# an inlined function (inl_alloc) that only DWARF names
	mkdir prog
	cp "$TARGETS/memtest" prog/memtest
	objcopy --only-keep-debug prog/memtest memtest.debug
	objcopy --strip-all prog/memtest
	"$HS_BIN" run -q --no-symbolize -o s.heapscope -- prog/memtest > m.out
	ID=$("$HS_BIN" dump s.heapscope |
		sed -n 's|^module .*path="[^"]*/prog/memtest" build_id=\([0-9a-f]*\).*|\1|p' | head -1)
	[ -n "$ID" ]
	mkdir -p "srv/buildid/$ID"
	cp memtest.debug "srv/buildid/$ID/debuginfo"
	# the server: a port the kernel picks, written to port.txt once it listens
	python3 - srv port.txt > server.log 2>&1 3>&- <<'PY' &
import functools, http.server, os, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d\n" % server.server_address[1])
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
PY
	SERVER_PID=$!
	local i
	for i in $(seq 100); do
		[ -s port.txt ] && break
		kill -0 "$SERVER_PID" 2> /dev/null || break
		sleep 0.1
	done
	[ -s port.txt ] || { cat server.log; return 1; }
	URL="http://127.0.0.1:$(cat port.txt)"
}

teardown() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2> /dev/null || true
		wait "$SERVER_PID" 2> /dev/null || true
	fi
}

# symbolize_with URLS: heapscope symbolize s.heapscope with DEBUGINFOD_URLS
# (unset when empty) and a fresh cache, then the call tree in tree.txt.
symbolize_with() {
	rm -rf cache
	if [ -n "$1" ]; then
		DEBUGINFOD_URLS=$1 DEBUGINFOD_CACHE_PATH=$PWD/cache HOME=$PWD \
			"$HS_BIN" symbolize s.heapscope
	else
		env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH=$PWD/cache HOME=$PWD \
			"$HS_BIN" symbolize s.heapscope
	fi
	"$HS_BIN" report s.heapscope --view calltree > tree.txt
}

@test "debuginfod: the served debug file names a stripped program's frames" {
	# without a server: the stripped file has only its exported names
	symbolize_with ""
	grep -q 'memtest!site_inline' tree.txt
	! grep -q 'memtest!inl_alloc (inline)' tree.txt || false
	# with it: the inline frame and its line, from the debug file
	symbolize_with "$URL"
	grep -q "GET /buildid/$ID/debuginfo" server.log
	grep -q 'memtest!inl_alloc (inline)' tree.txt
	local line
	line=$(grep -n 'LINE:inl_alloc ' "$HS_SRC/tests/targets/memtest.c" | cut -d: -f1)
	"$HS_BIN" source s.heapscope inl_alloc --format json > src.json
	[ "$(jq '.files[0].lines[0].line' src.json)" = "$line" ]
	[ "$(jq '.exc' src.json)" = 96 ]
}

@test "debuginfod: the debug file stands in for a program that is gone" {
	rm -r prog
	symbolize_with "$URL"
	grep -q "GET /buildid/$ID/debuginfo" server.log
	grep -q 'memtest!inl_alloc (inline)' tree.txt
	grep -q 'memtest!site_leak' tree.txt
	! grep -q 'memtest!?' tree.txt || false
}
