#!/bin/sh
# fuzz.sh - fuzz one target (or all) for longer than `make check` does.
#
#   tests/fuzz/fuzz.sh [TARGET|all [SECONDS [LIBFUZZER OPTIONS...]]]
#                                              (fuzz_trace, 600)
#
# Configures and builds the fuzz build (FUZZ_BUILD, default build-fuzz:
# clang, libFuzzer, ASan+UBSan; `make` does the configuring) and runs
# TARGET for SECONDS from the committed seeds (tests/fuzz/corpus/TARGET/)
# plus what earlier runs found (FUZZ_BUILD/corpus/TARGET/, kept between
# runs). Crash, leak and timeout inputs are left in FUZZ_BUILD/crashes/ as
# TARGET-crash-*, ...; `FUZZ_BUILD/tests/fuzz/TARGET FILE` replays one.
# The exit status is the last fuzzer's. tests/fuzz/README.md says what to
# do with a crash.
set -eu
TARGET=${1:-fuzz_trace}
SECONDS_TO_RUN=${2:-600}
[ $# -gt 2 ] && shift 2 || set --
SRC=$(cd "$(dirname "$0")/../.." && pwd)
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
case "$FUZZ_BUILD" in
/*) ;;
*) FUZZ_BUILD="$SRC/$FUZZ_BUILD" ;;
esac

if [ "$TARGET" = all ]; then
	targets=$(cd "$SRC/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//' | grep -v '^fuzz_util$')
else
	[ -f "$SRC/tests/fuzz/$TARGET.c" ] || {
		echo "fuzz.sh: no target $TARGET (tests/fuzz/fuzz_*.c)" >&2
		exit 2
	}
	targets=$TARGET
fi

make -s -C "$SRC" FUZZ_BUILD="$FUZZ_BUILD" "$FUZZ_BUILD/build.ninja"
for t in $targets; do
	ninja -C "$FUZZ_BUILD" "tests/fuzz/$t" >/dev/null
done
mkdir -p "$FUZZ_BUILD/crashes"
rc=0
for t in $targets; do
	mkdir -p "$FUZZ_BUILD/corpus/$t"
	echo "fuzz.sh: $t for $SECONDS_TO_RUN s" >&2
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	"$FUZZ_BUILD/tests/fuzz/$t" -max_total_time="$SECONDS_TO_RUN" \
		-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$FUZZ_BUILD/crashes/$t-" "$@" \
		"$FUZZ_BUILD/corpus/$t" "$SRC/tests/fuzz/corpus/$t" || rc=$?
done
exit "$rc"
