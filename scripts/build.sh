#!/usr/bin/env bash
# Configures and builds tcc into build/ (Release). Extra arguments are targets.
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/setup.sh"
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -B build -DCMAKE_BUILD_TYPE=Release . >/dev/null
fi
jobs=$(nproc)
cmake --build build --parallel "$jobs" -- "$@"
