#!/usr/bin/env python3
"""cpu_vs_pytorch.py MODEL.json --tcc LABEL=TRAINER ... [--steps N] [--rounds R]

Training speed on the CPU, side by side in one run: each tcc trainer (built
beforehand with `tcc compile MODEL.json --target=cpu -o TRAINER`, e.g. with
and without --disable-pass=fusion) and PyTorch eager on the same network and
recipe, built from MODEL.json by the code the parity tests use
(test/e2e/torch_reference.py), with as many threads as the tcc trainers
(OpenMP's default: one per core). The runs alternate, round after round, so
a slow moment of the machine touches every contender.

tcc: `images_per_second` of the trainer's metrics line (training steps only, the
batch gather and augmentation included). PyTorch: N steps on batches of
random data of the model's input shape, after 3 warm-up steps, timed around
the whole step (forward, loss, backward, optimizer, EMA).

Prints one line per round and the medians with their ratios to PyTorch, and
writes them as JSON with --json. Not run by CI: speed is measured, not
asserted. Needs Debian's python3-torch.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e"))
import torch  # noqa: E402
import torch_reference as ref  # noqa: E402


def tcc_images_per_second(trainer, steps, tmp):
    metrics = os.path.join(tmp, "metrics.jsonl")
    subprocess.run([trainer, "--steps", str(steps), "--quiet", "--metrics", metrics],
                   check=True)
    with open(metrics) as f:
        return float(json.loads(f.read().splitlines()[-1])["images_per_second"])


def pytorch_images_per_second(spec, steps):
    batch = int(spec["train"]["batch_size"]) * int(spec["train"].get("accumulate", 1))
    shape = [batch] + [int(d) for d in spec["input"]["shape"]]
    classes = int(spec["input"].get("classes", 10))
    model = ref.TccModel(spec)
    trainer = ref.Trainer(model, spec, steps_per_epoch=1000, total_steps=100000)
    generator = torch.Generator().manual_seed(0)
    images = torch.randn([steps + 3] + shape, generator=generator)
    labels = torch.randint(0, classes, (steps + 3, batch), generator=generator)
    for s in range(3):
        trainer.step(images[s], labels[s])
    start = time.perf_counter()
    for s in range(3, steps + 3):
        trainer.step(images[s], labels[s])
    return steps * batch / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("model")
    parser.add_argument("--tcc", action="append", default=[], metavar="LABEL=TRAINER")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--json")
    args = parser.parse_args()
    with open(args.model) as f:
        spec = json.load(f)
    torch.set_num_threads(args.threads)
    contenders = [tuple(t.split("=", 1)) for t in args.tcc] + [("pytorch-eager", None)]
    results = {label: [] for label, _ in contenders}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for label, trainer in contenders:
                ips = (tcc_images_per_second(trainer, args.steps, tmp) if trainer
                       else pytorch_images_per_second(spec, args.steps))
                results[label].append(ips)
                print("round %d  %-16s %8.1f img/s" % (r + 1, label, ips), flush=True)
    base = statistics.median(results["pytorch-eager"])
    summary = {label: {"images_per_s": statistics.median(v), "runs": v,
                       "vs_pytorch": statistics.median(v) / base}
               for label, v in results.items()}
    for label, s in summary.items():
        print("median %-16s %8.1f img/s  %.2fx PyTorch eager" %
              (label, s["images_per_s"], s["vs_pytorch"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "steps": args.steps, "threads": args.threads,
                       "torch": torch.__version__, "results": summary}, f, indent=1)


if __name__ == "__main__":
    main()
