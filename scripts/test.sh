#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test.
#
#   scripts/test.sh             the whole suite, in build/ (Release)
#   scripts/test.sh --sanitize  the compiler under ASan + UBSan, in
#                               build-sanitize/: the lit tests of the frontend,
#                               IR, passes, codegen and tools, the unit tests
#                               and the fuzz test (docs/testing.md)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--sanitize" ]; then
  scripts/setup.sh
  dir=build-sanitize
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -G Ninja -B "$dir" -DCMAKE_BUILD_TYPE=Release -DTCC_SANITIZE=ON . >/dev/null
  fi
  cmake --build "$dir" --parallel "$(nproc)" -- tcc tcc-opt tcc-unit-tests tcc-fuzz-frontend
  # Stop at the first report, with a stack trace. Leaks are reported too.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv "$dir/test" \
    --filter '^tcc :: (frontend|ir|passes|codegen|tools)/'
  "$dir/test/unit/tcc-unit-tests" --gtest_brief=1
  ctest --test-dir "$dir" --output-on-failure -L fuzz
  exit 0
fi

scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
