#!/usr/bin/env python3
"""A step with CUTLASS kernels baked in place of cuDNN engines (docs/tuning.md,
"CUTLASS"), on a machine without a GPU. A tuning file for conv_net_fp16 on
the h100 records a CUTLASS kernel twice as fast as cuDNN's engine for each of
its four plain one-group convolutions (made-up times, test/tools/
make_tuning_file.py --cutlass). Then:
1. under host emulation (host_emulation.py --tuning-db) the step compiles
   with its CUTLASS table compiled out, gives those four convolutions the
   kernels' workspace, and trains 20 steps as the cpu trainer does;
2. `tcc compile --target=cuda -o train` builds the whole trainer with nvcc,
   CUTLASS's kernels included, and `./train`, without a GPU, stops with one
   line saying there is none.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def must(cmd, what, cwd=None):
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        sys.exit(f"FAIL: {what}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcc", required=True)
    ap.add_argument("--tune", required=True, help="tcc-tune, for --list")
    ap.add_argument("--emulation", nargs=argparse.REMAINDER, required=True,
                    help="host_emulation.py's own arguments after the model")
    args = ap.parse_args()
    model = os.path.join(HERE, "models", "conv_net_fp16.json")
    tmp = tempfile.mkdtemp(prefix="tcc-cutlass-step-")
    try:
        plans, listed, tuned = (os.path.join(tmp, n) for n in ("plans.json", "list.json",
                                                              "tuned.json"))
        must([args.tcc, "compile", model, "--emit=conv-plans", "--gpu=h100", "-o", plans],
             "the conv plans")
        must([args.tune, plans, "--list", "--gpu", "h100", "-o", listed], "tcc-tune --list")
        must([sys.executable, os.path.join(HERE, "..", "..", "tools", "make_tuning_file.py"),
              plans, listed, tuned, "--cutlass", "0.5"], "the tuning file")

        r = must([sys.executable, os.path.join(HERE, "host_emulation.py"), model,
                  "--tuning-db", tuned, "--expect-cutlass", "4", *args.emulation],
                 "host emulation with CUTLASS kernels")
        print(r.stdout.strip())

        exe = os.path.join(tmp, "train")
        must([args.tcc, "compile", model, "--target=cuda", "--gpu=h100", "--tuning-db=" + tuned,
              "-o", exe], "the trainer's nvcc build with CUTLASS kernels")
        r = subprocess.run([exe, "--steps", "1"], capture_output=True, text=True, cwd=tmp)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 1 or len(lines) != 1 or "no usable NVIDIA GPU" not in lines[0]:
            sys.exit(f"FAIL: ./train without a GPU: exit {r.returncode}, stderr:\n{r.stderr}")
        print("PASS: the trainer with CUTLASS kernels builds, and without a GPU says: " +
              lines[0])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
