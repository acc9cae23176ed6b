#!/usr/bin/python3
"""The learning rate of every step of a CIFAR-10 run of examples/airbench94.json
and examples/resnet9.json against the rate the original code computes.

    compare_original_schedules.py --tcc PATH

For each example, a trainer with the example's `train` section (batch size,
epochs, optimizer rate, schedule) and a one-pixel linear model trains on
50000 one-pixel samples, CIFAR-10's training set size (so the run has the
original's steps per epoch and total steps), with `--log-every 1`; the `lr`
of each step record is compared with the original's rate for that step,
written here as the original code computes it (not from model.json):

- airbench94 (KellerJordan/cifar10-airbench, legacy/airbench94.py):
  `total_train_steps = ceil(len(train_loader) * 9.9)`, `LambdaLR(get_lr)`
  stepped after each optimizer step, so step k (from 0) uses
  `lr * get_lr(k)`, with `warmup_steps = int(total_train_steps * 0.23)`.
- resnet9 (davidcpage/cifar10-fast, new_dawn.py with core.py and
  torch_backend.py): `opt_step` increments `step_number` before reading
  `lr_schedule(step / len(train_batches)) / batch_size`, with
  `PiecewiseLinear([0, epochs/5, epochs - ema_epochs], [0, 1.0, 0.1])`
  (np.interp, held after the last knot).

Relative error per step at most 1e-6 (the step keeps the rate in float32).
Exit status 0 all match, 1 a mismatch, 2 the run failed.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
CIFAR10_TRAIN = 50000


def airbench94_rates(steps_per_epoch):
    """legacy/airbench94.py's main(): the rate of each optimizer step."""
    epochs, momentum = 9.9, 0.85
    kilostep_scale = 1024 * (1 + 1 / (1 - momentum))
    lr = 11.5 / kilostep_scale
    total_train_steps = math.ceil(steps_per_epoch * epochs)

    def get_lr(step):
        warmup_steps = int(total_train_steps * 0.23)
        warmdown_steps = total_train_steps - warmup_steps
        if step < warmup_steps:
            frac = step / warmup_steps
            return 0.2 * (1 - frac) + 1.0 * frac
        frac = (step - warmup_steps) / warmdown_steps
        return 1.0 * (1 - frac) + 0.07 * frac

    return [lr * get_lr(k) for k in range(total_train_steps)]


def resnet9_rates(steps_per_epoch):
    """new_dawn.py's main() with core.opt_step: the non-bias group's rate."""
    epochs, ema_epochs, batch_size = 10, 2, 512
    knots, vals = [0, epochs / 5, epochs - ema_epochs], [0, 1.0, 0.1]

    def lr_schedule(t):
        return np.interp([t], knots, vals)[0]

    rates = []
    for step_number in range(1, epochs * steps_per_epoch + 1):
        rates.append(lr_schedule(step_number / steps_per_epoch) / batch_size)
    return rates


ORIGINALS = {"airbench94": airbench94_rates, "resnet9": resnet9_rates}


def proxy_model(example, data_dir):
    """The example's schedule and rate on a one-pixel linear model."""
    with open(os.path.join(EXAMPLES, example + ".json")) as f:
        spec = json.load(f)
    train = spec["train"]
    optimizer = {"type": "sgd", "lr": train["optimizer"]["lr"]}
    return {
        "format": "tcc-model/1",
        "name": example + "_schedule",
        "input": {"shape": [1, 1, 1], "classes": 10},
        "graph": [{"name": "flatten", "op": "flatten"},
                  {"name": "fc", "op": "linear", "out_features": 10}],
        "loss": {"op": "cross_entropy"},
        "train": {"batch_size": train["batch_size"], "epochs": train["epochs"],
                  "drop_last": train.get("drop_last", True), "optimizer": optimizer,
                  "schedule": train["schedule"]},
        "data": {"format": "npy", "path": data_dir},
    }


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        print("FAILED: " + " ".join(cmd) + "\n" + p.stdout[-2000:] + p.stderr[-2000:])
        sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tcc", required=True)
    args = ap.parse_args()
    args.tcc = os.path.abspath(args.tcc)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        os.makedirs(data)
        rng = np.random.default_rng(0)
        np.save(os.path.join(data, "train_x.npy"),
                rng.integers(0, 256, (CIFAR10_TRAIN, 1, 1, 1), dtype=np.uint8))
        np.save(os.path.join(data, "train_y.npy"), rng.integers(0, 10, CIFAR10_TRAIN))
        np.save(os.path.join(data, "test_x.npy"), np.zeros((10, 1, 1, 1), np.uint8))
        np.save(os.path.join(data, "test_y.npy"), np.arange(10))
        for example, original in ORIGINALS.items():
            spec = proxy_model(example, data)
            model = os.path.join(tmp, example + ".json")
            with open(model, "w") as f:
                json.dump(spec, f)
            exe = os.path.join(tmp, example)
            run([args.tcc, "compile", model, "--target=cpu", "-o", exe], tmp)
            metrics = os.path.join(tmp, example + ".jsonl")
            run([exe, "--log-every", "1", "--metrics", metrics, "--quiet"], tmp)
            with open(metrics) as f:
                records = [json.loads(line) for line in f if line.strip()]
            tcc = {r["step"]: r["lr"] for r in records if r["type"] == "step"}
            spe = CIFAR10_TRAIN // spec["train"]["batch_size"]
            want = original(spe)
            errors = []
            for k, rate in enumerate(want):
                got = tcc.get(k + 1)
                if got is None or abs(got - rate) > 1e-6 * abs(rate) + 1e-12:
                    errors.append("step %d: tcc %r, original %r" % (k + 1, got, rate))
            if len(tcc) != len(want):
                errors.append("tcc ran %d steps, the original %d" % (len(tcc), len(want)))
            peak = max(range(len(want)), key=lambda k: want[k]) + 1
            print("%-10s %d steps (%d per epoch), peak at step %d: %s" %
                  (example, len(want), spe, peak,
                   "every step matches" if not errors else "%d mismatch" % len(errors)))
            for e in errors[:5]:
                print("  " + e)
            failures += len(errors)
    print("PASS" if not failures else "FAIL")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
