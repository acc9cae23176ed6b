#!/usr/bin/env python3
"""pytorch_gpu.py MODEL.json [--steps N] [--warmup W] [--json FILE] [--device cuda]

PyTorch eager on a GPU, the anchor of issue 11: the network and recipe of
MODEL.json built by the code the parity tests use
(test/e2e/torch_reference.py: every optimizer, lookahead and EMA step the
tcc trainer takes), run as PyTorch users run it fast: channels_last,
cudnn.benchmark on, torch.autocast in the model's 16-bit type for
bf16-mixed and fp16-mixed (f32 otherwise, with PyTorch's default TF32 for
convolutions). For fp16-mixed the loss is not scaled: that costs PyTorch
nothing, so the figure is, if anything, in its favour.

Trains W warm-up steps, then N timed steps on batches of random data of
the model's input shape already on the device, timed with CUDA events
around the N steps (Trainer.step reads the loss once per step, a host sync
PyTorch training loops usually have too). Prints and writes as JSON:
images/s, ms per step, and the peak device memory PyTorch allocated.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e"))
import torch  # noqa: E402
import torch_reference as ref  # noqa: E402

AUTOCAST = {"bf16-mixed": torch.bfloat16, "fp16-mixed": torch.float16}


def measure(spec, steps, warmup, device):
    batch = int(spec["train"]["batch_size"]) * int(spec["train"].get("accumulate", 1))
    shape = [int(d) for d in spec["input"]["shape"]]
    classes = int(spec["input"].get("classes", 10))
    precision = spec["train"].get("precision", "fp32")
    torch.backends.cudnn.benchmark = True
    model = ref.TccModel(spec).to(device)
    if len(shape) == 3:
        model = model.to(memory_format=torch.channels_last)
    trainer = ref.Trainer(model, spec, steps_per_epoch=max(1, 50000 // batch),
                          total_steps=100000)
    trainer.amp = False  # fp16-mixed: no loss scaling (module docstring)
    generator = torch.Generator(device=device).manual_seed(0)
    count = min(steps + warmup, 8)  # batches cycled through
    images = [torch.randn([batch] + shape, generator=generator, device=device)
              for _ in range(count)]
    if len(shape) == 3:
        images = [b.contiguous(memory_format=torch.channels_last) for b in images]
    labels = torch.randint(0, classes, (count, batch), generator=generator, device=device)
    autocast = AUTOCAST.get(precision)

    def step(s):
        with torch.autocast(device_type=device, dtype=autocast, enabled=autocast is not None):
            trainer.step(images[s % count], labels[s % count])

    for s in range(warmup):
        step(s)
    on_gpu = device == "cuda"
    if on_gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
    else:
        t0 = time.perf_counter()
    for s in range(warmup, warmup + steps):
        step(s)
    if on_gpu:
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end)
    else:
        ms = 1000 * (time.perf_counter() - t0)
    return {"precision": precision, "batch": batch, "steps": steps, "warmup": warmup,
            "ms_per_step": ms / steps, "images_per_second": steps * batch / (ms / 1000),
            "peak_memory_bytes": torch.cuda.max_memory_allocated() if on_gpu else None,
            "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version() if on_gpu else None,
            "gpu": torch.cuda.get_device_name() if on_gpu else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("model")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--json")
    args = parser.parse_args()
    with open(args.model) as f:
        spec = json.load(f)
    result = dict(model=args.model, **measure(spec, args.steps, args.warmup, args.device))
    print("pytorch eager %s: %.1f img/s, %.2f ms/step" %
          (os.path.basename(args.model), result["images_per_second"], result["ms_per_step"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
