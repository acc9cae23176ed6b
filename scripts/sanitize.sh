#!/usr/bin/env bash
# The compiler under ASan + UBSan, in build-sanitize/ (docs/testing.md, "The
# sanitizer build"). scripts/test.sh --sanitize and --sanitize-quick run it:
#
#   --sanitize        before a release: lit (frontend, ir, passes, codegen,
#                     tools), the unit tests and both fuzz tests
#   --sanitize-quick  CI's part: lit (frontend, passes; not the *-numerics
#                     tests) and 2,000 cases of each fuzz test; builds no unit
#                     tests (the build is what costs)
#
# Every part runs even when one before it failed: a leak in one lit test
# must not hide a crash in the fuzz test. The summary lists each part; the
# exit status is 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:---sanitize}
dir=build-sanitize
lit=/usr/lib/llvm-19/build/utils/lit/lit.py

scripts/setup.sh || exit
if [ ! -f "$dir/build.ninja" ]; then
  cmake -G Ninja -B "$dir" -DCMAKE_BUILD_TYPE=Release -DTCC_SANITIZE=ON . >/dev/null || exit
fi
# tcc-test-tools: every tool the lit tests run (TCC_TEST_DEPENDS).
targets=(tcc-test-tools tcc-fuzz-frontend)
[ "$mode" = --sanitize ] && targets+=(tcc-unit-tests)
start=$SECONDS
cmake --build "$dir" --parallel "$(nproc)" -- "${targets[@]}" || exit
summary=("build: $((SECONDS - start)) s")

# A report ends the process that hit it, with a stack trace, by abort: an
# exit status would be 1, which a test that expects tcc to fail (`not`,
# %exit1) takes for tcc's own. Leaks inside cuDNN and cuBLASLt are
# suppressed, each with its reason (lsan.supp); ours are not. Options set in
# the environment replace these.
asan=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:abort_on_error=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-$asan}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}"
# print_suppressions=0: the count of suppressed leaks, on stderr, would
# fail the tests that want tcc's stderr empty.
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/test/sanitizer/lsan.supp:print_suppressions=0}"

failed=0
part() { # part NAME COMMAND...: runs and times one part, records its result
  local name=$1 start=$SECONDS result=passed
  shift
  echo "== $name"
  "$@" || { result=FAILED; failed=1; }
  summary+=("$name: $result ($((SECONDS - start)) s)")
}

if [ "$mode" = --sanitize-quick ]; then
  # The *-numerics tests build and run trainers, with plain c++: minutes of
  # uninstrumented work (docs/testing.md); the whole run has them.
  part lit python3 "$lit" -sv "$dir/test" --filter '^tcc :: (frontend|passes)/' \
    --filter-out='-numerics\.test$'
  part fuzz ctest --test-dir "$dir" --output-on-failure -L sanitize-quick
else
  part lit python3 "$lit" -sv "$dir/test" --filter '^tcc :: (frontend|ir|passes|codegen|tools)/'
  part unit "$dir/test/unit/tcc-unit-tests" --gtest_brief=1
  part fuzz ctest --test-dir "$dir" --output-on-failure -L fuzz
fi

echo "== $mode in $dir"
printf '   %s\n' "${summary[@]}"
exit "$failed"
