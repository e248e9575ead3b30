#!/usr/bin/env bash
# scripts/build.sh [release|asan|tsan|fuzz] [ninja targets...]
#   release  build/       Release, tests and benchmarks          (default)
#   asan     build-asan/  Debug, AddressSanitizer + UBSan, tests
#   tsan     build-tsan/  Debug at -O1, ThreadSanitizer; by default only what
#                         the threaded tests need (scripts/test.sh)
#   fuzz     build-fuzz/  clang, libFuzzer targets only (target fuzz_targets)
# TW_BUILD_ROOT moves the build folders elsewhere (default: the repo root).
# Keeps going past a failing target (ninja -k 0) so every module that does
# build can still be tested, but exits non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_ROOT=${TW_BUILD_ROOT:-$ROOT}
MODE=${1:-release}
shift || true

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
# One cache serves every checkout on this machine (a clean clone in CI, a
# worktree, this folder): paths under the repository enter the cache's keys
# relative to it, and the build folder's own path stays out of the key of
# objects with debug information (their DW_AT_comp_dir may then name another
# checkout's build folder; gdb finds the sources through the relative paths).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
JOBS=$(nproc)

case "$MODE" in
  release)
    DIR=$BUILD_ROOT/build
    CONFIG=(-DCMAKE_BUILD_TYPE=Release)
    ;;
  asan)
    DIR=$BUILD_ROOT/build-asan
    CONFIG=(-DCMAKE_BUILD_TYPE=Debug -DTW_SANITIZE=ON -DTW_BENCH=OFF)
    ;;
  tsan)
    DIR=$BUILD_ROOT/build-tsan
    # Debug keeps the ownership checks (base/owner_thread.h) on while real
    # threads run; -O1 because ThreadSanitizer at -O0 makes the tiered
    # integration tests several times slower.
    CONFIG=(-DCMAKE_BUILD_TYPE=Debug -DTW_TSAN=ON -DTW_BENCH=OFF "-DCMAKE_CXX_FLAGS_DEBUG=-g -O1")
    # The integration suite (it depends on tickwired and tickwire), the
    # rings and links between the tiers, the seqlock and ownership tests, and
    # the HA election (its own thread).
    (($# > 0)) || set -- integration_test tier_test base_test ha_test
    ;;
  fuzz)
    DIR=$BUILD_ROOT/build-fuzz
    # The libraries are instrumented for coverage (fuzzer-no-link); each fuzz
    # target links the libFuzzer driver itself (fuzz/CMakeLists.txt).
    CONFIG=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTW_FUZZ=ON -DTW_TESTS=OFF -DTW_BENCH=OFF
            -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
            "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer")
    (($# > 0)) || set -- fuzz_targets
    ;;
  *)
    echo "usage: $0 [release|asan|tsan|fuzz] [ninja targets...]" >&2
    exit 2
    ;;
esac

echo "build: $MODE -> $DIR (-j$JOBS)"
mkdir -p "$DIR"
cmake -S "$ROOT" -B "$DIR" -G Ninja "${CONFIG[@]}" >"$DIR/configure.log" 2>&1 || {
  cat "$DIR/configure.log" >&2
  echo "build: configure failed ($MODE)" >&2
  exit 1
}
ninja -C "$DIR" -j "$JOBS" -k 0 "$@"
