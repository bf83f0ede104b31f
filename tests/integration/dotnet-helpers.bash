# dotnet-helpers.bash - what the .NET recording tests (t8010 attach, t8011
# run) share: building tests/targets/dotnet once per file, skipping where
# the .NET SDK is missing, and checking a recording's gc-alloc against the
# totals the program measured itself.
load helpers


setup_file() {
	command -v dotnet > /dev/null || return 0
	cd "$BATS_FILE_TMPDIR" || return 1
	dotnet_build dotnet || return 1
}

setup() {
	command -v dotnet > /dev/null ||
		skip "dotnet (the .NET SDK) is not installed: the .NET recording tests need it"
	cd "$BATS_FILE_TMPDIR" || return 1
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
}

# truth KEY FILE: what the program measured itself
truth() {
	awk -v k="$1" '$1 == k { print $2 }' "$2"
}

# near NAME CSV BYTES: NAME's inclusive bytes within two ticks of BYTES
near() {
	between "$(col "$1" 6 "$2")" "$(($3 - 212992))" "$(($3 + 212992))"
}

# the gc-alloc checks of a recording FILE against the truth TRUTH
check_gc_alloc() {
	"$HS_BIN" report "$1" --view byname --format csv > "$1.csv"
	near "Type Allocs.Foo" "$1.csv" "$(truth foo_bytes "$2")"
	near "LargeObject" "$1.csv" "$(truth array_bytes "$2")"
	[ "$(col LargeObject 7 "$1.csv")" = "$(truth array_count "$2")" ]
	near "allocs!Allocs.Program.AllocateFoos(int32)" "$1.csv" "$(truth foo_bytes "$2")"
	near "allocs!Allocs.Program.AllocateLargeArrays(int32)" "$1.csv" \
		"$(truth array_bytes "$2")"
}
