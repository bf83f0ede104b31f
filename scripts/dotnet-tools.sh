#!/bin/sh
# dotnet-tools.sh - install the .NET diagnostic tools the .NET tests
# compare heapscope against (dotnet-trace, dotnet-gcdump), where the .NET
# SDK is installed. Idempotent; silent when nothing is missing. Without
# `dotnet` there is nothing to do: those tests skip and say why.
#
# The tools go where `dotnet tool install -g` puts them
# ($HOME/.dotnet/tools), which the tests look in beside PATH.
set -eu

command -v dotnet >/dev/null 2>&1 || exit 0
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
TOOLS="dotnet-trace dotnet-gcdump"
VERSION=10.0.750501

installed=$(dotnet tool list -g 2>/dev/null || true)
for t in $TOOLS; do
	if printf '%s\n' "$installed" | grep -qi "^$t "; then
		continue
	fi
	echo "dotnet-tools: installing $t $VERSION" >&2
	if ! dotnet tool install -g "$t" --version "$VERSION" >/dev/null; then
		# a test that needs it skips with its message; the rest runs
		echo "dotnet-tools: could not install $t; the tests that compare with it skip" >&2
	fi
done
exit 0
