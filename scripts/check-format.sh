#!/bin/sh
# check-format.sh - fail when a C file under src/ is not as clang-format
# (the project's .clang-format) would write it. `make check` runs it as
# the lint test 'format'; `scripts/check-format.sh --fix` rewrites the
# files in place instead.
#
#   scripts/check-format.sh [--fix] [SRCDIR]
set -eu
fix=0
if [ "${1:-}" = "--fix" ]; then
	fix=1
	shift
fi
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top"
command -v clang-format >/dev/null 2>&1 || {
	echo "check-format: clang-format is missing (scripts/install-deps.sh installs it)" >&2
	exit 1
}
files=$(find src -name '*.[ch]' | LC_ALL=C sort)
if [ "$fix" = 1 ]; then
	# shellcheck disable=SC2086
	clang-format -i --style=file $files
	exit 0
fi
bad=0
for f in $files; do
	if ! clang-format --style=file "$f" | cmp -s - "$f"; then
		echo "check-format: $f is not formatted (scripts/check-format.sh --fix)" >&2
		bad=$((bad + 1))
	fi
done
if [ "$bad" -gt 0 ]; then
	echo "check-format: $bad file(s) differ from .clang-format" >&2
	exit 1
fi
echo "check-format: $(echo "$files" | wc -l) files formatted"
