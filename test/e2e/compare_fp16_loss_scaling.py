#!/usr/bin/env python3
"""tcc's fp16-mixed training step, dynamic loss scaling included, against a
PyTorch reference that does the same by hand.

Debian's torch 1.13 has neither fp16 autocast nor GradScaler on the CPU, so
the reference (test/e2e/torch_reference.py) writes both out: the model in
float32 with every value tcc stores in fp16 rounded to fp16 where tcc
stores it (`TccModel.storage16`), and GradScaler's scale / unscale /
skip / update (`Trainer`). It trains MODEL.json from PyTorch's initial
weights on the batches of compare_with_torch.py, twice: with that fp16
emulation, and in float32 with the same loss scaling and the same skipped
steps.

The recipe forces overflows with a wide margin: the scale starts at 2^24,
backs off by 2^-16 to 2^8 and grows back by 2^16 after 2 clean steps, so
steps 0 and 3 overflow (the logits' gradient times 2^24 is far beyond
fp16's 65504) and steps 1, 2 and 4 do not (every gradient tcc stores times
2^8 stays far below it). The script checks those margins on the reference's
gradients before it trusts the pattern, then checks:

1. Loss scaling: `amp.loss_scale`, `amp.growth_tracker`,
   `amp.optimizer_steps` and `step` of tcc's checkpoint equal the
   reference's exactly; after the first step alone (skipped) every
   parameter, buffer-free optimizer slot and the step counters are bit for
   bit what a skipped step leaves.
2. The fp16 step: two fp16 implementations that round at the same places
   still differ by more than float32 round-off: where float32 round-off of
   two kernels tips an fp16 rounding (a few percent of the elements), the
   values differ by an fp16 ulp, and every later op inherits it. What the
   emulation deviates from its float32 step measures fp16 round-off on this
   model and data, so, as for bf16 (compare_bf16_autocast.py), for every
   tensor of the state with at least 64 elements and for all of them
   together (Euclidean norms)

       |tcc - fp32|  <=  2 * |emulated - fp32|  +  1e-4 * |fp32|

   and for all of them together |tcc - fp32| >= 0.25 * |emulated - fp32|,
   so a step that silently ran in float32 fails. (Measured: tcc is about
   as far from float32 as the emulation, and about half that from the
   emulation.)
"""

import argparse
import copy
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_with_torch as cw  # noqa: E402

torch, ref = cw.torch, cw.ref

FP16_MAX = 65504.0
MARGIN = 4.0  # how far from FP16_MAX the reference's scaled gradients must stay
MIN_ELEMENTS = 64
FACTOR, SLACK, AT_LEAST = 2.0, 1e-4, 0.25
LOSS_SCALE = {"init_scale": 2.0 ** 24, "backoff_factor": 2.0 ** -16,
              "growth_factor": 2.0 ** 16, "growth_interval": 2}
EXPECTED_SKIPS = [0, 3]


def train(spec, reference, steps, storage16, forced_skips=None):
    """The reference trained `steps` steps; returns (state as numpy, the
    skipped steps, per step the largest |gradient| arriving at an fp16
    value: at the model's output, and anywhere)."""
    model = copy.deepcopy(reference.model)
    model.storage16 = storage16
    trainer = ref.Trainer(model, spec, reference.steps_per_epoch, reference.total_steps)
    trainer.forced_skips = forced_skips
    at_output, anywhere = [], []
    for s in range(steps):
        model.grad_probe = []
        lo, hi = s * reference.effective, (s + 1) * reference.effective
        trainer.step(reference.images[lo:hi], reference.labels[lo:hi])
        # hooks fire in backward order: the first is the model's output
        probe = model.grad_probe or [0.0]
        at_output.append(probe[0])
        anywhere.append(max(probe))
    state = {n: (t.float() if t.is_floating_point() else t).numpy()
             for n, t in trainer.state().items()}
    return state, trainer.skipped, at_output, anywhere


def check_margins(skipped, at_output, anywhere, scales):
    ok = True
    for s, (out, anyw, scale) in enumerate(zip(at_output, anywhere, scales)):
        if s in skipped:
            good = out >= MARGIN * FP16_MAX
            what = "the output's scaled gradient %.3g >= %g x 65504" % (out, MARGIN)
        else:
            good = np.isfinite(anyw) and anyw <= FP16_MAX / MARGIN
            what = "every scaled gradient <= %.3g (65504 / %g): %.3g" % (
                FP16_MAX / MARGIN, MARGIN, anyw)
        print("step %d (scale 2^%d) %s: %s%s" % (s, int(np.log2(scale)),
                                               "overflows" if s in skipped else "clean",
                                               what, "" if good else "   FAIL"))
        ok &= bool(good)
    if not ok:
        print("FAIL: the reference's gradients are within %gx of fp16's range: the "
              "overflow pattern is not certain; change the model or LOSS_SCALE" % MARGIN)
    return ok


def scales_of(skipped, steps):
    """The loss scale each step ran with, from the skip pattern."""
    scale, tracker, out = LOSS_SCALE["init_scale"], 0, []
    for s in range(steps):
        out.append(scale)
        if s in skipped:
            scale, tracker = scale * LOSS_SCALE["backoff_factor"], 0
        else:
            tracker += 1
            if tracker == LOSS_SCALE["growth_interval"]:
                scale, tracker = scale * LOSS_SCALE["growth_factor"], 0
    return out


def compare_states(tcc_state, emulated, fp32):
    ok = True
    total = {"tcc": 0.0, "emu": 0.0, "between": 0.0, "scale": 0.0}
    print("%-44s %9s %11s %11s %11s %6s" % ("tensor", "elements", "|tcc-fp32|",
                                             "|emu-fp32|", "|tcc-emu|", "ratio"))
    for name in sorted(fp32):
        if name.endswith("num_batches_tracked") or name.startswith("amp.") or \
                name == "step" or name not in tcc_state:
            continue
        base = fp32[name].astype(np.float64)
        tcc, emu = tcc_state[name].astype(np.float64), emulated[name].astype(np.float64)
        d_tcc = float(np.linalg.norm(tcc - base))
        d_emu = float(np.linalg.norm(emu - base))
        between = float(np.linalg.norm(tcc - emu))
        scale = float(np.linalg.norm(base))
        for key, value in (("tcc", d_tcc), ("emu", d_emu), ("between", between),
                           ("scale", scale)):
            total[key] += value ** 2
        if base.size < MIN_ELEMENTS:
            continue
        good = np.isfinite(d_tcc) and d_tcc <= FACTOR * d_emu + SLACK * scale
        ok &= bool(good)
        print("%-44s %9d %11.3e %11.3e %11.3e %6.2f%s" % (
            name, base.size, d_tcc, d_emu, between,
            d_tcc / d_emu if d_emu else float("inf"), "" if good else "   FAIL"))
    d_tcc, d_emu, between, scale = (total[k] ** 0.5
                                    for k in ("tcc", "emu", "between", "scale"))
    print("%-44s %9s %11.3e %11.3e %11.3e %6.2f" % ("all", "", d_tcc, d_emu, between,
                                                    d_tcc / d_emu))
    if not d_tcc <= FACTOR * d_emu + SLACK * scale:
        print("FAIL: the whole state is further from float32 than %g x the emulation's "
              "fp16 deviation" % FACTOR)
        ok = False
    if not d_tcc >= AT_LEAST * d_emu:
        print("FAIL: tcc's state is within %g x the fp16 deviation of the float32 step: "
              "did the step run in fp16?" % AT_LEAST)
        ok = False
    return ok


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
    spec["train"]["precision"] = "fp16-mixed"
    spec["train"]["loss_scale"] = LOSS_SCALE

    def check(tmp):
        reference, exe = cw.compile_beside_reference(args, spec, tmp,
                                                     "compare_fp16_loss_scaling.py")

        def run_tcc(steps, out):
            cw.run([exe, "--init", "init.safetensors", "--no-shuffle", "--no-augment",
                    "--steps", str(steps), "--epochs", repr(reference.epochs),
                    "--save", out, "--metrics", out + ".jsonl", "--quiet"], tmp,
                   "the tcc trainer")
            return cw.read_safetensors(os.path.join(tmp, out))[0]

        emulated, skipped, at_output, anywhere = train(spec, reference, args.steps, True)
        ok = check_margins(skipped, at_output, anywhere, scales_of(skipped, args.steps))
        if skipped != EXPECTED_SKIPS[:len([s for s in EXPECTED_SKIPS if s < args.steps])]:
            print("FAIL: the reference skipped steps %s, not %s" % (skipped, EXPECTED_SKIPS))
            ok = False
        fp32 = train(spec, reference, args.steps, False, forced_skips=set(skipped))[0]

        # 1. Loss scaling, exactly.
        tcc_state = run_tcc(args.steps, "out.safetensors")
        for name in ("amp.loss_scale", "amp.growth_tracker", "amp.optimizer_steps", "step"):
            got, want = tcc_state[name].item(), emulated[name].item()
            good = got == want
            print("%-22s tcc %-12s reference %-12s%s" % (name, got, want,
                                                         "" if good else "   FAIL"))
            ok &= good
        # The metrics show the scale and the skipped steps.
        with open(os.path.join(tmp, "out.safetensors.jsonl")) as f:
            last = json.loads(f.read().splitlines()[-1])
        shown = (last.get("loss_scale"), last.get("skipped_steps"))
        good = shown == (float(emulated["amp.loss_scale"].item()), len(skipped))
        print("metrics: loss_scale %s, skipped_steps %s%s" % (shown + ("" if good else "   FAIL",)))
        ok &= good
        first = run_tcc(1, "first.safetensors")
        untouched = [n for n, t in reference.init.items()
                     if not n.endswith("num_batches_tracked") and "running_" not in n]
        changed = [n for n in untouched if not np.array_equal(first[n], reference.init[n])]
        slots = [n for n in first if n.startswith("optimizer.") and np.any(first[n] != 0)]
        counters = (first["amp.optimizer_steps"].item(), first["step"].item(),
                    first["amp.loss_scale"].item())
        skip_ok = not changed and not slots and counters == (0, 1, 256.0)
        print("after the skipped first step: %d parameters changed %s, %d optimizer slots "
              "nonzero, optimizer_steps/step/loss_scale %s%s" % (
                  len(changed), changed[:3], len(slots), counters,
                  "" if skip_ok else "   FAIL"))
        ok &= skip_ok

        # 2. The fp16 step.
        ok &= compare_states(tcc_state, emulated, fp32)
        print("PASS" if ok else "FAILED")
        return 0 if ok else 1

    return cw.run_in_temporary_directory("tcc-fp16-", args.keep, check)


if __name__ == "__main__":
    sys.exit(main())
