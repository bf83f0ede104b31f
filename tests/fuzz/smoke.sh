#!/bin/sh
# smoke.sh - the fuzz smoke test that `make check` runs for each target
# (tests/fuzz/meson.build registers one per target, suite "fuzz").
#
#   smoke.sh TARGET SEEDS WORK
#
# 1. Replays every seed of SEEDS (tests/fuzz/corpus/NAME/) once: the
#    committed corpus, crash regressions included, must pass as it is.
# 2. Fuzzes for HS_FUZZ_SECONDS seconds (15) from SEEDS, keeping what it
#    finds in WORK/new and any crash, leak or timeout input in WORK/ as
#    crash-*, leak-*, timeout-* or slow-unit-* (reproduce with
#    `TARGET WORK/crash-...`).
# Exit status: 0 when nothing failed, else 1 (libFuzzer's own 77 would
# read as "skipped" to meson).
set -eu
TARGET=$1
SEEDS=$2
WORK=$3
SECONDS_TO_RUN=${HS_FUZZ_SECONDS:-15}

rm -rf "$WORK"
mkdir -p "$WORK/new"
OPTS="-timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix=$WORK/"
fail() {
	echo "smoke.sh: $TARGET failed $1; inputs that failed are in $WORK/" >&2
	exit 1
}
# libFuzzer runs the files it is given once each and stops
# shellcheck disable=SC2086
"$TARGET" $OPTS "$SEEDS"/* || fail "on its seeds"
# then mutates; new inputs go to the first directory, never to SEEDS
# shellcheck disable=SC2086
"$TARGET" $OPTS -max_total_time="$SECONDS_TO_RUN" \
	-max_len=16384 -close_fd_mask=1 -print_final_stats=1 \
	"$WORK/new" "$SEEDS" || fail "while fuzzing"
