#!/usr/bin/env python3
"""tcc's pure 16-bit training step (train.precision fp16 or bf16) against a
PyTorch reference that stores the same values in 16 bits by hand.

Pure 16-bit is what `model.half()` trains (airbench94, the ResNet-9 record):
the parameters of the convolutions and linear layers, their gradients, their
optimizer slots, Lookahead and EMA copies live in 16 bits; batch norm keeps
its parameters and statistics in f32. tcc computes each update in f32 and
rounds what it stores. Debian's torch 1.13 cannot run fp16 convolutions on
the CPU, so the reference (test/e2e/torch_reference.py) is the float32 model
with every value tcc stores in 16 bits rounded where tcc stores it
(`TccModel.storage16`, `Trainer.stored16`).

The script compiles MODEL.json with the precision, starts tcc from the
reference's float32 initial weights (--init rounds them, with a note), trains
5 steps on the batches of compare_with_torch.py, and checks:

1. Storage, exactly: every parameter of a conv2d or linear layer and its
   optimizer slots are 16-bit tensors in tcc's checkpoint, everything else
   f32 (--init's rounding itself: test/runtime/trainer/CheckpointTest.cpp).
2. The step. Two 16-bit implementations that round at the same places still
   differ by more than float32 round-off (where float32 round-off of two
   kernels tips a 16-bit rounding, the values differ by an ulp, and every
   later op inherits it), so, as for the mixed modes (docs/passes.md,
   tcc-precision): what the emulation deviates from the float32 step
   measures 16-bit round-off on this model and data, and for every tensor of
   the state with at least 64 elements and for all of them together
   (Euclidean norms)

       |tcc - fp32|  <=  2 * |emulated - fp32|  +  1e-4 * |fp32|

   and for all of them together |tcc - fp32| >= 0.25 * |emulated - fp32|,
   so a step that silently ran in float32 fails.
"""

import argparse
import copy
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_with_torch as cw  # noqa: E402
from compare_fp16_loss_scaling import compare_states  # noqa: E402

torch, ref = cw.torch, cw.ref

LOW = {"fp16": ("F16", torch.float16), "bf16": ("BF16", torch.bfloat16)}


def train(spec, reference, steps, low_dtype):
    """The reference trained `steps` steps with 16-bit storage emulated
    (low_dtype) or in float32 (None); returns (state as numpy, the names
    stored in 16 bits)."""
    model = copy.deepcopy(reference.model)
    model.storage16 = low_dtype is not None
    if low_dtype is not None:
        model.low_dtype = low_dtype
    trainer = ref.Trainer(model, spec, reference.steps_per_epoch, reference.total_steps)
    for s in range(steps):
        lo, hi = s * reference.effective, (s + 1) * reference.effective
        trainer.step(reference.images[lo:hi], reference.labels[lo:hi])
    state = {n: (t.float() if t.is_floating_point() else t).numpy()
             for n, t in trainer.state().items()}
    return state, trainer.stored16


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--precision", choices=sorted(LOW), default="fp16")
    ap.add_argument("--tcc", default="build/bin/tcc")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    args.tcc = os.path.abspath(args.tcc)
    low_name, low_dtype = LOW[args.precision]

    with open(args.model) as f:
        spec = json.load(f)
    spec["train"]["precision"] = args.precision
    spec["train"].pop("loss_scale", None)
    fp32_spec = copy.deepcopy(spec)
    fp32_spec["train"]["precision"] = "fp32"

    def check(tmp):
        reference, exe = cw.compile_beside_reference(args, spec, tmp, "compare_pure16.py")
        emulated, stored16 = train(spec, reference, args.steps, low_dtype)
        fp32 = train(fp32_spec, reference, args.steps, None)[0]

        run = subprocess.run(
            [exe, "--init", "init.safetensors", "--no-shuffle", "--no-augment", "--steps",
             str(args.steps), "--epochs", repr(reference.epochs), "--save", "out.safetensors"],
            cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if run.returncode != 0:
            raise cw.RunFailed("the tcc trainer (exit %d):\n%s" % (run.returncode,
                                                                   run.stdout[-4000:]))
        # --init rounds the reference's F32 weights, and says so.
        print("\n".join(line for line in run.stdout.splitlines() if line.startswith("note:")))
        dtypes = {}
        tcc_state = cw.read_safetensors(os.path.join(tmp, "out.safetensors"), dtypes)[0]

        # 1. What is stored in 16 bits.
        ok = True
        wrong = []
        for name, dtype in sorted(dtypes.items()):
            owner = name[len("optimizer."):].rsplit(".", 1)[0] \
                if name.startswith("optimizer.") else name
            if dtype in ("I64", "U8"):
                continue
            want = low_name if owner in stored16 else "F32"
            if dtype != want:
                wrong.append("%s is %s, not %s" % (name, dtype, want))
        sixteen = sorted(n for n, d in dtypes.items() if d == low_name)
        print("%s tensors: %d (%s ...); wrong dtypes: %s" % (
            low_name, len(sixteen), ", ".join(sixteen[:3]), wrong or "none"))
        ok &= not wrong and len(sixteen) >= len(stored16)

        # 2. The step.
        ok &= compare_states(tcc_state, emulated, fp32)
        print("PASS" if ok else "FAILED")
        return 0 if ok else 1

    return cw.run_in_temporary_directory("tcc-pure16-", args.keep, check)


if __name__ == "__main__":
    sys.exit(main())
