#!/usr/bin/env bash
# Issue 36's benchmark as one device command (docs/performance.md, "The
# next GPU session"): every tcc and eager PyTorch row of the examples
# with their profiles, then the torch.compile(max-autotune) rows in the time
# left. Prepared here, where tcc is:
#   bench/bench.py prepare bench-gpu --gpu h100
# then on the device, from the repository root, with bench-gpu carried:
#   scripts/gpu-bench-session.sh [SECONDS]      # default 540
# Everything lands in $OUT (or ./gpu-out): env.txt, bench.log and
# bench-results.json (the first part), c/compile.log and
# c/bench-results.json (the compile rows), runs.tgz (every row's metrics,
# profiles and JSON).
set -uo pipefail
total=${1:-540}
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out/c"
export PYTHONUNBUFFERED=1
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
"cuDNN", torch.backends.cudnn.version())'
  nproc
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
start=$SECONDS
# About half the time: the rows that need no compilation, the examples'
# own precision first.
first=$((total * 55 / 100))
OUT=$out timeout "$first" bench/run.sh bench-gpu --profile --budget $((first - 45)) \
  --run-timeout 80 --rows tcc-fp16 tcc-bf16 pytorch-eager-fp16 pytorch-eager \
  pytorch-eager-fp16-nchw > "$out/bench.log" 2>&1
echo "bench: exit $? after $((SECONDS - start)) s"
grep -v '^|' "$out/bench.log" | tail -20
# The rest: torch.compile's max-autotune rows (each compiles for minutes).
left=$((total - (SECONDS - start) - 15))
OUT=$out/c timeout "$left" bench/run.sh bench-gpu --profile --budget $((left / 2)) \
  --run-timeout "$left" --rows torch-compile-fp16 torch-compile > "$out/c/compile.log" 2>&1
echo "compile rows: exit $? after $((SECONDS - start)) s"
tail -8 "$out/c/compile.log"
tar czf "$out/runs.tgz" bench-gpu/runs 2>/dev/null
exit 0
