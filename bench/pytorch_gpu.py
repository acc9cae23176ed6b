#!/usr/bin/env python3
"""pytorch_gpu.py MODEL.json [--data DIR --epochs E | --steps N] [--compile MODE] [--json FILE]

PyTorch on a GPU, the anchor of issue 11: the network and recipe of
MODEL.json built by the code the parity tests use
(test/e2e/torch_reference.py: every optimizer, lookahead and EMA step the
tcc trainer takes), run as PyTorch users run it fast: channels_last,
cudnn.benchmark on, torch.autocast in the model's 16-bit type for
bf16-mixed and fp16-mixed (f32 otherwise, with PyTorch's default TF32 for
convolutions), torch.optim's multi-tensor updates, no host sync per step.
For fp16-mixed the loss is not scaled: that costs PyTorch nothing, so the
figure is, if anything, in its favour. --compile MODE wraps the model in
torch.compile(mode=MODE) ("max-autotune" in bench/run.sh); its first step,
compilation included, is reported as compile_seconds.

Two modes:
- --steps N (default): W warm-up steps, then N timed steps on random
  batches already on the device (a quick ratio; scripts/gpu-check.sh).
- --data DIR --epochs E: trains E epochs on the data set (the model's
  data.format: cifar10 binary batches or idx) with the recipe's
  augmentation on the device, evaluates the test set at the end (EMA
  weights and TTA views as the recipe says), and times every epoch with
  CUDA events (training only). Augmentation draws are independent per
  image ("balanced" draws are drawn independently too).

Prints one line and writes as JSON: ms per step and per epoch, images/s,
the peak device memory PyTorch allocated for the step (the data set's own
bytes excluded), training FLOPs per image (2 per multiply-add of every
convolution and linear layer, three passes: forward, and the backward's
data and weight gradients), and in the data mode the test accuracy.
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_reference as ref  # noqa: E402

AUTOCAST = {"bf16-mixed": torch.bfloat16, "fp16-mixed": torch.float16}


# --- data --------------------------------------------------------------------

def _read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def _idx(directory, stem):
    for name in (stem, stem + ".gz"):
        if os.path.exists(os.path.join(directory, name)):
            return _read_idx(os.path.join(directory, name))
    raise FileNotFoundError(f"{directory}: no {stem}[.gz]")


def load_data(spec, directory):
    """(train images, train labels, test images, test labels) as uint8 and
    int64 arrays, images [n, c, h, w], from the model's data format."""
    c, h, w = (int(d) for d in spec["input"]["shape"])
    fmt = spec["data"]["format"]
    if fmt == "cifar10":
        def batches(names):
            raw = np.concatenate([np.fromfile(os.path.join(directory, n), np.uint8)
                                  .reshape(-1, 1 + c * h * w) for n in names])
            return raw[:, 1:].reshape(-1, c, h, w), raw[:, 0].astype(np.int64)
        xtr, ytr = batches([f"data_batch_{i}.bin" for i in range(1, 6)])
        xte, yte = batches(["test_batch.bin"])
    elif fmt == "idx":
        xtr = _idx(directory, "train-images-idx3-ubyte").reshape(-1, c, h, w)
        ytr = _idx(directory, "train-labels-idx1-ubyte").astype(np.int64)
        xte = _idx(directory, "t10k-images-idx3-ubyte").reshape(-1, c, h, w)
        yte = _idx(directory, "t10k-labels-idx1-ubyte").astype(np.int64)
    else:
        raise ValueError(f"data.format {fmt}: the benchmark reads cifar10 and idx")
    # writable copies (torch.from_numpy warns about read-only buffers)
    return tuple(np.array(a) for a in (xtr, ytr, xte, yte))


class Augment:
    """The recipe's augmentation (docs/model-format.md) of a batch of raw
    pixels on the device: crop after padding, translate, flip (random or
    alternating by epoch), cutout; then normalisation."""

    def __init__(self, spec, n_train, device, generator):
        data = spec["data"]
        self.aug = data.get("augment") or {}
        norm = data.get("normalize") or {}
        c = int(spec["input"]["shape"][0])
        self.mean = torch.tensor(norm.get("mean", [0.0] * c), device=device).view(1, -1, 1, 1)
        self.std = torch.tensor(norm.get("std", [1.0] * c), device=device).view(1, -1, 1, 1)
        self.generator, self.device = generator, device
        # alternating flips: a random half in the first epoch, then each
        # image the other way every epoch (airbench).
        self.first_flip = torch.rand(n_train, generator=generator, device=device) < 0.5

    def normalize(self, raw):
        return (raw.float() / 255.0 - self.mean) / self.std

    def _shift(self, x, pad, reflect):
        """Each image's window at a random offset in [0, 2 pad] of the image
        padded by `pad` (a crop, or a translation by offset - pad)."""
        n, _, h, w = x.shape
        padded = F.pad(x, (pad,) * 4, mode="reflect" if reflect else "constant")
        oy = torch.randint(0, 2 * pad + 1, (n,), generator=self.generator, device=self.device)
        ox = torch.randint(0, 2 * pad + 1, (n,), generator=self.generator, device=self.device)
        rows = (oy[:, None] + torch.arange(h, device=self.device))[:, None, :, None]
        cols = (ox[:, None] + torch.arange(w, device=self.device))[:, None, None, :]
        index = torch.arange(n, device=self.device)[:, None, None, None]
        channels = torch.arange(x.shape[1], device=self.device)[None, :, None, None]
        return padded[index, channels, rows, cols]

    def __call__(self, raw, rows, epoch):
        x = self.normalize(raw)
        if not self.aug:
            return x
        reflect = self.aug.get("padding_mode") == "reflect"
        # A raw pixel 0 outside the image, as the trainer pads: -mean/std.
        zero = None if reflect else -self.mean / self.std
        for pad in (int(self.aug.get("random_crop_padding", 0)), int(self.aug.get("translate", 0))):
            if pad:
                x = self._shift(x - zero, pad, reflect) + zero if zero is not None else \
                    self._shift(x, pad, reflect)
        flip = self.aug.get("flip", False)
        if flip == "alternating":
            mask = self.first_flip[rows] ^ bool(epoch % 2)
        elif flip:
            mask = torch.rand(x.shape[0], generator=self.generator, device=self.device) < 0.5
        else:
            mask = None
        if mask is not None:
            x = torch.where(mask[:, None, None, None], x.flip(3), x)
        size = int(self.aug.get("cutout", 0))
        if size:
            n, _, h, w = x.shape
            cy = torch.randint(0, h, (n, 1, 1), generator=self.generator, device=self.device)
            cx = torch.randint(0, w, (n, 1, 1), generator=self.generator, device=self.device)
            ys = torch.arange(h, device=self.device)[None, :, None]
            xs = torch.arange(w, device=self.device)[None, None, :]
            inside = ((ys >= cy - size // 2) & (ys < cy - size // 2 + size) &
                      (xs >= cx - size // 2) & (xs < cx - size // 2 + size))
            fill = zero if zero is not None else -self.mean / self.std
            x = torch.where(inside[:, None], fill.expand_as(x), x)
        return x


def tta_logits(model, spec, x):
    """The logits averaged over the recipe's TTA views (docs/model-format.md)."""
    ev = spec.get("eval") or {}
    views = ev.get("tta") or []
    shifted = [(x, 1.0)]
    if "translate" in views:
        t = int(ev.get("translate", 2))
        padded = F.pad(x, (t,) * 4, mode="reflect")
        h, w = x.shape[2:]
        shifted = [(x, 0.5), (padded[:, :, 0:h, 0:w], 0.25),
                   (padded[:, :, 2 * t:2 * t + h, 2 * t:2 * t + w], 0.25)]
    out = 0
    for view, weight in shifted:
        logits = model(view)
        if "flip" in views:
            logits = 0.5 * (logits + model(view.flip(3)))
        out = out + weight * logits
    return out


# --- FLOPs -------------------------------------------------------------------

def flops_per_image(model, spec, device):
    """Training FLOPs per image: 2 per multiply-add of every convolution and
    linear layer, times 3 (forward, data gradient, weight gradient)."""
    total = [0]

    def conv_hook(m, inputs, out):
        k = m.weight.shape[1] * m.weight.shape[2] * m.weight.shape[3]
        total[0] += 2 * out.numel() * k

    def linear_hook(m, inputs, out):
        total[0] += 2 * out.numel() * m.weight.shape[1]

    hooks = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, torch.nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
    with torch.no_grad():
        model.eval()
        model(torch.zeros([2] + [int(d) for d in spec["input"]["shape"]], device=device))
        model.train()
    for h in hooks:
        h.remove()
    return 3 * total[0] // 2


# --- runs --------------------------------------------------------------------

def _setup(spec, device, compile_mode, steps_per_epoch, total_steps):
    shape = [int(d) for d in spec["input"]["shape"]]
    torch.backends.cudnn.benchmark = True
    model = ref.TccModel(spec).to(device)
    if len(shape) == 3:
        model = model.to(memory_format=torch.channels_last)
    trainer = ref.Trainer(model, spec, steps_per_epoch=steps_per_epoch,
                          total_steps=total_steps, fast=True)
    trainer.amp = False  # fp16-mixed: no loss scaling (module docstring)
    flops = flops_per_image(model, spec, device)
    if compile_mode:
        # The forward compiled in place: the module keeps its state_dict
        # names, which the trainer's EMA and Lookahead copies use.
        model.forward = torch.compile(model.forward, mode=compile_mode)
    return model, trainer, flops


class Clock:
    """Seconds between two marks: CUDA events on a GPU, the host's clock
    otherwise (the CPU test of this script)."""

    def __init__(self, device):
        self.gpu = device == "cuda"

    def mark(self):
        if self.gpu:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def seconds(self, a, b):
        if self.gpu:
            b.synchronize()
            return a.elapsed_time(b) / 1000.0
        return b - a


def measure(spec, steps, warmup, device, compile_mode=None):
    """The quick mode: timed steps on random batches."""
    batch = int(spec["train"]["batch_size"]) * int(spec["train"].get("accumulate", 1))
    shape = [int(d) for d in spec["input"]["shape"]]
    classes = int(spec["input"].get("classes", 10))
    precision = spec["train"].get("precision", "fp32")
    model, trainer, flops = _setup(spec, device, compile_mode, max(1, 50000 // batch), 100000)
    generator = torch.Generator(device=device).manual_seed(0)
    count = min(steps + warmup, 8)  # batches cycled through
    images = [torch.randn([batch] + shape, generator=generator, device=device)
              for _ in range(count)]
    if len(shape) == 3:
        images = [b.contiguous(memory_format=torch.channels_last) for b in images]
    labels = torch.randint(0, classes, (count, batch), generator=generator, device=device)
    autocast = AUTOCAST.get(precision)
    clock = Clock(device)

    def step(s):
        with torch.autocast(device_type=device, dtype=autocast, enabled=autocast is not None):
            trainer.step(images[s % count], labels[s % count])

    t0 = clock.mark()
    step(0)
    compile_seconds = clock.seconds(t0, clock.mark())
    for s in range(1, warmup):
        step(s)
    on_gpu = device == "cuda"
    if on_gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated() if on_gpu else 0
    start = clock.mark()
    for s in range(warmup, warmup + steps):
        step(s)
    seconds = clock.seconds(start, clock.mark())
    return {"mode": "random batches", "precision": precision, "batch": batch, "steps": steps,
            "warmup": warmup, "ms_per_step": 1000 * seconds / steps,
            "images_per_second": steps * batch / seconds,
            "compile_seconds": compile_seconds if compile_mode else None,
            "flops_per_image": flops,
            "peak_memory_bytes": torch.cuda.max_memory_allocated() - base if on_gpu else None}


def train_on_data(spec, data, epochs, device, compile_mode=None, train_samples=None):
    """The data mode: E epochs of the recipe, then the test accuracy."""
    xtr, ytr, xte, yte = data
    if train_samples:
        xtr, ytr = xtr[:train_samples], ytr[:train_samples]
    train = spec["train"]
    batch = int(train["batch_size"]) * int(train.get("accumulate", 1))
    steps_per_epoch = len(xtr) // batch  # drop_last, as the examples
    if steps_per_epoch < 1:
        raise ValueError(f"{len(xtr)} training images: fewer than one batch of {batch}")
    total_steps = int(np.ceil(epochs * steps_per_epoch))
    precision = train.get("precision", "fp32")
    autocast = AUTOCAST.get(precision)
    model, trainer, flops = _setup(spec, device, compile_mode, steps_per_epoch, total_steps)
    seed = int(train.get("seed", 0))
    generator = torch.Generator(device=device).manual_seed(seed)
    on_gpu = device == "cuda"
    # The data set lives on the device, as the tcc trainer keeps it.
    xtr_d, ytr_d = torch.from_numpy(xtr).to(device), torch.from_numpy(ytr).to(device)
    augment = Augment(spec, len(xtr), device, generator)
    if on_gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated() if on_gpu else 0
    clock = Clock(device)
    epoch_seconds, compile_seconds, step = [], None, 0
    channels_last = len(xtr.shape) == 4
    for epoch in range(int(np.ceil(epochs))):
        order = torch.randperm(len(xtr), generator=generator, device=device)
        start = clock.mark()
        for b in range(steps_per_epoch):
            if step == total_steps:
                break
            rows = order[b * batch:(b + 1) * batch]
            x = augment(xtr_d[rows], rows, epoch)
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            t0 = clock.mark() if step == 0 else None
            with torch.autocast(device_type=device, dtype=autocast, enabled=autocast is not None):
                trainer.step(x, ytr_d[rows])
            if step == 0:
                compile_seconds = clock.seconds(t0, clock.mark())
            step += 1
        epoch_seconds.append(clock.seconds(start, clock.mark()))
    peak = torch.cuda.max_memory_allocated() - base if on_gpu else None
    # Evaluation: the EMA weights when the recipe keeps them, TTA views.
    if trainer.ema_spec:
        state = model.state_dict()
        with torch.no_grad():
            for n, t in trainer.ema.items():
                state[n].copy_(t)
    model.eval()
    correct, eval_batch = 0, int((spec.get("eval") or {}).get("batch_size", batch))
    with torch.no_grad(), torch.autocast(device_type=device, dtype=autocast,
                                         enabled=autocast is not None):
        for i in range(0, len(xte), eval_batch):
            x = augment.normalize(torch.from_numpy(xte[i:i + eval_batch]).to(device))
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            logits = tta_logits(model, spec, x)
            labels = torch.from_numpy(yte[i:i + eval_batch]).to(device)
            correct += int((logits.argmax(1) == labels).sum())
    later = epoch_seconds[1:] or epoch_seconds
    epoch_s = statistics.median(later)
    return {"mode": "data", "precision": precision, "batch": batch, "epochs": epochs,
            "steps": total_steps, "steps_per_epoch": steps_per_epoch,
            "epoch_seconds": epoch_seconds, "ms_per_epoch": 1000 * epoch_s,
            "ms_per_step": 1000 * epoch_s / steps_per_epoch,
            "images_per_second": steps_per_epoch * batch / epoch_s,
            "compile_seconds": compile_seconds if compile_mode else None,
            "flops_per_image": flops, "peak_memory_bytes": peak,
            "test_accuracy": correct / len(xte)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("model")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--data", help="train on this data set (the model's data.format)")
    parser.add_argument("--epochs", type=float, help="with --data (default: the recipe's)")
    parser.add_argument("--train-samples", type=int, help="with --data: the first N only")
    parser.add_argument("--precision", choices=["fp32", "bf16-mixed", "fp16-mixed"],
                        help="instead of the recipe's")
    parser.add_argument("--compile", metavar="MODE",
                        help="torch.compile(mode=MODE), e.g. max-autotune")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--json")
    args = parser.parse_args()
    with open(args.model) as f:
        spec = json.load(f)
    if args.precision:
        spec["train"]["precision"] = args.precision
    if args.data:
        result = train_on_data(spec, load_data(spec, args.data),
                               args.epochs or float(spec["train"].get("epochs", 1)),
                               args.device, args.compile, args.train_samples)
    else:
        result = measure(spec, args.steps, args.warmup, args.device, args.compile)
    on_gpu = args.device == "cuda"
    result.update(model=args.model, compile_mode=args.compile, torch=torch.__version__,
                  cudnn=torch.backends.cudnn.version() if on_gpu else None,
                  gpu=torch.cuda.get_device_name() if on_gpu else None)
    line = "pytorch %s %s: %.1f img/s, %.2f ms/step" % (
        "torch.compile(%s)" % args.compile if args.compile else "eager",
        os.path.basename(args.model), result["images_per_second"], result["ms_per_step"])
    if "test_accuracy" in result:
        line += ", test accuracy %.4f" % result["test_accuracy"]
    print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
