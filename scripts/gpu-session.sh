#!/usr/bin/env bash
# The GPU checks of a session with a lent GPU machine, as one command there
# (docs/cuda.md, "Checking on a GPU"). Prepared here, where tcc is:
#   apt-get install -y ccache   # optional: the build in ~5 minutes instead of ~35
#   scripts/gpu-check.sh prepare gpu-trees --gpu h200 --with-tuner
#   scripts/gpu-check.sh build gpu-trees
#   bench/bench.py prepare bench-gpu --gpu h200   # optional: the benchmark too
# then on the device, from the repository root, with gpu-trees (and bench-gpu) carried:
#   scripts/gpu-session.sh BUDGET_SECONDS
# It writes into $OUT (or ./gpu-out): env.txt (GPU, driver, versions),
# description.json (cuDNN's description of the GPU, to check tcc's built-in
# one against), gpu-check.json and .log, tuning.json and tune.log, and with
# bench-gpu the benchmark's bench-results.json, bench.log and bench.png
# (BENCH_SECONDS, default 240, and BENCH_ARGS, e.g. "--only airbench94").
set -uo pipefail
budget=${1:-250}
out=${OUT:-gpu-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
site=$(python3 -c 'import site; print(site.getsitepackages()[0])')
export LD_LIBRARY_PATH=$site/nvidia/cudnn/lib:$site/nvidia/cu13/lib:$site/nvidia/nccl/lib:${LD_LIBRARY_PATH:-}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version(), "CUDA", torch.version.cuda)'
  ldd --version | head -1
  lscpu | grep -E 'Model name|^CPU\(s\)'
} 2>&1 | tee "$out/env.txt"
[ -x gpu-trees/tune/tcc-tune ] && gpu-trees/tune/tcc-tune --describe > "$out/description.json" 2>&1
python3 scripts/gpu_check.py run gpu-trees --budget "$budget" --pytorch --run-timeout 90 \
  --out "$out/gpu-check.json" 2>&1 | tee "$out/gpu-check.log"
status=$?
if [ -x gpu-trees/tune/tcc-tune ]; then
  plans=$(ls gpu-trees/tune/*.json)
  timeout "${TUNE_SECONDS:-110}" gpu-trees/tune/tcc-tune $plans --max-candidates 12 \
    -o "$out/tuning.json" 2>&1 | tee "$out/tune.log"
fi
if [ -d bench-gpu ]; then
  # shellcheck disable=SC2086
  bench/run.sh bench-gpu --budget "${BENCH_SECONDS:-240}" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log"
fi
exit $status
