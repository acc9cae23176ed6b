#!/usr/bin/env bash
# The benchmark on a GPU machine, one command (bench/bench.py; docs/performance.md,
# "The benchmark"). Prepared beforehand where tcc is:
#   bench/bench.py prepare bench-gpu --gpu h200     # the trainers, timed tcc compiles
# then on the GPU machine, from the repository root, with bench-gpu carried:
#   bench/run.sh bench-gpu [--epochs N] [--only MODEL...] [--rows ROW...] [--budget S]
# It prints the table and writes it as JSON (bench-gpu/results.json,
# bench/results/DATE-GPU.json, $OUT/bench-results.json) and a PNG chart.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/run.sh DIR [options of bench.py run]}
shift
export PYTHONUNBUFFERED=1
exec python3 bench/bench.py run "$dir" "$@"
