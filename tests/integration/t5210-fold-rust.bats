#!/usr/bin/env bats
# The heap views' default FoldPats on a real Rust program
# (tests/targets/allocs.rs, built -O -g here by each rustc found: the
# one on PATH, and Debian's /usr/bin/rustc when it is another): format!'s
# growth through core::fmt, String::clone through <[u8]>::to_vec and
# ConvertVec, and Vec growth are charged to the user's functions, to the
# byte; the leak view shows only the leak the program made.
load trace-helpers

# The rustc binaries to build with, one per line (none: the tests skip).
rustcs() {
	local path
	path=$(command -v rustc || true)
	[ -n "$path" ] && echo "$path"
	if [ -x /usr/bin/rustc ] && [ "$(readlink -f /usr/bin/rustc)" != "$(readlink -f "${path:-/}")" ]; then
		echo /usr/bin/rustc
	fi
}

setup_file() {
	local rc n=0
	cd "$BATS_FILE_TMPDIR" || return 1
	while read -r rc; do
		[ -n "$rc" ] || continue
		n=$((n + 1))
		mkdir -p "r$n"
		"$rc" --version > "r$n/version"
		"$rc" -O -g -o "r$n/allocs" "$HS_SRC/tests/targets/allocs.rs"
		"$HS_BIN" run -q -o "r$n/a.heapscope" -- "r$n/allocs"
		"$HS_BIN" report "r$n/a.heapscope" --format csv > "r$n/fold.csv"
		"$HS_BIN" report "r$n/a.heapscope" --fold '' --format csv > "r$n/nofold.csv"
		"$HS_BIN" report "r$n/a.heapscope" --source leaks --format csv > "r$n/leaks.csv"
	done < <(rustcs)
}

setup() {
	[ -n "$(rustcs)" ] || skip "no rustc on PATH nor /usr/bin/rustc (Debian's rustc package)"
	cd "$BATS_FILE_TMPDIR" || return 1
}

FNS="make_labels copy_labels grow_numbers"

@test "each user function's Exc is all it allocated, to the byte" {
	local d fn inc
	for d in r*/; do
		echo "$(cat "$d/version")"
		for fn in $FNS; do
			inc=$(cell "$d/nofold.csv" "allocs!allocs::$fn" Inc)
			echo "  $fn: Inc $inc unfolded, Exc $(cell "$d/fold.csv" "allocs!allocs::$fn" Exc) folded"
			[ "$inc" -gt 0 ]
			[ "$(cell "$d/fold.csv" "allocs!allocs::$fn" Exc)" = "$inc" ]
		done
	done
}

@test "the three functions are all that main allocated" {
	local d sum fn
	for d in r*/; do
		sum=0
		for fn in $FNS; do
			sum=$((sum + $(cell "$d/fold.csv" "allocs!allocs::$fn" Exc)))
		done
		echo "$(cat "$d/version"): $sum of $(cell "$d/nofold.csv" "allocs!allocs::main" Inc)"
		[ "$sum" = "$(cell "$d/nofold.csv" "allocs!allocs::main" Inc)" ]
	done
}

@test "no core::fmt, ConvertVec or to_vec row keeps bytes of its own" {
	local d
	for d in r*/; do
		cat "$d/version"
		# without the fold, the library's frames are on the stacks
		grep -q 'core::fmt::' "$d/nofold.csv"
		grep -q 'to_vec' "$d/nofold.csv"
		# with it, none of them has an Exc
		python3 - "$d/fold.csv" <<'PY'
import csv, re, sys
bad = [r["Name"] for r in csv.DictReader(open(sys.argv[1]))
       if re.search(r"!<*(?:&(?:mut )?)?(?:core::fmt|alloc)::|ConvertVec|to_vec|"
                    r"spec_write_fmt", r["Name"])
       and float(r["Exc"]) != 0]
print("\n".join(bad))
assert not bad
PY
	done
}

@test "the leak view shows the leaked copies only" {
	local d
	for d in r*/; do
		cat "$d/version"
		[ "$(cell "$d/leaks.csv" "allocs!allocs::copy_labels" Exc)" = \
		  "$(cell "$d/nofold.csv" "allocs!allocs::copy_labels" Inc)" ]
		# every other row has no Exc (std's record of the main thread is a
		# known exit-time allocation)
		python3 - "$d/leaks.csv" <<'PY'
import csv, sys
bad = [r["Name"] for r in csv.DictReader(open(sys.argv[1]))
       if r["Name"] != "allocs!allocs::copy_labels" and float(r["Exc"]) != 0]
print("\n".join(bad))
assert not bad
PY
	done
}
