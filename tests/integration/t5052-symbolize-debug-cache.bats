#!/usr/bin/env bats
# Decompressed copies of the system's debug files (src/symbols/debug_cache.c,
# docs/symbols.md): kept by build id under the cache directory, they give
# the same symbol section as the compressed originals, and nothing is
# written when the cache is turned off or the system's files are not used.
load trace-helpers

setup() {
	trace_setup
	trace_run --no-symbolize -o s.heapscope -- "$TARGETS/sites"
	[ "$status" -eq 0 ]
}

# symbolize_to OUT: `heapscope symbolize s.heapscope -o OUT` in the caller's
# environment; its status must be 0.
symbolize_to() {
	"$HS_BIN" symbolize s.heapscope -o "$1" 2> /dev/null
}

@test "the copies give the same symbol section as the system's files" {
	HEAPSCOPE_DEBUG_CACHE= symbolize_to none.heapscope
	HEAPSCOPE_DEBUG_CACHE="$PWD/cache" symbolize_to first.heapscope
	HEAPSCOPE_DEBUG_CACHE="$PWD/cache" symbolize_to second.heapscope
	cmp none.heapscope first.heapscope
	cmp none.heapscope second.heapscope
	# each copy is a system debug file's, by the same name, decompressed
	# (so larger); none is left half written
	if [ -d cache ]; then
		! find cache -name '*.tmp' | grep -q . || false
		for f in $(cd cache && find . -type f); do
			[ -f "/usr/lib/debug/$f" ]
			[ "$(stat -c %s "cache/$f")" -gt "$(stat -c %s "/usr/lib/debug/$f")" ]
		done
	fi
}

@test "a damaged copy is made again, the names unchanged" {
	HEAPSCOPE_DEBUG_CACHE="$PWD/cache" symbolize_to first.heapscope
	[ -d cache/.build-id ] || skip "no compressed debug file under /usr/lib/debug"
	for f in $(find cache -type f); do : > "$f"; done
	HEAPSCOPE_DEBUG_CACHE="$PWD/cache" symbolize_to again.heapscope
	cmp first.heapscope again.heapscope
	for f in $(find cache -type f); do [ -s "$f" ]; done
}

@test "nothing is written with the cache off or without the system's files" {
	mkdir home
	HOME="$PWD/home" XDG_CACHE_HOME= HEAPSCOPE_DEBUG_CACHE= symbolize_to off.heapscope
	[ -z "$(find home -mindepth 1)" ]
	HEAPSCOPE_DEBUG_CACHE="$PWD/nosys" "$HS_BIN" symbolize --no-system-debug s.heapscope \
		-o nosys.heapscope 2> /dev/null
	[ ! -e nosys ]
}

@test "the cache is under XDG_CACHE_HOME, else ~/.cache" {
	mkdir home
	env -u HEAPSCOPE_DEBUG_CACHE HOME="$PWD/home" XDG_CACHE_HOME="$PWD/xdg" \
		"$HS_BIN" symbolize s.heapscope -o a.heapscope 2> /dev/null
	env -u HEAPSCOPE_DEBUG_CACHE -u XDG_CACHE_HOME HOME="$PWD/home" \
		"$HS_BIN" symbolize s.heapscope -o b.heapscope 2> /dev/null
	cmp a.heapscope b.heapscope
	[ -d xdg/heapscope/debug/.build-id ] || skip "no compressed debug file under /usr/lib/debug"
	[ -d home/.cache/heapscope/debug/.build-id ]
	[ -z "$(find home -mindepth 1 -not -path 'home/.cache*')" ]
}

@test "a daily sweep removes the copies unused for long, and nothing else" {
	mkdir -p cache/.build-id/00 cache/.build-id/01
	echo old > cache/.build-id/00/1122.debug
	echo mine > cache/.build-id/00/notes.txt
	echo recent > cache/.build-id/01/3344.debug
	touch -d '40 days ago' cache/.build-id/00/1122.debug cache/.build-id/00/notes.txt
	touch -d '2 days ago' cache/.build-id/01/3344.debug
	HS_LOG=debug HEAPSCOPE_DEBUG_CACHE="$PWD/cache" "$HS_BIN" symbolize s.heapscope \
		-o a.heapscope 2> log
	grep -q 'debug cache .* swept: 1 copies' log
	[ ! -e cache/.build-id/00/1122.debug ]
	[ -e cache/.build-id/00/notes.txt ]
	[ -e cache/.build-id/01/3344.debug ]
	[ -d cache/.last-sweep ]

	# swept today: not again, however old a copy is
	echo old > cache/.build-id/01/5566.debug
	touch -d '40 days ago' cache/.build-id/01/5566.debug
	HEAPSCOPE_DEBUG_CACHE="$PWD/cache" symbolize_to b.heapscope
	[ -e cache/.build-id/01/5566.debug ]
	cmp a.heapscope b.heapscope

	# a day later it is, with the limits of the environment
	touch -d '25 hours ago' cache/.last-sweep
	HEAPSCOPE_DEBUG_CACHE_MAX_AGE=0 HEAPSCOPE_DEBUG_CACHE_MAX_SIZE=0 \
		HEAPSCOPE_DEBUG_CACHE="$PWD/cache" symbolize_to c.heapscope
	[ -e cache/.build-id/01/5566.debug ]
	touch -d '25 hours ago' cache/.last-sweep
	HEAPSCOPE_DEBUG_CACHE_MAX_AGE=3d HEAPSCOPE_DEBUG_CACHE="$PWD/cache" \
		symbolize_to d.heapscope
	[ ! -e cache/.build-id/01/5566.debug ]
	[ -e cache/.build-id/01/3344.debug ]
	cmp a.heapscope d.heapscope
}
