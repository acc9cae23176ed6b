#!/usr/bin/env python3
"""`tcc compile --emit=source-tree` writes a folder that builds the trainer
with CMake alone (no tcc, no MLIR), for both targets.

The cpu tree, built here, trains exactly as the trainer `tcc compile` builds:
the checkpoints after a few steps are equal bit for bit (the same step source
and flags, the same runtime sources). The cuda tree builds here with nvcc
(no GPU) and its trainer stops with the one no-GPU line. Writing a tree over
a directory tcc did not write is refused, and over an earlier tree replaces
tcc's files and keeps the user's (tcc-source-tree-reemit.test has the cases).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return r


def must(cmd, what, cwd=None):
    r = run(cmd, cwd)
    if r.returncode != 0:
        sys.exit(f"FAIL: {what} exited with {r.returncode}:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--tcc", required=True)
    ap.add_argument("--cuda", action="store_true", help="also build the cuda tree")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tcc-tree-")
    failures = []
    try:
        name = os.path.splitext(os.path.basename(args.model))[0]
        tree = os.path.join(tmp, "cpu-tree")
        must([args.tcc, "compile", args.model, "--target=cpu", "--emit=source-tree", "-o", tree],
             "tcc compile --emit=source-tree")
        for f in ("CMakeLists.txt", "README.md", name + ".cpp", "runtime/CompiledModel.h",
                  "third_party/include/nlohmann/json.hpp"):
            if not os.path.isfile(os.path.join(tree, f)):
                failures.append(f"the cpu tree has no {f}")
        # Written again over itself: the user's file stays, and no temporary
        # is left beside it.
        with open(os.path.join(tree, "notes"), "w") as f:
            f.write("the user's")
        must([args.tcc, "compile", args.model, "--target=cpu", "--emit=source-tree", "-o", tree],
             "tcc compile --emit=source-tree over an earlier tree")
        if not os.path.exists(os.path.join(tree, "notes")):
            failures.append("writing a tree over an earlier one deleted the user's file")
        if sorted(os.listdir(tmp)) != ["cpu-tree"]:
            failures.append(f"temporaries left beside the tree: {sorted(os.listdir(tmp))}")
        # Over a directory tcc did not write: refused, untouched.
        other = os.path.join(tmp, "mine")
        os.makedirs(other)
        with open(os.path.join(other, "file"), "w") as f:
            f.write("mine")
        r = run([args.tcc, "compile", args.model, "--target=cpu", "--emit=source-tree", "-o", other])
        if (r.returncode != 1 or "is not a source tree tcc wrote" not in r.stderr
                or os.listdir(other) != ["file"]):
            failures.append(f"-o over another directory: exit {r.returncode}, {r.stderr.strip()}")

        build = os.path.join(tmp, "cpu-build")
        must(["cmake", "-S", tree, "-B", build, "-G", "Ninja"], "cmake (cpu tree)")
        must(["cmake", "--build", build, "-j2"], "building the cpu tree")
        direct = os.path.join(tmp, "train-direct")
        must([args.tcc, "compile", args.model, "--target=cpu", "-o", direct], "tcc compile -o")
        saved = {}
        for label, exe in (("tree", os.path.join(build, name)), ("direct", direct)):
            out = os.path.join(tmp, label + ".safetensors")
            must([exe, "--steps", "4", "--save", out, "--quiet"], f"the {label} trainer", cwd=tmp)
            with open(out, "rb") as f:
                saved[label] = f.read()
        if saved["tree"] != saved["direct"]:
            failures.append("the cpu tree's trainer and tcc's differ after 4 steps")

        if args.cuda:
            tree = os.path.join(tmp, "cuda-tree")
            must([args.tcc, "compile", args.model, "--target=cuda", "--gpu=a100",
                  "--emit=source-tree", "-o", tree], "tcc compile --target=cuda --emit=source-tree")
            build = os.path.join(tmp, "cuda-build")
            # Debug without -g: it only has to build and start here; -O0 builds
            # faster, and debug info cost a fifth of the cudnn_frontend files' time.
            r = must(["cmake", "-S", tree, "-B", build, "-G", "Ninja",
                      "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=",
                      "-DCMAKE_CUDA_FLAGS_DEBUG="], "cmake (cuda tree)")
            for lib in ("cudnn", "nvrtc", "cublasLt", "cudart"):
                if f"tcc: {lib}: " not in r.stdout:
                    failures.append(f"cmake did not say where {lib} is")
            must(["cmake", "--build", build, "-j2"], "building the cuda tree")
            r = run([os.path.join(build, name), "--steps", "1"], cwd=tmp)
            lines = r.stderr.splitlines()
            if (r.returncode != 1 or len(lines) != 1 or
                    "no usable NVIDIA GPU was found" not in lines[0]):
                failures.append(f"the cuda tree's trainer without a GPU: exit {r.returncode}, "
                                f"{r.stderr.strip()}")
            # tcc-tune (docs/tuning.md) builds from the tree too, reads its
            # conv-plans.json and lists the candidates for a described GPU.
            must(["cmake", "--build", build, "-j2", "--target", "tcc-tune"],
                 "building the cuda tree's tcc-tune")
            r = must([os.path.join(build, "tcc-tune"), os.path.join(tree, "conv-plans.json"),
                      "--list", "--gpu", "a100"], "the tree's tcc-tune --list")
            listed = json.loads(r.stdout)
            with open(os.path.join(tree, "conv-plans.json")) as f:
                plans = json.load(f)
            if (listed["gpu"] != "a100" or not plans["convs"] or
                    [c["problem"] for c in listed["convs"]] != [c["problem"] for c in plans["convs"]]
                    or not all(c["plans"] for c in listed["convs"])):
                failures.append("the tree's tcc-tune --list does not list conv-plans.json's "
                                "problems with their candidates")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("PASS: the trees build with CMake alone; the cpu tree's trainer equals tcc's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
