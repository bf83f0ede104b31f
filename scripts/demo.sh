#!/bin/sh
# demo.sh BUILD - heapscope's main job on a bundled example: trace every
# heap allocation of examples/demo-heap.c, then show what it allocated,
# what it leaked and what was live at the peak, and end in the web GUI
# (at a terminal; Ctrl-C stops it).
set -eu
build=${1:-build}
hs="$build/heapscope"
prog="$build/examples/demo-heap"
out=$(mktemp -d "${TMPDIR:-/tmp}/heapscope-demo.XXXXXX")
trace="$out/demo-heap.heapscope"

echo "== heapscope run -- examples/demo-heap"
"$hs" run --no-view -o "$trace" -- "$prog"
echo
echo "== heapscope stats  (the whole run in numbers)"
"$hs" stats "$trace" | sed -n '1,12p'
echo
echo "== heapscope report --source alloc  (which functions allocate: ByName)"
"$hs" report "$trace" --source alloc --limit 6
echo
echo "== heapscope report --source leaks --view calltree  (what was never freed)"
"$hs" report "$trace" --source leaks --view calltree --fold-pct 1 --depth 10
echo
echo "== heapscope report --source peak  (what was live when the heap peaked)"
"$hs" report "$trace" --source peak --limit 4
echo
echo "The trace is $trace."
# Only at a terminal: a script running the demo gets its exit status.
if [ -t 0 ] && [ -t 1 ] && [ -z "${HS_DEMO_NO_VIEW:-}" ]; then
	echo "== heapscope view  (the same in the browser; Ctrl-C stops)"
	exec "$hs" view "$trace"
fi
