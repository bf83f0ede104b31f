# allocs.sh - sourced by the .NET benches (run.sh, record.sh): build
# tests/targets/dotnet, whose allocations are known, into DIR/out.
#
#   build_allocs SRC DIR     SRC: the source tree; exits with the build's log
build_allocs() {
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	mkdir -p "$2/src"
	cp "$1"/tests/targets/dotnet/Program.cs "$1"/tests/targets/dotnet/allocs.csproj "$2/src/"
	dotnet build "$2/src" -c Release -o "$2/out" > "$2/build.log" 2>&1 ||
		{ cat "$2/build.log"; exit 1; }
}
