#!/bin/sh
# demo.sh HEAPSCOPE - heapscope's main job on a bundled example: open a
# CPU profile recorded with `perf record -g` / `perf script` and show where
# the time went, first by function (ByName), then as a call tree, and end
# in the web GUI (`heapscope view`).
set -eu
hs=${1:-build/heapscope}
top=$(cd "$(dirname "$0")/.." && pwd)
example="$top/examples/demo-cpu.data.txt"

echo "== heapscope report examples/demo-cpu.data.txt  (ByName: where the time went)"
"$hs" report "$example" --limit 8
echo
echo "== heapscope report examples/demo-cpu.data.txt --view calltree --fold-pct 1"
"$hs" report "$example" --view calltree --fold-pct 1 --depth 6
echo
echo "== heapscope view examples/demo-cpu.data.txt  (the same in the browser; Ctrl-C stops)"
# Only at a terminal: a script running the demo gets its exit status.
if [ -t 0 ] && [ -t 1 ] && [ -z "${HS_DEMO_NO_VIEW:-}" ]; then
	exec "$hs" view "$example"
fi
echo "(not a terminal: skipped)"
