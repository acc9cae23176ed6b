#!/usr/bin/env python3
"""tcc's bf16-mixed training step against PyTorch autocast on the CPU.

Compiles MODEL.json with train.precision = "bf16-mixed", trains it 5 steps
from PyTorch's initial weights on the batches of compare_with_torch.py, and
trains the PyTorch reference twice on the same batches: in float32, and
under torch.autocast("cpu", dtype=torch.bfloat16) (convolutions and linears
in bf16, losses in f32, the parameters and the optimizer in f32).

Tolerance (docs/passes.md, tcc-precision): two bf16 steps differ from each
other by bf16 round-off, which no fixed bound describes; what PyTorch's own
bf16 step deviates from its float32 step measures it on this model and
data. For every tensor of the state with at least 64 elements, and for all
of them together,

    |tcc_bf16 - torch_fp32|  <=  2 * |torch_bf16 - torch_fp32|  +  1e-4 * |torch_fp32|

(Euclidean norms): tcc's bf16 step is no further from the float32 step than
twice autocast's. And for all of them together

    |tcc_bf16 - torch_fp32|  >=  0.25 * |torch_bf16 - torch_fp32|

so a step that silently ran in float32 (a deviation about 1000 times
smaller) fails. The model should have no max pooling or ReLU: bf16
round-off moves their ties and kinks, which is not round-off any more.
"""

import argparse
import copy
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_with_torch as cw  # noqa: E402

torch = cw.torch

MIN_ELEMENTS = 64
FACTOR, SLACK, AT_LEAST = 2.0, 1e-4, 0.25


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--tcc", default="build/bin/tcc")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    args.tcc = os.path.abspath(args.tcc)

    with open(args.model) as f:
        spec = json.load(f)
    spec["train"]["precision"] = "bf16-mixed"

    def check(tmp):
        reference, exe = cw.compile_beside_reference(args, spec, tmp,
                                                     "compare_bf16_autocast.py")
        cw.run([exe, "--init", "init.safetensors", "--no-shuffle", "--no-augment",
                "--steps", str(args.steps), "--epochs", repr(reference.epochs),
                "--save", "out.safetensors", "--quiet"], tmp, "the tcc trainer")
        tcc_state, _ = cw.read_safetensors(os.path.join(tmp, "out.safetensors"))

        fp32 = reference.run(torch.float32)[0]
        # One autocast region around all the steps: its cache of the bf16
        # weights would outlive the first optimizer step; so no cache.
        with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
            bf16 = cw.train_reference(spec, copy.deepcopy(reference.model),
                                      reference.images, reference.labels, args.steps,
                                      reference.steps_per_epoch, reference.total_steps,
                                      torch.float32)[0]

        ok = True
        total = {"tcc": 0.0, "ref": 0.0, "scale": 0.0}
        print("%-28s %10s %12s %12s %8s" % ("tensor", "elements", "|tcc-fp32|",
                                              "|bf16-fp32|", "ratio"))
        for name in sorted(fp32):
            if name.endswith("num_batches_tracked") or name not in tcc_state:
                continue
            base = fp32[name].astype(np.float64)
            d_tcc = float(np.linalg.norm(tcc_state[name].astype(np.float64) - base))
            d_ref = float(np.linalg.norm(bf16[name].astype(np.float64) - base))
            scale = float(np.linalg.norm(base))
            total["tcc"] += d_tcc ** 2
            total["ref"] += d_ref ** 2
            total["scale"] += scale ** 2
            if base.size < MIN_ELEMENTS:
                continue
            good = np.isfinite(d_tcc) and d_tcc <= FACTOR * d_ref + SLACK * scale
            ok &= bool(good)
            print("%-28s %10d %12.3e %12.3e %8.2f%s" % (
                name, base.size, d_tcc, d_ref, d_tcc / d_ref if d_ref else float("inf"),
                "" if good else "   FAIL"))
        d_tcc, d_ref, scale = (total[k] ** 0.5 for k in ("tcc", "ref", "scale"))
        within = d_tcc <= FACTOR * d_ref + SLACK * scale
        bf16_ran = d_tcc >= AT_LEAST * d_ref
        print("%-28s %10s %12.3e %12.3e %8.2f" % ("all", "", d_tcc, d_ref, d_tcc / d_ref))
        if not within:
            print("FAIL: the whole state is further from float32 than %g x autocast's" % FACTOR)
        if not bf16_ran:
            print("FAIL: the whole state is within %g x autocast's bf16 deviation of "
                  "float32: did the step run in bf16?" % AT_LEAST)
        ok &= within and bf16_ran
        print("PASS" if ok else "FAILED")
        return 0 if ok else 1

    return cw.run_in_temporary_directory("tcc-bf16-", args.keep, check)


if __name__ == "__main__":
    sys.exit(main())
