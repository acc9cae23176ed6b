#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test.
#
#   scripts/test.sh             the whole suite, in build/ (Release)
#   scripts/test.sh --sanitize  the compiler under ASan + UBSan, in
#                               build-sanitize/: the lit tests of the frontend,
#                               IR, passes, codegen and tools, the unit tests
#                               and the fuzz tests (scripts/sanitize.sh)
#   scripts/test.sh --sanitize-quick   CI's part of that (docs/testing.md)
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
--sanitize | --sanitize-quick) exec scripts/sanitize.sh "$1" ;;
esac

start=$SECONDS
scripts/build.sh
echo "== build: $((SECONDS - start)) s"
cd build
ctest --output-on-failure -j"$(nproc)"
