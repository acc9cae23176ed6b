#!/usr/bin/env bash
# The GPU checks of a session with a lent GPU machine, as one command there
# (docs/cuda.md, "Checking on a GPU"). Prepared here, where tcc is:
#   apt-get install -y ccache   # optional: the build in ~5 minutes instead of ~35
#   scripts/gpu-check.sh prepare gpu-trees --gpu h200 --with-tuner
#   scripts/gpu-check.sh build gpu-trees
#   bench/bench.py prepare bench-gpu --gpu h200   # optional: the benchmark too
#   # optional: a second set of trees to profile side by side, e.g. a pass off
#   scripts/gpu-check.sh prepare gpu-compare --gpu h200 --only airbench94-bf16-mixed \
#       --cuda-flag=--disable-pass=channels-last
#   scripts/gpu-check.sh build gpu-compare
# then on the device, from the repository root, with those folders carried:
#   scripts/gpu-session.sh
# Every step has its own time limit, so that the whole stays within one
# device command (10 minutes) and a slow step cannot starve the next; the
# most telling first. It writes into ./gpu-out, packed after every step as
# $OUT/gpu-session.tgz (the device tool brings back only a few files per
# command: one archive loses none): env.txt (GPU,
# driver, versions), description.json (cuDNN's description of the GPU),
# profile.json/.log (the examples: cuda vs cpu, timed epochs, per-op
# profile), compare.json/.log (gpu-compare's profile), bench-results.json,
# bench.log and bench.png, check.json/.log (the other models: cuda vs cpu,
# repeat and resume, compute-sanitizer), import-torch2.json (tcc import under
# the machine's PyTorch), sdpa-probe.log (cuDNN's fused attention on the GPU),
# dgrad-dbn-probe.log (cuDNN's dgrad + drelu + dbn_weight on the GPU),
# tuning.json and tune.log.
# Seconds per step: PROFILE_SECONDS (200), COMPARE_SECONDS (60),
# BENCH_SECONDS (150), CHECK_SECONDS (80), IMPORT_SECONDS (40), SDPA_SECONDS
# (40), DGRAD_DBN_SECONDS (40), TUNE_SECONDS (90); BENCH_ARGS
# (default: two epochs, no torch.compile row).
set -uo pipefail
out=gpu-out
rm -rf "$out"
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
[ -x gpu-trees/tune/tcc-tune ] && timeout 30 gpu-trees/tune/tcc-tune --describe > "$out/description.json" 2>&1

# step NAME SECONDS COMMAND...: the command under its limit, its output in $out/NAME.log
step() {
  local name=$1 seconds=$2
  shift 2
  echo "== $name (at most $seconds s): $*" | tee -a "$out/steps.log"
  local start=$SECONDS
  timeout --kill-after=5 "$seconds" "$@" 2>&1 | tee "$out/$name.log"
  echo "== $name: exit ${PIPESTATUS[0]} after $((SECONDS - start)) s" | tee -a "$out/steps.log"
  pack
}

# $OUT/gpu-session.tgz: what is there so far (after every step: a command cut
# short by the device's limit keeps the steps done), with the per-op
# profiles (each check's report has their summaries only).
pack() {
  for f in gpu-*/runs/*/profile/profile.json; do
    [ -f "$f" ] && cp "$f" "$out/profile-$(echo "$f" | cut -d/ -f1,3 | tr / -).json"
  done
  [ -n "${OUT:-}" ] && tar czf "$OUT/gpu-session.tgz.tmp" "$out" &&
    mv "$OUT/gpu-session.tgz.tmp" "$OUT/gpu-session.tgz"
}

examples="airbench94 airbench94-bf16-mixed resnet9 fashion_cnn"
# Each check's --budget stops new checks 30 s before the step's limit.
p=${PROFILE_SECONDS:-200}
step profile "$p" python3 scripts/gpu_check.py run gpu-trees --only $examples \
  --phases compare,timed,profile --timed-epochs 2 --budget $((p - 30)) --run-timeout 90 \
  --out "$out/profile.json"
if [ -d gpu-compare ]; then
  c=${COMPARE_SECONDS:-60}
  step compare "$c" python3 scripts/gpu_check.py run gpu-compare --phases timed,profile \
    --timed-epochs 2 --budget $((c - 20)) --run-timeout 40 --out "$out/compare.json"
fi
if [ -d bench-gpu ]; then
  b=${BENCH_SECONDS:-150}
  # shellcheck disable=SC2086
  step bench "$b" env OUT="$PWD/$out" bench/run.sh bench-gpu --budget $((b - 40)) --run-timeout 60 \
    ${BENCH_ARGS:---epochs 2 --rows tcc-bf16 pytorch-eager tcc-fp16 tcc-fp32}
fi
k=${CHECK_SECONDS:-80}
step check "$k" python3 scripts/gpu_check.py run gpu-trees --budget $((k - 25)) \
  --only conv_net_fp16 conv_net-bf16-mixed conv_net-bf16 conv_net norm_mlp pool_mlp fashion_mlp \
  --phases compare,repeat,sanitizer --run-timeout 40 --out "$out/check.json"
# tcc import under the machine's PyTorch 2.x: the same model.json bytes as
# with Debian's 1.13 here (issue 39; test/import/expected/).
step import-torch2 "${IMPORT_SECONDS:-40}" python3 test/import/torch_versions.py \
  --json "$out/import-torch2.json"
# cuDNN's engines timed, and CUTLASS's convolutions beside them where
# gpu_check.py prepare built tcc-tune-cutlass (issue 36, docs/tuning.md
# "CUTLASS"): before the probes, as part of the speed issue's measurements.
if [ -x gpu-trees/tune/tcc-tune ]; then
  step tune "${TUNE_SECONDS:-90}" gpu-trees/tune/tcc-tune gpu-trees/tune/*.json \
    --max-candidates 12 -o "$out/tuning.json"
fi
# cuDNN's fused attention on this GPU, where its runtime-compiled engines
# can build (docs/performance.md, "Fused attention"): which graphs build, and
# how long a trainer's start would take to build them.
if [ -x gpu-trees/tune/tcc-sdpa-probe ]; then
  step sdpa-probe "${SDPA_SECONDS:-40}" gpu-trees/tune/tcc-sdpa-probe --device
fi
# Whether this GPU builds the dgrad + drelu + dbn_weight graph that no
# described GPU has an engine for (docs/cuda.md, tcc-cuda-dgrad-statistics).
if [ -x gpu-trees/tune/tcc-dgrad-dbn-probe ]; then
  step dgrad-dbn-probe "${DGRAD_DBN_SECONDS:-40}" gpu-trees/tune/tcc-dgrad-dbn-probe --device
fi
exit 0
