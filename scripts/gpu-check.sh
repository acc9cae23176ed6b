#!/usr/bin/env bash
# The cuda trainers checked on a GPU against the cpu trainers, in two steps:
#   scripts/gpu-check.sh prepare DIR [--gpu h100]   # where tcc is built (MLIR)
#   scripts/gpu-check.sh run DIR                    # on the GPU machine
# scripts/gpu_check.py says what is checked; docs/cuda.md how to run it.
set -euo pipefail
exec python3 "$(dirname "$0")/gpu_check.py" "$@"
