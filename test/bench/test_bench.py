#!/usr/bin/env python3
"""The benchmark's PyTorch side and table, on the CPU (bench/pytorch_gpu.py,
bench/bench.py; the GPU runs them for real).

- The augmentation: every crop is a window of the padded image (zero fill
  as a raw pixel 0, or reflection), alternating flips turn every image the
  other way each epoch, normalisation is the recipe's.
- The TTA views average as docs/model-format.md says.
- The data mode trains on Fashion-MNIST (a few hundred images) and writes
  every field the table reads; bench.py's table renders it, an error row too.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
try:
    import torch  # noqa: E402
except ImportError:  # as the e2e tests: skipped without Debian's python3-torch
    print("SKIP: no torch for /usr/bin/python3")
    sys.exit(77)
import torch.nn.functional as F  # noqa: E402
import bench  # noqa: E402
import pytorch_gpu  # noqa: E402

FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL: " + what)


def spec_with(augment, normalize=None):
    return {"input": {"shape": [2, 6, 5], "classes": 3},
            "data": {"augment": augment, "normalize": normalize or {"mean": [0.5, 0.25],
                                                                    "std": [0.5, 2.0]}}}


def test_augment():
    g = torch.Generator().manual_seed(3)
    raw = torch.randint(1, 256, (16, 2, 6, 5), generator=g, dtype=torch.uint8)
    for mode in ("zeros", "reflect"):
        spec = spec_with({"random_crop_padding": 2, "padding_mode": mode})
        aug = pytorch_gpu.Augment(spec, 16, "cpu", g)
        out = aug(raw, torch.arange(16), 0)
        x = raw.float()
        padded = F.pad(x, (2,) * 4, mode="reflect" if mode == "reflect" else "constant")
        norm = aug.normalize(padded.to(torch.uint8) if mode == "zeros" else padded)
        for i in range(16):
            found = any(torch.allclose(out[i], norm[i, :, oy:oy + 6, ox:ox + 5])
                        for oy in range(5) for ox in range(5))
            check(found, f"{mode} crop of image {i} is no window of the padded image")
    spec = spec_with({"flip": "alternating"})
    aug = pytorch_gpu.Augment(spec, 16, "cpu", g)
    rows = torch.arange(16)
    a, b = aug(raw, rows, 0), aug(raw, rows, 1)
    plain = aug.normalize(raw)
    for i in range(16):
        flipped = [torch.equal(v[i], plain[i].flip(2)) for v in (a, b)]
        check(flipped[0] != flipped[1], f"image {i} is not flipped the other way in epoch 1")
    check(torch.allclose(plain[0, 1], (raw[0, 1].float() / 255 - 0.25) / 2.0),
          "normalisation is not (x / 255 - mean) / std")


def test_tta():
    class Sum(torch.nn.Module):  # logits that see the view's position
        def forward(self, x):
            return torch.stack([x[:, 0, 0, 0], x[:, 0, -1, -1]], 1)
    x = torch.arange(2 * 1 * 4 * 4, dtype=torch.float32).view(2, 1, 4, 4)
    spec = {"eval": {"tta": ["flip"]}}
    want = 0.5 * (Sum()(x) + Sum()(x.flip(3)))
    check(torch.allclose(pytorch_gpu.tta_logits(Sum(), spec, x), want), "flip TTA")
    spec = {"eval": {"tta": ["translate"], "translate": 1}}
    p = F.pad(x, (1,) * 4, mode="reflect")
    want = 0.5 * Sum()(x) + 0.25 * Sum()(p[:, :, 0:4, 0:4]) + 0.25 * Sum()(p[:, :, 2:6, 2:6])
    check(torch.allclose(pytorch_gpu.tta_logits(Sum(), spec, x), want), "translate TTA")


def test_data_mode_and_table():
    data = "/usr/share/datasets/fashion-mnist"
    if not os.path.isdir(data):
        print("SKIP data mode: no Fashion-MNIST")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "pt.json")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "pytorch_gpu.py"),
                            os.path.join(ROOT, "examples", "fashion_cnn.json"), "--device", "cpu",
                            "--data", data, "--epochs", "2", "--train-samples", "768",
                            "--json", out], capture_output=True, text=True)
        check(r.returncode == 0, "pytorch_gpu.py --data: " + r.stderr[-2000:])
        if r.returncode != 0:
            return
        with open(out) as f:
            result = json.load(f)
        check(result["steps"] == 6 and len(result["epoch_seconds"]) == 2, "3 steps per epoch")
        check(0 <= result["test_accuracy"] <= 1, "accuracy")
        check(result["ms_per_epoch_min"] <= result["ms_per_epoch"] <= result["ms_per_epoch_max"]
              and result["end_to_end_seconds"] > sum(result["epoch_seconds"]),
              "the epochs' spread and the time end to end")
        # fashion_cnn's 3x3 convolutions: 1->16 and 16->32 at 28x28, two 32->32
        # and 32->64 at 14x14; the 64->10 linear. 2 FLOPs per multiply-add,
        # three passes.
        macs = (28 * 28 * 9 * (16 * 1 + 32 * 16) + 14 * 14 * 9 * (2 * 32 * 32 + 64 * 32) +
                64 * 10)
        check(result["flops_per_image"] in (6 * macs,), f"FLOPs per image "
              f"{result['flops_per_image']}, counted by hand {6 * macs}")
        # The run's own keys over the PyTorch JSON's (its `epochs` among them:
        # merging them as keyword arguments failed on the first GPU run).
        entry = bench.row_entry(result, "fashion_cnn", "pytorch-eager", "real", 2.0)
        check(entry["epochs"] == 2.0 and entry["steps"] == 6, "a row's keys")
        rows = [entry,
                dict(model="fashion_cnn", row="tcc-bf16", data="real", error="exit 1: x")]
        text = bench.table({"rows": rows})
        check("| fashion_cnn | pytorch-eager | real |" in text and "1.00x" in text,
              "the table's eager row:\n" + text)
        check("error: exit 1" in text, "the table's error row")


def fast_matches_reference(name, batch, steps, precision=None):
    """The benchmark's fast PyTorch (myrtle.ai's ghost batch norm, foreach
    updates of update-momentum SGD, Lookahead and EMA) takes the parity
    trainer's steps: the same parameters after `steps` steps, in float64,
    where the reference's ghost groups are the strided ones the fast form
    takes."""
    sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
    import torch_reference as ref
    with open(os.path.join(ROOT, "examples", name + ".json")) as f:
        spec = json.load(f)
    spec["train"]["batch_size"] = batch
    spec["train"]["precision"] = "fp32"
    for node in spec["graph"]:
        init = (node.get("weight") or {}).get("init") if isinstance(node.get("weight"),
                                                                     dict) else None
        if node.get("out_channels") and init != "patch_whitening":
            node["out_channels"] = max(4, node["out_channels"] // 8)  # quick in float64
        if node.get("ghost_batch"):
            node["ghost_batch"] = batch // 4
            node["ghost_grouping"] = "strided"
    g = torch.Generator().manual_seed(1)
    shape = [int(d) for d in spec["input"]["shape"]]
    xs = torch.randn([steps, batch] + shape, generator=g, dtype=torch.float64)
    ys = torch.randint(0, int(spec["input"]["classes"]), (steps, batch), generator=g)
    finals = []
    for fast in (False, True):
        torch.manual_seed(0)
        model = ref.TccModel(spec).double()
        if fast:
            ref.use_fast_ghost_norm(model, batch)
        trainer = ref.Trainer(model, spec, steps_per_epoch=steps, total_steps=steps, fast=fast)
        for s in range(steps):
            trainer.step(xs[s], ys[s])
        def collapsed(n, t):  # a fast ghost norm's running statistics per group
            splits = getattr(model.get_submodule(n.rsplit(".", 1)[0]), "fast_splits", 0)
            return t.view(splits, -1).mean(0) if splits and "running" in n else t
        state = {n: collapsed(n, t) for n, t in trainer.model_state().items()}
        state.update({"ema:" + n: collapsed(n, t) for n, t in trainer.ema.items()})
        finals.append(state)
    worst = max(float((finals[0][n] - finals[1][n]).abs().max() /
                      (finals[0][n].abs().max() + 1e-30)) for n in finals[0])
    check(worst < 1e-9, f"{name}: the fast PyTorch's step differs from the parity "
          f"trainer's by {worst:.2e} of a tensor's max")


def test_fast_trainer():
    fast_matches_reference("resnet9", 16, 3)      # ghost batch norm, update momentum
    fast_matches_reference("airbench94", 16, 5)   # Lookahead (every 5), whitening
    fast_matches_reference("fashion_cnn", 16, 5)  # ghost batch norm, EMA (every 5)


def test_attention_flops():
    """The FLOP count sees nn.MultiheadAttention's projections and products
    (it calls F.linear, so no Linear hook does): mha_tokens, counted by
    hand (self-attention over 9 tokens, cross-attention from 9 to 4, E 8)."""
    import torch_reference
    with open(os.path.join(ROOT, "test", "e2e", "models", "mha_tokens.json")) as f:
        spec = json.load(f)
    model = torch_reference.TccModel(spec)
    convs = 2 * 9 * 8 * (3 * 4 * 4) + 2 * 4 * 8 * (3 * 6 * 6)
    self_attention = 2 * 9 * 8 * 8 * 3 + 2 * 9 * 8 * 8 + 2 * 2 * 9 * 9 * 8
    cross_attention = 2 * 9 * 8 * 8 + 2 * 4 * 8 * 8 * 2 + 2 * 9 * 8 * 8 + 2 * 2 * 9 * 4 * 8
    mlp_and_head = 2 * 9 * 16 * 8 + 2 * 9 * 8 * 16 + 2 * 10 * 8
    expected = 3 * (convs + self_attention + cross_attention + mlp_and_head)
    counted = pytorch_gpu.flops_per_image(model, spec, "cpu")
    check(counted == expected, f"mha_tokens: {counted} FLOPs per image counted, {expected} "
          "by hand")


def main():
    test_attention_flops()
    test_fast_trainer()
    test_augment()
    test_tta()
    test_data_mode_and_table()
    print("FAIL" if FAILURES else "PASS")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
