#!/bin/sh
# npm-deps.sh - install the front-end packages of package-lock.json into
# node_modules (uPlot, embedded into the binary; playwright-core, for the
# browser tests; speedscope, whose built files load heapscope's speedscope
# export in tests/browser/speedscope.test.mjs). Idempotent: does nothing when node_modules already
# matches the lock file. Never downloads a browser: the tests drive
# Debian's chromium.
set -eu
cd "$(dirname "$0")/.."
stamp=node_modules/.heapscope-npm-ok
if [ -f "$stamp" ] && [ "$stamp" -nt package-lock.json ] && [ "$stamp" -nt package.json ]; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "npm-deps: npm is missing (scripts/install-deps.sh installs it)" >&2
	exit 1
fi
echo "npm-deps: npm ci (uplot, playwright-core, speedscope)" >&2
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund \
	--loglevel=error >/dev/null
touch "$stamp"
