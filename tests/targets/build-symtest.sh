#!/bin/sh
# build-symtest.sh CC CXX SRCDIR OUTDIR - the symbolizer's test inputs.
#
# Built outside Meson's build type (always -O2 -g, never sanitized) so the
# inline frames and lines the tests expect do not depend on the build:
#   libsymtest.so           -O2 -g, the library the tests dlopen()
#   libsymtest-stripped.so  the same, stripped, .gnu_debuglink -> libsymtest.debug
#   libsymtest.debug        its separate debug file (objcopy --only-keep-debug)
#   libsymtest-gz.so        -O2 -g with zlib-compressed debug sections
#   libsymtest-other.so     another build of the source (other build id)
#   libsymtest-cxx.so       C++ names (empty file when CXX is "none")
set -eu
cc=$1 cxx=$2 src=$3 out=$4
flags="-O2 -g -fPIC -shared -Wl,--build-id=sha1 -I$src"

$cc $flags -o "$out/libsymtest.so" "$src/symtest.c"
objcopy --only-keep-debug "$out/libsymtest.so" "$out/libsymtest.debug"
strip --strip-all -o "$out/libsymtest-stripped.so.tmp" "$out/libsymtest.so"
objcopy --add-gnu-debuglink="$out/libsymtest.debug" \
	"$out/libsymtest-stripped.so.tmp" "$out/libsymtest-stripped.so"
rm -f "$out/libsymtest-stripped.so.tmp"
$cc $flags -gz=zlib -o "$out/libsymtest-gz.so" "$src/symtest.c"
$cc $flags -DHS_SYMTEST_OTHER -o "$out/libsymtest-other.so" "$src/symtest.c"
if [ "$cxx" != none ]; then
	$cxx $flags -o "$out/libsymtest-cxx.so" "$src/symtest_cxx.cc"
else
	: > "$out/libsymtest-cxx.so"
fi
