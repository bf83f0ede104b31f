# Helpers for the tests of `heapscope run` and the trace format: run a
# test target under the collector and compare its trace with the
# allocations the target says it made (tests/targets/target.h).

load helpers

TARGETS="$HS_BUILD/tests/targets"

# In a fresh directory per test: traces are written to the current one.
trace_setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# trace_run ARGS...: heapscope run ARGS, the program's stdout in out.txt,
# all stderr in err.txt, the exit status in $status.
trace_run() {
	status=0
	"$HS_BIN" run "$@" > out.txt 2> err.txt || status=$?
}

# trace_run_limited OPTION VALUE ARGS...: trace_run with heapscope and
# its program under `ulimit OPTION VALUE` (-v: KiB of address space, -f:
# KiB of file size). SIGXFSZ is ignored, so a write past the file size
# limit fails with EFBIG instead of killing the writer.
trace_run_limited() {
	local option=$1 value=$2
	shift 2
	status=0
	bash -c 'trap "" XFSZ; ulimit "$1" "$2" && shift 2 && exec "$@"' \
		trace_run_limited "$option" "$value" "$HS_BIN" run "$@" > out.txt 2> err.txt ||
		status=$?
}

# skip_without_ulimit_v: skip the test when $HS_BIN is a sanitizer build,
# which reserves terabytes of address space: `ulimit -v` cannot apply.
skip_without_ulimit_v() {
	if ldd "$HS_BIN" | grep -q libasan; then
		skip "ulimit -v does not apply to a sanitizer build"
	fi
}

# trace_expect OUT [PATTERN]: the target's expect lines (those matching
# PATTERN), sorted.
trace_expect() {
	grep '^expect ' "$1" | grep -e "${2:-.}" | sort
}

# trace_found OUT TRACE [PATTERN]: the same lines computed from TRACE.
trace_found() {
	"$HS_BIN" dump --events "$2" |
		awk -f "$HS_SRC/tests/integration/trace-check.awk" "$1" - |
		grep -e "${3:-.}" | sort
}

# trace_check OUT TRACE [PATTERN]: the trace holds exactly the expected
# allocations and frees, with their sizes and stacks.
trace_check() {
	local want got
	want=$(trace_expect "$1" "${3:-.}")
	got=$(trace_found "$1" "$2" "${3:-.}")
	[ -n "$want" ] || { echo "no expect lines in $1"; return 1; }
	if [ "$want" != "$got" ]; then
		diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got")
		return 1
	fi
}

# summary_field TRACE NAME: a value from `heapscope dump --summary`.
summary_field() {
	"$HS_BIN" dump --summary "$1" | sed -n "s/^$2: //p"
}

# memtest_traces (in setup_file): in $BATS_FILE_TMPDIR, m.heapscope and
# slow.heapscope, memtest's trace run fast and slow, its output in m.out
# and slow.out.
memtest_traces() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$HS_BIN" run -q -o m.heapscope -- "$TARGETS/memtest" > m.out
	"$HS_BIN" run -q -o slow.heapscope -- "$TARGETS/memtest" slow > slow.out
}

# cell CSV NAME COLUMN: a cell of ByName's CSV (names may hold commas);
# "-" when NAME has no row. NAME ending in '*' is a prefix.
cell() {
	python3 - "$@" <<'PY'
import csv, sys
path, name, col = sys.argv[1], sys.argv[2], sys.argv[3]
rows = list(csv.DictReader(open(path)))
hit = [r for r in rows if r["Name"] == name or
       (name.endswith("*") and r["Name"].startswith(name[:-1]))]
print(hit[0][col] if len(hit) == 1 else "-" if not hit else "ambiguous")
PY
}
