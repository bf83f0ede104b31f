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

# col NAME N CSV: column N of row NAME in a --format csv view (empty: 0)
col() {
	awk -F, -v n="$1" -v c="$2" '$1 == n { v = $c } END { print v == "" ? 0 : v }' "$3"
}

# between V LO HI: whether number V is within [LO, HI] (says which on stdout).
between() {
	echo "$1 within [$2, $3]?"
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'
}

# dotnet_build TARGET: build the .NET program tests/targets/TARGET (its
# Program.cs and .csproj, copied to ./src) into ./out, quietly; its log is
# ./build.log, shown when the build fails. Callers check for dotnet first.
dotnet_build() {
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	mkdir -p src
	cp "$HS_SRC/tests/targets/$1/Program.cs" "$HS_SRC/tests/targets/$1"/*.csproj src/
	dotnet build src -c Release -o out > build.log 2>&1 || { cat build.log; return 1; }
}
