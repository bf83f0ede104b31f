#!/bin/sh
# agree.sh - heapscope's and heaptrack's numbers for the same real programs:
# allocations, frees, leaked bytes (blocks) and the peak of heap in use,
# exact (from both tools' data files, not heaptrack_print's rounded text).
#
#   bench/memviews/agree.sh [BUILD]   (build)
#
# Two deterministic programs: sqlite3 building an indexed table in memory,
# and python3 (the interpreter's ELF file, Debian's when installed;
# PYTHONMALLOC=malloc, PYTHONHASHSEED=0) building a dict of 200k entries. Every run is under
# `setarch -R` (no address randomisation: Python's layout depends on
# addresses). Each program is traced:
#   1. by each tool alone, `heapscope run` and `heaptrack`: two runs;
#   2. by both at once, on one run: heaptrack's library preloaded first
#      (as its script does), heapscope's after it, each tool writing its
#      own file. Each then also sees the allocations the other makes for
#      itself; they are left out by stack (totals.py): heaptrack's
#      allocations with a frame in heapscope's library (heapscope's
#      start-up), heapscope's with a frame of heaptrack's library other
#      than the innermost (heaptrack's own data; the innermost is
#      heaptrack's malloc passing the program's call on).
# heaptrack's numbers are given whole and without the allocations made in
# _dl_init (shared libraries' constructors, before heapscope's collector
# has started: docs/memory.md). heapscope's are `heapscope stats`; in the
# shared run, totals.py's count from `heapscope dump --events`.
set -eu
BUILD=${1:-build}
HS="$BUILD/heapscope"
HS_LIB="$(cd "$BUILD" && pwd)/libheapscope-preload.so"
TOTALS="$(dirname "$0")/totals.py"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hs-agree.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

for tool in heaptrack python3 sqlite3 zstd setarch; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench/memviews: '$tool' is missing (scripts/install-deps.sh --bench)" >&2
		exit 1
	}
done
HT_DIR=$(dirname "$(readlink -f "$(command -v heaptrack)")")/../lib/heaptrack
HT_LIB="$HT_DIR/libheaptrack_preload.so"
HT_INTERPRET="$HT_DIR/libexec/heaptrack_interpret"
[ -f "$HT_LIB" ] && [ -x "$HT_INTERPRET" ] || {
	echo "bench/memviews: heaptrack's library or interpreter not found in $HT_DIR" >&2
	exit 1
}
# the interpreter itself, Debian's python3 when there is one: a python3 on
# PATH may be a shell script (a pyenv shim), and then both tools would
# trace the shell until its exec
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(python3 -c 'import sys; print(sys.executable)')
PY=$(readlink -f "$PY")
[ "$(head -c 4 "$PY" | od -An -c | tr -d ' ')" = '177ELF' ] || {
	echo "bench/memviews: $PY is not an ELF file" >&2
	exit 1
}

cat > "$DIR/dicts.py" <<'EOF'
d = {}
for i in range(200000):
    d['key%d' % i] = {'n': i, 's': str(i), 'l': [i, i + 1]}
keep = [d[k] for k in list(d)[:1000]]
t = sorted(d, key=lambda k: d[k]['n'] % 1000)
print(len(t))
EOF
cat > "$DIR/table.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
INSERT INTO t SELECT x, x % 1000, hex(x) FROM c;
CREATE INDEX t_a ON t(a);
SELECT count(*), sum(a) FROM t WHERE a < 500;
EOF
export PYTHONMALLOC=malloc PYTHONHASHSEED=0

# row PROGRAM RUN WHO JSON: one table row from totals.py's or stats' JSON
row() {
	python3 - "$@" <<'EOF'
import json, sys
prog, run, who, j = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if "total_allocations" in j:        # heapscope stats --format json
    j = {"allocations": j["total_allocations"], "frees": j["total_frees"],
         "leaked_bytes": j["leaked_bytes"] + j["suppressed_leaked_bytes"],
         "leaked_blocks": j["leaked_blocks"] + j["suppressed_leaked_blocks"],
         "peak_bytes": j["peak_heap_bytes"]}
print("| %s | %s | %s | %d | %d | %d (%d) | %d |" % (
    prog, run, who, j["allocations"], j["frees"], j["leaked_bytes"],
    j["leaked_blocks"], j["peak_bytes"]))
EOF
}

# part JSON KEY: a part of totals.py's heaptrack JSON
part() {
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(json.dumps(j[sys.argv[2]] if sys.argv[2] != "all" else j))' "$1" "$2"
}

echo "| program | run | numbers of | allocations | frees | leaked bytes (blocks) | peak heap bytes |"
echo "|---|---|---|---|---|---|---|"
for name in ${AGREE_PROGRAMS:-sqlite3 python3}; do
	if [ "$name" = sqlite3 ]; then
		set -- sqlite3 :memory: -init "$DIR/table.sql" .quit
	else
		set -- "$PY" "$DIR/dicts.py"
	fi
	rm -rf "$DIR/out"
	mkdir "$DIR/out"
	# 1. each tool alone
	setarch -R "$HS" run -q --no-view -o "$DIR/out/alone.heapscope" -- "$@" > /dev/null
	setarch -R heaptrack -o "$DIR/out/alone" "$@" > /dev/null 2>&1
	ht=$(python3 "$TOTALS" heaptrack "$DIR/out/alone.zst")
	row "$name" alone heaptrack "$(part "$ht" all)"
	row "$name" alone "heaptrack after start-up" "$(part "$ht" after_startup)"
	row "$name" alone "heapscope stats" "$("$HS" stats --format json "$DIR/out/alone.heapscope")"
	# 2. both on one run
	mkfifo "$DIR/out/fifo"
	"$HT_INTERPRET" < "$DIR/out/fifo" | zstd -q > "$DIR/out/both.zst" &
	: > "$DIR/out/both.heapscope"
	setarch -R env LD_PRELOAD="$HT_LIB:$HS_LIB" DUMP_HEAPTRACK_OUTPUT="$DIR/out/fifo" \
		HEAPSCOPE_OUTPUT="$DIR/out/both.heapscope" "$@" > /dev/null
	wait
	ht=$(python3 "$TOTALS" heaptrack "$DIR/out/both.zst" --without libheapscope-preload)
	row "$name" shared "heaptrack, less heapscope's own" "$(part "$ht" all)"
	row "$name" shared "heaptrack after start-up, less heapscope's own" \
		"$(part "$ht" after_startup)"
	row "$name" shared "heapscope, less heaptrack's own" \
		"$(python3 "$TOTALS" heapscope "$HS" "$DIR/out/both.heapscope" \
			--without-inner libheaptrack_preload)"
	row "$name" shared "heapscope stats (all)" \
		"$("$HS" stats --format json "$DIR/out/both.heapscope")"
done
echo
echo "Where the numbers differ and why: docs/memory.md (compared with heaptrack)."
