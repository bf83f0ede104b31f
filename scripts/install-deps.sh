#!/bin/sh
# install-deps.sh - install the Debian packages heapscope builds and tests
# with, if any is missing. Idempotent; silent when nothing is missing.
#
#   scripts/install-deps.sh          build and test dependencies
#   scripts/install-deps.sh --bench  also what bench/ compares against
#
# protobuf-c and zlib write pprof profiles; golang-go's `go tool pprof`
# (about 63 MB to download) checks them in t1403-convert-pprof.bats.
# rustc (Debian's, 1.63) builds the Rust program of t5210-fold-rust.bats,
# which checks the heap views' Rust fold rules on real compiler output.
# clang and its runtime (libclang-rt-14-dev: libFuzzer and the sanitizers)
# build the fuzz targets that `make check` runs (tests/fuzz/README.md);
# clang-format checks that src/ is formatted (scripts/check-format.sh).
set -eu

PACKAGES="gcc make pkg-config meson ninja-build
libxxhash-dev libzstd-dev libzip-dev libexpat1-dev libyajl-dev libjansson-dev
libpcre2-dev libunwind-dev libdw-dev libelf-dev libdebuginfod-dev libiberty-dev
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go rustc
binutils g++ libcmocka-dev bats python3
linux-perf procps
libmicrohttpd-dev curl jq chromium
clang libclang-rt-14-dev clang-format"
if [ "${1:-}" = "--bench" ]; then
	PACKAGES="$PACKAGES heaptrack sqlite3 time"
fi

# The GUI's front-end packages come from npm (scripts/npm-deps.sh); a
# node already installed is used, else Debian's nodejs and npm.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	PACKAGES="$PACKAGES nodejs npm"
fi

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "install-deps: missing packages:$missing" >&2
		echo "install-deps: run this script as root to install them" >&2
		exit 1
	fi
else
	SUDO=
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
