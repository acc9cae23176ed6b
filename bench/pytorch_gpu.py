#!/usr/bin/env python3
"""pytorch_gpu.py MODEL.json [--data DIR --epochs E | --steps N] [--precision P]
                 [--compile MODE] [--memory-format F] [--profile-steps K] [--json FILE]

PyTorch on a GPU, the anchor of issues 11 and 36: the network and recipe of
MODEL.json built by the code the parity tests use
(test/e2e/torch_reference.py: every optimizer, lookahead and EMA step the
tcc trainer takes), run as the fastest PyTorch its authors write
(docs/performance.md, "Baseline audit"):
- channels_last (--memory-format contiguous: NCHW, as myrtle.ai's
  ResNet-9 ran), cudnn.benchmark on;
- bf16-mixed and fp16-mixed under torch.autocast; pure fp16 and bf16 as
  airbench94 and ResNet-9's originals train: the convolutions and linear
  layers' parameters in 16 bits (`.half()`), batch norms in f32 reading
  16-bit activations, the logits widened for the loss; f32 otherwise, with
  PyTorch's default TF32 for convolutions;
- ghost batch norm as one batch_norm over the batch viewed as
  (-1, C * splits, H, W) (myrtle.ai's GhostBatchNorm;
  torch_reference.use_fast_ghost_norm);
- torch.optim's multi-tensor (foreach) updates, torch._foreach_* for
  update-momentum SGD, Lookahead and EMA, no host sync per step;
- the augmentation of a whole epoch at its start, over the data set
  resident on the device (as airbench's loader), inside the epoch's time;
- a whitening layer initialised from the training images.
For fp16-mixed the loss is not scaled: that costs PyTorch nothing, so the
figure is, if anything, in its favour. --compile MODE wraps the model's
forward in torch.compile(mode=MODE) ("max-autotune" in bench/run.sh); its
first step, compilation included, is reported as compile_seconds; the
evaluation runs the eager forward (no recompilation per batch size).

Two modes:
- --steps N (default): W warm-up steps, then N timed steps on random
  batches already on the device (a quick ratio; scripts/gpu-check.sh).
- --data DIR --epochs E: trains E epochs on the data set (the model's
  data.format: cifar10 binary batches or idx) with the recipe's
  augmentation on the device, evaluates the test set at the end (EMA
  weights and TTA views as the recipe says), and times every epoch with
  CUDA events (training only). Augmentation draws are independent per
  image ("balanced" draws are drawn independently too).

Prints one line and writes as JSON: ms per step and per epoch (the median
epoch after the first, and the least and most), images/s, the peak device
memory PyTorch allocated for the step (the data set's own bytes and the
epoch's augmented copy excluded), training FLOPs per image (2 per
multiply-add of every convolution and linear layer, three passes: forward,
and the backward's data and weight gradients), in the data mode the test
accuracy and the seconds end to end (data read, model and whitening built,
every epoch, the evaluation; the Python interpreter's start and `import
torch` excluded), and with --profile-steps K the kernels launched per
training step over K steps (torch.profiler) and the ten that took longest.
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
PURE = {"fp16": torch.float16, "bf16": torch.bfloat16}
STARTED = time.perf_counter()


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

def flops_per_image(model, spec, device, dtype=torch.float32):
    """Training FLOPs per image: 2 per multiply-add of every convolution,
    linear layer and attention product, times 3 (forward, data gradient,
    weight gradient; an attention product's two data gradients)."""
    total = [0]

    def conv_hook(m, inputs, out):
        k = m.weight.shape[1] * m.weight.shape[2] * m.weight.shape[3]
        total[0] += 2 * out.numel() * k

    def linear_hook(m, inputs, out):
        total[0] += 2 * out.numel() * m.weight.shape[1]

    def attention_hook(m, inputs, out):
        # batch_first: [N, T, E] queries, [N, S, E] keys and values. The
        # module calls F.linear on its weights, so no Linear hook sees them:
        # the q, k, v and out projections, Q K^T and P V.
        n, t, e = inputs[0].shape
        s = inputs[1].shape[1]
        total[0] += 2 * n * (2 * t * e * e + 2 * s * e * e + 2 * t * s * e)

    hooks = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, torch.nn.MultiheadAttention):
            hooks.append(m.register_forward_hook(attention_hook))
        elif isinstance(m, torch.nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
    with torch.no_grad():
        model.eval()
        model(torch.zeros([2] + [int(d) for d in spec["input"]["shape"]], device=device,
                          dtype=dtype))
        model.train()
    for h in hooks:
        h.remove()
    return 3 * total[0] // 2


# --- runs --------------------------------------------------------------------

class Setup:
    """The model, its trainer and how a batch enters them, for the recipe's
    precision (module docstring)."""

    def __init__(self, spec, device, compile_mode, memory_format, steps_per_epoch,
                 total_steps, init_images=None):
        shape = [int(d) for d in spec["input"]["shape"]]
        self.precision = spec["train"].get("precision", "fp32")
        self.autocast = AUTOCAST.get(self.precision)
        pure = PURE.get(self.precision)
        self.input_dtype = pure or torch.float32
        self.device = device
        torch.backends.cudnn.benchmark = True
        # Built on the host, where the whitening layer is computed from the
        # images, then moved.
        model = ref.TccModel(spec, init_images=init_images).to(device)
        ref.use_fast_ghost_norm(model, int(spec["train"]["batch_size"]))
        if pure:
            for m in model.modules():
                if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
                    m.to(pure)
        self.channels_last = len(shape) == 3 and memory_format != "contiguous"
        if self.channels_last:
            model = model.to(memory_format=torch.channels_last)
        self.trainer = ref.Trainer(model, spec, steps_per_epoch=steps_per_epoch,
                                   total_steps=total_steps, fast=True)
        self.trainer.amp = False  # fp16-mixed: no loss scaling (module docstring)
        self.flops = flops_per_image(model, spec, device, self.input_dtype)
        eager = model.forward
        # The loss of pure 16-bit logits in f32, as the originals' criterion
        # gets them (a [batch, classes] cast).
        self.eager = (lambda x: eager(x).float()) if pure else eager
        # The forward compiled in place: the module keeps its state_dict
        # names, which the trainer's EMA and Lookahead copies use.
        model.forward = torch.compile(self.eager, mode=compile_mode) if compile_mode \
            else self.eager
        self.compiled = model.forward
        self.model = model

    def batch(self, x):
        """A batch of normalised images as the model reads it."""
        x = x.to(self.input_dtype)
        return x.contiguous(memory_format=torch.channels_last) if self.channels_last else x

    def step(self, x, y):
        with torch.autocast(device_type=self.device, dtype=self.autocast,
                            enabled=self.autocast is not None):
            return self.trainer.step(x, y)

    def evaluating(self):
        """The eager forward for the evaluation (no recompilation per batch
        size); returns the autocast context to evaluate under."""
        self.model.forward = self.eager
        self.model.eval()
        return torch.autocast(device_type=self.device, dtype=self.autocast,
                              enabled=self.autocast is not None)


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


def kernel_profile(step, steps):
    """Kernels per training step over `steps` calls of step(s) (torch.profiler;
    memory copies and sets counted apart) and the ten that took longest."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for s in range(steps):
            step(s)
        torch.cuda.synchronize()
    kernels, copies, by_name = 0, 0, {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = next((float(getattr(e, a)) for a in ("device_time", "cuda_time", "time_range")
                   if isinstance(getattr(e, a, None), (int, float))), 0.0)
        if e.name.startswith(("Memcpy", "Memset")):
            copies += 1
            continue
        kernels += 1
        entry = by_name.setdefault(e.name, [0, 0.0])
        entry[0] += 1
        entry[1] += us
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:10]
    return {"steps": steps, "kernels_per_step": kernels / steps,
            "copies_per_step": copies / steps,
            "top_kernels": [{"name": n[:160], "per_step": c / steps, "us_per_step": t / steps}
                            for n, (c, t) in top]}


def spread(seconds):
    """The epochs after the first (warm-up): median, least and most."""
    later = seconds[1:] or seconds
    return statistics.median(later), min(later), max(later)


def measure(spec, steps, warmup, device, compile_mode=None, memory_format="auto"):
    """The quick mode: timed steps on random batches."""
    batch = int(spec["train"]["batch_size"]) * int(spec["train"].get("accumulate", 1))
    shape = [int(d) for d in spec["input"]["shape"]]
    classes = int(spec["input"].get("classes", 10))
    setup = Setup(spec, device, compile_mode, memory_format, max(1, 50000 // batch), 100000)
    generator = torch.Generator(device=device).manual_seed(0)
    count = min(steps + warmup, 8)  # batches cycled through
    images = [setup.batch(torch.randn([batch] + shape, generator=generator, device=device))
              for _ in range(count)]
    labels = torch.randint(0, classes, (count, batch), generator=generator, device=device)
    clock = Clock(device)

    def step(s):
        setup.step(images[s % count], labels[s % count])

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
    return {"mode": "random batches", "precision": setup.precision, "batch": batch,
            "steps": steps, "warmup": warmup, "ms_per_step": 1000 * seconds / steps,
            "images_per_second": steps * batch / seconds,
            "compile_seconds": compile_seconds if compile_mode else None,
            "flops_per_image": setup.flops,
            "peak_memory_bytes": torch.cuda.max_memory_allocated() - base if on_gpu else None}


def whitening_images(spec, augment, xtr):
    """The normalised training images a patch_whitening init reads (its
    `images` count, 5000 by default), on the host; None without one."""
    inits = [v.get("init") for node in spec["graph"] for v in node.values()
             if isinstance(v, dict)]
    counts = [int(i.get("images", 5000)) if isinstance(i, dict) else 5000
              for i in inits if i == "patch_whitening" or
              (isinstance(i, dict) and i.get("type") == "patch_whitening")]
    if not counts:
        return None
    raw = torch.from_numpy(xtr[:max(counts)]).to(augment.mean.device)
    return augment.normalize(raw).cpu()


def train_on_data(spec, data, epochs, device, compile_mode=None, train_samples=None,
                  memory_format="auto", profile_steps=0):
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
    seed = int(train.get("seed", 0))
    generator = torch.Generator(device=device).manual_seed(seed)
    on_gpu = device == "cuda"
    # The data set lives on the device, as the tcc trainer keeps it.
    xtr_d, ytr_d = torch.from_numpy(xtr).to(device), torch.from_numpy(ytr).to(device)
    augment = Augment(spec, len(xtr), device, generator)
    setup = Setup(spec, device, compile_mode, memory_format, steps_per_epoch, total_steps,
                  whitening_images(spec, augment, xtr))
    shape = [len(xtr)] + list(xtr.shape[1:])
    epoch_set = torch.empty(shape, dtype=setup.input_dtype, device=device)
    if setup.channels_last:
        epoch_set = epoch_set.contiguous(memory_format=torch.channels_last)
    if on_gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated() if on_gpu else 0
    clock = Clock(device)
    epoch_seconds, compile_seconds, step = [], None, 0
    for epoch in range(int(np.ceil(epochs))):
        start = clock.mark()
        # The epoch's augmented images at once (airbench's loader), in
        # chunks that bound the float temporaries.
        order = torch.randperm(len(xtr), generator=generator, device=device)
        for i in range(0, len(xtr), 10000):
            rows = order[i:i + 10000]
            epoch_set[i:i + len(rows)].copy_(augment(xtr_d[rows], rows, epoch))
        labels = ytr_d[order]
        for b in range(steps_per_epoch):
            if step == total_steps:
                break
            t0 = clock.mark() if step == 0 else None
            setup.step(epoch_set[b * batch:(b + 1) * batch], labels[b * batch:(b + 1) * batch])
            if step == 0:
                compile_seconds = clock.seconds(t0, clock.mark())
            step += 1
        epoch_seconds.append(clock.seconds(start, clock.mark()))
    peak = torch.cuda.max_memory_allocated() - base if on_gpu else None
    # Evaluation: the EMA weights when the recipe keeps them, TTA views.
    trainer, model = setup.trainer, setup.model
    if trainer.ema_spec:
        state = model.state_dict()
        with torch.no_grad():
            for n, t in trainer.ema.items():
                state[n].copy_(t)
    correct, eval_batch = 0, int((spec.get("eval") or {}).get("batch_size", batch))
    with torch.no_grad(), setup.evaluating():
        for i in range(0, len(xte), eval_batch):
            x = setup.batch(augment.normalize(torch.from_numpy(xte[i:i + eval_batch]).to(device)))
            logits = tta_logits(model, spec, x)
            labels = torch.from_numpy(yte[i:i + eval_batch]).to(device)
            correct += int((logits.argmax(1) == labels).sum())
    end_to_end = time.perf_counter() - STARTED
    epoch_s, fastest, slowest = spread(epoch_seconds)
    result = {"mode": "data", "precision": setup.precision, "batch": batch, "epochs": epochs,
              "steps": total_steps, "steps_per_epoch": steps_per_epoch,
              "memory_format": "channels_last" if setup.channels_last else "contiguous",
              "epoch_seconds": epoch_seconds, "ms_per_epoch": 1000 * epoch_s,
              "ms_per_epoch_min": 1000 * fastest, "ms_per_epoch_max": 1000 * slowest,
              "ms_per_step": 1000 * epoch_s / steps_per_epoch,
              "images_per_second": steps_per_epoch * batch / epoch_s,
              "compile_seconds": compile_seconds if compile_mode else None,
              "end_to_end_seconds": end_to_end,
              "flops_per_image": setup.flops, "peak_memory_bytes": peak,
              "test_accuracy": correct / len(xte)}
    if profile_steps and on_gpu:
        # After the evaluation, on the last epoch's batches: what a step
        # launches, Lookahead's and EMA's steps among them.
        setup.model.forward = setup.compiled
        try:
            result["profile"] = kernel_profile(
                lambda s: setup.step(epoch_set[(s % steps_per_epoch) * batch:][:batch],
                                     labels[(s % steps_per_epoch) * batch:][:batch]),
                profile_steps)
        except Exception as e:  # the profile is an addition: the row stands
            result["profile"] = {"error": repr(e)[:500]}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("model")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--data", help="train on this data set (the model's data.format)")
    parser.add_argument("--epochs", type=float, help="with --data (default: the recipe's)")
    parser.add_argument("--train-samples", type=int, help="with --data: the first N only")
    parser.add_argument("--precision", choices=["fp32", "bf16-mixed", "fp16-mixed", "bf16",
                                                "fp16"],
                        help="instead of the recipe's")
    parser.add_argument("--compile", metavar="MODE",
                        help="torch.compile(mode=MODE), e.g. max-autotune")
    parser.add_argument("--memory-format", choices=["auto", "contiguous"], default="auto",
                        help="auto: channels_last for images (default); contiguous: NCHW")
    parser.add_argument("--profile-steps", type=int, default=0,
                        help="with --data on a GPU: count the kernels of K more steps")
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
                               args.device, args.compile, args.train_samples,
                               args.memory_format, args.profile_steps)
    else:
        result = measure(spec, args.steps, args.warmup, args.device, args.compile,
                         args.memory_format)
    on_gpu = args.device == "cuda"
    result.update(model=args.model, compile_mode=args.compile, torch=torch.__version__,
                  cudnn=torch.backends.cudnn.version() if on_gpu else None,
                  gpu=torch.cuda.get_device_name() if on_gpu else None)
    line = "pytorch %s %s %s: %.1f img/s, %.2f ms/step" % (
        "torch.compile(%s)" % args.compile if args.compile else "eager",
        os.path.basename(args.model), result["precision"], result["images_per_second"],
        result["ms_per_step"])
    if "test_accuracy" in result:
        line += ", test accuracy %.4f" % result["test_accuracy"]
    print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
