#!/bin/sh
# fuzz.sh - fuzz the trace reader with libFuzzer for a while.
#
#   tests/fuzz/fuzz.sh [SECONDS [BUILD]]       (60, build)
#
# Builds tests/fuzz/fuzz_trace.c with clang (-fsanitize=fuzzer,address,
# undefined) into BUILD/fuzz/, seeds the corpus with traces of the test
# targets (made with BUILD/heapscope run), cut and flipped copies of them,
# and runs the fuzzer for SECONDS. Crashes are left in BUILD/fuzz/ as
# crash-* files; the exit status is the fuzzer's.
set -eu
SECONDS_TO_RUN=${1:-60}
BUILD=${2:-build}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$BUILD/fuzz"
mkdir -p "$OUT/corpus"

command -v clang >/dev/null || { echo "fuzz.sh: clang is needed" >&2; exit 1; }
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=c11 -D_GNU_SOURCE -I"$SRC/src" \
	"$SRC/tests/fuzz/fuzz_trace.c" \
	"$SRC"/src/format/*.c \
	"$SRC"/src/io/import_heapscope.c "$SRC"/src/analysis/*.c \
	"$SRC"/src/model/stack_source.c "$SRC"/src/common/*.c \
	-lzstd -ljansson -lpcre2-8 -lpthread -lm -o "$OUT/fuzz_trace"

# seeds: whole traces of the targets, and damaged copies
T="$BUILD/tests/targets"
for args in "sites" "threads 50" "crasher exit7" "dlopener $T/libhsdlib.so" \
	"churn 4 4 50"; do
	name=$(echo "$args" | cut -d' ' -f1)
	rm -f "$OUT/corpus/$name.heapscope"
	# shellcheck disable=SC2086
	"$BUILD/heapscope" run -q -o "$OUT/corpus/$name.heapscope" -- "$T"/$args > /dev/null || true
	size=$(stat -c %s "$OUT/corpus/$name.heapscope")
	head -c $((size / 2)) "$OUT/corpus/$name.heapscope" > "$OUT/corpus/$name.half"
done
# payload seeds: the records of a trace's chunks, decompressed (the
# fuzzer wraps inputs in a stored chunk itself)
"$BUILD/heapscope" run -q -o "$OUT/raw.heapscope" -- "$T/sites" > /dev/null
off=16
n=0
size=$(stat -c %s "$OUT/raw.heapscope")
while [ $((off + 24)) -le "$size" ]; do
	stored=$(od -An -tu4 -j $((off + 8)) -N4 "$OUT/raw.heapscope" | tr -d ' ')
	flags=$(od -An -tu1 -j $((off + 5)) -N1 "$OUT/raw.heapscope" | tr -d ' ')
	tail -c +$((off + 25)) "$OUT/raw.heapscope" | head -c "$stored" > "$OUT/chunk"
	if [ "$flags" = 1 ]; then
		zstd -q -d -c "$OUT/chunk" > "$OUT/corpus/payload$n" 2>/dev/null || true
	else
		cp "$OUT/chunk" "$OUT/corpus/payload$n"
	fi
	off=$((off + 24 + stored))
	n=$((n + 1))
done
rm -f "$OUT/chunk" rm -f "$OUT/raw.heapscope"

"$OUT/fuzz_trace" -max_total_time="$SECONDS_TO_RUN" -max_len=65536 \
	-artifact_prefix="$OUT/" "$OUT/corpus"
