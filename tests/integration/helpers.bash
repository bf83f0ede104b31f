# Shared helpers for heapscope's bats tests.
#   HS_BIN    the heapscope binary under test
#   HS_SRC    the source tree (fixtures in $HS_SRC/tests/data)
#   HS_BUILD  the build directory (test targets, the preload library)

: "${HS_SRC:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${HS_BUILD:=$HS_SRC/build}"
: "${HS_BIN:=$HS_BUILD/heapscope}"
DATA="$HS_SRC/tests/data"

bats_require_minimum_version 1.5.0

# hs ARGS...: run heapscope under bats' `run`, stdout and stderr apart.
hs() {
	run --separate-stderr "$HS_BIN" "$@"
}

# golden FILE: compare $output with a golden file; HS_UPDATE_GOLDEN=1
# rewrites the golden file instead.
golden() {
	if [ -n "${HS_UPDATE_GOLDEN:-}" ]; then
		printf '%s\n' "$output" > "$1"
		return 0
	fi
	diff -u "$1" <(printf '%s\n' "$output")
}
