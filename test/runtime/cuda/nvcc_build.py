#!/usr/bin/env python3
"""Every example (and model of test/runtime/cuda/models/), at its own
precision (airbench94 and resnet9 pure fp16, conv_net_fp16 fp16-mixed),
builds with nvcc for sm_80 (A100) and sm_90a (H100/H200) without register
spills, and its trainer, started on a machine without a GPU, stops with one
clear error line.

For each example: `tcc compile --target=cuda --emit=source`, then nvcc
with `-Xptxas=-v` for both architectures (the flags of `tcc compile`'s own
trainer build, tools/tcc/BuildTrainer.cpp, kept in step below), failing on
any kernel that spills: `-c` for sm_90a, host code included, and `-cubin`
for sm_80 (its device code only: the host code does not depend on the
architecture, and compiling it twice was half of this test's time); then `tcc compile --target=cuda --gpu=a100|h100 -o
train`, the whole trainer, for two of them (LINKED; h100 only: the link does
not depend on the architecture).
Without a GPU, `./train` must exit 1 with exactly one line on stderr, the
error saying no usable GPU was found; with one, it must train a step. On
either, it answers --help and refuses a mistyped option.
The PTX of one example's elementwise groups (CHUNKED) must move their
chunks with vector loads and stores, their arrays in registers
(runtime/cuda/device/Chunk.cuh).
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ARCHS = {"a100": "sm_80", "h100": "sm_90a"}
# What nvcc builds per architecture: an object file (host and device code),
# or the device code alone.
OUTPUT = {"sm_90a": ("-c", "o"), "sm_80": ("-cubin", "cubin")}

# Built into whole trainers by `tcc compile` (the link does not depend on the
# model beyond these two: one without convolutions, one with).
LINKED = {"fashion_mlp", "conv_net"}
# Linked with NCCL (a step of 2 ranks, runtime/cuda/NcclCommunicator.cpp):
# started alone it says how to launch it; as rank 0 of 2 (torchrun's
# variables) without a GPU, that there is none.
DISTRIBUTED = {"dist_mlp"}
# The trainer build's flags (codegen/cuda/CudaBackend.cpp, trainerBuild()).
NVCC_FLAGS = ["-std=c++17", "-O3", "--extended-lambda", "--expt-relaxed-constexpr",
              "-diag-suppress=1675", "-Xcompiler=-fopenmp"]
# The same for the spill check: nvcc's -O is the host code's level alone
# (cicc and ptxas get the same arguments at -O0 and -O3: nvcc --dryrun), and
# the host code at -O3 is a third of an sm_90a object's time; the LINKED
# trainers build it at -O3.
CHECK_FLAGS = ["-O0" if flag == "-O3" else flag for flag in NVCC_FLAGS]
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
# The example whose elementwise groups' PTX is read (16-bit and f32 chunks).
CHUNKED = "airbench94"


# SASS for that architecture alone: the trainer's -arch=sm_90a also embeds
# compute_90 PTX, a second cicc pass (2 s a model) that ptxas never sees.
def gencode(arch):
    return "-gencode=arch=compute_%s,code=%s" % (arch[3:], arch)


def distributed_failures(args, name, compile_cmd, tmp):
    """The NCCL trainer of `name` links and checks its world."""
    exe = os.path.join(tmp, f"{name}-h100")
    r = run([*compile_cmd, "--gpu=h100", "-o", exe], tmp)
    if r.returncode != 0:
        return [f"{name}: tcc compile -o failed: {r.stderr.strip()}"]
    print(f"{name}: trainer of 2 ranks built (NCCL)")
    failures = []
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
                        "PMI_SIZE", "SLURM_NTASKS")}
    r = subprocess.run([exe, "--steps", "1"], cwd=tmp, capture_output=True, text=True, env=env)
    lines = r.stderr.splitlines()
    if (r.returncode != 1 or len(lines) != 1 or "compiled for 2 ranks" not in lines[0] or
            "torchrun --nproc-per-node=2" not in lines[0]):
        failures.append(f"{name} started alone: exit {r.returncode}, stderr {r.stderr!r}")
    if not has_gpu():
        env.update(RANK="0", WORLD_SIZE="2", LOCAL_RANK="0")
        r = subprocess.run([exe, "--steps", "1"], cwd=tmp, capture_output=True, text=True,
                           env=env)
        lines = r.stderr.splitlines()
        if (r.returncode != 1 or len(lines) != 1 or
                "no usable NVIDIA GPU was found" not in lines[0]):
            failures.append(f"{name} as rank 0 of 2 without a GPU: exit {r.returncode}, "
                            f"stderr {r.stderr!r}")
    return failures


def chunk_kernel_failures(ptx):
    """Why the chunked elementwise kernels of `ptx` would not move whole
    chunks: each must load or store with a vector instruction and keep its
    arrays out of local memory."""
    kernels = re.findall(r"\.entry (\S*forEachChunkKernel\S*)\((.*?)\n}", ptx, re.S)
    if not kernels:
        return ["no forEachChunkKernel in the PTX"]
    failures = []
    for name, body in kernels:
        if not re.search(r"(ld|st)\.global\.v[24]\.", body):
            failures.append(f"{name[:60]}...: no vector load or store")
        if ".local" in body:
            failures.append(f"{name[:60]}...: arrays in local memory")
    return failures


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def has_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tcc", required=True)
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("models", nargs="*",
                    help="the models to build (default: every example and test model); "
                         "ctest runs one per test, so that no test takes long on a loaded "
                         "machine")
    args = ap.parse_args()
    examples = args.models or sorted(
        glob.glob(os.path.join(args.root, "examples", "*.json")) +
        glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "*.json")))
    failures, built = [], []
    tmp = tempfile.mkdtemp(prefix="tcc-nvcc-")
    try:
        for path in examples:
            name = os.path.splitext(os.path.basename(path))[0]
            source = os.path.join(tmp, name + ".cu")
            compile_cmd = [args.tcc, "compile", path, "--target=cuda"]
            r = run([*compile_cmd, "--emit=source", "-o", source], tmp)
            if r.returncode != 0:
                failures.append(f"{name}: --emit=source failed: {r.stderr.strip()}")
                continue
            for gpu, arch in ARCHS.items():
                mode, suffix = OUTPUT[arch]
                r = run([args.nvcc, *CHECK_FLAGS, gencode(arch), "-Xptxas=-v", "-I" + args.root,
                         mode, source, "-o", os.path.join(tmp, f"{name}.{arch}.{suffix}")], tmp)
                if r.returncode != 0:
                    failures.append(f"{name} ({arch}): nvcc failed:\n{r.stderr}")
                    continue
                spills = [m.group(0) for m in SPILLS.finditer(r.stderr)
                          if m.group(1) != "0" or m.group(2) != "0"]
                kernels = len(SPILLS.findall(r.stderr))
                if kernels == 0:
                    failures.append(f"{name} ({arch}): ptxas -v reported no kernels")
                if spills:
                    failures.append(f"{name} ({arch}): {len(spills)} kernels spill: {spills[:3]}")
                else:
                    print(f"{name} ({arch}): {kernels} kernels, no spills")
            if name == CHUNKED:
                ptx = os.path.join(tmp, name + ".ptx")
                r = run([args.nvcc, *NVCC_FLAGS, "-arch=sm_90a", "-I" + args.root, "-ptx",
                         source, "-o", ptx], tmp)
                if r.returncode != 0:
                    failures.append(f"{name} (-ptx): nvcc failed:\n{r.stderr}")
                else:
                    with open(ptx) as f:
                        chunked = chunk_kernel_failures(f.read())
                    failures += [f"{name}: {why}" for why in chunked]
                    if not chunked:
                        print(f"{name}: every chunked elementwise kernel moves vectors")
            if name in DISTRIBUTED:
                failures += distributed_failures(args, name, compile_cmd, tmp)
            if name not in LINKED:
                continue
            exe = os.path.join(tmp, f"{name}-h100")
            r = run([*compile_cmd, "--gpu=h100", "-o", exe], tmp)
            if r.returncode != 0:
                failures.append(f"{name}: tcc compile -o failed: {r.stderr.strip()}")
                continue
            print(f"{name}: trainer built")
            built.append(exe)
        if not built and LINKED & {os.path.splitext(os.path.basename(p))[0] for p in examples}:
            failures.append("no example was built for the cuda target")
        for exe in built[:1]:
            r = run([exe, "--steps", "1", "--quiet"], tmp)
            if has_gpu():
                if r.returncode != 0:
                    failures.append(f"{exe} on this GPU: exit {r.returncode}: {r.stderr.strip()}")
                continue
            lines = r.stderr.splitlines()
            expected = ("error: this trainer was compiled for the cuda target, but no usable "
                        "NVIDIA GPU was found (")
            if (r.returncode != 1 or r.stdout or len(lines) != 1 or
                    not lines[0].startswith(expected) or "--target=cpu" not in lines[0]):
                failures.append(f"the trainer without a GPU: exit {r.returncode}, stdout "
                                f"{r.stdout!r}, stderr {r.stderr!r}")
            else:
                print("without a GPU: " + lines[0])
            # --help and a mistyped option are answered on any machine.
            r = run([exe, "--help"], tmp)
            if r.returncode != 0 or "usage:" not in r.stdout:
                failures.append(f"{exe} --help: exit {r.returncode}, stderr {r.stderr!r}")
            r = run([exe, "--stepz", "1"], tmp)
            if r.returncode != 1 or not r.stderr.startswith("error: unknown option '--stepz'"):
                failures.append(f"{exe} --stepz 1: exit {r.returncode}, stderr {r.stderr!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("FAIL:")
        for f in failures:
            print("  " + f)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
