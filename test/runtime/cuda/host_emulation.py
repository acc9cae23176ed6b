#!/usr/bin/env python3
"""The cuda target's generated step, run on the CPU under host emulation,
trains like the cpu trainer.

CI has no GPU. runtime/cuda/device/HostEmulation.h lets the .cu file that
`tcc compile --target=cuda --emit=source` writes compile as plain C++ and run
on the host with CUDA's stream and graph semantics (the training step is
recorded once and replayed, as on a GPU). This test builds that trainer and
the cpu trainer of the same model, trains both for --steps steps from the
same seed on the same data, and compares:
  - every tensor of the checkpoints: max |cuda - cpu| <= 1e-4 * max |cpu|
    per tensor (the GPU check's fp32 tolerance, issue 10; the two differ by
    summation order only: a dot product of K = 784 f32 terms is within
    K * 2^-24 = 4.7e-5 relative of the exact one, and the emulated matmul
    sums in double), the step counter exactly;
  - the metrics the trainer read from the step's totals: losses within 1e-4
    relative, accuracies within 2 samples of those the record counts (a
    near-tie of two logits may go either way).
What it checks: the cuda emitter's calls, the order of the launches, the
batch gather, the graph capture and replay, the constants in device memory,
and the trainer's device paths (uploads, totals read at log points). What it
does not: GPU rounding and concurrency (scripts/gpu-check.sh on a GPU).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
import compare_with_torch as cw  # noqa: E402


def run(cmd, cwd, what):
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {what} exited with {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


def read_metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--tcc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--root", required=True, help="the source tree (runtime headers)")
    ap.add_argument("--libs", required=True, help="the trainer's runtime libraries, ';'-separated")
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    args.model = os.path.abspath(args.model)

    tmp = tempfile.mkdtemp(prefix="tcc-cuda-emu-")
    try:
        source = os.path.join(tmp, "model.cu")
        run([args.tcc, "compile", args.model, "--target=cuda", "--emit=source", "-o", source],
            tmp, "tcc compile --target=cuda --emit=source")
        emulated = os.path.join(tmp, "train-cuda-emulated")
        run([args.cxx, "-std=c++17", "-O2", "-fopenmp", "-DTCC_CUDA_HOST_EMULATION",
             "-I" + args.root, "-x", "c++", source,
             os.path.join(args.root, "runtime/cuda/CudaMemory.cpp"), "-x", "none",
             *args.libs.split(";"), "-lz", "-o", emulated], tmp,
            "building the emulated cuda trainer")
        cpu = os.path.join(tmp, "train-cpu")
        run([args.tcc, "compile", args.model, "--target=cpu", "-o", cpu], tmp,
            "tcc compile --target=cpu")

        results = {}
        for name, exe in (("cuda", emulated), ("cpu", cpu)):
            run([exe, "--steps", str(args.steps), "--log-every", str(args.steps // 2),
                 "--save", name + ".safetensors", "--metrics", name + ".jsonl", "--quiet"],
                tmp, f"the {name} trainer")
            state, _ = cw.read_safetensors(os.path.join(tmp, name + ".safetensors"))
            results[name] = (state, read_metrics(os.path.join(tmp, name + ".jsonl")))

        with open(args.model) as f:
            batch = json.load(f)["train"]["batch_size"]
        failures = []
        (cuda_state, cuda_metrics), (cpu_state, cpu_metrics) = results["cuda"], results["cpu"]
        if sorted(cuda_state) != sorted(cpu_state):
            failures.append(f"checkpoint tensors differ: {sorted(cuda_state)} vs {sorted(cpu_state)}")
        for key in sorted(set(cuda_state) & set(cpu_state)):
            a = np.asarray(cuda_state[key], dtype=np.float64)
            b = np.asarray(cpu_state[key], dtype=np.float64)
            scale = float(np.abs(b).max()) if b.size else 0.0
            diff = float(np.abs(a - b).max()) if b.size else 0.0
            exact = key == "step"
            if a.shape != b.shape or (diff != 0 if exact else diff > 1e-4 * scale):
                failures.append(f"{key}: max |cuda - cpu| = {diff:.3g} (max |cpu| = {scale:.3g})")
        if len(cuda_metrics) != len(cpu_metrics) or len(cpu_metrics) < 3:
            failures.append(f"metrics records: {len(cuda_metrics)} (cuda) vs {len(cpu_metrics)} (cpu)")
        for a, b in zip(cuda_metrics, cpu_metrics):
            for key in ("train_loss", "test_loss"):
                if b.get(key) is not None and abs(a[key] - b[key]) > 1e-4 * abs(b[key]):
                    failures.append(f"{b['type']} {key}: {a[key]} (cuda) vs {b[key]} (cpu)")
            # Two samples of the record's: a train record counts at least
            # one log window, a test record the 10000 test images.
            for key, samples in (("train_acc", batch * (args.steps // 2)), ("test_acc", 10000)):
                if b.get(key) is not None and abs(a[key] - b[key]) * samples > 2:
                    failures.append(f"{b['type']} {key}: {a[key]} (cuda) vs {b[key]} (cpu)")
            if a["step"] != b["step"]:
                failures.append(f"record steps: {a['step']} (cuda) vs {b['step']} (cpu)")
        if failures:
            print("FAIL: the emulated cuda trainer differs from the cpu trainer:")
            for f in failures:
                print("  " + f)
            return 1
        print(f"PASS: {len(cpu_state)} tensors and {len(cpu_metrics)} metrics records agree "
              f"after {args.steps} steps")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
